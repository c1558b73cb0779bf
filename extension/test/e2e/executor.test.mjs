// End to end, in headless Chromium and Firefox ESR: the real daemon drives the real
// extension against the fake ChatGPT page, in each layout profile of the real page
// (test/fake-chatgpt/layouts/). No test sends a manual message: every prompt the page
// receives was decided by the daemon and submitted by the extension. Every test runs on the
// newest signed-in layout (FULL_LAYOUT); the tests that exercise the page (submission, idle
// detection, resumes, the delivery timeout, restarts) also run on the other signed-in
// layouts. A logged-out page is never typed into for managed work (issue 27): on the
// logged-out layout a lane spawned into a new chat, or attached to a chat a person began there
// (World.attachLane), is paused for a person at once (the executor reports the login page as
// the conversation's state), and nothing is typed. A page that turns into something the
// adapter cannot name mid-run holds the worker (notified, nothing typed) until it is known
// again, then exactly one continuation follows.
// Two browser-and-layout suites run at a time (WORLDS_AT_ONCE), the tests of each one after
// another: a world shares nothing with another (its own daemon with its data directory and
// port, browser profile, extension build and fake server on a port of its own), and every
// assertion waits on what the daemon or the page reports, so running them side by side
// changes when things happen, not what is asserted.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld, block, pause } from './lib/world.mjs';
import { readOverlay } from './lib/ui-surfaces.mjs';
import { findPage, press, screenshot, until } from './lib/ui-pages.mjs';
import { REAL_LAYOUTS, profileOf } from '../fake-chatgpt/layouts/profiles.mjs';

const FULL_LAYOUT = 'turn-key-2026-09';
/** Worlds run at once ($E2E_WORLDS_AT_ONCE: 1 runs the suites one by one, as while debugging). */
const WORLDS_AT_ONCE = Number(process.env.E2E_WORLDS_AT_ONCE ?? 2);
if (!Number.isInteger(WORLDS_AT_ONCE) || WORLDS_AT_ONCE < 1) throw new Error(`E2E_WORLDS_AT_ONCE must be a positive integer, not ${process.env.E2E_WORLDS_AT_ONCE}`);
const NONCE = /\[attempt (exe-\d+)\]\s*$/;
// A card no real page shows, drawn into the latest turn while it generates.
const UNKNOWN_CARD = '<div class="promo-card"><p>Try the new mode</p><button type="button">Try it</button></div>';
// The first turn of the unrecognized-page test generates this long (ms): the card lands in it.
const UNKNOWN_TURN_MS = 3_000;
// The overlay's host element on a managed tab.
const OVERLAY = 'orchestrator-overlay';
// While the page is not recognized nothing may be typed: the prompts are watched this long,
// in ms (past the workers' idle grace and the executor's polling).
const HELD_WATCH_MS = 3_000;

/** Every prompt carries its own attempt's nonce, and no attempt was submitted twice. */
function assertExactlyOnce(prompts) {
  const attempts = prompts.map((p) => p.text.match(NONCE)?.[1]);
  assert.ok(attempts.every(Boolean), `every prompt ends with its nonce: ${JSON.stringify(prompts.map((p) => p.text.slice(-40)))}`);
  assert.equal(new Set(attempts).size, attempts.length, `no attempt submitted twice: ${attempts}`);
}

function progressing(turnsBeforeComplete, generateMs = 300) {
  return async ({ turn, world, workerId }) => {
    await world.mcp.call('worker_progress', { workerId, summary: `finished step ${turn}` });
    if (turn >= turnsBeforeComplete) {
      await world.mcp.call('worker_complete', { workerId, summary: 'all steps finished' });
      return { generateMs, reply: block('complete', 'all steps finished') };
    }
    return { generateMs, reply: block('working', `step ${turn} of ${turnsBeforeComplete}`) };
  };
}

/** The browser tab showing `url`, or undefined. */
async function tabAt(w, url) {
  return (await w.browser.pages()).find((p) => p.url() === url);
}

/**
 * A manual lane whose first turn has ended, its conversation's URL, and the URL of another
 * conversation on the fake page (one a person had started: a real conversation has turns;
 * an address without any reads as a page whose UI changed) to attach it to.
 */
