// Unit tests of the surfaces' controls and words (issue 29): every control from every
// surface (Stop run on /root, never a Stop worker the daemon refuses; Release on a worker
// waiting for another; Resume after Pause), the words a person reads (no MCP tool named,
// plurals, the start form saying what is missing, the dead-man choice short enough for
// its dropdown), and the overlay's worker carrying its run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  workerActions, workerRow, workerStatus, overlayView, dashboardView, popupView, actionErrorText, countText, eventText,
} from '../../src/ui/view.js';
import { DEAD_MAN_CHOICES, deadManText, startRequest } from '../../src/ui/start-view.js';
import { OPERATOR_ACTIONS } from '../../src/core/protocol.js';

const live = { status: 'live' };
const worker = (facts) => ({
  workerId: 'wrk-1', name: '/root/x', displayName: 'X', attempts: 4, autoResumes: 3, autoResume: true,
  policySource: 'run_default', pauseAfterTurn: false, stall: 'clear', ...facts,
});
const DISPOSITIONS = ['running', 'awaiting_execution', 'awaiting_dependency', 'awaiting_human', 'paused', 'completed', 'failed', 'cancelled'];
const STATES = [undefined, 'generating', 'idle', 'closed', 'error'];

function* everyWorker(name) {
  for (const disposition of DISPOSITIONS) for (const conversationState of STATES)
    for (const pauseAfterTurn of [false, true]) for (const stall of ['clear', 'paused'])
      yield worker({ name, disposition, conversationState, pauseAfterTurn, stall });
}

/** Whether `text` names an MCP tool or argument a person cannot type (caller_protocol::refusal::names_a_tool). */
function namesATool(text) {
  return String(text).split(/[^A-Za-z0-9_]/).some((word) => word === 'overrideWait'
    || ['run_', 'worker_', 'message_', 'events_', 'approval_'].some((p) => word.startsWith(p) && word.length > p.length));
}

/** Every string in `value` a person may read: ids and the messages sent to the daemon left out. */
function wordsIn(value, out = []) {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => wordsIn(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (['message', 'action', 'key', 'workerId', 'runId', 'conversationUrl', 'source', 'reason', 'name'].includes(k)) continue;
      wordsIn(v, out);
    }
  }
  return out;
}

test('the run\'s /root offers Stop run with its run, never Stop worker', () => {
  for (const w of everyWorker('/root')) {
    const actions = workerActions(w, { runId: 'run-2', runTitle: 'Nightly' });
    assert.ok(!actions.some((a) => a.action === 'stop_worker'), JSON.stringify(w));
    const stop = actions.filter((a) => a.destructive);
    if (workerStatus(w).terminal) assert.deepEqual(stop, []);
    else {
      assert.deepEqual(stop.map((a) => [a.label, a.message]), [['Stop run', { action: 'stop_run', runId: 'run-2' }]]);
      assert.equal(actions.at(-1), stop[0], 'the destructive action comes last');
      assert.equal(stop[0].confirm.title, 'Stop the run "Nightly"?');
      assert.match(stop[0].confirm.body, /every unfinished worker/i);
    }
  }
  // A lane keeps Stop worker, aimed at itself.
  const lane = workerActions(worker({ disposition: 'running', conversationState: 'generating' }), { runId: 'run-2' }).at(-1);
  assert.deepEqual([lane.label, lane.message], ['Stop worker', { action: 'stop_worker', workerId: 'wrk-1' }]);
});

test('a worker waiting for another offers Release, first; no other does', () => {
  for (const w of everyWorker('/root/x')) {
    const release = workerActions(w, { runId: 'run-2' }).findIndex((a) => a.key === 'release');
    assert.equal(release === 0, w.disposition === 'awaiting_dependency', JSON.stringify(w));
    assert.equal(release === -1, w.disposition !== 'awaiting_dependency', JSON.stringify(w));
  }
  const [release] = workerActions(worker({ disposition: 'awaiting_dependency', waitsFor: 'wrk-2' }));
  assert.deepEqual([release.label, release.message], ['Release', { action: 'release_dependency', workerId: 'wrk-1' }]);
  assert.ok(OPERATOR_ACTIONS.includes('release_dependency'), 'the protocol knows the action');
  // The root waiting on a lane: Release, and Stop run.
  const rootWaits = workerActions(worker({ name: '/root', disposition: 'awaiting_dependency' }), { runId: 'run-2' }).map((a) => a.label);
  assert.deepEqual(rootWaits, ['Release', 'Pause', 'Stop run']);
});

test('after Pause, the button says Resume and takes the pause back', () => {
  for (const facts of [{ disposition: 'running', conversationState: 'generating' }, { disposition: 'running', conversationState: 'idle' }]) {
    const before = workerActions(worker(facts))[0];
    assert.deepEqual([before.label, before.action], ['Pause', 'pause_after_turn']);
    const after = workerActions(worker({ ...facts, pauseAfterTurn: true }))[0];
    assert.deepEqual([after.label, after.action], ['Resume', 'resume']);
    assert.match(after.hint, /pause after this turn/);
  }
  // Every surface shows it: the overlay's first button.
  const overlay = overlayView(worker({ disposition: 'running', conversationState: 'generating', pauseAfterTurn: true }), live);
  assert.equal(overlay.actions[0].label, 'Resume');
});

