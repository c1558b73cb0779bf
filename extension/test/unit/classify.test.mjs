// The page classification table (src/core/classify.js) and when the composer is usable.

import test from 'node:test';
import assert from 'node:assert/strict';
import { classify, composerUsable } from '../../src/core/classify.js';
import { facts, idleFacts, generatingFacts } from './executor-harness.mjs';

const NEW_CHAT = 'https://chatgpt.com/';
const TIMEOUT_TEXT = 'Message delivery timed out. Please try again.';
const deliveryTimeout = { kind: 'delivery_timeout', text: TIMEOUT_TEXT, retry: true };
const FORM = { where: 'latest turn', what: 'form (3 buttons)' };
const BANNER = { where: 'composer', what: 'div.upgrade-banner "Try Pro"' };

const TABLE = [
  ['a page still loading', facts({ loaded: false }), { state: 'unknown' }],
  ['no facts at all', null, { state: 'unknown' }],
  ['a new chat: no turns, an empty composer and no send button', facts({ url: NEW_CHAT }), { state: 'ready' }],
  ['a conversation address whose turns are not there yet', facts(), { state: 'unknown' }],
  ['an answered turn showing its action bar', idleFacts({ lastAssistantTail: 'STATUS: done' }), { state: 'idle', block: 'STATUS: done' }],
  ['an answered turn with an empty tail', idleFacts({ lastAssistantTail: '' }), { state: 'idle' }],
  ['an idle page: no send button (the slot holds the voice button)', idleFacts({ sendButton: false }), { state: 'idle', block: 'STATUS: working' }],
  ['a stop control', generatingFacts(), { state: 'generating' }],
  ['a delivery-timeout card in the latest turn', idleFacts({ error: deliveryTimeout }), { state: 'error', errorKind: 'delivery_timeout', detail: TIMEOUT_TEXT }],
  ['"something went wrong" in the latest turn', idleFacts({ error: { kind: 'something_went_wrong', text: 'x' } }), { state: 'error', errorKind: 'generic', detail: 'x' }],
  ['"thinking failed" in the latest turn', idleFacts({ error: { kind: 'thinking_failed', text: 'Thinking failed' } }), { state: 'error', errorKind: 'generic', detail: 'Thinking failed' }],
  ['a failed turn offering Retry, in words the reader does not know', idleFacts({ error: { kind: 'turn_failed', text: 'x', retry: true } }), { state: 'error', errorKind: 'generic', detail: 'x' }],
  ['an unknown error card kind', idleFacts({ error: { kind: 'brand_new', text: 'x' } }), { state: 'error', errorKind: 'generic', detail: 'x' }],
  ['a stale stop control together with an error in the latest turn', generatingFacts({ error: deliveryTimeout }), { state: 'error', errorKind: 'delivery_timeout', detail: TIMEOUT_TEXT }],
  ['"Connection interrupted" while Stop still shows: the page waits for the answer', generatingFacts({ error: { kind: 'connection_interrupted', text: 'Connection interrupted. Waiting for the complete answer' } }), { state: 'generating' }],
  ['"Connection interrupted" once Stop is gone', idleFacts({ latestIsAssistant: true, lastAssistantDone: false, error: { kind: 'connection_interrupted', text: 'Connection interrupted' } }), { state: 'error', errorKind: 'generic', detail: 'Connection interrupted' }],
  ['a stale error card behind a newer turn (the adapter reports none)', idleFacts({ userTurns: 4, assistantTurns: 4, error: null }), { state: 'idle', block: 'STATUS: working' }],
  ['the conversation is full', idleFacts({ conversationFull: true }), { state: 'error', errorKind: 'conversation_full' }],
  ['a log-in page (no composer)', facts({ loginRequired: true, composer: false }), { state: 'error', errorKind: 'login_required' }],
  ['a challenge page', facts({ challenge: true, composer: false }), { state: 'error', errorKind: 'challenge' }],
  ['a usage limit with a reset time', idleFacts({ usageLimit: { text: 'limit', untilMs: 1_800_000_000_000 } }), { state: 'error', errorKind: 'usage_limit', untilMs: 1_800_000_000_000, detail: 'limit' }],
  ['a usage limit naming no reset time', idleFacts({ usageLimit: { text: 'limit', untilMs: null } }), { state: 'error', errorKind: 'usage_limit', detail: 'limit' }],
  ['the "Too many requests" lock', idleFacts({ rateLimited: { text: 'Too many requests' } }), { state: 'error', errorKind: 'rate_limited', detail: 'Too many requests' }],
  ['suspicious activity', idleFacts({ suspiciousActivity: { text: 'Suspicious activity detected' } }), { state: 'error', errorKind: 'suspicious_activity', detail: 'Suspicious activity detected' }],
  ['an unknown dialog, named by its heading', idleFacts({ dialog: { heading: 'Temporary Chat' } }), { state: 'error', errorKind: 'blocked_by_dialog', detail: 'Temporary Chat' }],
  ['logged out beats a safety notice and a slow-down dialog (the page is no account\'s)', idleFacts({ loginRequired: true, rateLimited: { text: 'Too many requests' }, suspiciousActivity: { text: 'Suspicious activity detected' } }),
    { state: 'error', errorKind: 'login_required' }],
  ['a lock beats a dialog and an error card', idleFacts({ rateLimited: { text: 'Too many requests' }, dialog: { heading: 'x' }, error: deliveryTimeout }), { state: 'error', errorKind: 'rate_limited', detail: 'Too many requests' }],
  ['a challenge beats everything else', idleFacts({ challenge: true, usageLimit: { text: 'limit', untilMs: null } }), { state: 'error', errorKind: 'challenge' }],
  ['a loaded page without a composer', idleFacts({ composer: false, missing: ['composer'] }), { state: 'error', errorKind: 'host_ui_changed', detail: 'not found: composer' }],
  ['a conversation whose turns the adapter cannot find', facts({ missing: ['turns'] }), { state: 'error', errorKind: 'host_ui_changed', detail: 'not found: turns' }],
  ['a user turn on its way, no stop control yet', facts({ userTurns: 1, assistantTurns: 0 }), { state: 'unknown' }],
  ['an assistant turn still without its action bar and no stop', facts({ userTurns: 1, assistantTurns: 1 }), { state: 'unknown' }],
  ['a newer user turn after a finished answer, no stop yet', idleFacts({ userTurns: 2, assistantTurns: 1, latestIsAssistant: false }), { state: 'unknown' }],
  ['an answered turn after a user turn a failed send left unanswered', idleFacts({ userTurns: 3, assistantTurns: 2 }), { state: 'idle', block: 'STATUS: working' }],
  ['an idle page with a form the adapter cannot name in the latest turn', idleFacts({ unrecognized: FORM }),
    { state: 'unknown', detail: 'Page not recognized: form (3 buttons) in the latest turn' }],
  ['... still settling: unknown without a reason (not published)', idleFacts({ unrecognized: { ...FORM, settling: true } }), { state: 'unknown' }],
  ['an error card beside a card the adapter cannot name: no fresh prompt', idleFacts({ error: deliveryTimeout, unrecognized: FORM }),
    { state: 'unknown', detail: 'Page not recognized: form (3 buttons) in the latest turn' }],
  ['a stop control beside a card the adapter cannot name', generatingFacts({ unrecognized: BANNER }),
    { state: 'unknown', detail: 'Page not recognized: div.upgrade-banner "Try Pro" in the composer' }],
  ['a new chat with a control the adapter cannot name around the composer', facts({ url: NEW_CHAT, unrecognized: BANNER }),
    { state: 'unknown', detail: 'Page not recognized: div.upgrade-banner "Try Pro" in the composer' }],
  ['a known state that stops typing comes first: an approval card, a limit, a log-in', idleFacts({ unrecognized: FORM, loginRequired: true }),
    { state: 'error', errorKind: 'login_required' }],
];

