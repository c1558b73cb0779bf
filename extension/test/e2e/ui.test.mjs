// End to end, in headless Chromium and Firefox ESR: the operator surfaces (toolbar popup,
// dashboard, managed-tab overlay, settings) of the real extension, driven by the real
// daemon through the fake ChatGPT page. Three lanes run side by side:
//   builder  holds long turns (Working), waits a long idle grace between them (Resuming),
//            is paused from the popup, continued from the overlay, resumed from the
//            dashboard and completes;
//   asker    asks a person (Needs you) and is answered from the dashboard;
//   stuck    never reports progress (Stalled) and is continued anyway from its stall card.
// Every state is checked on all three surfaces against what the daemon says (MCP), and
// every button pressed (Pause, Continue now, Resume, Continue anyway, Send answer, Stop
// worker, Stop run, the Auto Resume switches, Hide overlay) is checked by its effect on
// the daemon or the extension's storage. The overlay must appear only on managed tabs
// and leave the page's composer and send button clickable; axe-core must report nothing
// serious or critical; screenshots of every surface are saved (target/e2e-artifacts, and
// docs/screenshots with UPDATE_SCREENSHOTS=1).
// One world per browser: the steps build on each other, as an operator's session does.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld, block, ARTIFACTS_DIR } from './lib/world.mjs';
import {
  until, evaluate, openExtensionPage, findPage, reloadPage, setViewport, press, typeInto, screenshot, axeViolations,
} from './lib/ui-pages.mjs';
import {
  expectedStatus, expectedCounts, readPopup, readDashboard, readOverlay, hitTest,
} from './lib/ui-surfaces.mjs';

const QUESTION = 'Which CSV dialect should win?';
const ANSWER = 'rfc4180, with a header row';
/** The builder's turn lengths: long enough to see `Working` and to press Pause mid-turn. */
const BUILDER_TURN_MS = { 1: 8_000, 2: 5_000, 3: 3_000 };
/** The builder's last turn, which ends with worker_complete (screenshots are taken meanwhile). */
const FINAL_TURN_MS = 9_000;
/** The builder's idle grace: how long it shows `Resuming` between turns. */
const BUILDER_IDLE_GRACE_MS = 4_000;
const STALL_POLICY = { stallWarningAfterNoProgressAttempts: 1, stallPauseAfterNoProgressAttempts: 2 };
const TERMINAL = new Set(['complete', 'failed', 'stopped']);
const OVERLAY = 'orchestrator-overlay';

/** The lanes' agents: what each conversation's model does in a turn (its MCP calls, its reply). */
function agents(flags) {
  return {
    builder: async ({ turn, world, workerId }) => {
      await world.mcp.call('worker_progress', { workerId, summary: `built part ${turn}` });
      if (flags.finish) {
        // The last turn: the model works a while, then calls worker_complete before it ends.
        setTimeout(() => world.mcp.call('worker_complete', { workerId, summary: 'built every part' })
          .catch((error) => { world.agentError = error; }), FINAL_TURN_MS - 500);
        return { generateMs: FINAL_TURN_MS, reply: block('complete', 'built every part') };
      }
      return { generateMs: BUILDER_TURN_MS[turn] ?? 1_000, reply: block('working', `part ${turn} built`) };
    },
    asker: async ({ turn, world, workerId, prompt }) => {
      if (turn === 1) {
        await world.mcp.call('worker_await_human', {
          workerId, reason: 'the dialect is the owner\'s call', question: QUESTION, choices: ['excel', 'rfc4180'],
        });
        return { generateMs: 300, reply: block('blocked', 'waiting for the dialect decision') };
      }
      // As the resume prompt asks, the model recovers its state first: the answer is there.
      flags.askerPrompt = prompt;
      flags.askerSaw = (await world.mcp.call('worker_get', { workerId })).humanAnswer;
      await world.mcp.call('worker_progress', { workerId, summary: 'used the answer' });
      await world.mcp.call('worker_complete', { workerId, summary: 'used the answer' });
      return { generateMs: 300, reply: block('complete', 'used the answer') };
    },
    // No worker_progress, ever. Each reply's status block differs: a short turn in a
    // background tab can end before the content script reports it generating, and an idle
    // page whose block equals the previous turn's is then not reported as a new turn end
    // (src/core/coalesce.js), leaving the attempt `submitted` until its deadline.
    stuck: async ({ turn }) => ({ generateMs: 300, reply: block('working', `still thinking (${turn})`) }),
  };
}