async function settledLane(w, name) {
  await w.createRun();
  const lane = await w.spawnLane(name, async ({ turn }) => ({ generateMs: 200, reply: block('working', `turn ${turn}`) }),
    { policy: { mode: 'manual' } });
  await w.waitForPrompts(lane, 1);
  await w.settled(lane);
  const old = (await w.mcp.call('worker_get', { workerId: lane })).binding.conversationUrl;
  const other = w.fake.seedConversation([{ role: 'user', text: 'Another chat.' }, { role: 'assistant', reply: 'Yes.' }]);
  return { lane, old, fresh: w.fake.conversationUrl(other) };
}

// The suites with the most tests first (FULL_LAYOUT's, then the logged-out layout's with its
// own test), Firefox's slower ones before Chromium's, so that the last two to run are short
// ones and finish close together.
const testsWeight = (layout) => (layout === FULL_LAYOUT ? 2 : profileOf(layout).loggedOut ? 1 : 0);
const SUITES = BROWSERS.flatMap((kind) => REAL_LAYOUTS.map((layout) => ({ kind, layout })))
  .sort((a, b) => testsWeight(b.layout) - testsWeight(a.layout) || Number(b.kind === 'firefox') - Number(a.kind === 'firefox'));

describe('extension executor on every layout', { concurrency: WORLDS_AT_ONCE }, () => {
  for (const { kind, layout } of SUITES) describeExecutor(kind, layout);
});

