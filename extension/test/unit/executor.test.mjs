// The executor state machine: connection, commands, submission, pages and tabs.

import test from 'node:test';
import assert from 'node:assert/strict';
import {
  Rig, T0, CONVERSATION, OTHER_CONVERSATION, SETTINGS, facts, idleFacts, generatingFacts, sent, toPage, results, journaled,
} from './executor-harness.mjs';
import {
  SUBMIT_RESULT_TIMEOUT_MS, CREATE_URL_SETTLE_MS,
} from '../../src/core/commands.js';
import { RECONNECT_MAX_MS } from '../../src/core/backoff.js';
import { HEARTBEAT_MS_DEFAULT, WELCOME_TIMEOUT_MS } from '../../src/core/daemon-link.js';

const BOUND = { workerId: 'wrk-7', conversationUrl: CONVERSATION, tabId: 5, open: true, seq: 40, observation: { state: 'idle', seq: 40, block: 'STATUS: working' } };

/** A connected rig whose wrk-7 has a managed tab 5 that said hello with `pageFacts`. */
function boundRig(pageFacts = idleFacts(), { settings, heartbeatMs } = {}) {
  const rig = new Rig({ stored: { bindings: [BOUND] }, openTabs: [{ tabId: 5, url: CONVERSATION }], settings });
  rig.connect({ heartbeatMs });
  rig.hello(5, pageFacts);
  return rig;
}

const submits = (rig) => rig.all('toPage').filter((e) => e.message.type === 'submit');

function indexOf(effects, predicate) {
  const i = effects.findIndex(predicate);
  assert.ok(i >= 0, 'effect not found');
  return i;
}

test('hello carries the token, id, protocol, capabilities, concurrency, bindings with their observation and the journal', () => {
  const rig = new Rig({ stored: { bindings: [BOUND], journal: [{ commandId: 'cmd-11', idempotencyKey: 'conversation.send:exe-11', workerId: 'wrk-7', attemptId: 'exe-11', kind: 'conversation.send', phase: 'completed', stateSeq: 39, conversationUrl: CONVERSATION, deadline: T0, result: { status: 'submitted', stateSeq: 39 }, receivedAtMs: T0 }] }, openTabs: [{ tabId: 5, url: CONVERSATION }] });
  const hello = rig.connect();
  assert.deepEqual(hello, {
    v: 1, type: 'hello', token: 'secret-token', executorId: 'ext-test', protocol: 1,
    capabilities: { steering: true, operator: true, heartbeatEcho: true }, concurrencyMax: 4,
    bindings: [{ workerId: 'wrk-7', conversationUrl: CONVERSATION, open: true, observation: BOUND.observation }],
    journal: [{ commandId: 'cmd-11', phase: 'completed', stateSeq: 39 }],
  });
  assert.equal(rig.executor.uiState().connection.status, 'live');
});

test('a send: received is stored before accepted, submission-started before submit, then submitted and completed', () => {
  const rig = boundRig(generatingFacts());
  const onCommand = rig.command();
  const stored = indexOf(onCommand, (e) => e.kind === 'persist' && e.key === 'journal' && e.value[0].phase === 'received');
  const accepted = indexOf(onCommand, (e) => e.kind === 'send' && e.message.outcome?.status === 'accepted');
  assert.ok(stored < accepted);
  assert.equal(submits(rig).length, 0, 'the page is generating: the send waits');

  const onIdle = rig.page(5, idleFacts({ lastAssistantTail: 'STATUS: next' }));
  const started = indexOf(onIdle, (e) => e.kind === 'persist' && e.key === 'journal' && e.value[0].phase === 'submission-started');
  const submit = indexOf(onIdle, (e) => e.kind === 'toPage' && e.message.type === 'submit');
  assert.ok(started < submit);
  const message = onIdle[submit].message;
  assert.deepEqual(message, { type: 'submit', requestId: 'submit:cmd-12', text: 'continue\n[attempt exe-12]', nonce: '[attempt exe-12]', mode: 'idle' });
  const stateSeq = sent(rig.log, 'conversation.state').at(-1).seq;
  assert.equal(journaled(rig, 'cmd-12').stateSeq, stateSeq, 'stateSeq is the last state published before submission');

  const onResult = rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-12', status: 'submitted', touched: true });
  const submittedAt = indexOf(onResult, (e) => e.kind === 'persist' && e.value[0]?.phase === 'submitted');
  const reported = indexOf(onResult, (e) => e.kind === 'send' && e.message.outcome?.status === 'submitted');
  const completedAt = indexOf(onResult, (e) => e.kind === 'persist' && e.value[0]?.phase === 'completed');
  assert.ok(submittedAt < reported && reported < completedAt);
  assert.deepEqual(results(onResult, 'cmd-12'), [{ status: 'submitted', stateSeq }]);
  assert.deepEqual(journaled(rig, 'cmd-12').result, { status: 'submitted', stateSeq });
});

