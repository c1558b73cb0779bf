// The executor protocol, version 1 (docs/protocol/executor.md): decodes, validates and
// encodes every message between the extension and the daemon. Decoding keeps only the
// documented fields, in the documented order, so encoding a decoded canonical frame gives
// back the same bytes. Errors are typed (`WireError` with a protocol.error code).

export const PROTOCOL_VERSION = 1;

/** The largest frame either side accepts, in bytes (1 MiB, as the daemon's `messageBytesMax`). */
export const MESSAGE_BYTES_MAX = 1 << 20;

/** `operator.action.actionId` (and our `operator.query.queryId`) at most this many bytes. */
export const CORRELATION_ID_BYTES_MAX = 64;

/** `hello.executorId`: 1 to this many printable ASCII characters. */
export const EXECUTOR_ID_CHARS_MAX = 128;

export const STATE_NAMES = ['unknown', 'ready', 'generating', 'idle', 'awaiting_approval', 'error', 'closed'];
export const ERROR_KINDS = [
  'delivery_timeout', 'conversation_full', 'host_ui_changed', 'usage_limit', 'login_required', 'generic',
  'rate_limited', 'suspicious_activity', 'challenge', 'blocked_by_dialog', 'app_unavailable', 'foreign_turn',
];
/** Where a CLI executor's submitted steer landed (`steer.landed`; this extension never sends it). */
export const STEER_LANDINGS = ['merged', 'next_turn'];
/** Executor kinds: a hello's `capabilities.kinds`, a CLI command's `executorKind`. */
export const EXECUTOR_KINDS = ['chatgpt', 'codex', 'claude'];
export const JOURNAL_PHASES = ['received', 'submission-started', 'submitted', 'completed'];
export const COMMAND_KINDS = [
  'conversation.create', 'conversation.send', 'conversation.steer', 'command.cancel', 'conversation.inspect', 'conversation.close',
  // A CLI executor's (`--approvals ask`): never sent to this extension.
  'approval.answer',
];
export const OPERATOR_ACTIONS = [
  'auto_resume_on', 'auto_resume_off', 'pause_now', 'pause_after_turn', 'resume', 'continue_now',
  'continue_anyway', 'resolve_human', 'stop_worker', 'stop_run', 'release_dependency', 'oauth_approve', 'oauth_deny', 'oauth_revoke',
  'run_start', 'worker_attach', 'approval_answer',
];
/** A person's decision on a CLI approval request (`approval_answer`). */
export const APPROVAL_DECISIONS = ['approve', 'decline'];
export const OPERATOR_QUERIES = ['worker_attempts', 'worker_events', 'oauth_pending'];
/** What a run's dead-man layer does when the run stops moving (`run_start`'s `deadMan`). */
export const DEAD_MAN_MODES = ['off', 'notify', 'recover'];

/** Failure codes of `command.result` (any other code is legal and treated as ambiguous). */
export const FAILURE_CODES = {
  AMBIGUOUS_SUBMISSION: 'AMBIGUOUS_SUBMISSION',
  HOST_UI_CHANGED: 'HOST_UI_CHANGED',
  MESSAGE_DELIVERY_TIMEOUT: 'MESSAGE_DELIVERY_TIMEOUT',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  STEERING_UNAVAILABLE: 'STEERING_UNAVAILABLE',
  COMPOSER_BUSY: 'COMPOSER_BUSY',
  CONVERSATION_CLOSED: 'CONVERSATION_CLOSED',
  CONVERSATION_FULL: 'CONVERSATION_FULL',
  CANCELLED: 'CANCELLED',
  // The app could not be chosen or its pill verified before a send: nothing was sent.
  APP_NOT_SELECTED: 'APP_NOT_SELECTED',
};

/** `protocol.error` codes, and whether the daemon closes the connection after each. */
export const PROTOCOL_ERROR_CLOSES = {
  MALFORMED: false,
  UNSUPPORTED_VERSION: true,
  TOO_LARGE: true,
  RATE_LIMITED: false,
  HELLO_REQUIRED: true,
  UNAUTHORIZED: true,
  INVALID_EXECUTOR_ID: true,
  DUPLICATE_HELLO: false,
  REPLACED: true,
  SUPERSEDED: true,
  INVALID_ACCOUNT: true,
};

