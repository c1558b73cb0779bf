// One end-to-end world: the real daemon, the fake ChatGPT page in one layout profile
// (test/fake-chatgpt/layouts/), a test build of the extension in a headless browser, and
// the test playing the agents inside the conversations (their MCP calls) and the operator.
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Daemon, EXECUTOR_TOKEN, withTimeout } from './daemon.mjs';
import { McpClient } from './mcp.mjs';
import { launchBrowser } from './browsers.mjs';
import { buildTestExtension } from '../../../scripts/build-test.mjs';
import { startFakeChatGPT } from '../../fake-chatgpt/server.mjs';
import { defaultLayout, profileOf } from '../../fake-chatgpt/layouts/profiles.mjs';

export const ARTIFACTS_DIR = resolve(new URL('../../../../target/e2e-artifacts', import.meta.url).pathname);
const NONCE = /\[attempt (exe-\d+)\]/;
const WAIT_MS_DEFAULT = 30_000;
/** The short idle grace the tests' workers use (the engine's default is 3 s). */
export const IDLE_GRACE_MS = 400;

export class World {
  constructor(kind, layout, settings = {}, daemon = {}) {
    this.kind = kind;
    this.layout = layout;
    /** What the layout is like (layouts/profiles.mjs): its addresses, whether it is logged out. */
    this.profile = profileOf(layout);
    this.dir = mkdtempSync(join(tmpdir(), `orc-world-${kind}-`));
    this.agents = new Map();
    /**
     * Agents for workers the test did not make itself (a /root started from the popup):
     * worker name -> agent, taken by the first worker of that name whose attempt reaches
     * the page (the entry is used once).
     */
    this.agentsByName = new Map();
    this.turns = new Map();
    this.conversationWorker = new Map();
    /** Settings over the defaults below (the app's name and description, say). */
    this.extraSettings = settings;
    /** The daemon's options (`{oauth: true}`: the OAuth server on). */
    this.daemonOptions = daemon;
  }

  /**
   * `layout`: the fake page's layout profile (the server's default when not given);
   * `settings`: extension settings over the world's (e.g. `{appName}`: choose that app);
   * `daemon`: the daemon's options (`{oauth: true}`).
   */
  static async open(kind, { layout = defaultLayout(), settings = {}, daemon = {} } = {}) {
    const world = new World(kind, layout, settings, daemon);
    try {
      await world.#start();
    } catch (error) {
      await world.close({ failed: true });
      throw error;
    }
    return world;
  }

