// When a queued command may be submitted: given its kind and what its page shows now, the
// decision is to submit (and how), to wait (the deadline bounds every wait), or to fail
// with a definite code (nothing was typed).

import { composerUsable } from './classify.js';
import { FAILURE_CODES } from './protocol.js';
import { isConversationUrl } from './urls.js';

/** Page errors after which a fresh prompt may still be typed once the composer is usable. */
const SUBMITTABLE_ERRORS = new Set(['delivery_timeout', 'generic']);

const submit = (mode) => ({ action: 'submit', mode });
const WAIT = Object.freeze({ action: 'wait' });
const fail = (code, detail) => ({ action: 'fail', code, detail });

/**
 * `page`: `{connected, facts, classification}` of the command's managed tab (the
 * classification is `unknown` while the tab shows another conversation).
 *
 * | kind                | page                                                 | decision                   |
 * |---------------------|------------------------------------------------------|----------------------------|
 * | any                 | not connected, or state unknown                      | wait                       |
 * | any                 | error conversation_full                              | fail CONVERSATION_FULL     |
 * | any                 | error host_ui_changed                                | fail HOST_UI_CHANGED       |
 * | conversation.send   | idle/ready, or a delivery-timeout/generic error card, composer usable | submit idle |
 * | conversation.create | ready (a new chat, no turns), composer usable        | submit idle                |
 * | conversation.steer  | generating                                           | submit steer               |
 * | conversation.steer  | anything else known                                  | fail STEERING_UNAVAILABLE  |
 * | send / create       | anything else (generating, a limit, a lock, a dialog, a challenge, ...) | wait    |
 *
 * "Composer usable" needs no send button: an empty composer's slot holds a voice button on
 * the real page, and the send button appears once the prompt is typed.
 */
export function decideDelivery(kind, page) {
  const classification = page?.classification;
  if (!page?.connected || !classification || classification.state === 'unknown') return WAIT;
  const { state, errorKind } = classification;
  if (state === 'error' && errorKind === 'conversation_full') {
    return fail(FAILURE_CODES.CONVERSATION_FULL, 'the conversation has reached its maximum length');
  }
  if (state === 'error' && errorKind === 'host_ui_changed') {
    return fail(FAILURE_CODES.HOST_UI_CHANGED, `the page could not be read (${classification.detail ?? 'no composer'})`);
  }
  switch (kind) {
    case 'conversation.steer':
      return state === 'generating'
        ? submit('steer')
        : fail(FAILURE_CODES.STEERING_UNAVAILABLE, `the conversation is ${state}, not generating`);
    case 'conversation.create':
      return state === 'ready' && composerUsable(page.facts) && !isConversationUrl(page.facts.url) ? submit('idle') : WAIT;
    case 'conversation.send': {
      const quiet = state === 'idle' || state === 'ready' || (state === 'error' && SUBMITTABLE_ERRORS.has(errorKind));
      return quiet && composerUsable(page.facts) ? submit('idle') : WAIT;
    }
    default:
      return fail(FAILURE_CODES.CONVERSATION_CLOSED, `unknown command kind ${kind}`);
  }
}