/** The tab id the background manages `workerId` in (from `ui.state`, asked from an extension page). */
async function tabOf(extensionPage, workerId) {
  return until(`a managed tab for ${workerId}`, () => evaluate(extensionPage, async (id) => {
    const api = globalThis.browser ?? globalThis.chrome;
    const state = await api.runtime.sendMessage({ type: 'ui.state' });
    const tab = Object.keys(state?.tabs ?? {}).find((t) => state.tabs[t] === id);
    return tab === undefined ? null : Number(tab);
  }, workerId));
}

/**
 * Makes `workerId`'s conversation the active tab (as when a person clicks the toolbar
 * button on it) and reloads the popup page, which asks for the active tab when it loads.
 */
async function popupOnTab(ctx, workerId) {
  const tabId = await tabOf(ctx.popup, workerId);
  await evaluate(ctx.popup, (id) => (globalThis.browser ?? globalThis.chrome).tabs.update(id, { active: true }).then(() => true), tabId);
  await reloadPage(ctx.popup);
  await until(`the popup's current conversation to be ${workerId}`, async () => (await readPopup(ctx.popup)).current?.workerId === workerId);
}

/**
 * Waits until the daemon's state of `workerId` maps to `key` (and satisfies `daemon`) and
 * the popup row (absent for a finished worker: the popup lists active ones), the
 * dashboard row and the overlay pill on the worker's tab all show `key`. Returns what
 * each showed.
 */
async function everywhere(ctx, workerId, key, what, { daemon = () => true, timeoutMs = 20_000 } = {}) {
  let seen = null;
  return until(`${what}: "${key}" in the daemon, the popup, the dashboard and the overlay`, async () => {
    const [worker, popup, dashboard, overlay] = await Promise.all([
      ctx.w.mcp.call('worker_get', { workerId }), readPopup(ctx.popup), readDashboard(ctx.dashboard), readOverlay(ctx.pages[workerId]),
    ]);
    const popupRow = popup.rows.find((r) => r.workerId === workerId) ?? null;
    const dashboardRow = dashboard.rows.find((r) => r.workerId === workerId) ?? null;
    seen = {
      daemon: expectedStatus(worker),
      disposition: worker.disposition,
      attempts: worker.attempts,
      daemonCondition: daemon(worker),
      popup: popupRow ? `${popupRow.status}/${popupRow.badge}` : 'absent',
      dashboard: dashboardRow ? `${dashboardRow.status}/${dashboardRow.badge}` : 'absent',
      overlay: overlay.pill?.status ?? 'absent',
    };
    const popupWants = TERMINAL.has(key) ? 'absent' : `${key}/${key}`;
    const ok = seen.daemon === key && seen.daemonCondition && seen.popup === popupWants
      && seen.dashboard === `${key}/${key}` && seen.overlay === key;
    return ok && { worker, popup, popupRow, dashboard, dashboardRow, overlay };
  }, timeoutMs, () => seen);
}

/** The popup's counts and the dashboard's totals agree with the daemon's workers. */
async function countsAgree(ctx, what) {
  let seen = null;
  await until(`${what}: the counts to agree with the daemon`, async () => {
    const [{ workers }, popup, dashboard] = await Promise.all([
      ctx.w.mcp.call('worker_list', { runId: ctx.w.runId }), readPopup(ctx.popup), readDashboard(ctx.dashboard),
    ]);
    const want = expectedCounts(workers);
    const totals = `Active ${want.active} · Working ${want.working} · Resuming ${want.resuming} · Needs you ${want.needsYou}`;
    seen = { want, popup: popup.counts, dashboard: dashboard.totals };
    return JSON.stringify(popup.counts) === JSON.stringify(want) && dashboard.totals?.startsWith(totals);
  }, 10_000, () => seen);
}

/**
 * The dashboard's timeline of `workerId` shows the daemon's attempts (worker_attempts):
 * each one's reason, and its outcome once closed (its state while open).
 */
async function timelineAgrees(ctx, workerId, what) {
  let seen = null;
  return until(`${what}: the dashboard's timeline to match worker_attempts`, async () => {
    const [{ attempts }, dashboard] = await Promise.all([
      ctx.w.mcp.call('worker_attempts', { workerId }), readDashboard(ctx.dashboard),
    ]);
    const want = attempts.map((a) => ({ reason: a.reason, outcome: a.outcome ?? a.state }));
    const timeline = dashboard.timelines.find((tl) => tl.workerId === workerId);
    seen = { want, shown: timeline?.attempts };
    return timeline?.svg && JSON.stringify(timeline.attempts) === JSON.stringify(want) && timeline;
  }, 10_000, () => seen);
}

