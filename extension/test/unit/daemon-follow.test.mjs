// The executor's connection among several daemons (daemon-link.js with follow.js): a socket
// that does not open is probed, a standby's leader is opened next, the list starts over
// after a drop (a failover), and when nobody leads the status says what each URL said.

import test from 'node:test';
import assert from 'node:assert/strict';
import { Rig, SETTINGS, T0 } from './executor-harness.mjs';
import { LEADER_PROBE_TIMEOUT_MS } from '../../src/core/follow.js';
import { SOCKET_OPEN_TIMEOUT_MS } from '../../src/core/daemon-link.js';

const A = 'ws://10.0.0.5:7411/executor';
const B = 'ws://10.0.0.6:7411/executor';
const C = 'ws://10.0.0.7:7411/executor';
const standby = (leader) => ({ status: 503, body: JSON.stringify({ code: 'NOT_LEADER', message: 'not the leader', leader, epoch: 2 }) });
const DEAD = { error: 'Failed to fetch' };

const of = (effects, kind) => effects.filter((e) => e.kind === kind);

/** A rig over `urls` (random 0: the shortest backoff). */
function rigOver(urls) {
  return new Rig({ settings: { ...SETTINGS, daemonUrls: urls }, random: () => 0 });
}

/** The socket opened last did not open: returns the probe it asks for. */
function refused(rig) {
  const [probe] = of(rig.do('socketClosed', rig.connectionId, 'closed (code 1006)'), 'probe');
  assert.ok(probe, 'a socket that did not open is probed');
  return probe;
}

/** Answers the probe: returns the URL opened next, or null. */
function answer(rig, probe, said) {
  return of(rig.do('probeAnswered', probe.probeId, said), 'openSocket')[0]?.url ?? null;
}

test('the first URL is opened first; a dead one is passed to the next, with no backoff in between', () => {
  const rig = rigOver([A, B]);
  assert.deepEqual(rig.all('openSocket').map((e) => e.url), [A]);
  const probe = refused(rig);
  assert.equal(probe.url, 'http://10.0.0.5:7411/health');
  assert.equal(answer(rig, probe, DEAD), B);
  assert.equal(rig.executor.uiState().connection.status, 'connecting');
  rig.connect();
  assert.equal(rig.executor.uiState().connection.status, 'live');
});

test('a standby naming the leader: its executor URL is opened next, before the rest of the list', () => {
  const rig = rigOver([A, B]);
  assert.equal(answer(rig, refused(rig), standby('http://10.0.0.7:7411/mcp')), C);
  const hello = rig.connect();
  assert.equal(hello.token, SETTINGS.token);
  assert.equal(rig.executor.uiState().connection.status, 'live');
});

test('after the leader drops, the next attempt starts from the list again and reaches the promoted standby', () => {
  const rig = rigOver([A, B]);
  answer(rig, refused(rig), standby('http://10.0.0.6:7411/mcp'));
  rig.connect();
  const dropped = rig.do('socketClosed', rig.connectionId, 'closed (code 1006)');
  assert.equal(of(dropped, 'probe').length, 0, 'a socket that was open is not probed');
  assert.equal(rig.executor.uiState().connection.status, 'offline');
  const retry = rig.at(dropped.at(-1).atMs).do('tick');
  assert.deepEqual(of(retry, 'openSocket').map((e) => e.url), [A], 'the list again, from its first');
  rig.connect();
  assert.equal(rig.executor.uiState().connection.status, 'live');
});

test('nobody leads: each URL once, then the backoff, and the status says what each said', () => {
  const rig = rigOver([A, B]);
  assert.equal(answer(rig, refused(rig), standby('')), B);
  const probe = refused(rig);
  const ended = rig.do('probeAnswered', probe.probeId, standby('http://10.0.0.5:7411/mcp'));
  assert.equal(of(ended, 'openSocket').length, 0, 'A was tried already: no loop');
  assert.deepEqual(rig.executor.uiState().connection, {
    status: 'no_leader',
    detail: `${A}: a standby that names no leader yet (NOT_LEADER); ${B}: a standby naming the leader http://10.0.0.5:7411/mcp (NOT_LEADER) (already tried)`,
  });
  const retryAt = ended.at(-1).atMs;
  assert.ok(retryAt >= T0 + 1_000, 'the usual backoff');
  assert.deepEqual(of(rig.at(retryAt).do('tick'), 'openSocket').map((e) => e.url), [A]);
});

test('one dead URL is offline, as before the list', () => {
  const rig = rigOver([A]);
  const ended = rig.do('probeAnswered', refused(rig).probeId, DEAD);
  assert.equal(of(ended, 'openSocket').length, 0);
  assert.deepEqual(rig.executor.uiState().connection, { status: 'offline', detail: `${A}: closed (code 1006); no answer at /health` });
});

test('a socket that never opens is closed and probed; a probe never answered counts as no answer', () => {
  const rig = rigOver([A, B]);
  const first = rig.connectionId;
  const timedOut = rig.at(T0 + SOCKET_OPEN_TIMEOUT_MS).do('tick');
  assert.deepEqual(of(timedOut, 'closeSocket').map((e) => e.connectionId), [first]);
  const [probe] = of(timedOut, 'probe');
  assert.equal(timedOut.at(-1).atMs, T0 + SOCKET_OPEN_TIMEOUT_MS + LEADER_PROBE_TIMEOUT_MS);
  const late = rig.do('socketOpened', first);
  assert.deepEqual([of(late, 'closeSocket').length, of(late, 'send').length], [1, 0], 'a socket given up on is closed, no hello');
  const next = rig.at(T0 + SOCKET_OPEN_TIMEOUT_MS + LEADER_PROBE_TIMEOUT_MS).do('tick');
  assert.deepEqual(of(next, 'openSocket').map((e) => e.url), [B]);
  assert.deepEqual(of(rig.do('probeAnswered', probe.probeId, standby('http://10.0.0.7:7411/mcp')), 'openSocket'), [], 'a late answer is ignored');
});

test('new daemon URLs start a new attempt from their first', () => {
  const rig = rigOver([A, B]);
  const probe = refused(rig);
  const changed = rig.do('settingsChanged', { ...SETTINGS, daemonUrls: [C, A] });
  assert.deepEqual(of(changed, 'openSocket').map((e) => e.url), [C]);
  const current = refused(rig);
  assert.deepEqual(of(rig.do('probeAnswered', probe.probeId, standby('http://10.0.0.6:7411/mcp')), 'openSocket'), [], 'the old probe is ignored');
  assert.equal(answer(rig, current, DEAD), A, 'the new list goes on');
});
