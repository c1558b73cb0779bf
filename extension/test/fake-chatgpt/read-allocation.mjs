// What a read of the page allocates, measured in Chromium (the benchmark's --alloc and the
// cost checks' byte budget share it): the same token-sized edits of a long page's latest
// assistant turn (long-page.mjs) run under V8's sampling heap profiler, collected objects
// included, with no read, with the turn-end signals and with the whole facts after each; the
// difference per read is what the read allocated. Chromium only (the DevTools protocol).

// A sample every this many bytes on average (V8's Poisson sampling; each sample stands for
// the bytes it is expected to represent, so the sums estimate every byte allocated).
const SAMPLING_INTERVAL_BYTES = 128;

// In the page: `mutations` token-sized edits of the latest assistant turn, each followed by
// `read` ('none', 'signals' or 'facts').
function mutateAndRead({ mutations, read }) {
  const readers = globalThis.OrcSelectors;
  const target = globalThis.OrcLongPageTarget;
  for (let i = 0; i < mutations; i += 1) {
    target.append(document.createTextNode(' token'));
    if (read === 'signals') readers.turnEndSignals(document);
    else if (read === 'facts') readers.computeFacts(document);
  }
}

/**
 * The JS heap bytes one read allocates on `page` (a Playwright Chromium page holding a grown
 * long page and the readers), over `mutations` edits: `{signals, facts, sites}`, `sites` the
 * facts read's allocating functions as [name:line, bytes per read], largest first (an inlined
 * callee counts as its caller; a builtin as the script function that called it).
 */
export async function allocationPerRead(page, mutations) {
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
    const sites = [...facts.bySite].sort((a, b) => b[1] - a[1]).map(([site, bytes]) => [site, bytes / mutations]);
    return { signals: (signals.total - none.total) / mutations, facts: (facts.total - none.total) / mutations, sites };
  } finally {
    await cdp.detach();
  }
}
