// Unit tests of the page shape (src/platform/page-shape.js) over plain objects that offer the
// node interface it reads (nodeType, localName, attributes, childNodes, data), and of
// scripts/shape-to-fixture.mjs: no planted text survives, structure does, the limits hold,
// and the script's conversion and errors. The same properties on real pages in Chromium and
// Firefox: test/fake-chatgpt/shape-checks.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInThisContext } from 'node:vm';
import { pageShapeModule, parseShape, shapeToHtml, ShapeError, PLACEHOLDER_TEXT } from '../../scripts/shape-to-fixture.mjs';

// Loaded as the browser loads a classic script, into this realm (so deepEqual compares plain objects).
const PAGE_SHAPE_JS = fileURLToPath(new URL('../../src/platform/page-shape.js', import.meta.url));
runInThisContext(readFileSync(PAGE_SHAPE_JS, 'utf8'), { filename: PAGE_SHAPE_JS });
const Shape = globalThis.OrcPageShape;
const SCRIPT = fileURLToPath(new URL('../../scripts/shape-to-fixture.mjs', import.meta.url));
const MIB = 1024 * 1024;

// ---- A minimal DOM of plain objects ----

function el(tag, attrs = {}, ...children) {
  return {
    nodeType: 1,
    localName: tag,
    attributes: Object.entries(attrs).map(([name, value]) => ({ name, value })),
    childNodes: children.flat().map((child) => (typeof child === 'string' ? text(child) : child)),
    getAttribute(name) {
      return this.attributes.find((a) => a.name === name)?.value ?? null;
    },
  };
}
const text = (data) => ({ nodeType: 3, data });
const comment = (data) => ({ nodeType: 8, data });
const doc = (root, { title = 'ChatGPT', pathname = '/' } = {}) => ({ documentElement: root, title, location: { pathname } });

// Every planted string carries this; none may appear anywhere in a shape.
const MARK = 'zqxmark';
const CONVERSATION_ID = '6a1f0c2e-beef-4000-8000-000000000001';

function markedPage() {
  const turn = (n, role, body) => el('section', { 'data-testid': `conversation-turn-${n}`, 'data-turn': role, 'data-turn-id': `${MARK}-turn-${n}`, class: 'group/turn text-token-text-primary' },
    el('h4', { class: 'sr-only' }, `${MARK} said:`),
    el('div', { 'data-message-author-role': role, 'data-message-id': `${MARK}-msg-${n}`, title: `${MARK} title` },
      el('div', { class: 'markdown prose' }, el('p', {}, `${MARK} ${body}`), el('a', { href: `https://${MARK}.example/${MARK}?q=${MARK}`, 'aria-label': `${MARK} link label` }, `${MARK} link`),
        el('button', { 'aria-label': `Copy ${MARK} code` }, 'Copy'))),
    role === 'assistant' && el('div', {}, el('button', { 'data-testid': 'copy-turn-action-button', 'aria-label': 'Copy' })));
  return doc(el('html', { lang: 'en' },
    el('head', {}, el('title', {}, `${MARK} chat title`), el('meta', { name: 'description', content: MARK }),
      el('script', {}, `window.__secret = "${MARK}"`), el('style', {}, `.${MARK} {}`)),
    el('body', { class: 'antialiased' },
      comment(`${MARK} comment`),
      el('nav', { 'aria-label': `${MARK} chat history` },
        el('a', { href: `/c/${CONVERSATION_ID}`, 'aria-label': `${MARK} chat title link` }, `${MARK} chat title`),
        el('button', { 'aria-label': `Options for ${MARK}` })),
      el('main', { id: 'main' },
        el('div', { id: `radix-${MARK}`, 'aria-label': `${MARK} region label`, 'data-foo': `${MARK}-value`, 'data-state': MARK },
          turn(1, 'user', 'question'), turn(2, 'assistant', 'answer')),
        el('img', { alt: `${MARK} alt`, src: `https://files.example/${MARK}.png` }),
        el('form', { 'data-type': 'unified-composer', action: `/backend-api/${MARK}` },
          el('input', { type: 'hidden', name: 'csrf', value: MARK }),
          el('input', { type: 'text', value: MARK, placeholder: `${MARK} placeholder`, name: MARK }),
          el('textarea', { placeholder: `${MARK} placeholder`, 'aria-label': 'Chat with ChatGPT' }, `${MARK} draft`),
          el('div', { id: 'prompt-textarea', contenteditable: 'true', role: 'textbox', 'aria-label': 'Message ChatGPT', class: 'ProseMirror' },
            el('p', { 'data-placeholder': `${MARK} ask` }, `${MARK} typed`)),
          el('button', { id: 'composer-submit-button', 'data-testid': 'send-button', 'aria-label': 'Send prompt', type: 'submit', disabled: '', onclick: `steal('${MARK}')`, style: `color: red; --vt-composer-speech-button: 1; background: url(${MARK})` })),
        el('orchestrator-overlay', { 'data-testid': 'overlay-host' }, el('p', {}, `${MARK} overlay`))))),
  { title: `${MARK} document title`, pathname: `/c/${CONVERSATION_ID}` });
}

