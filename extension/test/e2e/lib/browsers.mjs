// Launches headless Chromium (playwright-core) or Firefox ESR (puppeteer-core) from the
// Debian packages with a fresh profile and an extension (the test build, or a store package
// unzipped), behind one small interface; never downloads a browser. `extensionOrigin()`
// says where the extension's own pages are, so a test can open them as a person would
// (Firefox: with `{extensionPages: true}` only, see launchFirefox).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The browsers the tests run in; `E2E_BROWSERS=chromium` narrows it (e.g. while debugging). */
export const BROWSERS = (process.env.E2E_BROWSERS ?? 'chromium,firefox').split(',').filter(Boolean);
const CHROMIUM_BIN = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const FIREFOX_BIN = process.env.FIREFOX_BIN ?? '/usr/bin/firefox-esr';

/**
 * A browser with the extension loaded: `{kind, pages(), newPage(url), extensionOrigin(),
 * close()}` (Firefox: and `extensionId`). `extensionPages`: Firefox lets the test navigate
 * a tab to the extension's pages (launchFirefox).
 */
export async function launchBrowser(kind, extensionDir, { extensionPages = false } = {}) {
  const profile = mkdtempSync(join(tmpdir(), `orc-${kind}-`));
  if (kind === 'chromium') return launchChromium(extensionDir, profile);
  if (kind === 'firefox') return launchFirefox(extensionDir, profile, extensionPages);
  throw new Error(`unknown browser ${kind}`);
}

async function launchChromium(extensionDir, profile) {
  const { chromium } = await import('playwright-core');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_BIN,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      `--disable-extensions-except=${extensionDir}`,
      `--load-extension=${extensionDir}`,
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // Developer mode, as for anyone running an unpacked extension: without it Chromium
  // disables an unpacked extension that reloads itself ("unsupported developer extension").
  const extensionsPage = await context.newPage();
  await extensionsPage.goto('chrome://extensions/');
  await extensionsPage.evaluate(() => new Promise((resolve) => {
    globalThis.chrome.developerPrivate.updateProfileConfiguration({ inDeveloperMode: true }, resolve);
  }));
  await extensionsPage.close();
  return {
    kind: 'chromium',
    /** The Playwright context, for Chromium-only measurements (CDP). */
    context,
    pages: async () => context.pages(),
    /** `chrome-extension://<id>`: the id Chromium derived from the folder, read off the service worker's address. */
    extensionOrigin: async () => {
      const worker = context.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://'))
        ?? await context.waitForEvent('serviceworker', { predicate: (w) => w.url().startsWith('chrome-extension://') });
      return `chrome-extension://${new URL(worker.url()).host}`;
    },
    newPage: async (url) => {
      const page = await context.newPage();
      if (url) await page.goto(url);
      return page;
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The moz-extension:// host the add-on gets with `{extensionPages: true}` (Firefox draws a
 * random one per profile unless the pref `extensions.webextensions.uuids` names it).
 */
const FIREFOX_EXTENSION_UUID = '0e5c7a1d-5e1f-4c2a-9b3d-7a61c0de0001';

/** The add-on's id, as its manifest names it. */
function geckoId(extensionDir) {
  return JSON.parse(readFileSync(join(extensionDir, 'manifest.json'), 'utf8')).browser_specific_settings.gecko.id;
}

/**
 * `extensionPages`: the add-on's host is fixed (FIREFOX_EXTENSION_UUID) and the remote agent
 * may navigate a tab to it (`--remote-allow-system-access`; without it WebDriver BiDi
 * refuses moz-extension:// addresses, "is not allowed in this context"). The test build
 * opens its pages through its test hook instead, so only a store package needs this.
 */
async function launchFirefox(extensionDir, profile, extensionPages) {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_BIN,
    headless: true,
    userDataDir: profile,
    defaultViewport: { width: 1280, height: 900 },
    ...(extensionPages ? {
      args: ['--remote-allow-system-access'],
      extraPrefsFirefox: { 'extensions.webextensions.uuids': JSON.stringify({ [geckoId(extensionDir)]: FIREFOX_EXTENSION_UUID }) },
    } : {}),
  });
  const extensionId = await browser.installExtension(extensionDir);
  return {
    kind: 'firefox',
    /** The id Firefox gave the extension: its manifest's `browser_specific_settings.gecko.id`. */
    extensionId,
    pages: async () => browser.pages(),
    extensionOrigin: async () => {
      if (!extensionPages) throw new Error('launch Firefox with {extensionPages: true} to open the extension\'s pages');
      return `moz-extension://${FIREFOX_EXTENSION_UUID}`;
    },
    newPage: async (url) => {
      const page = await browser.newPage();
      if (url) await page.goto(url);
      return page;
    },
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