test('an idle page alone types nothing: turns end and the page goes idle, the state is reported, no prompt is typed without a command (000 §12.1.1, §18.2)', () => {
  const rig = boundRig(generatingFacts());
  for (let turn = 0; turn < 3; turn += 1) {
    rig.at(rig.now + 60_000).page(5, idleFacts({ lastAssistantTail: `STATUS: working ${turn}` }));
    rig.at(rig.now + 60_000).do('tick');
    rig.at(rig.now + 60_000).page(5, generatingFacts());
  }
  rig.at(rig.now + 600_000).page(5, idleFacts({ lastAssistantTail: 'STATUS: working, nothing asked' }));
  rig.at(rig.now + 600_000).do('tick');
  const states = sent(rig.log, 'conversation.state').map((m) => m.state);
  assert.ok(states.filter((s) => s === 'idle').length >= 4, `every idle is reported: ${states}`);
  assert.equal(submits(rig).length, 0, 'nothing typed: continuing is the daemon\'s decision, carried by a command');
});

test('a duplicate command id never produces a second submit, whatever its phase', () => {
  const rig = boundRig(generatingFacts());
  rig.command();
  const received = rig.command();
  assert.deepEqual(results(received, 'cmd-12'), [], 'received: in progress, nothing to say');
  rig.page(5, idleFacts());
  rig.command();
  rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-12', status: 'submitted', touched: true });
  const completed = rig.command();
  assert.deepEqual(results(completed, 'cmd-12').map((o) => o.status), ['submitted'], 'completed: the stored result again');
  rig.page(5, generatingFacts());
  rig.page(5, idleFacts({ lastAssistantTail: 'later' }));
  rig.command();
  assert.equal(submits(rig).length, 1);
});

test('a new command id with an idempotency key already submitted is refused as ambiguous, never typed', () => {
  const rig = boundRig();
  rig.command();
  const again = rig.command({ commandId: 'cmd-99' });
  assert.equal(results(again, 'cmd-99')[0].code, 'AMBIGUOUS_SUBMISSION');
  assert.equal(submits(rig).length, 1);
});

test('past its deadline a waiting command fails DEADLINE_EXCEEDED and is never submitted', () => {
  const rig = boundRig(generatingFacts(), { heartbeatMs: 600_000 });
  const deadline = T0 + 60_000;
  rig.command({ deadline });
  assert.equal(rig.last.at(-1).atMs, deadline + 1, 'a timer for the deadline');
  rig.at(deadline).do('tick');
  assert.equal(results(rig.last, 'cmd-12').length, 0, 'at the deadline itself it may still start');
  const effects = rig.at(deadline + 1).do('tick');
  assert.equal(results(effects, 'cmd-12')[0].code, 'DEADLINE_EXCEEDED');
  assert.equal(journaled(rig, 'cmd-12').phase, 'completed');
  rig.page(5, idleFacts());
  assert.equal(submits(rig).length, 0);
});

test('a command whose deadline passed on arrival fails at once', () => {
  const rig = boundRig();
  rig.at(T0 + 10).command({ deadline: T0 });
  assert.equal(results(rig.last, 'cmd-12').map((o) => o.code ?? o.status).join(), 'accepted,DEADLINE_EXCEEDED');
  assert.equal(submits(rig).length, 0);
});

test('cancel withdraws a command still received; once submission began its real outcome stands', () => {
  const rig = boundRig(generatingFacts());
  rig.command({ n: 12 });
  const cancel = rig.command({ n: 12, kind: 'command.cancel', idempotencyKey: 'command.cancel:exe-12', prompt: '' });
  assert.deepEqual(results(cancel, 'cmd-12'), [{ status: 'failed', code: 'CANCELLED', detail: 'withdrawn by command.cancel before submission began' }]);
  rig.page(5, idleFacts());
  assert.equal(submits(rig).length, 0);

  rig.command({ n: 13 });
  assert.equal(submits(rig).length, 1);
  const late = rig.command({ n: 13, kind: 'command.cancel', idempotencyKey: 'command.cancel:exe-13', prompt: '' });
  assert.deepEqual(results(late, 'cmd-13'), [], 'submission started: the outcome follows');
  const outcome = rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-13', status: 'submitted', touched: true });
  assert.equal(results(outcome, 'cmd-13')[0].status, 'submitted');
});

test('a cancel for a command never received is answered CANCELLED and the command, if it comes later, is never typed', () => {
  const rig = boundRig();
  const cancel = rig.command({ n: 20, kind: 'command.cancel', idempotencyKey: 'command.cancel:exe-20', prompt: '' });
  assert.equal(results(cancel, 'cmd-20')[0].code, 'CANCELLED');
  const late = rig.command({ n: 20 });
  assert.equal(results(late, 'cmd-20')[0].code, 'CANCELLED');
  assert.equal(submits(rig).length, 0);
});

test('a failure before touching is definite; after touching it is AMBIGUOUS_SUBMISSION', () => {
  const rig = boundRig();
  rig.command({ n: 12 });
  const busy = rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-12', status: 'failed', code: 'COMPOSER_BUSY', detail: 'a draft', touched: false });
  assert.deepEqual(results(busy, 'cmd-12'), [{ status: 'failed', code: 'COMPOSER_BUSY', detail: 'a draft' }]);
  rig.command({ n: 13 });
  const touched = rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-13', status: 'failed', code: 'HOST_UI_CHANGED', detail: 'no send', touched: true });
  const [outcome] = results(touched, 'cmd-13');
  assert.equal(outcome.code, 'AMBIGUOUS_SUBMISSION');
  assert.match(outcome.detail, /HOST_UI_CHANGED/);
});

