// The pages the executor knows, sans IO: one record per tab whose content script reported
// (its address, its latest facts, whether its port is up, the worker it is shown to), how a
// managed page classifies for its binding, and what the operator surfaces learn from the
// pages that the daemon's summary does not carry (the ChatGPT tabs a run may start in, the
// managed pages the adapter does not recognize, with why). executor.js keeps the table;
// commands.js and operator-channel.js read it as the Map it is.

import { classify, UNKNOWN } from './classify.js';
import { isConversationUrl, sameConversation } from './urls.js';

/**
 * tabId -> {url, facts, connected, workerId, reports, staleThrough, unknownDetail} for every
 * tab whose content script reported; `reports` counts its reports, and facts from report
 * number `staleThrough` or earlier predate the tab's last submission (not a basis for the
 * next); `unknownDetail`: why the adapter does not recognize the page now, or null.
 */
export class Pages extends Map {
  /** The tab's record after a `page.hello` or `page.facts` report (made on the first). */
  reported(tabId, report) {
    const page = this.get(tabId) ?? { workerId: null, reports: 0, staleThrough: 0 };
    Object.assign(page, { url: report.url, facts: report.facts, connected: true, reports: page.reports + 1 });
    this.set(tabId, page);
    return page;
  }

  /** The tab's port dropped: its record stays (the tab may connect again), marked so. */
  disconnected(tabId) {
    const page = this.get(tabId);
    if (page) page.connected = false;
  }

  /** The connected pages shown to a worker, as [tabId, page]. */
  *managed() {
    for (const [tabId, page] of this) if (page.connected && page.workerId !== null) yield [tabId, page];
  }

  /**
   * Keeps why the page is not recognized for its binding now (`unknownDetail`, or null):
   * true when that changed (the surfaces are then told), false when it did not.
   */
  noteUnknown(page, binding) {
    const classification = classificationOf(binding, page);
    const detail = classification.state === 'unknown' ? classification.detail ?? null : null;
    if (detail === (page.unknownDetail ?? null)) return false;
    page.unknownDetail = detail;
    return true;
  }

  /**
   * For `ui.state`: `chatTabs` (`{tabId: {conversation}}`), the ChatGPT tabs whose page
   * reports, for the popup's "Start a run here"; `unknownPages` (`{workerId: detail}`), the
   * managed pages the adapter does not recognize now, with the reason.
   */
  uiLists() {
    const chatTabs = {};
    const unknownPages = {};
    for (const [tabId, page] of this) {
      if (page.connected) chatTabs[tabId] = { conversation: isConversationUrl(page.url) };
      if (page.connected && page.workerId !== null && page.unknownDetail) unknownPages[page.workerId] = page.unknownDetail;
    }
    return { chatTabs, unknownPages };
  }
}

/** How a managed page classifies for `binding`: a tab showing another conversation than its binding's tells nothing about it. */
export function classificationOf(binding, page) {
  if (binding.conversationUrl && !sameConversation(page.url, binding.conversationUrl)) return UNKNOWN;
  return classify(page.facts);
}
