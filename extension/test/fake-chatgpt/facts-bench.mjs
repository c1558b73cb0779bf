// Benchmark (not a test): what observing a long conversation costs the content adapter. A
// real-page fixture (extension/test/fixtures/pages/, one per layout) is grown to N turns by
// repeating its answered turn pairs; then, per simulated streamed token (a mutation of the
// latest assistant turn, still being written or already finished), the page readers compute
// the turn-end signals (read on every mutation) and the whole facts (read at most once per
// report window). Prints p50/p99 per layout, turn count and case, in headless Chromium and
// Firefox ESR (whose clock for pages has a 1 ms step). With --gc (Chromium, which then
// reports its JS heap size exactly) it also counts the facts reads during which the heap
// shrank: a garbage collection ran inside the read. With --alloc (Chromium) it also measures
// the bytes of JS heap a read allocates, collected objects included (read-allocation.mjs),
// with the functions allocating most (--js-flags=--max-inlined-bytecode-size=0 names each
// function apart from its callers). With --control it also times, after each read, a fixed
// loop of arithmetic that allocates nothing (about the work of a read): its p99 is the
// machine's own noise at that moment. With --warmup N, N appends and reads run untimed
// first: V8 compiles the freshly injected readers while they run, and the first few hundred
// reads of every page hold the slow ones at the same counts in every row.
//
//   node test/fake-chatgpt/facts-bench.mjs [--turns 4,400] [--mutations 2000] [--browsers chromium,firefox] [--gc] [--alloc] [--control] [--warmup N] [--js-flags=FLAGS]
//
// Figures go to docs/benchmarks.md by hand, with this command line.
import { parseArgs } from 'node:util';
import { injectReaders, launchBrowser } from './harness.mjs';
import { LONG_PAGE_LAYOUTS, growPage, serveLongPages } from './long-page.mjs';
import { allocationPerRead } from './read-allocation.mjs';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '4,400' },
    mutations: { type: 'string', default: '2000' },
    browsers: { type: 'string', default: 'chromium,firefox' },
    gc: { type: 'boolean', default: false },
    alloc: { type: 'boolean', default: false },
    control: { type: 'boolean', default: false },
    warmup: { type: 'string', default: '0' },
    'js-flags': { type: 'string', default: '' },
  },
});

const server = await serveLongPages();

// In the page, after growPage: times the readers around `mutations` token-sized edits of the
// latest assistant turn.
function measure({ mutations, gc, control, warmup }) {
  const readers = globalThis.OrcSelectors;
  const target = globalThis.OrcLongPageTarget;
  const percentile = (list, p) => list.slice().sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(list.length * p))];
  const signals = [];
  const facts = [];
  const controls = [];
  // The control: steps of integer arithmetic, its result kept so the loop is not dropped.
  const spin = () => {
    let sum = 0;
    for (let step = 0; step < 25_000; step += 1) sum = (sum + step * 7) % 1_000_003;
    globalThis.OrcBenchControl = sum;
  };
  const heapSize = () => (gc ? performance.memory.usedJSHeapSize : 0);
  let collections = 0;
  readers.computeFacts(document);
  for (let i = 0; i < warmup; i += 1) {
    target.append(document.createTextNode(` warmup${i}`));
    readers.turnEndSignals(document);
    readers.computeFacts(document);
  }
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
    if (!control) continue;
    start = performance.now();
    spin();
    controls.push(performance.now() - start);
  }
  const counted = readers.computeFacts(document);
  return {
    turns: counted.userTurns + counted.assistantTurns,
    signals: { p50: percentile(signals, 0.5), p99: percentile(signals, 0.99) },
    facts: { p50: percentile(facts, 0.5), p99: percentile(facts, 0.99) },
    control: control ? { p50: percentile(controls, 0.5), p99: percentile(controls, 0.99) } : null,
    collections,
  };
}

// The functions allocating most, reported per case with --alloc.
const ALLOCATION_SITES_SHOWN = 8;

const fmt = (ms) => `${ms.toFixed(3)} ms`;
try {
  for (const kind of values.browsers.split(',')) {
    const gc = values.gc && kind === 'chromium';
    const chromiumArgs = [...(gc ? ['--enable-precise-memory-info'] : []), ...(values['js-flags'] ? [`--js-flags=${values['js-flags']}`] : [])];
    const browser = await launchBrowser(kind, chromiumArgs);
    try {
      for (const [name] of LONG_PAGE_LAYOUTS) {
        for (const turns of values.turns.split(',').map(Number)) {
          for (const streaming of [true, false]) {
            const page = await browser.newPage();
            await page.goto(server.url(name));
            await injectReaders(page);
            await page.evaluate(growPage, { turns, streaming });
            const result = await page.evaluate(measure, { mutations: Number(values.mutations), gc, control: values.control, warmup: Number(values.warmup) });
            console.log(`${kind} ${name} ${result.turns} turns, ${streaming ? 'streaming' : 'finished answer'}: signals p50 ${fmt(result.signals.p50)} `
              + `p99 ${fmt(result.signals.p99)}; facts p50 ${fmt(result.facts.p50)} p99 ${fmt(result.facts.p99)}`
              + (gc ? `; a collection inside ${result.collections} of ${values.mutations} facts reads` : '')
              + (result.control ? `; control p50 ${fmt(result.control.p50)} p99 ${fmt(result.control.p99)}` : ''));
            if (values.alloc && kind === 'chromium') {
              const bytes = await allocationPerRead(page, Number(values.mutations));
              const sites = bytes.sites.slice(0, ALLOCATION_SITES_SHOWN).map(([site, perRead]) => `${site} ${Math.round(perRead)} B`);
              console.log(`  allocated per read: signals ${Math.round(bytes.signals)} B, facts ${Math.round(bytes.facts)} B; facts' largest sites: ${sites.join(', ')}`);
            }
            await page.close();
          }
        }
      }
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}
