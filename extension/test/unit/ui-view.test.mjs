// Unit tests of the operator surfaces' pure view logic (src/ui/view.js): the status
// mapping (exhaustively), counts, pill text, policy labels, ages, actions, the popup,
// dashboard and overlay view models, and that no raw id reaches a label.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  workerStatus, STATUSES, counts, pillText, policyView, connectionView, formatAge, formatDuration,
  progressText, attemptText, resumesText, workerActions, workerRow, popupView, dashboardView,
  overlayView, recentEvents, eventText, stallView, blockReason, byAttention, actionErrorText,
  pageFailedClosed, pageShapeOffer, PAGE_SHAPE, cliView,
} from '../../src/ui/view.js';

const fixture = JSON.parse(readFileSync(new URL('../../../docs/protocol/fixtures/daemon.operator.summary.json', import.meta.url), 'utf8'));
const NOW = 1764466400000; // 5 minutes after the fixture's root progress
const live = { status: 'live' };
const [root, parser] = fixture.runs[0].workers;
const worker = (facts) => ({ workerId: 'wrk-1', name: '/root/x', displayName: 'X', attempts: 4, autoResumes: 3, autoResume: true, policySource: 'run_default', pauseAfterTurn: false, stall: 'clear', ...facts });

const DISPOSITIONS = ['running', 'awaiting_execution', 'awaiting_dependency', 'awaiting_human', 'paused', 'completed', 'failed', 'cancelled', 'something_new'];
const CONVERSATION_STATES = [undefined, 'unknown', 'ready', 'generating', 'idle', 'error', 'closed'];
const STALLS = ['clear', 'warned', 'paused'];

// The mapping of view.js's table, restated rule by rule.
const RULES = [
  [(w) => w.disposition === 'completed', 'complete'],
  [(w) => w.disposition === 'failed', 'failed'],
  [(w) => w.disposition === 'cancelled', 'stopped'],
  [(w) => w.disposition === 'awaiting_human', 'needs_you'],
  [(w) => w.disposition === 'awaiting_dependency', 'waiting'],
  [(w) => w.disposition === 'paused' && w.stall === 'paused', 'stalled'],
  [(w) => w.disposition === 'paused', 'paused'],
  [(w) => w.disposition === 'running' && w.conversationState === 'generating', 'working'],
  [(w) => w.disposition === 'running', 'resuming'],
  // Its conversation was closed: nothing opens another by itself.
  [(w) => w.disposition === 'awaiting_execution' && w.conversationState === 'closed', 'needs_you'],
  [(w) => w.disposition === 'awaiting_execution' && w.autoResume && !w.pauseAfterTurn, 'resuming'],
  [(w) => w.disposition === 'awaiting_execution', 'paused'],
  [() => true, 'unknown'],
];

function* combinations() {
  for (const disposition of DISPOSITIONS) for (const conversationState of CONVERSATION_STATES)
    for (const stall of STALLS) for (const pauseAfterTurn of [false, true]) for (const autoResume of [false, true])
      yield worker({ disposition, conversationState, stall, pauseAfterTurn, autoResume });
}

test('status: every combination of disposition, conversation state, stall, pause-after-turn and Auto Resume', () => {
  let n = 0;
  for (const w of combinations()) {
    const expected = RULES.find(([rule]) => rule(w))[1];
    const s = workerStatus(w);
    assert.equal(s.key, expected, JSON.stringify(w));
    assert.equal(s.label, STATUSES[expected].label);
    assert.ok(s.glyph && s.glyph !== '', 'a glyph besides the colour');
    assert.equal(s.terminal, ['complete', 'failed', 'stopped'].includes(expected));
    if (s.terminal) assert.equal(s.note, null);
    n += 1;
  }
  assert.equal(n, DISPOSITIONS.length * CONVERSATION_STATES.length * STALLS.length * 4);
});

test('status: the words of spec 000 §17.1, one per documented row', () => {
  const cases = [
    [{ disposition: 'running', conversationState: 'generating' }, 'Working'],
    [{ disposition: 'running', conversationState: 'idle' }, 'Resuming'],
    [{ disposition: 'running' }, 'Resuming'],
    [{ disposition: 'awaiting_execution' }, 'Resuming'],
    [{ disposition: 'awaiting_execution', autoResume: false }, 'Paused'],
    [{ disposition: 'awaiting_human' }, 'Needs you'],
    [{ disposition: 'awaiting_dependency' }, 'Waiting'],
    [{ disposition: 'paused' }, 'Paused'],
    [{ disposition: 'paused', stall: 'paused' }, 'Stalled'],
    [{ disposition: 'completed' }, 'Complete'],
    [{ disposition: 'failed' }, 'Failed'],
    [{ disposition: 'cancelled' }, 'Stopped'],
    [{}, 'Unknown'],
  ];
  for (const [facts, label] of cases) assert.equal(workerStatus(worker(facts)).label, label, JSON.stringify(facts));
  assert.equal(workerStatus(null).key, 'unknown');
});