function find(tree, predicate) {
  if (tree === null || typeof tree !== 'object') return null;
  if (predicate(tree)) return tree;
  for (const child of tree.children ?? []) {
    const found = find(child, predicate);
    if (found) return found;
  }
  return null;
}

test('no planted text survives: text, titles, alt, placeholders, addresses, data values, labels of non-controls, values, the URL id', () => {
  const page = markedPage();
  const json = JSON.stringify(Shape.pageShape(page, { layout: 'section-2026-08', missing: ['composer'] }));
  assert.equal(json.toLowerCase().includes(MARK), false, json.match(new RegExp(`.{0,80}${MARK}.{0,40}`, 'i'))?.[0]);
  assert.equal(json.includes(CONVERSATION_ID), false);
  assert.equal(json.includes('6a1f0c2e'), false);
  // The planted strings did reach the shape's input: the check above is not vacuous.
  assert.ok(JSON.stringify(page, (k, v) => (typeof v === 'function' ? undefined : v)).includes(MARK));
});

test('the structure survives: known ids, test ids, roles, control labels, class tokens, author roles, the address shape', () => {
  const shape = Shape.pageShape(markedPage(), { layout: 'section-2026-08', missing: ['composer'] });
  assert.equal(shape.version, 1);
  assert.equal(shape.layout, 'section-2026-08');
  assert.deepEqual(shape.missing, ['composer']);
  assert.equal(shape.path, '/c/<id>');
  assert.equal(shape.title, 'redacted');
  assert.equal(shape.lang, 'en');
  const composer = find(shape.tree, (n) => n.attrs?.id === 'prompt-textarea');
  assert.deepEqual(composer.attrs, { 'aria-label': 'Message ChatGPT', class: 'ProseMirror', contenteditable: 'true', id: 'prompt-textarea', role: 'textbox' });
  assert.deepEqual(composer.children[0], { tag: 'p', attrs: { 'data-placeholder': 'redacted' }, children: [{ text: 'short' }] });
  const send = find(shape.tree, (n) => n.attrs?.['data-testid'] === 'send-button');
  assert.deepEqual(send.attrs, {
    'aria-label': 'Send prompt', 'data-testid': 'send-button', disabled: '', id: 'composer-submit-button', style: 'var(--vt-composer-speech-button)', type: 'submit',
  });
  const turn = find(shape.tree, (n) => n.attrs?.['data-testid'] === 'conversation-turn-2');
  assert.equal(turn.tag, 'section');
  assert.equal(turn.attrs['data-turn'], 'assistant');
  assert.equal(turn.attrs['data-turn-id'], 'redacted');
  assert.equal(turn.attrs.class, 'group/turn text-token-text-primary');
  assert.ok(find(turn, (n) => n.attrs?.['data-message-author-role'] === 'assistant'));
  assert.ok(find(turn, (n) => n.attrs?.['data-testid'] === 'copy-turn-action-button' && n.attrs['aria-label'] === 'Copy'));
  const region = find(shape.tree, (n) => n.attrs?.['data-foo'] !== undefined);
  assert.deepEqual(region.attrs, { 'data-foo': 'redacted', 'data-state': 'redacted', id: 'redacted' });
  const chatLink = find(shape.tree, (n) => n.tag === 'a' && n.attrs.href?.startsWith('/c/'));
  assert.deepEqual(chatLink.attrs, { href: '/c/<id>' }, 'a chat title link in the sidebar keeps no label');
  assert.deepEqual(find(shape.tree, (n) => n.tag === 'form').attrs, { action: '/backend-api/<id>', 'data-type': 'redacted' });
});

