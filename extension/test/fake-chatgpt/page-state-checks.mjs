// Checks of the page states issue 27 added, on the fake page in every layout profile of the
// real page (layouts/profiles.mjs REAL_LAYOUTS; each gets its own fake server), read by the
// page readers as the content script reads them: the October 2026 approval card (a
// `@container/approval-card` with its title in an inner alert and a form of buttons; with the
// Stop control showing and without it, with the "Suspicious Instruction" warning) is
// awaiting_approval and nothing is typed beside it, and once answered and left in an older
// turn it is history; a person's additions to the composer (a file uploading with Send
// disabled, a file, an image, a quoted reply, another app's pill) are drafts and the app's own
// pill is not; a control, form, card or dialog no real page shows, injected into the latest
// turn, beside it, around the composer or into its form, makes the page `unknown` with the
// reason, nothing is typed, and the page is idle again once it is gone; a failed turn whose
// notice and Retry label are in words the adapter does not know (a locale outside its lists)
// is still a failed turn, by structure: a generic error on the latest turn. How often the
// allow-list named something unknown on the states a person would call recognizable is
// counted and printed: it must be never. On the logged-out layout every such page is login
// required first (classify.js): there the facts and the readiness to type are checked.
import { classify } from '../../src/core/classify.js';
import { startFakeChatGPT } from './server.mjs';
import { REAL_LAYOUTS, profileOf } from './layouts/profiles.mjs';
import { factsUntil, openWithSelectors, prefixed, send } from './page-checks.mjs';

const APP = 'Orchestrator';
const READ = ({ ownApp }) => {
  const facts = globalThis.OrcSelectors.computeFacts(document, null, { ownApp });
  return { facts, idle: globalThis.OrcSelectors.readinessToType(document, 'idle', null, ownApp) };
};

// Controls, forms, cards and dialogs that no real page shows, each where it is injected: the
// latest turn's row, the composer's dock (before its form), or the form itself.
const INJECTED = [
  ['turn', '<div class="promo-card"><p>Try the new mode</p><button type="button">Try it</button></div>', 'div.promo-card'],
  ['turn', '<form><button type="button">Yes</button><button type="button">No</button></form>', 'form (2 buttons)'],
  ['turn', '<div role="dialog" aria-label="Rate this chat"><button type="button">Rate</button></div>', 'div[role=dialog]'],
  ['composer', '<div class="upgrade-banner">Upgrade for more <button type="button">Upgrade</button></div>', 'div.upgrade-banner'],
  ['form', '<label><input type="checkbox" role="switch"> Auto mode</label>', 'input[role=switch][type=checkbox]'],
];

// Clicks the card's allow button as the person would (a trusted click by the test's driver)
// until the server has the answer: a click the driver aims while the page redraws the card
// misses it, or finds the button moved, and the person clicks again.
const CLICKS_MAX = 5;
const ANSWER_WAIT_MS = 2_000;
export async function allowAsThePerson(page, server, id) {
  for (let click = 1; ; click += 1) {
    try {
      await page.click('[data-fake-approval] button[data-fake-choice="allow"]');
      await server.waitFor(() => server.approvalIn(id) === null, ANSWER_WAIT_MS, 'the card answered');
      return;
    } catch (error) {
      if (click >= CLICKS_MAX) throw error;
    }
  }
}

export async function runPageStateChecks({ browser, server, tally }) {
  const rate = { read: 0, unknown: 0 };
  await Promise.all(REAL_LAYOUTS.map(async (layout) => {
    const own = server.layout === layout ? server : await startFakeChatGPT({ layout });
    try {
      await checkLayout({ browser, server: own, tally: prefixed(tally, layout), profile: profileOf(layout), rate });
    } finally {
      if (own !== server) await own.close();
    }
  }));
  tally.note(`unknown fired on fake-page states a person would call recognizable: ${rate.unknown}/${rate.read}`);
}

