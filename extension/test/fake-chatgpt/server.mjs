// The fake ChatGPT server for the extension's browser tests (node:http only). It serves the
// fake page (page.html + page.js + one layout profile's scripts, layouts/) at /, /c/<uuid>
// and /uc/<id>, keeps every conversation's turns so a reload renders them again (a turn
// still generating continues for its remaining time), asks the test's `plan` how each prompt
// is answered, records every prompt, every button click (with the control the page drew it
// as: send, stop, retry, ...) and when a page first drew each finished turn, and pushes test
// commands to the open pages over server-sent events. It also plays ChatGPT's developer apps:
// the `@` picker's catalog (`apps`, `setApps`), which app each prompt was sent with, and
// approval cards for scripted tool calls (`ctx.approve(tool)` in a plan: the first call of
// each tool per conversation waits for a click on the card, again after the page reloads),
// recording every click on a card with whether it was trusted (`approvalClicks`). One layout per server:
// `startFakeChatGPT({layout})`, else $FAKE_CHATGPT_LAYOUT, else layouts/profiles.mjs's default.
// By hand: `FAKE_CHATGPT_LAYOUT=transcript-2026-10 node test/fake-chatgpt/server.mjs [PORT]`
// serves the page until interrupted (every prompt answered "ok" after 300 ms).
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { defaultLayout, profileOf } from './layouts/profiles.mjs';

const PAGE_HTML = new URL('./page.html', import.meta.url);
const PAGE_JS = new URL('./page.js', import.meta.url);
const PAGE_APPS_JS = new URL('./page-apps.js', import.meta.url);
// The picker's catalog unless a test sets its own (setApps): the orchestrator's app, an app
// whose name starts the same, and a recent prompt that mentions the app.
export const DEFAULT_APPS = Object.freeze({
  apps: [
    { name: 'Orchestrator', description: 'Durable workers across ChatGPT turns', id: 'plugin:asdk_app_0123456789abcdef0123456789abcdef' },
    { name: 'Orchestrator Docs', description: 'Search the orchestrator handbook', id: 'plugin:asdk_app_fedcba9876543210fedcba9876543210' },
  ],
  recent: ['@Orchestrator show the status of every worker'],
});
const APPROVAL_VARIANTS = ['allow-once', 'always', 'split', 'dialog', 'container'];
const LAYOUTS_DIR = new URL('./layouts/', import.meta.url);
// The browser scripts of each layout, in load order (the classic layouts share classic.js).
const LAYOUT_SCRIPTS = {
  'article-2026-01': ['classic.js', 'article-2026-01.js'],
  'section-2026-08': ['classic.js', 'section-2026-08.js'],
  'turn-key-2026-09': ['turn-key-2026-09.js'],
  'transcript-2026-10': ['transcript-2026-10.js'],
  legacy: ['legacy.js'],
};
const PAGE_PATH = /^\/(?:u?c\/[\w-]+\/?)?$/;
const PLAN_ERRORS = ['delivery_timeout', 'something_went_wrong', 'conversation_full'];
const CONTROL_COMMANDS = /^(?:draft:[\s\S]*|clear-draft|break-ui|stale-stop|full|attach:(?:uploading|file|image):[\s\S]*|quote:[\s\S]*|upload-done|clear-attachments|inject:(?:turn|composer|form):[\s\S]+|uninject)$/;
const CONTROL_WAIT_MS = 5_000;
const REQUEST_BYTES_MAX = 1_000_000;
// Pages still at `/` (no conversation yet) subscribe under this key.
const NEW_CHAT = 'new';

const defaultPlan = () => ({});

function normalizePlan(result) {
  const { generateMs = 300, reply = 'ok', error = null, steerable = false } = result ?? {};
  if (!Number.isFinite(generateMs) || generateMs < 0) throw new Error(`plan: bad generateMs ${generateMs}`);
  if (error !== null && !PLAN_ERRORS.includes(error)) throw new Error(`plan: unknown error ${error}`);
  return { generateMs, reply: String(reply), error, steerable: Boolean(steerable) };
}

