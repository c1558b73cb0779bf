// End to end, in headless Chromium and Firefox ESR (issue 29, "every control from every
// surface"): a run left overnight is stopped from the dashboard, with the real daemon, the
// real extension and the fake ChatGPT page. The run's /root and a lane wait for a builder
// lane: the dashboard offers Release on both waiters, Stop run (never Stop worker) on
// /root, and Stop worker on the builder, whose confirmation (the dashboard's and the overlay's
// in its tab) says who waits for it.
// Release ends the lane's wait in the daemon; Stop run asks first, then cancels the whole
// run, and no refusal is shown anywhere. Screenshot: the Stop run confirmation over the
// dashboard. On the way, the popup on a new chat lists every lane in full, and its Start run
// with an empty form says what is missing (screenshot: start-run-missing-name). Screenshots
// in target/e2e-artifacts, and docs/screenshots with UPDATE_SCREENSHOTS=1.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld, block } from './lib/world.mjs';
import { until, evaluate, openExtensionPage, press, screenshot, setViewport, findPage } from './lib/ui-pages.mjs';
import { readDashboard, readPopup } from './lib/ui-surfaces.mjs';
import { popupOn, tabIdOf } from './lib/start-here.mjs';

const OVERLAY = 'orchestrator-overlay';
/** The builder's turns: long, so it is Working while the person looks. */
const BUILD_TURN_MS = 60_000;

/** The open confirm dialog's words, or null. */
function dialogWords(page) {
  return evaluate(page, () => {
    const dialog = document.querySelector('[data-testid="confirm-dialog"]');
    return dialog ? { title: dialog.querySelector('h2')?.textContent ?? '', body: dialog.querySelector('p')?.textContent ?? '' } : null;
  });
}

/** The row of `workerId` in the dashboard's worker table, once it offers `buttons` (and only those when `exactly`). */
function rowWith(dashboard, workerId, buttons, what) {
  let seen = null;
  return until(what, async () => {
    const row = (await readDashboard(dashboard)).rows.find((r) => r.workerId === workerId);
    seen = row?.buttons ?? null;
    return row && buttons.every((b) => row.buttons.includes(b)) && row;
  }, 20_000, () => seen);
}

