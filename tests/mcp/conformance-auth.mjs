// The conformance suite's authorization-server scenarios (`conformance authorization`,
// from the 0.2.0 alpha installed as `conformance-next`) against the real
// `orchestrator serve --public-url http://127.0.0.1:PORT`. The suite checks the RFC 8414
// metadata, then prints an authorization URL and waits on its own callback listener at
// http://127.0.0.1:CBPORT/callback. This harness plays the browser and the operator: it
// GETs the consent page, reads the short code off it, runs `orchestrator oauth approve
// CODE`, follows the page's refresh to the 303, and delivers that redirect (code, state,
// iss) to the suite's listener. The suite then exchanges the code itself.
//
// Usage: node conformance-auth.mjs ORCHESTRATOR_BIN   (run by conformance-auth.sh)
// Prints one line per scenario and a final `N passed, N failed` line (counting checks).

import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ORCHESTRATOR = process.argv[2];
const TOKEN = 'conformance-auth-token-0123456789';
const SUITE = join(dirname(fileURLToPath(import.meta.url)), 'node_modules/conformance-next/dist/index.js');
const DEADLINE_MS = 60_000;

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const dir = mkdtempSync(join(tmpdir(), 'orchestrator-conformance-auth-'));
const data = join(dir, 'data');
const children = [];

/** Stops the processes started here, waits for them, removes the temporary directory. */
async function finish(code) {
  await Promise.all(children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => {
    c.removeAllListeners('exit');
    const exited = new Promise((resolve) => { c.on('exit', resolve); setTimeout(resolve, 5_000).unref(); });
    c.kill('SIGTERM');
    return exited;
  }));
  rmSync(dir, { recursive: true, force: true });
  process.exit(code);
}

function fail(message) {
  console.log(message);
  console.log('0 passed, 1 failed');
  return finish(1);
}
process.on('uncaughtException', (e) => fail(`harness: ${e.stack ?? e}`));
process.on('unhandledRejection', (e) => fail(`harness: ${e?.stack ?? e}`));
setTimeout(() => fail(`timed out after ${DEADLINE_MS / 1000} s`), DEADLINE_MS).unref();

// The daemon, on a port chosen first so the public URL is its own loopback address.
const port = await freePort();
const issuer = `http://127.0.0.1:${port}`;
const log = join(dir, 'daemon.err');
const daemon = spawn(ORCHESTRATOR, ['serve', '--data-dir', data, '--listen', `127.0.0.1:${port}`,
  '--mcp-token', TOKEN, '--public-url', issuer], { stdio: ['ignore', 'pipe', openSync(log, 'w')] });
children.push(daemon);
await new Promise((resolve) => {
  const timer = setTimeout(() => fail(`the daemon did not start: ${readFileSync(log, 'utf8')}`), 30_000);
  createInterface({ input: daemon.stdout }).on('line', (line) => {
    if (line.startsWith('orchestrator: MCP endpoint ')) { clearTimeout(timer); resolve(); }
  });
  daemon.on('exit', (code) => fail(`the daemon exited ${code}: ${readFileSync(log, 'utf8')}`));
});

// A public client registered by DCR with the suite's loopback redirect.
const cbPort = await freePort();
const redirect = `http://127.0.0.1:${cbPort}/callback`;
const reg = await fetch(`${issuer}/oauth/register`, {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ client_name: 'mcp-conformance', redirect_uris: [redirect],
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }),
});
const regBody = await reg.text();
if (reg.status !== 201) fail(`registration: ${reg.status} ${regBody}`);
const clientId = JSON.parse(regBody).client_id;

