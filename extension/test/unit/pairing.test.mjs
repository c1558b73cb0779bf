// Pairing's pure logic (src/core/pairing.js): where the settings page looks for a daemon,
// what counts as one, a typed code, the exchange and every refusal in a person's words,
// and what the pairing box says at each step.

import test from 'node:test';
import assert from 'node:assert/strict';
import {
  discoveryCandidates, readDiscovery, normalizeCode, pairRequest, readPairAnswer, pairingView, pairedDaemonUrls,
} from '../../src/core/pairing.js';
import { mergeSettings, SETTINGS_DEFAULTS } from '../../src/core/settings.js';

test('the configured loopback daemon is tried first, then 127.0.0.1:7411, each once', () => {
  assert.deepEqual(discoveryCandidates(SETTINGS_DEFAULTS).map((c) => c.host), ['127.0.0.1:7411']);
  const custom = discoveryCandidates({ daemonUrls: ['ws://localhost:9000/executor'] });
  assert.deepEqual(custom.map((c) => c.host), ['localhost:9000', '127.0.0.1:7411']);
  assert.equal(custom[0].httpBase, 'http://localhost:9000');
  assert.equal(custom[0].daemonUrl, 'ws://localhost:9000/executor');
  // A remote or TLS daemon is not probed from here: pairing is for this machine.
  assert.deepEqual(discoveryCandidates({ daemonUrls: ['wss://o.example.com/executor'] }).map((c) => c.host), ['127.0.0.1:7411']);
  assert.deepEqual(discoveryCandidates({ daemonUrls: ['ws://192.168.1.5:7411/executor'] }).map((c) => c.host), ['127.0.0.1:7411']);
  assert.deepEqual(discoveryCandidates({ daemonUrls: ['nonsense'] }).map((c) => c.host), ['127.0.0.1:7411']);
  // Several daemons on this machine (a leader and a standby): each loopback one, in order.
  const two = discoveryCandidates({ daemonUrls: ['ws://192.168.1.5:7411/executor', 'ws://127.0.0.1:7412/executor', 'ws://localhost:9000/executor'] });
  assert.deepEqual(two.map((c) => c.host), ['127.0.0.1:7412', 'localhost:9000', '127.0.0.1:7411']);
});

test('pairing keeps the configured daemons when they include the one paired with, else stores that one', () => {
  const list = ['ws://127.0.0.1:7411/executor', 'ws://127.0.0.1:7412/executor'];
  assert.deepEqual(pairedDaemonUrls({ daemonUrls: list }, 'ws://127.0.0.1:7412/executor'), list);
  assert.deepEqual(pairedDaemonUrls({ daemonUrls: ['ws://10.0.0.5:7411/executor'] }, 'ws://127.0.0.1:7411/executor'), ['ws://127.0.0.1:7411/executor']);
  assert.deepEqual(pairedDaemonUrls({}, 'ws://127.0.0.1:7411/executor'), ['ws://127.0.0.1:7411/executor']);
});

test('only our daemon counts as found', () => {
  assert.deepEqual(readDiscovery(200, { product: 'orchestrator', version: '0.1.0', pairing: true }), { found: true, version: '0.1.0' });
  assert.deepEqual(readDiscovery(200, { product: 'something-else', pairing: true }), { found: false });
  assert.deepEqual(readDiscovery(404, null), { found: false });
  assert.deepEqual(readDiscovery(200, { product: 'orchestrator', pairing: false }), { found: false });
});

test('a code is typed with or without its dash, and anything else is not one', () => {
  assert.equal(normalizeCode('4821-7730'), '4821-7730');
  assert.equal(normalizeCode(' 4821 7730 '), '4821-7730');
  assert.equal(normalizeCode('48217730'), '4821-7730');
  for (const bad of ['4821-773', '4821-77301', 'abcd-efgh', '', null, undefined]) assert.equal(normalizeCode(bad), null, String(bad));
});

test('the exchange is a simple request: text/plain, the code as JSON', () => {
  const request = pairRequest('4821-7730');
  assert.equal(request.method, 'POST');
  assert.equal(request.headers['Content-Type'], 'text/plain');
  assert.deepEqual(JSON.parse(request.body), { code: '4821-7730' });
});

test('a good answer gives the token, saved as a pasted one would be', () => {
  const token = 'a'.repeat(64);
  const answer = readPairAnswer(200, { product: 'orchestrator', version: '0.1.0', executorToken: token, mcpUrl: 'http://127.0.0.1:7411/mcp' });
  assert.deepEqual(answer, { ok: true, token, version: '0.1.0' });
  const { settings, errors } = mergeSettings(SETTINGS_DEFAULTS, { daemonUrls: ['ws://127.0.0.1:7411/executor'], token: answer.token });
  assert.deepEqual(errors, {});
  assert.equal(settings.token, token);
  assert.equal(readPairAnswer(200, { executorToken: 'short' }).ok, false, 'a token too short is no answer');
});

test('wrong, expired, used and flooded codes are each said in words, with what to do', () => {
  const said = (status, code, retry) => readPairAnswer(status, { code, message: 'x' }, retry);
  assert.match(said(401, 'PAIR_CODE_WRONG').text, /not right.*orchestrator pair/);
  assert.match(said(410, 'PAIR_CODE_EXPIRED').text, /expired/);
  assert.match(said(410, 'PAIR_CODE_USED').text, /used already \(codes work once\)/);
  assert.match(said(410, 'PAIR_CODE_WITHDRAWN').text, /withdrawn/);
  assert.equal(said(429, 'PAIR_RATE_LIMITED', 12).text, 'Too many tries. Try again in 12 s.');
  assert.equal(said(429, undefined, NaN).text, 'Too many tries. Try again in a minute.');
  assert.equal(readPairAnswer(500, null).text, 'The daemon refused (HTTP 500).');
  for (const code of ['PAIR_CODE_WRONG', 'PAIR_CODE_EXPIRED', 'PAIR_CODE_USED']) assert.equal(said(401, code).ok, false);
});

test('the pairing box: looking, found (Pair enabled), missing (paste instead), paired, refused (try again)', () => {
  assert.deepEqual(pairingView({ phase: 'searching' }), { text: 'Looking for a daemon on this machine…', tone: 'info', canPair: false });
  const found = pairingView({ phase: 'found', host: '127.0.0.1:7411' });
  assert.equal(found.text, 'Daemon found at 127.0.0.1:7411 — enter the pairing code.');
  assert.equal(found.canPair, true);
  const missing = pairingView({ phase: 'missing' });
  assert.match(missing.text, /paste the executor token/);
  assert.equal(missing.canPair, false);
  assert.equal(pairingView({ phase: 'pairing', host: 'h' }).canPair, false, 'no second exchange while one runs');
  assert.equal(pairingView({ phase: 'paired', host: 'h' }).tone, 'ok');
  assert.deepEqual(pairingView({ phase: 'refused', text: 'nope' }), { text: 'nope', tone: 'error', canPair: true });
});
