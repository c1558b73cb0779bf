// The store packages end to end: `npm run pack`'s ZIP and XPI, unzipped as they are, load
// in headless Chromium and Firefox ESR and connect to the real daemon. The token comes as
// in every e2e test, in a test-config.json beside the manifest (src/platform/storage.js
// reads it on first start); nothing else is added to or changed in the package.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pack } from '../../scripts/pack.mjs';
import { readZip } from '../../scripts/zip.mjs';
import { Daemon, EXECUTOR_TOKEN, MCP_TOKEN } from './lib/daemon.mjs';
import { BROWSERS, launchBrowser } from './lib/browsers.mjs';
import { until } from './lib/ui-pages.mjs';

const PACKAGE_OF = { chromium: 'chrome', firefox: 'firefox' };
const CONNECT_TIMEOUT_MS = 20_000;
let dir;
let daemon;
let packages;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orc-packed-'));
  packages = pack(join(dir, 'dist'));
  daemon = await new Daemon().start();
});

after(async () => {
  await daemon?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The package's entries written out under `out`, plus the test config naming the daemon and token. */
function unzipWithConfig(archive, out, executorId) {
  for (const { name, data } of readZip(readFileSync(archive))) {
    const path = join(out, ...name.split('/'));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, data);
  }
  const settings = { daemonUrl: daemon.executorUrl, token: EXECUTOR_TOKEN, executorId };
  writeFileSync(join(out, 'test-config.json'), JSON.stringify({ settings }));
  return out;
}

/** The daemon's `GET /health` (loopback, no Origin, the MCP token). */
async function health() {
  const response = await fetch(`http://127.0.0.1:${daemon.port}/health`, { headers: { authorization: `Bearer ${MCP_TOKEN}` } });
  assert.equal(response.status, 200);
  return response.json();
}

for (const kind of BROWSERS) {
  test(`${kind}: the packed ${PACKAGE_OF[kind]} package loads and connects to the daemon`, async () => {
    const executorId = `packed-${kind}`;
    const extensionDir = unzipWithConfig(packages[PACKAGE_OF[kind]], join(dir, kind), executorId);
    const browser = await launchBrowser(kind, extensionDir);
    try {
      if (kind === 'chromium') {
        // What chrome://extensions shows a person in Developer mode (on since the launch; a
        // reload makes Chromium collect the manifest's warnings): no warning, no error.
        const page = await browser.newPage('chrome://extensions/');
        const ours = () => page.evaluate((path) => new Promise((resolve) => {
          globalThis.chrome.developerPrivate.getExtensionsInfo({ includeDisabled: true },
            (infos) => resolve(infos.filter((info) => info.path === path)));
        }), extensionDir);
        const [{ id }] = await ours();
        await page.evaluate((extensionId) => new Promise((resolve) => {
          globalThis.chrome.developerPrivate.reload(extensionId, { failQuietly: true }, resolve);
        }), id);
        const seen = (await ours()).map(({ state, installWarnings, manifestErrors, runtimeErrors }) =>
          ({ state, installWarnings, manifestErrors: manifestErrors.map((e) => e.message), runtimeErrors }));
        assert.deepEqual(seen, [{ state: 'ENABLED', installWarnings: [], manifestErrors: [], runtimeErrors: [] }]);
        await page.close();
      }
      if (kind === 'firefox') {
        const manifest = JSON.parse(readFileSync(join(extensionDir, 'manifest.json'), 'utf8'));
        assert.equal(browser.extensionId, manifest.browser_specific_settings.gecko.id, 'Firefox takes the manifest\'s id');
      }
      let seen = null;
      const connected = await until(`${executorId} connected (its hello accepted)`, async () => {
        seen = await health();
        return seen.executorKinds.find((e) => e.executorId === executorId) ?? null;
      }, CONNECT_TIMEOUT_MS, () => seen);
      assert.deepEqual(connected.kinds, ['chatgpt']);
    } finally {
      await browser.close();
    }
  });
}