test('a page that was generating at the moment of an idle submit is a definite COMPOSER_BUSY', () => {
  const rig = boundRig();
  rig.command({ n: 12 });
  const notIdle = rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-12', status: 'failed', code: 'NOT_IDLE', detail: 'a stop control is present', touched: false });
  const [outcome] = results(notIdle, 'cmd-12');
  assert.equal(outcome.code, 'COMPOSER_BUSY', 'a code the daemon knows as definitely not submitted');
  assert.match(outcome.detail, /not idle/);
});

test('a page that never answers the submission makes it ambiguous', () => {
  const rig = boundRig(idleFacts(), { heartbeatMs: 600_000 });
  rig.command();
  assert.equal(rig.last.at(-1).atMs, T0 + SUBMIT_RESULT_TIMEOUT_MS);
  const effects = rig.at(T0 + SUBMIT_RESULT_TIMEOUT_MS).do('tick');
  assert.equal(results(effects, 'cmd-12')[0].code, 'AMBIGUOUS_SUBMISSION');
});

test('a page that reloads mid-submission is asked for the nonce instead', () => {
  const rig = boundRig();
  rig.command();
  const reload = rig.hello(5, idleFacts({ userTurns: 2, assistantTurns: 1, latestIsAssistant: false, lastAssistantDone: false }));
  const [reconcile] = toPage(reload, 'reconcile');
  assert.equal(reconcile.message.nonce, '[attempt exe-12]');
  const found = rig.do('pageMessage', 5, { type: 'reconcile.result', requestId: reconcile.message.requestId, found: true });
  assert.equal(results(found, 'cmd-12')[0].status, 'submitted');
  assert.equal(submits(rig).length, 1);
});

test('steer needs a generating page: otherwise STEERING_UNAVAILABLE, never typed', () => {
  const rig = boundRig(idleFacts());
  const effects = rig.command({ kind: 'conversation.steer', idempotencyKey: 'conversation.steer:exe-12' });
  assert.equal(results(effects, 'cmd-12')[1].code, 'STEERING_UNAVAILABLE');
  assert.equal(submits(rig).length, 0);

  const generating = boundRig(generatingFacts());
  generating.command({ kind: 'conversation.steer', idempotencyKey: 'conversation.steer:exe-12' });
  assert.equal(submits(generating)[0].message.mode, 'steer');
});

test('a send goes in over a delivery-timeout card once the composer is usable (never Retry)', () => {
  const rig = boundRig(idleFacts({ error: { kind: 'delivery_timeout', text: 'Message delivery timed out.' } }));
  rig.command();
  assert.equal(submits(rig).length, 1);
});

test('a full conversation or a changed page fails the send definitely', () => {
  const full = boundRig(idleFacts({ conversationFull: true }));
  assert.equal(results(full.command(), 'cmd-12')[1].code, 'CONVERSATION_FULL');
  const changed = boundRig(idleFacts({ composer: false }));
  assert.equal(results(changed.command(), 'cmd-12')[1].code, 'HOST_UI_CHANGED');
});

test('create: opens a managed tab at chatBaseUrl, submits once ready, reports the settled URL and a binding', () => {
  const rig = new Rig();
  rig.connect();
  const created = rig.command({ n: 13, kind: 'conversation.create', workerId: 'wrk-9', conversationUrl: '', prompt: 'You are worker wrk-9' });
  const [open] = created.filter((e) => e.kind === 'openTab');
  assert.deepEqual(open, { kind: 'openTab', requestId: open.requestId, workerId: 'wrk-9', url: 'https://chatgpt.com/' });
  rig.do('tabOpened', open.requestId, 31);
  const managed = rig.hello(31, facts({ url: 'https://chatgpt.com/' }));
  assert.deepEqual(toPage(managed, 'page.managed')[0].message, { type: 'page.managed', workerId: 'wrk-9' });
  assert.equal(submits(rig).length, 1);
  assert.equal(submits(rig)[0].message.text, 'You are worker wrk-9\n[attempt exe-13]');
  const stateSeq = journaled(rig, 'cmd-13').stateSeq;

  const accepted = rig.do('pageMessage', 31, { type: 'submit.result', requestId: 'submit:cmd-13', status: 'submitted', touched: true });
  assert.deepEqual(results(accepted, 'cmd-13'), [], 'waits for the URL to settle');
  const url = 'https://chatgpt.com/c/0b8e2f4a-1111-4c3d-9e2a-7f00aa11bb22';
  const settled = rig.page(31, generatingFacts({ url }));
  assert.deepEqual(results(settled, 'cmd-13'), [{ status: 'submitted', stateSeq, conversationUrl: url }]);
  const binding = sent(settled, 'binding')[0];
  assert.equal(binding.conversationUrl, url);
  assert.equal(binding.open, true);
  assert.ok(indexOf(settled, (e) => e.message?.type === 'command.result') < indexOf(settled, (e) => e.message?.type === 'binding'));
  assert.equal(rig.storage.bindings.find((b) => b.workerId === 'wrk-9').conversationUrl, url);
});