export async function startFakeChatGPT({ port = 0, plan = defaultPlan, layout = defaultLayout(), apps = DEFAULT_APPS } = {}) {
  const profile = profileOf(layout);
  const scripts = new Map(await Promise.all(LAYOUT_SCRIPTS[layout].map(async (file) => [file, await readFile(new URL(file, LAYOUTS_DIR))])));
  const [pageTemplate, pageJs, pageAppsJs] = await Promise.all([readFile(PAGE_HTML, 'utf8'), readFile(PAGE_JS), readFile(PAGE_APPS_JS)]);
  const pageHtml = pageTemplate.replace('<!--LAYOUT_SCRIPTS-->',
    [...scripts.keys()].map((file) => `<script src="/__fake/layouts/${file}"></script>`).join('\n  '));
  const conversations = new Map(); // id -> {id, full, version, turns}
  const subscribers = new Map(); // conversation id or NEW_CHAT -> Set of SSE responses
  const pendingAcks = new Map(); // control id -> resolve(ack)
  const prompts = [];
  const clicks = [];
  const approvalClicks = [];
  let catalog = apps;
  const listeners = new Set();
  const generationEndTimers = new Set();
  let currentPlan = plan;
  let nextControlId = 1;

  const notify = () => {
    for (const listener of [...listeners]) listener();
  };

  function conversation(id) {
    if (!conversations.has(id)) {
      // approval: the card waiting ({app, tool, variant, stop, resolve}); approvedTools: what
      // was allowed since the page last loaded; app: the app chosen with any prompt so far.
      conversations.set(id, { id, full: false, version: 0, turns: [], approval: null, approvedTools: new Set(), app: null });
    }
    return conversations.get(id);
  }

  const generating = (convo) => convo.turns.findLast((turn) => turn.role === 'assistant' && turnStatus(turn) !== 'done');

  function turnStatus(turn) {
    if (turn.role !== 'assistant') return 'done';
    if (turn.plan === null) return 'pending';
    return Date.now() < turn.startedAtMs + turn.plan.generateMs ? 'generating' : 'done';
  }

  // What a page needs to render the conversation; remaining times are relative to now.
  function snapshot(convo) {
    const nowMs = Date.now();
    return {
      id: convo.id,
      full: convo.full,
      version: convo.version,
      approval: convo.approval === null ? null : {
        app: convo.approval.app, tool: convo.approval.tool, variant: convo.approval.variant, stop: convo.approval.stop, warning: convo.approval.warning,
      },
      turns: convo.turns.map((turn) => (turn.role === 'user'
        ? { id: turn.id, role: 'user', text: turn.text }
        : {
          id: turn.id,
          role: 'assistant',
          reply: turn.plan?.reply ?? '',
          error: turn.plan?.error ?? null,
          steerable: turn.plan?.steerable ?? false,
          generateMs: turn.plan?.generateMs ?? null,
          remainingMs: turn.plan === null ? null : Math.max(0, turn.startedAtMs + turn.plan.generateMs - nowMs),
          interrupted: turn.interrupted === true,
        })),
    };
  }

  function send(key, event, data) {
    for (const response of subscribers.get(key) ?? []) response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    return subscribers.get(key)?.size ?? 0;
  }

  function changed(convo) {
    convo.version += 1;
    send(convo.id, 'state', snapshot(convo));
    notify();
  }

  function acceptPrompt({ conversationId, text, steer, app = null }) {
    const convo = conversation(conversationId ?? randomUUID());
    const userTurn = { id: randomUUID(), role: 'user', text: String(text) };
    const current = steer ? generating(convo) : undefined;
    if (typeof app === 'string') convo.app = app;
    prompts.push({ conversationId: convo.id, text: userTurn.text, atMs: Date.now(), steer: current !== undefined, app: typeof app === 'string' ? app : null });
    if (current !== undefined) {
      // A steering prompt joins the running turn and turns alternate as on the real page: what
      // was streamed so far stays as an interrupted assistant turn (no action bar), then the
      // prompt, then the same reply goes on being generated as the latest turn.
      convo.turns.splice(convo.turns.indexOf(current), 0, interruptedPart(current), userTurn);
      changed(convo);
      return convo;
    }
    const turnIndex = convo.turns.filter((turn) => turn.role === 'assistant').length;
    const assistantTurn = { id: randomUUID(), role: 'assistant', plan: null, startedAtMs: null };
    convo.turns.push(userTurn, assistantTurn);
    changed(convo);
    void startGenerating(convo, assistantTurn, {
      conversationId: convo.id, turnIndex, prompt: userTurn.text, app: convo.app, approve: (tool, options) => approve(convo, tool, options),
    });
    return convo;
  }

  function interruptedPart(turn) {
    const share = turn.plan === null || turn.plan.generateMs === 0 ? 0 : (Date.now() - turn.startedAtMs) / turn.plan.generateMs;
    const reply = turn.plan === null ? '' : turn.plan.reply.slice(0, Math.floor(turn.plan.reply.length * Math.min(1, share)));
    return { id: randomUUID(), role: 'assistant', plan: normalizePlan({ generateMs: 0, reply }), startedAtMs: 0, interrupted: true };
  }

  // The page learns the plan over server-sent events; until then the turn is pending.
  async function startGenerating(convo, assistantTurn, ctx) {
    try {
      assistantTurn.plan = normalizePlan(await currentPlan(ctx));
    } catch (error) {
      console.error(`fake ChatGPT: the plan failed for turn ${ctx.turnIndex} of ${convo.id}; answering "something went wrong"`, error);
      assistantTurn.plan = normalizePlan({ error: 'something_went_wrong', generateMs: 0 });
    }
    assistantTurn.startedAtMs = Date.now();
    changed(convo);
    // The end of a generation is a change too, for waitFor on conversations().
    const timer = setTimeout(() => {
      generationEndTimers.delete(timer);
      notify();
    }, assistantTurn.plan.generateMs);
    generationEndTimers.add(timer);
  }

  /**
   * A scripted write call of `tool` in `convo`: resolves true at once when it was allowed since
   * the page last loaded, else shows the card (`variant`, `stop`: whether the Stop control
   * stays, `warning`: whether it carries the "Suspicious Instruction" warning) and resolves
   * with the person's choice (true: allowed).
   */
  function approve(convo, tool, { variant = 'allow-once', stop = true, warning = false } = {}) {
    if (!APPROVAL_VARIANTS.includes(variant)) throw new Error(`fake ChatGPT: unknown approval variant ${variant}`);
    if (convo.approvedTools.has(tool)) return Promise.resolve(true);
    if (convo.approval !== null) throw new Error(`fake ChatGPT: ${convo.id} already waits for approval of ${convo.approval.tool}`);
    return new Promise((resolve) => {
      convo.approval = { app: convo.app ?? 'Orchestrator', tool, variant, stop, warning: Boolean(warning), resolve };
      changed(convo);
    });
  }

  function answerApproval(conversationId, choice) {
    const convo = conversations.get(conversationId);
    if (!convo?.approval || (choice !== 'allow' && choice !== 'deny')) return;
    const { tool, resolve } = convo.approval;
    convo.approval = null;
    if (choice === 'allow') convo.approvedTools.add(tool);
    changed(convo);
    resolve(choice === 'allow');
  }

  async function control(conversationId, command) {
    if (!CONTROL_COMMANDS.test(command)) throw new Error(`fake ChatGPT: unknown control command ${JSON.stringify(command)}`);
    const key = conversationId ?? NEW_CHAT;
    if (command === 'full' && conversations.has(key)) {
      conversations.get(key).full = true;
      changed(conversations.get(key));
    }
    await waitFor(() => (subscribers.get(key)?.size ?? 0) > 0, CONTROL_WAIT_MS, `an open page for conversation ${key} (control ${command})`);
    const id = nextControlId++;
    const acked = new Promise((resolve) => {
      const timer = setTimeout(resolve, CONTROL_WAIT_MS, null);
      pendingAcks.set(id, (value) => {
        clearTimeout(timer);
        resolve(value);
      });
    });
    const reached = send(key, 'control', { id, command });
    const ack = await acked;
    pendingAcks.delete(id);
    if (ack === null) throw new Error(`fake ChatGPT: no page acknowledged control ${command} for ${key} within ${CONTROL_WAIT_MS} ms`);
    if (!ack.ok) throw new Error(`fake ChatGPT: the page could not apply ${command}: ${ack.error}`);
    notify();
    return reached;
  }

  function waitFor(predicate, timeoutMs = 10_000, what = 'a condition') {
    return new Promise((resolve, reject) => {
      const check = () => {
        let value;
        try {
          value = predicate();
        } catch (error) {
          finish();
          reject(error);
          return;
        }
        if (value) {
          finish();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`fake ChatGPT: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  }

  function subscribe(request, response, key) {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    if (!subscribers.has(key)) subscribers.set(key, new Set());
    subscribers.get(key).add(response);
    if (key !== NEW_CHAT && conversations.has(key)) {
      response.write(`event: state\ndata: ${JSON.stringify(snapshot(conversations.get(key)))}\n\n`);
    }
    request.on('close', () => {
      subscribers.get(key)?.delete(response);
      notify();
    });
    notify();
  }

  async function readJson(request) {
    let body = '';
    for await (const chunk of request) {
      body += chunk;
      if (body.length > REQUEST_BYTES_MAX) throw new Error('request body too large');
    }
    return JSON.parse(body);
  }

  async function route(request, response) {
    const url = new URL(request.url, 'http://fake.invalid');
    const reply = (status, type, body) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(body);
    };
    const json = (body) => reply(200, 'application/json', JSON.stringify(body));
    if (request.method === 'GET' && PAGE_PATH.test(url.pathname)) {
      // A page load forgets the approvals of the conversation it shows (as ChatGPT does).
      conversations.get(url.pathname.split('/').filter(Boolean)[1])?.approvedTools.clear();
      return reply(200, 'text/html; charset=utf-8', pageHtml);
    }
    if (request.method === 'GET' && url.pathname === '/__fake/page.js') return reply(200, 'text/javascript; charset=utf-8', pageJs);
    if (request.method === 'GET' && url.pathname === '/__fake/page-apps.js') return reply(200, 'text/javascript; charset=utf-8', pageAppsJs);
    if (request.method === 'GET' && url.pathname === '/__fake/apps') return json(catalog);
    if (request.method === 'POST' && url.pathname === '/__fake/approval-click') {
      const { conversationId = null, choice = null, trusted = false, label = '' } = await readJson(request);
      approvalClicks.push({ conversationId, choice, trusted: trusted === true, label: String(label), atMs: Date.now() });
      answerApproval(conversationId, choice);
      notify();
      return json({ ok: true });
    }
    const script = url.pathname.startsWith('/__fake/layouts/') ? scripts.get(url.pathname.slice('/__fake/layouts/'.length)) : undefined;
    if (request.method === 'GET' && script !== undefined) return reply(200, 'text/javascript; charset=utf-8', script);
    if (request.method === 'GET' && url.pathname === '/__fake/events') return subscribe(request, response, url.searchParams.get('c') || NEW_CHAT);
    if (request.method === 'POST' && url.pathname === '/__fake/turn') {
      const convo = acceptPrompt(await readJson(request));
      return json({ conversationId: convo.id, conversation: snapshot(convo) });
    }
    if (request.method === 'POST' && url.pathname === '/__fake/click') {
      const { conversationId = null, control: name = null, testid = null, label = '', trusted = false } = await readJson(request);
      clicks.push({ conversationId, control: name, testid, label, trusted: trusted === true, atMs: Date.now() });
      notify();
      return json({ ok: true });
    }
    if (request.method === 'POST' && url.pathname === '/__fake/drawn-done') {
      const { conversationId, turnId, atMs } = await readJson(request);
      const turn = conversations.get(conversationId)?.turns.find((t) => t.id === turnId && t.role === 'assistant');
      if (turn && turn.drawnDoneAtMs === undefined && Number.isFinite(atMs)) turn.drawnDoneAtMs = atMs;
      return json({ ok: turn !== undefined });
    }
    if (request.method === 'POST' && url.pathname === '/__fake/ack') {
      const ack = await readJson(request);
      pendingAcks.get(ack.id)?.(ack);
      return json({ ok: true });
    }
    return reply(404, 'text/plain', 'not found');
  }

  const server = createServer((request, response) => {
    route(request, response).catch((error) => {
      console.error('fake ChatGPT: request failed', request.method, request.url, error);
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(String(error?.message ?? error));
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });

  // A conversation that already holds finished turns (`[{role: 'user', text}, {role:
  // 'assistant', reply}]`, alternating), as one a person started: its id.
  function seedConversation(turns) {
    const convo = conversation(randomUUID());
    for (const turn of turns) {
      convo.turns.push(turn.role === 'user'
        ? { id: randomUUID(), role: 'user', text: String(turn.text) }
        : { id: randomUUID(), role: 'assistant', plan: normalizePlan({ generateMs: 0, reply: turn.reply }), startedAtMs: 0, seeded: true });
    }
    changed(convo);
    return convo.id;
  }

  const base = `http://127.0.0.1:${server.address().port}/`;
  return {
    url: base,
    layout,
    /** The address of conversation `id` in this layout (/c/<id>, or /uc/<id> logged out). */
    conversationUrl: (id) => new URL(`${profile.conversationPrefix}${id}`, base).href,
    seedConversation,
    prompts,
    clicks,
    /** Every click on an approval card: {conversationId, choice, trusted, label, atMs}. */
    approvalClicks,
    /** The `@` picker's catalog from the next time a page opens it: `{apps: [{name, description, id}], recent: [text]}`. */
    setApps(next) {
      catalog = next;
    },
    /** The approval card waiting in conversation `id`: {app, tool, variant, stop, warning}, or null. */
    approvalIn(id) {
      const waiting = conversations.get(id)?.approval ?? null;
      return waiting === null ? null : { app: waiting.app, tool: waiting.tool, variant: waiting.variant, stop: waiting.stop, warning: waiting.warning };
    },
    setPlan(fn) {
      currentPlan = fn ?? defaultPlan;
    },
    control,
    waitFor,
    conversations() {
      return [...conversations.values()].map((convo) => ({
        id: convo.id,
        full: convo.full,
        turns: convo.turns.map((turn) => (turn.role === 'user'
          ? { role: 'user', text: turn.text }
          : {
            role: 'assistant',
            reply: turn.plan?.reply ?? '',
            error: turn.plan?.error ?? null,
            status: turn.interrupted ? 'interrupted' : turnStatus(turn),
            // When the generation ends (server clock), for latency measurements.
            endsAtMs: turn.plan === null || turn.interrupted ? null : turn.startedAtMs + turn.plan.generateMs,
            // When a page first drew its action bar (the page's wall clock), or null.
            drawnDoneAtMs: turn.drawnDoneAtMs ?? null,
            // Part of the history seedConversation wrote (not an answer to a prompt).
            seeded: turn.seeded === true,
          })),
      }));
    },
    async close() {
      for (const timer of generationEndTimers) clearTimeout(timer);
      for (const set of subscribers.values()) for (const response of set) response.end();
      subscribers.clear();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fake = await startFakeChatGPT({ port: Number(process.argv[2] ?? 0) });
  console.log(`fake ChatGPT (${fake.layout} layout) at ${fake.url}`);
}
