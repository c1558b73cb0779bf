// The sentence a person reads for a continuity event, and a worker's five most recent
// ones: for the overlay's drawer, the dashboard's recent events and the popup. The daemon
// words its summary's events itself; worker_events' event-log items carry no text, so
// they are worded here with a copy of the daemon's sentences (executor-protocol's
// continuity::sentence), checked case by case against docs/protocol/fixtures/rules/sentences.json.

/** Up to five recent continuity events, newest first: `{atMs, text}`. */
export function recentEvents(events) {
  return (Array.isArray(events) ? events : [])
    .filter((e) => typeof e?.atMs === 'number')
    .sort((a, b) => b.atMs - a.atMs)
    .slice(0, 5)
    .map((e) => ({ atMs: e.atMs, text: eventText(e) }));
}

/** What a sentence calls the worker's host, by executor kind. */
const HOSTS = { chatgpt: 'ChatGPT', codex: 'Codex', claude: 'Claude Code' };
/** What a sentence calls an executor of a kind (a browser runs ChatGPT workers). */
const EXECUTOR_NAMES = { chatgpt: 'browser', codex: 'Codex CLI', claude: 'Claude Code CLI' };
/** The longest excerpt of agent-written or page text in a sentence, in characters. */
const EXCERPT_CHARS_MAX = 80;
const MINUTE_MS = 60_000;

const DELIVERY_TIMEOUT = 'Delivery timed out; a fresh continue follows';
const AMBIGUOUS = 'Paused: unsure whether the last prompt was sent';
const APP_UNAVAILABLE = 'Paused: the app is unavailable in this conversation; recover into a new one';
const FOREIGN_TURN = 'A turn the orchestrator did not start ran in this session';

const SIMPLE = {
  'worker.completed': 'Completed',
  'worker.followup': 'New assignment',
  'worker.human_resolved': 'Answer received',
  'worker.dependency_released': 'Dependency released',
  'worker.resumed': 'Resumed',
  'continuation.stall_acknowledged': 'Continued anyway after the stall',
};

/** `execution.scheduled`: what was sent, by reason. */
const SCHEDULED = {
  initial: 'Assignment sent',
  auto_resume: 'Auto resume sent',
  manual_resume: 'Continue now sent',
  followup: 'Follow-up sent',
  recovery: 'Recovery sent to a fresh conversation',
  checkpoint: 'Keepalive checkpoint sent',
  corrective: "Root's correction sent",
};

const STEERING = {
  continue_as_planned: 'Root: continue as planned',
  correct_direction: 'Root asked for a correction',
  change_priority: 'Root changed the priority',
  provide_dependency: 'Root provided a dependency',
  request_evidence: 'Root asked for evidence',
  pause: 'Root asked to pause',
  terminal_reconcile: 'Root asked to reconcile completion',
};

const HOLDS_LIFTED = {
  usage_limit: 'Usage limit over; resuming',
  rate_limited: 'Slow-down over; resuming',
  blocked_by_dialog: 'The dialog is gone; resuming',
  awaiting_approval: 'Approval answered; the turn goes on',
  page_unrecognized: 'The page is recognized again; resuming',
};

/**
 * A person's line for an event. Accepts the summary's `{kind, text}` (the daemon's own
 * words win) and the event log's `{name, atMs, data}` (worker_events), worded for a worker
 * of `executorKind` (`chatgpt`, `codex` or `claude`).
 */
export function eventText(event, executorKind = 'chatgpt') {
  if (typeof event?.text === 'string' && event.text.trim()) return event.text.trim();
  const name = event?.name ?? event?.kind ?? '';
  const data = event?.data && typeof event.data === 'object' ? event.data : {};
  return sentence(name, data, event?.atMs, executorKind) ?? 'Event';
}