test('create: a URL that does not settle in time is reported without it; the binding follows when it does', () => {
  const rig = new Rig();
  rig.connect();
  const [open] = rig.command({ n: 13, kind: 'conversation.create', workerId: 'wrk-9', conversationUrl: '' }).filter((e) => e.kind === 'openTab');
  rig.do('tabOpened', open.requestId, 31);
  rig.hello(31, facts({ url: 'https://chatgpt.com/' }));
  rig.do('pageMessage', 31, { type: 'submit.result', requestId: 'submit:cmd-13', status: 'submitted', touched: true });
  const late = rig.at(T0 + CREATE_URL_SETTLE_MS).do('tick');
  assert.equal(results(late, 'cmd-13')[0].conversationUrl, undefined);
  const url = 'https://chatgpt.com/c/abc-123';
  const settled = rig.page(31, generatingFacts({ url }));
  assert.equal(sent(settled, 'binding')[0].conversationUrl, url);
});

test('create: a hello from the new tab before tabs.create resolved is still managed', () => {
  const rig = new Rig();
  rig.connect();
  const [open] = rig.command({ n: 13, kind: 'conversation.create', workerId: 'wrk-9', conversationUrl: '' }).filter((e) => e.kind === 'openTab');
  const early = rig.hello(31, facts({ url: 'https://chatgpt.com/' }));
  assert.equal(toPage(early, 'page.unmanaged').length, 1);
  const opened = rig.do('tabOpened', open.requestId, 31);
  assert.equal(toPage(opened, 'page.managed').length, 1);
  assert.equal(toPage(opened, 'submit').length, 1);
});

test('create on a page that stops typing (logged out, a challenge): its state is published at once, nothing is typed', () => {
  const stops = [
    [{ loginRequired: true, composer: false }, { state: 'error', errorKind: 'login_required' }],
    [{ challenge: true, composer: false }, { state: 'error', errorKind: 'challenge' }],
  ];
  for (const [over, expected] of stops) {
    const rig = new Rig();
    rig.connect();
    const [open] = rig.command({ n: 13, kind: 'conversation.create', workerId: 'wrk-9', conversationUrl: '' }).filter((e) => e.kind === 'openTab');
    rig.do('tabOpened', open.requestId, 31);
    const shown = rig.hello(31, facts({ url: 'https://chatgpt.com/', ...over }));
    const [state] = sent(shown, 'conversation.state');
    assert.ok(state, `${expected.errorKind}: published before the create's deadline`);
    assert.equal(state.workerId, 'wrk-9');
    assert.equal(state.state, expected.state);
    assert.equal(state.errorKind, expected.errorKind);
    assert.equal(state.seq, 1);
    assert.deepEqual(toPage(shown, 'submit'), [], 'nothing is typed');
    assert.deepEqual(results(shown, 'cmd-13'), [], 'the create waits (the daemon decides: it holds or withdraws it)');
    assert.equal(rig.storage.bindings.find((b) => b.workerId === 'wrk-9').seq, 1, 'the sequence is stored before it is sent');
    // The same page again is no transition; a withdrawal ends the create as for any command.
    assert.deepEqual(sent(rig.page(31, facts({ url: 'https://chatgpt.com/', ...over })), 'conversation.state'), []);
    const cancelled = rig.command({ n: 13, kind: 'command.cancel', idempotencyKey: 'command.cancel:exe-13', workerId: 'wrk-9', conversationUrl: '', prompt: '' });
    assert.equal(results(cancelled, 'cmd-13')[0].code, 'CANCELLED');
    // The next create on the same stopped page tells the daemon again (it forgot the first).
    const again = rig.command({ n: 14, kind: 'conversation.create', workerId: 'wrk-9', conversationUrl: '' });
    assert.equal(sent(again, 'conversation.state')[0]?.seq, 2, `${expected.errorKind}: reported for the new create`);
  }
});

test('create on a new chat that is only busy (generating, not yet loaded) publishes nothing before its URL settles', () => {
  const rig = new Rig();
  rig.connect();
  const [open] = rig.command({ n: 13, kind: 'conversation.create', workerId: 'wrk-9', conversationUrl: '' }).filter((e) => e.kind === 'openTab');
  rig.do('tabOpened', open.requestId, 31);
  const busy = rig.hello(31, generatingFacts({ url: 'https://chatgpt.com/', userTurns: 0, assistantTurns: 0 }));
  assert.deepEqual(sent(busy, 'conversation.state'), []);
  assert.deepEqual(toPage(busy, 'submit'), []);
});

test('a send for a conversation this browser does not hold opens it in a managed tab and confirms the binding', () => {
  const rig = new Rig();
  rig.connect();
  const [open] = rig.command({ conversationUrl: OTHER_CONVERSATION }).filter((e) => e.kind === 'openTab');
  assert.equal(open.url, OTHER_CONVERSATION);
  rig.do('tabOpened', open.requestId, 44);
  const hello = rig.hello(44, idleFacts({ url: OTHER_CONVERSATION }));
  assert.deepEqual(sent(hello, 'binding')[0], { v: 1, type: 'binding', workerId: 'wrk-7', conversationUrl: OTHER_CONVERSATION, open: true, observation: { state: 'idle', seq: 1, block: 'STATUS: working' } });
  assert.equal(toPage(hello, 'submit').length, 1);
});

