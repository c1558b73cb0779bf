// No work that grows with the conversation per mutation (issue 15's benchmark goal, checked
// rather than timed): on each real-page layout grown to LONG_TURNS turns, a token streamed
// into the latest assistant turn (still being written, or finished) is followed by the reads
// the content script makes on a mutation (turn-end signals, facts, the readiness to type), and
// none of them may query or walk a subtree that holds the turn list (the document, its body,
// or any ancestor of the list): no query or tree walker rooted there, and no walk by the
// nodes' own links into the list (its first or last child, or all its children, read). The page readers' caches (page-watch.js) are filled by a first
// read; reads after that must stay inside the latest turns and the composer. In Chromium, the
// same pages also hold each read to a byte budget (read-allocation.mjs): garbage is what puts
// a collection inside a read, so a read that builds lists, closures or walkers again fails here.
import { injectReaders } from './harness.mjs';
import { LONG_PAGE_LAYOUTS, growPage, serveLongPages } from './long-page.mjs';
import { allocationPerRead } from './read-allocation.mjs';

const LONG_TURNS = 400;
const MUTATIONS = 30;
// The JS heap a read may allocate (docs/benchmarks.md: about 0.4-0.6 KB per facts read and
// 50-80 B per signals read were measured; 3.4-4.4 KB and 350-420 B before they were cut).
const FACTS_READ_BYTES_MAX = 1536;
const SIGNALS_READ_BYTES_MAX = 256;
// Edits measured per case (after the reads above warmed the readers up).
const ALLOCATION_MUTATIONS = 400;
// The largest allocating functions named when a budget is exceeded.
const ALLOCATION_SITES_SHOWN = 6;

// In the page: counts the queries and tree walks rooted at a subtree holding the turn list
// during `mutations` token edits, each followed by the reads. Returns them by method and
// selector, with the last facts.
function wideReads({ mutations }) {
  const readers = globalThis.OrcSelectors;
  const list = globalThis.OrcLongPageList;
  const target = globalThis.OrcLongPageTarget;
  readers.computeFacts(document);
  readers.turnEndSignals(document);
  readers.readinessToType(document, 'idle', null);
  const wide = {};
  const restore = [];
  const holdsList = (root) => root === document || (root?.nodeType === 1 && root.contains(list));
  const wrap = (proto, method) => {
    const original = proto[method];
    restore.push(() => { proto[method] = original; });
    proto[method] = function counted(...args) {
      const root = method === 'createTreeWalker' ? args[0] : this;
      if (holdsList(root)) {
        const key = `${method}(${typeof args[0] === 'string' ? args[0] : root.nodeName})`;
        wide[key] = (wide[key] ?? 0) + 1;
      }
      return original.apply(this, args);
    };
  };
  for (const method of ['querySelector', 'querySelectorAll', 'getElementsByTagName', 'getElementsByClassName']) {
    wrap(Document.prototype, method);
    wrap(Element.prototype, method);
  }
  wrap(Document.prototype, 'createTreeWalker');
  // A walk by the nodes' own links enters the list through its first or last child (reading
  // the last rows goes through lastElementChild, which stays allowed).
  const watchGetter = (proto, name) => {
    const descriptor = Object.getOwnPropertyDescriptor(proto, name);
    restore.push(() => Object.defineProperty(proto, name, descriptor));
    Object.defineProperty(proto, name, {
      ...descriptor,
      get() {
        if (this === list) wide[`${name} of the turn list`] = (wide[`${name} of the turn list`] ?? 0) + 1;
        return descriptor.get.call(this);
      },
    });
  };
  for (const name of ['firstChild', 'lastChild', 'childNodes']) watchGetter(Node.prototype, name);
  watchGetter(Element.prototype, 'children');
  let facts = null;
  try {
    for (let i = 0; i < mutations; i += 1) {
      target.append(document.createTextNode(` token${i}`));
      readers.turnEndSignals(document);
      facts = readers.computeFacts(document);
      readers.readinessToType(document, 'idle', null);
    }
  } finally {
    for (const undo of restore) undo();
  }
  return { wide, turns: facts.userTurns + facts.assistantTurns, done: facts.lastAssistantDone };
}

export async function runCostChecks({ browser, tally }) {
  const measuresAllocation = typeof browser.browserType === 'function' && browser.browserType().name() === 'chromium';
  if (!measuresAllocation) tally.note('the byte budget of a read is checked in Chromium only (its heap sampler)');
  const server = await serveLongPages();
  try {
    for (const [layout] of LONG_PAGE_LAYOUTS) {
      for (const streaming of [true, false]) {
        const name = `${layout}, ${LONG_TURNS} turns, ${streaming ? 'streaming' : 'finished answer'}`;
        await tally.group(name, async () => {
          const page = await browser.newPage();
          try {
            await page.goto(server.url(layout));
            await injectReaders(page);
            await page.evaluate(growPage, { turns: LONG_TURNS, streaming });
            const result = await page.evaluate(wideReads, { mutations: MUTATIONS });
            const shown = JSON.stringify(result);
            tally.check(`${name}: the facts see all ${LONG_TURNS} turns`, result.turns === LONG_TURNS, shown);
            tally.check(`${name}: the latest answer reads as ${streaming ? 'still written' : 'done'}`, result.done === !streaming, shown);
            tally.check(`${name}: no read per mutation queries or walks the transcript`, Object.keys(result.wide).length === 0, shown);
            if (measuresAllocation) {
              const bytes = await allocationPerRead(page, ALLOCATION_MUTATIONS);
              const detail = JSON.stringify({ signals: Math.round(bytes.signals), facts: Math.round(bytes.facts), sites: bytes.sites.slice(0, ALLOCATION_SITES_SHOWN) });
              tally.check(`${name}: a facts read allocates at most ${FACTS_READ_BYTES_MAX} B`, bytes.facts <= FACTS_READ_BYTES_MAX, detail);
              tally.check(`${name}: a turn-end signals read allocates at most ${SIGNALS_READ_BYTES_MAX} B`, bytes.signals <= SIGNALS_READ_BYTES_MAX, detail);
            }
          } finally {
            await page.close();
          }
        });
      }
    }
  } finally {
    await server.close();
  }
}
