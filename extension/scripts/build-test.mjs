// Writes a test build of the extension: the production files unchanged, a manifest that
// also matches the local fake ChatGPT page, a test-config.json the background loads on
// first start, and the test hooks (test-hooks.js in the background, test-page-hooks.js in
// local pages) that only test builds carry.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const EXTENSION_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LOCAL_PAGES = 'http://127.0.0.1/*';
const TEST_BACKGROUND = 'test-background.js';

/**
 * Builds into `outDir` and returns it.
 * `settings`: what the background stores on first start (daemonUrls or one daemonUrl, token, executorId,
 * chatBaseUrl, ...).
 */
export function buildTestExtension(outDir, settings) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  cpSync(join(EXTENSION_DIR, 'src'), join(outDir, 'src'), { recursive: true });
  cpSync(join(EXTENSION_DIR, 'icons'), join(outDir, 'icons'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(EXTENSION_DIR, 'manifest.json'), 'utf8'));
  manifest.name += ' (test build)';
  manifest.host_permissions = [...manifest.host_permissions, LOCAL_PAGES];
  for (const script of manifest.content_scripts) script.matches = [...script.matches, LOCAL_PAGES];
  manifest.content_scripts.push({ matches: [LOCAL_PAGES], js: ['test-page-hooks.js'], run_at: 'document_start' });
  // A module service worker cannot import() at run time: the test build's background is a
  // wrapper that imports the production background and the test hooks statically.
  manifest.background.service_worker = TEST_BACKGROUND;
  manifest.background.scripts = [TEST_BACKGROUND];
  writeFileSync(join(outDir, TEST_BACKGROUND),
    "import './src/platform/background.js';\nimport './test-hooks.js';\n");
  writeFileSync(join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(outDir, 'test-config.json'), JSON.stringify({ settings }, null, 2));
  for (const hooks of ['test-hooks.js', 'test-page-hooks.js']) {
    cpSync(join(EXTENSION_DIR, 'test', 'e2e', 'lib', hooks), join(outDir, hooks));
  }
  return outDir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [outDir, settingsJson = '{}'] = process.argv.slice(2);
  if (!outDir) {
    console.error('usage: node scripts/build-test.mjs OUT_DIR [SETTINGS_JSON]');
    process.exit(2);
  }
  console.log(buildTestExtension(resolve(outDir), JSON.parse(settingsJson)));
}
