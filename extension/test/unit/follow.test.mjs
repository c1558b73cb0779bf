// Following the leader (src/core/follow.js), as `address::follow`'s tests in Rust: a
// standby's answer read, the executor endpoint of a named leader, the URLs in order each
// once, the named leader first, no loop, the hop limit, a standby that names no leader.

import test from 'node:test';
import assert from 'node:assert/strict';
import {
  executorUrlOf, Follow, LEADER_HOPS_MAX, leaderNamed, probeUrlOf, readProbe,
} from '../../src/core/follow.js';

test('a standby answer names the leader and nothing else does', () => {
  const body = '{"code":"NOT_LEADER","message":"m","leader":"http://10.0.0.5:7411/mcp","epoch":3}';
  assert.equal(leaderNamed(body), 'http://10.0.0.5:7411/mcp');
  assert.equal(leaderNamed('{"code":"NOT_LEADER","leader":""}'), '');
  assert.equal(leaderNamed('{"code":"NOT_LEADER"}'), '');
  assert.equal(leaderNamed('{"code":"OTHER","leader":"http://x/mcp"}'), null);
  assert.equal(leaderNamed('{"status":"ok"}'), null);
  assert.equal(leaderNamed('not json'), null);
  assert.equal(leaderNamed(''), null);
  assert.equal(leaderNamed(undefined), null);
});

test('the executor endpoint of a leader is its host and port with /executor', () => {
  assert.equal(executorUrlOf('http://10.0.0.5:7411/mcp'), 'ws://10.0.0.5:7411/executor');
  assert.equal(executorUrlOf('https://o.example/mcp?x'), 'wss://o.example/executor');
  assert.equal(executorUrlOf('http://[::1]:7411'), 'ws://[::1]:7411/executor');
  assert.equal(executorUrlOf('ws://h:1/executor'), null);
  assert.equal(executorUrlOf('http:///mcp'), null);
  assert.equal(executorUrlOf('unknown'), null);
});

test('a socket that did not open is asked at /health on the same host and port', () => {
  assert.equal(probeUrlOf('ws://10.0.0.5:7411/executor'), 'http://10.0.0.5:7411/health');
  assert.equal(probeUrlOf('wss://o.example/executor'), 'https://o.example/health');
  assert.equal(probeUrlOf('ws://[::1]:7411/executor?x'), 'http://[::1]:7411/health');
});

test('the URLs are tried in order, each once', () => {
  const follow = new Follow(['ws://a/executor', 'ws://b/executor', 'ws://a/executor']);
  assert.equal(follow.nextUrl(), 'ws://a/executor');
  follow.failed('ws://a/executor', 'nothing answers');
  assert.equal(follow.nextUrl(), 'ws://b/executor');
  follow.failed('ws://b/executor', 'HTTP 500');
  assert.equal(follow.nextUrl(), null, 'a repeated URL is not tried twice');
  assert.equal(follow.tried, 2);
  assert.equal(follow.standbys, 0);
  assert.equal(follow.noLeader(), 'ws://a/executor: nothing answers; ws://b/executor: HTTP 500');
});

test('a named leader is tried next, before the rest of the list', () => {
  const follow = new Follow(['ws://s/executor', 'ws://t/executor']);
  assert.equal(follow.nextUrl(), 'ws://s/executor');
  follow.notLeader('ws://s/executor', 'http://l/mcp', 'ws://l/executor');
  assert.equal(follow.nextUrl(), 'ws://l/executor');
  follow.failed('ws://l/executor', 'nothing answers');
  assert.equal(follow.nextUrl(), 'ws://t/executor');
  assert.equal(follow.standbys, 1);
});

test('a leader in clear named over TLS is not followed', () => {
  const follow = new Follow(['wss://s/executor']);
  assert.equal(follow.nextUrl(), 'wss://s/executor');
  follow.notLeader('wss://s/executor', 'http://l/mcp', 'ws://l/executor');
  assert.equal(follow.nextUrl(), null, 'the token never goes in clear to a leader a TLS daemon named');
  assert.match(follow.noLeader(), /\(in clear, named over TLS: not followed\)/);
  const upgrade = new Follow(['ws://s/executor']);
  upgrade.nextUrl();
  upgrade.notLeader('ws://s/executor', 'https://l/mcp', 'wss://l/executor');
  assert.equal(upgrade.nextUrl(), 'wss://l/executor');
});

