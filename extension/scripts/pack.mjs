// `npm run pack`: the store packages, dist/orchestrator-<version>-chrome.zip (Chrome Web
// Store, or Chromium's developer mode) and dist/orchestrator-<version>-firefox.xpi
// (addons.mozilla.org, signed or not), each with only the shipped files (the manifest,
// src/, the icons' PNGs) and its own browser's manifest keys, written deterministically
// (scripts/zip.mjs). The unpacked trees go beside them (dist/chrome/, dist/firefox/), for
// `web-ext lint` and for loading unpacked.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeZip } from './zip.mjs';

export const EXTENSION_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST_DIR = join(EXTENSION_DIR, 'dist');
/** The shipped folders; everything in them ships, except what SKIPPED names. */
const SHIPPED_DIRS = ['src', 'icons'];
/** Sources of shipped files, never shipped themselves: the icon's SVG, source maps, dot files. */
const SKIPPED = [/^icons\/.*\.svg$/, /\.map$/, /(^|\/)\./];

/**
 * Each browser's manifest from the one in the repository (which loads unpacked in both):
 * Chromium runs the service worker and knows no `browser_specific_settings` (it warns about
 * both unknown keys on chrome://extensions); Firefox runs `background.scripts` as an event
 * page and ignores `service_worker` and `minimum_chrome_version` (web-ext lint warns).
 */
export const BROWSERS = {
  chrome: {
    file: (version) => `orchestrator-${version}-chrome.zip`,
    manifest(manifest) {
      const out = structuredClone(manifest);
      delete out.browser_specific_settings;
      delete out.background.scripts;
      return out;
    },
  },
  firefox: {
    file: (version) => `orchestrator-${version}-firefox.xpi`,
    manifest(manifest) {
      const out = structuredClone(manifest);
      delete out.minimum_chrome_version;
      delete out.background.service_worker;
      return out;
    },
  },
};

function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(join(EXTENSION_DIR, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** The shipped files besides the manifest, as archive names, sorted. */
export function shippedFiles() {
  return SHIPPED_DIRS.flatMap(filesUnder).filter((path) => !SKIPPED.some((re) => re.test(path))).sort();
}

/** `[{name, data}]` of one browser's package: manifest.json first, then the files sorted. */
export function packageEntries(browser) {
  const manifest = JSON.parse(readFileSync(join(EXTENSION_DIR, 'manifest.json'), 'utf8'));
  const shaped = BROWSERS[browser].manifest(manifest);
  return [
    { name: 'manifest.json', data: Buffer.from(`${JSON.stringify(shaped, null, 2)}\n`) },
    ...shippedFiles().map((name) => ({ name, data: readFileSync(join(EXTENSION_DIR, ...name.split('/'))) })),
  ];
}

/** The manifest's version, which names the packages. */
export function version() {
  return JSON.parse(readFileSync(join(EXTENSION_DIR, 'manifest.json'), 'utf8')).version;
}

/**
 * Writes both packages (and their unpacked trees) into `outDir`; returns
 * `{chrome: path, firefox: path}`.
 */
export function pack(outDir = DIST_DIR) {
  const paths = {};
  for (const browser of Object.keys(BROWSERS)) {
    const entries = packageEntries(browser);
    const tree = join(outDir, browser);
    rmSync(tree, { recursive: true, force: true });
    for (const { name, data } of entries) {
      const path = join(tree, ...name.split('/'));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, data);
    }
    const file = join(outDir, BROWSERS[browser].file(version()));
    writeFileSync(file, writeZip(entries));
    paths[browser] = file;
  }
  return paths;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2] ? resolve(process.argv[2]) : DIST_DIR;
  mkdirSync(outDir, { recursive: true });
  for (const path of Object.values(pack(outDir))) console.log(relative(process.cwd(), path).split(sep).join('/') || path);
}