for (const kind of BROWSERS) {
  describe(`stop and release from the dashboard in ${kind}`, () => {
    test('Release ends a wait; Stop run on /root asks, then cancels the run without a refusal', () =>
      inWorld(kind, async (w) => {
        const runId = await w.createRun('Night run');
        const root = (await w.mcp.call('worker_list', { runId })).workers.find((x) => x.name === '/root').workerId;
        const build = await w.spawnLane('/root/build', async ({ turn, world, workerId }) => {
          await world.mcp.call('worker_progress', { workerId, summary: `build step ${turn}` });
          return { generateMs: BUILD_TURN_MS, reply: block('working', `build step ${turn}`) };
        });
        const tests = await w.spawnLane('/root/tests', async () => ({ generateMs: 200, reply: block('working', 'tests') }), { start: false });
        for (const waiter of [tests, root]) {
          await w.mcp.call('worker_await_dependency', { workerId: waiter, dependency: { workerId: build }, reason: 'needs the build' });
        }

        const dashboard = await openExtensionPage(w, 'src/ui/dashboard.html');
        await setViewport(w, dashboard, { width: 1280, height: 900 });
        await w.waitForWorker(build, (x) => x.binding?.state === 'generating', 'the builder working');

        // What each row offers: the root stops the run; the waiters can be released.
        const rootRow = await rowWith(dashboard, root, ['worker-release', 'worker-stop-run'], 'the root to offer Release and Stop run');
        assert.ok(!rootRow.buttons.includes('worker-stop'), `no Stop worker on /root: ${rootRow.buttons}`);
        const { displayName: buildName } = await w.mcp.call('worker_get', { workerId: build });
        assert.equal(rootRow.block, `Waiting for ${buildName}`, 'the wait names whom it waits for');
        await rowWith(dashboard, tests, ['worker-release', 'worker-stop'], 'the tests lane to offer Release and Stop worker');
        const buildRow = await rowWith(dashboard, build, ['worker-stop'], 'the builder to offer Stop worker');
        assert.ok(!buildRow.buttons.includes('worker-release'), 'the builder waits for nobody');

        // Stop worker on the builder says who waits for it; cancelled, nothing happens.
        await press(dashboard, `tr[data-worker-id="${build}"] [data-testid="worker-stop"]`);
        const stopBuild = await until('the builder\'s Stop confirmation', () => dialogWords(dashboard));
        assert.match(stopBuild.body, /wait for it and are told when it ends/, stopBuild.body);
        await press(dashboard, '[data-testid="confirm-cancel"]');
        await until('the confirmation closed', async () => !(await readDashboard(dashboard)).dialog);
        assert.equal((await w.mcp.call('worker_get', { workerId: build })).disposition, 'running', 'nothing stopped on Cancel');

        // The builder's overlay says the same in its tab: its worker carries who waits for it.
        const bound = await w.waitForWorker(build, (x) => /\/c\/[0-9a-f-]{36}$/.test(x.binding?.conversationUrl ?? ''), 'a settled conversation');
        const buildPage = await findPage(w, (url) => url === bound.binding.conversationUrl, 'the builder\'s tab');
        await press(buildPage, '[data-testid="overlay-pill"]', { shadowHost: OVERLAY });
        await press(buildPage, '[data-testid="overlay-action-stop_worker"]', { shadowHost: OVERLAY });
        const overlayConfirm = await until('the overlay\'s Stop confirmation', () => evaluate(buildPage, () =>
          document.querySelector('orchestrator-overlay')?.shadowRoot?.querySelector('[data-testid="overlay-confirm-body"]')?.textContent ?? null));
        assert.match(overlayConfirm, /wait for it and are told when it ends/, overlayConfirm);
        await press(buildPage, '[data-testid="overlay-confirm-cancel"]', { shadowHost: OVERLAY });

        // Release: the tests lane no longer waits.
        await press(dashboard, `tr[data-worker-id="${tests}"] [data-testid="worker-release"]`);
        await w.waitForWorker(tests, (x) => x.dependencyWait == null, 'the tests lane released');
        await until('Release confirmed on the page', async () => (await readDashboard(dashboard)).message === 'Release: done.');
        await until('the tests lane shown released (no Release, no wait)', async () => {
          const row = (await readDashboard(dashboard)).rows.find((r) => r.workerId === tests);
          return row && !row.buttons.includes('worker-release') && !/^Waiting for/.test(row.block ?? '');
        });

        // The popup on a new chat: every lane listed in full (no scroll box of its own), and
        // Start run with an empty form says what is missing, and starts nothing.
        const chat = await w.browser.newPage(w.fake.url);
        const popup = await openExtensionPage(w, 'src/ui/popup.html');
        await setViewport(w, popup, { width: 360, height: 600 });
        await popupOn(popup, await tabIdOf(popup, w.fake.url));
        await until('the popup to list the three workers', async () => (await readPopup(popup)).rows.length === 3);
        const list = await evaluate(popup, () => {
          const box = document.querySelector('[data-testid="worker-list"]').closest('section');
          return { scrolls: box.scrollHeight > box.clientHeight + 1, overflow: getComputedStyle(box).overflowY };
        });
        assert.deepEqual(list, { scrolls: false, overflow: 'visible' }, 'the worker list is not a box that cuts rows off');
        await press(popup, '[data-testid="start-run-open"]');
        await press(popup, '[data-testid="start-submit"]');
        const missing = await until('the start form to say what is missing', () => evaluate(popup, () => {
          const error = document.querySelector('[data-testid="start-error"]');
          return error && { text: error.textContent, focused: document.activeElement?.id, invalid: document.getElementById('start-task').getAttribute('aria-invalid') };
        }));
        assert.match(missing.text, /needs a task name: type one in "Task name"/);
        assert.deepEqual([missing.focused, missing.invalid], ['start-task', 'true'], 'the field to fix has the focus');
        const deadMan = await evaluate(popup, () => {
          // Each choice's words, measured in the dropdown's font, fit beside its arrow.
          const select = document.querySelector('[data-testid="start-dead-man"]');
          const ctx = document.createElement('canvas').getContext('2d');
          ctx.font = getComputedStyle(select).font;
          const widest = Math.max(...[...select.options].map((o) => ctx.measureText(o.textContent).width));
          return { fits: widest + 40 <= select.clientWidth, text: document.querySelector('[data-testid="start-dead-man-text"]').textContent };
        });
        assert.deepEqual(deadMan, { fits: true, text: 'Reopen the root in a fresh conversation, once, and tell me.' });
        await screenshot(w, popup, 'start-run-missing-name', { fullPage: true });
        assert.equal((await w.mcp.call('run_list', {})).runs.length, 1, 'nothing started');
        await chat.close();

        // Stop run on /root: the run's words, then the whole run is cancelled.
        await press(dashboard, `tr[data-worker-id="${root}"] [data-testid="worker-stop-run"]`);
        const stopRun = await until('the Stop run confirmation', () => dialogWords(dashboard));
        assert.equal(stopRun.title, 'Stop the run "Night run"?');
        assert.match(stopRun.body, /Every unfinished worker of this run is cancelled, \/root included/);
        assert.equal((await w.mcp.call('run_get', { runId })).status, 'active', 'nothing stopped before confirming');
        await screenshot(w, dashboard, 'dashboard-stop-run');
        await press(dashboard, '[data-testid="confirm-accept"]');
        await until('the run cancelled', async () => (await w.mcp.call('run_get', { runId })).status === 'cancelled');
        const { workers } = await w.mcp.call('worker_list', { runId });
        assert.deepEqual(workers.filter((x) => x.disposition !== 'cancelled').map((x) => x.name), [], 'every worker cancelled');
        const said = await until('the dashboard to answer Stop run', async () => {
          const message = (await readDashboard(dashboard)).message ?? '';
          return message !== '' && !message.startsWith('Release') && message;
        });
        assert.equal(said, 'Stop run: done.', 'no refusal');
        assert.doesNotMatch(said, /Refused|ROOT_LIFECYCLE|run_cancel/);
      }));
  });
}
