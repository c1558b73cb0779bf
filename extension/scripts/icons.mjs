// Renders the extension's icon (icons/icon.svg) into the PNGs the manifest and the stores
// name (icons/icon-16.png ... icon-128.png), in headless Chromium from the Debian package
// (playwright-core, never a downloaded browser): `npm run icons`. Same SVG and Chromium,
// same bytes; the PNGs are committed, so packing and the tests never need a browser.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const EXTENSION_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const ICONS_DIR = join(EXTENSION_DIR, 'icons');
/** Chrome Web Store and AMO: 16 (favicon, toolbar), 32 (toolbar at 2x), 48 (extensions page), 96 (AMO at 2x), 128 (store, install; padded). */
export const ICON_SIZES = [16, 32, 48, 96, 128];
/**
 * Transparent pixels a side: the Chrome Web Store wants the 128 as a 96x96 icon with 16
 * transparent pixels around it ("Supplying images", developer.chrome.com/docs/webstore/images).
 */
const PADDING = { 128: 16 };
const CHROMIUM_BIN = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

/** `icons/icon-<size>.png`, relative to the extension's directory. */
export function iconPath(size) {
  return `icons/icon-${size}.png`;
}

/** Renders every size into `outDir` (the committed icons by default); returns the paths written. */
export async function renderIcons(outDir = ICONS_DIR) {
  const svg = readFileSync(join(ICONS_DIR, 'icon.svg'));
  const src = `data:image/svg+xml;base64,${svg.toString('base64')}`;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_BIN, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  const written = [];
  try {
    for (const size of ICON_SIZES) {
      const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
      const padding = PADDING[size] ?? 0;
      const drawn = size - 2 * padding;
      await page.setContent(`<!doctype html><html><body style="margin:0;background:transparent">
        <img id="icon" width="${drawn}" height="${drawn}" style="display:block;margin:${padding}px" src="${src}"></body></html>`);
      // The image decoded before the shot: a condition, not a delay.
      await page.evaluate(() => document.getElementById('icon').decode());
      const png = await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
      const out = join(outDir, `icon-${size}.png`);
      writeFileSync(out, png);
      written.push(out);
      await page.close();
    }
  } finally {
    await browser.close();
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const path of await renderIcons(process.argv[2] ? resolve(process.argv[2]) : ICONS_DIR)) console.log(path);
}
