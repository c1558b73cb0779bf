// The extension's watchdog (issue 19, spec 000 §12.0): the browser half of the dead-man
// fallback. It notices what the daemon cannot (the daemon has been unreachable for long
// while managed tabs exist; every managed page has shown an error for long) and says so to
// the person: a badge on the toolbar button and at most one browser notification per
// episode. It only reports: it never produces a command, a message to the daemon or a
// submission, and nothing it returns can make a page type (spec 000 §12.1: the extension
// is not the scheduler; only the engine decides recoveries).
//
// A pure function of (state, now, sight, afterMs): `watch` returns the next state and what
// to show; the background stores the state in `storage.session` (so a stopped service
// worker does not forget an episode) and performs the output. Same inputs, same outputs.
//
// sight: {connection: {status, detail?}, pages: [{workerId, state, errorKind?, untilMs?}]}
//   connection  the executor's connection status (`live` is the only reachable one)
//   pages       one entry per managed tab: its last observed classification (state null
//               when nothing was observed yet)
// output: {state, badge: {text, color, title}, show: [{id, title, message}], clear: [id], wakeAtMs}
//   badge       text '' (and title null: the default) when nothing is wrong, else '!'
//   show/clear  notifications to raise / take down (ids `orc-watchdog:*`)
//   wakeAtMs    when to call `watch` again even if nothing changes (a threshold), or null

/** How long a condition lasts before the badge and the notification, in milliseconds (the `watchdogAfterMs` setting's default). */
export const WATCHDOG_AFTER_MS_DEFAULT = 300_000;
/** The `watchdogAfterMs` setting's bounds, in milliseconds. */
export const WATCHDOG_AFTER_MS_RANGE = [1_000, 86_400_000];
/**
 * Time between two observations past which the time in between is not counted, in
 * milliseconds: the background looks at least every wake alarm (30 s), so a longer gap is a
 * sleeping computer or a stopped browser, which proves nothing about the daemon.
 */
export const OBSERVATION_GAP_MS_MAX = 120_000;
/** A stored state whose last observation is this much older than the newest is saved again, in milliseconds. */
export const WATCHDOG_SAVE_MS = 15_000;

export const NOTICE_DAEMON = 'orc-watchdog:daemon';
export const NOTICE_PAGES = 'orc-watchdog:pages';
const BADGE_COLOR = '#B45309';

/**
 * The state before anything was seen: when each condition began (null: it does not hold)
 * and whether its episode fired (badge shown, notification raised once).
 */
export function initialWatchdog() {
  return { seenAtMs: null, offlineSinceMs: null, managedSinceMs: null, erroringSinceMs: null, daemonFired: false, pagesFired: false };
}

/** A stored state if it is well-formed, else the initial one (a damaged record forgets nothing that matters). */
export function restoreWatchdog(stored) {
  const time = (v) => v === null || Number.isSafeInteger(v);
  const ok = stored && typeof stored === 'object'
    && ['seenAtMs', 'offlineSinceMs', 'managedSinceMs', 'erroringSinceMs'].every((k) => time(stored[k]))
    && typeof stored.daemonFired === 'boolean' && typeof stored.pagesFired === 'boolean';
  if (!ok) return initialWatchdog();
  const { seenAtMs, offlineSinceMs, managedSinceMs, erroringSinceMs, daemonFired, pagesFired } = stored;
  return { seenAtMs, offlineSinceMs, managedSinceMs, erroringSinceMs, daemonFired, pagesFired };
}

/** Whether `next` should be stored over `saved`: an episode changed, or the stored observation time grew stale. */
export function worthSaving(saved, next) {
  if (!saved || saved.seenAtMs === null) return true;
  const changed = Object.keys(next).some((k) => k !== 'seenAtMs' && saved[k] !== next[k]);
  return changed || next.seenAtMs - saved.seenAtMs >= WATCHDOG_SAVE_MS;
}

