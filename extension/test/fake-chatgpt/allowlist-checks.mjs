// A property-style test of the page adapter's allow-list (vocabulary.js, issue 27): on every
// real-page fixture a person would call idle or ready (test/fixtures/pages/, logged-out
// pages included: there only the facts and the readiness to type are checked, the page being
// login required first) and on the fake page's idle and ready states in every layout, elements
// the adapter has never seen are inserted one at a time, in the latest turn, beside it in the
// turn list, around the composer or inside its form: controls, forms, fields, menus, switches,
// dialogs, alerts holding a field, cards and banners, under random tags, with random classes,
// roles and labels in random scripts. Each time the adapter must refuse to type (readiness),
// and the facts must say what was not recognized and where (and classify `unknown` with that
// reason); once the element is removed the page must be as it was (recognized, a submission
// may start). The generator is seeded (ALLOWLIST_SEED, default DEFAULT_SEED) and deterministic:
// a failure prints the seed, the iteration and the element with where it was put.
//
// What the generator leaves out is what the vocabulary names by design (extension/README.md,
// "The allow-list"): a button in the answer's prose or the user's message, a button of the
// action bar, a status line, a disclosure button and a button beside it in a turn, an alert with at most two
// buttons and no field (an error card), a control with no words around the composer (an
// icon), a menu opener or a tool toggle there, a control inside a sentence of the fine print.
import { createServer } from 'node:http';
import { classify } from '../../src/core/classify.js';
import { injectReaders } from './harness.mjs';
import { draftOfTruth, loadFixtures } from './fixture-checks.mjs';
import { startFakeChatGPT } from './server.mjs';
import { REAL_LAYOUTS, profileOf } from './layouts/profiles.mjs';
import { openWithSelectors, factsUntil } from './page-checks.mjs';

const DEFAULT_SEED = 27_2026;
const SEED = Number(process.env.ALLOWLIST_SEED ?? DEFAULT_SEED);
// Insertions per page: the real-page fixtures, and the fake page's states.
const ITERATIONS_PER_FIXTURE = 40;
const ITERATIONS_PER_FAKE_STATE = 60;
// The app a fixture's pill names: this extension's own (not a draft).
const OWN_APP = 'Orchestrator';

/**
 * In the page: `iterations` insertions from `seed` (each removed before the next). Returns
 * {ran, failures: [{iteration, site, html, why, facts}], sites, samples: [{iteration, site, html, facts}]}
 * (sites: insertions per site; samples: the facts read with each insertion, for classify.js).
 */