test('status notes qualify the word without changing it', () => {
  const note = (facts) => workerStatus(worker(facts)).note;
  assert.equal(note({ disposition: 'running', conversationState: 'generating', pauseAfterTurn: true }), 'Pauses after this turn');
  assert.equal(note({ disposition: 'running', conversationState: 'generating', stall: 'warned' }), 'Appears stuck');
  assert.equal(note({ disposition: 'paused', stall: 'paused' }), 'No durable progress');
  assert.equal(note({ disposition: 'awaiting_execution', autoResume: false }), 'Auto Resume off');
  assert.equal(note({ disposition: 'running', conversationState: 'error' }), 'ChatGPT shows an error');
  assert.equal(note({ disposition: 'paused', conversationState: 'closed' }), 'Conversation closed');
  assert.equal(note({ disposition: 'running', conversationState: 'generating' }), null);
  // Paused, but a turn (a continue-now, or the one running when it was paused) still generates.
  assert.equal(note({ disposition: 'paused', conversationState: 'generating' }), 'Finishing its current turn');
  assert.equal(workerStatus(worker({ disposition: 'paused', conversationState: 'generating' })).label, 'Paused');
  assert.equal(note({ disposition: 'completed', pauseAfterTurn: true, stall: 'warned' }), null);
});

test('counts: active, working, resuming, needs you (and the rest) over the fixture and a mix', () => {
  assert.deepEqual(counts(fixture.runs[0].workers), { active: 2, working: 1, resuming: 0, needsYou: 1, waiting: 0, paused: 0, stalled: 0 });
  const mix = [
    { disposition: 'running', conversationState: 'generating' }, { disposition: 'running', conversationState: 'generating' },
    { disposition: 'running', conversationState: 'idle' }, { disposition: 'awaiting_dependency' }, { disposition: 'paused' },
    { disposition: 'paused', stall: 'paused' }, { disposition: 'completed' }, { disposition: 'cancelled' }, { disposition: 'failed' },
  ].map(worker);
  assert.deepEqual(counts(mix), { active: 6, working: 2, resuming: 1, needsYou: 0, waiting: 1, paused: 1, stalled: 1 });
  assert.deepEqual(counts([]), { active: 0, working: 0, resuming: 0, needsYou: 0, waiting: 0, paused: 0, stalled: 0 });
});

test('pill text: `Working · Attempt 4 · Auto Resume` and the short forms', () => {
  assert.equal(pillText(worker({ disposition: 'running', conversationState: 'generating' })), 'Working · Attempt 4 · Auto Resume');
  assert.equal(pillText(worker({ disposition: 'running', conversationState: 'generating', autoResume: false })), 'Working · Attempt 4');
  assert.equal(pillText(worker({ disposition: 'running', conversationState: 'generating', pauseAfterTurn: true })), 'Working · Attempt 4 · Pausing after turn');
  assert.equal(pillText(worker({ disposition: 'running', conversationState: 'idle', attempts: 5 })), 'Resuming · Attempt 5 · Auto Resume');
  assert.equal(pillText(worker({ disposition: 'awaiting_human' })), 'Needs you');
  assert.equal(pillText(worker({ disposition: 'paused' })), 'Paused');
  assert.equal(pillText(worker({ disposition: 'paused', stall: 'paused' })), 'Stalled · Attempt 4');
  assert.equal(pillText(worker({ disposition: 'awaiting_dependency' })), 'Waiting');
  assert.equal(pillText(worker({ disposition: 'completed' })), 'Complete');
  assert.equal(pillText(worker({ disposition: 'cancelled' })), 'Stopped');
  assert.equal(pillText(worker({ disposition: 'running', conversationState: 'generating', attempts: 0 })), 'Working · Auto Resume');
});

test('policy source labels: run default and worker override are told apart', () => {
  assert.deepEqual(policyView(root), { autoResume: true, text: 'Auto Resume on', source: 'run_default', sourceLabel: 'Run default', isOverride: false });
  assert.deepEqual(policyView(parser), { autoResume: false, text: 'Auto Resume off', source: 'worker_override', sourceLabel: 'Worker override', isOverride: true });
  assert.equal(policyView(worker({ policySource: 'engine_default' })).sourceLabel, 'Default');
  assert.equal(policyView({}).sourceLabel, 'Default');
  assert.equal(policyView({ policySource: 'future_source' }).sourceLabel, 'Default');
});

test('connection states: Live, Reconnecting, Token missing, Token rejected, Offline', () => {
  const label = (status) => connectionView({ status }).label;
  assert.equal(label('live'), 'Live');
  assert.equal(label('connecting'), 'Reconnecting');
  assert.equal(label('token_missing'), 'Token missing');
  assert.equal(label('unauthorized'), 'Token rejected');
  assert.equal(label('offline'), 'Offline');
  assert.equal(connectionView(null).status, 'offline');
  assert.equal(connectionView({ status: 'weird' }).label, 'Offline');
  assert.equal(connectionView(live).live, true);
  assert.equal(connectionView({ status: 'connecting' }).live, false);
  assert.match(connectionView({ status: 'token_missing' }).hint, /Settings/);
});

test('no daemon leads: No leader, and the hint says what each daemon address said', () => {
  const said = 'ws://a/executor: a standby that names no leader yet (NOT_LEADER); ws://b/executor: closed (code 1006); no answer at /health';
  const view = connectionView({ status: 'no_leader', detail: said });
  assert.equal(view.label, 'No leader');
  assert.equal(view.live, false);
  assert.equal(view.hint, `No daemon answered as the leader: ${said}. Trying again.`);
  assert.equal(connectionView({ status: 'no_leader' }).hint, 'No daemon answered as the leader.');
  assert.equal(connectionView({ status: 'offline', detail: said }).hint, 'The orchestrator daemon is not reachable.');
});

