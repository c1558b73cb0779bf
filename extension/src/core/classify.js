// Page classification: the content script's DOM facts (extension/README.md, "facts") in,
// the coarse conversation state the daemon understands out:
// `{state: unknown|ready|generating|idle|awaiting_approval|error|closed, errorKind?, untilMs?, detail?, block?}`.
// The first matching rule wins: what stops the whole account (a challenge, a lock) beats
// what stops one conversation, and an error in the latest turn beats a stale stop control.
// Submitting is allowed only on a state recognized as safe (idle, ready, an error card the
// engine answers with a fresh prompt): a page holding something the adapter cannot name
// (facts.unrecognized) is `unknown` with that reason, whatever else it shows.

import { isConversationUrl } from './urls.js';

/**
 * The facts of a page with nothing known yet (before the content script's first report), or
 * a page between two known states: `unknown` without a reason, never published.
 */
export const UNKNOWN = Object.freeze({ state: 'unknown' });

/** The page's failure notices (facts.error.kind) by the protocol error kind they report. */
const PAGE_ERROR_KINDS = {
  delivery_timeout: 'delivery_timeout',
  // A failed turn offering Retry whose notice is in words the reader does not know: the turn
  // failed, how is not known (issue 27: a generic error on the latest turn, never Retry).
  turn_failed: 'generic',
  something_went_wrong: 'generic',
  connection_interrupted: 'generic',
  stream_error: 'generic',
  thinking_failed: 'generic',
  thinking_stopped: 'generic',
  subscription_failed: 'generic',
  // The conversation lost its developer app (FORBIDDEN ... developer MCPs and kin).
  app_unavailable: 'app_unavailable',
  generic: 'generic',
};

/** At most this many characters of page text travel as `detail` (the protocol's cap). */
export const DETAIL_CHARS_MAX = 200;

/**
 * The classification of one page's facts:
 *
 * | facts                                                        | result                              |
 * |--------------------------------------------------------------|-------------------------------------|
 * | not loaded                                                   | unknown                             |
 * | challenge (Cloudflare interstitial)                          | error challenge                     |
 * | loginRequired (a logged-out page, whatever it shows)         | error login_required                |
 * | suspiciousActivity                                           | error suspicious_activity, detail   |
 * | rateLimited ("Too many requests" dialog)                     | error rate_limited, detail          |
 * | a tool-approval card after the latest user turn              | awaiting_approval, detail = the app |
 * | an unknown dialog                                            | error blocked_by_dialog, detail = its heading |
 * | conversationFull                                             | error conversation_full             |
 * | usageLimit                                                   | error usage_limit, untilMs?, detail |
 * | "Connection interrupted" while a stop control shows          | generating (the page polls for the answer) |
 * | something in the latest turn or around the composer the adapter cannot name, settled | unknown, detail = what and where |
 * | ... still settling (content.js: it may be gone at the next mutation) | unknown                  |
 * | an error card in the latest turn (unknown words: generic)    | error delivery_timeout/app_unavailable/generic, detail |
 * | no composer, or the page lacks what the adapter reads        | error host_ui_changed, detail = what is missing |
 * | a stop control                                               | generating                          |
 * | the latest turn is an assistant turn showing its action bar  | idle, block = its tail              |
 * | no turns at all, on a new chat's address                     | ready                               |
 * | anything else (a turn on its way, no stop control yet)       | unknown                             |
 *
 * A draft in the composer changes nothing here (the page refuses to submit over it), and
 * neither does a missing send button: an empty composer's slot holds a voice button, and
 * the send button appears once text is typed.
 */
export function classify(facts) {
  if (!facts || !facts.loaded) return UNKNOWN;
  if (facts.challenge) return errorState('challenge');
  // Logged out, nothing else on the page is the person's account: whatever it shows (a
  // safety notice, a slow-down dialog), a person must log in first.
  if (facts.loginRequired) return errorState('login_required');
  if (facts.suspiciousActivity) return errorState('suspicious_activity', { detail: facts.suspiciousActivity.text });
  if (facts.rateLimited) return errorState('rate_limited', { detail: facts.rateLimited.text });
  // Before generating and idle: a card may show with or without a Stop control.
  if (facts.approval) return awaitingApproval(facts.approval);
  if (facts.dialog) return errorState('blocked_by_dialog', { detail: facts.dialog.heading });
  if (facts.conversationFull) return errorState('conversation_full');
  if (facts.usageLimit) {
    return errorState('usage_limit', { untilMs: facts.usageLimit.untilMs ?? undefined, detail: facts.usageLimit.text });
  }
  // The connection dropped mid-answer and the page waits for the rest, Stop still offered: a
  // turn still running, not a failed one (live capture of 2026-10-07, SOURCES.md).
  if (facts.error?.kind === 'connection_interrupted' && facts.stopButton) return { state: 'generating' };
  if (facts.unrecognized) return facts.unrecognized.settling ? UNKNOWN : unrecognizedState(facts.unrecognized);
  if (facts.error) return errorState(PAGE_ERROR_KINDS[facts.error.kind] ?? 'generic', { detail: facts.error.text });
  const missing = facts.missing ?? [];
  if (!facts.composer || missing.length > 0) {
    return errorState('host_ui_changed', { detail: `not found: ${missing.length > 0 ? missing.join(', ') : 'composer'}` });
  }
  if (facts.stopButton) return { state: 'generating' };
  if (facts.latestIsAssistant && facts.lastAssistantDone) {
    return facts.lastAssistantTail ? { state: 'idle', block: facts.lastAssistantTail } : { state: 'idle' };
  }
  if (facts.userTurns === 0 && facts.assistantTurns === 0 && !isConversationUrl(facts.url ?? '')) return { state: 'ready' };
  return UNKNOWN;
}

/** The words of a page the adapter does not recognize: what it found, and where. */
export function unrecognizedDetail(unrecognized) {
  return `Page not recognized: ${unrecognized.what} in the ${unrecognized.where}`.slice(0, DETAIL_CHARS_MAX);
}

function unrecognizedState(unrecognized) {
  return { state: 'unknown', detail: unrecognizedDetail(unrecognized) };
}

/** The approval card's state: the app's name (or, in an unknown language, the card's title) as `detail`. */
function awaitingApproval(approval) {
  const detail = String(approval.app ?? approval.title ?? '').trim().slice(0, DETAIL_CHARS_MAX);
  return detail === '' ? { state: 'awaiting_approval' } : { state: 'awaiting_approval', detail };
}

function errorState(errorKind, { untilMs, detail } = {}) {
  const state = { state: 'error', errorKind };
  if (Number.isSafeInteger(untilMs)) state.untilMs = untilMs;
  if (typeof detail === 'string' && detail.trim() !== '') state.detail = detail.trim().slice(0, DETAIL_CHARS_MAX);
  return state;
}

/**
 * Whether the composer can take a new prompt now: an editable composer (a page may lock it
 * for a moment), nothing generating. The send
 * button is not required: the page draws it once the prompt is typed (the content script
 * waits a bounded time for it).
 */
export function composerUsable(facts) {
  return Boolean(facts?.loaded && facts.composer && facts.composerEditable !== false && !facts.stopButton);
}
