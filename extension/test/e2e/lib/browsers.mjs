// Launches headless Chromium (playwright-core) or Firefox ESR (puppeteer-core) from the
// Debian packages with a fresh profile and the test build of the extension, behind one
// small interface; never downloads a browser.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The browsers the tests run in; `E2E_BROWSERS=chromium` narrows it (e.g. while debugging). */
export const BROWSERS = (process.env.E2E_BROWSERS ?? 'chromium,firefox').split(',').filter(Boolean);
const CHROMIUM_BIN = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const FIREFOX_BIN = process.env.FIREFOX_BIN ?? '/usr/bin/firefox-esr';

/** A browser with the extension loaded: `{kind, pages(), newPage(url), close()}` (Firefox: and `extensionId`). */
export async function launchBrowser(kind, extensionDir) {
  const profile = mkdtempSync(join(tmpdir(), `orc-${kind}-`));
  if (kind === 'chromium') return launchChromium(extensionDir, profile);
  if (kind === 'firefox') return launchFirefox(extensionDir, profile);
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

async function launchFirefox(extensionDir, profile) {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_BIN,
    headless: true,
    userDataDir: profile,
    defaultViewport: { width: 1280, height: 900 },
  });
  const extensionId = await browser.installExtension(extensionDir);
  return {
    kind: 'firefox',
    /** The id Firefox gave the extension: its manifest's `browser_specific_settings.gecko.id`. */
    extensionId,
    pages: async () => browser.pages(),
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