/** The daemon's sentence for an event-log item, or null for a name it does not word. */
function sentence(name, data, atMs, executorKind) {
  const host = HOSTS[executorKind] ?? HOSTS.chatgpt;
  const cli = executorKind !== 'chatgpt' && executorKind in HOSTS;
  const hostUiChanged = () => (cli ? `Paused: ${host} did not answer as expected; check the CLI executor's log` : 'Paused: the ChatGPT page changed; check the extension');
  if (name in SIMPLE) return SIMPLE[name];
  switch (name) {
    case 'worker.progress':
      return typeof data.summary === 'string' ? `Progress: ${excerpt(data.summary)}` : 'Progress checkpoint';
    case 'worker.failed':
      return withReason('Failed', data);
    case 'worker.cancelled':
      return withReason('Stopped', data);
    case 'worker.awaiting_human':
      return withReason('Needs you', data);
    case 'worker.awaiting_dependency':
      return withReason('Waiting for a dependency', data);
    case 'worker.dependency_ended':
      return data.outcome === 'failed' ? 'The worker it waited for failed: the wait is over' : 'The worker it waited for was stopped: the wait is over';
    case 'worker.paused':
      if (data.afterCurrentTurn === true) return 'Pauses after the current turn';
      return pausedText(data.reason, host, hostUiChanged);
    case 'worker.held':
      return heldText(data, host, cli);
    case 'worker.hold_lifted':
      return HOLDS_LIFTED[data.reason] ?? 'Resuming';
    case 'continuation.policy_changed':
      return data.mode === 'auto' ? 'Auto resume on' : data.mode === 'manual' ? 'Auto resume off' : 'Auto Resume changed';
    case 'execution.scheduled':
      return scheduledText(data);
    case 'execution.deferred':
      return typeof data.notBeforeMs === 'number' && typeof atMs === 'number'
        ? `Next continuation in ${duration(Math.max(0, data.notBeforeMs - atMs))} (turns are spaced out)`
        : 'Next continuation held back (turns are spaced out)';
    case 'execution.ended':
      return endedText(data.outcome, host, cli, hostUiChanged);
    case 'deadman.fired':
      return `Run stopped moving: ${deadManWhy(data)}`;
    case 'continuation.warning':
      return typeof data.attemptsWithoutProgress === 'number' ? `No durable progress in ${data.attemptsWithoutProgress} attempts` : 'No durable progress';
    case 'continuation.paused_for_stall':
      return typeof data.attemptsWithoutProgress === 'number' ? `Paused: no durable progress in ${data.attemptsWithoutProgress} attempts` : 'Paused: no durable progress';
    case 'binding.lost':
      // The event log says only `error` for a full conversation or a lost app (the
      // summary's own text tells them apart): read as the common case.
      return 'Conversation closed; a fresh one follows';
    case 'binding.refused':
      return `Ignored a conversation reported by ${excerpt(String(data.executorId ?? ''))}: ${excerpt(String(data.why ?? ''))}`;
    case 'conversation.error':
      return errorText(data.kind, host, cli, hostUiChanged);
    case 'execution.steer_landed':
      return data.landed === 'merged' ? 'The steer joined the running turn' : 'The steer became the next turn (counted as a turn)';
    case 'steering.recorded':
      return STEERING[data.outcome] ?? null;
    case 'worker.executor_absent': {
      const executor = EXECUTOR_NAMES[data.executorKind] ?? EXECUTOR_NAMES.chatgpt;
      const since = typeof data.sinceMs === 'number' ? ` since ${clock(data.sinceMs)}` : '';
      return `No ${executor} executor connected${since}: nothing carries this worker`;
    }
    default:
      return null;
  }
}

function withReason(label, data) {
  return typeof data.reason === 'string' ? `${label}: ${excerpt(data.reason)}` : label;
}

function pausedText(reason, host, hostUiChanged) {
  switch (reason) {
    case 'stall': return 'Paused: no durable progress';
    case 'host_ui_changed': return hostUiChanged();
    case 'ambiguous_submission': return AMBIGUOUS;
    case 'delivery_failing': return 'Paused: deliveries keep failing';
    case 'usage_limit': return 'Usage limit with no reset time: a person must resume';
    case 'account_check': return `Paused: ${host} asks a person to check the account`;
    case 'app_unavailable': return APP_UNAVAILABLE;
    case 'app_not_selected': return 'Paused: ChatGPT did not show the app in this conversation';
    case 'foreign_turn': return `Paused: ${FOREIGN_TURN.toLowerCase()}`;
    case 'cli_retrying': return `Paused: ${host} kept retrying its model connection`;
    default: return 'Paused';
  }
}

function heldText(data, host, cli) {
  const until = typeof data.untilMs === 'number' ? data.untilMs : null;
  const detail = typeof data.detail === 'string' ? data.detail : null;
  if (data.reason === 'usage_limit' && until !== null) return `Usage limit: resumes at ${clock(until)}`;
  if (data.reason === 'rate_limited' && until !== null) return `${host} asked to slow down: resumes at ${clock(until)}`;
  if (data.reason === 'awaiting_approval') {
    if (!cli) return detail !== null ? `Needs you: approve ${excerpt(detail)} in this conversation` : 'Needs you: approve the app in this conversation';
    return detail !== null ? `Needs you: ${host} asks to ${excerpt(detail)}` : `Needs you: ${host} asks for an approval`;
  }
  if (data.reason === 'page_unrecognized') {
    // The executor's words say what was not recognized, and where.
    return detail !== null ? `Needs you: ${excerpt(detail)}; nothing is typed` : 'Needs you: the page is not recognized; nothing is typed';
  }
  return detail !== null ? `A dialog blocks the conversation: ${excerpt(detail)}` : 'A dialog blocks the conversation';
}

