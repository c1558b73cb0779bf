// End to end, in headless Chromium and Firefox ESR: the extension's watchdog (issue 19).
// The daemon is stopped while a tab is managed: the toolbar badge appears with its title,
// one notification is raised, and nothing is typed; the daemon's return clears both. A
// managed page that keeps showing an error gets its own badge and notice; closing it ends
// that episode. The
// threshold is lowered through the `watchdogAfterMs` setting of the test build, and every
// wait is for a condition with a deadline.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld, block } from './lib/world.mjs';
import { until } from './lib/ui-pages.mjs';

/** The test build's threshold, in milliseconds (the default is 5 minutes). */
const WATCHDOG_AFTER_MS = 3_000;
/** How long the badge may take past the threshold (the first reconnect attempts, a busy machine), in milliseconds. */
const BADGE_WAIT_MS = 30_000;
const NOTICE = 'orc-watchdog:daemon';
const PAGES_NOTICE = 'orc-watchdog:pages';

// The browsers run at once: each has its own daemon, fake page and profile, and the tests
// mostly wait for the daemon to be missed and back.
describe('extension watchdog', { concurrency: true }, () => {
  for (const kind of BROWSERS) {
    describe(`extension watchdog in ${kind}`, () => {
      test('the daemon stopped while a tab is managed: a badge and one notification, nothing typed, both cleared when it is back', () =>
        inWorld(kind, async (w) => {
          await w.createRun();
          const lane = await w.spawnLane('/root/watched', async ({ turn }) => ({ generateMs: 200, reply: block('working', `turn ${turn}`) }),
            { policy: { mode: 'manual' } });
          await w.waitForPrompts(lane, 1);
          await w.settled(lane);
          const typed = w.fake.prompts.length;
          assert.deepEqual(await w.hook('badge'), { text: '', title: 'Orchestrator' }, 'no badge while the daemon is live');

          await w.daemon.stop();
          const badge = await until('the watchdog badge', async () => {
            const b = await w.hook('badge');
            return b.text === '!' ? b : null;
          }, BADGE_WAIT_MS);
          assert.match(badge.title, /Orchestrator daemon unreachable: The orchestrator daemon has been unreachable for \d+ s while 1 ChatGPT tab is managed\. Nothing is typed until it is back\. Check `orchestrator doctor`\./);
          assert.deepEqual((await w.hook('notificationsCreated')).filter((id) => id === NOTICE), [NOTICE], 'one notification');
          // Firefox ESR headless lists no notification (getAll stays empty); Chromium shows it.
          if (kind === 'chromium') assert.ok((await w.hook('notifications')).includes(NOTICE));

          // Past another threshold, still one notification for the episode, and nothing typed.
          await until('the badge title counting past a second threshold', async () => {
            const seconds = Number((await w.hook('badge')).title.match(/unreachable for (\d+) s/)?.[1] ?? 0);
            return seconds * 1_000 >= 2 * WATCHDOG_AFTER_MS;
          }, BADGE_WAIT_MS);
          assert.deepEqual((await w.hook('notificationsCreated')).filter((id) => id === NOTICE), [NOTICE], 'still one notification');
          assert.equal(w.fake.prompts.length, typed, 'nothing typed while the daemon is away');

          await w.daemon.start();
          await until('the badge cleared', async () => (await w.hook('badge')).text === '', BADGE_WAIT_MS);
          if (kind === 'chromium') await until('the notification cleared', async () => !(await w.hook('notifications')).includes(NOTICE));
          await w.settled(lane);
          assert.equal(w.fake.prompts.length, typed, 'nothing typed after it came back (a manual lane)');
        }, { settings: { watchdogAfterMs: WATCHDOG_AFTER_MS } }));

      test('the only managed page showing an error: a badge and one notice while the daemon is live, nothing typed, cleared when the tab closes', () =>
        inWorld(kind, async (w) => {
          await w.createRun();
          const lane = await w.spawnLane('/root/failing', async () => ({ generateMs: 200, error: 'something_went_wrong' }),
            { policy: { mode: 'manual' } });
          await w.waitForPrompts(lane, 1);
          const badge = await until('the watchdog badge', async () => {
            const b = await w.hook('badge');
            return b.text === '!' ? b : null;
          }, BADGE_WAIT_MS);
          assert.match(badge.title, /^Every managed ChatGPT tab shows an error: The managed ChatGPT tab has shown an error for \d+ s \(generic: 1\)\. The extension does not retry or type on its own/);
          assert.doesNotMatch(badge.title, /unreachable/);
          assert.deepEqual(await w.hook('notificationsCreated'), [PAGES_NOTICE]);
          const typed = w.fake.prompts.length;

          const url = (await w.mcp.call('worker_get', { workerId: lane })).binding.conversationUrl;
          const tab = (await w.browser.pages()).find((p) => p.url() === url);
          assert.ok(tab, `the managed tab shows ${url}`);
          await tab.close();
          await until('the badge cleared', async () => (await w.hook('badge')).text === '', BADGE_WAIT_MS);
          assert.deepEqual(await w.hook('notificationsCreated'), [PAGES_NOTICE], 'one notice for the episode');
          assert.equal(w.fake.prompts.length, typed, 'nothing typed');
        }, { settings: { watchdogAfterMs: WATCHDOG_AFTER_MS } }));
    });
  }
});