test('two standbys naming each other are no loop', () => {
  const follow = new Follow(['ws://a/executor']);
  assert.equal(follow.nextUrl(), 'ws://a/executor');
  follow.notLeader('ws://a/executor', 'http://b/mcp', 'ws://b/executor');
  assert.equal(follow.nextUrl(), 'ws://b/executor');
  follow.notLeader('ws://b/executor', 'http://a/mcp', 'ws://a/executor');
  assert.equal(follow.nextUrl(), null);
  assert.match(follow.noLeader(), /ws:\/\/b\/executor: a standby naming the leader http:\/\/a\/mcp \(NOT_LEADER\) \(already tried\)$/);
});

test('at most the hop limit of leaders is followed', () => {
  const follow = new Follow(['ws://s0/executor']);
  let followed = 0;
  let url = follow.nextUrl();
  while (url !== null) {
    const named = `http://s${followed + 1}/mcp`;
    follow.notLeader(url, named, executorUrlOf(named));
    url = follow.nextUrl();
    if (url !== null) followed += 1;
    assert.ok(followed <= LEADER_HOPS_MAX, 'followed past the limit');
  }
  assert.equal(followed, LEADER_HOPS_MAX);
  assert.match(follow.noLeader(), /\(hop limit reached\)$/);
});

test('a standby that names no leader, or one that cannot be followed, is not followed', () => {
  const follow = new Follow(['ws://s/executor']);
  follow.nextUrl();
  follow.notLeader('ws://s/executor', '', null);
  assert.equal(follow.nextUrl(), null);
  assert.match(follow.noLeader(), /names no leader yet/);
  const other = new Follow(['ws://s/executor']);
  other.nextUrl();
  other.notLeader('ws://s/executor', 'unknown', null);
  assert.equal(other.nextUrl(), null);
  assert.match(other.noLeader(), /not a URL the extension can follow/);
});

test('a probe answer: a standby followed to its leader, anything else passed with what it said', () => {
  const follow = new Follow(['ws://dead/executor', 'ws://s/executor', 'ws://odd/executor', 'ws://slow/executor']);
  readProbe(follow, follow.nextUrl(), 'closed (code 1006)', { error: 'Failed to fetch' });
  assert.equal(follow.nextUrl(), 'ws://s/executor', 'a dead URL is passed');
  readProbe(follow, 'ws://s/executor', 'closed (code 1006)', { status: 503, body: '{"code":"NOT_LEADER","leader":"https://l:7411/mcp"}' });
  assert.equal(follow.nextUrl(), 'wss://l:7411/executor', 'the leader it names, as an executor URL');
  readProbe(follow, 'wss://l:7411/executor', 'closed (code 1006)', { status: 200, body: '{"status":"ok"}' });
  assert.equal(follow.nextUrl(), 'ws://odd/executor');
  readProbe(follow, 'ws://odd/executor', 'closed (code 1006)', { status: 503, body: '{"code":"NOT_LEADER","leader":""}' });
  assert.equal(follow.nextUrl(), 'ws://slow/executor');
  readProbe(follow, 'ws://slow/executor', 'the socket did not open in time', null);
  assert.equal(follow.nextUrl(), null);
  assert.equal(follow.noLeader(), [
    'ws://dead/executor: closed (code 1006); no answer at /health',
    'ws://s/executor: a standby naming the leader https://l:7411/mcp (NOT_LEADER)',
    'wss://l:7411/executor: closed (code 1006); /health answered HTTP 200',
    'ws://odd/executor: a standby that names no leader yet (NOT_LEADER)',
    'ws://slow/executor: the socket did not open in time; no answer at /health in time',
  ].join('; '));
  assert.equal(follow.standbys, 2);
});
