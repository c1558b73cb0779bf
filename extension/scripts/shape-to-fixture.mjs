// Turns a page shape (src/platform/page-shape.js: what "Copy page shape" puts on the
// clipboard when the content adapter fails closed) into a self-contained HTML fixture for
// extension/test/fixtures/pages/: the same elements and allowlisted attributes, placeholder
// text of each text node's length class, a comment where a long run of siblings was
// collapsed, and a header comment saying where it came from and what is left to do.
//
//   node extension/scripts/shape-to-fixture.mjs shape.json [--out FILE] [--date YYYY-MM-DD]
//
// Writes the HTML to stdout (or FILE); a bad file (unreadable, not JSON, another version,
// no tree) is an error on stderr with a non-zero exit.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';

const PAGE_SHAPE_JS = fileURLToPath(new URL('../src/platform/page-shape.js', import.meta.url));

// The placeholder of each length class; each stays in its class when shaped again.
export const PLACEHOLDER_TEXT = Object.freeze({
  short: 'Lorem ipsum',
  long: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.',
});
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
// Elements the HTML parser does not let hold these children: a shape taken from a DOM that
// scripts built can nest them, a parsed fixture cannot (the parser re-nests them).
const BLOCK = new Set(['address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figure', 'footer', 'form', 'h1', 'h2',
  'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'ul']);
const NO_SELF_NESTING = new Set(['a', 'button', 'form', 'p']);
// A fixture loads nothing from the network: a frame shows an empty document and a script is
// of a type no browser runs (neither attribute is in page-shape.js's allowlists, so the
// fixture shapes as the original did).
const OFFLINE = { iframe: ' srcdoc=""', script: ' type="text/plain"' };
const TAG = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const ATTR = /^[a-z_:][a-z0-9_:.-]*$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TREE_NODES_MAX = 20_000; // more than any shape page-shape.js writes (its nodesMax)

/** page-shape.js's constants (VERSION, REDACTED, LIMITS), read from the script itself. */
export function pageShapeModule() {
  const sandbox = { URL };
  sandbox.globalThis = sandbox;
  runInNewContext(readFileSync(PAGE_SHAPE_JS, 'utf8'), sandbox, { filename: PAGE_SHAPE_JS });
  return sandbox.OrcPageShape;
}

export class ShapeError extends Error {}

/** The shape in `text` checked for what the conversion needs; throws a ShapeError saying what is wrong. */
export function parseShape(text, version = pageShapeModule().VERSION) {
  let shape;
  try {
    shape = JSON.parse(text);
  } catch (error) {
    throw new ShapeError(`not JSON: ${error.message}`);
  }
  if (shape === null || typeof shape !== 'object' || Array.isArray(shape)) throw new ShapeError('not a page shape: expected a JSON object');
  if (shape.version !== version) throw new ShapeError(`unsupported page shape version ${JSON.stringify(shape.version)} (this script reads version ${version})`);
  if (!isElement(shape.tree) || shape.tree.tag !== 'html') throw new ShapeError('not a page shape: `tree` must be the <html> element');
  return shape;
}

function isElement(node) {
  return node !== null && typeof node === 'object' && typeof node.tag === 'string';
}

const escapeText = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s) => escapeText(s).replace(/"/g, '&quot;');
// `--` is what could end a comment (`-->`, `--!>`).
const escapeComment = (s) => String(s).replace(/--/g, '- -');

/**
 * The fixture's HTML for `shape`, dated `date` (YYYY-MM-DD). `warn(message)` hears about
 * nestings the HTML parser will change and nodes that were skipped.
 */
export function shapeToHtml(shape, { date, warn = () => {} } = {}) {
  if (!DATE.test(String(date))) throw new ShapeError(`bad date ${JSON.stringify(date)}: expected YYYY-MM-DD`);
  const state = { nodes: 0, warned: new Set() };
  const warnOnce = (message) => {
    if (!state.warned.has(message)) warn(message);
    state.warned.add(message);
  };
  const body = element(shape.tree, [], state, warnOnce, '');
  const header = [
    `Generated from a page shape by extension/scripts/shape-to-fixture.mjs on ${date}.`,
    `  Layout profile that matched: ${shape.layout ?? 'none'}. Missing: ${(shape.missing ?? []).join(', ') || 'nothing'}.`,
    `  Page address: ${shape.path ?? '/'} (ids replaced). Page language: ${shape.lang || 'unknown'}.`,
    `  Shape: ${shape.nodes ?? '?'} nodes${shape.truncated ? ', cut at a limit' : ''}. Text is placeholder (its length class only),`,
    '  attribute values outside the allowlists read "redacted", and long runs of siblings were cut to',
    '  their first and last few (marked by a comment).',
    '  Before committing: add this file to extension/test/fixtures/pages/index.json with its source',
    '  (who captured the shape, when, from which page) and the expected truth, and name the capture',
    '  in extension/test/fixtures/pages/SOURCES.md.',
  ].map(escapeComment).join('\n');
  return `<!DOCTYPE html>\n<!--\n${header}\n-->\n${body}\n`;
}

function element(node, ancestors, state, warn, indent) {
  state.nodes += 1;
  if (state.nodes > TREE_NODES_MAX) throw new ShapeError(`the tree holds more than ${TREE_NODES_MAX} nodes`);
  if (!TAG.test(node.tag)) {
    warn(`skipped an element with an unusable tag name ${JSON.stringify(node.tag).slice(0, 60)}`);
    return '';
  }
  const parent = ancestors.at(-1);
  if (parent === 'p' && BLOCK.has(node.tag)) warn(`<${node.tag}> inside <p>: the HTML parser closes the <p> first, so the fixture's DOM differs from the shape there`);
  if (NO_SELF_NESTING.has(node.tag) && ancestors.includes(node.tag)) warn(`<${node.tag}> inside <${node.tag}>: the HTML parser re-nests it, so the fixture's DOM differs from the shape there`);
  const attrs = Object.entries(node.attrs ?? {}).filter(([name]) => {
    if (ATTR.test(name) && !/^on/i.test(name)) return true;
    warn(`skipped an attribute with an unusable name ${JSON.stringify(name).slice(0, 60)}`);
    return false;
  }).map(([name, value]) => (value === '' ? ` ${name}` : ` ${name}="${escapeAttr(value)}"`)).join('') + (OFFLINE[node.tag] ?? '');
  const open = `${indent}<${node.tag}${attrs}>`;
  if (VOID.has(node.tag)) return open;
  const children = Array.isArray(node.children) ? node.children : [];
  if (node.tag === 'script' || node.tag === 'style' || children.length === 0) return `${open}</${node.tag}>`;
  const inner = children.map((child) => {
    if (isElement(child)) return element(child, [...ancestors, node.tag], state, warn, `${indent}  `);
    if (typeof child?.text === 'string') return `${indent}  ${escapeText(PLACEHOLDER_TEXT[child.text] ?? PLACEHOLDER_TEXT.short)}`;
    if (Number.isInteger(child?.collapsed)) return `${indent}  <!-- page shape: ${child.collapsed} similar children collapsed here -->`;
    warn('skipped a child that is neither an element, a text marker nor a collapsed run');
    return '';
  }).filter((line) => line !== '');
  // Text-only content stays on one line: whitespace inside <textarea> and <pre> is content.
  if (children.every((child) => !isElement(child))) return `${open}${inner.map((line) => line.trim()).join(' ')}</${node.tag}>`;
  return `${open}\n${inner.join('\n')}\n${indent}</${node.tag}>`;
}

function usage() {
  return 'usage: node extension/scripts/shape-to-fixture.mjs SHAPE.json [--out FILE] [--date YYYY-MM-DD]';
}

function parseArgs(argv) {
  const args = { file: null, out: null, date: new Date().toISOString().slice(0, 10) };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--out' || arg === '--date') {
      if (argv[i + 1] === undefined) throw new ShapeError(`${arg} needs a value\n${usage()}`);
      args[arg.slice(2)] = argv[i + 1];
      i += 1;
    } else if (arg.startsWith('--out=') || arg.startsWith('--date=')) {
      const [name, value] = arg.slice(2).split(/=(.*)/s);
      args[name] = value;
    } else if (arg === '--help' || arg === '-h') {
      throw new ShapeError(usage());
    } else if (args.file === null && !arg.startsWith('--')) {
      args.file = arg;
    } else {
      throw new ShapeError(`unexpected argument ${JSON.stringify(arg)}\n${usage()}`);
    }
  }
  if (args.file === null) throw new ShapeError(`no shape file given\n${usage()}`);
  return args;
}

function main(argv) {
  const args = parseArgs(argv);
  let text;
  try {
    text = readFileSync(args.file, 'utf8');
  } catch (error) {
    throw new ShapeError(`cannot read ${args.file}: ${error.message}`);
  }
  const shape = parseShape(text);
  const html = shapeToHtml(shape, { date: args.date, warn: (message) => console.error(`shape-to-fixture: warning: ${message}`) });
  if (args.out === null) process.stdout.write(html);
  else writeFileSync(args.out, html);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof ShapeError)) throw error;
    console.error(`shape-to-fixture: ${error.message}`);
    process.exitCode = 1;
  }
}
