// The content adapter against pages reproduced from real chatgpt.com captures
// (extension/test/fixtures/pages/: index.json for the layouts, locales/index.json for the UI
// languages; SOURCES.md and locales/LOCALES.md name every capture with its date). Each
// fixture is served at the address the real page had, the page readers are injected as the
// manifest loads them, and the facts, the classification (src/core/classify.js), the delivery
// decision (src/core/delivery.js) and whether a submission may start (readinessToType) are
// checked against what a person looking at that page would say (the fixture's `truth`),
// with the app readers (apps.js): the approval card's app and its safety warning, the `@`
// popover's app row, the pill. The truth fields are SOURCES.md section 8's: `draft` (anything
// a person put in the composer refuses a submission, COMPOSER_BUSY; `draftParts` says what,
// and the adapter's kind must be one of them), `pill` (the app the adapter chose: found, and
// no draft; for another app the same pill is a person's mention), `approvalWarning`, and what
// the page shows under a state that stops typing (`pageUnderneath`, `errorUnderneath`: read
// with that state's fact taken away). A logged-out page is login required whatever it shows
// underneath (only a challenge comes first): managed work never types there. How often the
// allow-list (vocabulary.js) names something it does not know is counted per layout and
// printed: on these pages, every one a person would call recognizable, it must be never.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { classify } from '../../src/core/classify.js';
import { decideDelivery } from '../../src/core/delivery.js';
import { injectReaders } from './harness.mjs';

const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/pages/', import.meta.url));
const INDEXES = ['index.json', 'locales/index.json'];
// The page's wall clock for the facts: usage notices name reset times relative to it.
const PAGE_NOW_ISO = '2026-11-20T10:00:00';

/** Every fixture of every index, with its file's HTML. */
export function loadFixtures() {
  return INDEXES.flatMap((name) => JSON.parse(readFileSync(`${FIXTURES_DIR}${name}`, 'utf8')))
    .map((fixture) => ({ ...fixture, html: readFileSync(`${FIXTURES_DIR}${fixture.file}`, 'utf8') }));
}

