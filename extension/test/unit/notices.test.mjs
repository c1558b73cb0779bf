// Unit tests of the notifications raised from operator.summary (src/ui/notices.js) and of
// the run-wide Needs you of a run the daemon's dead-man layer found stopped (view.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { stoppedNotifications, approvalNotifications } from '../../src/ui/notices.js';
import { dashboardView, popupView } from '../../src/ui/view.js';

const stopped = JSON.parse(readFileSync(new URL('../../../docs/protocol/fixtures/daemon.operator.summary.stopped.json', import.meta.url), 'utf8'));
const NOW = 1764469060000;

test('a stopped run is notified once per firing and cleared when it moves again', () => {
  const shown = new Set();
  const first = stoppedNotifications(stopped, shown);
  assert.deepEqual(first.show.map((n) => n.id), ['orc-stopped:run-5:1764469000000']);
  assert.match(first.show[0].title, /Nightly export stopped moving/);
  assert.match(first.show[0].message, /has stopped moving: no conversation of it is alive/);
  first.show.forEach((n) => shown.add(n.id));
  assert.deepEqual(stoppedNotifications(stopped, shown), { show: [], clear: [] }, 'not again for the same firing');
  const later = structuredClone(stopped);
  later.runs[0].stoppedMoving.atMs += 2_700_000;
  assert.deepEqual(stoppedNotifications(later, shown), { show: [{ ...first.show[0], id: 'orc-stopped:run-5:1764471700000' }], clear: ['orc-stopped:run-5:1764469000000'] });
  const moving = structuredClone(stopped);
  delete moving.runs[0].stoppedMoving;
  assert.deepEqual(stoppedNotifications(moving, shown).clear, ['orc-stopped:run-5:1764469000000']);
  shown.add('orc-approval:wrk-1');
  assert.deepEqual(stoppedNotifications(moving, shown).clear, ['orc-stopped:run-5:1764469000000'], 'approval notices are not its to clear');
  assert.deepEqual(approvalNotifications(moving, new Set(['orc-stopped:run-5:1']) ).clear, [], 'nor the other way round');
});

test('a stopped run is a run-wide Needs you in the popup and the dashboard, with one action on its root', () => {
  const state = { connection: { status: 'live' }, summary: stopped, tabs: {} };
  const popup = popupView(state, null, NOW);
  assert.match(popup.runs[0].stoppedMoving, /^Run Nightly export has stopped moving/);
  const dashboard = dashboardView(state, NOW);
  assert.deepEqual(dashboard.stoppedRuns.map((r) => [r.runId, r.root]), [['run-5', { workerId: 'wrk-20' }]]);
  const quiet = structuredClone(stopped);
  delete quiet.runs[0].stoppedMoving;
  assert.deepEqual(dashboardView({ ...state, summary: quiet }, NOW).stoppedRuns, []);
  assert.equal(popupView({ ...state, summary: quiet }, null, NOW).runs[0].stoppedMoving, null);
});

test('the overlay of a tab of a stopped run says so', async () => {
  const { overlayView } = await import('../../src/ui/view.js');
  const [root] = stopped.runs[0].workers;
  const text = stopped.runs[0].stoppedMoving.text;
  assert.equal(overlayView({ ...root, runStoppedMoving: text }, { status: 'live' }, null, NOW).runStopped, text);
  assert.equal(overlayView(root, { status: 'live' }, null, NOW).runStopped, null);
});
