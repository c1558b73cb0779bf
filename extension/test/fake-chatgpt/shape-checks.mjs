// Checks of the page shape (src/platform/page-shape.js, "Copy page shape") in a real browser,
// on the fake ChatGPT page and on every real-page fixture (extension/test/fixtures/pages/):
// (a) no text survives: strings planted in text, titles, alt, placeholders, addresses, data
// values, labels of non-controls, input values, the document title and the URL's id appear
// nowhere in the shape; (b) the structure survives: the composer's id, test ids, roles,
// control labels; (c) round trip: shape -> scripts/shape-to-fixture.mjs -> that HTML loaded ->
// the same tree; (d) a 400-turn page's shape stays bounded in nodes and bytes; and the
// overlay's diagnostics: the layout line, and "Copy page shape" only on a page that failed
// closed, copying a shape without the planted strings; and (in the same overlay harness) a
// timed hold's countdown, which ticks with the overlay's own clock between updates.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { READER_SCRIPTS, pollPage } from './harness.mjs';
import { shapeToHtml } from '../../scripts/shape-to-fixture.mjs';
import { overlayView } from '../../src/ui/view.js';

const PAGE_SHAPE_JS = fileURLToPath(new URL('../../src/platform/page-shape.js', import.meta.url));
const OVERLAY_JS = fileURLToPath(new URL('../../src/ui/overlay.js', import.meta.url));
const HOLDS_FIXTURE = fileURLToPath(new URL('../../../docs/protocol/fixtures/daemon.operator.summary.holds.json', import.meta.url));
const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/pages/', import.meta.url));
const INDEXES = ['index.json', 'locales/index.json'];
const MARK = 'zqxmark';
const TURNS_BIG = 400;
const BIG_SHAPE_BYTES_MAX = 128 * 1024; // "well under 1 MiB": the measured size is printed
const FIXTURE_DATE = '2026-12-01';

// The scripts are evaluated, not added as <script> tags: a tag would be part of the shape.
const sources = () => [...READER_SCRIPTS, PAGE_SHAPE_JS].map((file) => readFileSync(file, 'utf8'));

async function injectShape(page) {
  for (const source of sources()) await page.evaluate(source);
}

/** Every fixture listed by the indexes that exist now (others are being written). */
function loadFixtures() {
  const out = [];
  for (const name of INDEXES) {
    let list;
    try {
      list = JSON.parse(readFileSync(`${FIXTURES_DIR}${name}`, 'utf8'));
    } catch {
      continue;
    }
    for (const fixture of list) {
      try {
        out.push({ ...fixture, html: readFileSync(`${FIXTURES_DIR}${fixture.file}`, 'utf8') });
      } catch {
        // listed before its file was written
      }
    }
  }
  return out;
}