test('ages and durations are relative to nowMs', () => {
  assert.equal(formatAge(NOW, NOW), 'just now');
  assert.equal(formatAge(NOW - 4_999, NOW), 'just now');
  assert.equal(formatAge(NOW - 12_000, NOW), '12s ago');
  assert.equal(formatAge(NOW - 2 * 60_000 - 30_000, NOW), '2m ago');
  assert.equal(formatAge(NOW - 60 * 60_000, NOW), '1h ago');
  assert.equal(formatAge(NOW - 125 * 60_000, NOW), '2h 5m ago');
  assert.equal(formatAge(NOW - 28 * 3_600_000, NOW), '1d 4h ago');
  assert.equal(formatAge(NOW - 48 * 3_600_000, NOW), '2d ago');
  assert.equal(formatAge(NOW + 60_000, NOW), 'just now', 'a clock ahead of ours is not negative');
  assert.equal(formatAge(undefined, NOW), null);
  assert.equal(formatDuration(-5), '0s');
  assert.equal(progressText(root.lastProgressAtMs, NOW), 'progress 5m ago');
  assert.equal(progressText(undefined, NOW), 'no progress yet');
  assert.equal(attemptText(0), 'Not started');
  assert.equal(attemptText(3), 'Attempt 3');
  assert.equal(resumesText(0), 'no auto resumes');
  assert.equal(resumesText(1), '1 auto resume');
  assert.equal(resumesText(5), '5 auto resumes');
});

test('actions per status: Stop worker last and destructive, nothing on finished workers', () => {
  const keys = (facts) => workerActions(worker(facts)).map((a) => a.key);
  assert.deepEqual(keys({ disposition: 'running', conversationState: 'generating' }), ['pause', 'continue_now', 'stop_worker']);
  assert.deepEqual(keys({ disposition: 'running', conversationState: 'idle' }), ['pause', 'stop_worker']);
  assert.deepEqual(keys({ disposition: 'paused' }), ['resume', 'continue_now', 'stop_worker']);
  assert.deepEqual(keys({ disposition: 'awaiting_execution', autoResume: false }), ['continue_now', 'stop_worker']);
  assert.deepEqual(keys({ disposition: 'awaiting_execution', pauseAfterTurn: true }), ['resume', 'continue_now', 'stop_worker']);
  assert.deepEqual(keys({ disposition: 'paused', stall: 'paused' }), ['continue_anyway', 'resume', 'stop_worker']);
  assert.deepEqual(keys({ disposition: 'awaiting_human' }), ['pause', 'stop_worker']);
  for (const d of ['completed', 'failed', 'cancelled']) assert.deepEqual(keys({ disposition: d }), []);
  for (const w of combinations()) {
    const actions = workerActions(w);
    assert.equal(actions.filter((a) => a.destructive).length, workerStatus(w).terminal ? 0 : 1);
    if (!workerStatus(w).terminal) assert.equal(actions.at(-1).action, 'stop_worker');
  }
  const byKey = Object.fromEntries(workerActions(worker({ disposition: 'running', conversationState: 'generating' })).map((a) => [a.key, a.action]));
  assert.deepEqual(byKey, { pause: 'pause_after_turn', continue_now: 'continue_now', stop_worker: 'stop_worker' });
});

test('worker rows: names, detail line, block reasons, stall flags', () => {
  const row = workerRow(root, fixture.runs[0], NOW);
  assert.equal(row.title, 'Importer root');
  assert.equal(row.name, '/root');
  assert.equal(row.runTitle, 'Ship the importer');
  assert.equal(row.detail, 'Attempt 12 · 9 auto resumes · progress 5m ago');
  assert.equal(row.blockReason, null);
  assert.equal(row.stallWarning, false);
  const p = workerRow(parser, fixture.runs[0], NOW);
  assert.equal(p.status.label, 'Needs you');
  assert.equal(p.needsYou, 'Which CSV dialect should win?');
  assert.equal(p.blockReason, 'Needs you: Which CSV dialect should win?');
  assert.equal(p.stallWarning, false, 'waiting for a person is not a stall: its card is Needs you');
  assert.equal(p.status.note, 'Appears stuck');
  assert.equal(workerRow(worker({ disposition: 'running', conversationState: 'generating', stall: 'warned' }), null, NOW).stallWarning, true);
  assert.equal(workerRow(worker({ disposition: 'paused', stall: 'paused' }), null, NOW).stallWarning, true);
  assert.equal(workerRow(worker({ disposition: 'awaiting_dependency', stall: 'warned' }), null, NOW).stallWarning, false);
  assert.equal(p.progressText, 'no progress yet');
  assert.equal(workerRow({ workerId: 'wrk-3' }, null, NOW).title, 'Unnamed worker');
  assert.equal(blockReason(worker({ disposition: 'awaiting_dependency' })), 'Waiting for a dependency');
  assert.equal(blockReason(worker({ disposition: 'paused', stall: 'paused' })), 'Paused: no durable progress');
  assert.equal(blockReason(worker({ disposition: 'awaiting_execution', autoResume: false })), 'Auto Resume off');
  assert.equal(blockReason(worker({ disposition: 'running', conversationState: 'error' })), 'ChatGPT shows an error');
  assert.equal(workerRow(worker({ disposition: 'completed', stall: 'warned' }), null, NOW).stallWarning, false);
});