test('text becomes a length class; scripts, styles and hidden inputs keep no content; the overlay is no part of the page', () => {
  const shape = Shape.pageShape(doc(el('html', {}, el('body', {},
    el('p', {}, 'short text'), el('p', {}, 'x'.repeat(81)), el('p', {}, '   \n  '),
    el('script', { src: '/cdn/assets/app-0a1b2c3d4e.js' }, 'code()'), el('svg', { class: 'icon', 'aria-hidden': 'true' }, el('path', { d: 'M0' })),
    el('input', { type: 'hidden', value: 'token' }), el('orchestrator-overlay'), el('div', { 'data-orc-overlay': '' }, 'ours')))));
  const body = shape.tree.children[0];
  assert.deepEqual(body.children, [
    { tag: 'p', attrs: {}, children: [{ text: 'short' }] },
    { tag: 'p', attrs: {}, children: [{ text: 'long' }] },
    { tag: 'p', attrs: {}, children: [] },
    { tag: 'script', attrs: { src: '/<id>/<id>/<id>' }, children: [] },
    { tag: 'svg', attrs: { 'aria-hidden': 'true', class: 'icon' }, children: [] },
  ]);
  assert.equal(shape.nodes, 9, 'html, body, its 5 children, 2 text markers (the blank text is none)');
});

test('control labels only on controls outside authored text, capped at LIMITS.labelCharsMax', () => {
  const long = 'L'.repeat(200);
  const shape = Shape.pageShape(doc(el('html', {}, el('body', {},
    el('button', { 'aria-label': long }), el('div', { role: 'button', 'aria-label': 'Stop streaming' }), el('dialog', { 'aria-label': 'Rename' }),
    el('div', { 'aria-label': 'A region' }), el('span', { role: 'bogus', 'aria-label': 'nope' }),
    el('div', { 'data-message-author-role': 'user' }, el('button', { 'aria-label': 'quoted' }))))));
  const [button, roleButton, dialog, region, span, user] = shape.tree.children[0].children;
  assert.equal(button.attrs['aria-label'].length, Shape.LIMITS.labelCharsMax + 1);
  assert.ok(button.attrs['aria-label'].endsWith('…'));
  assert.equal(roleButton.attrs['aria-label'], 'Stop streaming');
  assert.equal(dialog.attrs['aria-label'], 'Rename');
  assert.equal(region.attrs['aria-label'], undefined);
  assert.deepEqual(span.attrs, {}, 'an unknown role and its label are dropped');
  assert.deepEqual(user.children[0].attrs, {}, 'a button inside a user message keeps no label');
});

test('ids: known ones, and structural words outside authored text; generated ids and ids inside messages are redacted', () => {
  const shape = Shape.pageShape(doc(el('html', {}, el('body', {},
    el('div', { id: 'mobile-composer-prompt' }), el('div', { id: 'radix-r1' }), el('div', { id: 'radix-:r1:' }), el('div', { id: 'page-header2' }),
    el('div', { id: 'custom-composer-area', 'aria-controls': 'thread radix-:r2:' }),
    el('div', { class: 'markdown' }, el('h2', { id: 'composer-notes' }), el('div', { id: 'thread' }))))));
  const ids = [];
  walkTree(shape.tree, (n) => n.attrs?.id && ids.push(n.attrs.id));
  assert.deepEqual(ids, ['mobile-composer-prompt', 'redacted', 'redacted', 'redacted', 'custom-composer-area', 'redacted', 'thread']);
  assert.equal(find(shape.tree, (n) => n.attrs?.id === 'custom-composer-area').attrs['aria-controls'], 'thread redacted');
});

function walkTree(node, visit) {
  visit(node);
  for (const child of node.children ?? []) walkTree(child, visit);
}

test('class tokens: kept only when plain and at most LIMITS.classTokenCharsMax characters, duplicates once', () => {
  assert.equal(Shape.classTokens('a  b a [--x:1rem] md:w-1/2 50% #x'), 'a b [--x:1rem] md:w-1/2 50% #x');
  assert.equal(Shape.classTokens(`ok ${'t'.repeat(41)} ${'u'.repeat(40)} bad"quote <x> a=b é`), `ok ${'u'.repeat(40)}`);
});