function scheduledText(data) {
  const wake = Array.isArray(data.wakeReasons) ? data.wakeReasons : [];
  let what = SCHEDULED[data.reason];
  if (!what) return 'Attempt scheduled';
  // A root's keepalive is a mid-turn resume rather than a checkpoint prompt.
  if (data.reason === 'auto_resume' && wake.includes('active_keepalive')) what = 'Keepalive checkpoint sent';
  else if ((data.reason === 'auto_resume' || data.reason === 'manual_resume') && (wake.includes('delivery_timeout') || wake.includes('page_error'))) what = 'Fresh continue sent';
  // The prompt carries a person's answer (and the question's choices).
  else if ((data.reason === 'auto_resume' || data.reason === 'manual_resume') && wake.includes('event:human_resolved')) what = 'Answer sent';
  return Number.isInteger(data.sequence) ? `${what} (attempt ${data.sequence})` : what;
}

/** How an attempt ended, in words (the outcome's name is never shown). */
const ENDED = {
  turn_ended: 'Turn ended',
  steered: 'Attempt joined the running turn',
  worker_completed: 'Turn ended: the worker completed',
  worker_failed: 'Turn ended: the worker failed',
  worker_cancelled: 'Turn ended: the worker was stopped',
  worker_blocked: 'Turn ended; the worker is waiting',
};

function endedText(outcome, host, cli, hostUiChanged) {
  switch (outcome) {
    case 'delivery_timeout': return DELIVERY_TIMEOUT;
    case 'ambiguous': return AMBIGUOUS;
    case 'host_ui_changed': return hostUiChanged();
    case 'not_delivered': return 'Not delivered; it will be tried again';
    case 'conversation_lost': return 'Conversation lost';
    case 'page_error': return cli ? `The turn ended with an error from ${host}` : 'The turn ended with an error on the page';
    case 'withdrawn': return 'Withdrawn before it was sent';
    default: return Object.hasOwn(ENDED, outcome) ? ENDED[outcome] : 'Attempt ended';
  }
}

function errorText(kind, host, cli, hostUiChanged) {
  switch (kind) {
    case 'delivery_timeout': return DELIVERY_TIMEOUT;
    case 'conversation_full': return 'Conversation full; a fresh one follows';
    case 'host_ui_changed': return hostUiChanged();
    case 'usage_limit': return `${host} usage limit reached`;
    case 'login_required': return `${host} is logged out: a person must log in and resume`;
    case 'rate_limited': return `${host} asked to slow down`;
    case 'suspicious_activity': return 'Suspicious activity detected: a person must resume';
    case 'challenge': return `${host} shows a human check: a person must resume`;
    case 'blocked_by_dialog': return 'A dialog blocks the conversation';
    case 'app_unavailable': return APP_UNAVAILABLE;
    case 'foreign_turn': return FOREIGN_TURN;
    default: return cli ? `${host} reported an error` : 'The page shows an error';
  }
}

/** The dead-man layer's why (caller-protocol's `dead_man_why`). */
function deadManWhy(data) {
  const minutes = Math.floor((typeof data.quietMs === 'number' ? data.quietMs : 0) / MINUTE_MS);
  const cause = data.condition === 'conversations_lost'
    ? `no conversation of it is alive (closed, errored or full) and nothing moved for ${minutes} min`
    : `no turn was delivered and no progress came for ${minutes} min`;
  const done = data.action === 'recovery_requested' ? '/root is being reopened in a fresh conversation' : 'open the dashboard to recover it';
  return `${cause}; ${done}.`;
}

/** Whitespace as Rust's `str::trim` sees it (Unicode White_Space). */
const EDGE_SPACE = /^\p{White_Space}+|\p{White_Space}+$/gu;

/** The first non-empty line of untrusted text, cut to EXCERPT_CHARS_MAX characters. */
function excerpt(text) {
  const line = text.split('\n').map((l) => l.replace(EDGE_SPACE, '')).find((l) => l !== '') ?? '';
  const chars = Array.from(line);
  return chars.length > EXCERPT_CHARS_MAX ? `${chars.slice(0, EXCERPT_CHARS_MAX).join('')}…` : line;
}

/** A time of day as `16:04 UTC` (the daemon's words know no time zone). */
function clock(ms) {
  const minutes = Math.floor(ms / MINUTE_MS) % (24 * 60);
  const two = (n) => String(n).padStart(2, '0');
  return `${two(Math.floor(minutes / 60))}:${two(minutes % 60)} UTC`;
}

/** `45 s`, `12 min`, `3 h`: rounded up, so that a hold is never shown shorter than it is. */
function duration(ms) {
  if (ms < MINUTE_MS) return `${Math.ceil(ms / 1000)} s`;
  if (ms < 60 * MINUTE_MS) return `${Math.ceil(ms / MINUTE_MS)} min`;
  return `${Math.ceil(ms / (60 * MINUTE_MS))} h`;
}
