// Self-test of the fake ChatGPT page, selectors.js and content.js, without the extension, and
// of the page readers against the real-page fixtures:
//   node extension/test/fake-chatgpt/selftest.mjs [--browser=chromium|firefox] [--suite=NAME]
// Each suite gets a fresh fake server and page; both browsers run unless one is named.
// Prints `N passed, M failed` and exits non-zero on any failure.
import { startFakeChatGPT } from './server.mjs';
import { createTally, launchBrowser } from './harness.mjs';
import { runPageChecks } from './page-checks.mjs';
import { runAdapterChecks } from './adapter-checks.mjs';
import { runFixtureChecks } from './fixture-checks.mjs';
import { runShapeChecks } from './shape-checks.mjs';
import { runCostChecks } from './cost-checks.mjs';

const SUITES = [
  ['page and selectors', runPageChecks],
  ['content adapter', runAdapterChecks],
  ['real page fixtures', runFixtureChecks],
  ['page shape', runShapeChecks],
  ['reads bounded by the latest turn', runCostChecks],
];

const requested = process.argv.find((arg) => arg.startsWith('--browser='))?.slice('--browser='.length);
const suiteWanted = process.argv.find((arg) => arg.startsWith('--suite='))?.slice('--suite='.length);
const browsers = requested ? [requested] : ['chromium', 'firefox'];
const tally = createTally();
const startedAtMs = Date.now();

for (const kind of browsers) {
  await tally.group(`${kind}: launch`, async () => {
    const browser = await launchBrowser(kind);
    try {
      for (const [name, runSuite] of SUITES.filter(([suite]) => !suiteWanted || suite.includes(suiteWanted))) {
        console.log(`${kind}: ${name}`);
        const server = await startFakeChatGPT();
        try {
          await runSuite({ browser, server, tally });
        } finally {
          await server.close();
        }
      }
    } finally {
      await browser.close();
    }
  });
}

console.log(`(${((Date.now() - startedAtMs) / 1000).toFixed(1)} s)`);
process.exitCode = tally.summary() ? 0 : 1;
