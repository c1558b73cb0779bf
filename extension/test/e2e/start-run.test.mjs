// End to end, in headless Chromium and Firefox ESR: from a ChatGPT tab to a finished job
// (issue 18, spec 001 C12.1 and C16.5), with the real daemon, the real extension and the
// fake ChatGPT page, and no message typed by the test. The fake page's scripted agents
// call the MCP tools as a ChatGPT app would:
//   1. a run is started from a new-chat tab through the popup's "Start a run here"; its
//      root's bootstrap is typed once, in that tab; the root spawns two lanes, whose
//      conversations the extension opens;
//   2. each lane runs several turns with automatic resumes and reports to the root, which
//      is resumed by those reports; the root's correct_direction steer reaches a generating
//      lane mid-turn (the floor bypassed) and its continue_as_planned waits for the other
//      lane's turn to end;
//   3. both lanes call worker_complete, then the root does; nothing more is submitted;
//   4. a second run's root tab is closed mid-run: the dashboard shows the orphaned root,
//      one action recovers it into a fresh conversation with the recovery prompt, the run
//      and its lane are untouched, and the job finishes;
//   5. a lane whose tab was closed is attached to a conversation the person opened, through
//      the popup's "Attach this conversation to…" and a confirmation naming the lane.
// Screenshots: the start form and the recovered root (docs/screenshots with UPDATE_SCREENSHOTS=1).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld, block } from './lib/world.mjs';
import { until, evaluate, openExtensionPage, reloadPage, press, screenshot, setViewport, findPage } from './lib/ui-pages.mjs';
import { popupOn, runNamed, startFromPopup, tabIdOf } from './lib/start-here.mjs';
import { readDashboard, readPopup } from './lib/ui-surfaces.mjs';

/** A lane's long second turn: the root reviews it while it generates. */
const REVIEWED_TURN_MS = 15_000;
/** The lanes' policy: a short idle grace, and a floor that holds any non-material steer mid-turn. */
const LANE_POLICY = { idleGraceMs: 400, minContinuationSpacingMs: 60_000, idleMayBypassMinSpacing: true };
const CORRECTION = 'Use the shared CSV writer in lib/csv, not a copy.';
const AS_PLANNED = 'Aligned with the plan: keep the column order as agreed.';
const JOB_MS = 120_000;
/** The orchestrator's app, chosen in every conversation before its first prompt (fake page catalog). */
const WORLD = { settings: { appName: 'Orchestrator' } };

/** A lane: reports every turn; its second turn is long and steerable; it completes once `done(turn)`. */
function laneAgent(log, done) {
  return async ({ turn, world, workerId, prompt }) => {
    log.push({ turn, prompt });
    await world.mcp.call('worker_progress', { workerId, summary: `turn ${turn} done` });
    if (done(turn, prompt)) {
      await world.mcp.call('worker_complete', { workerId, summary: `finished in ${turn} turns` });
      return { generateMs: 300, reply: block('complete', 'finished') };
    }
    if (turn === 2) return { generateMs: REVIEWED_TURN_MS, steerable: true, reply: block('working', 'writing the export') };
    return { generateMs: 400, reply: block('working', `turn ${turn}`) };
  };
}

async function spawn(world, runId, name, agent) {
  const lane = await world.mcp.call('worker_spawn', {
    runId,
    name,
    taskSummary: `the ${name.slice(6)} half of the export`,
    assignment: {
      objective: `Build the ${name.slice(6)} half of the CSV export`,
      scope: `Only the ${name.slice(6)} module; the shared writer belongs to nobody`,
      acceptanceCriteria: ['unit tests pass', 'the column order matches the plan'],
    },
    policy: LANE_POLICY,
  });
  world.agents.set(lane.workerId, agent);
  return lane.workerId;
}

