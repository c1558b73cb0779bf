// State coalescing: one publication per real transition, sequences that only grow.

import test from 'node:test';
import assert from 'node:assert/strict';
import { nextObservation, sameState } from '../../src/core/coalesce.js';
import { classify } from '../../src/core/classify.js';
import { Rig, CONVERSATION, facts, idleFacts, generatingFacts, sent } from './executor-harness.mjs';

test('nextObservation: a new state takes the next sequence; the same state publishes nothing', () => {
  const first = nextObservation(null, 4, { state: 'ready' });
  assert.deepEqual(first, { state: 'ready', seq: 5 });
  assert.equal(nextObservation(first, 5, { state: 'ready' }), null);
  assert.deepEqual(nextObservation(first, 5, { state: 'error', errorKind: 'usage_limit' }), { state: 'error', errorKind: 'usage_limit', seq: 6 });
  assert.deepEqual(nextObservation(first, 5, { state: 'idle', block: 'B' }), { state: 'idle', seq: 6, block: 'B' });
});

test('nextObservation: unknown without a reason is never published (it says nothing about the conversation)', () => {
  assert.equal(nextObservation(null, 0, { state: 'unknown' }), null);
  assert.equal(nextObservation({ state: 'idle', seq: 3 }, 3, { state: 'unknown' }), null);
});

test('nextObservation: unknown with a reason is published once, with its reason; the page known again is a new state', () => {
  const unknown = { state: 'unknown', detail: 'Page not recognized: form (3 buttons) in the latest turn' };
  const published = nextObservation({ state: 'idle', seq: 3, block: 'B' }, 3, unknown);
  assert.deepEqual(published, { state: 'unknown', seq: 4, detail: unknown.detail });
  assert.equal(nextObservation(published, 4, unknown), null);
  assert.deepEqual(nextObservation(published, 4, { state: 'unknown', detail: 'Page not recognized: iframe in the latest turn' }),
    { state: 'unknown', seq: 5, detail: 'Page not recognized: iframe in the latest turn' });
  assert.deepEqual(nextObservation(published, 4, { state: 'idle', block: 'B' }), { state: 'idle', seq: 5, block: 'B' });
});

test('sameState compares state, error kind and block', () => {
  assert.equal(sameState({ state: 'idle', block: 'a', seq: 1 }, { state: 'idle', block: 'a' }), true);
  assert.equal(sameState({ state: 'idle', block: 'a' }, { state: 'idle', block: 'b' }), false);
  assert.equal(sameState({ state: 'error', errorKind: 'generic' }, { state: 'error', errorKind: 'usage_limit' }), false);
  assert.equal(sameState(null, { state: 'idle' }), false);
});

function managedRig() {
  const rig = new Rig({ stored: { bindings: [{ workerId: 'wrk-7', conversationUrl: CONVERSATION, tabId: 5, open: true, seq: 40, observation: { state: 'idle', seq: 40 } }] }, openTabs: [{ tabId: 5, url: CONVERSATION }] });
  rig.connect();
  return rig;
}

test('DOM churn that classifies the same publishes nothing', () => {
  const rig = managedRig();
  rig.hello(5, generatingFacts());
  assert.equal(rig.sentAll('conversation.state').length, 1);
  for (const churn of [{ userTurns: 3 }, { composerText: true }, { sendEnabled: true }, { assistantTurns: 5 }]) {
    const effects = rig.page(5, generatingFacts(churn));
    assert.deepEqual(sent(effects, 'conversation.state'), [], `churn ${JSON.stringify(churn)} published`);
    assert.equal(effects.filter((e) => e.kind === 'persist').length, 0);
  }
  assert.deepEqual(rig.sentAll('conversation.state'), [{ v: 1, type: 'conversation.state', workerId: 'wrk-7', state: 'generating', seq: 41 }]);
});

test('the sequence high-water is persisted before the state is published', () => {
  const rig = managedRig();
  const effects = rig.hello(5, generatingFacts());
  const persisted = effects.findIndex((e) => e.kind === 'persist' && e.key === 'bindings' && e.value[0].seq === 41);
  const published = effects.findIndex((e) => e.kind === 'send' && e.message.type === 'conversation.state');
  assert.ok(persisted >= 0 && published > persisted, `persist at ${persisted}, publish at ${published}`);
});

test('sequences keep growing across a restart', () => {
  const rig = managedRig();
  rig.hello(5, generatingFacts());
  rig.page(5, idleFacts());
  assert.deepEqual(rig.sentAll('conversation.state').map((m) => m.seq), [41, 42]);
  const after = rig.restart({ openTabs: [{ tabId: 5, url: CONVERSATION }] });
  const hello = after.connect();
  // The block's text is not stored, so the republished state carries none.
  assert.deepEqual(hello.bindings[0].observation, { state: 'idle', seq: 42 });
  after.hello(5, idleFacts());
  assert.deepEqual(after.sentAll('conversation.state'), [], 'the same state after the restart is not a transition');
  after.page(5, generatingFacts());
  assert.deepEqual(after.sentAll('conversation.state').map((m) => m.seq), [43]);
});

test('a tab showing another conversation than its binding publishes nothing', () => {
  const rig = managedRig();
  rig.hello(5, idleFacts({ lastAssistantTail: 'x' }));
  const before = rig.sentAll('conversation.state').length;
  rig.page(5, generatingFacts({ url: 'https://chatgpt.com/c/elsewhere' }));
  assert.equal(rig.sentAll('conversation.state').length, before);
  assert.equal(classify(facts({ url: 'https://chatgpt.com/' })).state, 'ready');
});