test('a row carries what changes when an attempt closes: the conversation state and the newest event', () => {
  const row = workerRow(worker({ disposition: 'paused', conversationState: 'idle', recentEvents: [{ atMs: 5, kind: 'a' }, { atMs: 9, kind: 'b' }, { atMs: 7, kind: 'c' }] }), null, NOW);
  assert.equal(row.conversationState, 'idle');
  assert.equal(row.lastEventAtMs, 9);
  const bare = workerRow(worker({ disposition: 'paused' }), null, NOW);
  assert.equal(bare.conversationState, null);
  assert.equal(bare.lastEventAtMs, null);
});

test('rows by attention: needs you and stalled first, then by name', () => {
  const rows = [
    worker({ name: '/root/b', disposition: 'running', conversationState: 'generating' }),
    worker({ name: '/root/a', disposition: 'running', conversationState: 'generating' }),
    worker({ name: '/root/z', disposition: 'paused', stall: 'paused' }),
    worker({ name: '/root/y', disposition: 'awaiting_human' }),
  ].map((w) => workerRow(w, null, NOW));
  assert.deepEqual(byAttention(rows).map((r) => r.name), ['/root/y', '/root/z', '/root/a', '/root/b']);
});

test('popup: the five questions of 000 §17.2 from the fixture', () => {
  const view = popupView({ connection: live, summary: fixture, tabs: { 12: 'wrk-7' } }, 'wrk-7', NOW);
  assert.equal(view.connection.label, 'Live');
  assert.deepEqual(view.runs.map((r) => [r.title, r.autoResume]), [['Ship the importer', true]]);
  assert.deepEqual([view.counts.active, view.counts.working, view.counts.resuming, view.counts.needsYou], [2, 1, 0, 1]);
  assert.deepEqual(view.rows.map((r) => [r.title, r.status.label]), [['Parser lane', 'Needs you'], ['Importer root', 'Working']]);
  assert.equal(view.current.title, 'Importer root');
  // The current tab's worker is the run's /root: Stop run, never Stop worker.
  assert.deepEqual(view.current.actions.map((a) => a.label), ['Pause', 'Continue now', 'Stop run']);
  assert.deepEqual(view.current.actions.at(-1).message, { action: 'stop_run', runId: 'run-3' });
  assert.equal(view.emptyText, null);
  assert.equal(popupView({ connection: live, summary: fixture }, null, NOW).current, null);
  assert.equal(popupView({ connection: live, summary: fixture }, 'wrk-404', NOW).current, null);
});

test('popup: the current tab\'s run comes first; finished workers are not rows', () => {
  const summary = {
    runs: [
      { runId: 'run-1', taskName: 'First', status: 'active', autoResume: false, workers: [worker({ workerId: 'wrk-1', disposition: 'completed' })] },
      { runId: 'run-2', taskName: 'Second', status: 'active', autoResume: true, workers: [worker({ workerId: 'wrk-2', disposition: 'paused' })] },
    ],
  };
  const view = popupView({ connection: live, summary }, 'wrk-2', NOW);
  assert.deepEqual(view.runs.map((r) => r.title), ['Second', 'First']);
  assert.deepEqual(view.rows.map((r) => r.workerId), ['wrk-2']);
  assert.equal(view.counts.active, 1);
});

test('empty and null summaries', () => {
  for (const state of [null, undefined, {}, { connection: live, summary: null }]) {
    const view = popupView(state, null, NOW);
    assert.deepEqual(view.rows, []);
    assert.equal(view.current, null);
    assert.equal(view.emptyText, 'No worker state yet.');
    assert.equal(dashboardView(state, NOW).emptyText, 'No worker state yet.');
  }
  assert.equal(popupView({ connection: live, summary: { runs: [] } }, null, NOW).emptyText, 'No unfinished runs.');
  assert.equal(dashboardView({ connection: live, summary: { runs: [] } }, NOW).emptyText, 'No unfinished runs.');
  const done = { runs: [{ runId: 'run-1', taskName: 'T', status: 'active', autoResume: true, workers: [worker({ disposition: 'completed' })] }] };
  assert.equal(popupView({ connection: live, summary: done }, null, NOW).emptyText, 'No active workers.');
  assert.equal(popupView({ connection: { status: 'token_missing' }, summary: null }, null, NOW).connection.label, 'Token missing');
  assert.equal(overlayView(null, live), null);
  assert.equal(overlayView(undefined, live), null);
});

