// End to end, in headless Chromium and Firefox ESR: the orchestrator's ChatGPT app in worker
// conversations (issue 17). The extension chooses the app before the first send of a page
// load (`@`, the arrow keys, Enter, the pill verified), fails closed with APP_NOT_SELECTED
// when the page offers no such app, and leaves every tool-approval card to the person: the
// worker shows as Needs you on every surface while a card waits, nothing is typed, the test
// clicks Allow as the person (a trusted click), the turn goes on, and no untrusted click (a
// script's) ever lands on a card. The first card is the October 2026 one (a
// `@container/approval-card` with its title in an alert, a form of buttons, no test id, no
// dialog role, the "Suspicious Instruction" warning, Stop still showing: issue 27); the second
// the split button without Stop.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld, block } from './lib/world.mjs';
import { readOverlay, readPopup, readDashboard } from './lib/ui-surfaces.mjs';
import { until, openExtensionPage, findPage, reloadPage } from './lib/ui-pages.mjs';
import { DEFAULT_APPS } from '../fake-chatgpt/server.mjs';

const APP = DEFAULT_APPS.apps[0];
const APP_SETTINGS = { appName: APP.name, appDescription: APP.description };
const NEEDS_YOU = `approve ${APP.name} in this conversation`;
// While a card waits, nothing may be typed: the prompts are watched this long, in ms (past
// the workers' idle grace and the executor's polling, so a resume would have been sent).
const HELD_WATCH_MS = 3_000;

/** The lane's conversation page in the browser. */
async function conversationTab(w, conversationId) {
  return findPage(w, (url) => url.includes(conversationId), `the tab of conversation ${conversationId}`);
}

/** Waits for a card in the conversation, then for the daemon to hold the worker for it. */
async function heldForApproval(w, lane, conversationId, tool) {
  await w.fake.waitFor(() => w.fake.approvalIn(conversationId)?.tool === tool, 30_000, `an approval card for ${tool}`);
  return w.waitForWorker(lane, (worker) => worker.hold?.reason === 'awaiting_approval', 'held for approval');
}

/** Clicks the card's Allow as the person would (a trusted click from the test's browser driver). */
async function allowAsThePerson(tab) {
  await tab.click('[data-fake-approval] button[data-fake-choice="allow"]');
}

