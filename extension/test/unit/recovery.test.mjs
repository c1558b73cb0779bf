// Restart recovery (protocol doc "Reconnection and the journal", spec 000 §12.4): every
// journal phase, and which tabs are managed again after a browser restart.

import test from 'node:test';
import assert from 'node:assert/strict';
import { Rig, T0, CONVERSATION, OTHER_CONVERSATION, idleFacts, generatingFacts, sent, toPage, results, journaled, command } from './executor-harness.mjs';
import { RECONCILE_WAIT_MS } from '../../src/core/commands.js';

const BOUND = { workerId: 'wrk-7', conversationUrl: CONVERSATION, tabId: 5, open: true, seq: 40, observation: { state: 'idle', seq: 40 } };
const TAB_5 = [{ tabId: 5, url: CONVERSATION }];

const submits = (rig) => rig.all('toPage').filter((e) => e.message.type === 'submit');

/** A rig that received cmd-12 and, with `submit`, began submitting it; then the background restarts. */
function restartedWith({ submit, openTabs = TAB_5 }) {
  const before = new Rig({ stored: { bindings: [BOUND] }, openTabs: TAB_5 });
  before.connect();
  before.hello(5, submit ? idleFacts() : generatingFacts());
  before.command();
  assert.equal(journaled(before, 'cmd-12').phase, submit ? 'submission-started' : 'received');
  return { before, after: before.restart({ openTabs, now: T0 + 5_000 }) };
}

function storedEntry(phase, extra = {}) {
  const { prompt, promptVersion, ...rest } = command();
  return { ...rest, phase, stateSeq: 41, receivedAtMs: T0, ...extra };
}

test('received: re-queued after a restart and submitted exactly once, even when the daemon re-sends it', () => {
  const { after } = restartedWith({ submit: false });
  const hello = after.connect();
  assert.deepEqual(hello.journal, [{ commandId: 'cmd-12', phase: 'received', stateSeq: 0 }]);
  after.hello(5, idleFacts());
  assert.equal(submits(after).length, 1);
  assert.equal(submits(after)[0].message.text, 'continue\n[attempt exe-12]');
  after.command();
  after.page(5, idleFacts({ lastAssistantTail: 'churn' }));
  assert.equal(submits(after).length, 1);
});

test('submission-started, nonce found: reported submitted with the stored stateSeq, never resubmitted', () => {
  const { before, after } = restartedWith({ submit: true });
  const stateSeq = journaled(before, 'cmd-12').stateSeq;
  const hello = after.connect();
  assert.deepEqual(hello.journal, [{ commandId: 'cmd-12', phase: 'submission-started', stateSeq }]);
  const onHello = after.hello(5, generatingFacts());
  const [reconcile] = toPage(onHello, 'reconcile');
  assert.deepEqual(reconcile.message, { type: 'reconcile', requestId: reconcile.message.requestId, nonce: '[attempt exe-12]' });
  const found = after.do('pageMessage', 5, { type: 'reconcile.result', requestId: reconcile.message.requestId, found: true });
  assert.deepEqual(results(found, 'cmd-12'), [{ status: 'submitted', stateSeq }]);
  assert.equal(journaled(after, 'cmd-12').phase, 'completed');
  assert.equal(submits(after).length, 0);
});

test('submission-started, nonce not found: AMBIGUOUS_SUBMISSION, never resubmitted', () => {
  const { after } = restartedWith({ submit: true });
  after.connect();
  const [reconcile] = toPage(after.hello(5, idleFacts()), 'reconcile');
  const missing = after.do('pageMessage', 5, { type: 'reconcile.result', requestId: reconcile.message.requestId, found: false });
  assert.equal(results(missing, 'cmd-12')[0].code, 'AMBIGUOUS_SUBMISSION');
  after.page(5, idleFacts({ lastAssistantTail: 'x' }));
  after.command();
  assert.equal(submits(after).length, 0);
});

test('submission-started, tab gone after the restart: AMBIGUOUS_SUBMISSION once the page stays unreachable', () => {
  const { after } = restartedWith({ submit: true, openTabs: [] });
  after.connect();
  assert.deepEqual(results(after.at(T0 + 5_000 + RECONCILE_WAIT_MS - 1).do('tick'), 'cmd-12'), []);
  const gone = after.at(T0 + 5_000 + RECONCILE_WAIT_MS).do('tick');
  assert.equal(results(gone, 'cmd-12')[0].code, 'AMBIGUOUS_SUBMISSION');
  assert.equal(submits(after).length, 0);
});

