// Unit tests of who carries a worker on the surfaces (issue 29): a worker whose executor is
// gone, or with no executor of its kind, reads "Executor offline" (never "Working") with the
// daemon's words; a retrying CLI says so; one notification per absence episode; and all of
// it survives the protocol decoder on its way from the daemon's operator.summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { workerStatus, workerRow, overlayView, absentNotifications, dashboardView, popupView } from '../../src/ui/view.js';
import { decodeDaemonMessage } from '../../src/core/protocol.js';

const NOW = 1764466400000;
const worker = (facts) => ({ workerId: 'wrk-2', name: '/root/lane', displayName: 'Lane', attempts: 3, autoResumes: 2, autoResume: true, policySource: 'run_default', pauseAfterTurn: false, stall: 'clear', ...facts });
const OFFLINE = 'executor offline since 01:26 UTC (Codex CLI cli-host): nothing runs it until it is back';
const offline = { state: 'offline', executorId: 'cli-host', executorKind: 'codex', sinceMs: 1764466000000, capableExecutors: 0 };

test('a worker whose executor is offline reads Executor offline with the daemon\'s words, never Working', () => {
  for (const disposition of ['running', 'awaiting_execution']) {
    const w = worker({ disposition, conversationState: 'generating', liveness: offline, livenessText: OFFLINE });
    const status = workerStatus(w);
    assert.equal(status.key, 'offline', disposition);
    assert.equal(status.label, 'Executor offline');
    assert.equal(status.attention, true);
    assert.equal(status.note, OFFLINE);
  }
  const row = workerRow(worker({ disposition: 'awaiting_execution', liveness: offline, livenessText: OFFLINE }), null, NOW);
  assert.equal(row.carrier, OFFLINE);
});

test('no executor of its kind is offline too; one connected to take its next turn is not', () => {
  const none = { state: 'unassigned', executorKind: 'codex', sinceMs: 1764466000000, capableExecutors: 0 };
  assert.equal(workerStatus(worker({ disposition: 'awaiting_execution', liveness: none, livenessText: 'no Codex CLI executor connected since 01:26 UTC: nothing runs it until one connects' })).key, 'offline');
  const one = { ...none, capableExecutors: 1 };
  assert.equal(workerStatus(worker({ disposition: 'awaiting_execution', liveness: one })).key, 'resuming');
});

test('a paused or waiting worker keeps its word when its executor is offline', () => {
  assert.equal(workerStatus(worker({ disposition: 'paused', pauseReason: 'operator', liveness: offline })).key, 'paused');
  assert.equal(workerStatus(worker({ disposition: 'awaiting_human', liveness: offline })).key, 'needs_you');
});

test('a connected worker shows who carries it, and a retrying CLI says so', () => {
  const connected = { state: 'connected', executorId: 'chrome-1', executorKind: 'chatgpt', sinceMs: 1764460000000, capableExecutors: 1 };
  const carried = worker({ disposition: 'running', conversationState: 'generating', liveness: connected, livenessText: 'carried by browser chrome-1, connected since 23:46 UTC' });
  assert.equal(workerStatus(carried).key, 'working');
  assert.equal(workerStatus(carried).note, null);
  assert.equal(workerRow(carried, null, NOW).carrier, 'carried by browser chrome-1, connected since 23:46 UTC');
  assert.equal(overlayView(carried, { status: 'live' }, null, NOW).carrier, 'carried by browser chrome-1, connected since 23:46 UTC');
  const text = 'CLI retrying: stream disconnected (since 01:26 UTC; paused after 10 min)';
  const retrying = worker({ disposition: 'running', conversationState: 'generating', liveness: { ...connected, retry: { reason: 'stream disconnected', sinceMs: 1764466000000 } }, livenessText: text });
  assert.equal(workerStatus(retrying).key, 'working');
  assert.equal(workerStatus(retrying).note, text);
  assert.equal(workerRow(worker({ disposition: 'completed', liveness: connected, livenessText: 'x' }), null, NOW).carrier, null, 'a finished worker has none');
});

test('an absence is notified once per episode and cleared when an executor is back', () => {
  const summary = (liveness) => ({ runs: [{ runId: 'run-1', workers: [worker({ disposition: 'awaiting_execution', liveness, livenessText: OFFLINE })] }] });
  const shown = new Set();
  const absent = summary({ ...offline, absentSinceMs: 1764466000000 });
  const first = absentNotifications(absent, shown);
  assert.deepEqual(first.show.map((n) => n.id), ['orc-absent:wrk-2:1764466000000']);
  assert.equal(first.show[0].title, 'Nothing runs Lane');
  assert.match(first.show[0].message, /^executor offline since 01:26 UTC/);
  first.show.forEach((n) => shown.add(n.id));
  assert.deepEqual(absentNotifications(absent, shown), { show: [], clear: [] }, 'not again in the same episode');
  assert.deepEqual(absentNotifications(summary(offline), shown), { show: [], clear: ['orc-absent:wrk-2:1764466000000'] });
  const later = summary({ ...offline, absentSinceMs: 1764469000000 });
  assert.deepEqual(absentNotifications(later, shown).show.map((n) => n.id), ['orc-absent:wrk-2:1764469000000'], 'a new episode notifies again');
});

test('who carries each worker survives the decoder: every surface shows the daemon\'s line', () => {
  const wire = readFileSync(new URL('../../../docs/protocol/fixtures/daemon.operator.summary.liveness.json', import.meta.url), 'utf8');
  const summary = decodeDaemonMessage(wire);
  const state = { summary, connection: { status: 'live' } };
  const rows = Object.fromEntries(dashboardView(state, NOW).runs[0].rows.map((r) => [r.name, r]));
  assert.equal(rows['/root'].carrier, 'carried by browser chrome-1, connected since 02:40 UTC');
  assert.equal(rows['/root'].status.key, 'waiting');
  assert.equal(rows['/root/tables'].status.key, 'offline', 'its executor is gone: never Working');
  assert.equal(rows['/root/tables'].status.note, 'executor offline since 03:12 UTC (Codex CLI cli-host): nothing runs it until it is back');
  assert.equal(rows['/root/writer'].status.note, 'CLI retrying: Reconnecting... waiting for network (since 03:12 UTC; paused after 10 min)');
  assert.equal(popupView(state, null, NOW).rows.filter((r) => r.carrier).length, 3, 'the popup says it for each');
  assert.equal(absentNotifications(summary, new Set()).show.length, 1, 'the absence episode is seen');
});
