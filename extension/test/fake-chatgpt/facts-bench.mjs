// Benchmark (not a test): what observing a long conversation costs the content adapter. A
// real-page fixture (extension/test/fixtures/pages/, one per layout) is grown to N turns by
// repeating its answered turn pairs; then, per simulated streamed token (a mutation of the
// latest assistant turn, still being written or already finished), the page readers compute
// the turn-end signals (read on every mutation) and the whole facts (read at most once per
// report window). Prints p50/p99 per layout, turn count and case, in headless Chromium and
// Firefox ESR (whose clock for pages has a 1 ms step). With --gc (Chromium, which then
// reports its JS heap size exactly) it also counts the facts reads during which the heap
// shrank: a garbage collection ran inside the read.
//
//   node test/fake-chatgpt/facts-bench.mjs [--turns 4,400] [--mutations 2000] [--browsers chromium,firefox] [--gc]
//
// Figures go to docs/benchmarks.md by hand, with this command line.
import { parseArgs } from 'node:util';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { injectReaders, launchBrowser } from './harness.mjs';

const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/pages/', import.meta.url));
const LAYOUTS = [
  ['article-2026-01', 'article-2026-01/idle.html', '/c/00000000-0000-4000-8000-000000000001'],
  ['section-2026-08', 'section-2026-08/idle.html', '/c/00000000-0000-4000-8000-000000000001'],
  ['transcript-2026-10', 'transcript-2026-10/idle.html', '/uc/00000000-0000-4000-8000-000000000001'],
];

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '4,400' },
    mutations: { type: 'string', default: '2000' },
    browsers: { type: 'string', default: 'chromium,firefox' },
    gc: { type: 'boolean', default: false },
  },
});

const server = createServer((request, response) => {
  const entry = LAYOUTS.find(([name]) => request.url.startsWith(`/${name}/`));
  if (!entry) return response.writeHead(404).end();
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(readFileSync(`${FIXTURES_DIR}${entry[1]}`, 'utf8'));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

// In the page: grows the transcript to `turns` turns by cloning its rows, then times the
// readers around `mutations` token-sized edits of the latest assistant turn.
function measure({ turns, mutations, streaming, gc }) {
  const readers = globalThis.OrcSelectors;
  const all = [...document.querySelectorAll('[data-testid^="conversation-turn-"], li[data-message-role]')];
  let container = all[0].parentElement;
  while (!container.contains(all.at(-1))) container = container.parentElement;
  const rows = [...container.children];
  for (let i = 0; container.children.length < turns; i += 1) container.append(rows[i % rows.length].cloneNode(true));
  while (container.children.length > turns) container.lastElementChild.remove();
  const latest = container.lastElementChild;
  // Streaming: the latest answer is still being written (no action bar yet), as while a
  // turn generates; otherwise the tokens land in a finished answer (its tail is re-read).
  if (streaming) {
    for (const bar of latest.querySelectorAll('[data-testid$="-turn-action-button"], [data-message-actions]')) bar.remove();
    latest.removeAttribute('data-message-complete');
  }
  const target = latest.querySelector('.markdown, [data-assistant-markdown], p') ?? latest;
  const percentile = (list, p) => list.slice().sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(list.length * p))];
  const signals = [];
  const facts = [];
  const heapSize = () => (gc ? performance.memory.usedJSHeapSize : 0);
  let collections = 0;
  readers.computeFacts(document);
  for (let i = 0; i < mutations; i += 1) {
    target.append(document.createTextNode(` token${i}`));
    let start = performance.now();
    readers.turnEndSignals(document);
    signals.push(performance.now() - start);
    const heapBefore = heapSize();
    start = performance.now();
    readers.computeFacts(document);
    facts.push(performance.now() - start);
    if (heapSize() < heapBefore) collections += 1;
  }
  const counted = readers.computeFacts(document);
  return {
    turns: counted.userTurns + counted.assistantTurns,
    signals: { p50: percentile(signals, 0.5), p99: percentile(signals, 0.99) },
    facts: { p50: percentile(facts, 0.5), p99: percentile(facts, 0.99) },
    collections,
  };
}

const fmt = (ms) => `${ms.toFixed(3)} ms`;
try {
  for (const kind of values.browsers.split(',')) {
    const gc = values.gc && kind === 'chromium';
    const browser = await launchBrowser(kind, gc ? ['--enable-precise-memory-info'] : []);
    try {
      for (const [name, , path] of LAYOUTS) {
        for (const turns of values.turns.split(',').map(Number)) {
          for (const streaming of [true, false]) {
            const page = await browser.newPage();
            await page.goto(`${base}/${name}${path}`);
            await injectReaders(page);
            const result = await page.evaluate(measure, { turns, mutations: Number(values.mutations), streaming, gc });
            console.log(`${kind} ${name} ${result.turns} turns, ${streaming ? 'streaming' : 'finished answer'}: signals p50 ${fmt(result.signals.p50)} `
              + `p99 ${fmt(result.signals.p99)}; facts p50 ${fmt(result.facts.p50)} p99 ${fmt(result.facts.p99)}`
              + (gc ? `; a collection inside ${result.collections} of ${values.mutations} facts reads` : ''));
            await page.close();
          }
        }
      }
    } finally {
      await browser.close();
    }
  }
} finally {
  server.close();
}
