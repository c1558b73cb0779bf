// What the popup offers on a ChatGPT tab that is not managed, as data (no DOM): "Start a
// run here" (a new run whose /root is this conversation, or this new chat) and "Attach
// this conversation to…" (an unfinished worker, those whose conversation is gone first).
// popup.js draws it; the background's executor binds the tab once the daemon answers
// (core/tab-claims.js).
import { workerStatus } from './view.js';

/** Longest task or root conversation name the form accepts, in characters (the engine checks bytes). */
export const NAME_CHARS_MAX = 120;
/** Longest plan the form accepts, in characters. */
export const PLAN_CHARS_MAX = 4_000;

/**
 * What the run's dead-man layer does if every way the run moves is gone while nobody
 * looks (docs/engine.md, "Dead-man fallback"), in the form's order; the first is the default.
 * `label` is short enough for the popup's dropdown; `text` is the whole sentence of
 * docs/operator.md, shown under it for the choice made.
 */
export const DEAD_MAN_CHOICES = Object.freeze([
  { value: 'recover', label: 'Reopen the root and tell me', text: 'Reopen the root in a fresh conversation, once, and tell me.' },
  { value: 'notify', label: 'Tell me only', text: 'Tell me, and type nothing.' },
  { value: 'off', label: 'Nothing', text: 'Nothing: no notice, nothing typed.' },
]);

/** The whole sentence of the dead-man choice `value` (the default's for an unknown one). */
export function deadManText(value) {
  return (DEAD_MAN_CHOICES.find((c) => c.value === value) ?? DEAD_MAN_CHOICES[0]).text;
}

/**
 * The tab's offer, or null when the tab is not a ChatGPT page the extension reads or is
 * managed already. `state` is `ui.state` (`chatTabs`: `{tabId: {conversation}}`); `tabId`
 * the popup's active tab.
 */
export function startHereView(state, tabId) {
  const tab = tabId === null || tabId === undefined ? null : state?.chatTabs?.[tabId] ?? null;
  if (!tab || state?.tabs?.[tabId]) return null;
  const live = state?.connection?.status === 'live';
  return {
    tabId,
    newChat: !tab.conversation,
    live,
    startText: tab.conversation
      ? 'The run\'s root works in this conversation: its first prompt is typed here once.'
      : 'The run\'s root works in this new chat: its first prompt is typed here once.',
    attachable: tab.conversation ? attachable(state?.summary) : [],
    attachText: tab.conversation ? null : 'Attach works on a conversation: open one to attach it to a worker.',
  };
}

/**
 * The unfinished workers a tab could be attached to, those without a conversation first.
 * Wider than view.js's `orphaned` (a closed conversation nothing will reopen, which makes a
 * worker Needs you): a `/root` still waiting for its first conversation has none either.
 */
function attachable(summary) {
  const out = [];
  for (const run of summary?.runs ?? []) {
    for (const w of run.workers ?? []) {
      if (workerStatus(w).terminal) continue;
      // Closed, or never opened (a /root waiting for one): nothing else will give it a conversation.
      const withoutConversation = w.conversationState === 'closed' || (!w.conversationUrl && w.disposition === 'awaiting_execution');
      out.push({
        workerId: w.workerId,
        label: `${w.displayName} (${w.name})${withoutConversation ? ' · no conversation' : ''}`,
        name: w.displayName,
        runTitle: run.taskName,
        withoutConversation,
      });
    }
  }
  return out.sort((a, b) => b.withoutConversation - a.withoutConversation);
}

/** The attach confirmation's words, naming the worker. */
export function attachConfirm(worker) {
  return {
    title: `Attach this conversation to ${worker.name}?`,
    body: worker.withoutConversation
      ? `${worker.name} (${worker.runTitle}) continues in this conversation, with its recovery prompt.`
      : `${worker.name} (${worker.runTitle}) leaves its current conversation and continues in this one, with its recovery prompt.`,
    confirmLabel: 'Attach',
    reason: false,
  };
}

/**
 * The `ui.action` of a filled start form, or `{error, field}` when a name is missing or too
 * long: `error` says what is missing and what to do (a sentence), `field` is the form field
 * to fix (`taskName`, `rootConversationName`, `context`).
 */
export function startRequest(form, tabId) {
  const taskName = (form.taskName ?? '').trim();
  const rootConversationName = (form.rootConversationName ?? '').trim() || (taskName && `${taskName} root`);
  const context = (form.context ?? '').trim();
  if (!taskName) return { error: 'The run needs a task name: type one in "Task name", then press Start run.', field: 'taskName' };
  if (taskName.length > NAME_CHARS_MAX) {
    return { error: `The task name is ${taskName.length} characters; shorten it to at most ${NAME_CHARS_MAX}.`, field: 'taskName' };
  }
  if (rootConversationName.length > NAME_CHARS_MAX) {
    return {
      error: `The root conversation name is ${rootConversationName.length} characters; shorten it to at most ${NAME_CHARS_MAX}.`,
      field: 'rootConversationName',
    };
  }
  if (context.length > PLAN_CHARS_MAX) {
    return { error: `The plan is ${context.length} characters; shorten it to at most ${PLAN_CHARS_MAX}.`, field: 'context' };
  }
  const deadMan = DEAD_MAN_CHOICES.some((c) => c.value === form.deadMan) ? form.deadMan : DEAD_MAN_CHOICES[0].value;
  return { action: 'run_start', tabId, taskName, rootConversationName, context, autoResume: form.autoResume !== false, deadMan };
}
