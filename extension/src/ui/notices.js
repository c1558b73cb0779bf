// The browser notifications the background raises, as data (no browser API): from the
// daemon's operator.summary, one per worker held by a tool-approval card and one per run the
// dead-man layer found stopped; from the extension's own reading of its managed pages, one
// per page it does not recognize (issue 27). Each is shown once when its cause appears
// (`shown`: the ids already shown, kept by the caller) and cleared when it goes. They only
// tell a person: nothing here acts on a page.

/** The approval hold's sentence: `approve <App> in this conversation`. */
export function approvalText(app) {
  return `approve ${app || 'the app'} in this conversation`;
}

/**
 * Every worker held by a tool-approval card gets one when the hold starts, cleared when it
 * lifts. Returns `{show: [{id, workerId, title, message}], clear: [id]}`.
 */
export function approvalNotifications(summary, shown) {
  const wanted = new Map();
  for (const run of summary?.runs ?? []) {
    for (const worker of run.workers ?? []) {
      if (worker.hold?.reason !== 'awaiting_approval' || typeof worker.workerId !== 'string') continue;
      const app = worker.hold.detail || 'the app';
      const name = worker.displayName || worker.name || 'A worker';
      // A CLI's request (`--approvals ask`) is answered on the dashboard, not in a page.
      const asked = worker.hold.approval?.summary;
      wanted.set(`orc-approval:${worker.workerId}`, {
        id: `orc-approval:${worker.workerId}`,
        workerId: worker.workerId,
        title: asked ? 'Needs you: approve or decline a request' : `Needs you: approve ${app}`,
        message: asked
          ? `${name} asks to ${asked}. Answer it under Needs you on the dashboard.`
          : `${name}: ${approvalText(app)}. Click to open it.`,
      });
    }
  }
  return changes(wanted, shown, 'orc-approval:');
}

/**
 * Every managed page the adapter does not recognize gets one when that starts (once per
 * episode: it is cleared once the page is recognized again, and a later episode notifies
 * again). `unknownPages`: `{workerId: detail}` (executor.js uiState); the summary names the
 * worker. Returns `{show: [{id, workerId, title, message}], clear: [id]}`.
 */
export function unknownPageNotifications(unknownPages, summary, shown) {
  const names = new Map();
  for (const run of summary?.runs ?? []) for (const worker of run.workers ?? []) names.set(worker.workerId, worker.displayName || worker.name);
  const wanted = new Map();
  for (const [workerId, detail] of Object.entries(unknownPages ?? {})) {
    if (typeof detail !== 'string' || detail === '') continue;
    const id = `orc-page-unknown:${workerId}`;
    wanted.set(id, {
      id,
      workerId,
      title: 'Needs you: ChatGPT page not recognized',
      message: `${names.get(workerId) || 'A worker'}: ${detail}. Nothing is typed there until it is recognized again. Click to open it.`,
    });
  }
  return changes(wanted, shown, 'orc-page-unknown:');
}

/**
 * A run the dead-man layer found stopped gets one per firing (its `atMs` is in the id, so a
 * later firing of the same run notifies again), cleared once the run moves or ends.
 * Returns `{show: [{id, runId, title, message}], clear: [id]}`.
 */
export function stoppedNotifications(summary, shown) {
  const wanted = new Map();
  for (const run of summary?.runs ?? []) {
    const stopped = run.stoppedMoving;
    if (!stopped || typeof run.runId !== 'string') continue;
    const id = `orc-stopped:${run.runId}:${stopped.atMs}`;
    wanted.set(id, { id, runId: run.runId, title: `Needs you: ${run.taskName || 'a run'} stopped moving`, message: `${stopped.text} Click to open the dashboard.` });
  }
  return changes(wanted, shown, 'orc-stopped:');
}

/**
 * A worker that no executor of its kind carried for the daemon's limit (its summary's
 * `liveness.absentSinceMs`, set with the durable `worker.executor_absent`) gets one per
 * episode (the time its kind went missing is in the id, so a later episode notifies again),
 * cleared once an executor of its kind is back. Returns `{show: [{id, workerId, title,
 * message}], clear: [id]}`.
 */
export function absentNotifications(summary, shown) {
  const wanted = new Map();
  for (const run of summary?.runs ?? []) {
    for (const worker of run.workers ?? []) {
      const since = worker.liveness?.absentSinceMs;
      if (typeof since !== 'number' || typeof worker.workerId !== 'string') continue;
      const id = `orc-absent:${worker.workerId}:${since}`;
      const name = worker.displayName || worker.name || 'A worker';
      const why = typeof worker.livenessText === 'string' && worker.livenessText ? worker.livenessText : 'no executor of its kind is connected';
      wanted.set(id, { id, workerId: worker.workerId, title: `Nothing runs ${name}`, message: `${why}. Start its executor, then it goes on by itself.` });
    }
  }
  return changes(wanted, shown, 'orc-absent:');
}

/** What to show (wanted, not shown yet) and to clear (shown with `prefix`, no longer wanted). */
function changes(wanted, shown, prefix) {
  return {
    show: [...wanted.values()].filter((n) => !shown.has(n.id)),
    clear: [...shown].filter((id) => id.startsWith(prefix) && !wanted.has(id)),
  };
}