async function checkLayout({ browser, server, tally, profile, rate }) {
  const { check, group } = tally;
  const page = await browser.newPage();
  // Reads the page; `recognizable`: a person would name everything on it (counted for the rate).
  const read = async (recognizable = true) => {
    const { facts, idle } = await page.evaluate(READ, { ownApp: APP });
    if (recognizable) {
      rate.read += 1;
      if (facts.unrecognized !== null) rate.unknown += 1;
    }
    return { facts, idle, classification: classify(facts), shown: JSON.stringify(facts) };
  };
  // The state a classification should be on this layout: a logged-out page is login required first.
  const seen = (state) => (profile.loggedOut ? 'error:login_required' : state);
  const stateOf = (classification) => (classification.state === 'error' ? `error:${classification.errorKind}` : classification.state);
  const id = server.seedConversation([{ role: 'user', text: 'Plan the beds.' }, { role: 'assistant', reply: 'Tomatoes first.' }]);
  await openWithSelectors(page, server.conversationUrl(id));
  await factsUntil(page, 'facts.lastAssistantDone', 'the seeded answer');

  await group('the October 2026 approval card', async () => {
    for (const { stop, warning, tool } of [{ stop: true, warning: false, tool: 'worker_progress' }, { stop: false, warning: true, tool: 'worker_complete' }]) {
      const what = `${stop ? 'with Stop' : 'without Stop'}${warning ? ', with its warning' : ''}`;
      let allowed = null;
      server.setPlan(async ({ approve }) => {
        allowed = await approve(tool, { variant: 'container', stop, warning });
        return { generateMs: 100, reply: 'Reported.' };
      });
      await send(page, profile, `report [attempt exe-${stop ? 1 : 2}]`);
      await factsUntil(page, 'facts.approval !== null', `the container card ${what}`);
      const { facts, idle, classification, shown } = await read();
      check(`container card ${what}: ${seen('awaiting_approval')}${profile.loggedOut ? '' : ` for ${APP}`}`, stateOf(classification) === seen('awaiting_approval')
        && facts.approval.app === APP && (profile.loggedOut || classification.detail === APP), shown);
      check(`container card ${what}: Stop ${stop ? 'shows' : 'is gone'}, and it is still no generating turn`, facts.stopButton === stop, shown);
      check(`container card ${what}: its buttons with their key hints`, JSON.stringify(facts.approval.buttons) === JSON.stringify(['Always allow', 'Deny Esc', 'Allow once ⏎']), shown);
      check(`container card ${what}: the warning ${warning ? 'is read' : 'is absent'}`, warning ? /^Suspicious Instruction/.test(facts.approval.warning ?? '') : facts.approval.warning === null, shown);
      check(`container card ${what}: nothing is typed beside it`, !idle.ok && idle.code === 'NOT_IDLE', JSON.stringify(idle));
      check(`container card ${what}: it is no unknown dialog nor an unrecognized card`, facts.dialog === null && facts.unrecognized === null && facts.error === null, shown);
      // The person answers (a trusted click by the test's driver); the turn goes on and ends.
      const card = await page.evaluate(() => document.querySelector('[data-fake-approval]').outerHTML);
      await allowAsThePerson(page, server, id);
      await factsUntil(page, "facts.approval === null && facts.lastAssistantDone && facts.lastAssistantTail === 'Reported.'", 'the answered turn to end');
      check(`container card ${what}: answered by the person, the turn ends`, allowed === true);
      // An answered card left in an older turn (a newer finished turn follows) is history.
      await page.evaluate((html) => {
        const turns = globalThis.OrcTurns.latestTurns(document, 3);
        const older = turns.find((turn, index) => index > 0 && turn.role === 'assistant');
        const template = document.createElement('template');
        template.innerHTML = html;
        older.element.append(template.content.firstElementChild);
      }, card);
      const history = await read();
      check(`container card ${what}: left in an older turn, it is history: ${seen('idle')}`, stateOf(history.classification) === seen('idle') && history.facts.approval === null, history.shown);
      check(`container card ${what}: and a submission may start`, history.idle.ok === true, JSON.stringify(history.idle));
    }
  });

  await group('a person\'s additions to the composer', async () => {
    const steps = [
      ['attach:uploading:report.pdf', 'upload', 'a file uploading'],
      ['upload-done', 'attachment', 'the uploaded file'],
      ['clear-attachments', null, 'nothing'],
      ['attach:image:photo.png', 'image', 'an image'],
      ['clear-attachments', null, 'nothing'],
      ['quote:Tomatoes first.', 'quote', 'a quoted reply'],
      ['clear-attachments', null, 'nothing'],
    ];
    for (const [command, draft, what] of steps) {
      await server.control(id, command);
      const { facts, idle, classification, shown } = await read();
      check(`composer with ${what}: draft ${draft}`, facts.composerDraft === draft && facts.unrecognized === null, shown);
      check(`composer with ${what}: ${draft === null ? 'a submission may start' : 'nothing is typed beside it (COMPOSER_BUSY)'}`,
        draft === null ? idle.ok : idle.code === 'COMPOSER_BUSY', JSON.stringify(idle));
      check(`composer with ${what}: still ${seen('idle')} (a draft changes no state)`, stateOf(classification) === seen('idle'), shown);
    }
    await server.control(id, 'attach:uploading:report.pdf');
    await page.evaluate((selector) => {
      const composer = document.querySelector(selector);
      composer.focus();
      if (composer.tagName === 'TEXTAREA') {
        Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(composer, 'note');
        composer.dispatchEvent(new Event('input', { bubbles: true }));
      } else {
        document.execCommand('insertText', false, 'note');
      }
    }, profile.composer);
    const uploading = (await read()).facts;
    check('composer with text and a file uploading: Send stays disabled', uploading.composerText && !uploading.sendEnabled, JSON.stringify(uploading));
    await server.control(id, 'clear-draft');
    await server.control(id, 'clear-attachments');
    // Another app's pill is a person's mention; the app this extension chooses is not.
    await page.evaluate((selector) => {
      const composer = document.querySelector(selector);
      const pill = document.createElement('span');
      pill.setAttribute('contenteditable', 'false');
      pill.setAttribute('app-mention-path', 'app://another');
      pill.setAttribute('app-mention-display-name', 'Another App');
      pill.textContent = 'Another App';
      (composer.tagName === 'TEXTAREA' ? composer.parentElement : composer).prepend(pill);
    }, profile.composer);
    const other = await page.evaluate(READ, { ownApp: APP });
    check('another app\'s pill: a person\'s mention, nothing is typed', other.facts.composerDraft === 'mention' && other.idle.code === 'COMPOSER_BUSY', JSON.stringify(other));
    const mine = await page.evaluate(READ, { ownApp: 'Another App' });
    check('the app this extension chooses: its pill is no draft', mine.facts.composerDraft === null && mine.idle.ok, JSON.stringify(mine));
    await page.evaluate(() => document.querySelector('[app-mention-path="app://another"]').remove());
  });

  await group('a failed turn in words the adapter does not know', async () => {
    server.setPlan(() => ({ generateMs: 100, error: 'delivery_timeout' }));
    await send(page, profile, `continue [attempt exe-3]`);
    await factsUntil(page, 'facts.error !== null', 'the failed turn');
    // Another locale: the notice and the Retry label in words no list holds (structure stays).
    await page.evaluate((retrySelector) => {
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        if (node.data.includes('Message delivery timed out')) node.data = 'Dostarczenie wiadomości nie powiodło się w wyznaczonym czasie.';
      }
      const retry = document.querySelector(retrySelector);
      retry.textContent = 'Spróbuj ponownie';
      retry.removeAttribute('aria-description');
    }, profile.retry);
    const { facts, classification, shown } = await read();
    check('a failed turn in unknown words: a failed turn with its Retry recognized', facts.error?.kind === 'turn_failed' && facts.error.retry === true, shown);
    check(`a failed turn in unknown words: ${seen('error:generic')} (how it failed is not known; Retry is never clicked)`,
      stateOf(classification) === seen('error:generic'), JSON.stringify(classification));
    server.setPlan(() => ({ generateMs: 100, reply: 'Back.' }));
    await send(page, profile, `continue [attempt exe-4]`);
    await factsUntil(page, "facts.lastAssistantDone && facts.lastAssistantTail === 'Back.'", 'the next answer');
  });

  await group('a reasoning header with the button beside it', async () => {
    await server.control(id, 'inject:turn:<div class="flex"><button type="button" aria-expanded="false">Thinking</button><button type="button">Skip</button></div>');
    const { facts, shown } = await read();
    check('a disclosure and the button beside it ("Skip"): recognized', facts.unrecognized === null, shown);
    await server.control(id, 'uninject');
  });

  await group('what no real page shows, injected', async () => {
    for (const [where, html, what] of INJECTED) {
      await server.control(id, `inject:${where}:${html}`);
      const { facts, idle, classification, shown } = await read(false);
      const place = where === 'turn' ? 'latest turn' : 'composer';
      check(`${what} in the ${where}: unrecognized in the ${place}`, facts.unrecognized?.where === place && facts.unrecognized.what.startsWith(what), shown);
      check(`${what} in the ${where}: ${profile.loggedOut ? seen('unknown') : 'unknown, with the reason'}`, profile.loggedOut ? stateOf(classification) === seen('unknown')
        : classification.state === 'unknown' && classification.detail?.startsWith(`Page not recognized: ${what}`), JSON.stringify(classification));
      check(`${what} in the ${where}: nothing is typed`, !idle.ok && idle.code === 'NOT_IDLE' && idle.detail.startsWith('page not recognized'), JSON.stringify(idle));
      await server.control(id, 'uninject');
      const after = await read();
      check(`${what} gone: ${seen('idle')} again, a submission may start`, stateOf(after.classification) === seen('idle') && after.idle.ok, after.shown);
    }
  });
  await page.close();
}