/** Serves fixture N at /f/N<its path>, so each page has the address the real one had. */
async function serveFixtures(fixtures) {
  const server = createServer((request, response) => {
    const match = /^\/f\/(\d+)(\/.*)$/.exec(new URL(request.url, 'http://x').pathname);
    const fixture = match ? fixtures[Number(match[1])] : undefined;
    if (!fixture) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(fixture.html);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (n) => `http://127.0.0.1:${server.address().port}/f/${n}${fixtures[n].path ?? '/'}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// What the page readers report, read inside the page.
function readPage({ nowIso, appRow, pill, otherApp }) {
  const now = new Date(nowIso);
  const facts = globalThis.OrcSelectors.computeFacts(document, now, { ownApp: pill });
  const noticeTexts = [facts.usageLimit?.text].filter(Boolean);
  const composer = globalThis.OrcSelectors.findComposer(document);
  const row = appRow ? globalThis.OrcApps.appRow(document, appRow) : null;
  return {
    facts,
    appRowText: row === null ? null : row.textContent.replace(/\s+/g, ''),
    // Without a description, the name alone must not pick a row a person would not (several rows show it).
    appRowByNameOnly: appRow ? globalThis.OrcApps.appRow(document, { name: appRow.name, description: '' })?.textContent.replace(/\s+/g, '') ?? null : null,
    pillFound: pill ? globalThis.OrcApps.findPill(composer, pill) !== null : null,
    resets: noticeTexts.map((text) => globalThis.OrcPageTexts.readResetTime(text)),
    idle: globalThis.OrcSelectors.readinessToType(document, 'idle', null, pill),
    // The same page for a worker whose app is another one: the pill is then a person's.
    idleForOtherApp: pill ? globalThis.OrcSelectors.readinessToType(document, 'idle', null, otherApp) : null,
  };
}

// The state a person's `truth` names.
function shownState(truth) {
  if (truth.state !== 'error') return { state: truth.state, errorKind: undefined };
  return { state: 'error', errorKind: truth.errorKind };
}

// The page states that come before a log-in wall (src/core/classify.js).
const BEFORE_LOGIN = ['challenge'];

// The classification a person's `truth` stands for: a logged-out page needs a log-in first
// (the truths say so themselves since 2026-12-06; `loggedOut` alone still means it).
function expectedClassification(truth) {
  const shown = shownState(truth);
  if (truth.loggedOut !== true || (shown.state === 'error' && BEFORE_LOGIN.includes(shown.errorKind))) return shown;
  return { state: 'error', errorKind: 'login_required' };
}

// The fact that says each state that stops typing, taken away to read what the page shows
// underneath it.
const WITHOUT = {
  login_required: { loginRequired: false },
  usage_limit: { usageLimit: null },
  rate_limited: { rateLimited: null },
  suspicious_activity: { suspiciousActivity: null },
  blocked_by_dialog: { dialog: null },
  conversation_full: { conversationFull: false },
};

// What the truth says stands under its state, outermost first: `errorUnderneath` (an error
// kind), then `pageUnderneath` (a state; `error` is the kind just named).
function layersUnderneath(truth) {
  const layers = [];
  if (truth.errorUnderneath) layers.push({ state: 'error', errorKind: truth.errorUnderneath });
  if (truth.pageUnderneath && truth.pageUnderneath !== 'error') layers.push({ state: truth.pageUnderneath, errorKind: undefined });
  return layers;
}

// Whether the composer holds anything a person put there, as the truth says: `draft`, or for
// a truth without that field, typed text.
export function draftOfTruth(truth) {
  return truth.draft ?? truth.composerHasText === true;
}

// The adapter's draft kinds (composer.js draftOf) and the `draftParts` each may stand for
// (an attachment is anything beside the editor the adapter has no name for: a file, or a
// quote, whose markup no source shows).
const DRAFT_KIND_PARTS = {
  text: ['text'], mention: ['mention'], upload: ['uploading'], image: ['image'], quote: ['quote'], attachment: ['file', 'quote'],
};

// An app that is not the fixture's: its pill is a person's.
const OTHER_APP = 'Some Other App';

// The decision for a `conversation.send` a person would agree with: type a fresh prompt into
// a quiet page or over a failed turn's card; fail at once when the page cannot host turns;
// wait for anything else (a turn generating, a limit, a lock, a dialog, a challenge).
function expectedSendDecision(truth, composerUsable) {
  const { state, errorKind } = expectedClassification(truth);
  if (state === 'error' && errorKind === 'conversation_full') return 'fail';
  const quiet = state === 'idle' || state === 'ready' || (state === 'error' && ['delivery_timeout', 'generic'].includes(errorKind));
  return quiet && composerUsable ? 'submit' : 'wait';
}

// The app-shell list as a new chat grows it: one exchange (whose two messages share a holder
// inside it), then a second exchange appended. The reader's turn list must be around the
// exchanges, or the one it keeps from the first read never sees the second.
const GROWING_FIXTURE = 'turn-key-2026-09/idle.html';

async function checkGrowingExchanges({ page, server, fixtures, check }) {
  const n = fixtures.findIndex((fixture) => fixture.file === GROWING_FIXTURE);
  await page.goto(server.url(n));
  await injectReaders(page);
  const counts = await page.evaluate(() => {
    const read = () => {
      const facts = globalThis.OrcSelectors.computeFacts(document);
      return `${facts.userTurns}/${facts.assistantTurns} ${facts.lastAssistantDone}`;
    };
    const exchanges = [...document.querySelectorAll('[data-turn-key]')];
    const list = exchanges[0].parentElement;
    for (const exchange of exchanges.slice(1)) exchange.remove();
    const one = read();
    list.append(...exchanges.slice(1));
    return [one, read()];
  });
  check(`${GROWING_FIXTURE}: one exchange, then two: 1/1 then 2/2 turns`, counts.join(' | ') === '1/1 true | 2/2 true', counts.join(' | '));
}

export async function runFixtureChecks({ browser, tally }) {
  const { check } = tally;
  const fixtures = loadFixtures();
  const server = await serveFixtures(fixtures);
  const page = await browser.newPage();
  const layouts = new Set();
  const locales = new Set();
  // Per layout (or locale directory): fixtures read, and those on which the allow-list named something unknown.
  const unknownRate = new Map();
  try {
    for (const [n, fixture] of fixtures.entries()) {
      const name = `${fixture.file}`;
      await tally.group(name, async () => {
        await page.goto(server.url(n));
        await injectReaders(page);
        const truth = fixture.truth;
        const { facts, resets, idle, idleForOtherApp, appRowText, appRowByNameOnly, pillFound } = await page.evaluate(readPage,
          { nowIso: PAGE_NOW_ISO, appRow: truth.appRow ?? null, pill: truth.pill ?? null, otherApp: OTHER_APP });
        const draft = draftOfTruth(truth);
        const classification = classify(facts);
        const expected = expectedClassification(truth);
        const shown = JSON.stringify({ classification, facts });
        check(`${name}: ${expected.state}${expected.errorKind ? ` ${expected.errorKind}` : ''}`,
          classification.state === expected.state && classification.errorKind === expected.errorKind, shown);
        if (truth.composer !== undefined) check(`${name}: composer ${truth.composer ? 'found' : 'absent'}`, facts.composer === truth.composer, shown);
        if (truth.composerHasText !== undefined) check(`${name}: typed text ${truth.composerHasText}`, facts.composerText === truth.composerHasText, shown);
        if (facts.composer) check(`${name}: ${draft ? 'a person\'s draft' : 'no draft'} in the composer`, (facts.composerDraft !== null) === draft, shown);
        if (Array.isArray(truth.draftParts) && facts.composerDraft !== null) {
          check(`${name}: the draft read as one of ${truth.draftParts.join(', ')}`,
            (DRAFT_KIND_PARTS[facts.composerDraft] ?? []).some((part) => truth.draftParts.includes(part)), String(facts.composerDraft));
        }
        const layers = layersUnderneath(truth);
        let under = facts;
        let above = expected;
        for (const layer of layers) {
          under = { ...under, ...(WITHOUT[above.errorKind] ?? {}) };
          const read = classify(under);
          check(`${name}: under ${above.errorKind ?? above.state}, the page shows ${layer.state}${layer.errorKind ? ` ${layer.errorKind}` : ''}`,
            read.state === layer.state && read.errorKind === layer.errorKind, JSON.stringify(read));
          above = layer;
        }
        if (truth.stopControl !== undefined) check(`${name}: stop control ${truth.stopControl}`, facts.stopButton === truth.stopControl, shown);
        if (truth.sendButtonBeforeTyping === false && !truth.composerHasText) check(`${name}: no send button read before typing`, facts.sendButton === false, shown);
        if (Number.isInteger(truth.userTurns)) {
          check(`${name}: ${truth.userTurns} user and ${truth.assistantTurns} assistant turns`,
            facts.userTurns === truth.userTurns && facts.assistantTurns === truth.assistantTurns, shown);
        }
        if (truth.latestAssistantDone !== undefined && truth.latestTurn === 'assistant') {
          check(`${name}: latest assistant turn done ${truth.latestAssistantDone}`, facts.lastAssistantDone === truth.latestAssistantDone, shown);
        }
        if (truth.tail !== undefined) check(`${name}: the answer's tail is its last prose block`, facts.lastAssistantTail === truth.tail, shown);
        if (truth.tailExcludes !== undefined) check(`${name}: the answer's tail holds no text of the question`, facts.lastAssistantDone && !facts.lastAssistantTail.includes(truth.tailExcludes), shown);
        if (truth.retryShown) check(`${name}: the Retry control is recognised`, facts.error?.retry === true, shown);
        if (truth.dialogHeading && expected.errorKind === 'blocked_by_dialog') {
          check(`${name}: the dialog is named by its heading`, classification.detail === truth.dialogHeading, shown);
        }
        if (truth.approvalApp !== undefined) {
          check(`${name}: approval card ${truth.approvalApp === null ? 'absent' : `for ${truth.approvalApp}`}`,
            (facts.approval?.app ?? null) === truth.approvalApp, shown);
        }
        if (truth.approvalApp || truth.approvalWarning !== undefined) {
          check(`${name}: ${truth.approvalWarning === true ? 'the card\'s safety warning is reported' : 'no safety warning on the card'}`,
            (typeof facts.approval?.warning === 'string' && facts.approval.warning !== '') === (truth.approvalWarning === true), shown);
        }
        if (expected.state === 'awaiting_approval') check(`${name}: the app travels as detail`, classification.detail === truth.detail, shown);
        if (truth.state === 'awaiting_approval' || truth.pageUnderneath === 'awaiting_approval') {
          check(`${name}: the card is no unknown dialog`, facts.dialog === null, shown);
          check(`${name}: nothing is typed beside the card`, idle.ok === false && idle.code === 'NOT_IDLE', JSON.stringify(idle));
        }
        if (expected.errorKind === 'app_unavailable') check(`${name}: the tool error travels as detail`, classification.detail === truth.detail, shown);
        if (truth.appRow) {
          check(`${name}: the app row is the one with name and description`, appRowText === truth.appRow.rowText, String(appRowText));
          check(`${name}: the name alone picks a row only when one row names it exactly`, appRowByNameOnly === truth.appRow.rowText, String(appRowByNameOnly));
        }
        if (truth.pill) {
          check(`${name}: the pill of ${truth.pill} is found in the composer`, pillFound === true, shown);
          check(`${name}: for a worker of another app, the pill is a person's mention`,
            idleForOtherApp?.code === 'COMPOSER_BUSY', JSON.stringify(idleForOtherApp));
        }
        if (truth.resetParsed) {
          const reset = resets[0] ?? null;
          check(`${name}: reset time read as ${JSON.stringify(truth.resetParsed)}`, reset !== null
            && reset.hour === truth.resetParsed.hour && reset.minute === truth.resetParsed.minute
            && reset.dayOffset === (truth.resetParsed.dayOffset ?? 0), JSON.stringify(reset));
        }
        const usable = facts.composer && !facts.stopButton;
        const decision = decideDelivery('conversation.send', { connected: true, facts, classification });
        check(`${name}: conversation.send decision ${expectedSendDecision(truth, usable)}`,
          decision.action === expectedSendDecision(truth, usable), JSON.stringify(decision));
        if (expectedSendDecision(truth, usable) === 'submit' && !draft) {
          check(`${name}: an idle submission may start`, idle.ok === true, JSON.stringify(idle));
        }
        if (draft) check(`${name}: a person's draft refuses the submission`, idle.code === 'COMPOSER_BUSY', JSON.stringify(idle));
        if (truth.state === 'generating') check(`${name}: an idle submission is refused as not idle`, idle.code === 'NOT_IDLE', JSON.stringify(idle));
        if (truth.loggedOut === true) check(`${name}: logged out: login required, a send waits`, facts.loginRequired && decision.action === 'wait', JSON.stringify(decision));
        const unknownExpected = truth.state === 'unknown';
        check(`${name}: ${unknownExpected ? 'the allow-list names what it does not know' : 'everything in the latest turn and around the composer is recognized'}`,
          (facts.unrecognized !== null) === unknownExpected, JSON.stringify(facts.unrecognized));
        const rateKey = fixture.file.startsWith('locales/') ? `locales/${fixture.locale}` : fixture.file.split('/')[0];
        const rate = unknownRate.get(rateKey) ?? { read: 0, unknown: 0, safe: 0, refused: 0 };
        rate.read += 1;
        if (facts.unrecognized !== null) rate.unknown += 1;
        // A page a submission may start on (quiet, nothing of a person's in the composer), and whether readiness refused it.
        if (expectedSendDecision(truth, usable) === 'submit' && !draft) {
          rate.safe += 1;
          if (!idle.ok) rate.refused += 1;
        }
        unknownRate.set(rateKey, rate);
        layouts.add(fixture.layout);
        locales.add(fixture.locale);
      });
    }
    await checkGrowingExchanges({ page, server, fixtures, check: tally.check });
  } finally {
    await page.close();
    await server.close();
  }
  tally.note(`(${fixtures.length} fixtures, layouts: ${[...layouts].join(', ')}; locales: ${[...locales].join(', ')})`);
  tally.note(`unknown fired on real-page fixtures: ${[...unknownRate].map(([key, rate]) => `${key} ${rate.unknown}/${rate.read}`).join(', ')}`);
  tally.note(`safe pages refused (a submission would not start): ${[...unknownRate].map(([key, rate]) => `${key} ${rate.refused}/${rate.safe}`).join(', ')}`);
}
