// End to end, in headless Chromium and Firefox ESR: the dead-man fallback (issue 19, spec
// 000 §12.0) with the real daemon, the real extension and the fake ChatGPT page. A run is
// started from the popup with "Reopen the root" chosen for when it stops moving; every
// managed tab of the run is then closed while the daemon runs (a person away). After the
// run's threshold the daemon's dead-man layer fires: the extension raises its
// notification, one fresh root conversation opens with the recovery prompt, the root
// recovers its lane, and the run finishes with no continue from the test. Nothing in the
// extension decides this: it only opens the conversation the daemon asks for.
// (The daemon-stopped half, a badge and nothing typed, is watchdog.test.mjs.)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld, block } from './lib/world.mjs';
import { until, openExtensionPage, findPage } from './lib/ui-pages.mjs';
import { popupOn, runNamed, startFromPopup, tabIdOf } from './lib/start-here.mjs';

/** The run's dead-man threshold: the engine's shortest (the default is 45 min). */
const DEAD_MAN_AFTER_MS = 60_000;
/** How long past the threshold the recovery may take (the root's timer, a busy machine). */
const FIRING_SLACK_MS = 60_000;
const RECOVERY = 'This is a fresh conversation for the same logical worker';
const LANE_POLICY = { idleGraceMs: 400 };

// The browsers run at once: each has its own daemon, fake page and profile, and the test
// spends most of its time waiting out the threshold.
describe('the dead-man fallback', { concurrency: true }, () => {
  for (const kind of BROWSERS) {
    describe(`the dead-man fallback in ${kind}`, () => {
      test('every tab of a run closed: one notification, one fresh root conversation, the run finishes by itself', () =>
        inWorld(kind, async (w) => {
          const seen = { lane: null, recoveredRoot: false, recoveredLane: false, closed: false };
          const laneAgent = async ({ turn, world, workerId, prompt }) => {
            if (prompt.includes(RECOVERY)) seen.recoveredLane = true;
            await world.mcp.call('worker_progress', { workerId, summary: `turn ${turn}` });
            if (seen.recoveredLane) {
              await world.mcp.call('worker_complete', { workerId, summary: 'finished after the recovery' });
              return { generateMs: 300, reply: block('complete', 'finished') };
            }
            // Before the tabs close the lane keeps working, a turn every couple of seconds.
            return { generateMs: seen.closed ? 300 : 1_500, reply: block('working', `turn ${turn}`) };
          };
          w.agentsByName.set('/root', async ({ turn, world, workerId, prompt }) => {
            const { runId } = await world.mcp.call('worker_get', { workerId });
            if (turn === 1) {
              const lane = await world.mcp.call('worker_spawn', {
                runId, name: '/root/delta', taskSummary: 'the overnight half',
                assignment: { objective: 'Export every night', scope: 'Only the exporter', acceptanceCriteria: ['it ran'] },
                policy: LANE_POLICY,
              });
              world.agents.set(lane.workerId, laneAgent);
              seen.lane = lane.workerId;
              return { generateMs: 300, reply: block('working', 'lane spawned') };
            }
            if (prompt.includes(RECOVERY)) {
              // As the recovery prompt asks: read the run, then bring back a lane that lost its conversation.
              seen.recoveredRoot = true;
              const lane = await world.mcp.call('worker_get', { workerId: seen.lane });
              if (lane.binding?.status === 'lost') await world.mcp.call('worker_continue_now', { workerId: seen.lane });
            }
            const lane = await world.mcp.call('worker_get', { workerId: seen.lane });
            if (lane.disposition === 'completed') {
              await world.mcp.call('worker_complete', { workerId, summary: 'the lane landed' });
              return { generateMs: 300, reply: block('complete', 'done') };
            }
            return { generateMs: 300, reply: block('working', 'watching the lane') };
          });

          const chat = await w.browser.newPage(w.fake.url);
          const popup = await openExtensionPage(w, 'src/ui/popup.html');
          await popupOn(popup, await tabIdOf(popup, w.fake.url));
          await startFromPopup(w, popup, { taskName: 'Overnight export', rootName: 'Overnight root', plan: 'One lane, left alone overnight.', deadMan: 'recover' });
          const run = await runNamed(w, 'Overnight export');
          assert.deepEqual(run.deadMan, { mode: 'recover', afterMs: 2_700_000 }, 'the form\'s choice, with the default threshold');
          await w.mcp.call('run_set_default_continuation', { runId: run.runId, policy: { deadManAfterMs: DEAD_MAN_AFTER_MS } });
          const rootId = run.rootWorkerId;
          const rootBefore = await w.waitForWorker(rootId, (x) => x.attempts >= 1 && /\/c\//.test(x.binding?.conversationUrl ?? ''), 'the root at work');
          await until('the lane spawned', () => seen.lane);
          const laneBefore = await w.waitForWorker(seen.lane, (x) => x.attempts >= 2 && /\/c\//.test(x.binding?.conversationUrl ?? ''), 'the lane at work');
          const lanePage = await findPage(w, (url) => url === laneBefore.binding.conversationUrl, 'the lane\'s tab');

          // The person is away and every tab of the run closes.
          seen.closed = true;
          await chat.close();
          await lanePage.close();
          await w.waitForWorker(rootId, (x) => x.binding?.status === 'lost', 'the root\'s conversation lost');
          await w.waitForWorker(seen.lane, (x) => x.binding?.status === 'lost', 'the lane\'s conversation lost');
          const closedAt = Date.now();
          const rootPromptsAtClose = w.prompts(rootId).length;

          // The daemon fires once the run has been still for its threshold: a notification.
          const noticed = await until('the stopped-run notification', async () =>
            (await w.hook('notificationsCreated')).find((id) => id.startsWith(`orc-stopped:${run.runId}:`)), DEAD_MAN_AFTER_MS + FIRING_SLACK_MS);
          assert.ok(noticed);
          assert.ok(Date.now() - closedAt >= DEAD_MAN_AFTER_MS - 5_000, 'not before the threshold');

          // One fresh root conversation, with the recovery prompt; the root brings its lane back.
          const root = await w.waitForWorker(rootId, (x) => x.binding?.status !== 'lost' && /\/c\//.test(x.binding?.conversationUrl ?? ''), 'the root in a fresh conversation', FIRING_SLACK_MS);
          assert.notEqual(root.binding.conversationUrl, rootBefore.binding.conversationUrl);
          await w.waitForWorker(rootId, (x) => x.disposition === 'completed', 'the run finished by itself', 90_000);
          const recoveries = w.prompts(rootId).slice(rootPromptsAtClose).filter((p) => p.text.includes(RECOVERY));
          assert.equal(recoveries.length, 1, 'the root was recovered once');
          assert.ok(seen.recoveredLane, 'the lane was recovered by its root');
          const { attempts } = await w.mcp.call('worker_attempts', { workerId: rootId });
          assert.ok(attempts.some((a) => a.wakeReasons.some((r) => r.includes('deadman'))), `the root's recovery came from the dead-man layer: ${JSON.stringify(attempts.map((a) => a.wakeReasons))}`);
          assert.equal((await w.mcp.call('run_get', { runId: run.runId })).status, 'completed');
          assert.equal((await w.hook('notificationsCreated')).filter((id) => id.startsWith('orc-stopped:')).length, 1, 'one notification');
        }, { settings: { appName: 'Orchestrator' } }));
    });
  }
});