/** Why a frame could not be decoded or a message could not be encoded. */
export class WireError extends Error {
  /** `code`: 'MALFORMED' | 'UNSUPPORTED_VERSION' | 'TOO_LARGE'. */
  constructor(code, message) {
    super(message);
    this.name = 'WireError';
    this.code = code;
  }
}

const U32_MAX = 0xffff_ffff;

function malformed(path, problem) {
  throw new WireError('MALFORMED', `malformed message: ${path}: ${problem}`);
}

// ---- value checks: each takes (value, path) and returns the canonical value ----

const string = (value, path) => (typeof value === 'string' ? value : malformed(path, 'expected a string'));

const bool = (value, path) => (typeof value === 'boolean' ? value : malformed(path, 'expected true or false'));

const uint = (max) => (value, path) =>
  Number.isSafeInteger(value) && value >= 0 && value <= max ? value : malformed(path, `expected a whole number from 0 to ${max}`);

const u64 = uint(Number.MAX_SAFE_INTEGER);
const u32 = uint(U32_MAX);

const oneOf = (values) => (value, path) =>
  values.includes(value) ? value : malformed(path, `expected one of ${values.join(', ')}`);

/** A printed counter id such as `wrk-7` (the engine's form: prefix, dash, 1 to 19 digits, a u64). */
const printedId = (prefix) => (value, path) => {
  const ok = typeof value === 'string' && new RegExp(`^${prefix}-\\d{1,19}$`).test(value)
    && BigInt(value.slice(prefix.length + 1)) <= 0xffff_ffff_ffff_ffffn;
  return ok ? value : malformed(path, `expected an id of the form ${prefix}-<number>`);
};

const utf8Bytes = (text) => new TextEncoder().encode(text).length;

const boundedString = (bytesMax) => (value, path) => {
  string(value, path);
  return utf8Bytes(value) <= bytesMax ? value : malformed(path, `longer than ${bytesMax} bytes`);
};

const executorId = (value, path) => {
  const ok = typeof value === 'string' && value.length >= 1 && value.length <= EXECUTOR_ID_CHARS_MAX
    && /^[\x20-\x7e]+$/.test(value);
  return ok ? value : malformed(path, `expected 1 to ${EXECUTOR_ID_CHARS_MAX} printable ASCII characters`);
};

/** An error kind; an unknown kind reads as `generic` (as the daemon reads it). */
const errorKind = (value, path) => (ERROR_KINDS.includes(string(value, path)) ? value : 'generic');

const jsonObject = (value, path) =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? value : malformed(path, 'expected an object');

const list = (check) => (value, path) =>
  Array.isArray(value) ? value.map((item, i) => check(item, `${path}[${i}]`)) : malformed(path, 'expected an array');

// ---- records: ordered field lists ----

const required = (name, check) => ({ name, check });
const optional = (name, check, omitIf = () => false) => ({ name, check, optional: true, omitIf });
const withDefault = (name, check, fallback) => ({ name, check, fallback });

/** An object with exactly these fields, in this order; unknown fields are dropped. */
const record = (fields) => (value, path) => {
  jsonObject(value, path);
  const out = {};
  for (const field of fields) {
    const raw = value[field.name];
    const fieldPath = `${path}.${field.name}`;
    if (raw === undefined || raw === null) {
      if (field.optional) continue;
      if ('fallback' in field) {
        out[field.name] = field.fallback;
        continue;
      }
      malformed(fieldPath, 'missing');
    }
    const canonical = field.check(raw, fieldPath);
    if (field.optional && field.omitIf(canonical)) continue;
    out[field.name] = canonical;
  }
  return out;
};

const errorOut = record([required('code', string), required('message', string)]);

/** A CLI approval request waiting for a person: a `conversation.state`'s and a hold's `approval`. */
const approvalRequest = record([required('id', string), required('kind', string), required('summary', string)]);
/** A CLI worker's workspace on a command: the directory, and the branch or null. */
const workspace = record([required('directory', string), withDefault('branch', string, null)]);