test('no more managed tabs than managedMax: the command fails definitely', () => {
  const rig = new Rig({ settings: { ...SETTINGS, managedMax: 1 }, stored: { bindings: [BOUND] }, openTabs: [{ tabId: 5, url: CONVERSATION }] });
  rig.connect();
  const effects = rig.command({ n: 13, kind: 'conversation.create', workerId: 'wrk-9', conversationUrl: '' });
  assert.equal(effects.filter((e) => e.kind === 'openTab').length, 0);
  assert.equal(results(effects, 'cmd-13')[1].code, 'CONVERSATION_CLOSED');
});

test('a turn too short to be seen generating that ends with the same block is still published', () => {
  const rig = boundRig(generatingFacts());
  rig.page(5, idleFacts());
  const before = rig.sentAll('conversation.state').at(-1);
  assert.equal(before.state, 'idle');
  rig.command({ n: 12 });
  rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-12', status: 'submitted', touched: true });
  rig.page(5, idleFacts({ userTurns: 2, assistantTurns: 1, latestIsAssistant: false }));
  rig.page(5, idleFacts({ userTurns: 2, assistantTurns: 2 }));
  const after = rig.sentAll('conversation.state').at(-1);
  assert.equal(after.state, 'idle');
  assert.equal(after.block, before.block, 'the same block as the turn before');
  assert.ok(after.seq > before.seq, 'a newer sequence: the daemon sees the turn end');
  rig.page(5, idleFacts({ userTurns: 2, assistantTurns: 2, sendEnabled: true }));
  assert.equal(rig.sentAll('conversation.state').at(-1).seq, after.seq, 'and only once: churn after it is coalesced');
});

test('a whole turn reported before the submitted answer still counts for the next command', () => {
  const rig = boundRig();
  rig.command({ n: 12 });
  // The page ran the turn (prompt shown, generated, idle) before the content script's answer came.
  rig.page(5, generatingFacts());
  rig.page(5, idleFacts({ userTurns: 2, assistantTurns: 2, lastAssistantTail: 'turn 2' }));
  rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-12', status: 'submitted', touched: true });
  rig.command({ n: 13 });
  assert.deepEqual(submits(rig).map((e) => e.message.requestId), ['submit:cmd-12', 'submit:cmd-13'],
    'facts showing the submitted prompt are current: the next command does not wait for another change');
});

test('per-worker serialisation: a worker\'s second command waits for the first to finish', () => {
  const rig = boundRig();
  rig.command({ n: 12 });
  rig.command({ n: 13 });
  assert.deepEqual(submits(rig).map((e) => e.message.requestId), ['submit:cmd-12']);
  rig.do('pageMessage', 5, { type: 'submit.result', requestId: 'submit:cmd-12', status: 'submitted', touched: true });
  assert.deepEqual(submits(rig).map((e) => e.message.requestId), ['submit:cmd-12'], 'facts from before the submission do not count');
  rig.page(5, idleFacts({ userTurns: 2, latestIsAssistant: false }));
  assert.deepEqual(submits(rig).map((e) => e.message.requestId), ['submit:cmd-12'], 'the submitted turn has not been answered yet');
  rig.page(5, generatingFacts());
  rig.page(5, idleFacts({ lastAssistantTail: 'turn 2' }));
  assert.deepEqual(submits(rig).map((e) => e.message.requestId), ['submit:cmd-12', 'submit:cmd-13']);
});

test('unrelated workers run concurrently up to concurrencyMax', () => {
  const workers = [1, 2, 3, 4, 5].map((n) => ({ workerId: `wrk-${n}`, conversationUrl: `https://chatgpt.com/c/w${n}`, tabId: 100 + n, open: true, seq: 0, observation: null }));
  const rig = new Rig({ stored: { bindings: workers }, openTabs: workers.map((w) => ({ tabId: w.tabId, url: w.conversationUrl })) });
  rig.connect();
  for (const w of workers) rig.hello(w.tabId, generatingFacts({ url: w.conversationUrl }));
  for (const [i, w] of workers.entries()) rig.command({ n: 30 + i, workerId: w.workerId, conversationUrl: w.conversationUrl });
  for (const w of workers) rig.page(w.tabId, idleFacts({ url: w.conversationUrl }));
  assert.deepEqual(submits(rig).map((e) => e.tabId), [101, 102, 103, 104]);
  rig.do('pageMessage', 102, { type: 'submit.result', requestId: 'submit:cmd-31', status: 'submitted', touched: true });
  assert.deepEqual(submits(rig).map((e) => e.tabId), [101, 102, 103, 104, 105]);
});

test('a tab that is not a managed binding is answered page.unmanaged and otherwise ignored', () => {
  const rig = boundRig();
  for (const message of [
    { type: 'page.hello', url: OTHER_CONVERSATION, facts: idleFacts({ url: OTHER_CONVERSATION }) },
    { type: 'page.facts', url: OTHER_CONVERSATION, facts: generatingFacts({ url: OTHER_CONVERSATION }) },
    { type: 'page.ping' },
    { type: 'submit.result', requestId: 'submit:cmd-1', status: 'submitted', touched: true },
  ]) {
    const effects = rig.do('pageMessage', 77, message);
    assert.deepEqual(effects.filter((e) => e.kind === 'send' || e.kind === 'persist'), []);
    if (message.type.startsWith('page.')) assert.deepEqual(toPage(effects, 'page.unmanaged').map((e) => e.tabId), [77]);
  }
  assert.deepEqual(rig.executor.uiState().tabs, { 5: 'wrk-7' });
});

