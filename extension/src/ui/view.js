// Pure view logic for the operator surfaces (popup, overlay, dashboard): the daemon's
// operator.summary and the background's connection state in, plain JSON view models out.
// No DOM, no chrome/browser, no clock: time is the `nowMs` argument. Raw ids (workerId,
// runId, conversationUrl) travel only in fields of those names, for actions and links;
// every label a person reads is built from names, words and numbers.
export { timelineView, clockLabel, REASONS, OUTCOMES } from './timeline-model.js';
export { recentEvents, eventText } from './event-text.js';
export { absentNotifications, approvalNotifications, stoppedNotifications, unknownPageNotifications } from './notices.js';
export { cliView, CLI_KINDS, approvalRequestView } from './executor-view.js';
import { approvalText } from './notices.js';
import { PAGE_SHAPE, PAGE_UNKNOWN, pageFailedClosed, pageShapeOffer, withPageNotes } from './page-view.js';
export { PAGE_SHAPE, PAGE_UNKNOWN, pageFailedClosed, pageShapeOffer, withPageNotes } from './page-view.js';
import { approvalRequestView, cliView, linkableConversation } from './executor-view.js';
import { recentEvents } from './event-text.js';

/**
 * The status words of spec 000 §17.1, with a glyph so a status never depends on colour.
 * `tone` picks the colour family in CSS; `attention` marks what a person must look at.
 */
export const STATUSES = {
  working: { key: 'working', label: 'Working', glyph: '●', tone: 'active' },
  resuming: { key: 'resuming', label: 'Resuming', glyph: '↻', tone: 'active' },
  needs_you: { key: 'needs_you', label: 'Needs you', glyph: '!', tone: 'attention', attention: true },
  waiting: { key: 'waiting', label: 'Waiting', glyph: '…', tone: 'quiet' },
  paused: { key: 'paused', label: 'Paused', glyph: '‖', tone: 'quiet' },
  stalled: { key: 'stalled', label: 'Stalled', glyph: '⚠', tone: 'attention', attention: true },
  // Nothing carries it: its executor is gone, or none of its kind is connected (issue 29).
  offline: { key: 'offline', label: 'Executor offline', glyph: '⊘', tone: 'attention', attention: true },
  complete: { key: 'complete', label: 'Complete', glyph: '✓', tone: 'done' },
  failed: { key: 'failed', label: 'Failed', glyph: '✕', tone: 'bad' },
  stopped: { key: 'stopped', label: 'Stopped', glyph: '■', tone: 'done' },
  unknown: { key: 'unknown', label: 'Unknown', glyph: '?', tone: 'quiet' },
};

const TERMINAL = new Set(['complete', 'failed', 'stopped']);

/**
 * The status word of a summary worker. The mapping, first match wins:
 *
 * | disposition          | other facts                               | status    |
 * |----------------------|-------------------------------------------|-----------|
 * | completed            |                                           | Complete  |
 * | failed               |                                           | Failed    |
 * | cancelled            |                                           | Stopped   |
 * | awaiting_human       |                                           | Needs you |
 * | awaiting_dependency  |                                           | Waiting   |
 * | paused               | stall = paused                            | Stalled   |
 * | paused               | pauseReason = account_check, foreign_turn | Needs you |
 * | paused               | otherwise                                 | Paused    |
 * | running, awaiting_execution | liveness: its executor offline, or none of its kind connected | Executor offline |
 * | running              | conversationState = generating            | Working   |
 * | running              | otherwise (a continuation is in flight)   | Resuming  |
 * | awaiting_execution   | a usage or rate limit holds it (`hold`)   | Waiting   |
 * | awaiting_execution   | no attempt and no conversation yet        | Waiting   |
 * | awaiting_execution   | autoResume and not pauseAfterTurn         | Resuming  |
 * | awaiting_execution   | otherwise (nothing will start by itself)  | Paused    |
 * | anything else        | (a newer daemon's disposition)            | Unknown   |
 *
 * Before all of these, an unfinished worker whose managed page the extension does not
 * recognize (`pageUnknown`, the extension's own reading: withPageNotes) is Needs you: nothing
 * is typed there until a person has looked.
 *
 * `note` qualifies the word without changing it: who carries it when that is the news (the
 * daemon's `livenessText`: "executor offline since 03:12 UTC ...", "CLI retrying: ..."), a
 * pending pause after the turn, a stall warning, a paused worker whose turn (e.g. a continue-now) is still generating, Auto Resume
 * being off, a page error.
 */
export function workerStatus(worker) {
  const w = worker ?? {};
  const status = statusOf(w);
  return { ...status, note: noteOf(w, status.key), terminal: TERMINAL.has(status.key) };
}