const observation = record([
  required('state', oneOf(STATE_NAMES)),
  optional('errorKind', errorKind),
  required('seq', u64),
  optional('block', string),
  optional('untilMs', u64),
  optional('detail', string),
]);

const bindingFields = [
  required('workerId', printedId('wrk')),
  required('conversationUrl', string),
  required('open', bool),
  optional('observation', observation),
];

const journalLine = record([
  required('commandId', printedId('cmd')),
  required('phase', oneOf(JOURNAL_PHASES)),
  withDefault('stateSeq', u64, 0),
  optional('conversationUrl', string),
]);

const OUTCOMES = {
  accepted: record([]),
  submitted: record([required('stateSeq', u64), optional('conversationUrl', string)]),
  failed: record([required('code', string), required('detail', string)]),
};

/** `command.result.outcome`: tagged by `status`, which comes first. */
const outcome = (value, path) => {
  jsonObject(value, path);
  const status = oneOf(Object.keys(OUTCOMES))(value.status, `${path}.status`);
  return { status, ...OUTCOMES[status](value, path) };
};

/**
 * Who carries an unfinished worker (the daemon's `LivenessOut`): its executor, connected or
 * not, since when, how many of its kind are connected, an absence episode, a CLI retrying.
 */
const liveness = record([
  required('state', string),
  optional('executorId', string),
  required('executorKind', string),
  optional('sinceMs', u64),
  required('capableExecutors', u32),
  optional('absentSinceMs', u64),
  optional('retry', record([required('reason', string), optional('attempt', u32), required('sinceMs', u64)])),
  // Its next turn waits for a free slot on its CLI host, or on the account it runs under
  // there (`account`); `livenessText` says so.
  optional(
    'slot',
    record([required('executorId', string), required('busy', u32), required('max', u32), optional('account', string)]),
  ),
]);

const workerSummary = record([
  required('workerId', string),
  required('name', string),
  required('displayName', string),
  required('disposition', string),
  required('attempts', u32),
  required('autoResumes', u32),
  optional('lastProgressAtMs', u64),
  required('autoResume', bool),
  required('policySource', string),
  required('pauseAfterTurn', bool),
  optional('pauseReason', string),
  optional('pauseDetail', string),
  optional('hold', record([required('reason', string), optional('untilMs', u64), optional('detail', string), optional('approval', approvalRequest)])),
  optional('needsYou', string),
  // With disposition awaiting_dependency: the worker it waits for (Release; Stop's confirmation).
  optional('waitsFor', string),
  required('stall', string),
  optional('conversationUrl', string),
  // A CLI worker (absent: chatgpt): its kind and workspace; its conversationUrl is its session.
  optional('executorKind', oneOf(EXECUTOR_KINDS)),
  optional('workspace', workspace),
  optional('conversationState', string),
  optional('conversationErrorKind', string),
  // Who carries it, and the line a person reads about it (the same on every surface).
  optional('liveness', liveness),
  optional('livenessText', string),
  withDefault('recentEvents', list(record([required('atMs', u64), required('kind', string), required('text', string)])), []),
  // The open question's choices; the workers that wait for this one (Stop says so); a
  // finished worker's handoff or reason, and its times (the dashboard's Finished).
  optional('needsYouChoices', list(string), (l) => l.length === 0),
  optional('waitedOnBy', list(string), (l) => l.length === 0),
  optional('outcome', string),
  optional('createdAtMs', u64, (ms) => ms === 0),
  optional('endedAtMs', u64),
]);

/** A run the daemon's dead-man layer found stopped (docs/engine.md, "Dead-man fallback"). */
const stoppedMoving = record([
  required('atMs', u64),
  required('condition', string),
  required('action', string),
  required('quietMs', u64),
  required('workerIds', list(string)),
  required('conversationUrls', list(string)),
  required('text', string),
]);

