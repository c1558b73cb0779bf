// OAuth with the official TypeScript SDK's client (`OAuthClientProvider` implemented the
// way an application does, `StreamableHTTPClientTransport` with `authProvider`) against
// the real `orchestrator serve --public-url http://127.0.0.1:PORT`: the SDK discovers,
// registers, sends the browser to authorize, and exchanges the code after `finishAuth`;
// the test plays the browser and the operator (`orchestrator oauth approve CODE`). Then
// tools run, and a stale access token makes the SDK refresh (rotating the refresh token).
//
// Run by run.sh with the Node 22 from node_modules and ORCHESTRATOR_BIN set.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const ORCHESTRATOR = process.env.ORCHESTRATOR_BIN;
const TOKEN = 'typescript-oauth-token-0123456789';
const REDIRECT = 'http://127.0.0.1:1/callback';

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startDaemon({ oauth = true } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'orchestrator-ts-oauth-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const log = join(dir, 'stderr.log');
  const child = spawn(ORCHESTRATOR, ['serve', '--data-dir', data, '--listen', `127.0.0.1:${port}`,
    '--mcp-token', TOKEN, ...(oauth ? ['--public-url', publicUrl] : []), '--log-level', 'debug'], { stdio: ['ignore', 'pipe', openSync(log, 'w')] });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the daemon did not start in time')), 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const prefix = 'orchestrator: MCP endpoint ';
      if (line.startsWith(prefix)) {
        clearTimeout(timer);
        resolve(line.slice(prefix.length).trim());
      }
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${readFileSync(log, 'utf8')}`)));
  });
  return {
    url, publicUrl, data,
    logs: () => readFileSync(log, 'utf8'),
    cli: (...args) => execFileSync(ORCHESTRATOR, ['oauth', ...args, '--data-dir', data],
      { env: { ...process.env, ORCHESTRATOR_MCP_TOKEN: TOKEN }, encoding: 'utf8' }),
    stop: () => new Promise((resolve) => { child.removeAllListeners('exit'); child.on('exit', resolve); child.kill('SIGTERM'); }),
  };
}

/** An application's provider: in memory; the "browser" step is recorded for the test. */
class Provider {
  constructor() { this.saved = {}; this.authorizations = []; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none', client_name: 'typescript-sdk-oauth-test' };
  }
  state() { return 'ts-state-1'; }
  clientInformation() { return this.saved.client; }
  saveClientInformation(info) { this.saved.client = info; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  redirectToAuthorization(url) { this.authorizations.push(url); }
  saveCodeVerifier(v) { this.saved.verifier = v; }
  codeVerifier() { return this.saved.verifier; }
}

/** The browser and the operator: consent page, `oauth approve`, the redirect's query. */
async function approve(daemon, authorizationUrl) {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  assert.equal(page.status, 200);
  const html = await page.text();
  const human = html.match(/id="human-code">([A-Z0-9-]+)</)[1];
  const poll = html.match(/url=([^"]+)"/)[1].replaceAll('&amp;', '&');
  assert.match(daemon.cli('approve', human), /decided/);
  const done = await fetch(poll, { redirect: 'manual' });
  assert.equal(done.status, 303);
  return new URL(done.headers.get('location')).searchParams;
}

async function connect(url, provider) {
  const client = new Client({ name: 'ts-oauth', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return client;
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.ok(!result.isError, `${name}: ${result.content?.[0]?.text}`);
  return result.structuredContent;
}

test('the TypeScript SDK: register, authorize with operator approval, token, tools, refresh', async () => {
  const daemon = await startDaemon();
  try {
    const provider = new Provider();
    const transport = new StreamableHTTPClientTransport(new URL(daemon.url), { authProvider: provider });
    const first = new Client({ name: 'ts-oauth', version: '1.0.0' });
    await assert.rejects(first.connect(transport), UnauthorizedError, 'no token yet: the SDK starts OAuth');
    assert.equal(provider.authorizations.length, 1);
    const authorizationUrl = provider.authorizations[0];
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorizationUrl.searchParams.get('resource'), daemon.url);
    const query = await approve(daemon, authorizationUrl);
    assert.equal(query.get('iss'), daemon.publicUrl);
    assert.equal(query.get('state'), 'ts-state-1');
    await transport.finishAuth(query.get('code'));
    const tokens = provider.saved.tokens;
    assert.match(tokens.access_token, /^oat_/);

    const client = await connect(daemon.url, provider);
    const run = await call(client, 'run_create', { taskName: 'TS OAuth', rootConversationName: 'Root' });
    const lane = await call(client, 'worker_spawn', { runId: run.runId, name: '/root/lane', taskSummary: 't',
      assignment: { objective: 'o' }, start: false });
    await call(client, 'worker_progress', { workerId: lane.workerId, summary: 'half way' });
    const page = await call(client, 'events_wait', { cursor: 0, runId: run.runId, timeoutMs: 100 });
    assert.ok(page.events.some((e) => e.name === 'worker.progress' || e.name === 'run.created'));
    await client.close();

    // A stale access token: the 401 makes the SDK refresh, without a new authorization.
    provider.saved.tokens = { ...tokens, access_token: 'oat_stale' };
    const again = await connect(daemon.url, provider);
    await call(again, 'run_list', {});
    await again.close();
    assert.equal(provider.authorizations.length, 1, 'refreshed, not re-authorized');
    assert.notEqual(provider.saved.tokens.refresh_token, tokens.refresh_token, 'rotated');

    // The code cannot be used again, and using it revokes the grant it produced, refreshed
    // tokens included (OAuth 2.1 section 4.1.3).
    const replay = await fetch(`${daemon.publicUrl}/oauth/token`, { method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: query.get('code'),
        client_id: provider.saved.client.client_id, redirect_uri: REDIRECT, code_verifier: provider.saved.verifier }) });
    assert.equal((await replay.json()).error, 'invalid_grant');
    const revoked = await fetch(`${daemon.publicUrl}/oauth/token`, { method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: provider.saved.tokens.refresh_token,
        client_id: provider.saved.client.client_id }) });
    assert.equal((await revoked.json()).error, 'invalid_grant', 'the refreshed grant is revoked');

    const logs = daemon.logs();
    for (const secret of [tokens.access_token, tokens.refresh_token, provider.saved.tokens.access_token,
      provider.saved.tokens.refresh_token, query.get('code'), provider.saved.verifier]) {
      assert.ok(!logs.includes(secret), 'a secret in the daemon log');
    }
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});

test('the authorization server refuses plain PKCE, a foreign resource and an altered redirect', async () => {
  const daemon = await startDaemon();
  try {
    const register = await fetch(`${daemon.publicUrl}/oauth/register`, { method: 'POST',
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT] }) });
    const { client_id } = await register.json();
    const base = { response_type: 'code', client_id, redirect_uri: REDIRECT, state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', resource: daemon.url };
    for (const [change, error] of [[{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ resource: 'https://other.example/mcp' }, 'invalid_target']]) {
      const answer = await fetch(`${daemon.publicUrl}/oauth/authorize?${new URLSearchParams({ ...base, ...change })}`, { redirect: 'manual' });
      assert.equal(answer.status, 303);
      const q = new URL(answer.headers.get('location')).searchParams;
      assert.deepEqual([q.get('error'), q.get('iss'), q.get('state')], [error, daemon.publicUrl, 's']);
    }
    const altered = await fetch(`${daemon.publicUrl}/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: 'http://127.0.0.1:1/other' })}`, { redirect: 'manual' });
    assert.equal(altered.status, 400);
    assert.equal(altered.headers.get('location'), null);
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});

// The Secure MCP Tunnel path: OpenAI's tunnel-client adds the static bearer on the last
// hop. auth-proxy.mjs plays that hop on loopback; the client behind it sends no credential.
for (const oauth of [true, false]) {
  test(`a tunnel-like proxy adding the bearer reaches the tools (OAuth ${oauth ? 'on' : 'off'})`, async () => {
    const daemon = await startDaemon({ oauth });
    const port = await freePort();
    const proxy = spawn(process.execPath, ['auth-proxy.mjs', String(port), daemon.url.replace(/\/mcp$/, ''), TOKEN],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve) => createInterface({ input: proxy.stdout }).once('line', resolve));
      const client = new Client({ name: 'behind-tunnel', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      const run = await call(client, 'run_create', { taskName: 'Tunnel', rootConversationName: 'Root' });
      await call(client, 'worker_progress', { workerId: run.rootWorkerId, summary: 'through the tunnel' });
      await client.close();
      // Straight to the daemon without the header: refused. The OAuth hint appears only
      // because this test's public URL is itself loopback (docs/connect.md).
      const bare = await fetch(daemon.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(bare.status, 401);
      const challenge = bare.headers.get('www-authenticate');
      if (oauth) assert.match(challenge, /resource_metadata=/);
      else assert.equal(challenge, 'Bearer realm="orchestrator"');
    } finally {
      proxy.kill('SIGTERM');
      assert.equal(await daemon.stop(), 0);
    }
  });
}