/** Serves HTML put at a path: the fixtures at their real addresses, and generated pages. */
async function servePages() {
  const pages = new Map();
  const server = createServer((request, response) => {
    const html = pages.get(new URL(request.url, 'http://x').pathname);
    if (html === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    put(path, html) {
      pages.set(new URL(path, 'http://x').pathname, html);
      return `http://127.0.0.1:${server.address().port}${path}`;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// ---- In the page ----

// Plants `mark` everywhere a person's or the model's words could be, then shapes the page in
// the same step (the fake page redraws under the driver). Returns the shape and whether the
// planted strings are really on the page.
function plantAndShape(mark) {
  document.title = `${mark} document title`;
  history.replaceState(null, '', `/c/${mark}-0000-4000-8000-00000000abcd?q=${mark}#${mark}`);
  const box = document.createElement('div');
  box.setAttribute('aria-label', `${mark} region label`);
  box.setAttribute('data-foo', `${mark} data value`);
  box.setAttribute('data-state', mark);
  box.setAttribute('title', `${mark} tooltip`);
  box.id = `${mark}-id`;
  box.innerHTML = `<p>${mark} text</p><img alt="${mark} alt" src="/${mark}.png"><a href="/c/${mark}?q=${mark}#${mark}" title="${mark}">${mark} link</a>`
    + `<input placeholder="${mark} placeholder" name="${mark}" value="${mark} value attribute"><input type="hidden" value="${mark}">`
    + `<span lang="${mark}" aria-describedby="${mark}">${'long text '.repeat(20)}${mark}</span><textarea placeholder="${mark}">${mark} draft</textarea>`;
  box.querySelector('input').value = `${mark} typed value`;
  (document.querySelector('main') ?? document.body).append(box);
  const composer = document.querySelector('#prompt-textarea');
  if (composer !== null && composer.tagName !== 'TEXTAREA') composer.append(Object.assign(document.createElement('p'), { textContent: `${mark} in the composer` }));
  const facts = globalThis.OrcSelectors.computeFacts(document);
  const shape = globalThis.OrcPageShape.pageShape(document, { layout: facts.layout, missing: facts.missing });
  return { shape, planted: document.documentElement.outerHTML.includes(mark) && location.href.includes(mark) && document.title.includes(mark) };
}

// What the shape must keep of this page: redacted test ids, control labels outside authored
// text, roles and the composer's id; and the page's own longer texts, which it must not keep.
function structureOf() {
  const shape = globalThis.OrcPageShape;
  const skipped = (element) => element.closest('svg, script, style, template, noscript, orchestrator-overlay, input[type="hidden"]') !== null;
  // A person's file in the composer's form (a labelled group) is theirs too.
  const authored = (element) => element.parentElement?.closest('nav, aside, textarea, .markdown, [data-message-author-role="user"], [contenteditable]:not([contenteditable="false"]), #prompt-textarea, form [role="group"][aria-label], form [role="group"][aria-labelledby]') != null;
  const elements = [...document.querySelectorAll('*')].filter((element) => !skipped(element));
  const controls = 'button, a, input, select, textarea, dialog, summary, [role="button"], [role="link"], [role="dialog"], [role="alertdialog"], [role="menuitem"], [role="tab"], [role="switch"], [role="checkbox"], [role="radio"], [role="textbox"], [role="combobox"], [role="option"]';
  const labels = elements.filter((element) => element.matches(controls) && element.hasAttribute('aria-label') && !authored(element))
    .map((element) => element.getAttribute('aria-label').replace(/\s+/g, ' ').trim()).filter((label) => label.length <= shape.LIMITS.labelCharsMax);
  const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const text = node.data.replace(/\s+/g, ' ').trim();
    if (text.length >= 12 && !skipped(node.parentElement)) texts.push(text);
  }
  return {
    testIds: [...new Set(elements.filter((element) => element.hasAttribute('data-testid')).map((element) => shape.redactTestId(element.getAttribute('data-testid'))))],
    labels: [...new Set(labels)],
    roles: [...new Set(elements.map((element) => element.getAttribute('role')).filter((role) => role !== null && /^[a-z]+$/.test(role)))],
    composerId: globalThis.OrcSelectors.findComposer(document)?.id || null,
    texts: [...new Set(texts)],
  };
}

function shapeNow() {
  const facts = globalThis.OrcSelectors.computeFacts(document);
  return globalThis.OrcPageShape.pageShape(document, { layout: facts.layout, missing: facts.missing });
}

// Copies the page's last user/assistant turn pair (in the app shell, its last exchange, which
// holds both) until it holds `count` turns, then shapes it.
function growAndShape({ count, layout }) {
  const profile = globalThis.OrcSelectors.PROFILES.find((p) => p.name === layout);
  const turns = [...document.querySelectorAll(profile.turns)];
  const pair = profile.exchange === undefined ? turns.slice(-2) : [[...document.querySelectorAll('[data-turn-key]')].at(-1)];
  const container = pair[0].parentElement;
  let n = profile.exchange === undefined ? turns.length : 2 * document.querySelectorAll('[data-turn-key]').length;
  while (n < count) {
    for (const turn of pair) container.insertBefore(turn.cloneNode(true), pair[0]);
    n += 2;
  }
  const facts = globalThis.OrcSelectors.computeFacts(document);
  const startedAt = performance.now();
  const shape = globalThis.OrcPageShape.pageShape(document, { layout: facts.layout, missing: facts.missing });
  const rows = profile.exchange === undefined ? n : n / 2;
  return { shape, ms: performance.now() - startedAt, elements: document.getElementsByTagName('*').length, turns: document.querySelectorAll(profile.turns).length, rows, userTurns: facts.userTurns, assistantTurns: facts.assistantTurns };
}

// ---- In Node ----

function walk(node, visit) {
  if (node === null || typeof node !== 'object') return;
  visit(node);
  for (const child of node.children ?? []) walk(child, visit);
}

function collect(tree) {
  const testIds = new Set();
  const labels = new Set();
  const roles = new Set();
  const ids = new Set();
  let collapsed = false;
  walk(tree, (node) => {
    if (node.collapsed !== undefined) collapsed = true;
    if (node.attrs?.['data-testid']) testIds.add(node.attrs['data-testid']);
    if (node.attrs?.['aria-label']) labels.add(node.attrs['aria-label']);
    if (node.attrs?.role) roles.add(node.attrs.role);
    if (node.attrs?.id) ids.add(node.attrs.id);
  });
  return { testIds, labels, roles, ids, collapsed };
}

// The tree without collapsed-run markers (a fixture shows the kept siblings only).
function withoutCollapsed(node) {
  if (node === null || typeof node !== 'object' || !Array.isArray(node.children)) return node;
  return { ...node, children: node.children.filter((child) => child.collapsed === undefined).map(withoutCollapsed) };
}

// The first place two trees differ, as a path of tags, or null when they are equal.
function firstDifference(a, b, path = 'html') {
  const strip = (node) => JSON.stringify({ ...node, children: undefined });
  if (strip(a) !== strip(b)) return `${path}: ${strip(a)} vs ${strip(b)}`;
  const ac = a.children ?? [];
  const bc = b.children ?? [];
  for (let i = 0; i < Math.max(ac.length, bc.length); i += 1) {
    if (ac[i] === undefined || bc[i] === undefined) return `${path}: child ${i} is ${JSON.stringify(ac[i] ?? null)?.slice(0, 120)} vs ${JSON.stringify(bc[i] ?? null)?.slice(0, 120)}`;
    const found = firstDifference(ac[i], bc[i], `${path} > ${ac[i].tag ?? 'text'}[${i}]`);
    if (found) return found;
  }
  return null;
}

function leaks(json, needles) {
  const lower = json.toLowerCase();
  return needles.filter((needle) => needle !== '' && lower.includes(needle.toLowerCase()));
}

function kib(bytes) {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

export async function runShapeChecks({ browser, server, tally }) {
  const { check, group } = tally;
  const fixtures = loadFixtures();
  const pages = await servePages();
  const page = await browser.newPage();
  const roundTrip = async (name, shape) => {
    const url = pages.put(`/rt/${encodeURIComponent(name)}`, shapeToHtml(shape, { date: FIXTURE_DATE }));
    await page.goto(url);
    await injectShape(page);
    const again = await page.evaluate(shapeNow);
    return firstDifference(withoutCollapsed(shape.tree), again.tree);
  };
  try {
    await group('shape: the fake page', async () => {
      await page.goto(server.url);
      await injectShape(page);
      await pollPage(page, () => globalThis.OrcSelectors.computeFacts(document).loaded, null, 5_000, 'the fake page to load');
      const healthy = await page.evaluate(shapeNow);
      const facts = collect(healthy.tree);
      // A new chat of the section-2026-08 layout (the fake page's default): the composer, the
      // voice button in the empty composer's submit slot, the composer's test ids.
      check('fake page: the composer id, the submit slot\'s label and the composer\'s test ids survive',
        facts.ids.has('prompt-textarea') && facts.labels.has('Start Voice') && facts.testIds.has('composer-plus-btn'),
        JSON.stringify({ labels: [...facts.labels], testIds: [...facts.testIds] }));
      check('fake page: roles survive', facts.roles.has('presentation'), JSON.stringify([...facts.roles]));
      check('fake page: the sidebar\'s chat titles are gone', leaks(JSON.stringify(healthy), ['Verify you are human', 'maximum length', 'Something went wrong']).length === 0);
      const difference = await roundTrip('fake', healthy);
      check('fake page: round trip through shape-to-fixture gives the same tree', difference === null, difference ?? '');
      await page.goto(server.url);
      await injectShape(page);
      const { shape, planted } = await page.evaluate(plantAndShape, MARK);
      const json = JSON.stringify(shape);
      check('fake page: the markers were planted', planted);
      check('fake page: no planted text, title, alt, placeholder, address, data value, label, value or URL id survives', leaks(json, [MARK]).length === 0,
        json.match(new RegExp(`.{0,100}${MARK}.{0,40}`, 'i'))?.[0] ?? '');
      check('fake page: the address keeps its shape only', shape.path === '/c/<id>' && shape.title === 'redacted', `${shape.path} ${shape.title}`);
    });

    let fixturesChecked = 0;
    const sizes = [];
    for (const [n, fixture] of fixtures.entries()) {
      await group(`shape: fixture ${fixture.file}`, async () => {
        const url = pages.put(`/f/${n}${fixture.path ?? '/'}`, fixture.html);
        await page.goto(url);
        await injectShape(page);
        const shape = await page.evaluate(shapeNow);
        const structure = await page.evaluate(structureOf);
        const facts = collect(shape.tree);
        const json = JSON.stringify(shape);
        sizes.push(json.length);
        const idInPath = (fixture.path ?? '/').split('/').filter((part) => /\d/.test(part) && part.length >= 8);
        const textLeaks = leaks(json, structure.texts.filter((text) => !structure.labels.includes(text)));
        const ok = [
          ['test ids', structure.testIds.filter((id) => !facts.testIds.has(id))],
          ['control labels', structure.labels.filter((label) => !facts.labels.has(label))],
          ['roles', structure.roles.filter((role) => !facts.roles.has(role))],
        ].filter(([, lost]) => lost.length > 0);
        // A collapsed run may hold some of them; the fixtures are small enough not to collapse their turns.
        check(`${fixture.file}: test ids, control labels and roles survive`, ok.length === 0 || facts.collapsed, JSON.stringify(ok));
        check(`${fixture.file}: the composer's id survives`, structure.composerId === null || structure.composerId === '' || facts.ids.has(structure.composerId), structure.composerId);
        check(`${fixture.file}: none of its ${structure.texts.length} texts, nor its address's id, survives`, textLeaks.length === 0 && leaks(json, idInPath).length === 0,
          JSON.stringify([...textLeaks, ...leaks(json, idInPath)]).slice(0, 300));
        check(`${fixture.file}: the layout is named`, fixture.layout === undefined || shape.layout === fixture.layout || !fixture.truth?.userTurns, `${shape.layout} vs ${fixture.layout}`);
        const difference = await roundTrip(`${n}`, shape);
        check(`${fixture.file}: round trip through shape-to-fixture gives the same tree`, difference === null, difference ?? '');
        await page.goto(url);
        await injectShape(page);
        const marked = await page.evaluate(plantAndShape, MARK);
        check(`${fixture.file}: no planted string survives`, marked.planted && leaks(JSON.stringify(marked.shape), [MARK]).length === 0,
          JSON.stringify(marked.shape).match(new RegExp(`.{0,100}${MARK}.{0,40}`, 'i'))?.[0] ?? 'not planted');
        fixturesChecked += 1;
      });
    }
    check(`shape: every fixture of the indexes checked (${fixturesChecked} of ${fixtures.length}; largest shape ${kib(Math.max(0, ...sizes))})`, fixturesChecked === fixtures.length && fixtures.length > 0);

    const layouts = [...new Set(fixtures.filter((f) => f.state === 'idle' && f.layout).map((f) => f.layout))];
    for (const layout of layouts) {
      await group(`shape: a ${TURNS_BIG}-turn ${layout} page`, async () => {
        const fixture = fixtures.find((f) => f.layout === layout && f.state === 'idle');
        await page.goto(pages.put(`/big/${layout}${fixture.path ?? '/'}`, fixture.html));
        await injectShape(page);
        const big = await page.evaluate(growAndShape, { count: TURNS_BIG, layout });
        const bytes = Buffer.byteLength(JSON.stringify(big.shape));
        tally.note(`  ${layout}: ${big.turns} turns, ${big.elements} elements on the page -> ${big.shape.nodes} shape nodes, ${kib(bytes)} (${big.ms.toFixed(1)} ms)`);
        let collapsedTurns = 0;
        walk(big.shape.tree, (node) => {
          if (node.children?.some((child) => child.collapsed !== undefined)) collapsedTurns = Math.max(collapsedTurns, ...node.children.map((child) => child.collapsed ?? 0));
        });
        check(`${layout}: ${TURNS_BIG} turns on the page`, big.turns >= TURNS_BIG && big.userTurns + big.assistantTurns >= TURNS_BIG, JSON.stringify({ turns: big.turns, user: big.userTurns, assistant: big.assistantTurns }));
        check(`${layout}: the turn list collapses to its first and last three`, collapsedTurns >= big.rows - 6 - 10, String(collapsedTurns));
        check(`${layout}: bounded (${big.shape.nodes} nodes, ${kib(bytes)} < ${kib(BIG_SHAPE_BYTES_MAX)})`, bytes < BIG_SHAPE_BYTES_MAX && big.shape.nodes < big.shape.limits.nodesMax && !big.shape.truncated);
      });
    }

    await group('shape: the overlay\'s diagnostics', async () => {
      const fixture = fixtures.find((f) => f.state === 'idle' && f.layout) ?? null;
      const html = fixture?.html ?? '<!DOCTYPE html><html><body><main><form><div id="prompt-textarea" contenteditable="true"></div></form></main></body></html>';
      const summary = { workerId: 'wrk-1', name: '/root', displayName: 'Root', disposition: 'running', attempts: 2, autoResume: true, policySource: 'run_default', stall: 'clear', conversationState: 'idle' };
      const openOverlay = async (url, view) => {
        await page.goto(url);
        await injectShape(page);
        await page.evaluate(() => {
          const listeners = [];
          globalThis.__orcOverlayTest = { deliver: (message) => listeners.forEach((fn) => fn(message)), copied: null };
          globalThis.chrome = {
            runtime: { id: 'test', onMessage: { addListener: (fn) => listeners.push(fn) }, sendMessage: async () => ({ ok: true }) },
            storage: { local: { get: async () => ({}), set: async () => {} }, onChanged: { addListener: () => {} } },
          };
          Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText: async (text) => { globalThis.__orcOverlayTest.copied = text; } } });
        });
        await page.evaluate(readFileSync(OVERLAY_JS, 'utf8'));
        await page.evaluate((v) => {
          globalThis.__orcOverlayTest.deliver({ type: 'overlay.update', view: v });
          document.querySelector('orchestrator-overlay').shadowRoot.querySelector('[data-testid="overlay-pill"]').click();
        }, view);
        return pollPage(page, () => {
          const root = document.querySelector('orchestrator-overlay')?.shadowRoot;
          const layout = root?.querySelector('[data-testid="overlay-layout"]');
          return layout ? {
            layout: layout.textContent,
            copy: root.querySelector('[data-testid="overlay-copy-shape"]')?.textContent ?? null,
            changed: root.querySelector('[data-testid="overlay-page-changed"]')?.textContent ?? null,
            warning: root.querySelector('[data-testid="overlay-approval-warning"]')?.textContent ?? null,
          } : null;
        }, null, 5_000, 'the overlay drawer');
      };
      const url = pages.put(`/overlay${fixture?.path ?? '/'}`, html);
      const healthy = await openOverlay(url, overlayView(summary, { status: 'live' }));
      check('overlay: the layout line names the matched profile', healthy.layout === `Page layout: ${fixture?.layout ?? 'none recognised'}`, healthy.layout);
      check('overlay: no Copy page shape on a page it can read', healthy.copy === null && healthy.changed === null, JSON.stringify(healthy));
      // The October card with its "Suspicious Instruction" warning: the drawer says it; the card alone says nothing more.
      for (const [file, warned] of [['turn-key-2026-09/approval-container-warning.html', true], ['turn-key-2026-09/approval-container.html', false]]) {
        const card = fixtures.find((f) => f.file === file);
        if (!card) continue;
        const held = { ...summary, disposition: 'awaiting_human', conversationState: 'awaiting_approval', hold: { reason: 'awaiting_approval', detail: 'Orchestrator' } };
        const seen = await openOverlay(pages.put(`/card${warned ? 1 : 0}${card.path ?? '/'}`, card.html), overlayView(held, { status: 'live' }));
        check(`overlay: ${warned ? 'the card\'s safety warning is said in the drawer' : 'no warning line beside a card without one'}`,
          warned ? /^ChatGPT warns about this approval: ".*Suspicious Instruction/i.test(seen.warning ?? '') : seen.warning === null, JSON.stringify(seen));
      }
      const told = await openOverlay(url, overlayView({ ...summary, conversationState: 'error', conversationErrorKind: 'host_ui_changed' }, { status: 'live' }));
      check('overlay: Copy page shape when the view says the page failed closed', told.copy === 'Copy page shape', JSON.stringify(told));
      await page.goto(url);
      const brokenHtml = html.replace(/id="prompt-textarea"/g, 'id="renamed-textarea"').replace(/contenteditable="true"/g, '').replace(/<textarea[^>]*>[\s\S]*?<\/textarea>/g, '');
      const brokenUrl = pages.put(`/broken${fixture?.path ?? '/'}`, brokenHtml.replace('<body>', `<body><p title="${MARK}">${MARK} text</p>`));
      const broken = await openOverlay(brokenUrl, overlayView(summary, { status: 'live' }));
      check('overlay: Copy page shape on a page whose composer is gone, from its own reading', broken.copy === 'Copy page shape' && /not found: composer/.test(broken.changed ?? ''), JSON.stringify(broken));
      await page.evaluate(() => document.querySelector('orchestrator-overlay').shadowRoot.querySelector('[data-testid="overlay-copy-shape"]').click());
      const copied = await pollPage(page, () => globalThis.__orcOverlayTest.copied && {
        text: globalThis.__orcOverlayTest.copied,
        result: document.querySelector('orchestrator-overlay').shadowRoot.querySelector('[data-testid="overlay-copy-result"]')?.textContent ?? '',
      }, null, 5_000, 'the copied shape');
      const shape = JSON.parse(copied.text);
      check('overlay: the copied shape is a version 1 shape naming what is missing', shape.version === 1 && shape.missing.includes('composer') && shape.layout === (fixture?.layout ?? null), JSON.stringify({ layout: shape.layout, missing: shape.missing }));
      check('overlay: the copied shape holds no planted text and not the overlay', leaks(copied.text, [MARK, 'overlay-pill', 'Page layout']).length === 0);
      check('overlay: says Copied', /^Copied \(\d+ KiB\)/.test(copied.result), copied.result);
    });

    await group('overlay: a timed hold counts down between updates', async () => {
      // The usage-limited worker of the operator summary fixture, its limit lifting in 2h 5m
      // (and half a minute, so that the first render still reads 2h 5m).
      const holds = JSON.parse(readFileSync(HOLDS_FIXTURE, 'utf8'));
      const limited = holds.runs[0].workers.find((w) => w.hold?.reason === 'usage_limit');
      const nowMs = Date.now();
      const view = overlayView({ ...limited, hold: { ...limited.hold, untilMs: nowMs + (2 * 60 + 5) * 60_000 + 30_000 } }, { status: 'live' }, null, nowMs);
      await page.goto(pages.put('/countdown/c/00000000-0000-4000-8000-000000000001', '<!DOCTYPE html><html><body><main></main></body></html>'));
      await page.evaluate(() => {
        const listeners = [];
        const realNow = Date.now.bind(Date);
        // The page's clock moves when the check says; the overlay's interval runs when it says.
        globalThis.__orcClock = { offsetMs: 0, intervals: [], deliver: (message) => listeners.forEach((fn) => fn(message)) };
        Date.now = () => realNow() + globalThis.__orcClock.offsetMs;
        globalThis.setInterval = (fn) => globalThis.__orcClock.intervals.push(fn);
        globalThis.chrome = {
          runtime: { id: 'test', onMessage: { addListener: (fn) => listeners.push(fn) }, sendMessage: async () => ({ ok: true }) },
          storage: { local: { get: async () => ({}), set: async () => {} }, onChanged: { addListener: () => {} } },
        };
      });
      await page.evaluate(readFileSync(OVERLAY_JS, 'utf8'));
      await page.evaluate((v) => {
        globalThis.__orcClock.deliver({ type: 'overlay.update', view: v });
        document.querySelector('orchestrator-overlay').shadowRoot.querySelector('[data-testid="overlay-pill"]').click();
      }, view);
      const noteAfter = (advanceMs) => page.evaluate((ms) => {
        globalThis.__orcClock.offsetMs += ms;
        for (const fn of globalThis.__orcClock.intervals) fn();
        return document.querySelector('orchestrator-overlay')?.shadowRoot.querySelector('[data-testid="overlay-note"]')?.textContent ?? null;
      }, advanceMs);
      const first = await pollPage(page, () => document.querySelector('orchestrator-overlay')?.shadowRoot.querySelector('[data-testid="overlay-note"]')?.textContent, null, 5_000, 'the overlay note');
      check('overlay: a usage limit says when it lifts', first === 'ChatGPT usage limit: resumes in 2h 5m', first);
      const later = await noteAfter(60 * 60_000);
      check('overlay: an hour later, with no update, it says an hour less', later === 'ChatGPT usage limit: resumes in 1h 5m', String(later));
      const past = await noteAfter(2 * 60 * 60_000);
      check('overlay: past the time it says it resumes once the page allows', past === 'ChatGPT usage limit: resumes once the page allows', String(past));
    });
  } finally {
    await page.close();
    await pages.close();
  }
}