/** After a failed step: what the daemon and every surface said, in target/e2e-artifacts. */
async function keepDiagnostics(ctx, stepName) {
  const safe = (promise) => promise.catch((error) => `unreadable: ${error.message}`);
  const lanes = {};
  for (const [id, page] of Object.entries(ctx.pages)) {
    lanes[id] = { daemon: await safe(ctx.w.mcp.call('worker_get', { workerId: id })), overlay: await safe(readOverlay(page)) };
  }
  const state = { step: stepName, lanes, popup: await safe(readPopup(ctx.popup)), dashboard: await safe(readDashboard(ctx.dashboard)) };
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  writeFileSync(join(ARTIFACTS_DIR, `${ctx.w.kind}-ui-state.json`), JSON.stringify(state, null, 2));
}

function assertNoSeriousViolations(violations, surface) {
  assert.deepEqual(violations, [], `axe-core: serious or critical violations on the ${surface}:\n${violations.join('\n')}`);
}

for (const kind of BROWSERS) {
  describe(`operator UI in ${kind}`, () => {
    test('popup, overlay and dashboard follow a run through every state, and their buttons act on the daemon', (t) =>
      inWorld(kind, async (w) => {
        let broken = null;
        // Steps share one world and build on each other: after a failed step the rest
        // fail at once instead of each waiting for its timeout.
        const step = (name, body) => t.test(name, async () => {
          if (broken) throw new Error(`not run: the step "${broken}" failed`);
          try {
            await body();
          } catch (error) {
            await keepDiagnostics(ctx, name);
            broken = name;
            throw error;
          }
        });

        const flags = { finish: false, askerPrompt: null, askerSaw: null };
        const agent = agents(flags);
        await w.createRun('UI run');
        const builder = await w.spawnLane('/root/builder', agent.builder, { policy: { idleGraceMs: BUILDER_IDLE_GRACE_MS } });
        const asker = await w.spawnLane('/root/asker', agent.asker);
        const stuck = await w.spawnLane('/root/stuck', agent.stuck, { policy: STALL_POLICY });
        const ctx = { w, pages: {} };
        ctx.popup = await openExtensionPage(w, 'src/ui/popup.html');
        ctx.dashboard = await openExtensionPage(w, 'src/ui/dashboard.html');
        for (const id of [builder, asker, stuck]) {
          const bound = await w.waitForWorker(id, (x) => /\/c\/[0-9a-f-]{36}$/.test(x.binding?.conversationUrl ?? ''), 'a settled conversation');
          ctx.pages[id] = await findPage(w, (url) => url === bound.binding.conversationUrl, `the conversation tab of ${id}`);
        }

        await step('the popup and the dashboard are live and list every lane', async () => {
          await until('both surfaces live with every lane listed', async () => {
            const [popup, dashboard] = await Promise.all([readPopup(ctx.popup), readDashboard(ctx.dashboard)]);
            const listed = (rows) => [builder, asker, stuck].every((id) => rows.some((r) => r.workerId === id));
            return popup.connection === 'live' && dashboard.connection === 'live' && listed(popup.rows) && listed(dashboard.rows);
          });
          const [run, popup, dashboard] = await Promise.all([w.mcp.call('run_get', { runId: w.runId }), readPopup(ctx.popup), readDashboard(ctx.dashboard)]);
          assert.equal(popup.autoResume, String(run.defaultPolicy.mode === 'auto'), 'the popup shows the run default Auto Resume');
          assert.deepEqual(dashboard.runs, [{ runId: w.runId, title: run.taskName }], 'the dashboard shows the run');
        });

        await step('Working: a turn being generated', async () => {
          const s = await everywhere(ctx, builder, 'working', 'the builder\'s first turn', { daemon: (x) => x.attempts === 1 });
          assert.match(s.overlay.pill.text, new RegExp(`Working · Attempt ${s.worker.attempts} · Auto Resume$`));
          assert.match(s.popupRow.detail, new RegExp(`^Attempt ${s.worker.attempts} · `));
          assert.equal(s.dashboardRow.attempt, String(s.worker.attempts));
          assert.equal(s.dashboardRow.policySourceKey, s.worker.policySource);
          assert.equal(s.dashboardRow.policySource, 'Worker override', 'the builder\'s idle grace is its own override');
          assert.ok(s.dashboardRow.buttons.includes('worker-pause') && s.dashboardRow.buttons.includes('worker-continue_now'));
          await countsAgree(ctx, 'while the builder works');
          await popupOnTab(ctx, builder);
          const popup = await readPopup(ctx.popup);
          assert.equal(popup.current.status, 'working', 'the popup\'s current conversation is the working builder');
          assert.deepEqual(popup.current.buttons, ['current-pause', 'current-continue_now']);
        });

        await step('Resuming: between turns, during the idle grace', async () => {
          const s = await everywhere(ctx, builder, 'resuming', 'the builder after its first turn', { daemon: (x) => x.attempts === 1 });
          assert.match(s.overlay.pill.text, /Resuming · Attempt 1 · Auto Resume$/);
          await countsAgree(ctx, 'while the builder resumes');
        });

        await step('Paused: Pause in the popup pauses the worker after its turn', async () => {
          await everywhere(ctx, builder, 'working', 'the builder\'s second turn', { daemon: (x) => x.attempts === 2 });
          await until('the popup to offer Pause for the builder', async () => (await readPopup(ctx.popup)).current?.buttons.includes('current-pause'));
          await press(ctx.popup, '[data-testid="current-pause"]');
          const marked = await w.waitForWorker(builder, (x) => x.pauseAfterTurn, 'the pause after the turn recorded', 5_000);
          assert.equal(marked.disposition, 'running', 'the running turn is not interrupted');
          await until('the pending pause shown on the popup and the overlay', async () => {
            const [popup, overlay] = await Promise.all([readPopup(ctx.popup), readOverlay(ctx.pages[builder])]);
            return popup.rows.find((r) => r.workerId === builder)?.note === 'Pauses after this turn'
              && /Working · Attempt 2 · Pausing after turn$/.test(overlay.pill?.text ?? '');
          });
          // After Pause the button says Resume (it takes the pending pause back), not Pause again.
          const offered = await readPopup(ctx.popup);
          if (offered.current?.status === 'working') {
            assert.deepEqual(offered.current.buttons, ['current-unpause', 'current-continue_now'], 'Resume instead of Pause');
            const label = await evaluate(ctx.popup, () => document.querySelector('[data-testid="current-unpause"]')?.textContent);
            assert.equal(label, 'Resume');
          }
          const s = await everywhere(ctx, builder, 'paused', 'the builder after its second turn', { daemon: (x) => x.attempts === 2 });
          assert.ok(s.worker.pause, `worker_get shows the pause: ${JSON.stringify(s.worker.pause)}`);
          assert.equal(s.dashboardRow.block, 'Paused');
          assert.ok(s.dashboardRow.buttons.includes('worker-resume') && s.dashboardRow.buttons.includes('worker-continue_now'));
          await until('the popup to offer Resume and Continue now', async () =>
            JSON.stringify((await readPopup(ctx.popup)).current?.buttons) === JSON.stringify(['current-resume', 'current-continue_now']));
          await w.waitForWorker(builder, (x) => !x.inFlightAttemptId, 'nothing in flight');
          assert.equal(w.prompts(builder).length, 2, 'no prompt after the pause');
        });

        await step('Stalled: a worker without progress is paused for stall and shows a stall card', async () => {
          const s = await everywhere(ctx, stuck, 'stalled', 'the lane that never reports progress');
          assert.equal(s.worker.progress.stall, 'paused');
          assert.ok(s.worker.progress.attemptsWithoutProgress >= STALL_POLICY.stallPauseAfterNoProgressAttempts);
          const card = s.dashboard.stalls.find((c) => c.workerId === stuck);
          assert.ok(card, `a stall card for the stuck lane: ${JSON.stringify(s.dashboard.stalls)}`);
          assert.equal(card.title, 'Worker paused: appears stuck');
          assert.match(card.detail, /no progress yet/);
          assert.equal(s.dashboardRow.block, 'Paused: no durable progress');
          assert.ok(s.dashboardRow.buttons.includes('worker-continue_anyway'));
          assert.equal(s.popupRow.note, 'No durable progress');
          assert.match(s.overlay.pill.text, new RegExp(`Stalled · Attempt ${s.worker.attempts}$`));
          assert.equal(w.prompts(stuck).length, s.worker.attempts, 'one prompt per attempt');
          await timelineAgrees(ctx, stuck, 'the stalled lane');
        });

        await step('Needs you: a worker waiting for a person, with its question', async () => {
          const s = await everywhere(ctx, asker, 'needs_you', 'the lane that asked a person');
          assert.equal(s.worker.humanWait?.question, QUESTION, `worker_get: ${JSON.stringify(s.worker.humanWait)}`);
          assert.deepEqual(s.dashboard.needsYou, [{ workerId: asker, question: QUESTION }]);
          assert.equal(s.popupRow.question, QUESTION);
          assert.deepEqual(s.popupRow.buttons, ['row-answer']);
          assert.equal(s.dashboardRow.block, `Needs you: ${QUESTION}`);
          await press(ctx.pages[asker], '[data-testid="overlay-pill"]', { shadowHost: OVERLAY });
          await until('the overlay drawer to show the question', async () =>
            (await readOverlay(ctx.pages[asker])).drawer?.question === `Needs you: ${QUESTION} (answer from the dashboard)`);
          const timeline = await timelineAgrees(ctx, asker, 'the asker');
          assert.deepEqual(timeline.attempts, [{ reason: 'initial', outcome: 'worker_blocked' }]);
          await countsAgree(ctx, 'while the asker needs a person');
          assert.equal(w.prompts(asker).length, 1, 'no resume while a person is needed');
        });

        await step('the overlay appears only on managed tabs and leaves the composer and send button clickable', async () => {
          for (const id of [builder, asker, stuck]) {
            await until(`one overlay on the tab of ${id}`, async () => {
              const o = await readOverlay(ctx.pages[id]);
              return o.hosts === 1 && o.pill !== null;
            });
          }
          // The manifest injects the content scripts (overlay included) into the unmanaged fake
          // page too, after the test hooks' script; there the overlay must stay inert.
          assert.equal((await readOverlay(w.hookPage)).hosts, 0, 'no overlay on an unmanaged tab');
          const page = ctx.pages[builder];
          const collapsed = await readOverlay(page);
          assert.equal(collapsed.drawer, null, 'the overlay starts collapsed');
          for (const where of ['end', 'start']) {
            const hits = await hitTest(page, where);
            for (const [control, hit] of Object.entries(hits)) {
              assert.ok(hit.inViewport && hit.hitsControl && !hit.overlayOverlaps, `collapsed overlay, composer at the ${where}: ${control}: ${JSON.stringify(hit)}`);
            }
          }
          await screenshot(w, page, 'overlay-collapsed');
          await press(page, '[data-testid="overlay-pill"]', { shadowHost: OVERLAY });
          const open = await until('the drawer open', async () => {
            const o = await readOverlay(page);
            return o.drawer?.status === 'paused' && o;
          });
          assert.equal(open.pill.expanded, 'true');
          assert.deepEqual(open.drawer.buttons.map((b) => b.testid),
            ['overlay-action-resume', 'overlay-action-continue_now', 'overlay-action-stop_worker']);
          for (const where of ['end', 'start']) {
            const hits = await hitTest(page, where);
            for (const [control, hit] of Object.entries(hits)) {
              assert.ok(hit.inViewport && hit.hitsControl && !hit.overlayOverlaps, `open drawer, composer at the ${where}: ${control}: ${JSON.stringify(hit)}`);
            }
          }
          // The right-hand part of the tab, down to just below the drawer.
          const view = await evaluate(page, () => ({
            box: document.querySelector('orchestrator-overlay').shadowRoot.querySelector('.box').getBoundingClientRect().toJSON(),
            width: innerWidth,
            height: innerHeight,
          }));
          const x = Math.max(0, view.width - 640);
          await screenshot(w, page, 'overlay-open',
            { clip: { x, y: 0, width: view.width - x, height: Math.min(view.height, Math.ceil(view.box.bottom) + 24) } });
          assertNoSeriousViolations(await axeViolations(page, { include: [[OVERLAY]] }), 'overlay (drawer open)');
        });

        await step('Continue now in the overlay starts exactly one attempt, and the pause holds', async () => {
          const page = ctx.pages[builder];
          await press(page, '[data-testid="overlay-action-continue_now"]', { shadowHost: OVERLAY });
          await w.waitForPrompts(builder, 3, 10_000);
          // The daemon keeps the worker paused while the one continued turn runs.
          await everywhere(ctx, builder, 'paused', 'the builder during its continued turn',
            { daemon: (x) => x.attempts === 3 && x.binding?.state === 'generating' });
          assert.equal((await readOverlay(page)).drawer?.message, '', 'the overlay reports no error');
          await w.waitForWorker(builder, (x) => x.binding?.state !== 'generating' && !x.inFlightAttemptId, 'the continued turn over', 10_000);
          await everywhere(ctx, builder, 'paused', 'the builder after its continued turn', { daemon: (x) => x.attempts === 3 });
          assert.equal(w.prompts(builder).length, 3, 'exactly one prompt for Continue now');
          const timeline = await timelineAgrees(ctx, builder, 'the builder after Continue now');
          assert.deepEqual(timeline.attempts.map((a) => a.reason), ['initial', 'auto_resume', 'manual_resume']);
          assert.ok(timeline.marks >= 3, `progress marks: ${timeline.marks}`);
        });

        await step('Continue anyway on the stall card clears the stall; without progress it stalls again', async () => {
          const before = (await w.mcp.call('worker_get', { workerId: stuck })).attempts;
          await press(ctx.dashboard, `[data-testid="stall-card"][data-worker-id="${stuck}"] [data-testid="stall-continue"]`);
          await w.waitForPrompts(stuck, before + 1, 10_000);
          const { events } = await w.mcp.call('events_wait', { workerId: stuck, limit: 1000 });
          assert.ok(events.some((e) => e.name === 'continuation.stall_acknowledged'), `the stall was acknowledged: ${events.map((e) => e.name)}`);
          // The acknowledgement restarts the count: the stall pause comes back after as many attempts as before.
          const again = before + STALL_POLICY.stallPauseAfterNoProgressAttempts;
          const s = await everywhere(ctx, stuck, 'stalled', 'the stuck lane after more attempts without progress', { daemon: (x) => x.attempts === again });
          assert.ok(s.dashboard.stalls.some((c) => c.workerId === stuck && c.title === 'Worker paused: appears stuck'));
          await w.waitForWorker(stuck, (x) => !x.inFlightAttemptId, 'nothing in flight');
          assert.equal(w.prompts(stuck).length, again, 'one prompt per attempt');
        });

        await step('axe-core finds nothing serious or critical on the popup, the dashboard and the settings', async () => {
          assertNoSeriousViolations(await axeViolations(ctx.popup), 'popup');
          assertNoSeriousViolations(await axeViolations(ctx.dashboard), 'dashboard');
          const settings = await openExtensionPage(w, 'src/ui/settings.html');
          await until('the settings loaded', () => evaluate(settings, () =>
            document.querySelector('[data-testid="setting-daemon-url"]').value !== ''
            && document.querySelector('#connection [data-testid="connection"]')?.dataset.status === 'live'));
          await setViewport(w, settings, { width: 760, height: 720 });
          await screenshot(w, settings, 'settings');
          assertNoSeriousViolations(await axeViolations(settings), 'settings');
          // A value out of range is named at its field and not saved.
          await evaluate(settings, () => { document.querySelector('[data-testid="setting-concurrency"]').value = ''; });
          await typeInto(settings, '[data-testid="setting-concurrency"]', '0');
          await press(settings, '[data-testid="settings-save"]');
          const invalid = await until('the field error', () => evaluate(settings, () => {
            const field = document.querySelector('[data-testid="setting-concurrency"]');
            const error = document.querySelector('[data-testid="error-concurrency"]').textContent;
            return error && { error, invalid: field.getAttribute('aria-invalid'), focused: document.activeElement === field,
              status: document.querySelector('[data-testid="settings-status"]').textContent };
          }));
          assert.deepEqual(invalid, { error: 'Expected a whole number from 1 to 16.', invalid: 'true', focused: true, status: 'Some fields need fixing.' });
          assert.equal((await w.hook('storage')).settings.concurrencyMax, 4, 'nothing saved');
          assertNoSeriousViolations(await axeViolations(settings), 'settings with a field error');
          await settings.close();
        });

        await step('Complete: Resume in the dashboard lets the worker go on until it completes', async () => {
          flags.finish = true;
          await press(ctx.dashboard, `tr[data-worker-id="${builder}"] [data-testid="worker-resume"]`);
          await until('the dashboard to confirm', async () => (await readDashboard(ctx.dashboard)).message === 'Resume: done.', 5_000);
          await w.waitForWorker(builder, (x) => !x.pause, 'the pause cleared', 5_000);
          await everywhere(ctx, builder, 'working', 'the builder\'s last turn', { daemon: (x) => x.attempts === 4 });
          // Screenshots while one lane works, one needs you and one is stalled, once the
          // confirmation toast has cleared itself.
          await until('the confirmation to clear', async () => (await readDashboard(ctx.dashboard)).message === '', 10_000);
          await popupOnTab(ctx, builder);
          await setViewport(w, ctx.popup, { width: 380, height: 640 });
          await screenshot(w, ctx.popup, 'popup', { fullPage: true });
          const list = await evaluate(ctx.popup, () => {
            const workers = document.querySelector('section.workers').getBoundingClientRect();
            const current = document.querySelector('[data-testid="current-worker"]').getBoundingClientRect();
            return { gap: current.top - workers.bottom, overflow: getComputedStyle(document.querySelector('section.workers')).overflowY };
          });
          assert.ok(list.gap >= -0.5, `the worker list ends above the current conversation (gap ${list.gap} px)`);
          // Every row in full: the popup scrolls as a whole; a box of its own cut the second lane off (issue 29).
          assert.equal(list.overflow, 'visible', 'the worker list is not a scroll box of its own');
          await screenshot(w, ctx.dashboard, 'dashboard', { fullPage: true });
          const s = await everywhere(ctx, builder, 'complete', 'the builder after its last turn');
          assert.equal(s.worker.attempts, 4);
          assert.match(s.overlay.pill.text, /Complete$/);
          assert.deepEqual(s.dashboardRow.buttons, [], 'a finished worker offers no buttons');
          await w.waitForWorker(builder, (x) => !x.inFlightAttemptId, 'nothing in flight');
          assert.equal(w.prompts(builder).length, 4);
          await countsAgree(ctx, 'after the builder completed');
        });

        await step('an answer typed in the dashboard resolves Needs you', async () => {
          const item = `[data-testid="needs-you-item"][data-worker-id="${asker}"]`;
          await typeInto(ctx.dashboard, `${item} [data-testid="needs-you-answer"]`, ANSWER);
          await press(ctx.dashboard, `${item} [data-testid="needs-you-send"]`);
          await until('the dashboard to confirm the answer', async () => (await readDashboard(ctx.dashboard)).message === 'Send answer: done.');
          const answered = await w.waitForWorker(asker, (x) => x.disposition !== 'awaiting_human', 'the human wait resolved', 10_000);
          assert.equal(answered.humanAnswer, ANSWER, 'the daemon keeps the answer typed in the dashboard');
          await everywhere(ctx, asker, 'complete', 'the asker after the answer');
          assert.equal(w.prompts(asker).length, 2, 'exactly one resume after the answer');
          assert.match(flags.askerPrompt, /event:human_resolved/, 'the resume says why it woke');
          assert.equal(JSON.stringify(flags.askerSaw), JSON.stringify(answered.humanAnswer), 'the resumed worker reads the answer');
          assert.deepEqual((await readDashboard(ctx.dashboard)).needsYou, [], 'nothing needs you any more');
        });

        await step('Stop worker in the overlay asks first, then stops the worker', async () => {
          const page = ctx.pages[stuck];
          await press(page, '[data-testid="overlay-pill"]', { shadowHost: OVERLAY });
          await press(page, '[data-testid="overlay-action-stop_worker"]', { shadowHost: OVERLAY });
          await until('the overlay\'s confirmation', () => evaluate(page, () =>
            Boolean(document.querySelector('orchestrator-overlay').shadowRoot.querySelector('[data-testid="overlay-confirm"]'))));
          assert.equal((await w.mcp.call('worker_get', { workerId: stuck })).disposition, 'paused', 'nothing stopped before confirming');
          await press(page, '[data-testid="overlay-confirm-accept"]', { shadowHost: OVERLAY });
          const s = await everywhere(ctx, stuck, 'stopped', 'the stuck lane after Stop worker');
          assert.equal(s.worker.outcome, 'Stopped from the ChatGPT tab overlay', 'the overlay gives the daemon its reason');
          assert.match(s.overlay.pill.text, /Stopped$/);
          assert.deepEqual(s.overlay.drawer?.buttons, [], 'a stopped worker offers no buttons');
        });

        await step('the Auto Resume switches in the popup and the dashboard set the run default', async () => {
          const { rootWorkerId } = await w.mcp.call('run_get', { runId: w.runId });
          const agreeOn = async (mode) => {
            let seen = null;
            await until(`Auto Resume ${mode} in the daemon and on both surfaces`, async () => {
              const [run, root, popup, dashboard] = await Promise.all([w.mcp.call('run_get', { runId: w.runId }),
                w.mcp.call('worker_get', { workerId: rootWorkerId }), readPopup(ctx.popup), readDashboard(ctx.dashboard)]);
              const on = String(mode === 'auto');
              const row = popup.rows.find((r) => r.workerId === rootWorkerId);
              seen = { mode: run.defaultPolicy.mode, popup: popup.autoResume, dashboard: dashboard.autoResume, root: expectedStatus(root), row };
              return run.defaultPolicy.mode === mode && popup.autoResume === on && dashboard.autoResume === on
                && row?.status === expectedStatus(root) && dashboard.rows.find((r) => r.workerId === rootWorkerId)?.status === row.status
                && (mode === 'auto' || row.note === 'Auto Resume off');
            }, 10_000, () => seen);
          };
          await press(ctx.popup, '[data-testid="run-auto-resume"]');
          await agreeOn('manual');
          await press(ctx.dashboard, '[data-testid="run-auto-resume"]');
          await agreeOn('auto');
        });

        await step('Hide overlay removes it from every tab; the popup\'s switch brings it back', async () => {
          await press(ctx.pages[builder], '[data-testid="overlay-hide"]', { shadowHost: OVERLAY });
          for (const id of [builder, asker, stuck]) {
            await until(`no overlay on the tab of ${id}`, async () => (await readOverlay(ctx.pages[id])).hosts === 0);
          }
          assert.equal((await w.hook('storage')).ui?.overlayHidden, true);
          await reloadPage(ctx.popup);
          await until('the popup\'s Overlay switch off', () => evaluate(ctx.popup, () =>
            document.querySelector('[data-testid="overlay-toggle"]')?.getAttribute('aria-checked') === 'false'));
          await press(ctx.popup, '[data-testid="overlay-toggle"]');
          for (const id of [builder, asker, stuck]) {
            await until(`the overlay back on the tab of ${id}`, async () => (await readOverlay(ctx.pages[id])).pill !== null);
          }
          assert.equal((await w.hook('storage')).ui?.overlayHidden, false);
        });

        await step('Stop run in the dashboard asks first, then cancels the run', async () => {
          await press(ctx.dashboard, '[data-testid="run-stop"]');
          await until('the confirm dialog', async () => (await readDashboard(ctx.dashboard)).dialog);
          assert.equal((await w.mcp.call('run_get', { runId: w.runId })).status, 'active', 'nothing stopped before confirming');
          await press(ctx.dashboard, '[data-testid="confirm-accept"]');
          await until('the run cancelled', async () => (await w.mcp.call('run_get', { runId: w.runId })).status === 'cancelled');
          const { workers } = await w.mcp.call('worker_list', { runId: w.runId });
          assert.deepEqual(workers.filter((x) => !['completed', 'cancelled'].includes(x.disposition)), [], 'every worker finished or cancelled');
          await until('both surfaces to show no unfinished run', async () => {
            const [popup, dashboard] = await Promise.all([readPopup(ctx.popup), readDashboard(ctx.dashboard)]);
            return popup.empty === 'No unfinished runs.' && dashboard.empty === 'No unfinished runs.';
          });
          // What finished stays visible (issue 29): the dashboard's Finished lists the run,
          // the popup counts it, and each worker's tab says how that worker ended.
          await until('the run under Finished in the dashboard and counted in the popup', async () => {
            const finished = await evaluate(ctx.dashboard, () => [...document.querySelectorAll('[data-testid="finished-run"]')]
              .map((el) => el.querySelector('[data-testid="finished-detail"]')?.textContent ?? ''));
            const count = await evaluate(ctx.popup, () => document.querySelector('[data-testid="finished-count"]')?.textContent ?? null);
            return finished.length === 1 && finished[0].startsWith('Stopped · ended ') && count === '1 finished run (see Finished in the dashboard)';
          });
          const all = (await w.mcp.call('worker_list', { runId: w.runId, includeTerminal: true })).workers;
          const ended = Object.fromEntries(all.map((x) => [x.workerId, x.disposition === 'completed' ? 'complete' : 'stopped']));
          assert.equal(ended[stuck], 'stopped', 'the stuck lane never completed');
          for (const id of [builder, asker, stuck]) {
            let seen = null;
            await until(`the overlay on the tab of ${id} to say it ${ended[id] === 'complete' ? 'completed' : 'was stopped'}`, async () => {
              const overlay = await readOverlay(ctx.pages[id]);
              seen = { hosts: overlay.hosts, pill: overlay.pill };
              return overlay.pill?.status === ended[id];
            }, 20_000, () => seen);
          }
        });

        if (broken) throw new Error(`the step "${broken}" failed`);
      }));
  });
}