/** One observation: the next state and what to show (see the header). */
export function watch(state, now, sight, afterMs) {
  const pages = Array.isArray(sight?.pages) ? sight.pages : [];
  const status = sight?.connection?.status ?? 'offline';
  // After a gap (or a clock that went back) a condition not yet reported is timed from now;
  // one already reported keeps its start (the person was told; it is the same episode).
  const gap = state.seenAtMs === null || now < state.seenAtMs || now - state.seenAtMs > OBSERVATION_GAP_MS_MAX;
  const since = (holds, was, fired) => (holds ? (was !== null && (!gap || fired) ? was : now) : null);
  const offlineSinceMs = since(status !== 'live', state.offlineSinceMs, state.daemonFired);
  const managedSinceMs = since(pages.length > 0, state.managedSinceMs, state.daemonFired);
  const erroring = pages.length > 0 && pages.every((p) => stuck(p, now));
  const erroringSinceMs = since(erroring, state.erroringSinceMs, state.pagesFired);

  const daemonSinceMs = offlineSinceMs !== null && managedSinceMs !== null ? Math.max(offlineSinceMs, managedSinceMs) : null;
  const daemonFired = daemonSinceMs !== null && (state.daemonFired || now - daemonSinceMs >= afterMs);
  const pagesFired = erroringSinceMs !== null && (state.pagesFired || now - erroringSinceMs >= afterMs);
  const next = { seenAtMs: now, offlineSinceMs, managedSinceMs, erroringSinceMs, daemonFired, pagesFired };

  const daemon = daemonFired ? daemonNotice(status, now - offlineSinceMs, pages.length) : null;
  const errors = pagesFired ? pagesNotice(pages, now - erroringSinceMs) : null;
  const show = [];
  const clear = [];
  if (daemonFired && !state.daemonFired) show.push(daemon);
  if (!daemonFired && state.daemonFired) clear.push(NOTICE_DAEMON);
  if (pagesFired && !state.pagesFired) show.push(errors);
  if (!pagesFired && state.pagesFired) clear.push(NOTICE_PAGES);

  const lines = [daemon, errors].filter(Boolean).map((n) => `${n.title}: ${n.message}`);
  const badge = lines.length ? { text: '!', color: BADGE_COLOR, title: lines.join('\n\n') } : { text: '', color: null, title: null };
  const deadlines = [];
  if (daemonSinceMs !== null && !daemonFired) deadlines.push(daemonSinceMs + afterMs);
  if (erroringSinceMs !== null && !pagesFired) deadlines.push(erroringSinceMs + afterMs);
  return { state: next, badge, show, clear, wakeAtMs: deadlines.length ? Math.min(...deadlines) : null };
}

/**
 * A page counts as stuck when its last classification is an error, except one that names
 * the time it lifts (a usage or rate limit with a reset time) until that time: the engine
 * holds its workers until then, and that is waiting, not a dead page.
 */
function stuck(page, now) {
  if (page?.state !== 'error') return false;
  return !(Number.isSafeInteger(page.untilMs) && page.untilMs > now);
}

function daemonNotice(status, forMs, tabs) {
  const managed = tabs === 1 ? '1 ChatGPT tab is managed' : `${tabs} ChatGPT tabs are managed`;
  const duration = durationText(forMs);
  if (status === 'unauthorized') {
    return {
      id: NOTICE_DAEMON,
      title: 'Orchestrator daemon refuses this extension',
      message: `The orchestrator daemon has refused this extension's executor token for ${duration} while ${managed}. `
        + 'Nothing is typed until it is accepted. Paste the executor token from the daemon\'s data directory '
        + '(executor-token) in the extension\'s Settings, then check `orchestrator doctor`.',
    };
  }
  if (status === 'token_missing') {
    return {
      id: NOTICE_DAEMON,
      title: 'Orchestrator daemon not connected',
      message: `No executor token is set, so the extension has not reached the orchestrator daemon for ${duration} while ${managed}. `
        + 'Nothing is typed until it is connected. Paste the executor token from the daemon\'s data directory '
        + '(executor-token) in the extension\'s Settings.',
    };
  }
  return {
    id: NOTICE_DAEMON,
    title: 'Orchestrator daemon unreachable',
    message: `The orchestrator daemon has been unreachable for ${duration} while ${managed}. `
      + 'Nothing is typed until it is back. Check `orchestrator doctor`.',
  };
}

function pagesNotice(pages, forMs) {
  const kinds = new Map();
  for (const p of pages) {
    const kind = (p.errorKind ?? 'error').replaceAll('_', ' ');
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const list = [...kinds].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([kind, n]) => `${kind}: ${n}`).join(', ');
  const which = pages.length === 1 ? 'The managed ChatGPT tab has' : `All ${pages.length} managed ChatGPT tabs have`;
  return {
    id: NOTICE_PAGES,
    title: 'Every managed ChatGPT tab shows an error',
    message: `${which} shown an error for ${durationText(forMs)} (${list}). `
      + 'The extension does not retry or type on its own: the orchestrator daemon decides what happens next. '
      + 'Look at the tabs, and at the run in the dashboard.',
  };
}

/** "45 s", "12 min", "3 h 5 min". */
export function durationText(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
