// End to end, in headless Chromium and Firefox ESR: the extension follows the leader among
// several daemon URLs (docs/scale-out.md "Following the leader"). Its list is a dead
// address and a stand-in standby: a loopback server answering every request, the
// WebSocket upgrade included, as a standby daemon does (503 `NOT_LEADER` naming the leader,
// with `Access-Control-Allow-Origin: *`; the daemon's own answer is checked in
// `standby_route.rs`), addressed as localhost so the test build's host permission for
// 127.0.0.1 does not lift CORS. While the standby names no leader the settings page says
// "No leader" and what each address said; once it names the real daemon, the extension
// follows it there and goes Live (the daemon sees its hello); when that daemon is killed
// and the standby names another one (a failover), the extension starts from its list again
// and goes Live on the other.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld } from './lib/world.mjs';
import { Daemon, MCP_TOKEN } from './lib/daemon.mjs';
import { until, evaluate, openExtensionPage } from './lib/ui-pages.mjs';

const read = (page, testid) => evaluate(page, (id) => {
  const node = document.querySelector(`[data-testid="${id}"]`);
  return id === 'connection' ? node?.dataset.status ?? '' : node?.textContent ?? '';
}, testid);

/** A stand-in standby on a free loopback port: `leader` is the MCP URL it names ('' none). */
async function standIn() {
  const server = createServer();
  const stand = { leader: '', server };
  const answer = () => JSON.stringify({ code: 'NOT_LEADER', message: `not the leader; the leader is ${stand.leader || 'unknown'}`, leader: stand.leader, epoch: 2 });
  server.on('request', (request, response) => {
    response.writeHead(503, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
    response.end(answer());
  });
  server.on('upgrade', (request, socket) => {
    const body = answer();
    socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  stand.port = server.address().port;
  return stand;
}

/** A loopback port nothing listens on (it was free a moment ago). */
async function deadPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether `daemon` has executor `executorId` connected (its `GET /health`). */
async function connectedTo(daemon, executorId) {
  const response = await fetch(`http://127.0.0.1:${daemon.port}/health`, { headers: { authorization: `Bearer ${MCP_TOKEN}` } });
  const health = await response.json();
  return (health.executorKinds ?? []).some((e) => e.executorId === executorId);
}

for (const kind of BROWSERS) {
  describe(`following the leader (${kind})`, () => {
    test('no leader said, then the named leader reached, then a failover followed', { timeout: 120_000 }, async () => {
      const standby = await standIn();
      const dead = `ws://localhost:${await deadPort()}/executor`;
      const standbyUrl = `ws://localhost:${standby.port}/executor`;
      const other = new Daemon();
      try {
        await inWorld(kind, async (w) => {
          const settings = await openExtensionPage(w, 'src/ui/settings.html');
          await until('no leader', async () => (await read(settings, 'connection')) === 'no_leader');
          const hint = await read(settings, 'connection-hint');
          assert.match(hint, /^No daemon answered as the leader: /, hint);
          assert.ok(hint.includes(`${dead}: `) && hint.includes('no answer at /health'), hint);
          assert.ok(hint.includes(`${standbyUrl}: a standby that names no leader yet (NOT_LEADER)`), hint);

          standby.leader = w.daemon.mcpUrl;
          await until('live on the named leader', async () => (await read(settings, 'connection')) === 'live', 30_000);
          await until('the leader has the executor', () => connectedTo(w.daemon, `e2e-${kind}`));

          // The failover: the leader dies and the standby names the one promoted.
          await other.start();
          standby.leader = other.mcpUrl;
          await w.daemon.kill9();
          await until('the other daemon has the executor', () => connectedTo(other, `e2e-${kind}`), 30_000);
          await until('live again', async () => (await read(settings, 'connection')) === 'live');
        }, { settings: { daemonUrls: [dead, standbyUrl] } });
      } finally {
        await other.dispose();
        await new Promise((resolve) => standby.server.close(resolve));
      }
    });
  });
}
