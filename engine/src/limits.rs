//! Every explicit limit of the engine, named big-endian with its unit last.
//!
//! Inputs beyond these limits are rejected with a typed error; nothing is truncated silently.

use crate::time::{HOUR_MS, MINUTE_MS, SECOND_MS};

/// Longest accepted short name (task name, display name, worker name, lane label).
pub const NAME_BYTES_MAX: usize = 200;
/// Longest accepted summary-like text (task summary, progress summary, wait reason).
pub const SUMMARY_BYTES_MAX: usize = 4 * 1024;
/// Longest accepted assignment text (objective, scope, one acceptance criterion).
pub const ASSIGNMENT_TEXT_BYTES_MAX: usize = 32 * 1024;
/// Most acceptance criteria on one assignment.
pub const ACCEPTANCE_CRITERIA_COUNT_MAX: usize = 64;
/// Longest accepted message body, steering message or follow-up instruction.
pub const MESSAGE_BYTES_MAX: usize = 16 * 1024;
/// Longest accepted conversation URL or id.
pub const CONVERSATION_URL_BYTES_MAX: usize = 2 * 1024;
/// Most choices offered with one human-wait request.
pub const HUMAN_CHOICES_COUNT_MAX: usize = 16;
/// Deepest worker name: `/root` is depth 1, `/root/a/b` depth 3.
pub const WORKER_NAME_DEPTH_MAX: usize = 8;
/// Most workers in one run.
pub const RUN_WORKERS_COUNT_MAX: usize = 1_000;
/// Most runs one engine holds.
pub const RUNS_COUNT_MAX: usize = 100_000;
/// Most events one `events_after` call returns.
pub const EVENTS_PAGE_COUNT_MAX: usize = 1_000;
/// Most attempts one `worker_attempts` call returns.
pub const ATTEMPTS_PAGE_COUNT_MAX: usize = 1_000;
/// Most items one list operation returns.
pub const LIST_PAGE_COUNT_MAX: usize = 1_000;
/// Longest accepted executor error detail.
pub const ERROR_DETAIL_BYTES_MAX: usize = 1_024;
/// Longest accepted CLI worker directory (`workspace.directory`), Linux's `PATH_MAX`.
pub const WORKSPACE_DIRECTORY_BYTES_MAX: usize = 4_096;
/// Longest accepted CLI worker branch name (`workspace.branch`), a file name's limit.
pub const WORKSPACE_BRANCH_BYTES_MAX: usize = 255;
/// Longest CLI session id in a `codex:thread/<id>` or `claude:session/<id>` conversation
/// id (the CLI executor's own session-id limit).
pub const CLI_SESSION_ID_BYTES_MAX: usize = 128;
/// Longest `APP_NOT_SELECTED` detail quoted as the app's name in the pause detail.
pub const APP_NAME_BYTES_MAX: usize = 64;

/// Shortest idle grace a policy may ask for.
pub const IDLE_GRACE_MS_MIN: u64 = 0;
/// Longest idle grace a policy may ask for.
pub const IDLE_GRACE_MS_MAX: u64 = 10 * MINUTE_MS;
/// Shortest active keepalive a policy may ask for: keepalives are checkpoints, not pings.
pub const KEEPALIVE_MS_MIN: u64 = MINUTE_MS;
/// Longest active keepalive a policy may ask for.
pub const KEEPALIVE_MS_MAX: u64 = 24 * HOUR_MS;
/// Smallest anti-spam floor a policy may ask for.
pub const CONTINUATION_SPACING_MS_MIN: u64 = MINUTE_MS;
/// Largest anti-spam floor a policy may ask for.
pub const CONTINUATION_SPACING_MS_MAX: u64 = 24 * HOUR_MS;
/// Largest no-progress attempt threshold.
pub const STALL_ATTEMPTS_MAX: u32 = 10_000;
/// Shortest no-progress time threshold.
pub const STALL_MS_MIN: u64 = MINUTE_MS;
/// Longest no-progress time threshold.
pub const STALL_MS_MAX: u64 = 7 * 24 * HOUR_MS;
/// How long a watched run may go without moving (no submission, no durable progress)
/// before the dead-man layer acts: longer than two keepalive windows, so a run whose
/// normal wakes work never gets there.
pub const DEADMAN_AFTER_MS_DEFAULT: u64 = 45 * MINUTE_MS;
/// Shortest dead-man threshold a run may ask for. It cannot race a normal wake (the layer
/// never fires while a continuation is deliverable or only waits for its time), so the
/// floor only keeps a long silent turn from being taken for a dead run too soon.
pub const DEADMAN_AFTER_MS_MIN: u64 = MINUTE_MS;
/// Longest dead-man threshold a run may ask for.
pub const DEADMAN_AFTER_MS_MAX: u64 = 7 * 24 * HOUR_MS;

/// How long an executor may take to start a submission before it must give up.
pub const COMMAND_DEADLINE_MS_DEFAULT: u64 = 2 * MINUTE_MS;
/// How long past a command's deadline the engine waits for a result from a
/// connected executor before it treats the submission as ambiguous.
pub const COMMAND_RESULT_GRACE_MS_DEFAULT: u64 = 30 * SECOND_MS;
/// How long the turn a `worker_attach` asked for waits for an executor to report the newly
/// attached conversation (one that holds it reports it, and then it goes to that
/// executor) before it goes out naming the conversation to any connected executor, which
/// opens it.
pub const ATTACHED_REPORT_WAIT_MS: u64 = 10 * SECOND_MS;