test('submission-started, the tab closes while reconciling: AMBIGUOUS_SUBMISSION at once', () => {
  const { after } = restartedWith({ submit: true });
  after.connect();
  const closed = after.do('tabClosed', 5);
  assert.equal(results(closed, 'cmd-12')[0].code, 'AMBIGUOUS_SUBMISSION');
});

test('submission-started, resolved before the socket opened: the failure is answered when the daemon re-sends the command', () => {
  const { after } = restartedWith({ submit: true });
  const [reconcile] = toPage(after.hello(5, idleFacts()), 'reconcile');
  after.do('pageMessage', 5, { type: 'reconcile.result', requestId: reconcile.message.requestId, found: false });
  const hello = after.connect();
  assert.deepEqual(hello.journal, [], 'a failed completion is not reported as completed (the daemon reads that as submitted)');
  assert.equal(results(after.command(), 'cmd-12')[0].code, 'AMBIGUOUS_SUBMISSION');
  assert.equal(submits(after).length, 0);
});

test('submitted: completed at start with its stored stateSeq; a re-sent command gets submitted, never typed', () => {
  const rig = new Rig({ stored: { bindings: [BOUND], journal: [storedEntry('submitted')] }, openTabs: TAB_5 });
  assert.deepEqual(journaled(rig, 'cmd-12').result, { status: 'submitted', stateSeq: 41 });
  const hello = rig.connect();
  assert.deepEqual(hello.journal, [{ commandId: 'cmd-12', phase: 'completed', stateSeq: 41 }]);
  rig.hello(5, idleFacts());
  assert.deepEqual(results(rig.command(), 'cmd-12'), [{ status: 'submitted', stateSeq: 41 }]);
  assert.equal(submits(rig).length, 0);
});

test('completed: the stored result is sent again, nothing is typed', () => {
  const result = { status: 'failed', code: 'COMPOSER_BUSY', detail: 'a draft' };
  const rig = new Rig({ stored: { bindings: [BOUND], journal: [storedEntry('completed', { result })] }, openTabs: TAB_5 });
  rig.connect();
  rig.hello(5, idleFacts());
  assert.deepEqual(results(rig.command(), 'cmd-12'), [result]);
  assert.equal(submits(rig).length, 0);
});

test('a create that restarted before its URL settled keeps its new-chat tab and is not republished in hello', () => {
  const before = new Rig();
  before.connect();
  const [open] = before.command({ n: 13, kind: 'conversation.create', workerId: 'wrk-9', conversationUrl: '' }).filter((e) => e.kind === 'openTab');
  before.do('tabOpened', open.requestId, 31);
  const after = before.restart({ openTabs: [{ tabId: 31, url: 'https://chatgpt.com/' }] });
  const hello = after.connect();
  assert.deepEqual(hello.bindings, []);
  after.hello(31, idleFacts({ url: 'https://chatgpt.com/', userTurns: 0, assistantTurns: 0, lastAssistantDone: false }));
  assert.equal(after.all('openTab').length, 0, 'the re-queued create reuses its tab');
  assert.equal(submits(after).length, 1);
});

test('after a browser restart a reused tab id is not adopted; a tab showing the binding\'s conversation is', () => {
  const rig = new Rig({ stored: { bindings: [BOUND] }, openTabs: [{ tabId: 5, url: OTHER_CONVERSATION }] });
  rig.connect();
  assert.equal(rig.storage.bindings[0].tabId, null);
  const stranger = rig.hello(5, idleFacts({ url: OTHER_CONVERSATION }));
  assert.equal(toPage(stranger, 'page.unmanaged').length, 1);
  const adopted = rig.hello(9, generatingFacts({ url: `${CONVERSATION}?model=x` }));
  assert.deepEqual(toPage(adopted, 'page.managed')[0].message, { type: 'page.managed', workerId: 'wrk-7' });
  assert.equal(sent(adopted, 'conversation.state')[0].seq, 41);
  assert.equal(rig.storage.bindings[0].tabId, 9);
  assert.deepEqual(rig.executor.uiState().tabs, { 9: 'wrk-7' });
});