const runSummary = record([
  required('runId', string),
  required('taskName', string),
  required('status', string),
  required('autoResume', bool),
  optional('stoppedMoving', stoppedMoving),
  required('workers', list(workerSummary)),
  optional('createdAtMs', u64, (ms) => ms === 0),
  optional('endedAtMs', u64),
  // How a finished run ended, in its root's words (the handoff, or the reason).
  optional('outcome', string),
]);

/** Messages the executor sends, by type: their fields after `v` and `type`. */
const EXECUTOR_MESSAGES = {
  hello: [
    required('token', string),
    required('executorId', executorId),
    required('protocol', u32),
    // `kinds` absent: `["chatgpt"]`, which is what this extension runs (it never sends it).
    required('capabilities', record([
      required('steering', bool), optional('operator', bool, (on) => !on), optional('kinds', list(oneOf(EXECUTOR_KINDS))),
      // Answer each heartbeat with one: this extension asks, to know a stopped daemon.
      optional('heartbeatEcho', bool, (on) => !on),
    ])),
    required('concurrencyMax', u32),
    required('bindings', list(record(bindingFields))),
    required('journal', list(journalLine)),
    // The CLI executor's start time, which fences an older process of its id (this
    // extension never sends it: a browser has no such fence).
    optional('epoch', u64),
  ],
  binding: bindingFields,
  'conversation.state': [
    required('workerId', printedId('wrk')),
    required('state', oneOf(STATE_NAMES)),
    optional('errorKind', errorKind),
    required('seq', u64),
    optional('block', string),
    optional('untilMs', u64),
    optional('detail', string),
    // A CLI executor in `ask` mode, with awaiting_approval: the request a person answers.
    optional('approval', approvalRequest),
  ],
  'command.result': [required('commandId', printedId('cmd')), required('outcome', outcome)],
  heartbeat: [],
  'operator.action': [
    required('actionId', boundedString(CORRELATION_ID_BYTES_MAX)),
    required('action', oneOf(OPERATOR_ACTIONS)),
    optional('workerId', printedId('wrk')),
    optional('runId', printedId('run')),
    optional('text', string),
    // The OAuth actions: the waiting request's code, the grant to revoke (the daemon checks their shape).
    optional('code', boundedString(CORRELATION_ID_BYTES_MAX)),
    optional('grantId', boundedString(CORRELATION_ID_BYTES_MAX * 2)),
    // run_start / worker_attach: the new run's names, plan and Auto Resume, the tab's conversation.
    optional('taskName', string),
    optional('rootConversationName', string),
    optional('context', string),
    optional('autoResume', bool),
    optional('deadMan', oneOf(DEAD_MAN_MODES)),
    optional('conversationUrl', string),
    // approval_answer: the CLI approval request and the person's decision.
    optional('approvalId', boundedString(CORRELATION_ID_BYTES_MAX)),
    optional('decision', oneOf(APPROVAL_DECISIONS)),
  ],
  'operator.query': [
    required('queryId', boundedString(CORRELATION_ID_BYTES_MAX)),
    required('query', oneOf(OPERATOR_QUERIES)),
    optional('workerId', printedId('wrk')),
    optional('afterSequence', u32),
    optional('limit', u32),
  ],
  // A CLI executor's message (docs/protocol/executor.md): kept here so both sides read the fixtures alike.
  'steer.landed': [
    required('workerId', printedId('wrk')),
    required('commandId', printedId('cmd')),
    required('landed', oneOf(STEER_LANDINGS)),
    required('seq', u64),
  ],
};

