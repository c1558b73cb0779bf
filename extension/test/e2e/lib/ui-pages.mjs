// Page plumbing for the operator UI's browser tests, over both drivers (playwright-core
// pages in Chromium, puppeteer-core pages in Firefox): finding the extension pages the
// test hooks open, polling a condition with a bounded timeout, pressing buttons, typing,
// screenshots (kept under target/e2e-artifacts, and copied to docs/screenshots when
// UPDATE_SCREENSHOTS=1) and the axe-core accessibility check.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { ARTIFACTS_DIR } from './world.mjs';

export const DOCS_SCREENSHOTS_DIR = resolve(new URL('../../../../docs/screenshots', import.meta.url).pathname);
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const POLL_MS = 100;
const EVAL_TIMEOUT_MS = 5_000;

/**
 * Calls `probe()` until it returns something truthy and returns that; a probe that throws
 * (a page mid-reload) counts as not yet. Fails after `timeoutMs` naming `what` and the
 * last value or error seen (or `seen()`, when given).
 */
export async function until(what, probe, timeoutMs = 20_000, seen = null) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const error = last instanceof Error ? `error: ${last.message}` : null;
      const saw = seen ? `saw: ${JSON.stringify(seen())}${error ? `; last ${error}` : ''}` : error ?? `last: ${JSON.stringify(last)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${saw}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** `page.evaluate(fn, arg)` (one argument: the same call in both drivers), bounded in time. */
export async function evaluate(page, fn, arg) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`page.evaluate timed out after ${EVAL_TIMEOUT_MS} ms`)), EVAL_TIMEOUT_MS);
  });
  try {
    return await Promise.race([page.evaluate(fn, arg), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The page's real address (puppeteer reports about:blank for moz-extension tabs). */
export async function href(page) {
  try {
    return await evaluate(page, () => location.href);
  } catch {
    return null;
  }
}

/** The open page whose address satisfies `match`, waiting for it to appear. */
export async function findPage(world, match, what, { exclude = new Set(), timeoutMs = 20_000 } = {}) {
  return until(what, async () => {
    for (const page of await world.browser.pages()) {
      if (exclude.has(page)) continue;
      const url = await href(page);
      if (url && match(url)) return page;
    }
    return null;
  }, timeoutMs);
}

/**
 * Opens an extension page (`src/ui/popup.html`) in a new tab through the background's
 * test hook (Firefox's remote agent refuses moz-extension:// URLs unless launched with
 * `{extensionPages: true}`, browsers.mjs) and returns it once its script has rendered into
 * `#app` (or the document finished loading).
 */
export async function openExtensionPage(world, path) {
  const before = new Set(await world.browser.pages());
  await world.hook('open', path);
  const page = await findPage(world, (url) => /^(chrome|moz)-extension:/.test(url) && new URL(url).pathname === `/${path}`,
    `the extension page ${path}`, { exclude: before });
  await until(`${path} rendered`, () => evaluate(page, () => document.readyState === 'complete'
    && (document.getElementById('app')?.childElementCount ?? 1) > 0));
  return page;
}

/** Reloads a page without waiting for a navigation event (puppeteer's reload never ends on moz-extension pages). */
export async function reloadPage(page) {
  await evaluate(page, () => { setTimeout(() => location.reload(), 0); }).catch(() => {});
  await until('the page reloaded', () => evaluate(page, () => document.readyState === 'complete'
    && (document.getElementById('app')?.childElementCount ?? 1) > 0));
}

export async function setViewport(world, page, size) {
  if (world.kind === 'chromium') await page.setViewportSize(size);
  else await page.setViewport(size);
}

/**
 * Presses the button `selector` as a person would, once it is shown and enabled (the
 * surfaces re-render on every summary: a button can be busy for a moment). `shadowHost`
 * looks inside that element's open shadow root (the overlay). Returns the button's text.
 */
export async function press(page, selector, { shadowHost = null, what = selector, timeoutMs = 10_000 } = {}) {
  return until(`${what} to be pressable`, () => evaluate(page, ({ selector, shadowHost }) => {
    const root = shadowHost ? document.querySelector(shadowHost)?.shadowRoot : document;
    const button = root?.querySelector(selector);
    if (!button || button.disabled || button.getClientRects().length === 0) return null;
    button.click();
    return button.textContent.trim() || button.getAttribute('aria-label') || selector;
  }, { selector, shadowHost }), timeoutMs);
}

/** Types `text` into the field `selector` with the keyboard (the page re-renders meanwhile). */
export async function typeInto(page, selector, text) {
  await until(`${selector} to be focusable`, () => evaluate(page, (sel) => {
    const field = document.querySelector(sel);
    if (!field) return false;
    field.focus();
    return document.activeElement === field;
  }, selector));
  await page.keyboard.type(text);
}

/**
 * Saves a screenshot (`options.clip` in viewport coordinates, `options.fullPage`) as
 * target/e2e-artifacts/<browser>-<name>.png; the Chromium ones are
 * also copied to docs/screenshots/<name>.png when UPDATE_SCREENSHOTS=1 (docs are updated
 * on purpose, never by CI).
 */
export async function screenshot(world, page, name, options = {}) {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${world.kind}-${name}.png`);
  let shot = options;
  if (world.kind === 'firefox' && options.clip) {
    // `clip` is in viewport coordinates here, as playwright has it; puppeteer takes it in
    // the document's.
    const [left, top] = await evaluate(page, () => [visualViewport.pageLeft, visualViewport.pageTop]);
    shot = { ...options, captureBeyondViewport: false, clip: { ...options.clip, x: options.clip.x + left, y: options.clip.y + top } };
  }
  await page.screenshot({ path, ...shot });
  if (process.env.UPDATE_SCREENSHOTS === '1' && world.kind === 'chromium') {
    mkdirSync(DOCS_SCREENSHOTS_DIR, { recursive: true });
    copyFileSync(path, join(DOCS_SCREENSHOTS_DIR, `${name}.png`));
  }
  return path;
}

const SERIOUS = new Set(['serious', 'critical']);

/**
 * Runs axe-core in the page (injected by evaluating its source: extension pages' CSP
 * forbids inline scripts and eval, not the driver's own evaluation) over `context` (the
 * document by default) and returns the serious and critical violations, one line each.
 */
export async function axeViolations(page, context = null) {
  const loaded = await evaluate(page, () => typeof globalThis.axe?.run === 'function');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async (ctx) => {
    const result = await globalThis.axe.run(ctx ?? document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${JSON.stringify(n.target)}: ${n.failureSummary?.replace(/\s+/g, ' ')}`),
    }));
  }, context);
  return violations.filter((v) => SERIOUS.has(v.impact))
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.join(' | ')}`);
}
