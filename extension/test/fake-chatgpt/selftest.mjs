// Self-test of the fake ChatGPT page, selectors.js and content.js, without the extension, and
// of the page readers against the real-page fixtures:
//   node extension/test/fake-chatgpt/selftest.mjs [--browser=chromium|firefox] [--suite=NAME]
// Each suite gets a fresh fake server and page; both browsers run, at once, unless one is named.
// Prints `N passed, M failed` and exits non-zero on any failure.
import { startFakeChatGPT } from './server.mjs';
import { createTally, launchBrowser } from './harness.mjs';
import { runPageChecks } from './page-checks.mjs';
import { runAdapterChecks } from './adapter-checks.mjs';
import { runFixtureChecks } from './fixture-checks.mjs';
import { runShapeChecks } from './shape-checks.mjs';
import { runCostChecks } from './cost-checks.mjs';
import { runPageStateChecks } from './page-state-checks.mjs';
import { runAllowlistChecks } from './allowlist-checks.mjs';

const SUITES = [
  ['page and selectors', runPageChecks],
  ['content adapter', runAdapterChecks],
  ['cards, drafts and the unknown', runPageStateChecks],
  ['real page fixtures', runFixtureChecks],
  ['allow-list property', runAllowlistChecks],
  ['page shape', runShapeChecks],
  ['reads bounded by the latest turn', runCostChecks],
];

const requested = process.argv.find((arg) => arg.startsWith('--browser='))?.slice('--browser='.length);
const suiteWanted = process.argv.find((arg) => arg.startsWith('--suite='))?.slice('--suite='.length);
const browsers = requested ? [requested] : ['chromium', 'firefox'];
const startedAtMs = Date.now();

// One browser: every suite in turn, each with a fresh fake server and page.
async function runBrowser(kind) {
  const tally = createTally(kind);
  await tally.group('launch', async () => {
    const browser = await launchBrowser(kind);
    try {
      for (const [name, runSuite] of SUITES.filter(([suite]) => !suiteWanted || suite.includes(suiteWanted))) {
        tally.note(`== ${name}`);
        const server = await startFakeChatGPT();
        const suiteStartedAtMs = Date.now();
        try {
          await runSuite({ browser, server, tally });
        } finally {
          await server.close();
          tally.note(`== ${name} (${((Date.now() - suiteStartedAtMs) / 1000).toFixed(1)} s)`);
        }
      }
    } finally {
      await browser.close();
    }
  });
  return tally.counts();
}

// The browsers run at once (their lines say whose they are): the suites mostly wait on pages.
const counts = await Promise.all(browsers.map(runBrowser));
const passed = counts.reduce((sum, c) => sum + c.passed, 0);
const failed = counts.reduce((sum, c) => sum + c.failed, 0);
console.log(`(${((Date.now() - startedAtMs) / 1000).toFixed(1)} s)`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
