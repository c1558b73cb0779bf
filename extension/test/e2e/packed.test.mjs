// The store packages end to end: `npm run pack`'s ZIP and XPI, unzipped exactly as packed
// (no test-config.json, no token, nothing added or changed), load in headless Chromium (no
// warning on chrome://extensions) and Firefox ESR (the manifest's add-on id) and pair with
// the real daemon as a person does it. The extension's own settings page, opened at its
// address as from chrome://extensions or about:addons (Firefox launched so that its remote
// agent may go there, lib/browsers.mjs), says "Token missing"; the daemon's address is
// typed and saved (the test daemon listens on a free port, not the default 7411 the page
// also tries) and the page opened again, since it looks for the daemon when it opens; it
// finds the daemon on loopback through the daemon's CORS answer (the packages have no host
// permission for it); a fresh one-time code from the daemon (`POST /pair/code`, as
// `orchestrator pair` gets it) is typed and Pair pressed; the extension goes Live and the
// daemon sees that executor (its generated id, as the settings page shows it) connected.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pack } from '../../scripts/pack.mjs';
import { readZip } from '../../scripts/zip.mjs';
import { Daemon, EXECUTOR_TOKEN, MCP_TOKEN } from './lib/daemon.mjs';
import { BROWSERS, launchBrowser } from './lib/browsers.mjs';
import { until, evaluate, press, typeInto, reloadPage } from './lib/ui-pages.mjs';

const PACKAGE_OF = { chromium: 'chrome', firefox: 'firefox' };
const SETTINGS_PAGE = 'src/ui/settings.html';
const TEST_TIMEOUT_MS = 90_000;
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

/** The package's entries written out under `out`, and nothing else. */
function unzip(archive, out) {
  const entries = readZip(readFileSync(archive));
  for (const { name, data } of entries) {
    const path = join(out, ...name.split('/'));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, data);
  }
  return entries;
}

/** The daemon's `GET /health` (loopback, no Origin, the MCP token). */
async function health() {
  const response = await fetch(`http://127.0.0.1:${daemon.port}/health`, { headers: { authorization: `Bearer ${MCP_TOKEN}` } });
  assert.equal(response.status, 200);
  return response.json();
}

const text = (page, testid) => evaluate(page, (id) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? '', testid);
const value = (page, testid) => evaluate(page, (id) => document.querySelector(`[data-testid="${id}"]`)?.value ?? '', testid);
const connection = (page) => evaluate(page, () => document.querySelector('[data-testid="connection"]')?.dataset.status ?? '');

/** Waits until `read()` satisfies `ok`; a timeout names what was read last (the page's own words). */
async function untilRead(what, read, ok) {
  let last = null;
  await until(what, async () => ok((last = await read())), 20_000, () => last);
}

/**
 * The settings page in a new tab at its own address, once it has rendered. Firefox's remote
 * agent reports no navigation events for an extension page, so puppeteer's `goto` would
 * wait for them until its timeout: it is not awaited; a refused navigation is what the wait
 * reports.
 */
async function openSettings(browser) {
  const url = `${await browser.extensionOrigin()}/${SETTINGS_PAGE}`;
  const page = await browser.newPage();
  let navigation = 'under way';
  page.goto(url).then(() => { navigation = 'loaded'; }, (error) => { navigation = `failed: ${error.message}`; });
  await until(`${url} rendered`, () => evaluate(page, (expected) => location.href === expected
    && document.readyState === 'complete' && document.getElementById('connection')?.childElementCount > 0, url),
  20_000, () => navigation);
  return page;
}

for (const kind of BROWSERS) {
  test(`${kind}: the packed ${PACKAGE_OF[kind]} package loads and pairs with the daemon from its settings page`, { timeout: TEST_TIMEOUT_MS }, async () => {
    const extensionDir = join(dir, kind);
    const entries = unzip(packages[PACKAGE_OF[kind]], extensionDir);
    assert.ok(!entries.some(({ name }) => name === 'test-config.json'), 'the package carries no test config');
    assert.ok(!entries.some(({ data }) => data.includes(EXECUTOR_TOKEN)), 'the package carries no token');
    const browser = await launchBrowser(kind, extensionDir, { extensionPages: true });
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

      const settings = await openSettings(browser);
      await untilRead('token missing', () => connection(settings), (status) => status === 'token_missing');
      const host = `127.0.0.1:${daemon.port}`;
      await evaluate(settings, () => { document.querySelector('[data-testid="setting-daemon-url"]').value = ''; });
      await typeInto(settings, '[data-testid="setting-daemon-url"]', `ws://${host}/executor`);
      await press(settings, '[data-testid="settings-save"]', { what: 'Save' });
      await untilRead('saved', () => text(settings, 'settings-status'), (line) => line.startsWith('Saved.'));
      // The page looks for the daemon when it opens: opened again, it tries the saved address.
      await reloadPage(settings);
      await untilRead('the daemon found', () => text(settings, 'pair-status'), (line) => line === `Daemon found at ${host} — enter the pairing code.`);

      await typeInto(settings, '[data-testid="pair-code"]', await daemon.pairCode());
      await press(settings, '[data-testid="pair-submit"]', { what: 'Pair' });
      await untilRead('paired', () => text(settings, 'pair-status'), (line) => line.startsWith(`Paired with ${host}.`));
      await untilRead('live', () => connection(settings), (status) => status === 'live');
      assert.equal(await value(settings, 'setting-token'), EXECUTOR_TOKEN, 'the token the daemon handed over is saved');

      // The daemon's side: the executor the settings page names has said hello.
      const executorId = await value(settings, 'setting-executor-id');
      assert.match(executorId, /^ext-[0-9a-f]{16}$/, 'an executor id generated on first start');
      let seen = null;
      const connected = await until(`${executorId} connected (its hello accepted)`, async () => {
        seen = await health();
        return seen.executorKinds.find((e) => e.executorId === executorId) ?? null;
      }, 20_000, () => seen);
      assert.deepEqual(connected.kinds, ['chatgpt']);
    } finally {
      await browser.close();
    }
  });
}