for (const kind of BROWSERS) {
  describe(`the orchestrator's app in ${kind}`, () => {
    test('the app is chosen before the first send; a card holds the worker as Needs you until the person allows; no script ever clicks it', () =>
      inWorld(kind, async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/apps', async ({ turn, world, workerId, approve }) => {
          if (turn === 1) {
            if (!(await approve('worker_progress', { variant: 'container', stop: true, warning: true }))) return { generateMs: 100, reply: block('working', 'denied') };
            await world.mcp.call('worker_progress', { workerId, summary: 'reported after the approval' });
            return { generateMs: 200, reply: block('working', 'step 1 of 2') };
          }
          // Another tool asks again (once per tool and page load); this card shows no Stop control.
          if (!(await approve('worker_complete', { variant: 'split', stop: false }))) return { generateMs: 100, reply: block('working', 'denied') };
          await world.mcp.call('worker_complete', { workerId, summary: 'done after two approvals' });
          return { generateMs: 200, reply: block('complete', 'done after two approvals') };
        });
        const [first] = await w.waitForPrompts(lane, 1);
        assert.equal(first.app, APP.name, 'the first prompt was sent with the app chosen (its pill verified)');
        const tab = await conversationTab(w, first.conversationId);

        const held = await heldForApproval(w, lane, first.conversationId, 'worker_progress');
        assert.equal(held.hold.detail, APP.name);
        assert.equal(held.binding.state, 'awaiting_approval', 'with Stop still showing, the card is no generating turn');
        assert.equal(held.disposition, 'awaiting_human');
        const popup = await openExtensionPage(w, 'src/ui/popup.html');
        const dashboard = await openExtensionPage(w, 'src/ui/dashboard.html');
        await until('the popup shows Needs you with Open conversation', async () => {
          const row = (await readPopup(popup)).rows.find((r) => r.workerId === lane);
          return row?.status === 'needs_you' && row.question === NEEDS_YOU && row.buttons.includes('row-open-conversation');
        });
        await until('the dashboard lists it under Needs you', async () => (await readDashboard(dashboard)).needsYou
          .some((item) => item.workerId === lane && item.question === NEEDS_YOU));
        await until('the overlay says Needs you', async () => {
          const overlay = await readOverlay(tab);
          return overlay.pill?.status === 'needs_you';
        });
        // Firefox ESR headless keeps no notification to list (getAll stays empty), so the shown
        // notification is read back in Chromium only; both run the same code path.
        if (kind === 'chromium') await until('a browser notification', async () => (await w.hook('notifications')).includes(`orc-approval:${lane}`));
        await assert.rejects(w.waitForPrompts(lane, 2, HELD_WATCH_MS), /timed out/, 'nothing is typed while the card waits');
        assert.ok(w.fake.approvalIn(first.conversationId), 'the card still waits for the person');

        await allowAsThePerson(tab);
        await w.waitForWorker(lane, (worker) => worker.hold?.reason !== 'awaiting_approval', 'the hold lifted');
        const [, second] = await w.waitForPrompts(lane, 2);
        assert.equal(second.app, null, 'the app is chosen once per page load: the second send types no mention');
        await heldForApproval(w, lane, first.conversationId, 'worker_complete');
        await allowAsThePerson(tab);
        await w.waitForWorker(lane, (worker) => worker.disposition === 'completed', 'completed');
        if (kind === 'chromium') await until('the notification cleared', async () => !(await w.hook('notifications')).includes(`orc-approval:${lane}`));

        assert.equal(w.fake.approvalClicks.length, 2, `two clicks on cards: ${JSON.stringify(w.fake.approvalClicks)}`);
        assert.ok(w.fake.approvalClicks.every((click) => click.trusted), 'every click on a card was the person\'s (trusted)');
        assert.equal(w.prompts(lane).length, 2);
      }, { settings: APP_SETTINGS }));

    test('after a reload the app is chosen again, and the tool asks again', () =>
      inWorld(kind, async (w) => {
        await w.createRun();
        const lane = await w.spawnLane('/root/reload', async ({ turn, world, workerId, approve }) => {
          await approve('worker_progress');
          await world.mcp.call('worker_progress', { workerId, summary: `turn ${turn}` });
          return { generateMs: 200, reply: block('working', `turn ${turn}`) };
        }, { policy: { mode: 'manual' } });
        const [first] = await w.waitForPrompts(lane, 1);
        const tab = await conversationTab(w, first.conversationId);
        await heldForApproval(w, lane, first.conversationId, 'worker_progress');
        await allowAsThePerson(tab);
        await w.settled(lane);
        // The reload must be over (a new document, its content script managing it) before the next send.
        await tab.evaluate(() => { window.orcBeforeReload = true; });
        await reloadPage(tab);
        await until('the reloaded page managed again', async () => {
          const fresh = await tab.evaluate(() => window.orcBeforeReload !== true && document.readyState === 'complete').catch(() => false);
          return fresh && (await readOverlay(tab)).pill !== null;
        });
        await w.mcp.call('worker_continue_now', { workerId: lane });
        const [, second] = await w.waitForPrompts(lane, 2);
        assert.equal(second.app, APP.name, 'the first send after the reload chose the app again');
        await heldForApproval(w, lane, first.conversationId, 'worker_progress');
        await allowAsThePerson(await conversationTab(w, first.conversationId));
        await w.settled(lane);
        assert.ok(w.fake.approvalClicks.every((click) => click.trusted) && w.fake.approvalClicks.length === 2,
          JSON.stringify(w.fake.approvalClicks));
      }, { settings: APP_SETTINGS }));

    test('a page without the app fails the send with APP_NOT_SELECTED: nothing is sent, the worker pauses, the composer is left empty', () =>
      inWorld(kind, async (w) => {
        w.fake.setApps({ apps: [DEFAULT_APPS.apps[1]], recent: DEFAULT_APPS.recent });
        await w.createRun();
        const lane = await w.spawnLane('/root/no-app', async () => ({ generateMs: 100, reply: block('working', 'unexpected') }));
        const worker = await w.waitForWorker(lane, (x) => x.pause?.reason === 'app_not_selected', 'paused: app not selected', 40_000);
        assert.equal(worker.disposition, 'paused');
        assert.equal(w.prompts(lane).length, 0, 'nothing was sent');
        const tab = await findPage(w, (url) => url === w.fake.url, 'the new chat tab');
        await until('the composer is left empty', () => tab.evaluate(() => document.querySelector('#prompt-textarea')?.textContent.trim() === ''));
        const attempts = await w.mcp.call('worker_attempts', { workerId: lane });
        assert.match(JSON.stringify(attempts), /APP_NOT_SELECTED/);
      }, { settings: APP_SETTINGS }));
  });
}