test('addresses and test ids: ids, hosts, queries and fragments go; route words and turn numbers stay', () => {
  const paths = [['/', '/'], ['/c/6a1f', '/c/<id>'], ['/g/g-abc-my-gpt/c/6a1f', '/g/<id>/c/<id>'], ['/uc/x1', '/uc/<id>'], ['/auth/login', '/auth/login'], ['/c/', '/c/']];
  for (const [input, expected] of paths) assert.equal(Shape.redactPath(input), expected, input);
  const urls = [['/auth/login?next=%2Fc%2F1#x', '/auth/login'], ['https://chatgpt.com/c/1?x', 'https://chatgpt.com/c/<id>'],
    ['https://evil.example/a/b', 'https://host.invalid/<id>/<id>'], ['javascript:alert(1)', 'redacted'], ['mailto:a@b.c', 'redacted'], ['#', '#'],
    ['https://challenges.cloudflare.com/cdn-cgi/challenge-platform/h/b', 'https://challenges.cloudflare.com/cdn-cgi/challenge-platform/<id>/<id>']];
  for (const [input, expected] of urls) assert.equal(Shape.redactUrl(input), expected, input);
  const ids = [['conversation-turn-12', 'conversation-turn-12'], ['history-item-0a1b2c3d4e5f', 'history-item-HEX'],
    ['x-00000000-0000-4000-8000-000000000001', 'x-UUID'], ['item-1234567', 'item-N'], ['send-button', 'send-button'],
    ['with space', 'redacted'], ['a"b', 'redacted'], ['deadbeef-label', 'deadbeef-label']];
  for (const [input, expected] of ids) assert.equal(Shape.redactTestId(input), expected, input);
  // A second pass changes nothing: fixtures made from shapes shape the same.
  for (const [, expected] of paths) assert.equal(Shape.redactPath(expected), expected);
  for (const [, expected] of urls) assert.equal(Shape.redactUrl(expected), expected);
  for (const [, expected] of ids) assert.equal(Shape.redactTestId(expected), expected);
});

function turnsPage(turns) {
  const turn = (n) => el('section', { 'data-testid': `conversation-turn-${n}`, 'data-turn': n % 2 ? 'user' : 'assistant', class: 'text-token-text-primary w-full focus:outline-none [--shadow-height:45px]' },
    el('h4', { class: 'sr-only select-none' }, 'You said:'),
    el('div', { 'data-message-author-role': n % 2 ? 'user' : 'assistant', class: 'min-h-8 text-message relative flex w-full flex-col' },
      el('div', { class: 'markdown prose dark:prose-invert w-full break-words' }, Array.from({ length: 20 }, (_, i) => el('p', { 'data-start': String(i), 'data-end': String(i + 9) }, 'Paragraph text of a long reply that goes on for a while, longer than a short notice could ever be.')))),
    el('div', { class: 'flex justify-start' }, el('button', { 'data-testid': 'copy-turn-action-button', 'aria-label': 'Copy', class: 'text-token-text-secondary hover:bg-token-main-surface-secondary rounded-lg' })));
  return doc(el('html', { lang: 'en' }, el('body', {}, el('main', {}, el('div', { id: 'thread' }, Array.from({ length: turns }, (_, n) => turn(n + 1)))))), { pathname: '/c/abc' });
}

test('a 400-turn page: the turn list keeps its first and last three turns, and the shape stays far under 1 MiB', () => {
  const shape = Shape.pageShape(turnsPage(400));
  const thread = find(shape.tree, (n) => n.attrs?.id === 'thread');
  assert.equal(thread.children.length, 7);
  assert.deepEqual(thread.children[3], { collapsed: 394 });
  assert.deepEqual([0, 1, 2, 4, 5, 6].map((i) => thread.children[i].attrs['data-testid']),
    ['conversation-turn-1', 'conversation-turn-2', 'conversation-turn-3', 'conversation-turn-398', 'conversation-turn-399', 'conversation-turn-400']);
  const bytes = Buffer.byteLength(JSON.stringify(shape));
  assert.ok(bytes < 64 * 1024, `${bytes} bytes`);
  assert.ok(shape.nodes < 200 && !shape.truncated, `${shape.nodes} nodes`);
  // Exactly LIMITS.childrenBeforeCollapseMax children are kept whole; one more collapses.
  const whole = find(Shape.pageShape(turnsPage(12)).tree, (n) => n.attrs?.id === 'thread');
  assert.equal(whole.children.length, 12);
  const cut = find(Shape.pageShape(turnsPage(13)).tree, (n) => n.attrs?.id === 'thread');
  assert.deepEqual(cut.children[3], { collapsed: 7 });
});

