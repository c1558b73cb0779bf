// End to end, in headless Chromium and Firefox ESR (issue 29, "a first night per surface":
// the extension alone): one person's night, in order, with the real daemon, the real
// extension and the fake ChatGPT page, nothing typed by the test into a conversation.
//   1. a run is started from a ChatGPT tab through the popup's Start run;
//   2. its root creates two lanes (the fake page's scripted agents call the MCP tools);
//   3. the root waits on lane A: the dashboard shows it Waiting (never Needs you) and who
//      carries each worker;
//   4. the person stops lane A from the dashboard; the confirmation says the root waits on
//      it; the root is woken once (one continuation, its wake the dependency's end; the
//      root reads that lane A was cancelled) and its wait on lane A is gone;
//   5. lane B asked a question with choices: the dashboard and lane B's overlay show them,
//      the person picks one in the dashboard, and lane B's next prompt carries the
//      question, the choices and the answer;
//   6. everyone finishes: the dashboard's Finished shows the run (outcome, handoffs,
//      attempts, duration, when), the popup counts it, and lane B's overlay says it finished
//      and links to the run in Finished.
// Screenshots of each state: first-night-1-waiting ... first-night-8-overlay-finished
// (target/e2e-artifacts, and docs/screenshots with UPDATE_SCREENSHOTS=1). Stop run and
// Release are pressed in stop-release.test.mjs; this file does not repeat them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld, block } from './lib/world.mjs';
import { until, evaluate, openExtensionPage, reloadPage, press, typeInto, screenshot, setViewport, findPage, href } from './lib/ui-pages.mjs';
import { readDashboard, readOverlay } from './lib/ui-surfaces.mjs';
import { popupOn, runNamed, startFromPopup, tabIdOf } from './lib/start-here.mjs';

const OVERLAY = 'orchestrator-overlay';
/** The orchestrator's app, chosen in every conversation before its first prompt (fake page catalog). */
const WORLD = { settings: { appName: 'Orchestrator' } };
const TASK = 'Invoice export';
/** Lane A's turn: long, so it is Working while the person looks and stops it. */
const LANE_A_TURN_MS = 90_000;
const QUESTION = 'Which date format should the export use?';
const CHOICES = ['ISO 8601 (2026-12-06)', 'Day first (06/12/2026)', 'Month first (12/06/2026)'];
const PICKED = 1;
const LANE_B_HANDOFF = 'Exporter writes day-first dates; tests cover the format.';
const ROOT_HANDOFF = 'Export shipped by lane B; lane A was stopped by the person and its part dropped.';
const STOP_REASON = 'Not needed tonight: the writer reads the tables itself';

/** The words of the dashboard's open confirmation, or null. */
function dialogWords(page) {
  return evaluate(page, () => {
    const dialog = document.querySelector('[data-testid="confirm-dialog"]');
    return dialog ? { title: dialog.querySelector('h2')?.textContent ?? '', body: dialog.querySelector('p')?.textContent ?? '' } : null;
  });
}

/** Who carries each worker, as the dashboard's worker cards say it: `{workerId: text}`. */
function carriers(page) {
  return evaluate(page, () => Object.fromEntries([...document.querySelectorAll('[data-testid="timeline"]')]
    .map((card) => [card.dataset.workerId, card.querySelector('[data-testid="worker-carrier"]')?.textContent.trim() ?? null])));
}

/** The dashboard row of `workerId`, once `ok(row)` holds. */
function rowWhen(dashboard, workerId, ok, what) {
  let seen = null;
  return until(what, async () => {
    const row = (await readDashboard(dashboard)).rows.find((r) => r.workerId === workerId);
    seen = row ?? null;
    return row && ok(row) && row;
  }, 30_000, () => seen);
}

/** A lane spawned by the root, its agent registered with the world. */
async function spawn(world, runId, name, part, agent) {
  const lane = await world.mcp.call('worker_spawn', {
    runId,
    name,
    taskSummary: `the ${part} of the invoice export`,
    assignment: { objective: `Build the ${part} of the invoice export`, acceptanceCriteria: ['its tests pass'] },
  });
  world.agents.set(lane.workerId, agent);
  return lane.workerId;
}