/** Messages the daemon sends, by type. */
const DAEMON_MESSAGES = {
  welcome: [
    required('protocol', u32),
    required('executorId', string),
    required('heartbeatMs', u64),
    required('messageBytesMax', u64),
    required('messagesPerSecondMax', u32),
  ],
  command: [
    required('commandId', printedId('cmd')),
    required('kind', oneOf(COMMAND_KINDS)),
    required('idempotencyKey', string),
    required('workerId', printedId('wrk')),
    required('attemptId', printedId('exe')),
    required('conversationUrl', string),
    required('prompt', string),
    required('promptVersion', string),
    required('deadline', u64),
    // Present for CLI workers only (never sent to this extension, which runs chatgpt ones).
    optional('executorKind', oneOf(EXECUTOR_KINDS)),
    optional('workspace', workspace),
    optional('approval', record([required('approvalId', string), required('decision', oneOf(APPROVAL_DECISIONS))])),
  ],
  'protocol.error': [required('code', oneOf(Object.keys(PROTOCOL_ERROR_CLOSES))), required('detail', string)],
  'operator.result': [
    required('actionId', string),
    required('ok', bool),
    optional('error', errorOut),
    optional('runId', printedId('run')),
    optional('workerId', printedId('wrk')),
  ],
  // `finished`: the most recently finished runs, newest first (the dashboard's Finished).
  'operator.summary': [required('runs', list(runSummary)), optional('finished', list(runSummary), (l) => l.length === 0)],
  'operator.data': [
    required('queryId', string),
    required('ok', bool),
    optional('data', jsonObject),
    optional('error', errorOut),
  ],
  // The answer to this extension's heartbeat (its hello asks for it): the daemon is alive.
  heartbeat: [],
};

export const EXECUTOR_MESSAGE_TYPES = Object.keys(EXECUTOR_MESSAGES);
export const DAEMON_MESSAGE_TYPES = Object.keys(DAEMON_MESSAGES);

/** The canonical form of a message object of one direction, or a WireError. */
function canonical(schemas, message) {
  jsonObject(message, 'message');
  // A version is a number: a `v` that is not one claims no version, so the message is
  // MALFORMED like any that fits no schema; another number is another protocol
  // (docs/protocol/fixtures/rules/version.json).
  if (message.v === undefined || message.v === null) malformed('v', 'missing');
  if (typeof message.v !== 'number') malformed('v', `must be a number (the protocol version), not ${JSON.stringify(message.v)}`);
  if (message.v !== PROTOCOL_VERSION) {
    throw new WireError('UNSUPPORTED_VERSION', `unsupported protocol version ${JSON.stringify(message.v)} (this extension speaks v${PROTOCOL_VERSION})`);
  }
  const type = string(message.type, 'type');
  if (!Object.hasOwn(schemas, type)) malformed('type', `unknown message type ${JSON.stringify(type)}`);
  return { v: PROTOCOL_VERSION, type, ...record(schemas[type])(message, type) };
}

function decode(schemas, text, bytesMax) {
  if (typeof text !== 'string') malformed('frame', 'expected a text frame');
  if (text.length > bytesMax || (text.length * 3 > bytesMax && utf8Bytes(text) > bytesMax)) {
    throw new WireError('TOO_LARGE', `message of more than ${bytesMax} bytes`);
  }
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    malformed('frame', `not JSON (${e.message})`);
  }
  return canonical(schemas, parsed);
}

/** Decodes a frame from the daemon. Throws WireError. */
export function decodeDaemonMessage(text, bytesMax = MESSAGE_BYTES_MAX) {
  return decode(DAEMON_MESSAGES, text, bytesMax);
}

/** Decodes a frame an executor sends (the daemon's view; used by tests and fakes). Throws WireError. */
export function decodeExecutorMessage(text, bytesMax = MESSAGE_BYTES_MAX) {
  return decode(EXECUTOR_MESSAGES, text, bytesMax);
}

/** Encodes a message of either direction as canonical compact JSON. Throws WireError. */
export function encodeMessage(message) {
  const type = message?.type;
  const schemas = Object.hasOwn(EXECUTOR_MESSAGES, type ?? '') ? EXECUTOR_MESSAGES : DAEMON_MESSAGES;
  return JSON.stringify(canonical(schemas, message));
}

/** A `command.result` outcome of status `failed`. */
export function failedOutcome(code, detail) {
  return { status: 'failed', code, detail };
}

/** A `command.result` outcome of status `submitted`. */
export function submittedOutcome(stateSeq, conversationUrl) {
  return conversationUrl ? { status: 'submitted', stateSeq, conversationUrl } : { status: 'submitted', stateSeq };
}
