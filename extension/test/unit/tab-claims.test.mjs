// "Start a run here" and "Attach this conversation to…" in the executor: the action the
// daemon gets, the tab bound once the result names the worker, a new chat's root create
// typed in the claimed tab (held until the result), and the refusals that bind nothing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CLAIM_WAIT_MS, TabClaims, claimRequest } from '../../src/core/tab-claims.js';
import { CONVERSATION, Rig, T0, facts, idleFacts, sent, toPage } from './executor-harness.mjs';

const NEW_CHAT = 'https://chatgpt.com/';
const START = { action: 'run_start', taskName: ' Billing export ', rootConversationName: 'Billing root', autoResume: true };

/** A connected rig with one unmanaged ChatGPT tab (5) showing `url`. */
function tabRig(url = CONVERSATION) {
  const rig = new Rig();
  rig.connect();
  rig.hello(5, url === NEW_CHAT ? facts({ url }) : idleFacts({ url }));
  return rig;
}

function reply(effects) {
  return effects.find((e) => e.kind === 'uiReply')?.response;
}

test('start here on a conversation: run_start names it; the result binds the tab and reports the binding', () => {
  const rig = tabRig();
  const [action] = sent(rig.do('uiAction', 'r1', { ...START, tabId: 5, context: '' }), 'operator.action');
  assert.deepEqual({ ...action, actionId: 'x' }, {
    v: 1, type: 'operator.action', actionId: 'x', action: 'run_start', autoResume: true,
    taskName: 'Billing export', rootConversationName: 'Billing root', conversationUrl: CONVERSATION,
  });
  const done = rig.daemon({ type: 'operator.result', actionId: action.actionId, ok: true, runId: 'run-4', workerId: 'wrk-12' });
  assert.deepEqual(reply(done), { ok: true, runId: 'run-4', workerId: 'wrk-12' });
  assert.deepEqual(toPage(done, 'page.managed')[0].message, { type: 'page.managed', workerId: 'wrk-12' });
  const [binding] = sent(done, 'binding');
  assert.equal(binding.workerId, 'wrk-12');
  assert.equal(binding.conversationUrl, CONVERSATION);
  assert.equal(binding.observation.state, 'idle');
  assert.equal(rig.storage.bindings.find((b) => b.workerId === 'wrk-12').tabId, 5, 'persisted');
  assert.deepEqual(rig.executor.uiState().tabs, { 5: 'wrk-12' });
});

test('start here in a new chat: the root\'s create waits for the result, then types in the claimed tab', () => {
  const rig = tabRig(NEW_CHAT);
  const [action] = sent(rig.do('uiAction', 'r1', { ...START, tabId: 5 }), 'operator.action');
  assert.equal(action.conversationUrl, undefined, 'a new chat names no conversation');
  // The daemon's create may overtake its result: it is held, nothing opens.
  const early = rig.command({ n: 20, kind: 'conversation.create', workerId: 'wrk-12', conversationUrl: '', prompt: 'You are the root' });
  assert.deepEqual(early.filter((e) => e.kind === 'openTab' || e.kind === 'toPage'), []);
  const done = rig.daemon({ type: 'operator.result', actionId: action.actionId, ok: true, runId: 'run-4', workerId: 'wrk-12' });
  assert.deepEqual(done.filter((e) => e.kind === 'openTab'), [], 'no tab is opened');
  const [submit] = toPage(rig.log, 'submit');
  assert.equal(submit.tabId, 5);
  assert.equal(submit.message.text, 'You are the root\n[attempt exe-20]');
  assert.equal(toPage(rig.log, 'submit').length, 1);
});

test('a held create for another worker goes on after the result; an unanswered claim lets it go after the wait', () => {
  const rig = tabRig(NEW_CHAT);
  const [action] = sent(rig.do('uiAction', 'r1', { ...START, tabId: 5 }), 'operator.action');
  assert.deepEqual(rig.command({ n: 21, kind: 'conversation.create', workerId: 'wrk-30', conversationUrl: '' }).filter((e) => e.kind === 'openTab'), []);
  const later = rig.at(T0 + CLAIM_WAIT_MS).do('tick');
  assert.equal(reply(later)?.error.code, 'TIMEOUT');
  const [open] = later.filter((e) => e.kind === 'openTab');
  assert.equal(open.workerId, 'wrk-30', 'the lane gets its own tab');
  const late = rig.daemon({ type: 'operator.result', actionId: action.actionId, ok: true, runId: 'run-4', workerId: 'wrk-12' });
  assert.deepEqual(sent(late, 'binding'), [], 'a result after the wait binds nothing');
  assert.deepEqual(rig.executor.uiState().tabs, {}, 'tab 5 stays unmanaged');
});

test('a refused start binds nothing and releases held creates', () => {
  const rig = tabRig(NEW_CHAT);
  const [action] = sent(rig.do('uiAction', 'r1', { ...START, tabId: 5 }), 'operator.action');
  rig.command({ n: 22, kind: 'conversation.create', workerId: 'wrk-30', conversationUrl: '' });
  const refused = rig.daemon({ type: 'operator.result', actionId: action.actionId, ok: false, error: { code: 'LIMIT_EXCEEDED', message: 'at most 64 runs' } });
  assert.equal(reply(refused).error.code, 'LIMIT_EXCEEDED');
  assert.equal(refused.filter((e) => e.kind === 'openTab').length, 1);
  assert.deepEqual(toPage(refused, 'page.managed'), []);
});