function statusOf(w) {
  if (w.pageUnknown && !['completed', 'failed', 'cancelled'].includes(w.disposition)) return STATUSES.needs_you;
  switch (w.disposition) {
    case 'completed': return STATUSES.complete;
    case 'failed': return STATUSES.failed;
    case 'cancelled': return STATUSES.stopped;
    case 'awaiting_human': return STATUSES.needs_you;
    case 'awaiting_dependency': return STATUSES.waiting;
    case 'paused':
      if (w.stall === 'paused') return STATUSES.stalled;
      return LOOK_FIRST.has(w.pauseReason) ? STATUSES.needs_you : STATUSES.paused;
    case 'running':
      if (uncarried(w)) return STATUSES.offline;
      return w.conversationState === 'generating' ? STATUSES.working : STATUSES.resuming;
    case 'awaiting_execution':
      if (orphaned(w)) return STATUSES.needs_you;
      if (uncarried(w)) return STATUSES.offline;
      if (TIMED_HOLDS.has(w.hold?.reason)) return STATUSES.waiting;
      // A /root without a conversation waits for one (attached, or opened by recovery).
      if (!w.attempts && !w.conversationUrl) return STATUSES.waiting;
      return w.autoResume && !w.pauseAfterTurn ? STATUSES.resuming : STATUSES.paused;
    default: return STATUSES.unknown;
  }
}

/**
 * Nothing carries the worker (the summary's `liveness`): the executor holding its
 * conversation is offline, or none of its kind is connected to take its next turn.
 */
function uncarried(w) {
  const live = w.liveness;
  if (!live || typeof live !== 'object') return false;
  return live.state === 'offline' || (live.state === 'unassigned' && live.capableExecutors === 0);
}

function noteOf(w, key) {
  if (TERMINAL.has(key)) return null;
  if (key === 'offline' || (key === 'working' && w.liveness?.retry)) return livenessText(w);
  if (w.pauseAfterTurn && key !== 'stalled') return 'Pauses after this turn';
  if (key === 'stalled') return 'No durable progress';
  if (w.stall === 'warned') return 'Appears stuck';
  if (key === 'paused' && w.conversationState === 'generating') return 'Finishing its current turn';
  if (w.pageUnknown) return PAGE_UNKNOWN.note;
  if (w.hold?.reason in HOLDS) return holdView(w, null).label;
  if (w.pauseReason in PAUSES) return PAUSES[w.pauseReason];
  if (pageFailedClosed(w)) return PAGE_SHAPE.note;
  if (w.conversationState === 'error') return cliView(w) ? `${cliView(w).kindLabel} session stopped on an error` : 'ChatGPT shows an error';
  if (w.conversationState === 'closed') return 'Conversation closed';
  if (w.disposition === 'awaiting_execution' && !w.autoResume) return 'Auto Resume off';
  if (key === 'waiting' && w.disposition === 'awaiting_execution') return 'No conversation yet';
  return null;
}

/**
 * What holds a worker without a pause (the summary's `hold`): a limit of the browser's
 * ChatGPT account until its reset time, or a dialog over its conversation. Never worked
 * around: the daemon types nothing meanwhile and the hold lifts by itself.
 */
const HOLDS = {
  usage_limit: 'ChatGPT usage limit',
  rate_limited: 'ChatGPT asked to slow down',
  blocked_by_dialog: 'A dialog covers the conversation',
  awaiting_approval: 'ChatGPT asks you to approve a tool call',
  // The daemon's hold on a page its executor does not recognize (issue 27).
  page_unrecognized: PAGE_UNKNOWN.note,
};
const TIMED_HOLDS = new Set(['usage_limit', 'rate_limited']);
/** Pauses a person must look into before Resume: a check ChatGPT wants, a CLI turn nobody here started. */
const LOOK_FIRST = new Set(['account_check', 'foreign_turn']);
const CLI_HOLDS = { usage_limit: 'usage limit', rate_limited: 'rate limit' };

/** Pauses a page state caused (the summary's `pauseReason`), as people read them. */
const PAUSES = {
  usage_limit: 'Usage limit with no reset time',
  account_check: 'ChatGPT asked for a check',
  host_ui_changed: 'ChatGPT page not recognised',
  ambiguous_submission: 'Delivery unknown: check the conversation',
  delivery_failing: 'Deliveries keep failing',
  app_unavailable: 'The conversation lost the app: recover into a new conversation',
  app_not_selected: 'The app could not be chosen: check its name in Settings, then resume',
  // A CLI session ran a turn nobody here started (a hook, a scheduled task, a person).
  foreign_turn: 'A turn the orchestrator did not start ran in this session',
};

/**
 * The worker's hold for people, or null: `{reason, label, untilMs, text}`. A timed hold says
 * when it lifts (seen at `nowMs`; null: not said); a dialog names its heading and what to do.
 */
