// Page classification: the content script's DOM facts (extension/README.md, "facts") in,
// the coarse conversation state the daemon understands out:
// `{state: unknown|ready|generating|idle|error|closed, errorKind?, block?}`.
// The first matching rule wins, so an error in the latest turn beats a stale stop control.

/** The facts of a page with nothing known yet (before the content script's first report). */
export const UNKNOWN = Object.freeze({ state: 'unknown' });

const PAGE_ERROR_KINDS = {
  delivery_timeout: 'delivery_timeout',
  something_went_wrong: 'generic',
  generic: 'generic',
};

/**
 * The classification of one page's facts:
 *
 * | facts                                                        | result                      |
 * |--------------------------------------------------------------|-----------------------------|
 * | not loaded                                                   | unknown                     |
 * | conversationFull                                             | error conversation_full     |
 * | loginRequired or challenge                                   | error login_required        |
 * | usageLimit                                                   | error usage_limit           |
 * | an error card in the latest turn                             | error delivery_timeout/generic |
 * | no composer, or neither a send nor a stop control            | error host_ui_changed       |
 * | a stop control                                               | generating                  |
 * | the latest turn is an assistant turn showing its action bar  | idle, block = its tail      |
 * |   (a user turn left unanswered by a failed send earlier in the history does not matter) |    |
 * | no turns at all                                              | ready                       |
 * | anything else (a turn on its way, no stop control yet)       | unknown                     |
 *
 * A draft in the composer changes nothing here (the page refuses to submit over it).
 */
export function classify(facts) {
  if (!facts || !facts.loaded) return UNKNOWN;
  if (facts.conversationFull) return errorState('conversation_full');
  if (facts.loginRequired || facts.challenge) return errorState('login_required');
  if (facts.usageLimit) return errorState('usage_limit');
  if (facts.error) return errorState(PAGE_ERROR_KINDS[facts.error.kind] ?? 'generic');
  if (!facts.composer || !(facts.sendButton || facts.stopButton)) return errorState('host_ui_changed');
  if (facts.stopButton) return { state: 'generating' };
  if (facts.latestIsAssistant && facts.lastAssistantDone) {
    return facts.lastAssistantTail ? { state: 'idle', block: facts.lastAssistantTail } : { state: 'idle' };
  }
  if (facts.userTurns === 0 && facts.assistantTurns === 0) return { state: 'ready' };
  return UNKNOWN;
}

function errorState(errorKind) {
  return { state: 'error', errorKind };
}

/**
 * Whether the composer can take a new prompt now: a control to send with, nothing
 * generating. Used with the classification, which decides whether submitting is wise.
 */
export function composerUsable(facts) {
  return Boolean(facts?.loaded && facts.composer && facts.sendButton && !facts.stopButton);
}
