// The page port contract: what a page may send, and the nonce line.

import test from 'node:test';
import assert from 'node:assert/strict';
import { readPageMessage, readFacts, promptWithNonce, nonceOf, PageMessageError, ASSISTANT_TAIL_CHARS_MAX } from '../../src/core/page-messages.js';
import { facts } from './executor-harness.mjs';

test('facts are normalised: known fields only, booleans, bounded texts', () => {
  const read = readFacts({ ...facts(), loaded: 'yes', secret: 'cookie', lastAssistantTail: 'x'.repeat(5000), error: { kind: 'odd', text: 'e'.repeat(500) } });
  assert.equal(read.loaded, false);
  assert.equal('secret' in read, false);
  assert.equal(read.lastAssistantTail.length, ASSISTANT_TAIL_CHARS_MAX);
  assert.deepEqual({ ...read.error, text: read.error.text.length }, { kind: 'generic', text: 200, retry: false });
});

test('the page stops the classifier reads survive the port: limits, locks, dialogs, the approval card, drafts, what is unrecognized or missing', () => {
  const read = readFacts({
    ...facts(),
    error: { kind: 'app_unavailable', text: 'FORBIDDEN: This conversation does not support developer MCPs', retry: false },
    usageLimit: { text: 'limit', untilMs: 1_800_000_000_000 },
    rateLimited: { text: 'Too many requests' },
    suspiciousActivity: { text: 's'.repeat(900) },
    dialog: { heading: 'Temporary Chat', extra: 'x' },
    approval: { app: 'Orchestrator', title: 'Allow ChatGPT to use Orchestrator?', buttons: ['Deny', 'Allow once', 1, 'a', 'b', 'c', 'd'], warning: 'Suspicious Instruction' },
    composerDraft: 'upload',
    unrecognized: { where: 'latest turn', what: `form (3 buttons) ${'x'.repeat(500)}`, settling: true },
    missing: ['turns', 'cookies'],
  });
  assert.deepEqual(read.error, { kind: 'app_unavailable', text: 'FORBIDDEN: This conversation does not support developer MCPs', retry: false });
  assert.deepEqual(read.usageLimit, { text: 'limit', untilMs: 1_800_000_000_000 });
  assert.deepEqual(read.rateLimited, { text: 'Too many requests' });
  assert.equal(read.suspiciousActivity.text.length, 200);
  assert.deepEqual(read.dialog, { heading: 'Temporary Chat' });
  assert.deepEqual(read.approval, { app: 'Orchestrator', title: 'Allow ChatGPT to use Orchestrator?', buttons: ['Deny', 'Allow once', '', 'a', 'b', 'c'], warning: 'Suspicious Instruction' });
  assert.equal(read.composerDraft, 'upload');
  assert.deepEqual({ ...read.unrecognized, what: read.unrecognized.what.length }, { where: 'latest turn', what: 200, settling: true });
  assert.deepEqual(read.missing, ['turns']);
  // A place the port does not know is still somewhere not recognized, and a draft of a kind
  // it does not know is no draft it can name (the readiness check refuses it in the page).
  const odd = readFacts({ ...facts(), composerDraft: 'hologram', unrecognized: { where: 'ceiling', what: '' } });
  assert.deepEqual(odd.unrecognized, { where: 'page', what: 'something', settling: false });
  assert.equal(odd.composerDraft, null);
  const quiet = readFacts(facts());
  assert.equal(quiet.unrecognized, null);
  assert.equal(quiet.approval, null);
  assert.equal(quiet.dialog, null);
  assert.equal(quiet.usageLimit, null);
});

test('page messages that do not fit are refused with a typed error', () => {
  for (const [message, pattern] of [
    [null, /expected an object/],
    [{ type: 'page.hello', facts: { ...facts(), url: 'not a url' } }, /facts\.url: not a URL/],
    [{ type: 'page.facts', facts: { ...facts(), userTurns: -1 } }, /userTurns/],
    [{ type: 'submit.result', requestId: 'r', status: 'maybe', touched: false }, /status/],
    [{ type: 'submit.result', requestId: 'r', status: 'failed', touched: false }, /code/],
    [{ type: 'submit.result', requestId: 'r', status: 'submitted' }, /touched/],
    [{ type: 'reconcile.result', requestId: 'r', found: 'yes' }, /found/],
    [{ type: 'page.explode' }, /unknown type "page\.explode"/],
  ]) {
    assert.throws(() => readPageMessage(message), (e) => e instanceof PageMessageError && pattern.test(e.message));
  }
});

test('a valid submit result and reconcile result read back as sent', () => {
  assert.deepEqual(readPageMessage({ type: 'submit.result', requestId: 'r', status: 'failed', code: 'COMPOSER_BUSY', detail: 'draft', touched: false }),
    { type: 'submit.result', requestId: 'r', status: 'failed', touched: false, code: 'COMPOSER_BUSY', detail: 'draft' });
  assert.deepEqual(readPageMessage({ type: 'reconcile.result', requestId: 'r', found: true }), { type: 'reconcile.result', requestId: 'r', found: true });
});

test('the nonce is the last line of the typed text', () => {
  assert.equal(nonceOf('exe-12'), '[attempt exe-12]');
  assert.equal(promptWithNonce('continue', 'exe-12'), 'continue\n[attempt exe-12]');
  assert.equal(promptWithNonce('line\n', 'exe-1'), 'line\n[attempt exe-1]');
  assert.equal(promptWithNonce('', 'exe-1'), '[attempt exe-1]');
});