test('a managed tab closed: state closed and binding open:false; its waiting command fails CONVERSATION_CLOSED', () => {
  const rig = boundRig(generatingFacts());
  rig.command();
  const effects = rig.do('tabClosed', 5);
  assert.deepEqual(sent(effects, 'conversation.state')[0], { v: 1, type: 'conversation.state', workerId: 'wrk-7', state: 'closed', seq: 42 });
  assert.deepEqual(sent(effects, 'binding')[0], { v: 1, type: 'binding', workerId: 'wrk-7', conversationUrl: CONVERSATION, open: false });
  assert.equal(results(effects, 'cmd-12')[0].code, 'CONVERSATION_CLOSED');
  assert.deepEqual(rig.executor.uiState().tabs, {});
});

const inspect = (over = {}) => ({ n: 30, kind: 'conversation.inspect', idempotencyKey: 'conversation.inspect:exe-30', prompt: '', promptVersion: '', ...over });
const close = (over = {}) => ({ n: 31, kind: 'conversation.close', idempotencyKey: 'conversation.close:exe-31', prompt: '', promptVersion: '', ...over });

test('inspect republishes the binding as known, asks the page for fresh facts, and types nothing', () => {
  const rig = boundRig();
  const published = rig.sentAll('conversation.state').length;
  const effects = rig.command(inspect());
  assert.deepEqual(sent(effects, 'binding'), [
    { v: 1, type: 'binding', workerId: 'wrk-7', conversationUrl: CONVERSATION, open: true, observation: { state: 'idle', seq: 40, block: 'STATUS: working' } },
  ]);
  assert.deepEqual(toPage(effects, 'page.inspect').map((e) => e.tabId), [5]);
  assert.deepEqual(sent(effects, 'command.result'), [], 'inspect has no result');
  assert.equal(journaled(rig, 'cmd-30'), null, 'inspect is not journaled');
  assert.equal(submits(rig).length, 0);
  // The page's fresh facts, unchanged: nothing new is published (a larger seq would read as a turn end).
  rig.page(5, idleFacts());
  assert.equal(rig.sentAll('conversation.state').length, published);
  // Changed: published once with the next sequence.
  const changed = rig.page(5, generatingFacts());
  assert.deepEqual(sent(changed, 'conversation.state').map((m) => [m.state, m.seq]), [['generating', 41]]);
});

test('inspect of a closed tab republishes open:false; of a conversation not held here, nothing', () => {
  const rig = boundRig();
  rig.do('tabClosed', 5);
  assert.deepEqual(sent(rig.command(inspect()), 'binding'), [{ v: 1, type: 'binding', workerId: 'wrk-7', conversationUrl: CONVERSATION, open: false }]);
  const other = rig.command(inspect({ n: 32, conversationUrl: OTHER_CONVERSATION }));
  assert.deepEqual(other.filter((e) => e.kind === 'send' || e.kind === 'toPage' || e.kind === 'persist'), []);
});

test('close stops managing the conversation: page unmanaged, overlay hidden, binding gone from hello; the sequence keeps growing', () => {
  const rig = boundRig();
  const effects = rig.command(close());
  assert.deepEqual(toPage(effects, 'page.unmanaged').map((e) => e.tabId), [5]);
  assert.ok(effects.some((e) => e.kind === 'overlay' && e.tabId === 5 && e.workerSummary === null));
  assert.ok(!effects.some((e) => e.kind === 'removeTab' || e.kind === 'closeTab'), 'the tab itself stays open');
  assert.deepEqual(sent(effects, 'command.result'), []);
  assert.deepEqual(rig.executor.uiState().tabs, {});
  // The page keeps reporting: it is unmanaged now, and nothing reaches the daemon.
  const later = rig.page(5, generatingFacts());
  assert.deepEqual(later.filter((e) => e.kind === 'send'), []);
  // After a restart the released binding is not republished.
  const again = rig.restart({ openTabs: [{ tabId: 5, url: CONVERSATION }] });
  assert.deepEqual(again.connect().bindings, []);
  // A later send to another conversation binds it with a sequence above the old one.
  again.command({ n: 33, conversationUrl: OTHER_CONVERSATION });
  const opened = again.all('openTab').at(-1);
  again.do('tabOpened', opened.requestId, 9);
  const states = sent(again.hello(9, idleFacts({ url: OTHER_CONVERSATION })), 'conversation.state');
  assert.deepEqual(states.map((m) => [m.state, m.seq]), [['idle', 41]]);
});

test('close of a conversation the worker no longer holds here changes nothing', () => {
  const rig = boundRig();
  const effects = rig.command(close({ conversationUrl: OTHER_CONVERSATION }));
  assert.deepEqual(effects.filter((e) => e.kind === 'toPage' || e.kind === 'persist' || e.kind === 'send'), []);
  assert.deepEqual(rig.executor.uiState().tabs, { 5: 'wrk-7' });
});