function insertUnknowns({ seed, iterations, ownApp, loggedOut }) {
  const readers = globalThis.OrcSelectors;
  // mulberry32: a small seeded generator.
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (list) => list[Math.floor(random() * list.length)];
  const SCRIPTS = [[0x61, 26], [0x430, 32], [0x3b1, 25], [0x5d0, 27], [0x627, 26], [0x4e00, 2000], [0x905, 50], [0xe01, 46], [0xac00, 2000], [0x1f600, 60]];
  const word = () => {
    const [start, size] = pick(SCRIPTS);
    let text = '';
    for (let i = 0, n = 2 + Math.floor(random() * 6); i < n; i += 1) text += String.fromCodePoint(start + Math.floor(random() * size));
    return text;
  };
  const words = () => Array.from({ length: 1 + Math.floor(random() * 3) }, word).join(' ');
  const SYLLABLES = ['zor', 'qui', 'vex', 'lum', 'tak', 'pry', 'ond', 'gli', 'ska', 'wem'];
  const token = () => `${pick(SYLLABLES)}${pick(SYLLABLES)}${Math.floor(random() * 100)}`;
  const CARD_WORDS = ['card', 'banner', 'toast', 'callout', 'modal'];
  const WRAPPERS = ['div', 'section', 'span', 'aside', 'p', 'x-widget', 'article'];
  const make = (tag, attributes = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    node.append(...children);
    return node;
  };
  const button = () => make(pick(['button', 'button', 'div']), { ...(random() < 0.5 ? { 'aria-label': words() } : {}), class: token() }, words());
  const asButton = (node) => {
    if (node.tagName === 'DIV') node.setAttribute('role', 'button');
    return node;
  };
  // The kinds of element: `strict` ones are unknown even inside prose or a user message.
  const KINDS = [
    { strict: false, make: () => asButton(button()) },
    { strict: true, make: () => make('form', { class: token() }, ...Array.from({ length: 1 + Math.floor(random() * 4) }, () => asButton(button()))) },
    { strict: true, make: () => make('label', {}, words(), make('input', { type: pick(['text', 'checkbox', 'radio', 'range', 'email', 'number']), 'aria-label': words() })) },
    { strict: true, make: () => make('select', { 'aria-label': words() }, make('option', {}, words()), make('option', {}, words())) },
    { strict: true, make: () => make('textarea', { 'aria-label': words() }) },
    { strict: true, make: () => make('div', { contenteditable: 'true', class: token() }, words()) },
    { strict: true, make: () => make('div', { role: pick(['switch', 'combobox', 'listbox', 'slider', 'textbox', 'menu', 'radiogroup']), 'aria-label': words(), tabindex: '0' }, words()) },
    { strict: false, make: () => make('div', { role: pick(['checkbox', 'radio', 'tablist', 'option', 'menuitem']), 'aria-label': words(), tabindex: '0' }, words()) },
    { strict: true, make: () => make('div', { role: pick(['dialog', 'alertdialog']), 'aria-label': words() }, make('p', {}, words()), asButton(button())) },
    { strict: true, make: () => { const node = make('dialog', {}, make('p', {}, words()), asButton(button())); node.setAttribute('open', ''); return node; } },
    { strict: true, make: () => make('div', { role: 'alert' }, make('p', {}, words()), make('input', { type: 'text', 'aria-label': words() })) },
    { strict: false, make: () => make('div', { class: `${token()}-${pick(CARD_WORDS)} ${token()}` }, make('p', {}, words()), ...(random() < 0.7 ? [asButton(button())] : [])) },
    { strict: false, make: () => make('div', { 'data-testid': `${token()}-${pick(CARD_WORDS)}` }, make('p', {}, words()), asButton(button())) },
    { strict: false, make: () => make('details', {}, make('summary', {}, words()), make('p', {}, words())) },
    { strict: true, make: () => make('iframe', { title: words(), srcdoc: '<p>frame</p>' }) },
  ];
  const wrapped = (node) => (random() < 0.4 ? make(pick(WRAPPERS), { class: token() }, node) : node);

  const turnsReader = globalThis.OrcTurns;
  const { latest } = turnsReader.recentTurns(document);
  const area = latest === null ? null : turnsReader.areaOf(latest);
  const composer = readers.findComposer(document);
  const form = composer?.closest('form') ?? null;
  const PROSE = turnsReader.SELECTORS.assistantText;
  const USER = '[data-message-author-role="user"], [data-message-role="user"], [data-user-message-bubble], [data-chatgpt-search-unit-key$=":user"], [data-content-search-unit-key$=":user"], [data-markdown-text-tone="user-message"]';
  const BAR = turnsReader.SELECTORS.actionBar.join(', ');
  const KNOWN_PARTS = `${BAR}, [data-message-actions], .turn-action-controls, [role="status"], [aria-busy="true"], [data-streaming-response-status], [role="alert"], [aria-live="assertive"], [class*="text-token-text-error"], [data-conversation-recovery], [class*="tool-message"], button, [role="button"], svg, [hidden], [aria-hidden="true"], .sr-only`;
  // An element a button in which is the action bar's or a status header's (vocabulary.js
  // inActionBar, inStatusHeader): it holds a mark of the bar or a disclosure, and no prose.
  const barLike = (element) => element !== null && element.querySelector(`${BAR}, button[aria-expanded]:not([aria-haspopup]), [data-streaming-response-status]`) !== null
    && element.querySelector(PROSE) === null;
  const nearCode = (element) => {
    for (let at = element, level = 0; at !== null && level < 5; at = at.parentElement, level += 1) if (at.querySelector('pre') !== null) return true;
    return false;
  };
  // Where a kind may go: in the latest turn (any element of its area that is not a known part
  // for a non-strict kind, prose and the user's message included for a strict one), beside it
  // (a new row after its row), around the composer (its dock: next to the form), in the form.
  const sites = [];
  if (area !== null) sites.push('turn', 'turn', 'beside');
  if (form !== null) sites.push('composer', 'form');
  const turnHosts = (strict) => [area, ...area.querySelectorAll('*')].filter((element) => element.closest(KNOWN_PARTS) === null
    && (strict || (element.closest(`${PROSE}, ${USER}`) === null && !nearCode(element) && !barLike(element) && !barLike(element.parentElement)))
    && !(element instanceof SVGElement) && !['P', 'SPAN', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'IMG', 'BR', 'LI', 'TABLE', 'TR', 'TD'].includes(element.tagName)
    && element.checkVisibility());
  const place = (site, node, strict) => {
    if (site === 'turn') {
      const hosts = turnHosts(strict);
      const host = pick(hosts);
      host.insertBefore(node, random() < 0.5 ? null : pick([...host.children, null]));
    } else if (site === 'beside') {
      let row = area;
      const container = turnsReader.locateTurns(document)?.container ?? null;
      while (container !== null && row.parentElement !== null && row.parentElement !== container) row = row.parentElement;
      row.after(node);
    } else if (site === 'composer') {
      if (random() < 0.5) form.before(node);
      else form.after(node);
    } else {
      const hosts = [form, ...form.querySelectorAll('div')].filter((element) => element !== composer && !composer.contains(element)
        && element.closest('button, [hidden], .hidden, [aria-hidden="true"]') === null && element.checkVisibility());
      const host = pick(hosts);
      host.insertBefore(node, pick([...host.children, null]));
    }
  };
  const before = readers.computeFacts(document, null, { ownApp });
  const failures = [];
  const samples = [];
  const bySite = {};
  let ran = 0;
  for (let iteration = 0; iteration < iterations && sites.length > 0; iteration += 1) {
    const site = pick(sites);
    const kind = pick(KINDS);
    const node = wrapped(kind.make());
    place(site, node, kind.strict);
    const html = node.outerHTML.slice(0, 300);
    if (!node.checkVisibility()) {
      node.remove();
      continue;
    }
    ran += 1;
    bySite[site] = (bySite[site] ?? 0) + 1;
    const facts = readers.computeFacts(document, null, { ownApp });
    const idle = readers.readinessToType(document, 'idle', null, ownApp);
    samples.push({ iteration, site, html, facts: { ...facts, lastAssistantTail: '' } });
    const where = site === 'turn' || site === 'beside' ? 'latest turn' : 'composer';
    const why = [];
    if (idle.ok) why.push('readiness allowed typing');
    if (facts.unrecognized === null) why.push('nothing unrecognized in the facts');
    else if (facts.unrecognized.where !== where) why.push(`unrecognized in the ${facts.unrecognized.where}, not the ${where}`);
    if (!loggedOut && (facts.approval !== null || facts.dialog !== null || facts.error !== null)) why.push(`read as a known state: ${JSON.stringify({ approval: facts.approval, dialog: facts.dialog, error: facts.error })}`);
    node.remove();
    const after = readers.computeFacts(document, null, { ownApp });
    const idleAfter = readers.readinessToType(document, 'idle', null, ownApp);
    if (after.unrecognized !== null || !idleAfter.ok || JSON.stringify(after) !== JSON.stringify(before)) why.push(`not as before once removed: ${JSON.stringify({ unrecognized: after.unrecognized, idle: idleAfter })}`);
    if (why.length > 0) failures.push({ iteration, site, html, why: why.join('; '), facts: JSON.stringify(facts) });
  }
  return { ran, failures, sites: bySite, samples };
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

// What a fixture's page is, idle or ready, or under a log-in wall shows (its
// `pageUnderneath`; a logged-out new chat is ready), or null.
function quietState(truth) {
  if (['idle', 'ready'].includes(truth.state)) return truth.state;
  if (truth.errorKind !== 'login_required' || truth.errorUnderneath) return null;
  const under = truth.pageUnderneath ?? (truth.userTurns === 0 ? 'ready' : null);
  return ['idle', 'ready'].includes(under) ? under : null;
}

// A fixture a person would call idle or ready (under a log-in wall too), with nothing of a
// person's in its composer (`draft`: text, a file, another app's pill; the app's own pill is none).
const isQuiet = (fixture) => quietState(fixture.truth) !== null && !draftOfTruth(fixture.truth);

export async function runAllowlistChecks({ browser, tally }) {
  const startedAtMs = Date.now();
  const totals = { pages: 0, insertions: 0, failures: 0, sites: {} };
  // The page's own verdicts, then classify.js's: `unknown` with the reason (a logged-out page:
  // login required, which comes first).
  const record = (name, seed, result, loggedOut) => {
    for (const sample of result.samples) {
      const classification = classify(sample.facts);
      const ok = loggedOut ? classification.errorKind === 'login_required'
        : classification.state === 'unknown' && /^Page not recognized: /.test(classification.detail ?? '');
      if (!ok) result.failures.push({ ...sample, why: `classified ${JSON.stringify(classification)}`, facts: JSON.stringify(sample.facts) });
    }
    totals.pages += 1;
    totals.insertions += result.ran;
    for (const [site, count] of Object.entries(result.sites)) totals.sites[site] = (totals.sites[site] ?? 0) + count;
    for (const failure of result.failures.slice(0, 3)) {
      tally.check(`${name}: seed ${seed}, iteration ${failure.iteration}, ${failure.site}: ${failure.html}`, false, `${failure.why}\n    facts: ${failure.facts}`);
    }
    totals.failures += result.failures.length;
  };
  const fixtures = loadFixtures();
  const server = await serveFixtures(fixtures);
  const page = await browser.newPage();
  try {
    for (const [n, fixture] of fixtures.entries()) {
      if (!isQuiet(fixture)) continue;
      await tally.group(`allow-list: ${fixture.file}`, async () => {
        await page.goto(server.url(n));
        await injectReaders(page);
        const baseline = await page.evaluate((ownApp) => globalThis.OrcSelectors.readinessToType(document, 'idle', null, ownApp), fixture.truth.pill ?? OWN_APP);
        tally.check(`allow-list: ${fixture.file}: quiet, a submission may start before anything is inserted`, baseline.ok, JSON.stringify(baseline));
        if (!baseline.ok) return;
        const seed = (SEED + n * 7919) >>> 0;
        const loggedOut = fixture.truth.loggedOut === true || fixture.truth.errorKind === 'login_required';
        record(fixture.file, seed, await page.evaluate(insertUnknowns,
          { seed, iterations: ITERATIONS_PER_FIXTURE, ownApp: fixture.truth.pill ?? OWN_APP, loggedOut }), loggedOut);
      });
    }
  } finally {
    await page.close();
    await server.close();
  }
  await Promise.all(REAL_LAYOUTS.map((layout, index) => tally.group(`allow-list: the fake page, ${layout}`, async () => {
    const fake = await startFakeChatGPT({ layout });
    const fakePage = await browser.newPage();
    try {
      const { loggedOut } = profileOf(layout);
      const id = fake.seedConversation([{ role: 'user', text: 'Plan the beds.' }, { role: 'assistant', reply: 'Tomatoes first.\n\n```\nbed 1: tomatoes\n```' }]);
      for (const [state, url] of [['idle', fake.conversationUrl(id)], ['ready', fake.url]]) {
        await openWithSelectors(fakePage, url);
        await factsUntil(fakePage, state === 'idle' ? 'facts.lastAssistantDone' : 'facts.composer', `the fake page ${state}`);
        const seed = (SEED + 104_729 * (index + 1) + (state === 'idle' ? 0 : 1)) >>> 0;
        record(`fake ${layout} ${state}`, seed, await fakePage.evaluate(insertUnknowns, { seed, iterations: ITERATIONS_PER_FAKE_STATE, ownApp: OWN_APP, loggedOut }), loggedOut);
      }
    } finally {
      await fakePage.close();
      await fake.close();
    }
  })));
  tally.check(`the allow-list refused every one of ${totals.insertions} unknown insertions on ${totals.pages} pages, and each page was recognized again once it was removed`,
    totals.failures === 0 && totals.insertions > 0, `${totals.failures} failed (seed ${SEED}; ALLOWLIST_SEED=${SEED} repeats them)`);
  tally.note(`allow-list property: seed ${SEED}, ${totals.insertions} insertions (${Object.entries(totals.sites).map(([site, count]) => `${site} ${count}`).join(', ')}) on ${totals.pages} pages in ${((Date.now() - startedAtMs) / 1000).toFixed(1)} s`);
}