test('limits: depth is cut at LIMITS.depthMax and the node count at LIMITS.nodesMax', () => {
  let deep = el('span');
  for (let i = 0; i < 100; i += 1) deep = el('div', {}, deep);
  const deepShape = Shape.pageShape(doc(el('html', {}, deep)));
  let depth = 0;
  for (let node = deepShape.tree; node.children?.length; node = node.children[0]) depth += 1;
  assert.equal(depth, Shape.LIMITS.depthMax);
  assert.ok(deepShape.truncated);
  assert.equal(find(deepShape.tree, (n) => n.cut === 'depth') !== null, true);
  // 12 children at every level below the root, 5 levels: 271,452 elements, none collapsed.
  const wide = (level) => (level === 0 ? el('i') : el('div', {}, Array.from({ length: 12 }, () => wide(level - 1))));
  const wideShape = Shape.pageShape(doc(el('html', {}, wide(5))));
  assert.ok(wideShape.truncated);
  assert.ok(wideShape.nodes <= Shape.LIMITS.nodesMax, `${wideShape.nodes}`);
  assert.ok(wideShape.nodes >= Shape.LIMITS.nodesMax - 1, `${wideShape.nodes}`);
  assert.ok(Buffer.byteLength(JSON.stringify(wideShape)) < MIB);
});

test('shape-to-fixture reads the version of page-shape.js itself', () => {
  assert.equal(pageShapeModule().VERSION, Shape.VERSION);
});

test('limits: the JSON is cut near LIMITS.bytesMax however long the class lists are', () => {
  const classes = Array.from({ length: 60 }, (_, i) => `${'c'.repeat(36)}-${String(i).padStart(2, '0')}`).join(' ');
  const row = () => el('div', { class: classes, 'data-testid': 'row' }, el('span', { class: classes }, 'x'));
  const page = doc(el('html', {}, el('body', {}, Array.from({ length: 12 }, () => el('div', { class: classes }, Array.from({ length: 12 }, () => el('div', {}, Array.from({ length: 12 }, row))))))));
  const shape = Shape.pageShape(page);
  const bytes = Buffer.byteLength(JSON.stringify(shape));
  assert.ok(shape.truncated);
  assert.ok(shape.nodes < Shape.LIMITS.nodesMax, `${shape.nodes}: the byte limit cut first`);
  assert.ok(find(shape.tree, (n) => n.cut === 'bytes'));
  assert.ok(bytes < Shape.LIMITS.bytesMax * 1.1 && bytes < MIB, `${bytes} bytes`);
  assert.ok(bytes > Shape.LIMITS.bytesMax * 0.9, `${bytes} bytes: the estimate is close`);
});

test('the root must be an element', () => {
  assert.throws(() => Shape.pageShape({ documentElement: null }), TypeError);
  assert.throws(() => Shape.pageShape({ documentElement: text('x') }), TypeError);
});

// ---- shape-to-fixture ----

test('shape-to-fixture: the header, placeholder text by length class, collapsed runs, escaping, and no planted text', () => {
  const shape = Shape.pageShape(markedPage(), { layout: 'section-2026-08', missing: ['composer'] });
  const html = shapeToHtml(shape, { date: '2026-12-01' });
  assert.ok(html.startsWith('<!DOCTYPE html>\n<!--\nGenerated from a page shape by extension/scripts/shape-to-fixture.mjs on 2026-12-01.'));
  assert.ok(html.includes('extension/test/fixtures/pages/index.json'));
  assert.ok(html.includes('Layout profile that matched: section-2026-08. Missing: composer.'));
  assert.ok(html.includes('Page address: /c/<id> (ids replaced).'));
  assert.equal(html.toLowerCase().includes(MARK), false);
  assert.ok(html.includes('<div id="prompt-textarea" aria-label="Message ChatGPT" class="ProseMirror" contenteditable="true" role="textbox">')
    || html.includes('aria-label="Message ChatGPT" class="ProseMirror" contenteditable="true" id="prompt-textarea" role="textbox"'));
  assert.ok(html.includes(`<p data-placeholder="redacted">${PLACEHOLDER_TEXT.short}</p>`));
  assert.ok(html.includes(' disabled '), 'a flag attribute is written bare');
  assert.ok(html.includes('<script type="text/plain"></script>'), 'a script in a fixture never runs');
  const turns = shapeToHtml(Shape.pageShape(turnsPage(40)), { date: '2026-12-01' });
  assert.ok(turns.includes('<!-- page shape: 34 similar children collapsed here -->'));
  assert.ok(turns.includes(PLACEHOLDER_TEXT.long));
  assert.equal(PLACEHOLDER_TEXT.short.length <= Shape.LIMITS.textShortCharsMax && PLACEHOLDER_TEXT.long.length > Shape.LIMITS.textShortCharsMax, true);
  const tricky = { version: 1, tree: { tag: 'html', attrs: {}, children: [{ tag: 'body', attrs: { 'data-x': '"><script>x</script>', onclick: 'x()', 'bad name': '1' }, children: [{ tag: 'p', attrs: {}, children: [{ tag: 'div', attrs: {}, children: [] }] }, { tag: 'x y', attrs: {}, children: [] }] }] } };
  const warnings = [];
  const out = shapeToHtml(tricky, { date: '2026-12-01', warn: (m) => warnings.push(m) });
  assert.ok(out.includes('data-x="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"'));
  assert.equal(out.includes('onclick'), false);
  assert.equal(out.includes('bad name'), false);
  assert.equal(warnings.length, 4, warnings.join('\n'));
  assert.ok(warnings.some((w) => w.includes('<div> inside <p>')));
});