function describeExecutor(kind, layout) {
  const world = (body) => inWorld(kind, body, { layout });
  // Registers a test that runs on every signed-in layout, or (everyLayout false) on FULL_LAYOUT only.
  const layoutTest = (name, everyLayout, body) => {
    if ((everyLayout && !profileOf(layout).loggedOut) || layout === FULL_LAYOUT) test(name, () => world(body));
  };
  describe(`extension executor in ${kind}, ${layout} page`, { concurrency: 1 }, () => {
    layoutTest('attached to another conversation while paused: the old tab is released and left open, nothing is submitted', false,
      async (w) => {
        const { lane, old, fresh } = await settledLane(w, '/root/moves');
        const oldTab = await tabAt(w, old);
        assert.ok(oldTab, `the managed tab shows ${old}`);
        await until('the overlay on the managed tab', async () => (await readOverlay(oldTab)).pill !== null);
        await w.mcp.call('worker_pause', { workerId: lane });
        await w.mcp.call('worker_attach', { workerId: lane, conversationUrl: fresh });
        // conversation.close: the extension forgets the old binding; the tab stays open as it was.
        await until('the old binding released in extension storage', async () => {
          const stored = await w.hook('storage');
          return (stored.bindings ?? []).some((b) => b.workerId === lane && b.conversationUrl === '' && !b.open);
        });
        await until('no overlay on the released tab', async () => (await readOverlay(oldTab)).pill === null);
        assert.ok(await tabAt(w, old), 'the released tab is still open');
        const prompts = await w.settled(lane);
        assert.equal(prompts.length, 1, 'paused: nothing submitted to either conversation');
        assert.ok(!w.fake.prompts.some((p) => fresh.endsWith(p.conversationId)), 'nothing typed into the new conversation');
      });

    layoutTest('attached to another conversation while running: the next turn goes into the new one, the old tab is released', false,
      async (w) => {
        const { lane, old, fresh } = await settledLane(w, '/root/moves-on');
        await w.mcp.call('worker_attach', { workerId: lane, conversationUrl: fresh });
        // No executor has seen the new conversation: the daemon's recovery turn names it,
        // and the extension opens it and types there (before the fix it waited forever).
        await w.fake.waitFor(() => w.fake.prompts.some((p) => fresh.endsWith(p.conversationId)), 30_000,
          'a prompt in the newly attached conversation');
        await until('the new conversation bound in extension storage', async () => {
          const stored = await w.hook('storage');
          return (stored.bindings ?? []).some((b) => b.workerId === lane && b.conversationUrl === fresh);
        });
        assert.ok(await tabAt(w, old), 'the released tab is still open');
        const intoOld = w.fake.prompts.filter((p) => old.endsWith(p.conversationId));
        assert.equal(intoOld.length, 1, 'nothing more typed into the old conversation');
        const worker = await w.waitForWorker(lane, (x) => x.binding?.status === 'verified', 'the new binding verified');
        assert.equal(worker.binding.conversationUrl, fresh);
      });

    if (profileOf(layout).loggedOut) {
      test('a new chat on a logged-out page: the daemon pauses the account at once, nothing is typed', () => world(async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/logged-out', async () => ({ generateMs: 100, reply: block('working', 'must not run') }));
        // Well before the create's deadline (2 min): the login page was reported as the new chat's state.
        // The pause is durable first; the create is withdrawn once the extension confirms its
        // command.cancel (a moment later on a loaded machine): both well before the deadline.
        const worker = await w.waitForWorker(lane, (x) => x.pause?.reason === 'account_check' && !x.inFlightAttemptId,
          'paused for an account check, the create withdrawn');
        assert.equal(worker.inFlightAttemptId ?? null, null, 'the create was withdrawn');
        assert.deepEqual(w.prompts(lane), [], 'nothing typed into the logged-out page');
        assert.deepEqual(w.fake.prompts, [], 'nothing typed anywhere');
      }));

      test('a chat a person began logged out, attached: the worker is paused for a log-in, nothing is typed', () => world(async (w) => {
        await w.createRun();
        const lane = await w.attachLane('/root/logged-out-chat', async () => ({ generateMs: 100, reply: block('working', 'must not run') }));
        const worker = await w.waitForWorker(lane, (x) => x.pause?.reason === 'account_check' && !x.inFlightAttemptId,
          'paused for an account check');
        assert.equal(worker.binding.conversationUrl.includes('/uc/'), true, 'the logged-out conversation stays bound');
        assert.deepEqual(w.fake.prompts, [], 'nothing typed into the logged-out chat');
      }));
    }

    layoutTest('a page that turns unrecognized mid-run: held and notified, nothing typed; one continuation once it is known again', false,
      async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/unknown', async ({ turn, world, workerId }) => {
          await world.mcp.call('worker_progress', { workerId, summary: `step ${turn}` });
          if (turn >= 2) {
            await world.mcp.call('worker_complete', { workerId, summary: 'done after the page came back' });
            return { generateMs: 200, reply: block('complete', 'done after the page came back') };
          }
          return { generateMs: UNKNOWN_TURN_MS, reply: block('working', 'step 1 of 2') };
        });
        const [first] = await w.waitForPrompts(lane, 1);
        // While the first turn still generates, a card no real page shows appears in it.
        await w.fake.control(first.conversationId, `inject:turn:${UNKNOWN_CARD}`);
        // The daemon holds the worker and says why, in the executor's words.
        const held = await w.waitForWorker(lane, (x) => x.binding?.state === 'unrecognized' && x.hold?.reason === 'page_unrecognized',
          'the daemon holds the worker on a page not recognized', 20_000);
        assert.match(held.hold.detail ?? '', /^Page not recognized: .+ in the latest turn$/);
        if (w.kind === 'chromium') await until('a browser notification', async () => (await w.hook('notifications')).includes(`orc-page-unknown:${lane}`));
        const tab = await findPage(w, (url) => url.includes(first.conversationId), 'the lane\'s tab');
        await until('the overlay says Needs you: page not recognized', async () => {
          const overlay = await readOverlay(tab);
          return overlay.pill?.status === 'needs_you';
        });
        if (w.kind === 'chromium') {
          // What the person sees on the tab: the card nobody named, the overlay's drawer saying so.
          await press(tab, '[data-testid="overlay-pill"]', { shadowHost: OVERLAY });
          await until('the drawer says why', async () => /Page not recognized/.test(JSON.stringify(await readOverlay(tab))));
          await screenshot(w, tab, 'page-not-recognized', { fullPage: false });
        }
        await assert.rejects(w.waitForPrompts(lane, 2, HELD_WATCH_MS), /timed out/, 'nothing is typed while the page is not recognized');
        await w.fake.control(first.conversationId, 'uninject');
        await w.waitForWorker(lane, (x) => x.disposition === 'completed', 'completed once the page is known again');
        if (w.kind === 'chromium') await until('the notification cleared', async () => !(await w.hook('notifications')).includes(`orc-page-unknown:${lane}`));
        const prompts = await w.settled(lane);
        assert.equal(prompts.length, 2, 'exactly one continuation after the page was known again');
        assertExactlyOnce(prompts);
      });

    layoutTest('attempts 1, 2 and 3 follow automatically; after worker_complete nothing more is submitted', true,
      async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/alpha', progressing(3));
        await w.waitForWorker(lane, (x) => x.disposition === 'completed', 'completed');
        const prompts = await w.settled(lane);
        assert.equal(prompts.length, 3, 'bootstrap plus two automatic resumes');
        assertExactlyOnce(prompts);
        const worker = await w.mcp.call('worker_get', { workerId: lane });
        assert.equal(worker.attempts, 3);
        assert.equal(worker.autoResumes, 2);
        assert.match(worker.binding.conversationUrl, new RegExp(`${w.profile.conversationPrefix}[0-9a-f-]{36}$`), 'the settled conversation URL is bound');
        const stored = JSON.stringify(await w.hook('storage'));
        assert.ok(!stored.includes('Done some work'), 'no assistant text in extension storage');
        assert.ok(!stored.includes('Exercise /root/alpha'), 'no prompt body in extension storage');
        assert.ok(w.fake.clicks.every((c) => c.control === 'send'), `the extension clicked only Send: ${JSON.stringify(w.fake.clicks)}`);
      });

    layoutTest('worker_await_human stops resumes until a person answers', false,
      async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/asks', async ({ turn, world, workerId }) => {
          if (turn === 1) {
            await world.mcp.call('worker_await_human', {
              workerId, reason: 'needs a decision', question: 'Which dialect should win?', choices: ['excel', 'rfc4180'],
            });
            return { generateMs: 200, reply: block('blocked', 'waiting for the dialect decision') };
          }
          await world.mcp.call('worker_complete', { workerId, summary: 'used the answer' });
          return { generateMs: 200, reply: block('complete', 'used the answer') };
        });
        await w.waitForWorker(lane, (x) => x.disposition === 'awaiting_human', 'awaiting a human');
        assert.equal((await w.settled(lane)).length, 1, 'no resume while a person is needed');
        await w.mcp.call('worker_resolve_human', { workerId: lane, answer: 'rfc4180' });
        await w.waitForWorker(lane, (x) => x.disposition === 'completed', 'completed after the answer');
        const prompts = await w.settled(lane);
        assert.equal(prompts.length, 2, 'exactly one resume after the answer');
        assertExactlyOnce(prompts);
      });

    layoutTest('pause after the current turn, then continue now resumes exactly once', false,
      async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/paused', async ({ turn, world, workerId }) => {
          if (turn === 1) await world.mcp.call('worker_pause', { workerId, afterCurrentTurn: true });
          await world.mcp.call('worker_progress', { workerId, summary: `step ${turn}` });
          return { generateMs: 300, reply: block('working', `step ${turn}`) };
        });
        await w.waitForWorker(lane, (x) => x.disposition === 'paused', 'paused after the turn');
        assert.equal((await w.settled(lane)).length, 1, 'the pause held after the turn');
        await w.mcp.call('worker_continue_now', { workerId: lane });
        await w.waitForPrompts(lane, 2);
        const prompts = await w.settled(lane);
        assert.equal(prompts.length, 2, 'continue now delivered one prompt and the pause held again');
        assertExactlyOnce(prompts);
        const worker = await w.mcp.call('worker_get', { workerId: lane });
        assert.equal(worker.disposition, 'paused');
      });

    layoutTest('a delivery timeout gets exactly one fresh continue and Retry is never clicked', true,
      async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/flaky', async ({ turn, world, workerId }) => {
          if (turn === 2) return { generateMs: 300, error: 'delivery_timeout' };
          return progressing(3)({ turn, world, workerId });
        });
        await w.waitForWorker(lane, (x) => x.disposition === 'completed', 'completed');
        const prompts = await w.settled(lane);
        assert.equal(prompts.length, 3);
        assertExactlyOnce(prompts);
        assert.match(prompts[2].text, /^continue\s*\n/, 'the turn after the timeout is a fresh continue');
        const retries = w.fake.clicks.filter((c) => c.control === 'retry');
        assert.equal(retries.length, 0, 'Retry was never clicked');
        const attempts = await w.mcp.call('worker_attempts', { workerId: lane });
        assert.ok(JSON.stringify(attempts).includes('delivery_timeout'), 'the timed-out attempt is recorded');
      });

    layoutTest('killing the daemon and reloading the extension mid-run submit nothing twice', true,
      async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/sturdy', progressing(5, 1_500));
        await w.waitForPrompts(lane, 2);
        await w.daemon.kill9();
        await pause(500);
        await w.daemon.start();
        await w.mcp.connect();
        await w.waitForPrompts(lane, 3);
        await w.reloadExtension();
        await w.waitForWorker(lane, (x) => x.disposition === 'completed', 'completed', 60_000);
        const prompts = await w.settled(lane);
        assertExactlyOnce(prompts);
        const worker = await w.mcp.call('worker_get', { workerId: lane });
        assert.equal(prompts.length, worker.attempts, 'one prompt per recorded attempt');
        assert.equal(prompts.length, 5);
      });
  });
}
