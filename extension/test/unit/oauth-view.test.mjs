// The dashboard's OAuth approval view (src/ui/oauth-view.js) against the golden
// `oauth_pending` answers of docs/protocol/fixtures and edge cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decodeDaemonMessage } from '../../src/core/protocol.js';
import { oauthView, oauthFailedView, expiresText, scopesText } from '../../src/ui/oauth-view.js';

const FIXTURES = fileURLToPath(new URL('../../../docs/protocol/fixtures/', import.meta.url));
const fixture = (name) => decodeDaemonMessage(readFileSync(FIXTURES + name, 'utf8').trimEnd());

test('the fixture answer: a waiting request with its code, host, scopes and expiry; a grant', () => {
  const answer = fixture('daemon.operator.data.oauth.json');
  const now = answer.data.pending[0].expiresAtMs - 9 * 60_000;
  const view = oauthView(answer, now);
  assert.equal(view.shown, true);
  assert.deepEqual(view.waiting, [{
    code: 'K7QH-2MPD', clientName: 'ChatGPT', selfRegistered: true, redirectHost: 'chatgpt.com',
    scopesText: 'use the orchestrator tools, stay signed in', expiresText: 'expires in 9m', label: 'ChatGPT (code K7QH-2MPD)',
  }]);
  assert.equal(view.grants.length, 1);
  assert.equal(view.grants[0].grantId, answer.data.grants[0].grantId);
  assert.equal(view.grants[0].clientName, 'Claude');
  assert.match(view.grants[0].connectedText, /^connected \d+d( \d+h)? ago$/);
  assert.equal(view.grants[0].lastUsedText, 'last signed in 51m ago');
  assert.equal(view.waitingEmptyText, null);
  assert.equal(view.grantsEmptyText, null);
});

test('OAuth off, a refused query or no answer yet: the section is not shown', () => {
  assert.equal(oauthView(fixture('daemon.operator.data.oauth_off.json'), 0).shown, false);
  assert.equal(oauthView({ ok: false, error: { code: 'OFFLINE', message: 'not connected' } }, 0).shown, false);
  assert.equal(oauthView(null, 0).shown, false);
});

test('requests: soonest to expire first, expired ones left out, names and hosts never empty', () => {
  const data = {
    enabled: true,
    grants: [],
    pending: [
      { code: 'BBBB-BBBB', clientName: ' ', selfRegistered: true, redirectHost: '', scopes: ['mcp'], expiresAtMs: 5_000_000 },
      { code: 'AAAA-AAAA', clientName: 'Later <b>', selfRegistered: true, redirectHost: 'claude.ai', scopes: ['mcp'], expiresAtMs: 1_060_000 },
      { code: 'CCCC-CCCC', clientName: 'Gone', selfRegistered: true, redirectHost: 'x', scopes: [], expiresAtMs: 1_000_000 },
      { clientName: 'no code' },
    ],
  };
  const view = oauthView({ ok: true, data }, 1_000_000);
  assert.deepEqual(view.waiting.map((w) => w.code), ['AAAA-AAAA', 'BBBB-BBBB']);
  assert.equal(view.waiting[0].clientName, 'Later <b>', 'names are text, shown as given');
  assert.equal(view.waiting[0].expiresText, 'expires in 1m');
  assert.equal(view.waiting[1].clientName, 'unnamed client');
  assert.equal(view.waiting[1].redirectHost, 'an unknown host');
  assert.equal(view.grantsEmptyText, 'No client is connected over OAuth.');
});

test('nothing waiting: the empty texts', () => {
  const view = oauthView({ ok: true, data: { enabled: true, pending: [], grants: [] } }, 0);
  assert.deepEqual([view.shown, view.waiting, view.grants], [true, [], []]);
  assert.equal(view.waitingEmptyText, 'No connection is waiting for your approval.');
});

test('a failed refresh keeps the last lists and says why', () => {
  const before = oauthView(fixture('daemon.operator.data.oauth.json'), 0);
  const after = oauthFailedView(before, { code: 'OFFLINE', message: 'not connected' });
  assert.equal(after.error, 'Could not refresh the connections: not connected');
  assert.deepEqual(after.grants, before.grants);
});

test('expiry and scope words', () => {
  assert.equal(expiresText(61_000, 0), 'expires in 1m');
  assert.equal(expiresText(10, 10), 'expired');
  assert.equal(expiresText(undefined, 0), 'expiry unknown');
  assert.equal(scopesText(['mcp', 'tools:write']), 'use the orchestrator tools, tools:write');
  assert.equal(scopesText(null), 'no scopes');
});