/// How often a CLI turn that waits for a free slot on its host (the host runs as many
/// turns as its `hello` allows) looks again, in ms.
pub const HOST_SLOT_RECHECK_MS: u64 = SECOND_MS;
/// How long a submitted turn may go without any report about its conversation before the
/// engine sends `conversation.inspect` (and again after each further such stretch).
pub const INSPECT_AFTER_MS_DEFAULT: u64 = 10 * MINUTE_MS;
/// Pause between a definite non-delivery (deadline passed, composer busy) and the next try.
pub const DELIVERY_RETRY_BACKOFF_MS_DEFAULT: u64 = 30 * SECOND_MS;
/// Consecutive definite non-deliveries after which the worker is paused for the operator.
pub const DELIVERY_FAILURES_COUNT_MAX_DEFAULT: u32 = 5;
/// Recent events the engine keeps in memory for `events_after`; older ones live in the store.
pub const EVENTS_RETAINED_COUNT_DEFAULT: usize = 4_096;
/// Finished runs the history (`run_history`: the dashboard's "Finished", `status --all`)
/// shows at most, the most recently ended first ([`crate::EngineConfig::history_runs_max`]).
pub const HISTORY_RUNS_COUNT_DEFAULT: usize = 50;
/// How long a finished run stays in the history after it ended
/// ([`crate::EngineConfig::history_kept_ms`]).
pub const HISTORY_KEPT_MS_DEFAULT: u64 = 14 * 24 * HOUR_MS;

/// How long a "Too many requests" hold lasts when the page names no time.
pub const RATE_LIMIT_DEFAULT_HOLD_MS: u64 = 15 * MINUTE_MS;
/// The furthest a page's reset time may hold an account: a later one is clamped to this
/// (a misparsed date must not hold workers for months).
pub const ACCOUNT_HOLD_MS_MAX: u64 = 8 * 24 * HOUR_MS;
/// Accounts (an executor and a worker kind) with an account-wide hold at once; a hold
/// beyond it replaces the one that lifts soonest. Executors are a person's browsers and
/// CLI executors, a handful; each has at most one account per kind (three kinds).
pub const ACCOUNT_HOLDS_COUNT_MAX: usize = 64 * 3;
/// Longest page text (a dialog's heading, a limit notice) kept with a page state, in
/// characters.
pub const PAGE_DETAIL_CHARS_MAX: usize = 200;

/// How long a worker that needs an executor (active, not waiting, not paused, with a turn
/// running, a command in flight or a continuation pending) may have no connected executor
/// of its kind before the engine records `worker.executor_absent` (once
/// per episode: until an executor of its kind connects again): long enough for a browser
/// or a CLI executor to restart, short enough that a person who left workers overnight
/// learns within minutes that nothing carries them.
pub const EXECUTOR_ABSENT_MS_MAX: u64 = 5 * MINUTE_MS;
/// How long a CLI's turn may keep retrying its model connection (the CLI's own reports:
/// network, login, server errors), counted from the first retry or the worker's last
/// durable progress (a resume counts), before the engine pauses the worker
/// (`cli_retrying`) for a person: long enough to ride out a network blip, short enough
/// that the morning does not find it still "generating".
pub const CLI_RETRY_MS_MAX: u64 = 10 * MINUTE_MS;
/// Executors that went away this process remembers the time of (for "offline since");
/// beyond it the one gone longest is forgotten and reads as gone since the daemon started.
pub const GONE_EXECUTORS_COUNT_MAX: usize = 1_024;
/// Longest reason a CLI executor gives for a retry, in characters (cut by the adapter that
/// decoded it, as page details are).
pub const RETRY_REASON_CHARS_MAX: usize = PAGE_DETAIL_CHARS_MAX;
/// Notification targets (`--notify`) one daemon posts to at most: a notice's id keeps the
/// target's position beside the episode's event cursor.
pub const NOTIFY_TARGETS_COUNT_MAX: u64 = 16;
/// The first retry of a notification the receiver did not take, ms after the failure;
/// each further retry waits twice as long, up to [`NOTIFY_RETRY_MS_MAX`].
pub const NOTIFY_RETRY_FIRST_MS: u64 = 5 * SECOND_MS;
/// The longest wait between two tries of one notification.
pub const NOTIFY_RETRY_MS_MAX: u64 = 10 * MINUTE_MS;
/// How long after its creation a notification nobody took is given up (with the event
/// `notification.abandoned`): a day-old alert is no longer worth a ping.
pub const NOTIFY_GIVE_UP_MS: u64 = 24 * HOUR_MS;
/// How long one delivery may stay unanswered by the shell before the engine counts it as
/// failed and retries it (a lost result must not strand the notification).
pub const NOTIFY_SEND_MS_MAX: u64 = MINUTE_MS;
/// Longest title or text of a notification, in characters (the worker's own words cut).
pub const NOTIFY_TEXT_CHARS_MAX: usize = 1_000;