/** The browser and the operator: consent page, `oauth approve`, the redirect to the suite. */
async function consent(url) {
  const page = await fetch(url, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`consent page: ${page.status} ${html}`);
  const code = html.split('id="human-code">')[1]?.split('<')[0];
  const poll = html.split(';url=')[1]?.split('"')[0]?.replaceAll('&amp;', '&');
  if (!code || !poll) throw new Error(`no code or refresh URL on the consent page: ${html}`);
  execFileSync(ORCHESTRATOR, ['oauth', 'approve', code, '--data-dir', data],
    { env: { ...process.env, ORCHESTRATOR_MCP_TOKEN: TOKEN }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  for (let i = 0; i < 50; i++) {
    const again = await fetch(poll, { redirect: 'manual' });
    await again.text();
    if (again.status === 303 || again.status === 302) {
      const location = again.headers.get('location');
      for (let attempt = 0; ; attempt++) {
        try {
          await (await fetch(location)).text();
          return;
        } catch (e) {
          // The suite prints the URL as it starts its listener; give it a moment.
          if (attempt >= 20) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    if (again.status !== 200) throw new Error(`after approval: ${again.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the consent page never redirected after approval');
}

const results = join(dir, 'results');
// The suite: both scenarios in one run (the grant scenario reads the metadata the first
// one fetched); -o saves each scenario's checks.
const suite = spawn(process.execPath, [SUITE, 'authorization', '--url', issuer, '--client-id', clientId,
  '--resource', `${issuer}/mcp`, '-p', String(cbPort), '-o', results], { stdio: ['ignore', 'pipe', 'pipe'] });
children.push(suite);
let out = '';
let harnessError = null;
suite.stderr.on('data', (d) => { out += d; });
createInterface({ input: suite.stdout }).on('line', (line) => {
  out += `${line}\n`;
  if (line.startsWith(`${issuer}/`) && line.includes('response_type=code')) {
    consent(line.trim()).catch((e) => { harnessError = e; suite.kill('SIGTERM'); });
  }
});
const exit = await new Promise((resolve) => suite.on('exit', (code) => resolve(code)));

// Per-check results from each scenario's checks.json (-o): the summary counts only
// SUCCESS and FAILURE, so warnings (e.g. no Client ID Metadata Documents) are shown here.
let passed = 0;
let failed = 0;
let harnessFailed = 0; // failures of this harness, not checks of the suite
const scenarios = ['authorization-server-metadata-endpoint', 'authorization-code-grant'];
const saved = existsSync(results) ? readdirSync(results) : [];
for (const name of scenarios) {
  const sub = saved.find((d) => d.startsWith(`authorization-server-${name}-`)
    && existsSync(join(results, d, 'checks.json')));
  if (!sub) {
    console.log(`FAIL ${name} (no results)`);
    harnessFailed += 1;
    continue;
  }
  const checks = JSON.parse(readFileSync(join(results, sub, 'checks.json'), 'utf8'));
  const count = (status) => checks.filter((c) => c.status === status).length;
  const [ok, bad, warn] = [count('SUCCESS'), count('FAILURE'), count('WARNING')];
  passed += ok;
  failed += bad;
  console.log(`${bad === 0 && ok > 0 ? 'ok  ' : 'FAIL'} ${name} (${ok} passed, ${bad} failed, ${warn} warnings)`);
  if (ok === 0 && bad === 0) harnessFailed += 1; // skipped: nothing was tested
  for (const c of checks.filter((c) => c.status !== 'SUCCESS')) {
    console.log(`     ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
  }
}
const total = out.match(/^Total: (\d+) passed, (\d+) failed$/m);
if (!total || Number(total[1]) !== passed || Number(total[2]) !== failed || (exit !== 0) !== (failed > 0)) {
  console.log(`FAIL the suite's summary (${total?.[0] ?? 'missing'}, exit ${exit}) disagrees with its checks`);
  harnessFailed += 1;
}
if (harnessError) {
  console.log(`FAIL harness: ${harnessError.message}`);
  harnessFailed += 1;
}
failed += harnessFailed;
if (failed > 0 || process.env.CONFORMANCE_VERBOSE) console.log(out);
console.log(`${passed} passed, ${failed} failed`);
await finish(failed > 0 ? 1 : 0);