export function holdView(worker, nowMs) {
  const hold = worker?.hold;
  if (!hold || !(hold.reason in HOLDS)) return null;
  // A CLI worker's limit is its CLI's account (Codex's, Claude's), not ChatGPT's.
  const cli = cliView(worker);
  const label = cli && TIMED_HOLDS.has(hold.reason) ? `${cli.kindLabel} ${CLI_HOLDS[hold.reason]}` : HOLDS[hold.reason];
  const untilMs = typeof hold.untilMs === 'number' ? hold.untilMs : null;
  let text;
  if (hold.reason === 'page_unrecognized') {
    text = `${hold.detail ?? label}. ${PAGE_UNKNOWN.ask}`;
  } else if (hold.reason === 'blocked_by_dialog') {
    text = `${label}${hold.detail ? `: ${hold.detail}` : ''}. Close it in the tab; nothing is typed meanwhile.`;
  } else if (hold.reason === 'awaiting_approval' && approvalRequestView(worker)) {
    // A CLI's request: answered from the dashboard (Approve / Decline).
    text = approvalRequestView(worker).text;
  } else if (hold.reason === 'awaiting_approval') {
    // The person's decision: the extension never answers the card.
    text = approvalText(hold.detail);
  } else if (untilMs === null || nowMs === null) {
    text = `${label}: waiting for it to lift`;
  } else {
    text = untilMs > nowMs ? `${label}: resumes in ${formatDuration(untilMs - nowMs)}` : `${label}: resumes once the page allows`;
  }
  return { reason: hold.reason, label, untilMs, detail: hold.detail ?? null, text };
}

/**
 * Whether the worker's conversation was closed and nothing will open another by itself:
 * a person recovers it into a fresh conversation or attaches one.
 */
function orphaned(w) {
  return w.disposition === 'awaiting_execution' && w.conversationState === 'closed';
}

/** What a person is asked to do, or null: an open question, a dialog, an approval, a check ChatGPT wants, a page not recognized. */
function needsYouText(w) {
  if (w.pageUnknown) return `${w.pageUnknown}. ${PAGE_UNKNOWN.ask}`;
  if (w.needsYou) return w.needsYou;
  if (orphaned(w)) return 'Its conversation was closed. Recover it into a new conversation (the run and its other workers are untouched), or attach another conversation to it.';
  if (['blocked_by_dialog', 'awaiting_approval', 'page_unrecognized'].includes(w.hold?.reason)) return holdView(w, null).text;
  if (w.pauseReason === 'account_check') return w.pauseDetail ?? PAUSES.account_check;
  if (w.pauseReason === 'foreign_turn') return w.pauseDetail ?? `${PAUSES.foreign_turn}: look at it, then resume.`;
  return null;
}

/** Whether the worker is unfinished (counts as active). */
export function isActive(worker) {
  return !workerStatus(worker).terminal;
}

const SOURCES = {
  run_default: 'Run default',
  worker_override: 'Worker override',
  engine_default: 'Default',
};

/** The worker's effective Auto Resume and where it comes from. */
export function policyView(worker) {
  const on = Boolean(worker?.autoResume);
  const source = worker?.policySource ?? 'engine_default';
  return {
    autoResume: on,
    text: on ? 'Auto Resume on' : 'Auto Resume off',
    source,
    sourceLabel: SOURCES[source] ?? 'Default',
    isOverride: source === 'worker_override',
  };
}

const CONNECTIONS = {
  live: { label: 'Live', tone: 'ok', glyph: '●', hint: null },
  connecting: { label: 'Reconnecting', tone: 'warn', glyph: '↻', hint: 'Trying to reach the orchestrator daemon.' },
  token_missing: { label: 'Token missing', tone: 'bad', glyph: '!', hint: 'Pair with the daemon, or paste the executor token, in Settings.' },
  unauthorized: { label: 'Token rejected', tone: 'bad', glyph: '!', hint: 'The daemon refused the executor token; check it in Settings.' },
  offline: { label: 'Offline', tone: 'bad', glyph: '○', hint: 'The orchestrator daemon is not reachable.' },
  no_leader: { label: 'No leader', tone: 'bad', glyph: '○', hint: 'No daemon answered as the leader.' },
};

/**
 * The connection badge: `{status, live, label, tone, glyph, hint}`. When no daemon leads,
 * the hint says what each daemon address said (the executor's `detail`).
 */
export function connectionView(connection) {
  const status = connection?.status in CONNECTIONS ? connection.status : 'offline';
  const view = { status, live: status === 'live', ...CONNECTIONS[status] };
  if (status === 'no_leader' && typeof connection.detail === 'string' && connection.detail !== '') {
    view.hint = `No daemon answered as the leader: ${connection.detail}. Trying again.`;
  }
  return view;
}

/** A duration for people: `45s`, `18m`, `2h 5m`, `3d 4h`. */
export function formatDuration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** How long ago `atMs` was, seen at `nowMs`: `just now`, `12s ago`, `2h 5m ago`; null without a time. */
export function formatAge(atMs, nowMs) {
  if (typeof atMs !== 'number') return null;
  const ms = nowMs - atMs;
  return ms < 5000 ? 'just now' : `${formatDuration(ms)} ago`;
}

