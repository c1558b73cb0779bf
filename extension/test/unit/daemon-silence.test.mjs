// A daemon stopped without dying (SIGSTOP, a hung host) keeps the socket open, and a
// browser's WebSocket cannot ping: the extension asks in its hello for its heartbeats to be
// answered (capabilities.heartbeatEcho), and leaves a daemon that answered before and then
// sent nothing for DAEMON_SILENCE_HEARTBEATS_MAX heartbeat intervals, so the next attempt
// finds the leader that took over. A daemon that never answers heartbeats (one from before
// the echo) is never left for its silence.

import test from 'node:test';
import assert from 'node:assert/strict';
import { Rig, T0 } from './executor-harness.mjs';
import { DAEMON_SILENCE_HEARTBEATS_MAX } from '../../src/core/daemon-link.js';

const HEARTBEAT_MS = 20_000;
const closes = (effects) => effects.filter((e) => e.kind === 'closeSocket');

test('the hello asks for heartbeat answers', () => {
  const rig = new Rig();
  const hello = rig.connect({ heartbeatMs: HEARTBEAT_MS });
  assert.deepEqual(hello.capabilities, { steering: true, operator: true, heartbeatEcho: true });
});

test('a daemon that answered heartbeats and then went silent is left, and reconnecting starts', () => {
  const rig = new Rig();
  rig.connect({ heartbeatMs: HEARTBEAT_MS });
  // Heartbeats go out and are answered: the socket stays.
  let t = T0;
  for (let i = 0; i < 5; i += 1) {
    t += HEARTBEAT_MS;
    assert.equal(closes(rig.at(t).do('tick')).length, 0, 'answered: kept');
    rig.daemon({ type: 'heartbeat' });
  }
  assert.equal(rig.executor.uiState().connection.status, 'live');
  // The daemon stops: heartbeats go out, nothing comes back.
  const silentSince = t;
  let left = null;
  while (t < silentSince + (DAEMON_SILENCE_HEARTBEATS_MAX + 1) * HEARTBEAT_MS && !left) {
    t += 1_000;
    left = closes(rig.at(t).do('tick'))[0] ?? null;
  }
  assert.ok(left, 'left after the silence');
  assert.equal(t - silentSince, DAEMON_SILENCE_HEARTBEATS_MAX * HEARTBEAT_MS, 'exactly at the limit, not before');
  assert.match(left.reason, /sent nothing for 60 s, not even an answer to a heartbeat \(stopped or hung\)/);
  assert.notEqual(rig.executor.uiState().connection.status, 'live');
  // The next attempt opens a new socket (to the list's first URL, as after any drop).
  const before = rig.all('openSocket').length;
  rig.at(t + 60_000).do('tick');
  assert.equal(rig.all('openSocket').length, before + 1, 'a new attempt');
});

test('any message from the daemon counts as heard', () => {
  const rig = new Rig();
  rig.connect({ heartbeatMs: HEARTBEAT_MS });
  rig.at(T0 + HEARTBEAT_MS).do('tick');
  rig.daemon({ type: 'heartbeat' });
  // Past the limit counted from the echo, but the daemon sent a summary meanwhile.
  rig.at(T0 + 3 * HEARTBEAT_MS).daemon({ type: 'operator.summary', runs: [] });
  assert.equal(closes(rig.at(T0 + (DAEMON_SILENCE_HEARTBEATS_MAX + 1) * HEARTBEAT_MS).do('tick')).length, 0);
});

test('a daemon that never answers heartbeats is never left for its silence', () => {
  const rig = new Rig();
  rig.connect({ heartbeatMs: HEARTBEAT_MS });
  for (let t = T0; t <= T0 + 20 * HEARTBEAT_MS; t += 5_000) {
    assert.equal(closes(rig.at(t).do('tick')).length, 0, `kept at ${t - T0} ms`);
  }
  assert.equal(rig.executor.uiState().connection.status, 'live');
});