test('dashboard: needs-you items, stall cards, runs with counts and override-marked policies', () => {
  const view = dashboardView({ connection: live, summary: fixture }, NOW);
  assert.deepEqual(view.needsYou.map((r) => r.title), ['Parser lane']);
  assert.deepEqual(view.stalls, [], 'the warned parser waits for a person: a Needs you card, not a stall card');
  const warned = structuredClone(fixture);
  warned.runs[0].workers[0].stall = 'warned';
  assert.deepEqual(dashboardView({ connection: live, summary: warned }, NOW).stalls.map((s) => [s.row.title, s.title, s.detail]),
    [['Importer root', 'Worker appears stuck', 'Attempt 12 / no progress for 5m']]);
  const [run] = view.runs;
  assert.equal(run.title, 'Ship the importer');
  assert.equal(run.autoResume, true);
  assert.deepEqual(run.rows.map((r) => [r.name, r.policy.sourceLabel, r.policy.isOverride]), [['/root', 'Run default', false], ['/root/parser', 'Worker override', true]]);
});

test('stall card: N attempts since the last progress and the quiet time', () => {
  const row = workerRow(worker({ disposition: 'paused', stall: 'paused', lastProgressAtMs: NOW - 42 * 60_000 }), null, NOW);
  const attempts = [1, 2, 3, 4].map((sequence) => ({ sequence, scheduledAtMs: NOW - (60 - sequence * 10) * 60_000 }));
  assert.deepEqual(stallView(row, attempts, NOW), { title: 'Worker paused: appears stuck', detail: '3 attempts / no progress for 42m' });
  assert.equal(stallView(row, attempts.slice(0, 2), NOW).detail, '1 attempt / no progress for 42m');
  assert.equal(stallView(row, null, NOW).detail, 'Attempt 4 / no progress for 42m');
  const d = dashboardView({ connection: live, summary: { runs: [{ runId: 'run-1', taskName: 'T', workers: [{ ...worker({ disposition: 'paused', stall: 'paused', lastProgressAtMs: NOW - 42 * 60_000 }), workerId: 'wrk-5' }] }] } }, NOW, { 'wrk-5': attempts });
  assert.equal(d.stalls[0].detail, '3 attempts / no progress for 42m');
});

test('overlay view model from a summary worker', () => {
  const view = overlayView(root, live);
  assert.equal(view.workerId, 'wrk-7');
  assert.equal(view.title, 'Importer root');
  assert.equal(view.name, '/root');
  assert.equal(view.pill, 'Working · Attempt 12 · Auto Resume');
  assert.deepEqual(view.status, { key: 'working', label: 'Working', glyph: '●', tone: 'active', note: null, until: null });
  assert.equal(view.attemptText, 'Attempt 12');
  assert.equal(view.autoResumes, 9);
  assert.equal(view.lastProgressAtMs, 1764466100000);
  assert.equal(view.policyText, 'On · Run default');
  assert.equal(view.policyOverride, false);
  // Without its run's id a /root offers no Stop (Stop worker would be refused).
  assert.deepEqual(view.actions.map((a) => [a.action, a.label, a.destructive]), [['pause_after_turn', 'Pause', false], ['continue_now', 'Continue now', false]]);
  const inRun = overlayView({ ...root, runId: 'run-3', runTitle: 'Ship the importer' }, live);
  assert.deepEqual(inRun.actions.map((a) => [a.action, a.label, a.destructive]), [['pause_after_turn', 'Pause', false], ['continue_now', 'Continue now', false], ['stop_run', 'Stop run', true]]);
  assert.deepEqual(inRun.actions.at(-1).message, { action: 'stop_run', runId: 'run-3' });
  assert.equal(inRun.actions.at(-1).confirm.title, 'Stop the run "Ship the importer"?');
  assert.deepEqual(inRun.actions[0].message, { action: 'pause_after_turn', workerId: 'wrk-7' });
  assert.deepEqual(view.events.map((e) => e.text), [
    'Progress: The parser handles quoted newlines', 'Auto resume sent (attempt 12)',
    'Auto resume sent (attempt 11)', 'Delivery timed out; a fresh continue follows',
  ], 'newest first');
  assert.equal(view.events[0].atMs, 1764466100000);
  assert.deepEqual(view.connection, { live: true, label: 'Live', hint: null });
  assert.deepEqual(JSON.parse(JSON.stringify(view)), view, 'plain JSON');
  const p = overlayView(parser, { status: 'connecting' });
  assert.equal(p.pill, 'Needs you');
  assert.equal(p.needsYou, 'Which CSV dialect should win?');
  assert.equal(p.policyText, 'Off · Worker override');
  assert.equal(p.policyOverride, true);
  assert.equal(p.connection.live, false);
  assert.equal(p.connection.label, 'Reconnecting');
  assert.deepEqual(overlayView(worker({ disposition: 'completed' }), live).actions, []);
});

test('recent events: at most five, newest first, the daemon\'s words kept', () => {
  const events = Array.from({ length: 7 }, (_, i) => ({ atMs: NOW - i * 60_000, kind: 'execution.scheduled', text: `event ${i}` }));
  const view = overlayView({ ...root, recentEvents: [...events].reverse() }, live);
  assert.deepEqual(view.events.map((e) => e.text), ['event 0', 'event 1', 'event 2', 'event 3', 'event 4']);
  assert.deepEqual(recentEvents(undefined), []);
  assert.deepEqual(recentEvents([{ kind: 'x' }, null]), []);
});