test('bad input from the daemon or a page is logged and ignored, never thrown', () => {
  const rig = boundRig();
  for (const frame of ['{', '[]', '{"v":1,"type":"command","commandId":"nope"}', '{"v":1,"type":"operator.result","actionId":"zzz","ok":true}']) {
    const effects = rig.do('socketMessage', rig.connectionId, frame);
    assert.ok(effects.some((e) => e.kind === 'log'));
    assert.deepEqual(effects.filter((e) => e.kind === 'send' || e.kind === 'persist'), []);
  }
  for (const message of [null, 42, { type: 'page.facts', facts: 'x' }, { type: 'submit.result', requestId: 1 }, { type: 'weird' }]) {
    const effects = rig.do('pageMessage', 5, message);
    assert.equal(effects.filter((e) => e.kind === 'log').length, 1);
  }
});

test('heartbeat every welcome.heartbeatMs while live', () => {
  const rig = new Rig();
  rig.connect({ heartbeatMs: 15_000 });
  assert.equal(rig.last.at(-1).atMs, T0 + 15_000);
  assert.deepEqual(sent(rig.at(T0 + 14_999).do('tick'), 'heartbeat'), []);
  assert.deepEqual(sent(rig.at(T0 + 15_000).do('tick'), 'heartbeat'), [{ v: 1, type: 'heartbeat' }]);
  assert.equal(rig.last.at(-1).atMs, T0 + 30_000);
  assert.equal(sent(rig.at(T0 + 30_000).do('tick'), 'heartbeat').length, 1);
  assert.equal(HEARTBEAT_MS_DEFAULT, 20_000);
});

test('no welcome in time closes the socket and retries with backoff', () => {
  const rig = new Rig();
  rig.do('socketOpened', rig.connectionId);
  const first = rig.connectionId;
  const effects = rig.at(T0 + WELCOME_TIMEOUT_MS).do('tick');
  assert.deepEqual(effects.filter((e) => e.kind === 'closeSocket').map((e) => e.connectionId), [first]);
  assert.equal(rig.executor.uiState().connection.status, 'offline');
  const retryAt = effects.at(-1).atMs;
  assert.ok(retryAt >= T0 + WELCOME_TIMEOUT_MS + 1_000 && retryAt <= T0 + WELCOME_TIMEOUT_MS + 30_000);
  assert.equal(rig.at(retryAt).do('tick').filter((e) => e.kind === 'openSocket').length, 1);
});

test('a dropped connection reconnects after a growing, capped backoff; a wake reconnects at once', () => {
  const rig = new Rig({ random: () => 0 });
  let now = T0;
  const delays = [];
  for (let i = 0; i < 8; i += 1) {
    rig.do('socketOpened', rig.connectionId);
    const closed = rig.do('socketClosed', rig.connectionId, 'code 1006');
    const at = closed.at(-1).atMs;
    delays.push(at - now);
    now = at;
    rig.at(now).do('tick');
  }
  assert.deepEqual(delays, [1_000, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000]);
  const [probe] = rig.do('socketClosed', rig.connectionId, 'gone').filter((e) => e.kind === 'probe');
  rig.do('probeAnswered', probe.probeId, { error: 'Failed to fetch' });
  assert.equal(rig.do('wake').filter((e) => e.kind === 'openSocket').length, 1);
});

test('UNAUTHORIZED: status unauthorized, and no reconnect before the cap, not even on wake', () => {
  const rig = new Rig();
  rig.do('socketOpened', rig.connectionId);
  const refused = rig.daemon({ type: 'protocol.error', code: 'UNAUTHORIZED', detail: 'wrong token' });
  assert.equal(refused.filter((e) => e.kind === 'closeSocket').length, 1);
  assert.deepEqual(rig.executor.uiState().connection, { status: 'unauthorized', detail: 'wrong token' });
  assert.equal(refused.at(-1).atMs, T0 + RECONNECT_MAX_MS);
  assert.equal(rig.at(T0 + RECONNECT_MAX_MS - 1).do('wake').filter((e) => e.kind === 'openSocket').length, 0);
  assert.equal(rig.at(T0 + RECONNECT_MAX_MS).do('tick').filter((e) => e.kind === 'openSocket').length, 1);
  assert.equal(rig.executor.uiState().connection.status, 'unauthorized', 'stays unauthorized until a welcome');
});

test('an empty token: status token_missing and no connection attempt; setting one connects', () => {
  const rig = new Rig({ settings: { ...SETTINGS, token: '' } });
  assert.equal(rig.all('openSocket').length, 0);
  assert.equal(rig.executor.uiState().connection.status, 'token_missing');
  assert.equal(rig.at(T0 + 60_000).do('wake').filter((e) => e.kind === 'openSocket').length, 0);
  const set = rig.do('settingsChanged', { ...SETTINGS, token: 'new' });
  assert.equal(set.filter((e) => e.kind === 'openSocket').length, 1);
});

test('a frame of another version closes the socket and backs off to the cap', () => {
  const rig = new Rig();
  rig.connect();
  const effects = rig.do('socketMessage', rig.connectionId, '{"v":2,"type":"welcome"}');
  assert.equal(effects.filter((e) => e.kind === 'closeSocket').length, 1);
  assert.equal(effects.at(-1).atMs, T0 + RECONNECT_MAX_MS);
});

