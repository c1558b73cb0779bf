// Benchmark (not a test): what observing a long conversation costs the content adapter. A
// real-page fixture (extension/test/fixtures/pages/, one per layout) is grown to N turns by
// repeating its answered turn pairs; then, per simulated streamed token (a mutation of the
// latest assistant turn, still being written or already finished), the page readers compute
// the turn-end signals (read on every mutation) and the whole facts (read at most once per
// report window). Prints p50/p99 per layout, turn count and case, in headless Chromium and
// Firefox ESR (whose clock for pages has a 1 ms step). With --gc (Chromium, which then
// reports its JS heap size exactly) it also counts the facts reads during which the heap
// shrank: a garbage collection ran inside the read. With --alloc (Chromium) it also measures
// the bytes of JS heap a read allocates, collected objects included: the same mutations run
// under V8's sampling heap profiler with no read, with the turn-end signals and with the whole
// facts, and the difference per read is reported, with the functions allocating most
// (--js-flags=--max-inlined-bytecode-size=0 names each function apart from its callers).
//
//   node test/fake-chatgpt/facts-bench.mjs [--turns 4,400] [--mutations 2000] [--browsers chromium,firefox] [--gc] [--alloc] [--js-flags=FLAGS]
//
// Figures go to docs/benchmarks.md by hand, with this command line.
import { parseArgs } from 'node:util';
import { injectReaders, launchBrowser } from './harness.mjs';
import { LONG_PAGE_LAYOUTS, growPage, serveLongPages } from './long-page.mjs';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '4,400' },
    mutations: { type: 'string', default: '2000' },
    browsers: { type: 'string', default: 'chromium,firefox' },
    gc: { type: 'boolean', default: false },
    alloc: { type: 'boolean', default: false },
    'js-flags': { type: 'string', default: '' },
  },
});

const server = await serveLongPages();

// In the page, after growPage: times the readers around `mutations` token-sized edits of the
// latest assistant turn.
function measure({ mutations, gc }) {
  const readers = globalThis.OrcSelectors;
  const target = globalThis.OrcLongPageTarget;
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

// In the page, for --alloc: `mutations` token-sized edits of the latest assistant turn, each
// followed by `read` ('none', 'signals' or 'facts').
function mutateAndRead({ mutations, read }) {
  const readers = globalThis.OrcSelectors;
  const target = globalThis.OrcLongPageTarget;
  for (let i = 0; i < mutations; i += 1) {
    target.append(document.createTextNode(' token'));
    if (read === 'signals') readers.turnEndSignals(document);
    else if (read === 'facts') readers.computeFacts(document);
  }
}

// A sample every this many bytes on average (V8's Poisson sampling; each sample stands for
// the bytes it is expected to represent, so the sums estimate every byte allocated).
const SAMPLING_INTERVAL_BYTES = 128;
// The functions allocating most, reported per case.
const ALLOCATION_SITES_SHOWN = 8;

// The JS heap bytes one read allocates (collected objects included), as the difference between
// the same mutations with and without it: {signals, facts, sites}, `sites` the facts read's
// largest allocating functions as name:line (inlined callees count as their caller).
async function allocationPerRead(page, mutations) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.enable');
  const sampled = async (read) => {
    await cdp.send('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true,
    });
    await page.evaluate(mutateAndRead, { mutations, read });
    const { profile } = await cdp.send('HeapProfiler.stopSampling');
    const bySite = new Map();
    let total = 0;
    // A builtin's bytes (a string's replace, an array's push) count for the script function
    // that called it: `owner`, the nearest frame with a script.
    const visit = (node, owner) => {
      total += node.selfSize;
      const { functionName, scriptId, lineNumber } = node.callFrame;
      const site = scriptId !== '0' && lineNumber >= 0 ? `${functionName || '(anonymous)'}:${lineNumber + 1}` : owner;
      if (node.selfSize > 0 && site !== null) bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      for (const child of node.children) visit(child, site);
    };
    visit(profile.head, null);
    return { total, bySite };
  };
  try {
    const none = await sampled('none');
    const signals = await sampled('signals');
    const facts = await sampled('facts');
    const sites = [...facts.bySite].sort((a, b) => b[1] - a[1]).slice(0, ALLOCATION_SITES_SHOWN)
      .map(([site, bytes]) => `${site} ${Math.round(bytes / mutations)} B`);
    return { signals: (signals.total - none.total) / mutations, facts: (facts.total - none.total) / mutations, sites };
  } finally {
    await cdp.detach();
  }
}

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
            const result = await page.evaluate(measure, { mutations: Number(values.mutations), gc });
            console.log(`${kind} ${name} ${result.turns} turns, ${streaming ? 'streaming' : 'finished answer'}: signals p50 ${fmt(result.signals.p50)} `
              + `p99 ${fmt(result.signals.p99)}; facts p50 ${fmt(result.facts.p50)} p99 ${fmt(result.facts.p99)}`
              + (gc ? `; a collection inside ${result.collections} of ${values.mutations} facts reads` : ''));
            if (values.alloc && kind === 'chromium') {
              const bytes = await allocationPerRead(page, Number(values.mutations));
              console.log(`  allocated per read: signals ${Math.round(bytes.signals)} B, facts ${Math.round(bytes.facts)} B; facts' largest sites: ${bytes.sites.join(', ')}`);
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