// Event-log items read as the daemon's sentences (every case: event-sentences.test.mjs);
// items missing data still get words.
test('event text: the daemon\'s text wins, event-log names read as words', () => {
  assert.equal(eventText({ kind: 'auto_resume', text: ' Auto-resumed ' }), 'Auto-resumed');
  assert.equal(eventText({ name: 'execution.scheduled', data: { reason: 'auto_resume', sequence: 3 } }), 'Auto resume sent (attempt 3)');
  assert.equal(eventText({ name: 'execution.scheduled', data: { reason: 'manual_resume' } }), 'Continue now sent');
  assert.equal(eventText({ name: 'execution.scheduled', data: {} }), 'Attempt scheduled');
  assert.equal(eventText({ name: 'worker.progress', data: { summary: 'parser done' } }), 'Progress: parser done');
  assert.equal(eventText({ name: 'worker.progress', data: {} }), 'Progress checkpoint');
  assert.equal(eventText({ name: 'continuation.paused_for_stall' }), 'Paused: no durable progress');
  assert.equal(eventText({ name: 'never.heard.of' }), 'Event');
  assert.equal(eventText(null), 'Event');
});

test('action errors read as sentences', () => {
  assert.match(actionErrorText({ code: 'OFFLINE' }), /Not connected/);
  assert.match(actionErrorText({ code: 'TIMEOUT' }), /in time/);
  assert.match(actionErrorText({ code: 'WORKER_TERMINAL', message: 'x' }), /already finished/);
  assert.equal(actionErrorText({ code: 'INVALID_ARGUMENT', message: 'workerId missing' }), 'Refused: workerId missing');
  assert.equal(actionErrorText(undefined), 'The action failed.');
});

const ID_FIELDS = new Set(['workerId', 'runId', 'conversationUrl']);
const RAW_ID = /\b(wrk|run|exe|cmd)-\d+\b|https?:\/\/|\/c\/[0-9a-f]/i;

function labels(value, path = '') {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => labels(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).filter(([k]) => !ID_FIELDS.has(k)).flatMap(([k, v]) => labels(v, `${path}.${k}`));
  }
  return [];
}

test('no raw ids or URLs in any label of the popup, dashboard or overlay', () => {
  const summary = structuredClone(fixture);
  summary.runs[0].workers.push({ ...worker({ disposition: 'paused', stall: 'paused', workerId: 'wrk-11', conversationUrl: 'https://chatgpt.com/c/abc' }) });
  const state = { connection: live, summary, tabs: { 4: 'wrk-9' } };
  const views = [
    popupView(state, 'wrk-9', NOW),
    dashboardView(state, NOW, { 'wrk-11': [{ sequence: 1, scheduledAtMs: NOW }] }),
    ...summary.runs[0].workers.map((w) => overlayView(w, live)),
  ];
  const all = views.flatMap((v) => labels(v));
  assert.ok(all.length > 50);
  for (const [path, text] of all) assert.doesNotMatch(text, RAW_ID, `${path}: ${text}`);
});

test('status: a worker with no attempt and no conversation yet (an unattached /root) is Waiting, not Resuming', () => {
  const root = { disposition: 'awaiting_execution', attempts: 0, autoResume: true, stall: 'clear', pauseAfterTurn: false };
  const status = workerStatus(root);
  assert.equal(status.label, 'Waiting');
  assert.equal(status.note, 'No conversation yet');
  assert.equal(workerStatus({ ...root, attempts: 2, conversationUrl: 'https://chatgpt.com/c/1' }).label, 'Resuming');
});

test('page shape: offered exactly when the page failed closed (error host_ui_changed), from the summary or the extension\'s own observation', () => {
  const failed = worker({ disposition: 'running', conversationState: 'error', conversationErrorKind: 'host_ui_changed' });
  assert.equal(pageFailedClosed(failed), true);
  for (const kind of ['delivery_timeout', 'conversation_full', 'usage_limit', 'login_required', 'generic', undefined]) {
    assert.equal(pageFailedClosed(worker({ disposition: 'running', conversationState: 'error', conversationErrorKind: kind })), false, String(kind));
  }
  for (const state of CONVERSATION_STATES.filter((s) => s !== 'error')) {
    assert.equal(pageFailedClosed(worker({ disposition: 'running', conversationState: state, conversationErrorKind: 'host_ui_changed' })), false, String(state));
  }
  // The extension's own observation is newer than the daemon's summary, and wins both ways.
  const plainError = worker({ disposition: 'running', conversationState: 'error' });
  assert.equal(pageFailedClosed(plainError, { state: 'error', errorKind: 'host_ui_changed', seq: 4 }), true);
  assert.equal(pageFailedClosed(failed, { state: 'idle', seq: 5 }), false);
  assert.equal(pageFailedClosed(null), false);
  assert.equal(pageFailedClosed(undefined, null), false);

  const row = workerRow(failed, null, NOW);
  assert.deepEqual(row.pageShape, { label: 'Copy page shape', hint: PAGE_SHAPE.hint, pointer: 'Open the conversation and use Copy page shape in its overlay' });
  assert.equal(workerRow(plainError, null, NOW).pageShape, null);
  assert.equal(workerRow(worker({ disposition: 'running', conversationState: 'generating' }), null, NOW).pageShape, null);
  assert.equal(pageShapeOffer(plainError, { state: 'error', errorKind: 'host_ui_changed' })?.label, 'Copy page shape');
  // The status word stays; the note and the block reason say why.
  assert.equal(row.status.label, 'Resuming');
  assert.equal(row.status.note, 'ChatGPT page not recognised');
  assert.equal(row.blockReason, 'ChatGPT page not recognised');
  assert.equal(workerRow(plainError, null, NOW).status.note, 'ChatGPT shows an error');
  assert.match(PAGE_SHAPE.hint, /no text/);
});

