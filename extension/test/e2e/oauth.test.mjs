// End to end, in headless Chromium and Firefox ESR: OAuth approval from the real
// extension's dashboard against the real daemon with `--public-url`. The test plays the
// client (ChatGPT's connector): it registers and starts an authorization over HTTP; the
// dashboard lists the waiting request (client name, self-registered, redirect host, the
// consent page's code); Approve makes the consent page redirect with a code, whose
// exchange gives a token `/mcp` accepts; the grant shows under Connected clients, and
// Revoke (after its confirmation) makes `/mcp` refuse the token.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld } from './lib/world.mjs';
import { until, evaluate, openExtensionPage, press } from './lib/ui-pages.mjs';

const REDIRECT = 'http://127.0.0.1:1/callback';
const VERIFIER = 'verifier-0123456789-0123456789-0123456789-abcdef';
const CLIENT_NAME = 'E2E connector';

/** PKCE S256 of `verifier`. */
async function challenge(verifier) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return Buffer.from(digest).toString('base64url');
}

/** The client's side: register, authorize (the consent page's code and poll URL), poll, exchange. */
async function startAuthorization(publicUrl) {
  const registered = await fetch(`${publicUrl}/oauth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: CLIENT_NAME, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  assert.equal(registered.status, 201, await registered.clone().text());
  const clientId = (await registered.json()).client_id;
  const query = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 'st-e2e', code_challenge_method: 'S256',
    code_challenge: await challenge(VERIFIER), resource: `${publicUrl}/mcp`, scope: 'mcp',
  });
  const page = await fetch(`${publicUrl}/oauth/authorize?${query}`, { redirect: 'manual' });
  const html = await page.text();
  assert.equal(page.status, 200, html);
  const code = html.split('id="human-code">')[1]?.split('<')[0];
  const poll = html.split('url=')[1]?.split('"')[0]?.replaceAll('&amp;', '&');
  assert.ok(code && poll, `the consent page shows a code and polls: ${html.slice(0, 400)}`);
  return { clientId, code, poll: new URL(poll, publicUrl).href };
}

async function exchange(publicUrl, clientId, code) {
  const body = new URLSearchParams({
    grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: VERIFIER, resource: `${publicUrl}/mcp`,
  });
  const answer = await fetch(`${publicUrl}/oauth/token`, { method: 'POST', body });
  assert.equal(answer.status, 200, await answer.clone().text());
  return (await answer.json()).access_token;
}

async function mcpStatus(publicUrl, token) {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } };
  const answer = await fetch(`${publicUrl}/mcp`, {
    method: 'POST', body: JSON.stringify(init),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
  });
  await answer.body?.cancel();
  return answer.status;
}

/** The dashboard's OAuth section, or null when it is not shown. */
function readOAuth(page) {
  return evaluate(page, () => {
    const section = document.querySelector('[data-testid="oauth"]');
    if (!section) return null;
    const text = (el, id) => el.querySelector(`[data-testid="${id}"]`)?.textContent.trim() ?? null;
    return {
      requests: [...section.querySelectorAll('[data-testid="oauth-request"]')].map((r) => ({
        code: r.dataset.code, client: text(r, 'oauth-client'), selfRegistered: text(r, 'oauth-self-registered'),
        host: text(r, 'oauth-host'), shownCode: text(r, 'oauth-code'), expires: text(r, 'oauth-expires'),
      })),
      grants: [...section.querySelectorAll('[data-testid="oauth-grant"]')].map((g) => ({ grantId: g.dataset.grantId, text: g.textContent })),
      waitingEmpty: text(section, 'oauth-waiting-empty'),
    };
  });
}

for (const kind of BROWSERS) {
  describe(`OAuth approval in the dashboard in ${kind}`, () => {
    test('a waiting connection is approved from the dashboard, listed, and revoked', () =>
      inWorld(kind, async (w) => {
        const publicUrl = w.daemon.publicUrl;
        const dashboard = await openExtensionPage(w, 'src/ui/dashboard.html');
        await until('the OAuth section, with nothing waiting', async () => (await readOAuth(dashboard))?.waitingEmpty);

        const { clientId, code, poll } = await startAuthorization(publicUrl);
        const shown = await until(`the request ${code} on the dashboard`, async () =>
          (await readOAuth(dashboard))?.requests.find((r) => r.code === code));
        assert.equal(shown.client, CLIENT_NAME);
        assert.equal(shown.selfRegistered, 'self-registered');
        assert.equal(shown.host, '127.0.0.1');
        assert.equal(shown.shownCode, code);
        assert.match(shown.expires, /expires in \d+m/);
        const waiting = await fetch(poll, { redirect: 'manual' });
        assert.equal(waiting.status, 200, 'the consent page waits for the operator');
        await waiting.body?.cancel();

        await press(dashboard, `[data-testid="oauth-request"][data-code="${code}"] [data-testid="oauth-approve"]`, { what: 'Approve' });
        const location = await until('the consent page to proceed', async () => {
          const answer = await fetch(poll, { redirect: 'manual' });
          await answer.body?.cancel();
          return answer.status === 303 && answer.headers.get('location');
        });
        const redirect = new URL(location);
        assert.equal(`${redirect.origin}${redirect.pathname}`, REDIRECT);
        assert.equal(redirect.searchParams.get('state'), 'st-e2e');
        const token = await exchange(publicUrl, clientId, redirect.searchParams.get('code'));
        assert.equal(await mcpStatus(publicUrl, token), 200, 'the approved client reaches /mcp');

        const grant = await until('the client under Connected clients', async () => {
          const view = await readOAuth(dashboard);
          return view?.requests.length === 0 && view.grants.find((g) => g.text.includes(CLIENT_NAME));
        });
        await press(dashboard, `[data-testid="oauth-grant"][data-grant-id="${grant.grantId}"] [data-testid="oauth-revoke"]`, { what: 'Revoke' });
        await press(dashboard, '[data-testid="confirm-accept"]', { what: 'the confirmation' });
        await until('the grant gone from the dashboard', async () => (await readOAuth(dashboard))?.grants.length === 0);
        assert.equal(await mcpStatus(publicUrl, token), 401, 'a revoked client is refused');
      }, { daemon: { oauth: true } }));
  });
}