/** A count with its noun in the right number: `1 attempt`, `3 attempts`, `0 workers`. */
export function countText(n, noun, plural = `${noun}s`) {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** `Attempt 6`, or `Not started` before the first attempt. */
export function attemptText(attempts) {
  return attempts > 0 ? `Attempt ${attempts}` : 'Not started';
}

/** `no auto resumes`, `1 auto resume`, `5 auto resumes`. */
export function resumesText(count) {
  if (!(count > 0)) return 'no auto resumes';
  return count === 1 ? '1 auto resume' : `${count} auto resumes`;
}

/** `progress 2m ago` or `no progress yet`. */
export function progressText(lastProgressAtMs, nowMs) {
  const age = formatAge(lastProgressAtMs, nowMs);
  return age ? `progress ${age}` : 'no progress yet';
}

/** The collapsed overlay pill: `Working · Attempt 4 · Auto Resume`, `Needs you`, `Paused`. */
export function pillText(worker) {
  const status = workerStatus(worker);
  const parts = [status.label];
  if (['working', 'resuming', 'stalled'].includes(status.key) && worker.attempts > 0) {
    parts.push(`Attempt ${worker.attempts}`);
  }
  if (status.key === 'working' && worker.pauseAfterTurn) parts.push('Pausing after turn');
  else if (['working', 'resuming'].includes(status.key) && worker.autoResume) parts.push('Auto Resume');
  return parts.join(' · ');
}

/** Why the worker is not progressing by itself, or null (`nowMs` dates a hold's reset). */
export function blockReason(worker, nowMs = null) {
  const status = workerStatus(worker);
  const needs = needsYouText(worker);
  const hold = holdView(worker, nowMs);
  switch (status.key) {
    case 'needs_you': return needs ? `Needs you: ${needs}` : 'Needs you';
    case 'waiting':
      if (hold) return hold.text;
      return worker.disposition === 'awaiting_dependency' ? 'Waiting for a dependency' : 'Waiting';
    case 'stalled': return 'Paused: no durable progress';
    case 'paused':
      if (status.note === 'Auto Resume off') return 'Auto Resume off';
      return worker.pauseDetail ? `Paused: ${worker.pauseDetail}` : 'Paused';
    default:
      if (cliView(worker) && worker.conversationState === 'error') return status.note;
      return ['ChatGPT shows an error', PAGE_SHAPE.note, 'Conversation closed'].includes(status.note) ? status.note : null;
  }
}

/** An operator button: what it says and the daemon action it triggers (the words of docs/operator.md). */
const ACTIONS = {
  pause: { action: 'pause_after_turn', label: 'Pause', hint: 'Pause after the current turn' },
  resume: { action: 'resume', label: 'Resume', hint: 'Clear the pause and let Auto Resume decide' },
  // After Pause on a running turn: the pause is pending, and Resume takes it back.
  unpause: { action: 'resume', label: 'Resume', hint: 'Cancel the pause after this turn: the worker goes on' },
  continue_now: { action: 'continue_now', label: 'Continue now', hint: 'Start one attempt now, or right after the running turn' },
  continue_anyway: { action: 'continue_anyway', label: 'Continue anyway', hint: 'Acknowledge the stall and start one attempt' },
  recover: { action: 'continue_now', label: 'Recover in a new conversation', hint: 'Open a fresh ChatGPT conversation with the recovery prompt; the run and its other workers are untouched' },
  release: { action: 'release_dependency', label: 'Release', hint: 'End its wait for another worker: it goes on now' },
  stop_worker: {
    action: 'stop_worker', label: 'Stop worker', destructive: true,
    hint: 'End this worker for good: no further attempts',
  },
  // The run's /root cannot be stopped alone: its lanes would lose their coordinator.
  stop_run: {
    action: 'stop_run', label: 'Stop run', destructive: true,
    hint: 'End the whole run for good: every unfinished worker, /root included',
  },
};

/** Whether the summary worker is its run's `/root`. */
export function isRoot(worker) {
  return worker?.name === '/root';
}

/**
 * The worker buttons a status offers, in display order (the destructive one last: Stop
 * worker, or Stop run on the run's /root). Each carries the `ui.action` message it sends
 * (`message`) and, when destructive, the confirmation's words (`confirm`). `context`:
 * `{runId, runTitle, waitedOnBy}` (the run's id and title, the names of the workers waiting
 * for this one); a /root without its run's id offers no Stop.
 */
export function workerActions(worker, context = {}) {
  const status = workerStatus(worker);
  const keys = {
    working: ['pause', 'continue_now'],
    resuming: ['pause'],
    needs_you: ['pause'],
    waiting: ['pause'],
    paused: ['resume', 'continue_now'],
    stalled: ['continue_anyway', 'resume'],
    unknown: ['pause'],
  }[status.key] ?? [];
  // Auto Resume off is not a pause: there is nothing to resume, only Continue now.
  if (status.note === 'Auto Resume off') keys.splice(0, 1);
  // Paused after this turn already: the button takes the pending pause back.
  if (worker.pauseAfterTurn && keys[0] === 'pause') keys.splice(0, 1, 'unpause');
  // A wait for another worker: Release ends it.
  if (worker.disposition === 'awaiting_dependency' && !status.terminal) keys.unshift('release');
  // A check ChatGPT asked for is a pause a person ends, once they have looked.
  if (status.key === 'needs_you' && worker.disposition === 'paused') keys.splice(0, keys.length, 'resume');
  // A conversation that lost the app is left: Continue anyway recovers into a fresh one.
  if (worker.disposition === 'paused' && worker.pauseReason === 'app_unavailable') keys.splice(0, keys.length, 'continue_anyway', 'resume');
  if (orphaned(worker)) keys.splice(0, keys.length, 'recover');
  const runId = context.runId ?? worker.runId ?? null;
  if (!status.terminal && !isRoot(worker)) keys.push('stop_worker');
  else if (!status.terminal && runId) keys.push('stop_run');
  return keys.map((k) => {
    const a = { key: k, ...ACTIONS[k] };
    a.message = k === 'stop_run' ? { action: a.action, runId } : { action: a.action, workerId: worker.workerId };
    if (a.destructive) a.confirm = stopConfirm(k, worker, { ...context, runId });
    return a;
  });
}

/** The confirmation of Stop worker or Stop run: what ends, and who waits for it. */
function stopConfirm(key, worker, { runTitle, waitedOnBy }) {
  if (key === 'stop_run') return stopRunConfirm(runTitle || worker?.runTitle || '');
  const name = worker.displayName || worker.name || 'this worker';
  const waiters = Array.isArray(waitedOnBy) ? waitedOnBy : worker.waitedOnBy ?? [];
  const waits = waiters.length === 0 ? ''
    : ` ${listText(waiters)} ${waiters.length === 1 ? 'waits' : 'wait'} for it and ${waiters.length === 1 ? 'is' : 'are'} told when it ends.`;
  return {
    title: `Stop ${name}?`,
    body: `The worker is cancelled and never resumed again. To stop for a while, use Pause.${waits}`,
    confirmLabel: 'Stop worker',
  };
}

/** The confirmation of Stop run (the run card's and /root's), naming the run. */
export function stopRunConfirm(runTitle) {
  return {
    title: runTitle ? `Stop the run "${runTitle}"?` : 'Stop this run?',
    body: 'Every unfinished worker of this run is cancelled, /root included. This cannot be undone; to stop for a while, use Pause all after current turns.',
    confirmLabel: 'Stop run',
  };
}

/** `a`, `a and b`, `a, b and c`. */
function listText(items) {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** `Waiting for <name>` when the worker waits for another of its run (the summary's `waitsFor`), else null. */
function waitingFor(worker, run) {
  if (worker.disposition !== 'awaiting_dependency' || !worker.waitsFor) return null;
  const other = (run?.workers ?? []).find((w) => w.workerId === worker.waitsFor);
  return other ? `Waiting for ${other.displayName || other.name}` : null;
}

/** The names of the run's workers waiting for `worker` (a dependency wait on it). */
function waitersOf(worker, run) {
  return (run?.workers ?? [])
    .filter((w) => w.disposition === 'awaiting_dependency' && w.waitsFor === worker?.workerId)
    .map((w) => w.displayName || w.name);
}

/**
 * Who carries the worker, in the daemon's words (`livenessText`: "carried by browser
 * chrome-1, connected since 02:40 UTC", "executor offline since 03:12 UTC (Codex CLI
 * cli-host): nothing runs it until it is back", "CLI retrying: ..."), or null.
 */
export function livenessText(worker) {
  const text = worker?.livenessText;
  return typeof text === 'string' && text.trim() ? text.trim() : null;
}

/** One worker as every surface shows it. */
export function workerRow(worker, run, nowMs) {
  const hold = holdView(worker, nowMs);
  const plain = workerStatus(worker);
  // A limit's note says when it lifts (the only note that needs the time).
  const status = hold && TIMED_HOLDS.has(hold.reason) && plain.note === hold.label ? { ...plain, note: hold.text } : plain;
  return {
    workerId: worker.workerId,
    runId: run?.runId ?? worker.runId ?? null,
    runTitle: run?.taskName ?? worker.runTitle ?? '',
    title: worker.displayName || worker.name || 'Unnamed worker',
    name: worker.name ?? '',
    status,
    attempts: worker.attempts ?? 0,
    autoResumes: worker.autoResumes ?? 0,
    attemptText: attemptText(worker.attempts),
    progressText: progressText(worker.lastProgressAtMs, nowMs),
    lastProgressAtMs: worker.lastProgressAtMs ?? null,
    // What changes when an attempt opens or closes without touching the numbers above
    // (the dashboard refetches a worker's history when any of these change).
    conversationState: worker.conversationState ?? null,
    lastEventAtMs: latestEventAt(worker.recentEvents),
    detail: [attemptText(worker.attempts), resumesText(worker.autoResumes), progressText(worker.lastProgressAtMs, nowMs)].join(' · '),
    policy: policyView(worker),
    needsYou: status.key === 'needs_you' ? needsYouText(worker) : null,
    // The answers the worker offered with its question (a person may still write another).
    choices: status.key === 'needs_you' && Array.isArray(worker.needsYouChoices) ? worker.needsYouChoices : [],
    // A question the worker asked is answered in words; a dialog or a check ChatGPT wants is
    // dealt with in the tab (and a check's pause then ended with Resume).
    answerable: status.key === 'needs_you' && worker.disposition === 'awaiting_human' && !worker.hold,
    hold,
    // A CLI's approval request: the Needs you card offers Approve and Decline.
    approval: status.key === 'needs_you' ? approvalRequestView(worker) : null,
    blockReason: waitingFor(worker, run) ?? blockReason(worker, nowMs),
    // A worker waiting for a person or a dependency is not executing: its card is `Needs you`, not a stall.
    stallWarning: (worker.stall === 'warned' || worker.stall === 'paused') && !status.terminal
      && !['needs_you', 'waiting'].includes(status.key),
    // Only a ChatGPT conversation is a link; a CLI worker shows `cli` (kind, session, directory).
    conversationUrl: linkableConversation(worker),
    // Who carries it (its executor, connected or not, since when), for every unfinished worker.
    carrier: status.terminal ? null : livenessText(worker),
    cli: cliView(worker),
    actions: workerActions(worker, {
      runId: run?.runId ?? worker.runId ?? null,
      runTitle: run?.taskName ?? worker.runTitle ?? '',
      waitedOnBy: run ? waitersOf(worker, run) : worker.waitedOnByNames ?? [],
    }),
    pageShape: pageShapeOffer(worker),
  };
}

function latestEventAt(events) {
  const times = (Array.isArray(events) ? events : []).map((e) => e?.atMs).filter((t) => typeof t === 'number');
  return times.length ? Math.max(...times) : null;
}

const ATTENTION_ORDER = ['needs_you', 'stalled', 'working', 'resuming', 'paused', 'waiting', 'unknown', 'failed', 'stopped', 'complete'];

/** Rows with what needs a person first, then by hierarchical name. */
export function byAttention(rows) {
  return [...rows].sort((a, b) => ATTENTION_ORDER.indexOf(a.status.key) - ATTENTION_ORDER.indexOf(b.status.key)
    || a.name.localeCompare(b.name));
}

function allWorkers(summary) {
  return (summary?.runs ?? []).flatMap((run) => (run.workers ?? []).map((worker) => ({ run, worker })));
}

/** Counts over a list of summary workers: active (unfinished) and per status. */
export function counts(workers) {
  const c = { active: 0, working: 0, resuming: 0, needsYou: 0, waiting: 0, paused: 0, stalled: 0 };
  for (const w of workers) {
    const key = workerStatus(w).key;
    if (!TERMINAL.has(key)) c.active += 1;
    if (key === 'working') c.working += 1;
    if (key === 'resuming') c.resuming += 1;
    if (key === 'needs_you') c.needsYou += 1;
    if (key === 'waiting') c.waiting += 1;
    if (key === 'paused') c.paused += 1;
    if (key === 'stalled') c.stalled += 1;
  }
  return c;
}

/** A run's header: title, Auto Resume default and counts. */
function rootOf(run) {
  const root = (run.workers ?? []).find((w) => w.name === '/root');
  return root ? { workerId: root.workerId } : null;
}

function runHeader(run) {
  return {
    runId: run.runId,
    title: run.taskName || 'Untitled run',
    statusLabel: run.status === 'active' ? 'Active' : capitalise(run.status ?? 'unknown'),
    autoResume: Boolean(run.autoResume),
    counts: counts(run.workers ?? []),
    // The dead-man layer found the run stopped: a run-wide Needs you (the daemon's sentence).
    stoppedMoving: run.stoppedMoving?.text ?? null,
    // The run's /root, for the stopped run's action (its id only in a field of that name).
    root: rootOf(run),
  };
}

function capitalise(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * The toolbar popup. `state` is the background's `ui.state` answer; `tabWorkerId` the
 * worker of the active tab (or null). Answers 000 §17.2's five questions: connection,
 * Auto Resume, who is working/resuming/blocked, what needs you, the current tab.
 */
export function popupView(state, tabWorkerId, nowMs) {
  const summary = withPageNotes(state?.summary ?? null, state?.unknownPages);
  const entries = allWorkers(summary);
  const current = entries.find((e) => e.worker.workerId === tabWorkerId) ?? null;
  const runs = (summary?.runs ?? []).map(runHeader);
  const currentRunId = current?.run.runId ?? null;
  runs.sort((a, b) => (b.runId === currentRunId) - (a.runId === currentRunId));
  const rows = byAttention(entries.filter((e) => isActive(e.worker)).map((e) => workerRow(e.worker, e.run, nowMs)));
  return {
    connection: connectionView(state?.connection),
    runs,
    counts: counts(entries.map((e) => e.worker)),
    rows,
    current: current ? workerRow(current.worker, current.run, nowMs) : null,
    // Finished runs the daemon keeps (the dashboard's Finished lists them).
    finishedCount: finishedRuns(summary).length,
    finishedText: finishedCountText(finishedRuns(summary).length),
    emptyText: emptyText(summary, rows),
  };
}

function emptyText(summary, rows) {
  if (summary === null) return 'No worker state yet.';
  if (!summary.runs?.length) return 'No unfinished runs.';
  return rows.length ? null : 'No active workers.';
}

function finishedRuns(summary) {
  return Array.isArray(summary?.finished) ? summary.finished : [];
}

/** `1 finished run (see the dashboard)`, `3 finished runs (...)`, or null for none. */
export function finishedCountText(count) {
  if (!(count > 0)) return null;
  return `${count} finished ${count === 1 ? 'run' : 'runs'} (see Finished in the dashboard)`;
}

/** The words of the overlay's link from a finished worker's tab to its run in Finished. */
export const FINISHED_LINK_LABEL = 'See the run in Finished';

/** The id of a finished run's card in the dashboard (`dashboard.html#finished-run-3`). */
export function finishedAnchor(runId) {
  return `finished-${runId}`;
}

/**
 * The part after `dashboard.html` a surface may ask the background to open (`ui.open`): `#`
 * and a section's or card's id, or '' for anything else.
 */
export function dashboardHash(hash) {
  return typeof hash === 'string' && /^#[A-Za-z0-9_-]{1,100}$/.test(hash) ? hash : '';
}

/** `Completed`, `Failed`, `Stopped` for a finished run's status. */
const FINISHED_LABELS = { completed: 'Completed', failed: 'Failed', cancelled: 'Stopped' };

/**
 * The dashboard's "Finished": each finished run (newest first) with how it ended (its
 * root's handoff or reason), when, how long it took, and its workers with theirs.
 */
export function finishedView(summary, nowMs) {
  return finishedRuns(summary).map((run) => {
    const lasted = (from, to) => (typeof from === 'number' && from > 0 && typeof to === 'number' ? formatDuration(to - from) : null);
    const workers = (run.workers ?? []).map((w) => {
      const status = workerStatus(w);
      return {
        workerId: w.workerId,
        title: w.displayName || w.name || 'Unnamed worker',
        name: w.name ?? '',
        status,
        outcome: w.outcome ?? null,
        attempts: w.attempts ?? 0,
        detail: [status.label, attemptText(w.attempts), lasted(w.createdAtMs, w.endedAtMs) && `took ${lasted(w.createdAtMs, w.endedAtMs)}`]
          .filter(Boolean).join(' · '),
        conversationUrl: linkableConversation(w),
      };
    }).sort((a, b) => a.name.localeCompare(b.name));
    const attempts = workers.reduce((sum, w) => sum + w.attempts, 0);
    const took = lasted(run.createdAtMs, run.endedAtMs);
    const ended = formatAge(run.endedAtMs, nowMs);
    return {
      runId: run.runId,
      anchor: finishedAnchor(run.runId),
      title: run.taskName || 'Untitled run',
      statusLabel: FINISHED_LABELS[run.status] ?? capitalise(run.status ?? 'unknown'),
      outcome: run.outcome ?? null,
      endedAtMs: run.endedAtMs ?? null,
      detail: [
        FINISHED_LABELS[run.status] ?? capitalise(run.status ?? 'unknown'),
        ended && `ended ${ended}`,
        took && `took ${took}`,
        `${workers.length} ${workers.length === 1 ? 'worker' : 'workers'}`,
        `${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}`,
      ].filter(Boolean).join(' · '),
      workers,
    };
  });
}

/** A stall card: `Worker appears stuck` with `N attempts / no progress for T`. */
export function stallView(row, attempts, nowMs) {
  const quiet = row.lastProgressAtMs === null ? 'no progress yet' : `no progress for ${formatDuration(nowMs - row.lastProgressAtMs)}`;
  const since = Array.isArray(attempts)
    ? attempts.filter((a) => row.lastProgressAtMs === null || a.scheduledAtMs > row.lastProgressAtMs).length
    : null;
  const tried = since === null ? attemptText(row.attempts) : countText(since, 'attempt');
  return {
    title: row.status.key === 'stalled' ? 'Worker paused: appears stuck' : 'Worker appears stuck',
    detail: `${tried} / ${quiet}`,
  };
}

/**
 * The dashboard: every run with its rows, plus the `Needs you` items and stall cards
 * across runs. `attemptsByWorker` (optional) holds fetched worker_attempts lists.
 */
export function dashboardView(state, nowMs, attemptsByWorker = {}) {
  const summary = withPageNotes(state?.summary ?? null, state?.unknownPages);
  const runs = (summary?.runs ?? []).map((run) => ({
    ...runHeader(run),
    rows: (run.workers ?? []).map((w) => workerRow(w, run, nowMs)).sort((a, b) => a.name.localeCompare(b.name)),
  }));
  const rows = runs.flatMap((r) => r.rows);
  return {
    connection: connectionView(state?.connection),
    runs,
    counts: counts(allWorkers(summary).map((e) => e.worker)),
    needsYou: rows.filter((r) => r.status.key === 'needs_you'),
    stoppedRuns: runs.filter((r) => r.stoppedMoving !== null),
    stalls: rows.filter((r) => r.stallWarning)
      .map((r) => ({ row: r, ...stallView(r, attemptsByWorker[r.workerId] ?? null, nowMs) })),
    finished: finishedView(summary, nowMs),
    emptyText: summary === null ? 'No worker state yet.' : runs.length ? null : 'No unfinished runs.',
  };
}

/**
 * The managed-tab overlay's view model, or null to hide it. The background sends it to
 * the tab as `{type: 'overlay.update', view}`. Times stay absolute (`atMs`): the overlay
 * renders ages itself, so they keep ticking between updates. `observation`: the extension's
 * own `{state, errorKind?, detail?}` for the tab's conversation, when the caller has it (an
 * `unknown` with its detail: the page is not recognized).
 */
export function overlayView(summaryWorker, connection, observation = null, nowMs = null) {
  if (!summaryWorker || typeof summaryWorker !== 'object') return null;
  const unknown = observation?.state === 'unknown' && typeof observation.detail === 'string' ? observation.detail : null;
  const workerSummary = unknown === null ? summaryWorker : { ...summaryWorker, pageUnknown: unknown };
  const conn = connectionView(connection);
  const row = workerRow(workerSummary, null, nowMs);
  return {
    workerId: row.workerId,
    title: row.title,
    name: row.name,
    status: {
      key: row.status.key, label: row.status.label, glyph: row.status.glyph, tone: row.status.tone, note: row.status.note,
      // A timed hold's note counts down: the overlay writes it again at each render.
      until: row.hold && TIMED_HOLDS.has(row.hold.reason) && row.hold.untilMs !== null && row.status.note === row.hold.text
        ? { label: row.hold.label, untilMs: row.hold.untilMs } : null,
    },
    pill: pillText(workerSummary),
    attemptText: row.attemptText,
    autoResumes: row.autoResumes,
    lastProgressAtMs: row.lastProgressAtMs,
    policyText: `${row.policy.autoResume ? 'On' : 'Off'} · ${row.policy.sourceLabel}`,
    policyOverride: row.policy.isOverride,
    needsYou: row.needsYou,
    answerable: row.answerable,
    // Who carries it (the daemon's words), for the drawer.
    carrier: row.carrier,
    // The answers the worker offered with its question (answered in the dashboard).
    choices: row.choices,
    // A finished worker's tab says how it ended (its handoff, or why it failed or stopped)
    // and links to its run in the dashboard's Finished (the run's outcome, attempts, times).
    finished: row.status.terminal ? {
      label: row.status.label,
      outcome: summaryWorker.outcome ?? null,
      link: row.runId ? { label: FINISHED_LINK_LABEL, hash: `#${finishedAnchor(row.runId)}` } : null,
    } : null,
    // The run stopped moving (the daemon's dead-man layer): said in every tab of it.
    runStopped: typeof workerSummary.runStoppedMoving === 'string' ? workerSummary.runStoppedMoving : null,
    events: recentEvents(workerSummary.recentEvents),
    actions: row.actions.map(({ key, action, label, hint, destructive, message, confirm }) => ({
      key, action, label, hint, destructive: Boolean(destructive), message, confirm: confirm ?? null,
    })),
    connection: { live: conn.live, label: conn.label, hint: conn.hint },
    // The overlay also offers it when its own reading of the page fails closed (it is in the
    // tab: it sees the page before the daemon hears of it).
    pageShape: {
      offered: pageFailedClosed(workerSummary, observation) || unknown !== null, label: PAGE_SHAPE.label, hint: PAGE_SHAPE.hint, note: unknown ?? PAGE_SHAPE.note,
    },
  };
}


/** The message a refused or failed action shows. */
export function actionErrorText(error) {
  const code = error?.code;
  if (code === 'OFFLINE') return 'Not connected to the orchestrator: nothing was changed.';
  if (code === 'TIMEOUT') return 'The orchestrator did not answer in time; the action may still apply.';
  if (code === 'WORKER_TERMINAL') return 'This worker has already finished.';
  if (code === 'CONVERSATION_IN_USE') return 'This conversation already belongs to another worker: open a new chat or another conversation.';
  return error?.message ? `Refused: ${error.message}` : 'The action failed.';
}
