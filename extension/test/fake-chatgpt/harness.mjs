// Shared pieces of the fake page's self-tests: launching headless Chromium (playwright-core) or
// Firefox ESR (puppeteer-core) without the extension, a tally of named checks that prints
// `N passed, M failed`, and polling a page until an expression holds.
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { fileURLToPath } from 'node:url';

import { readFileSync } from 'node:fs';

const EXTENSION_DIR = new URL('../../', import.meta.url);
const MANIFEST = JSON.parse(readFileSync(new URL('manifest.json', EXTENSION_DIR), 'utf8'));
/** The page readers, in the manifest's order: its content scripts up to selectors.js. */
export const READER_SCRIPTS = (() => {
  const scripts = MANIFEST.content_scripts[0].js;
  return scripts.slice(0, scripts.indexOf('src/platform/selectors.js') + 1).map((path) => fileURLToPath(new URL(path, EXTENSION_DIR)));
})();

/** Injects the page readers as the manifest loads them (page-texts.js … selectors.js). */
export async function injectReaders(page) {
  for (const path of READER_SCRIPTS) await page.addScriptTag({ path });
}
/** The content adapter as the manifest loads it after the readers: typing.js … content.js. */
export const ADAPTER_SCRIPTS = (() => {
  const scripts = MANIFEST.content_scripts[0].js;
  return scripts.slice(scripts.indexOf('src/platform/selectors.js') + 1, scripts.indexOf('src/platform/content.js') + 1)
    .map((path) => fileURLToPath(new URL(path, EXTENSION_DIR)));
})();

// Both libraries' pages offer the calls the checks use: goto, evaluate(fn, arg),
// addScriptTag({path | content}), click(selector), reload, url, close.
// `chromiumArgs`: more command-line switches for Chromium (the benchmark's heap counter).
export async function launchBrowser(kind, chromiumArgs = []) {
  if (kind === 'chromium') {
    return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', ...chromiumArgs] });
  }
  if (kind === 'firefox') {
    return puppeteer.launch({ browser: 'firefox', executablePath: '/usr/bin/firefox-esr', headless: true });
  }
  throw new Error(`unknown browser ${kind}`);
}

/**
 * A tally of named checks. `label` (a browser's name) starts every line it prints, so two
 * tallies can run at once and their lines still say whose they are.
 */
export function createTally(label = '') {
  let passed = 0;
  const failures = [];
  const tag = label ? `${label}: ` : '';
  const fail = (name, detail) => {
    failures.push(name);
    console.log(`  FAIL ${tag}${name}${detail ? `: ${detail}` : ''}`);
  };
  return {
    check(name, ok, detail = '') {
      if (ok) {
        passed += 1;
        console.log(`  ok   ${tag}${name}`);
      } else {
        fail(name, detail);
      }
    },
    // A line about the checks (what was covered, a measurement), not a check.
    note(text) {
      console.log(`  ${tag}${text}`);
    },
    // Runs a group of checks; an exception fails the group instead of ending the run.
    async group(name, body) {
      try {
        await body();
      } catch (error) {
        fail(name, error?.stack ?? String(error));
      }
    },
    counts() {
      return { passed, failed: failures.length };
    },
  };
}

// Evaluates fn(arg) in the page until it returns a truthy value; throws after timeoutMs.
export async function pollPage(page, fn, arg, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await page.evaluate(fn, arg);
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