for (const kind of BROWSERS) {
  describe(`start a run from the browser in ${kind}`, () => {
    test('a run started from a tab: root spawns two lanes, steers them, everyone completes, nothing more is typed', () =>
      inWorld(kind, async (w) => {
        const seen = { rootPrompts: [], alpha: [], beta: [], lanes: {}, steered: {}, rootRuns: 0 };
        const lanesDone = async (world) => {
          for (const id of Object.values(seen.lanes)) {
            if ((await world.mcp.call('worker_get', { workerId: id })).disposition !== 'completed') return false;
          }
          return Object.keys(seen.lanes).length === 2;
        };
        const generatingSecondTurn = async (world, name) => {
          const id = seen.lanes[name];
          const lane = await world.mcp.call('worker_get', { workerId: id });
          return lane.binding?.state === 'generating' && world.turns.get(id) === 2 ? id : null;
        };
        w.agentsByName.set('/root', async ({ turn, world, workerId, prompt }) => {
          seen.rootPrompts.push(prompt);
          seen.rootId = workerId;
          const { runId } = await world.mcp.call('worker_get', { workerId });
          if (turn === 1) {
            seen.lanes.alpha = await spawn(world, runId, '/root/alpha', laneAgent(seen.alpha, (t) => t >= 3));
            seen.lanes.beta = await spawn(world, runId, '/root/beta', laneAgent(seen.beta, (t, p) => t >= 3 && p.includes(AS_PLANNED)));
            await world.mcp.call('worker_progress', { workerId, summary: 'two lanes spawned' });
            return { generateMs: 300, reply: block('working', 'lanes spawned') };
          }
          // A review: read what the lanes reported, then steer the one under review.
          await world.mcp.call('events_wait', { runId, timeoutMs: 0 }).catch(() => null);
          const alpha = !seen.steered.alpha && await generatingSecondTurn(world, 'alpha');
          if (alpha) {
            await world.mcp.call('worker_steer', { workerId: alpha, outcome: 'correct_direction', message: CORRECTION });
            seen.steered.alpha = true;
          }
          const beta = !seen.steered.beta && await generatingSecondTurn(world, 'beta');
          if (beta) {
            await world.mcp.call('worker_steer', { workerId: beta, outcome: 'continue_as_planned', message: AS_PLANNED });
            seen.steered.beta = true;
          }
          if (await lanesDone(world)) {
            await world.mcp.call('worker_complete', { workerId, summary: 'both halves landed' });
            return { generateMs: 300, reply: block('complete', 'the export is done') };
          }
          return { generateMs: 300, reply: block('working', 'reviewing the lanes') };
        });

        const chat = await w.browser.newPage(w.fake.url);
        const popup = await openExtensionPage(w, 'src/ui/popup.html');
        await setViewport(w, popup, { width: 360, height: 720 });
        await popupOn(popup, await tabIdOf(popup, w.fake.url));
        await startFromPopup(w, popup, {
          taskName: 'CSV export', rootName: 'CSV export root', plan: 'Add a CSV export in two halves, reviewed by the root.', shot: 'start-run',
        });
        const run = await runNamed(w, 'CSV export');
        w.runId = run.runId;
        assert.equal(run.defaultPolicy.mode, 'auto', 'the run\'s Auto Resume is the form\'s');

        // The root works in the tab the person started from: its bootstrap typed there once.
        const rootId = run.rootWorkerId;
        const bound = await w.waitForWorker(rootId, (x) => /\/c\//.test(x.binding?.conversationUrl ?? ''), 'the root\'s conversation settled');
        await until('the start tab to show the root\'s conversation', async () => (await evaluate(chat, () => location.href)) === bound.binding.conversationUrl);
        // (The page records a prompt before its plan is asked for, which names the worker.)
        const rootBoot = (await w.waitForPrompts(rootId, 1)).filter((p) => p.text.includes('You are the root coordinator'));
        assert.equal(rootBoot.length, 1, 'the root bootstrap is typed once');
        assert.match(rootBoot[0].text, /worker_spawn/);
        await until('the popup to show the root as this tab\'s conversation', async () => {
          await reloadPage(popup);
          return (await readPopup(popup)).current?.workerId === rootId;
        });

        // Both lanes run, report, are steered and complete; then the root completes.
        await w.waitForWorker(rootId, (x) => x.disposition === 'completed', 'the root completed', JOB_MS);
        const { alpha, beta } = seen.lanes;
        for (const id of [alpha, beta]) assert.equal((await w.mcp.call('worker_get', { workerId: id })).disposition, 'completed');

        // The correction reached alpha mid-turn (a steer into its generating second turn).
        const alphaSteers = w.prompts(alpha).filter((p) => p.steer);
        assert.equal(alphaSteers.length, 1, `one steer typed into alpha: ${JSON.stringify(w.prompts(alpha).map((p) => [p.steer, p.text.slice(0, 60)]))}`);
        assert.ok(alphaSteers[0].text.includes(CORRECTION));
        // continue_as_planned waited: never typed mid-turn, it went in with beta's next turn.
        assert.deepEqual(w.prompts(beta).filter((p) => p.steer), [], 'nothing typed into beta mid-turn');
        const withPlan = w.prompts(beta).filter((p) => p.text.includes(AS_PLANNED));
        assert.equal(withPlan.length, 1, 'the continue_as_planned went in once');
        const secondTurnEnd = seen.beta.findIndex((t) => t.turn === 3);
        assert.ok(secondTurnEnd >= 0 && seen.beta[secondTurnEnd].prompt.includes(AS_PLANNED), 'it is the prompt of beta\'s third turn');

        // Several turns each, with automatic resumes; the root was resumed by the lanes' reports.
        for (const id of [alpha, beta]) {
          const { attempts } = await w.mcp.call('worker_attempts', { workerId: id });
          assert.ok(attempts.length >= 3, `${id} ran ${attempts.length} attempts`);
          assert.ok(attempts.some((a) => a.reason === 'auto_resume'), `${id} was resumed automatically: ${attempts.map((a) => a.reason)}`);
        }
        const rootAttempts = (await w.mcp.call('worker_attempts', { workerId: rootId })).attempts;
        assert.ok(rootAttempts.some((a) => JSON.stringify(a.wakeReasons ?? a.reasons ?? []).includes('worker.progress')),
          `the root was woken by a lane's report: ${JSON.stringify(rootAttempts.map((a) => a.wakeReasons ?? a.reasons))}`);

        // Nothing more anywhere: every prompt is one attempt, and the pages stay quiet.
        for (const id of [rootId, alpha, beta]) {
          const prompts = await w.settled(id);
          const { attempts } = await w.mcp.call('worker_attempts', { workerId: id });
          assert.equal(prompts.length, attempts.length, `${id}: one prompt per attempt`);
          const after = await w.mcp.call('worker_get', { workerId: id });
          assert.equal(after.pendingContinuation ?? null, null, `${id} has nothing pending`);
          assert.equal(prompts[0].app, 'Orchestrator', `${id}: its first prompt went with the app chosen`);
        }
      }, WORLD));

    test('a root whose tab was closed is recovered from the dashboard; its run and lane are untouched', () =>
      inWorld(kind, async (w) => {
        const seen = { recovered: false, lane: null, rootPrompts: [] };
        w.agentsByName.set('/root', async ({ turn, world, workerId, prompt }) => {
          seen.rootPrompts.push(prompt);
          const runId = (await world.mcp.call('worker_get', { workerId })).runId;
          if (turn === 1) {
            seen.lane = await spawn(world, runId, '/root/gamma', laneAgent([], (t) => t >= 3 && seen.recovered));
            return { generateMs: 300, reply: block('working', 'lane spawned') };
          }
          if (prompt.includes('This is a fresh conversation for the same logical worker')) seen.recovered = true;
          const lane = await world.mcp.call('worker_get', { workerId: seen.lane });
          if (lane.disposition === 'completed') {
            await world.mcp.call('worker_complete', { workerId, summary: 'the lane landed' });
            return { generateMs: 300, reply: block('complete', 'done') };
          }
          return { generateMs: 300, reply: block('working', 'waiting for the lane') };
        });
        const chat = await w.browser.newPage(w.fake.url);
        const popup = await openExtensionPage(w, 'src/ui/popup.html');
        await popupOn(popup, await tabIdOf(popup, w.fake.url));
        await startFromPopup(w, popup, { taskName: 'Recovery run', rootName: 'Recovery root', plan: 'One lane; the root tab will be closed.' });
        const run = await runNamed(w, 'Recovery run');
        const rootId = run.rootWorkerId;
        await w.waitForWorker(rootId, (x) => x.attempts >= 1 && /\/c\//.test(x.binding?.conversationUrl ?? ''), 'the root at work');
        await until('the lane spawned', () => seen.lane);
        const laneBefore = await w.waitForWorker(seen.lane, (x) => x.attempts >= 1 && /\/c\//.test(x.binding?.conversationUrl ?? ''), 'the lane at work in its conversation');

        // The person closes the root's tab mid-run.
        await chat.close();
        const dashboard = await openExtensionPage(w, 'src/ui/dashboard.html');
        await w.waitForWorker(rootId, (x) => x.binding?.status === 'lost', 'the root\'s conversation lost');
        await until('the dashboard to show the orphaned root under Needs you', async () =>
          (await readDashboard(dashboard)).needsYou.some((n) => n.workerId === rootId && /conversation was closed/.test(n.question)));
        const rootPromptsBefore = w.prompts(rootId).length;
        assert.equal((await w.mcp.call('worker_get', { workerId: rootId })).disposition, 'awaiting_execution');

        await press(dashboard, `[data-testid="needs-you-item"][data-worker-id="${rootId}"] [data-testid="needs-you-recover"]`);
        const recovered = await w.waitForWorker(rootId, (x) => x.binding?.status !== 'lost' && /\/c\//.test(x.binding?.conversationUrl ?? ''), 'the root in a fresh conversation');
        assert.notEqual(recovered.binding.conversationUrl, laneBefore.binding.conversationUrl);
        await until('the recovery prompt typed', () => seen.recovered);
        await until('the dashboard to show the recovered root at work, with its recovery attempt', async () => {
          const shown = await readDashboard(dashboard);
          const timeline = shown.timelines.find((tl) => tl.workerId === rootId);
          return !shown.needsYou.some((n) => n.workerId === rootId) && timeline?.attempts.some((a) => a.reason === 'recovery');
        });
        await screenshot(w, dashboard, 'recovered-root', { fullPage: true });
        const recoveryPrompts = w.prompts(rootId).slice(rootPromptsBefore).filter((p) => p.text.includes('fresh conversation for the same logical worker'));
        assert.equal(recoveryPrompts.length, 1, 'one recovery prompt');

        await w.waitForWorker(rootId, (x) => x.disposition === 'completed', 'the root completed', JOB_MS);
        const lane = await w.mcp.call('worker_get', { workerId: seen.lane });
        assert.equal(lane.disposition, 'completed');
        assert.equal(lane.binding.conversationUrl, laneBefore.binding.conversationUrl, 'the lane kept its conversation');
        assert.equal(lane.runId, run.runId);
        const laneAttempts = (await w.mcp.call('worker_attempts', { workerId: seen.lane })).attempts;
        assert.ok(laneAttempts.every((a) => a.outcome !== 'conversation_lost'), 'the lane was not disturbed');
        assert.equal((await w.mcp.call('run_get', { runId: run.runId })).status, 'completed');
      }, WORLD));

    test('attach this conversation: a lane whose tab was closed continues in a conversation the person chose, after a confirmation naming it', () =>
      inWorld(kind, async (w) => {
        const seen = { lane: null, attached: false };
        const laneAgent = async ({ world, workerId, prompt }) => {
          if (prompt.includes('fresh conversation for the same logical worker')) seen.attached = true;
          await world.mcp.call('worker_progress', { workerId, summary: 'a step' });
          if (seen.attached) {
            await world.mcp.call('worker_complete', { workerId, summary: 'finished where the person put me' });
            return { generateMs: 300, reply: block('complete', 'finished') };
          }
          return { generateMs: 1_000, reply: block('working', 'a step') };
        };
        w.agentsByName.set('/root', async ({ turn, world, workerId }) => {
          const { runId } = await world.mcp.call('worker_get', { workerId });
          if (turn === 1) {
            seen.lane = await spawn(world, runId, '/root/epsilon', laneAgent);
            return { generateMs: 300, reply: block('working', 'lane spawned') };
          }
          if ((await world.mcp.call('worker_get', { workerId: seen.lane })).disposition === 'completed') {
            await world.mcp.call('worker_complete', { workerId, summary: 'the lane landed' });
            return { generateMs: 300, reply: block('complete', 'done') };
          }
          return { generateMs: 300, reply: block('working', 'waiting for the lane') };
        });
        await w.browser.newPage(w.fake.url);
        const popup = await openExtensionPage(w, 'src/ui/popup.html');
        await popupOn(popup, await tabIdOf(popup, w.fake.url));
        await startFromPopup(w, popup, { taskName: 'Attach run', rootName: 'Attach root', plan: 'One lane; its tab will be closed.' });
        const run = await runNamed(w, 'Attach run');
        await until('the lane spawned', () => seen.lane);
        const before = await w.waitForWorker(seen.lane, (x) => x.attempts >= 1 && /\/c\//.test(x.binding?.conversationUrl ?? ''), 'the lane at work');
        await (await findPage(w, (url) => url === before.binding.conversationUrl, 'the lane\'s tab')).close();
        await w.waitForWorker(seen.lane, (x) => x.binding?.status === 'lost', 'the lane\'s conversation lost');

        // The person opens a conversation of theirs and attaches it to the lane.
        const id = w.fake.seedConversation([{ role: 'user', text: 'A scratch conversation.' }, { role: 'assistant', reply: 'Ready.' }]);
        const mine = w.fake.conversationUrl(id);
        await w.browser.newPage(mine);
        await popupOn(popup, await tabIdOf(popup, mine));
        await until('the attach list to offer the lane', () => evaluate(popup, (lane) =>
          [...document.querySelectorAll('[data-testid="attach-worker"] option')].some((o) => o.value === lane), seen.lane));
        await evaluate(popup, (lane) => {
          const select = document.querySelector('[data-testid="attach-worker"]');
          select.value = lane;
          select.dispatchEvent(new Event('change'));
        }, seen.lane);
        await press(popup, '[data-testid="attach-submit"]');
        const title = await until('the confirmation', () => evaluate(popup, () => document.querySelector('#confirm-title')?.textContent ?? null));
        assert.equal(title, `Attach this conversation to ${before.displayName}?`, 'the confirmation names the worker');
        assert.equal(w.prompts(seen.lane).filter((p) => p.conversationId === id).length, 0, 'nothing typed before the confirmation');
        await press(popup, '[data-testid="confirm-accept"]');

        const attached = await w.waitForWorker(seen.lane, (x) => x.binding?.conversationUrl === mine && x.binding?.status !== 'lost', 'the lane bound to the chosen conversation');
        assert.equal(attached.runId, run.runId);
        await w.waitForWorker(run.rootWorkerId, (x) => x.disposition === 'completed', 'the run finished', JOB_MS);
        const typedThere = w.fake.prompts.filter((p) => p.conversationId === id);
        assert.ok(typedThere.length >= 1 && typedThere[0].text.includes('fresh conversation for the same logical worker'), 'the lane\'s recovery prompt went into the chosen conversation');
        assert.equal(typedThere.filter((p) => p.text.includes('fresh conversation for the same logical worker')).length, 1, 'once');
      }, WORLD));
  });
}