for (const kind of BROWSERS) {
  describe(`a first night with the extension in ${kind}`, () => {
    test('start from a tab, two lanes, stop the one the root waits on, answer a choice, see the run in Finished', () =>
      inWorld(kind, async (w) => {
        const seen = { lanes: {}, rootTold: null };
        const laneA = async ({ world, workerId }) => {
          await world.mcp.call('worker_progress', { workerId, summary: 'reading the invoice tables' });
          return { generateMs: LANE_A_TURN_MS, reply: block('working', 'reading the invoice tables') };
        };
        const laneB = async ({ turn, world, workerId }) => {
          if (turn === 1) {
            await world.mcp.call('worker_await_human', { workerId, reason: 'the date format is the owner\'s call', question: QUESTION, choices: CHOICES });
            return { generateMs: 300, reply: block('blocked', 'waiting for the date format') };
          }
          await world.mcp.call('worker_complete', { workerId, summary: LANE_B_HANDOFF });
          return { generateMs: 300, reply: block('complete', 'exporter done') };
        };
        w.agentsByName.set('/root', async ({ turn, world, workerId }) => {
          const { runId } = await world.mcp.call('worker_get', { workerId });
          if (turn === 1) {
            seen.lanes.a = await spawn(world, runId, '/root/tables', 'table reader', laneA);
            seen.lanes.b = await spawn(world, runId, '/root/writer', 'file writer', laneB);
            await world.mcp.call('worker_await_dependency', { workerId, dependency: { workerId: seen.lanes.a }, reason: 'the tables come first' });
            return { generateMs: 300, reply: block('working', 'two lanes spawned; waiting for the tables') };
          }
          if (turn === 2) {
            // Woken: read why (the events of this worker), then wait for the other lane.
            const { events } = await world.mcp.call('events_wait', { cursor: 0, workerId, timeoutMs: 0 });
            seen.rootTold = events.filter((e) => e.name === 'worker.dependency_ended').map((e) => e.data);
            await world.mcp.call('worker_await_dependency', { workerId, dependency: { workerId: seen.lanes.b }, reason: 'the writer finishes alone' });
            return { generateMs: 300, reply: block('working', 'the tables lane was stopped; waiting for the writer') };
          }
          await world.mcp.call('worker_complete', { workerId, summary: ROOT_HANDOFF });
          return { generateMs: 300, reply: block('complete', 'the export is done') };
        });

        // 1. Start a run from a ChatGPT tab through the popup.
        await w.browser.newPage(w.fake.url);
        const popup = await openExtensionPage(w, 'src/ui/popup.html');
        await setViewport(w, popup, { width: 360, height: 720 });
        await popupOn(popup, await tabIdOf(popup, w.fake.url));
        await startFromPopup(w, popup, { taskName: TASK, rootName: 'Invoice root', plan: 'Two lanes: the table reader, then the file writer.' });
        const run = await runNamed(w, TASK);
        const root = run.rootWorkerId;

        // 2. The root creates two lanes; 3. it waits on lane A; lane B asks its question.
        await until('the root to spawn its lanes', () => seen.lanes.b);
        const { a, b } = seen.lanes;
        await w.waitForWorker(root, (x) => x.disposition === 'awaiting_dependency', 'the root waiting on lane A');
        await w.waitForWorker(a, (x) => x.binding?.state === 'generating', 'lane A working');
        await w.waitForWorker(b, (x) => x.disposition === 'awaiting_human', 'lane B asking');
        const names = {};
        for (const id of [root, a, b]) names[id] = (await w.mcp.call('worker_get', { workerId: id })).displayName;

        const dashboard = await openExtensionPage(w, 'src/ui/dashboard.html');
        await setViewport(w, dashboard, { width: 1280, height: 900 });
        const waiting = await rowWhen(dashboard, root, (r) => r.status === 'waiting', 'the root shown Waiting');
        assert.equal(waiting.block, `Waiting for ${names[a]}`, 'the wait names the lane');
        assert.equal(waiting.badge, 'waiting');
        await rowWhen(dashboard, a, (r) => r.status === 'working', 'lane A shown Working');
        await rowWhen(dashboard, b, (r) => r.status === 'needs_you', 'lane B shown Needs you');
        const shown = await readDashboard(dashboard);
        assert.deepEqual(shown.needsYou.map((n) => n.workerId), [b], 'a wait for another worker is never Needs you');
        let lastCarriers = null;
        const carried = await until('every worker to say who carries it', async () => {
          const c = lastCarriers = await carriers(dashboard);
          return [root, a, b].every((id) => c[id]) && c;
        }, 20_000, () => lastCarriers);
        for (const id of [root, a, b]) {
          assert.match(carried[id], new RegExp(`^carried by browser e2e-${kind}, connected since \\d\\d:\\d\\d UTC$`), `${names[id]}: ${carried[id]}`);
        }
        assert.equal(w.prompts(root).length, 1, 'the waiting root got nothing after its first prompt');
        await until('the timelines to show the root\'s and lane B\'s first turns ended in a wait', async () => {
          const timelines = (await readDashboard(dashboard)).timelines;
          return [root, b].every((id) => timelines.find((t) => t.workerId === id)?.attempts[0]?.outcome === 'worker_blocked');
        });
        await screenshot(w, dashboard, 'first-night-1-waiting', { fullPage: true });

        // 4. Stop lane A: the confirmation says the root waits on it.
        await press(dashboard, `tr[data-worker-id="${a}"] [data-testid="worker-stop"]`);
        const confirm = await until('the Stop confirmation', () => dialogWords(dashboard));
        assert.equal(confirm.title, `Stop ${names[a]}?`);
        assert.match(confirm.body, new RegExp(`${names[root]} waits for it and is told when it ends\\.`), confirm.body);
        await typeInto(dashboard, '[data-testid="confirm-reason"]', STOP_REASON);
        await screenshot(w, dashboard, 'first-night-2-stop-lane');
        await press(dashboard, '[data-testid="confirm-accept"]');
        await w.waitForWorker(a, (x) => x.disposition === 'cancelled', 'lane A stopped');

        // The root is woken once: one continuation, woken by the end of its dependency; it
        // reads that lane A was cancelled, and its wait on lane A is gone.
        await w.waitForPrompts(root, 2);
        const wake = w.prompts(root)[1];
        assert.ok(!wake.steer, 'a fresh turn, not a steer');
        // The prompt names the wake, the lane, how it ended and the person's reason.
        assert.match(wake.text, /Wake reasons: [^\n]*event:worker\.terminal[^\n]*event:dependency_ended/, wake.text);
        assert.ok(wake.text.includes('was stopped; it will not complete'), wake.text);
        assert.ok(wake.text.includes(`Its reason: ${STOP_REASON}`), wake.text);
        await until('the root to read how lane A ended', () => seen.rootTold);
        assert.deepEqual(seen.rootTold, [{ dependencyWorkerId: a, outcome: 'cancelled' }]);
        const woken = await rowWhen(dashboard, root, (r) => r.block !== `Waiting for ${names[a]}`, 'the root no longer waiting on lane A');
        assert.notEqual(woken.status, 'needs_you');
        await rowWhen(dashboard, a, (r) => r.status === 'stopped' && !r.buttons.includes('worker-stop'), 'lane A shown Stopped');
        await rowWhen(dashboard, root, (r) => r.block === `Waiting for ${names[b]}`, 'the root waiting on lane B now');
        await until('the root\'s timeline to show its second turn ended in a wait', async () => {
          const attempts = (await readDashboard(dashboard)).timelines.find((t) => t.workerId === root)?.attempts ?? [];
          return attempts.length === 2 && attempts[1].outcome === 'worker_blocked';
        });
        await screenshot(w, dashboard, 'first-night-3-root-woken', { fullPage: true });

        // 5. Lane B's question with its choices: in the dashboard, and in its tab's overlay.
        const item = `[data-testid="needs-you-item"][data-worker-id="${b}"]`;
        const offered = await until('the dashboard to offer the choices', () => evaluate(dashboard, (sel) =>
          [...document.querySelectorAll(`${sel} [data-testid="needs-you-choice"]`)].map((c) => c.textContent), item)
          .then((c) => c.length > 0 && c));
        assert.deepEqual(offered, CHOICES);
        const boundB = await w.waitForWorker(b, (x) => /\/c\//.test(x.binding?.conversationUrl ?? ''), 'lane B\'s conversation');
        const pageB = await findPage(w, (url) => url === boundB.binding.conversationUrl, 'lane B\'s tab');
        await press(pageB, '[data-testid="overlay-pill"]', { shadowHost: OVERLAY });
        const asked = await until('the overlay to show the question and its choices', async () => {
          const o = await readOverlay(pageB);
          const choices = await evaluate(pageB, () => [...document.querySelector('orchestrator-overlay')?.shadowRoot
            ?.querySelectorAll('[data-testid="overlay-choice"]') ?? []].map((c) => c.textContent.trim()));
          return o.drawer?.question?.includes(QUESTION) && choices.length > 0 && { question: o.drawer.question, choices };
        });
        assert.deepEqual(asked.choices, CHOICES);
        const overlayCarrier = await evaluate(pageB, () => document.querySelector('orchestrator-overlay').shadowRoot
          .querySelector('[data-testid="overlay-carrier"]')?.textContent.trim() ?? null);
        assert.equal(overlayCarrier, carried[b], 'the overlay says who carries it, as the dashboard does');
        await screenshot(w, pageB, 'first-night-4-overlay-question');

        // The person picks one in the dashboard and sends it.
        await press(dashboard, `${item} [data-key="choice:${b}:${PICKED}"]`);
        await until('the chosen answer in the box', () => evaluate(dashboard, (sel) =>
          document.querySelector(`${sel} [data-testid="needs-you-answer"]`)?.value, item).then((v) => v === CHOICES[PICKED]));
        await screenshot(w, dashboard, 'first-night-5-answer', { fullPage: true });
        // Still one continuation for the root: it waits on lane B now.
        assert.equal(w.prompts(root).length, 2, 'the root was woken once');
        assert.equal((await w.mcp.call('worker_attempts', { workerId: root })).attempts.length, 2);
        await press(dashboard, `${item} [data-testid="needs-you-send"]`);
        await w.waitForPrompts(b, 2);
        const resumed = w.prompts(b)[1].text;
        for (const line of [`Question: ${QUESTION}`, `Choices offered: ${CHOICES.join(' | ')}`, `Answer: ${CHOICES[PICKED]}`]) {
          assert.ok(resumed.includes(line), `lane B's prompt carries "${line}": ${resumed}`);
        }

        // 6. Everyone finishes: the run in the dashboard's Finished.
        await w.waitForWorker(root, (x) => x.disposition === 'completed', 'the root completed', 60_000);
        const finished = await until('the run in Finished', () => evaluate(dashboard, (runId) => {
          const card = document.querySelector(`[data-testid="finished-run"][data-run-id="${runId}"]`);
          if (!card) return null;
          const text = (el) => el?.textContent.trim() ?? null;
          return {
            title: text(card.querySelector('[data-testid="finished-title"]')),
            detail: text(card.querySelector('[data-testid="finished-detail"]')),
            outcome: text(card.querySelector('[data-testid="finished-outcome"]')),
            workers: Object.fromEntries([...card.querySelectorAll('[data-testid="finished-worker"]')].map((li) =>
              [li.dataset.workerId, { text: text(li), outcome: text(li.querySelector('[data-testid="finished-worker-outcome"]')) }])),
          };
        }, run.runId), 20_000);
        assert.equal(finished.title, TASK);
        assert.equal(finished.outcome, ROOT_HANDOFF);
        assert.match(finished.detail, /^Completed · ended (just now|\d+s ago) · took \d+(s|m) · 3 workers · 6 attempts$/, finished.detail);
        assert.equal(finished.workers[b].outcome, LANE_B_HANDOFF);
        assert.match(finished.workers[b].text, /Complete · Attempt 2 · took \d+s/);
        assert.match(finished.workers[a].text, /Stopped · Attempt 1/);
        assert.equal(finished.workers[a].outcome, STOP_REASON, 'lane A says why it ended');
        assert.match(finished.workers[root].text, /Complete · Attempt 3/);
        assert.equal((await readDashboard(dashboard)).rows.length, 0, 'nothing unfinished is left');
        await screenshot(w, dashboard, 'first-night-6-finished', { fullPage: true });

        // The popup counts the finished run.
        await reloadPage(popup);
        const count = await until('the popup\'s finished count', () => evaluate(popup, () =>
          document.querySelector('[data-testid="finished-count"]')?.textContent.trim() ?? null));
        assert.equal(count, '1 finished run (see Finished in the dashboard)');
        await screenshot(w, popup, 'first-night-7-popup-finished', { fullPage: true });

        // The finished worker's tab says it finished, and links to the run in Finished.
        const done = await until('lane B\'s overlay to say it finished', async () => {
          const o = await readOverlay(pageB);
          return o.pill?.status === 'complete' && o.drawer && o;
        });
        assert.equal(done.drawer.statusText.replace(/^\S+\s*/, ''), 'Complete');
        const said = await evaluate(pageB, () => document.querySelector('orchestrator-overlay').shadowRoot
          .querySelector('[data-testid="overlay-finished"]')?.textContent.trim() ?? null);
        assert.ok(said?.startsWith(`Complete: ${LANE_B_HANDOFF}`), said);
        await screenshot(w, pageB, 'first-night-8-overlay-finished');
        const before = new Set(await w.browser.pages());
        await press(pageB, '[data-testid="overlay-finished-link"]', { shadowHost: OVERLAY });
        const opened = await findPage(w, (url) => /dashboard\.html#finished-/.test(url), 'the dashboard opened on the run', { exclude: before });
        assert.equal(new URL(await href(opened)).hash, `#finished-${run.runId}`);
        await until('the linked run shown', () => evaluate(opened, (runId) =>
          document.getElementById(`finished-${runId}`)?.dataset.testid === 'finished-run', run.runId));
      }, WORLD));
  });
}