test('page shape in the overlay view and the dashboard rows', () => {
  const failed = worker({ disposition: 'running', conversationState: 'error', conversationErrorKind: 'host_ui_changed' });
  const view = overlayView(failed, live);
  assert.deepEqual(view.pageShape, { offered: true, label: 'Copy page shape', hint: PAGE_SHAPE.hint, note: 'ChatGPT page not recognised' });
  assert.equal(overlayView(root, live).pageShape.offered, false, 'the fixture root is generating');
  assert.equal(overlayView(worker({ disposition: 'running', conversationState: 'error' }), live, { state: 'error', errorKind: 'host_ui_changed' }).pageShape.offered, true);
  assert.equal(overlayView(failed, live, { state: 'generating' }).pageShape.offered, false);
  const d = dashboardView({ connection: live, summary: { runs: [{ runId: 'run-1', taskName: 'T', workers: [{ ...failed, workerId: 'wrk-1' }, { ...root }] }] } }, NOW);
  const rows = d.runs[0].rows;
  // Rows by name: `/root` (wrk-7, generating) before `/root/x` (wrk-1, failed closed).
  assert.deepEqual(rows.map((r) => [r.workerId, r.pageShape?.pointer ?? null]), [['wrk-7', null], ['wrk-1', PAGE_SHAPE.pointer]]);
  assert.deepEqual(JSON.parse(JSON.stringify(view)), view, 'plain JSON');
});

// Page holds and page pauses (issue 15): docs/protocol/fixtures/daemon.operator.summary.holds.json.
const holds = JSON.parse(readFileSync(new URL('../../../docs/protocol/fixtures/daemon.operator.summary.holds.json', import.meta.url), 'utf8'));
const [limited, dialogged, checked] = holds.runs[0].workers;

test('a usage limit reads Waiting, says when it lifts and offers no answer box', () => {
  const now = limited.hold.untilMs - 2 * 3_600_000 - 5 * 60_000;
  const row = workerRow(limited, holds.runs[0], now);
  assert.equal(row.status.key, 'waiting');
  assert.equal(row.status.note, 'ChatGPT usage limit: resumes in 2h 5m');
  assert.equal(workerStatus(limited).note, 'ChatGPT usage limit');
  assert.equal(row.blockReason, 'ChatGPT usage limit: resumes in 2h 5m');
  assert.equal(row.hold.untilMs, limited.hold.untilMs);
  assert.equal(row.answerable, false);
  assert.deepEqual(workerActions(limited).map((a) => a.key), limited.name === '/root' ? ['pause'] : ['pause', 'stop_worker']);
  assert.deepEqual(workerActions(limited, { runId: holds.runs[0].runId }).map((a) => a.key), ['pause', limited.name === '/root' ? 'stop_run' : 'stop_worker']);
  assert.equal(workerRow(limited, holds.runs[0], limited.hold.untilMs + 1).blockReason, 'ChatGPT usage limit: resumes once the page allows');
});

test('the overlay gets a timed hold as label and time, so its countdown ticks between updates; other notes stay plain', () => {
  const now = limited.hold.untilMs - 2 * 3_600_000 - 5 * 60_000;
  const view = overlayView(limited, live, null, now);
  assert.equal(view.status.note, 'ChatGPT usage limit: resumes in 2h 5m');
  assert.deepEqual(view.status.until, { label: 'ChatGPT usage limit', untilMs: limited.hold.untilMs });
  assert.equal(overlayView(dialogged, live, null, now).status.until, null);
  assert.equal(overlayView({ ...limited, hold: { ...limited.hold, untilMs: null } }, live, null, now).status.until, null);
});

test('a dialog over the conversation needs a person in the tab, named by its heading, and is no question to answer', () => {
  const row = workerRow(dialogged, holds.runs[0], NOW);
  assert.equal(row.status.key, 'needs_you');
  assert.match(row.needsYou, /^A dialog covers the conversation: Temporary Chat\. Close it in the tab/);
  assert.equal(row.answerable, false);
  assert.equal(overlayView(dialogged, live).answerable, false);
});

test('a check ChatGPT asked for is Needs you with the daemon\'s sentence, and Resume is the way out', () => {
  const row = workerRow(checked, holds.runs[0], NOW);
  assert.equal(row.status.key, 'needs_you');
  assert.equal(row.needsYou, checked.pauseDetail);
  assert.equal(row.answerable, false);
  assert.deepEqual(row.actions.map((a) => a.key), ['resume', 'stop_worker']);
  assert.equal(counts([checked, dialogged, limited]).needsYou, 2);
});

test('a question a worker asked stays answerable', () => {
  const row = workerRow(worker({ disposition: 'awaiting_human', needsYou: 'Which schema?' }), null, NOW);
  assert.equal(row.answerable, true);
  assert.equal(row.needsYou, 'Which schema?');
});