test('attach: a conversation tab is bound to the named worker, whose old tab is let go', () => {
  const rig = tabRig();
  const OTHER = 'https://chatgpt.com/c/7b2e';
  rig.hello(6, idleFacts({ url: OTHER }));
  const [start] = sent(rig.do('uiAction', 'r0', { ...START, tabId: 6 }), 'operator.action');
  rig.daemon({ type: 'operator.result', actionId: start.actionId, ok: true, runId: 'run-4', workerId: 'wrk-12' });
  const [action] = sent(rig.do('uiAction', 'r1', { action: 'worker_attach', workerId: 'wrk-12', tabId: 5 }), 'operator.action');
  assert.deepEqual({ ...action, actionId: 'x' }, { v: 1, type: 'operator.action', actionId: 'x', action: 'worker_attach', workerId: 'wrk-12', conversationUrl: CONVERSATION });
  const done = rig.daemon({ type: 'operator.result', actionId: action.actionId, ok: true, runId: 'run-4', workerId: 'wrk-12' });
  assert.deepEqual(toPage(done, 'page.unmanaged').map((e) => e.tabId), [6]);
  assert.equal(sent(done, 'binding')[0].conversationUrl, CONVERSATION);
  assert.deepEqual(rig.executor.uiState().tabs, { 5: 'wrk-12' });
});

test('refusals bind nothing and send nothing: managed tab, unloaded tab, new chat attach, no names, second click', () => {
  const rig = tabRig();
  const refusedWith = (request) => {
    const effects = rig.do('uiAction', 'r', request);
    assert.deepEqual(sent(effects, 'operator.action'), [], JSON.stringify(request));
    return reply(effects).error.code;
  };
  assert.equal(refusedWith({ ...START, tabId: 99 }), 'TAB_NOT_READY');
  assert.equal(refusedWith({ ...START }), 'INVALID_ARGUMENT');
  assert.equal(refusedWith({ ...START, taskName: '  ', tabId: 5 }), 'INVALID_ARGUMENT');
  assert.equal(refusedWith({ ...START, rootConversationName: undefined, tabId: 5 }), 'INVALID_ARGUMENT');
  assert.equal(refusedWith({ action: 'worker_attach', tabId: 5 }), 'INVALID_ARGUMENT');
  rig.hello(7, facts({ url: NEW_CHAT }));
  assert.equal(refusedWith({ action: 'worker_attach', workerId: 'wrk-3', tabId: 7 }), 'NEW_CHAT');
  const [action] = sent(rig.do('uiAction', 'r1', { ...START, tabId: 5 }), 'operator.action');
  assert.equal(refusedWith({ ...START, tabId: 5 }), 'BUSY');
  rig.daemon({ type: 'operator.result', actionId: action.actionId, ok: true, runId: 'run-4', workerId: 'wrk-12' });
  assert.equal(refusedWith({ ...START, tabId: 5 }), 'TAB_MANAGED');
});

test('a dropped connection gives claims up and lets held creates go on', () => {
  const rig = tabRig(NEW_CHAT);
  rig.do('uiAction', 'r1', { ...START, tabId: 5 });
  rig.command({ n: 23, kind: 'conversation.create', workerId: 'wrk-30', conversationUrl: '' });
  const dropped = rig.do('socketClosed', rig.connectionId, 'gone');
  assert.equal(reply(dropped).error.code, 'OFFLINE');
  assert.equal(dropped.filter((e) => e.kind === 'openTab').length, 1);
});

test('claim bookkeeping: waits, expiry, release only when no new-chat claim waits', () => {
  const claims = new TabClaims();
  claims.add('a', { tabId: 1, conversationUrl: '' }, 100);
  claims.add('b', { tabId: 2, conversationUrl: CONVERSATION }, 200);
  assert.equal(claims.holdsCreates(), true);
  assert.equal(claims.nextAt(), 100 + CLAIM_WAIT_MS);
  claims.hold({ commandId: 'c1' });
  assert.deepEqual(claims.releasable(), []);
  assert.equal(claims.expire(100 + CLAIM_WAIT_MS), 1);
  assert.deepEqual(claims.releasable(), [{ commandId: 'c1' }]);
  assert.deepEqual(claims.releasable(), [], 'handed back once');
  assert.equal(claims.waitsFor(2), true);
  assert.deepEqual(claims.settle('b'), { tabId: 2, conversationUrl: CONVERSATION, workerId: null, untilMs: 200 + CLAIM_WAIT_MS });
  assert.equal(claims.settle('b'), null);
  assert.equal(claims.nextAt(), null);
});

test('claimRequest keeps a plan, trims names and defaults Auto Resume on', () => {
  const page = { url: `${CONVERSATION}?model=gpt-5`, connected: true };
  const { fields } = claimRequest({ action: 'run_start', tabId: 3, taskName: 'T', rootConversationName: 'R', context: ' Plan ' }, page, null);
  assert.deepEqual(fields, { autoResume: true, taskName: 'T', rootConversationName: 'R', context: 'Plan', conversationUrl: CONVERSATION });
  const off = claimRequest({ action: 'run_start', tabId: 3, taskName: 'T', rootConversationName: 'R', autoResume: false }, page, null);
  assert.equal(off.fields.autoResume, false);
  assert.equal(off.fields.deadMan, undefined, 'no choice: the daemon\'s default');
  const recover = claimRequest({ action: 'run_start', tabId: 3, taskName: 'T', rootConversationName: 'R', deadMan: 'recover' }, page, null);
  assert.equal(recover.fields.deadMan, 'recover');
  const odd = claimRequest({ action: 'run_start', tabId: 3, taskName: 'T', rootConversationName: 'R', deadMan: 'often' }, page, null);
  assert.equal(odd.fields.deadMan, undefined, 'a mode that does not exist is not sent');
});
