// The binding table: which managed conversation (and tab) belongs to which worker, with
// the last published observation and the binding's sequence high-water.
//
// Stored binding (storage.local `bindings`): {workerId, conversationUrl, tabId, open, seq, observation}
//   conversationUrl  '' while a conversation.create's new chat has not settled on /c/<id>
//   tabId            the managed tab, or null when no tab shows it now (e.g. after a browser
//                    restart; a tab whose URL equals conversationUrl is adopted)
//   open             false once the managed tab was closed (the conversation is lost to us)
//   seq              the last sequence published for this worker; never decreases, also
//                    across restarts and when a worker moves to a new conversation
//   observation      the last published {state, errorKind?, seq, block?}, or null; the
//                    stored copy holds `blockDigest` instead of the block's text
//   publishNext      (optional) a prompt went in: publish the next known state even if it
//                    classifies as the last one did

import { blockDigest } from './coalesce.js';
import { onChatOrigin, sameConversation } from './urls.js';

function isBinding(b) {
  return Boolean(b) && typeof b.workerId === 'string' && typeof b.conversationUrl === 'string'
    && typeof b.open === 'boolean' && Number.isSafeInteger(b.seq) && b.seq >= 0
    && (b.tabId === null || Number.isSafeInteger(b.tabId));
}

export function createBindings(stored = []) {
  const loaded = Array.isArray(stored) ? stored : [];
  /** workerId -> binding */
  const table = new Map();
  for (const b of loaded) {
    if (isBinding(b)) table.set(b.workerId, { ...b, tabId: b.tabId ?? null, observation: b.observation ?? null });
  }

  return {
    dropped: loaded.length - table.size,

    get(workerId) {
      return table.get(workerId) ?? null;
    },

    /** The open binding managing `tabId`, if any. */
    byTab(tabId) {
      for (const b of table.values()) if (b.open && b.tabId === tabId) return b;
      return null;
    },

    /** An open binding without a tab whose conversation `url` shows (to adopt that tab). */
    awaitingTab(url) {
      for (const b of table.values()) {
        if (b.open && b.tabId === null && sameConversation(b.conversationUrl, url)) return b;
      }
      return null;
    },

    /**
     * Puts a binding for `workerId` on `conversationUrl` ('' for a new chat), replacing
     * any earlier one but keeping its sequence. Returns the new binding.
     */
    bind(workerId, conversationUrl, tabId) {
      const seq = table.get(workerId)?.seq ?? 0;
      const binding = { workerId, conversationUrl, tabId, open: true, seq, observation: null };
      table.set(workerId, binding);
      return binding;
    },

    /**
     * Forgets the worker's conversation (`conversation.close`): nothing is managed or
     * republished for it any more, but its sequence high-water stays, so a later binding
     * of the worker keeps counting up.
     */
    release(workerId) {
      const b = table.get(workerId);
      if (b) table.set(workerId, { workerId, conversationUrl: '', tabId: null, open: false, seq: b.seq, observation: null });
    },

    /** Managed tabs now open (the `managedMax` count). */
    managedTabCount() {
      let count = 0;
      for (const b of table.values()) if (b.open && b.tabId !== null) count += 1;
      return count;
    },

    /**
     * The managed tabs' last observed states, for the watchdog (core/watchdog.js):
     * `[{workerId, state, errorKind?, untilMs?}]`, state null before the first observation.
     */
    managedPages() {
      const out = [];
      for (const b of table.values()) {
        if (!b.open || b.tabId === null) continue;
        const { state = null, errorKind, untilMs } = b.observation ?? {};
        out.push({ workerId: b.workerId, state, errorKind, untilMs });
      }
      return out;
    },

    /** `{tabId: workerId}` of the managed tabs. */
    tabs() {
      const out = {};
      for (const b of table.values()) if (b.open && b.tabId !== null) out[b.tabId] = b.workerId;
      return out;
    },

    /**
     * After a restart: keeps a binding's tab only if that tab still shows its
     * conversation (or, for an unsettled new chat, a page of the chat origin). Tab ids
     * can be reused after a browser restart; an unrelated tab is never kept.
     */
    verifyTabs(openTabs, chatBaseUrl) {
      const urlByTab = new Map(openTabs.map((t) => [t.tabId, t.url]));
      for (const b of table.values()) {
        if (b.tabId === null) continue;
        const url = urlByTab.get(b.tabId);
        const stillOurs = url !== undefined && (b.conversationUrl
          ? sameConversation(url, b.conversationUrl)
          : onChatOrigin(url, chatBaseUrl));
        if (!stillOurs) b.tabId = null;
      }
    },

    /** The bindings `hello` republishes (only settled ones: a new chat has no URL yet). */
    helloBindings() {
      return [...table.values()].filter((b) => b.conversationUrl !== '').map(wireBinding);
    },

    /**
     * All bindings (the value to persist). The observation's `block` is the tail of an
     * assistant turn: transcript text, which is never stored (spec 000 §23).
     */
    stored() {
      return [...table.values()].map((b) => ({ ...b, observation: withoutBlock(b.observation) }));
    },
  };
}

/** The `binding` message fields of a binding (observation only while open). */
export function wireBinding(b) {
  const out = { workerId: b.workerId, conversationUrl: b.conversationUrl, open: b.open };
  if (b.open && b.observation) out.observation = wireObservation(b.observation);
  return out;
}

/** The stored form of an observation: the block's digest instead of its text. */
function withoutBlock(observation) {
  if (!observation?.block) return observation;
  const { block, ...rest } = observation;
  return { ...rest, blockDigest: blockDigest(observation) };
}

/** The wire form of an observation: never the stored digest. */
function wireObservation(observation) {
  if (!observation?.blockDigest) return observation;
  const { blockDigest: digest, ...rest } = observation;
  return rest;
}