test('operator actions: operator.action with a generated id, answered by operator.result', () => {
  const rig = boundRig();
  const asked = rig.do('uiAction', 'r1', { type: 'ui.action', action: 'pause_after_turn', workerId: 'wrk-7' });
  const [action] = sent(asked, 'operator.action');
  assert.deepEqual({ ...action, actionId: 'x' }, { v: 1, type: 'operator.action', actionId: 'x', action: 'pause_after_turn', workerId: 'wrk-7' });
  assert.equal(rig.do('uiAction', 'r2', { action: 'resume', workerId: 'wrk-7' }).filter((e) => e.kind === 'send')[0].message.actionId === action.actionId, false);
  const ok = rig.daemon({ type: 'operator.result', actionId: action.actionId, ok: true });
  assert.deepEqual(ok.filter((e) => e.kind === 'uiReply'), [{ kind: 'uiReply', replyId: 'r1', response: { ok: true } }]);
  const refused = rig.do('uiAction', 'r3', { action: 'resume', workerId: 'wrk-99' });
  const id = sent(refused, 'operator.action')[0].actionId;
  const error = rig.daemon({ type: 'operator.result', actionId: id, ok: false, error: { code: 'UNKNOWN_WORKER', message: 'no worker wrk-99' } });
  assert.deepEqual(error.find((e) => e.kind === 'uiReply').response, { ok: false, error: { code: 'UNKNOWN_WORKER', message: 'no worker wrk-99' } });
});

test('operator actions: TIMEOUT after 10 s, OFFLINE when disconnected, INVALID_ARGUMENT for a bad request', () => {
  const rig = boundRig();
  rig.do('uiAction', 'late', { action: 'continue_now', workerId: 'wrk-7' });
  assert.deepEqual(rig.at(T0 + 9_999).do('tick').filter((e) => e.kind === 'uiReply'), []);
  const timeout = rig.at(T0 + 10_000).do('tick').find((e) => e.kind === 'uiReply');
  assert.equal(timeout.replyId, 'late');
  assert.equal(timeout.response.error.code, 'TIMEOUT');
  assert.equal(rig.do('uiAction', 'bad', { action: 'explode' }).find((e) => e.kind === 'uiReply').response.error.code, 'INVALID_ARGUMENT');
  rig.do('uiAction', 'cut', { action: 'resume', workerId: 'wrk-7' });
  const dropped = rig.do('socketClosed', rig.connectionId, 'gone');
  assert.equal(dropped.find((e) => e.kind === 'uiReply' && e.replyId === 'cut').response.error.code, 'OFFLINE');
  assert.equal(rig.do('uiAction', 'off', { action: 'resume', workerId: 'wrk-7' }).find((e) => e.kind === 'uiReply').response.error.code, 'OFFLINE');
});

test('operator queries: operator.query answered by operator.data', () => {
  const rig = boundRig();
  const asked = rig.do('uiQuery', 'q', { type: 'ui.query', query: 'worker_attempts', workerId: 'wrk-7', afterSequence: 3 });
  const [query] = sent(asked, 'operator.query');
  assert.deepEqual({ ...query, queryId: 'x' }, { v: 1, type: 'operator.query', queryId: 'x', query: 'worker_attempts', workerId: 'wrk-7', afterSequence: 3 });
  const data = rig.daemon({ type: 'operator.data', queryId: query.queryId, ok: true, data: { events: [] } });
  assert.deepEqual(data.find((e) => e.kind === 'uiReply').response, { ok: true, data: { events: [] } });
});

test('operator.summary is kept for ui.state and pushed to managed tabs\' overlays', () => {
  const rig = boundRig();
  const summary = { type: 'operator.summary', runs: [{ runId: 'run-3', taskName: 'T', status: 'active', autoResume: true, workers: [{ workerId: 'wrk-7', name: '/root', displayName: 'Root', disposition: 'running', attempts: 1, autoResumes: 0, autoResume: true, policySource: 'run_default', pauseAfterTurn: false, stall: 'clear' }] }] };
  const effects = rig.daemon(summary);
  assert.equal(rig.executor.uiState().summary.runs[0].workers[0].displayName, 'Root');
  assert.ok(effects.some((e) => e.kind === 'uiChanged'));
  const overlay = effects.find((e) => e.kind === 'overlay');
  assert.equal(overlay.tabId, 5);
  assert.equal(overlay.workerSummary.workerId, 'wrk-7');
  assert.equal(overlay.connection.status, 'live');
  // The overlay's worker carries its run (Stop run on /root) and who waits for it (Stop's confirmation).
  assert.deepEqual([overlay.workerSummary.runId, overlay.workerSummary.runTitle, overlay.workerSummary.waitedOnByNames], ['run-3', 'T', []]);
  const lane = { ...summary.runs[0].workers[0], workerId: 'wrk-8', name: '/root/a', displayName: 'Lane A', disposition: 'awaiting_dependency', waitsFor: 'wrk-7' };
  const waited = rig.daemon({ ...summary, runs: [{ ...summary.runs[0], workers: [summary.runs[0].workers[0], lane] }] });
  assert.deepEqual(waited.find((e) => e.kind === 'overlay').workerSummary.waitedOnByNames, ['Lane A']);
});
