// Unit tests of what issue 29 adds to the operator surfaces (src/ui/view.js): the
// dashboard's "Finished" (each finished run with how it ended, when, how long, its
// workers with theirs), the popup's count, Stop's confirmation naming the workers that
// wait for the one it stops, the choices offered with a question (dashboard and overlay),
// and the overlay's link from a finished worker's tab to its run in Finished.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dashboardHash, dashboardView, finishedCountText, finishedView, overlayView, popupView, workerRow } from '../../src/ui/view.js';

const summary = JSON.parse(readFileSync(new URL('../../../docs/protocol/fixtures/daemon.operator.summary.finished.json', import.meta.url), 'utf8'));
const NOW = 1764466200000 + 2 * 3600_000; // two hours after the finished run ended
const live = { status: 'live' };
const [run] = summary.runs;
const [root, lane] = run.workers;

test('the dashboard lists a finished run with its handoff, when it ended, how long it took and its workers', () => {
  const [finished] = dashboardView({ summary, connection: live }, NOW).finished;
  assert.equal(finished.title, 'Ship the importer');
  assert.equal(finished.statusLabel, 'Completed');
  assert.equal(finished.outcome, 'The importer ships: parser, loader and docs merged; all checks pass.');
  assert.equal(finished.detail, 'Completed · ended 2h ago · took 7h 16m · 2 workers · 15 attempts');
  assert.deepEqual(finished.workers.map((w) => [w.title, w.status.label, w.outcome, w.detail]), [
    ['Importer root', 'Complete', 'The importer ships: parser, loader and docs merged; all checks pass.', 'Complete · Attempt 12 · took 7h 16m'],
    ['Importer Lane A', 'Stopped', 'Not needed: the loader reads the old format', 'Stopped · Attempt 3 · took 2h 30m'],
  ]);
  assert.equal(finished.workers[0].conversationUrl, 'https://chatgpt.com/c/6a1f');
});

test('finished runs are listed newest first as the daemon sends them, and none is none', () => {
  const older = { ...summary.finished[0], runId: 'run-1', taskName: 'Older' };
  const view = finishedView({ ...summary, finished: [...summary.finished, older] }, NOW);
  assert.deepEqual(view.map((r) => r.title), ['Ship the importer', 'Older']);
  assert.deepEqual(finishedView({ runs: [] }, NOW), []);
  assert.deepEqual(dashboardView({ summary: { runs: [] }, connection: live }, NOW).finished, []);
});

test('the popup counts finished runs and points to the dashboard', () => {
  assert.equal(popupView({ summary, connection: live }, null, NOW).finishedCount, 1);
  assert.equal(popupView({ summary, connection: live }, null, NOW).finishedText, '1 finished run (see Finished in the dashboard)');
  assert.equal(finishedCountText(3), '3 finished runs (see Finished in the dashboard)');
  assert.equal(finishedCountText(0), null);
  const none = popupView({ summary: { runs: [] }, connection: live }, null, NOW);
  assert.equal(none.finishedCount, 0);
  assert.equal(none.finishedText, null);
  assert.equal(none.emptyText, 'No unfinished runs.');
});

test("the overlay's Stop says who waits, and a finished worker's tab says how it ended", () => {
  const view = overlayView({ ...lane, waitedOnByNames: ['Exporter root'] }, live, null, NOW);
  const stop = view.actions.find((a) => a.key === 'stop_worker');
  assert.match(stop.confirm.body, /Exporter root waits for it and is told when it ends\./);
  assert.equal(view.finished, null);
  // In a tab, the executor hands the overlay the worker with its run's id: the link to it.
  const { runId } = summary.finished[0];
  const done = overlayView({ ...summary.finished[0].workers[0], runId }, live, null, NOW);
  assert.deepEqual(done.finished, {
    label: 'Complete',
    outcome: 'The importer ships: parser, loader and docs merged; all checks pass.',
    link: { label: 'See the run in Finished', hash: `#finished-${runId}` },
  });
  assert.equal(overlayView(summary.finished[0].workers[0], live, null, NOW).finished.link, null, 'no run, no link');
});

test("the overlay's link lands on the finished run's card, and only a section's id can be asked for", () => {
  const [finished] = dashboardView({ summary, connection: live }, NOW).finished;
  assert.equal(`#${finished.anchor}`, `#finished-${summary.finished[0].runId}`);
  assert.equal(dashboardHash(`#${finished.anchor}`), `#${finished.anchor}`);
  assert.equal(dashboardHash('#needs-you'), '#needs-you');
  for (const bad of ['', 'finished', '#', '#a b', '#x"><script>', '?x=1', '#../popup.html', null, 7]) {
    assert.equal(dashboardHash(bad), '', `refused: ${bad}`);
  }
});

test('the overlay shows the choices offered with a question', () => {
  assert.deepEqual(overlayView(lane, live, null, NOW).choices, ['sqlite', 'postgres']);
  assert.deepEqual(overlayView(root, live, null, NOW).choices, []);
});

test('a question offers its choices; a worker waiting for a lane is Waiting, never Needs you', () => {
  assert.deepEqual(workerRow(lane, run, NOW).choices, ['sqlite', 'postgres']);
  const rootRow = workerRow(root, run, NOW);
  assert.equal(rootRow.status.key, 'waiting');
  assert.deepEqual(rootRow.choices, []);
  assert.equal(rootRow.needsYou, null);
  const dashboard = dashboardView({ summary, connection: live }, NOW);
  assert.deepEqual(dashboard.needsYou.map((r) => r.title), ['Exporter Lane A']);
});