  async #start() {
    this.daemon = await new Daemon(this.daemonOptions).start();
    this.mcp = await new McpClient(this.daemon.mcpUrl).connect();
    this.fake = await startFakeChatGPT({ plan: (ctx) => this.#plan(ctx), layout: this.layout });
    const settings = {
      daemonUrl: this.daemon.executorUrl,
      token: EXECUTOR_TOKEN,
      executorId: `e2e-${this.kind}`,
      chatBaseUrl: this.fake.url,
      concurrencyMax: 4,
      managedMax: 8,
      ...this.extraSettings,
    };
    this.extensionDir = buildTestExtension(join(this.dir, 'extension'), settings);
    this.browser = await launchBrowser(this.kind, this.extensionDir);
    // A plain fake page tab: the extension leaves it alone (unmanaged); tests reach the
    // test hooks through it.
    this.hookPage = await this.browser.newPage(`${this.fake.url}?unmanaged=1`);
  }

  /** Creates an auto-resume run; returns its id. */
  async createRun(taskName = 'E2E run') {
    const run = await this.mcp.call('run_create', {
      taskName,
      rootConversationName: 'E2E root',
      defaultPolicy: { mode: 'auto', idleGraceMs: IDLE_GRACE_MS },
    });
    this.runId = run.runId;
    return run.runId;
  }

  /** Spawns a lane whose conversation the extension opens on the fake page. */
  async spawnLane(name, agent, extra = {}) {
    const worker = await this.mcp.call('worker_spawn', {
      runId: this.runId,
      name,
      taskSummary: `e2e lane ${name}`,
      assignment: { objective: `Exercise ${name}`, acceptanceCriteria: ['the test says so'] },
      ...extra,
    });
    this.agents.set(worker.workerId, agent);
    return worker.workerId;
  }

  /**
   * A lane in a conversation that already holds a person's first exchange (on the logged-out
   * layout, a chat at /uc/<id>: managed work never types there, the worker is paused for a
   * log-in): spawned without starting, then attached there. Returns its id.
   */
  async attachLane(name, agent, extra = {}) {
    const workerId = await this.spawnLane(name, agent, { ...extra, start: false });
    const id = this.fake.seedConversation([
      { role: 'user', text: 'Hello, I will hand this chat to a worker.' },
      { role: 'assistant', reply: 'Sure.' },
    ]);
    this.conversationWorker.set(id, workerId);
    await this.mcp.call('worker_attach', { workerId, conversationUrl: this.fake.conversationUrl(id) });
    return workerId;
  }

  /** The fake page asked what the turn for `ctx.prompt` does: ask that worker's agent. */
  async #plan(ctx) {
    const attemptId = ctx.prompt.match(NONCE)?.[1] ?? null;
    const workerId = this.conversationWorker.get(ctx.conversationId) ?? (await this.#ownerOf(attemptId));
    if (!workerId) return { generateMs: 200, reply: 'unknown conversation' };
    this.conversationWorker.set(ctx.conversationId, workerId);
    const turn = (this.turns.get(workerId) ?? 0) + 1;
    this.turns.set(workerId, turn);
    const agent = this.agents.get(workerId);
    if (!agent) return { generateMs: 200, reply: block('working', 'no agent') };
    try {
      // `app`: the app chosen in this conversation; `approve(tool)`: a write call of the tool,
      // which waits for the person's click on the approval card the first time (per page load).
      return (await agent({ turn, attemptId, prompt: ctx.prompt, steer: ctx.steer, world: this, workerId, app: ctx.app, approve: ctx.approve })) ?? {};
    } catch (error) {
      this.agentError = error;
      return { generateMs: 100, reply: `agent failed: ${error.message}` };
    }
  }

  /** The worker whose attempt `attemptId` is (the nonce the extension appends names it). */
  async #ownerOf(attemptId) {
    if (!attemptId) return null;
    for (const workerId of this.agents.keys()) {
      if (await this.#hasAttempt(workerId, attemptId)) return workerId;
    }
    if (this.agentsByName.size === 0) return null;
    // A worker the test did not make: look through every unfinished run's workers.
    const { runs } = await this.mcp.call('run_list', {});
    for (const run of runs) {
      const { workers } = await this.mcp.call('worker_list', { runId: run.runId });
      for (const worker of workers) {
        if (this.agents.has(worker.workerId) || !this.agentsByName.has(worker.name)) continue;
        if (!(await this.#hasAttempt(worker.workerId, attemptId))) continue;
        this.agents.set(worker.workerId, this.agentsByName.get(worker.name));
        this.agentsByName.delete(worker.name);
        return worker.workerId;
      }
    }
    return null;
  }

  async #hasAttempt(workerId, attemptId) {
    const attempts = await this.mcp.call('worker_attempts', { workerId });
    return JSON.stringify(attempts).includes(`"${attemptId}"`);
  }

  /** Reloads the extension (as a person would from the extensions page) and waits for it. */
  async reloadExtension() {
    await this.hook('reload');
    await pause(1_500);
    // The hook page's content scripts belonged to the old extension instance.
    await this.hookPage.reload();
  }

  /** Prompts submitted into `workerId`'s conversations, oldest first. */
  prompts(workerId) {
    return this.fake.prompts.filter((p) => this.conversationWorker.get(p.conversationId) === workerId);
  }

  async waitForPrompts(workerId, count, timeoutMs = WAIT_MS_DEFAULT) {
    await this.fake.waitFor(() => this.prompts(workerId).length >= count, timeoutMs, `${count} prompt(s) for ${workerId}`);
    return this.prompts(workerId);
  }

  /** Polls the daemon (through MCP) until `predicate(worker)` holds. */
  async waitForWorker(workerId, predicate, what, timeoutMs = WAIT_MS_DEFAULT) {
    const deadline = Date.now() + timeoutMs;
    let last;
    while (Date.now() < deadline) {
      last = await this.mcp.call('worker_get', { workerId });
      if (predicate(last)) return last;
      await pause(100);
    }
    throw new Error(`timed out waiting for ${workerId}: ${what}; last: ${JSON.stringify(summary(last))}`);
  }

  /**
   * Waits until the daemon has no attempt in flight for `workerId`, then returns its
   * prompts once the page has been quiet for `quietMs` (a paused worker may keep a
   * pending continuation: it is held, not sent).
   */
  async settled(workerId, quietMs = 2_000) {
    await this.waitForWorker(workerId, (w) => !w.inFlightAttemptId, 'nothing in flight');
    let count = -1;
    while (count !== this.prompts(workerId).length) {
      count = this.prompts(workerId).length;
      await pause(quietMs);
    }
    return this.prompts(workerId);
  }

  /** Runs a test hook in the extension's background (test builds only). */
  async hook(op, arg) {
    const id = `${Date.now()}-${Math.random()}`;
    const reply = await withTimeout(this.hookPage.evaluate(({ id, op, arg }) => new Promise((resolveReply) => {
      const onMessage = (event) => {
        if (event.data?.orcTestReply?.id !== id) return;
        window.removeEventListener('message', onMessage);
        resolveReply(event.data.orcTestReply);
      };
      window.addEventListener('message', onMessage);
      window.postMessage({ orcTest: { id, op, arg } }, '*');
    }), { id, op, arg }), 10_000, `test hook ${op}`);
    if (!reply.ok) throw new Error(`test hook ${op}: ${reply.error}`);
    return reply.value;
  }

  /** Saves a screenshot of `page` under target/e2e-artifacts. */
  async screenshot(page, name) {
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    const path = join(ARTIFACTS_DIR, `${this.kind}-${name}.png`);
    await page.screenshot({ path });
    return path;
  }

  async close({ failed = false } = {}) {
    if (failed && this.daemon) {
      mkdirSync(ARTIFACTS_DIR, { recursive: true });
      writeFileSync(join(ARTIFACTS_DIR, `${this.kind}-${this.layout}-daemon.log`), this.daemon.logTail(200_000));
      if (this.fake) {
        writeFileSync(join(ARTIFACTS_DIR, `${this.kind}-${this.layout}-fake.json`),
          JSON.stringify({ prompts: this.fake.prompts, clicks: this.fake.clicks }, null, 2));
      }
    }
    await this.browser?.close().catch(() => {});
    await this.fake?.close().catch(() => {});
    await this.daemon?.dispose().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs `body(world)` in a fresh world for `kind` (and `options.layout`), keeping logs when it fails. */
export async function inWorld(kind, body, options = {}) {
  const world = await World.open(kind, options);
  let failed = true;
  try {
    await body(world);
    if (world.agentError) throw world.agentError;
    failed = false;
  } finally {
    await world.close({ failed });
  }
}

/** The four-line block the skill asks every response to end with. */
export function block(status, summaryText, next = 'keep going') {
  return `Done some work.\n\nstatus: ${status}\nsummary: ${summaryText}\ncurrent: e2e turn\nnext: ${status === 'complete' ? '' : next}`;
}

export function pause(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function summary(worker) {
  if (!worker) return null;
  const { disposition, attempts, autoResumes, inFlightAttemptId, pendingContinuation, pause: paused, binding } = worker;
  return { disposition, attempts, autoResumes, inFlightAttemptId, pendingContinuation, paused, binding };
}