test('an orphaned worker (its conversation closed) needs you and offers recovery into a new conversation', () => {
  const w = worker({ disposition: 'awaiting_execution', conversationState: 'closed', conversationUrl: 'https://chatgpt.com/c/1' });
  assert.equal(workerStatus(w).key, 'needs_you');
  assert.deepEqual(workerActions(w).map((a) => [a.key, a.action]), [['recover', 'continue_now'], ['stop_worker', 'stop_worker']]);
  const row = workerRow(w, { runId: 'run-1', taskName: 'T' }, NOW);
  assert.match(row.needsYou, /conversation was closed/);
  assert.equal(row.answerable, false, 'nothing to type an answer into');
  const running = worker({ disposition: 'running', conversationState: 'closed' });
  assert.ok(!workerActions(running).some((a) => a.key === 'recover'), 'a turn still settling is not offered recovery');
});

const cliFixture = JSON.parse(readFileSync(new URL('../../../docs/protocol/fixtures/daemon.operator.summary.cli.json', import.meta.url), 'utf8'));

test('a CLI worker shows its kind, directory and session instead of a conversation link; a ChatGPT worker keeps its link', () => {
  const [apiRoot, handlers, docs] = cliFixture.runs[0].workers;
  const run = cliFixture.runs[0];
  const web = workerRow(apiRoot, run, NOW);
  assert.equal(web.cli, null);
  assert.equal(web.conversationUrl, 'https://chatgpt.com/c/7c3d');
  const codex = workerRow(handlers, run, NOW);
  assert.equal(codex.conversationUrl, null, 'a codex:thread id is no link');
  assert.deepEqual(codex.cli, {
    kind: 'codex', kindLabel: 'Codex CLI', session: '019a4c2e-7d1b-7f00-9a3e-5b2c1d0e4f6a',
    directory: '/home/me/src/api', branch: 'lane-handlers',
    text: 'Codex CLI · /home/me/src/api on lane-handlers · session 019a4c2e-7d1b-7f00-9a3e-5b2c1d0e4f6a',
  });
  const claude = workerRow(docs, run, NOW);
  assert.equal(claude.cli.text, 'Claude Code · /home/me/src/api · no session yet');
  assert.equal(cliView({ executorKind: 'chatgpt', conversationUrl: 'https://chatgpt.com/c/1' }), null);
  assert.equal(cliView({ executorKind: 'codex', conversationUrl: 'claude:session/x' }).session, null, 'another kind\'s id is no session');
  // The popup's rows carry it too, and none of it reads as a raw id.
  const popup = popupView({ connection: live, summary: cliFixture, tabs: {} }, null, NOW);
  const row = popup.rows.find((r) => r.workerId === 'wrk-21');
  assert.equal(row.cli.kindLabel, 'Codex CLI');
  for (const [path, text] of labels(popup)) assert.doesNotMatch(text, RAW_ID, `${path}: ${text}`);
});

test('a CLI session stopped on an error is no ChatGPT page: no page shape to copy, its kind in the note', () => {
  const handlers = cliFixture.runs[0].workers[1];
  const stopped = { ...handlers, conversationState: 'error', conversationErrorKind: 'host_ui_changed' };
  assert.equal(pageFailedClosed(stopped), false);
  assert.equal(pageShapeOffer(stopped), null);
  const row = workerRow(stopped, cliFixture.runs[0], NOW);
  assert.equal(row.status.note, 'Codex CLI session stopped on an error');
  assert.equal(row.blockReason, 'Codex CLI session stopped on an error');
  // A ChatGPT worker's unreadable page still offers it.
  assert.notEqual(pageShapeOffer({ ...stopped, executorKind: 'chatgpt' }), null);
});

// CLI accounts and foreign turns (issue 20): docs/protocol/fixtures/daemon.operator.summary.foreign_turn.json.
const foreign = JSON.parse(readFileSync(new URL('../../../docs/protocol/fixtures/daemon.operator.summary.foreign_turn.json', import.meta.url), 'utf8'));
const [codexHeld, claudeForeign] = foreign.runs[0].workers;

test('a Codex limit is the Codex CLI account\'s, not ChatGPT\'s', () => {
  const now = codexHeld.hold.untilMs - 30 * 60_000;
  const row = workerRow(codexHeld, foreign.runs[0], now);
  assert.equal(row.status.key, 'waiting');
  assert.equal(row.status.note, 'Codex CLI usage limit: resumes in 30m');
  assert.equal(workerStatus(codexHeld).note, 'Codex CLI usage limit');
});

test('a foreign turn is Needs you with the daemon\'s sentence, and Resume is the way out', () => {
  const row = workerRow(claudeForeign, foreign.runs[0], NOW);
  assert.equal(row.status.key, 'needs_you');
  assert.equal(row.status.note, 'A turn the orchestrator did not start ran in this session');
  assert.equal(row.needsYou, claudeForeign.pauseDetail);
  assert.equal(row.answerable, false);
  assert.deepEqual(row.actions.map((a) => a.key), ['resume', 'stop_worker']);
  assert.equal(row.pageShape, null, 'a CLI session has no page to copy');
  const bare = { ...claudeForeign, pauseDetail: undefined };
  assert.equal(workerRow(bare, foreign.runs[0], NOW).needsYou, 'A turn the orchestrator did not start ran in this session: look at it, then resume.');
});
