// The command journal: forward-only phases, pruning, hello lines and the restart plan.

import test from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, COMPLETED_KEPT, JournalError } from '../../src/core/journal.js';
import { command, T0 } from './executor-harness.mjs';

test('phases only move forward; the prompt is kept only while received', () => {
  const journal = createJournal();
  const entry = journal.receive(command(), T0);
  assert.equal(entry.phase, 'received');
  assert.equal(entry.prompt, 'continue');
  journal.startSubmission('cmd-12', 41);
  assert.equal(journal.get('cmd-12').prompt, undefined);
  assert.equal(journal.get('cmd-12').stateSeq, 41);
  assert.throws(() => journal.startSubmission('cmd-12', 42), JournalError);
  journal.markSubmitted('cmd-12');
  journal.complete('cmd-12', { status: 'submitted', stateSeq: 41 });
  assert.throws(() => journal.markSubmitted('cmd-12'), /cannot go from completed to submitted/);
  assert.throws(() => journal.receive(command(), T0), /already journaled/);
  assert.throws(() => journal.complete('cmd-99', {}), /no journal entry for cmd-99/);
});

test('an idempotency key past received is found; a received one is not', () => {
  const journal = createJournal();
  journal.receive(command(), T0);
  assert.equal(journal.submittedKey('conversation.send:exe-12'), null);
  journal.startSubmission('cmd-12', 1);
  assert.equal(journal.submittedKey('conversation.send:exe-12').commandId, 'cmd-12');
});

test(`completed entries are pruned to the newest ${COMPLETED_KEPT}; unfinished ones are never pruned`, () => {
  const journal = createJournal();
  journal.receive(command({ n: 1 }), T0);
  for (let n = 2; n <= COMPLETED_KEPT + 12; n += 1) {
    journal.receive(command({ n }), T0 + n);
    journal.complete(`cmd-${n}`, { status: 'failed', code: 'CANCELLED', detail: '' });
  }
  const stored = journal.stored();
  assert.equal(stored.filter((e) => e.phase === 'completed').length, COMPLETED_KEPT);
  assert.equal(journal.get('cmd-1').phase, 'received');
  assert.equal(journal.get('cmd-2'), null, 'the oldest completed went first');
  assert.equal(journal.get(`cmd-${COMPLETED_KEPT + 12}`).phase, 'completed');
});

test('hello lines: phases with their stateSeq; failed completions are left out for the daemon to re-send', () => {
  const journal = createJournal();
  journal.receive(command({ n: 1 }), T0);
  journal.receive(command({ n: 2 }), T0);
  journal.startSubmission('cmd-2', 7);
  journal.receive(command({ n: 3, kind: 'conversation.create', conversationUrl: '' }), T0);
  journal.startSubmission('cmd-3', 8);
  journal.markSubmitted('cmd-3');
  journal.setConversationUrl('cmd-3', 'https://chatgpt.com/c/new');
  journal.complete('cmd-3', { status: 'submitted', stateSeq: 8, conversationUrl: 'https://chatgpt.com/c/new' });
  journal.receive(command({ n: 4 }), T0);
  journal.complete('cmd-4', { status: 'failed', code: 'DEADLINE_EXCEEDED', detail: '' });
  assert.deepEqual(journal.helloLines(), [
    { commandId: 'cmd-1', phase: 'received', stateSeq: 0 },
    { commandId: 'cmd-2', phase: 'submission-started', stateSeq: 7 },
    { commandId: 'cmd-3', phase: 'completed', stateSeq: 8, conversationUrl: 'https://chatgpt.com/c/new' },
  ]);
});

test('the restart plan: requeue received, reconcile submission-started, finish submitted, oldest first', () => {
  const journal = createJournal();
  journal.receive(command({ n: 5, workerId: 'wrk-1' }), T0 + 5);
  journal.receive(command({ n: 4, workerId: 'wrk-2' }), T0 + 4);
  journal.receive(command({ n: 3, workerId: 'wrk-3' }), T0 + 3);
  journal.startSubmission('cmd-3', 2);
  journal.receive(command({ n: 2, workerId: 'wrk-4' }), T0 + 2);
  journal.startSubmission('cmd-2', 2);
  journal.markSubmitted('cmd-2');
  const plan = createJournal(journal.stored()).recoveryPlan();
  assert.deepEqual(plan.requeue.map((e) => e.commandId), ['cmd-4', 'cmd-5']);
  assert.deepEqual(plan.reconcile.map((e) => e.commandId), ['cmd-3']);
  assert.deepEqual(plan.finish.map((e) => e.commandId), ['cmd-2']);
});

test('unreadable stored entries are dropped and counted', () => {
  const journal = createJournal([{ commandId: 'cmd-1' }, null, 'x', { ...command(), phase: 'received', stateSeq: 0 }]);
  assert.equal(journal.dropped, 3);
  assert.equal(journal.get('cmd-12').phase, 'received');
  assert.equal(createJournal('not an array').dropped, 0);
});