test('shape-to-fixture: bad input is a ShapeError naming what is wrong', () => {
  assert.throws(() => parseShape('{not json'), (e) => e instanceof ShapeError && /^not JSON/.test(e.message));
  assert.throws(() => parseShape('[]'), (e) => e instanceof ShapeError && /expected a JSON object/.test(e.message));
  assert.throws(() => parseShape('{"version": 2, "tree": {"tag": "html"}}'), (e) => e instanceof ShapeError && /version 2/.test(e.message));
  assert.throws(() => parseShape('{"version": 1}'), (e) => e instanceof ShapeError && /tree/.test(e.message));
  assert.throws(() => parseShape('{"version": 1, "tree": {"tag": "body"}}'), (e) => e instanceof ShapeError && /<html>/.test(e.message));
  assert.throws(() => shapeToHtml({ version: 1, tree: { tag: 'html' } }, { date: 'today' }), ShapeError);
});

test('shape-to-fixture CLI: stdout and --out, the given date, non-zero exits with a message', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shape-'));
  const good = join(dir, 'shape.json');
  writeFileSync(good, JSON.stringify(Shape.pageShape(turnsPage(3))));
  const stdout = execFileSync(process.execPath, [SCRIPT, good, '--date', '2026-11-30'], { encoding: 'utf8' });
  assert.ok(stdout.includes('on 2026-11-30.'));
  const out = join(dir, 'fixture.html');
  execFileSync(process.execPath, [SCRIPT, good, `--out=${out}`], { encoding: 'utf8' });
  assert.ok(readFileSync(out, 'utf8').includes(`on ${new Date().toISOString().slice(0, 10)}.`));
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, 'hello');
  const wrongVersion = join(dir, 'v9.json');
  writeFileSync(wrongVersion, '{"version": 9, "tree": {"tag": "html"}}');
  for (const [args, message] of [[[bad], /not JSON/], [[wrongVersion], /unsupported page shape version 9/], [[join(dir, 'none.json')], /cannot read/], [[], /no shape file/], [[good, '--date', 'x'], /bad date/]]) {
    const run = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });
    assert.notEqual(run.status, 0, args.join(' '));
    assert.match(run.stderr, message);
    assert.equal(run.stdout, '');
  }
});

test('the shape names what the allow-list did not recognize, by structure only: never its label', () => {
  const page = doc(el('html', {}, el('body', {}, el('main', {}))));
  const named = Shape.pageShape(page, { unrecognized: { where: 'latest turn', what: 'div.promo-card "Try MARK-the new mode"' } });
  assert.deepEqual(named.unrecognized, { where: 'latest turn', what: 'div.promo-card' });
  assert.deepEqual(Shape.pageShape(page, { unrecognized: { where: 'composer', what: 'form (3 buttons)' } }).unrecognized,
    { where: 'composer', what: 'form (3 buttons)' });
  assert.equal(Shape.pageShape(page, { unrecognized: { where: 'composer', what: 'div<script>' } }).unrecognized.what, Shape.REDACTED);
  assert.equal(Shape.pageShape(page, { unrecognized: { where: 'sidebar', what: 'div' } }).unrecognized, null);
  assert.equal(Shape.pageShape(page).unrecognized, null);
});