test('Stop on a lane another worker waits for says so in its confirmation', () => {
  const run = {
    runId: 'run-2', taskName: 'Nightly', status: 'active', autoResume: true,
    workers: [
      worker({ workerId: 'wrk-2', name: '/root/build', displayName: 'Build', disposition: 'running', conversationState: 'generating' }),
      worker({ workerId: 'wrk-3', name: '/root/test', displayName: 'Tests', disposition: 'awaiting_dependency', waitsFor: 'wrk-2' }),
      worker({ workerId: 'wrk-1', name: '/root', displayName: 'Root', disposition: 'awaiting_dependency', waitsFor: 'wrk-2' }),
    ],
  };
  const build = workerRow(run.workers[0], run, 0).actions.at(-1);
  assert.equal(build.confirm.title, 'Stop Build?');
  assert.match(build.confirm.body, /Tests and Root wait for it and are told when it ends\./);
  const tests = workerRow(run.workers[1], run, 0).actions.at(-1);
  assert.doesNotMatch(tests.confirm.body, /wait for it/);
  // The overlay hears it from the executor (its worker carries the waiters' names, waitedOnByNames).
  const overlay = overlayView({ ...run.workers[0], runId: 'run-2', waitedOnByNames: ['Tests'] }, live);
  assert.match(overlay.actions.at(-1).confirm.body, /Tests waits for it and is told when it ends\./);
  // The dashboard's table row for the root stops the run.
  const view = dashboardView({ connection: live, summary: { runs: [run] } }, 0);
  const rootRow = view.runs[0].rows.find((r) => r.name === '/root');
  assert.deepEqual(rootRow.actions.map((a) => a.label), ['Release', 'Pause', 'Stop run']);
  // A wait for another worker names it.
  assert.equal(rootRow.blockReason, 'Waiting for Build');
  assert.equal(workerRow({ ...run.workers[1], waitsFor: 'wrk-404' }, run, 0).blockReason, 'Waiting for a dependency');
});

test('no word on a surface names an MCP tool', () => {
  const runs = [{
    runId: 'run-2', taskName: 'Nightly', status: 'active', autoResume: true,
    workers: [...everyWorker('/root')].slice(0, 40).map((w, i) => ({ ...w, workerId: `wrk-${i}` }))
      .concat([...everyWorker('/root/x')].map((w, i) => ({ ...w, workerId: `wrk-${100 + i}`, waitsFor: 'wrk-0' }))),
  }];
  const state = { connection: live, summary: { runs }, tabs: {} };
  const words = [...wordsIn(dashboardView(state, 0)), ...wordsIn(popupView(state, 'wrk-0', 0))];
  for (const w of runs[0].workers) words.push(...wordsIn(overlayView({ ...w, runId: 'run-2' }, live)));
  assert.ok(words.length > 1000, `${words.length} strings looked at`);
  for (const text of words) assert.ok(!namesATool(text), text);
  // The refusals the daemon words for a person pass through as they are; the extension's own too.
  for (const code of ['OFFLINE', 'TIMEOUT', 'WORKER_TERMINAL', 'CONVERSATION_IN_USE', 'INVALID_ARGUMENT']) {
    assert.ok(!namesATool(actionErrorText({ code, message: 'stop the whole run with `orchestrator run stop run-2` or Stop run on the dashboard' })));
  }
  assert.ok(namesATool('release it with worker_release_dependency') && namesATool('pass overrideWait'), 'the check can fail');
  // How an attempt ended, in words: never its outcome's name.
  for (const outcome of ['turn_ended', 'steered', 'worker_completed', 'worker_failed', 'worker_cancelled', 'worker_blocked', 'something_new']) {
    const text = eventText({ kind: 'execution.ended', data: { outcome } }, 'chatgpt');
    assert.ok(!text.includes('_') && !namesATool(text), text);
  }
  assert.doesNotMatch(eventText({ kind: 'execution.deferred', atMs: 0, data: { notBeforeMs: 60_000 } }, 'chatgpt'), /floor/);
});

test('counts take their plural', () => {
  assert.equal(countText(1, 'worker'), '1 worker');
  assert.equal(countText(0, 'worker'), '0 workers');
  assert.equal(countText(2, 'earlier attempt'), '2 earlier attempts');
  assert.equal(countText(1, 'progress mark'), '1 progress mark');
});

test('Start run with an empty form says what is missing and which field', () => {
  for (const form of [{}, { taskName: '' }, { taskName: '   ', context: 'plan' }]) {
    const r = startRequest(form, 4);
    assert.equal(r.field, 'taskName');
    assert.match(r.error, /task name/i);
    assert.match(r.error, /Start run/, 'and what to do');
    assert.equal(r.action, undefined, 'nothing is sent');
  }
  assert.equal(startRequest({ taskName: 'T', rootConversationName: 'r'.repeat(500) }, 4).field, 'rootConversationName');
  assert.equal(startRequest({ taskName: 'T', context: 'p'.repeat(5000) }, 4).field, 'context');
  assert.equal(startRequest({ taskName: 'T' }, 4).action, 'run_start');
});

test('the dead-man choices fit their dropdown; the whole sentence is said under it', () => {
  for (const c of DEAD_MAN_CHOICES) {
    assert.ok(c.label.length <= 30, `"${c.label}" fits a 330 px dropdown`);
    assert.ok(c.text.length > c.label.length - 1 && c.text.endsWith('.'), c.text);
    assert.equal(deadManText(c.value), c.text);
  }
  assert.equal(deadManText('bogus'), DEAD_MAN_CHOICES[0].text);
});