for (const [name, input, expected] of TABLE) {
  test(`classify: ${name}`, () => assert.deepEqual(classify(input), expected));
}

test('classify: a draft in the composer changes no state', () => {
  for (const base of [facts(), idleFacts(), generatingFacts(), idleFacts({ error: deliveryTimeout })]) {
    assert.deepEqual(classify({ ...base, composerText: true }), classify(base));
  }
});

test('classify: page text travels as detail at most 200 characters long', () => {
  const long = 'x'.repeat(500);
  assert.equal(classify(idleFacts({ dialog: { heading: long } })).detail.length, 200);
  assert.equal(classify(idleFacts({ unrecognized: { where: 'composer', what: long } })).detail.length, 200);
});

test('classify: an approval card, a dialog, a full conversation or a limit is named before anything unrecognized', () => {
  const card = { app: 'Orchestrator', title: 'Allow ChatGPT to use Orchestrator?', buttons: [] };
  assert.equal(classify(generatingFacts({ unrecognized: FORM, approval: card })).state, 'awaiting_approval');
  assert.equal(classify(idleFacts({ unrecognized: FORM, dialog: { heading: 'x' } })).errorKind, 'blocked_by_dialog');
  assert.equal(classify(idleFacts({ unrecognized: FORM, conversationFull: true })).errorKind, 'conversation_full');
  assert.equal(classify(idleFacts({ unrecognized: FORM, usageLimit: { text: 'limit', untilMs: null } })).errorKind, 'usage_limit');
});

test('composerUsable: a composer and nothing generating; no send button needed before typing', () => {
  assert.equal(composerUsable(idleFacts()), true);
  assert.equal(composerUsable(idleFacts({ sendButton: false })), true);
  assert.equal(composerUsable(generatingFacts()), false);
  assert.equal(composerUsable(idleFacts({ composer: false })), false);
  assert.equal(composerUsable(idleFacts({ composerEditable: false })), false);
  assert.equal(composerUsable(idleFacts({ loaded: false })), false);
  assert.equal(composerUsable(null), false);
});
