// Reads of ChatGPT's page kept until a mutation could change them: the page readers
// (turns.js, selectors.js) keep here what would otherwise cost a pass over the whole page (which grows
// with the conversation) on every read, so a token streamed into the latest turn costs no
// such pass, and a part of the page that mostly stays quiet (the composer's dock) is read
// again only once it changed. Each kept read has its own MutationObserver that marks it stale;
// the records not yet delivered are taken at read time, so a read right after a mutation is
// never stale.
// Classic content script, loaded after page-texts.js and before turns.js and selectors.js
// into the same isolated world: it defines globalThis.OrcPageWatch and only observes the page.
(() => {
  'use strict';

  // ---- A query of the whole document ----

  /** selector -> {doc, selector, elements, stale, observer} */
  const documentQueries = new Map();

  /**
   * The elements matching `selector` anywhere in `doc`, in page order. `selector` must read
   * only an element's own tag and attributes. Queried again only after a mutation that could
   * change the answer: an added element that matches or holds a match, an element whose
   * attributes now say otherwise, a kept element removed.
   */
  function queryDocument(doc, selector) {
    const kept = documentQueries.get(selector);
    if (kept !== undefined && kept.doc === doc && !kept.stale && !queryMayChange(kept, kept.observer.takeRecords())) return kept.elements;
    kept?.observer.disconnect();
    const query = { doc, selector, elements: [...doc.querySelectorAll(selector)], stale: false, observer: null };
    query.observer = new MutationObserver((records) => {
      if (!queryMayChange(query, records)) return;
      query.stale = true;
      query.observer.disconnect();
    });
    query.observer.observe(doc, { subtree: true, childList: true, attributes: true });
    documentQueries.set(selector, query);
    return query.elements;
  }

  // Indexed loops: this runs for every mutation record of the page.
  function queryMayChange(query, records) {
    for (let r = 0; r < records.length; r += 1) {
      const record = records[r];
      if (record.type === 'attributes') {
        if (record.target.matches(query.selector) !== query.elements.includes(record.target)) return true;
        continue;
      }
      const { addedNodes, removedNodes } = record;
      for (let i = 0; i < addedNodes.length; i += 1) {
        const node = addedNodes[i];
        if (node.nodeType === 1 && (node.matches(query.selector) || node.querySelector(query.selector) !== null)) return true;
      }
      for (let i = 0; i < removedNodes.length; i += 1) {
        const node = removedNodes[i];
        if (node.nodeType === 1 && query.elements.some((element) => node === element || node.contains(element))) return true;
      }
    }
    return false;
  }

  // ---- A pass over the page outside the turn list ----

  /** The last pass: {doc, body, container, result, stale, observer}, or null. */
  let outsidePass = null;

  /**
   * `read(doc, container)`, a pass over `doc.body` that skips `container` (the turn list) and
   * reads only the DOM (no styles, no layout), kept while no mutation lands outside
   * `container`. Without a container, or with one inside a nav or aside (a pass reads their
   * links), it runs on every call.
   */
  function outsideTurns(doc, container, read) {
    const kept = outsidePass;
    if (kept !== null && kept.doc === doc && kept.body === doc.body && kept.container === container && kept.read === read
      && !kept.stale && !landsOutside(kept.observer.takeRecords(), container)) return kept.result;
    kept?.observer?.disconnect();
    outsidePass = null;
    const result = read(doc, container);
    if (container === null || container.closest('nav, aside') !== null) return result;
    const pass = { doc, body: doc.body, container, read, result, stale: false, observer: null };
    pass.observer = new MutationObserver((records) => {
      if (!landsOutside(records, container)) return;
      pass.stale = true;
      pass.observer.disconnect();
    });
    pass.observer.observe(doc.body, { subtree: true, childList: true, attributes: true, characterData: true });
    outsidePass = pass;
    return result;
  }

  function landsOutside(records, container) {
    for (let i = 0; i < records.length; i += 1) if (!container.contains(records[i].target)) return true;
    return false;
  }

  // ---- An element's rows ----

  /** element -> {version, observer} */
  const childLists = new WeakMap();

  /** A number that changes whenever `element`'s own children change (added, removed, moved). */
  function childListVersion(element) {
    let watch = childLists.get(element);
    if (watch === undefined) {
      watch = { version: 0, observer: null };
      const counted = watch;
      watch.observer = new MutationObserver(() => {
        counted.version += 1;
      });
      watch.observer.observe(element, { childList: true });
      childLists.set(element, watch);
    }
    if (watch.observer.takeRecords().length > 0) watch.version += 1;
    return watch.version;
  }

  // ---- An element's subtree ----

  /** element -> {version, observer} */
  const subtrees = new WeakMap();

  /**
   * A number that changes whenever anything in `element`'s subtree changes (its children and
   * theirs, any attribute, any text), `element`'s own attributes included: what a read of a
   * small, mostly quiet part of the page (the composer's dock) is kept by.
   */
  function subtreeVersion(element) {
    let watch = subtrees.get(element);
    if (watch === undefined) {
      watch = { version: 0, observer: null };
      const counted = watch;
      watch.observer = new MutationObserver(() => {
        counted.version += 1;
      });
      watch.observer.observe(element, { subtree: true, childList: true, attributes: true, characterData: true });
      subtrees.set(element, watch);
    }
    if (watch.observer.takeRecords().length > 0) watch.version += 1;
    return watch.version;
  }

  globalThis.OrcPageWatch = Object.freeze({ queryDocument, outsideTurns, childListVersion, subtreeVersion });
})();
