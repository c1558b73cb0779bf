// The page classification table (src/core/classify.js) and when the composer is usable.

import test from 'node:test';
import assert from 'node:assert/strict';
import { classify, composerUsable } from '../../src/core/classify.js';
import { facts, idleFacts, generatingFacts } from './executor-harness.mjs';

const deliveryTimeout = { kind: 'delivery_timeout', text: 'Message delivery timed out. Please try again.' };

const TABLE = [
  ['a page still loading', facts({ loaded: false }), { state: 'unknown' }],
  ['no facts at all', null, { state: 'unknown' }],
  ['a new chat: no turns, composer and send present', facts(), { state: 'ready' }],
  ['an answered turn showing its action bar', idleFacts({ lastAssistantTail: 'STATUS: done' }), { state: 'idle', block: 'STATUS: done' }],
  ['an answered turn with an empty tail', idleFacts({ lastAssistantTail: '' }), { state: 'idle' }],
  ['a stop control', generatingFacts(), { state: 'generating' }],
  ['a delivery-timeout card in the latest turn', idleFacts({ error: deliveryTimeout }), { state: 'error', errorKind: 'delivery_timeout' }],
  ['"something went wrong" in the latest turn', idleFacts({ error: { kind: 'something_went_wrong', text: 'x' } }), { state: 'error', errorKind: 'generic' }],
  ['an unknown error card kind', idleFacts({ error: { kind: 'brand_new', text: 'x' } }), { state: 'error', errorKind: 'generic' }],
  ['a stale stop control together with an error in the latest turn', generatingFacts({ error: deliveryTimeout }), { state: 'error', errorKind: 'delivery_timeout' }],
  ['a stale error card behind a newer turn (the adapter reports none)', idleFacts({ userTurns: 4, assistantTurns: 4, error: null }), { state: 'idle', block: 'STATUS: working' }],
  ['the conversation is full', idleFacts({ conversationFull: true }), { state: 'error', errorKind: 'conversation_full' }],
  ['a log-in page (no composer)', facts({ loginRequired: true, composer: false, sendButton: false }), { state: 'error', errorKind: 'login_required' }],
  ['a challenge page', facts({ challenge: true, composer: false }), { state: 'error', errorKind: 'login_required' }],
  ['a usage limit', idleFacts({ usageLimit: true }), { state: 'error', errorKind: 'usage_limit' }],
  ['a loaded page without a composer', idleFacts({ composer: false }), { state: 'error', errorKind: 'host_ui_changed' }],
  ['a loaded page with neither send nor stop', idleFacts({ sendButton: false }), { state: 'error', errorKind: 'host_ui_changed' }],
  ['a user turn on its way, no stop control yet', facts({ userTurns: 1, assistantTurns: 0 }), { state: 'unknown' }],
  ['an assistant turn still without its action bar and no stop', facts({ userTurns: 1, assistantTurns: 1 }), { state: 'unknown' }],
  ['a newer user turn after a finished answer, no stop yet', idleFacts({ userTurns: 2, assistantTurns: 1, latestIsAssistant: false }), { state: 'unknown' }],
  ['an answered turn after a user turn a failed send left unanswered', idleFacts({ userTurns: 3, assistantTurns: 2 }), { state: 'idle', block: 'STATUS: working' }],
];

for (const [name, input, expected] of TABLE) {
  test(`classify: ${name}`, () => assert.deepEqual(classify(input), expected));
}

test('classify: a draft in the composer changes no state', () => {
  for (const base of [facts(), idleFacts(), generatingFacts(), idleFacts({ error: deliveryTimeout })]) {
    assert.deepEqual(classify({ ...base, composerText: true }), classify(base));
  }
});

test('composerUsable: composer and send control present, nothing generating', () => {
  assert.equal(composerUsable(idleFacts()), true);
  assert.equal(composerUsable(generatingFacts()), false);
  assert.equal(composerUsable(idleFacts({ composer: false })), false);
  assert.equal(composerUsable(idleFacts({ loaded: false })), false);
  assert.equal(composerUsable(null), false);
});
