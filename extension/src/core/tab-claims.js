// Tab claims, sans IO: a person asked, in one tab, to start a run there ("Start a run
// here", the `run_start` action) or to attach the tab to a worker ("Attach this
// conversation to…", `worker_attach`). A claim waits for the daemon's `operator.result`,
// which names the worker; the executor then binds the tab to it. Binding is explicit
// (spec 001 C12.1): a tab is only ever bound by a person's action, never by a guess.
//
// A `run_start` in a new chat has no conversation yet: the root's first turn arrives as a
// `conversation.create`. While such a claim waits, every `conversation.create` is held
// here, so the root's create finds the claimed tab bound and types there instead of
// opening one (docs/protocol/executor.md, `operator.action`). Held commands are handed
// back as soon as no new-chat claim waits: answered, expired or dropped with the connection.

import { DEAD_MAN_MODES } from './protocol.js';
import { conversationUrlOf } from './urls.js';

/** A claim whose result has not come by then is given up, in milliseconds (as the operator reply timeout). */
export const CLAIM_WAIT_MS = 10_000;

export class TabClaims {
  /** actionId -> {tabId, conversationUrl ('' for a new chat), workerId (attach) or null, untilMs} */
  #claims = new Map();
  /** `conversation.create` commands held while a new-chat claim waits, oldest first */
  #held = [];

  /** Records the claim of action `actionId`, waiting from `now`. */
  add(actionId, { tabId, conversationUrl, workerId = null }, now) {
    this.#claims.set(actionId, { tabId, conversationUrl, workerId, untilMs: now + CLAIM_WAIT_MS });
  }

  /** Whether a claim for `tabId` waits (a second click in the same tab is refused). */
  waitsFor(tabId) {
    for (const claim of this.#claims.values()) if (claim.tabId === tabId) return true;
    return false;
  }

  /** Whether a `conversation.create` must wait now (a new-chat claim is unanswered). */
  holdsCreates() {
    for (const claim of this.#claims.values()) if (claim.conversationUrl === '') return true;
    return false;
  }

  hold(command) {
    this.#held.push(command);
  }

  /** The claim of `actionId`, removed (its result came), or null when none waits. */
  settle(actionId) {
    const claim = this.#claims.get(actionId) ?? null;
    this.#claims.delete(actionId);
    return claim;
  }

  /** Drops claims whose wait ended by `now`; returns how many. */
  expire(now) {
    let count = 0;
    for (const [actionId, claim] of this.#claims) {
      if (claim.untilMs <= now) {
        this.#claims.delete(actionId);
        count += 1;
      }
    }
    return count;
  }

  /** Drops every claim (the connection closed: no result will come). */
  dropAll() {
    this.#claims.clear();
  }

  /** The held commands, to process now, once nothing holds them any more (else none). */
  releasable() {
    if (this.holdsCreates() || this.#held.length === 0) return [];
    const out = this.#held;
    this.#held = [];
    return out;
  }

  /** When the earliest claim expires, or null. */
  nextAt() {
    let at = null;
    for (const claim of this.#claims.values()) if (at === null || claim.untilMs < at) at = claim.untilMs;
    return at;
  }
}

/** The actions that claim the tab they were asked in. */
export const CLAIM_ACTIONS = new Set(['run_start', 'worker_attach']);

/**
 * What a claim request from the popup or overlay asks of the daemon: `{fields, claim}`
 * (the `operator.action` fields besides its id, and the claim to record), or `{error}`
 * (`{code, message}` for the person). `page` is the tab's last report (`{url, connected}`)
 * or undefined; `managedBy` the worker already bound to the tab, or null.
 */
export function claimRequest(request, page, managedBy) {
  const tabId = request?.tabId;
  if (!Number.isSafeInteger(tabId)) return refusal('INVALID_ARGUMENT', 'the request names no tab');
  if (!page?.connected) {
    return refusal('TAB_NOT_READY', 'this tab has not loaded ChatGPT yet (or lost the extension): reload it and try again');
  }
  if (managedBy !== null) return refusal('TAB_MANAGED', `this tab is already the conversation of ${managedBy}`);
  const conversationUrl = conversationUrlOf(page.url) ?? '';
  if (request.action === 'worker_attach') {
    if (typeof request.workerId !== 'string') return refusal('INVALID_ARGUMENT', 'choose the worker to attach');
    if (conversationUrl === '') {
      return refusal('NEW_CHAT', 'this tab shows a new chat: attach works on a conversation (open one, or start a run here)');
    }
    return { fields: { workerId: request.workerId, conversationUrl }, claim: { tabId, conversationUrl, workerId: request.workerId } };
  }
  const fields = { autoResume: request.autoResume !== false };
  if (DEAD_MAN_MODES.includes(request.deadMan)) fields.deadMan = request.deadMan;
  for (const field of ['taskName', 'rootConversationName', 'context']) {
    const value = typeof request[field] === 'string' ? request[field].trim() : '';
    if (value !== '') fields[field] = value;
  }
  if (!fields.taskName) return refusal('INVALID_ARGUMENT', 'give the run a task name');
  if (!fields.rootConversationName) return refusal('INVALID_ARGUMENT', 'give the root conversation a name');
  if (conversationUrl !== '') fields.conversationUrl = conversationUrl;
  return { fields, claim: { tabId, conversationUrl, workerId: null } };
}

function refusal(code, message) {
  return { error: { code, message } };
}
