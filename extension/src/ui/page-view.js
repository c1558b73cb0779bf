// What the operator surfaces say about a managed page itself, as pure view logic: a page the
// content adapter failed closed on (it cannot read it: "Copy page shape", issue 15) and a page
// it does not recognize (something in the latest turn or around the composer it cannot name:
// "Page not recognized", issue 27), with the worker rows' merge of the extension's own page
// notes into the daemon's summary. No DOM, no chrome/browser, no clock.
import { cliView } from './executor-view.js';

/**
 * "Copy page shape" (issue 15, drift defence): offered where the content adapter failed
 * closed on a page it could not read (conversation state `error`, kind `host_ui_changed`).
 * The overlay, inside the tab, copies the shape (src/platform/page-shape.js); the dashboard
 * cannot read the tab and points there instead.
 */
export const PAGE_SHAPE = Object.freeze({
  label: 'Copy page shape',
  hint: 'Copies a skeleton of this page for a bug report: element names, test ids, roles, control labels and class names; no text, no titles, no conversation ids',
  pointer: 'Open the conversation and use Copy page shape in its overlay',
  note: 'ChatGPT page not recognised',
});

/**
 * Whether the worker's page failed closed. `observation` (optional) is the extension's own
 * `{state, errorKind}` for the conversation; otherwise the summary's `conversationState` with
 * `conversationErrorKind` when the daemon sends it (without a kind, an error is not this one).
 */
export function pageFailedClosed(worker, observation = null) {
  // A CLI worker has no page: its executor's host_ui_changed is a session it stopped on.
  if (cliView(worker)) return false;
  const state = observation?.state ?? worker?.conversationState ?? null;
  const kind = observation?.errorKind ?? worker?.conversationErrorKind ?? null;
  return state === 'error' && kind === 'host_ui_changed';
}

/**
 * A managed page the extension does not recognize (issue 27): the adapter types nothing there
 * and says what it did not recognize, and where (`worker.pageUnknown`, "Page not recognized:
 * <what> in the <where>"); a person looks, and may copy the page shape from the overlay.
 */
export const PAGE_UNKNOWN = Object.freeze({
  note: 'Page not recognized',
  ask: 'Nothing is typed there until the page is recognized again: look at the conversation, and use Copy page shape in its overlay for a bug report',
});

/**
 * The summary's workers with what the extension knows of their pages: `unknownPages`
 * (`{workerId: detail}`, ui.state) as each worker's `pageUnknown`.
 */
export function withPageNotes(summary, unknownPages) {
  if (!summary?.runs || !unknownPages || Object.keys(unknownPages).length === 0) return summary;
  return {
    ...summary,
    runs: summary.runs.map((run) => ({
      ...run,
      workers: (run.workers ?? []).map((w) => (typeof unknownPages[w.workerId] === 'string' ? { ...w, pageUnknown: unknownPages[w.workerId] } : w)),
    })),
  };
}

/** What a worker row offers for its unreadable or unrecognized page, or null: `{label, hint, pointer}`. */
export function pageShapeOffer(worker, observation = null) {
  const unrecognized = worker?.pageUnknown || worker?.hold?.reason === 'page_unrecognized';
  if (!pageFailedClosed(worker, observation) && !unrecognized) return null;
  return { label: PAGE_SHAPE.label, hint: PAGE_SHAPE.hint, pointer: PAGE_SHAPE.pointer };
}
