//! Every bound of the core, named big-endian with its unit last (Tiger Style).

/// The longest line accepted from the app-server. A `thread/read` of a long thread is the
/// largest message; past this the line is refused rather than parsed.
pub const LINE_BYTES_MAX: usize = 16 * 1024 * 1024;

/// Requests the core keeps outstanding at once. The app-server answers in milliseconds; a
/// full table means it stopped answering, and more requests would only pile up.
pub const REQUESTS_IN_FLIGHT_MAX: usize = 64;

/// How long a request may go unanswered before the core gives up on it and says so.
pub const REQUEST_TIMEOUT_MS: u64 = 30_000;

/// Commands held while the app-server is not initialized yet or a turn is still running
/// (idle delivery: a send waits for the turn's end, at most until its deadline).
pub const COMMANDS_WAITING_MAX: usize = 64;

/// Threads (conversations) one app-server hosts for this core.
pub const THREADS_MAX: usize = 256;

/// Approval requests one child may hold waiting for a person (`--approvals ask`); one
/// more is declined at once. A turn waits on one at a time, so this bounds a misbehaving
/// child only.
pub const APPROVALS_MAX: usize = 64;

/// Nonces remembered per thread to tell our turns from foreign ones. Older nonces are
/// forgotten first; `thread/read` reconciliation does not depend on this memory.
pub const NONCES_PER_THREAD_MAX: usize = 1_024;

/// Characters of CLI text kept for people (an error message, a limit notice), as the
/// engine's `PAGE_DETAIL_CHARS_MAX`.
pub const DETAIL_CHARS_MAX: usize = engine::limits::PAGE_DETAIL_CHARS_MAX;

/// Characters kept from the end of a turn's last agent message: the end-of-response
/// block the engine parses is at the tail.
pub const BLOCK_CHARS_MAX: usize = 4_096;

/// Bytes of the child's stderr kept (the tail): enough for a panic message or a config
/// error, bounded so a chatty child cannot grow the executor.
pub const STDERR_TAIL_BYTES_MAX: usize = 64 * 1024;

/// How long a stop waits, once the group is gone, for the rest of stderr.
pub const STDERR_DRAIN_MS: u64 = 500;

/// How long a stopped child's process group has, after `SIGTERM`, to end before `SIGKILL`.
pub const STOP_GRACE_MS: u64 = 3_000;

/// How long a group has to be gone after `SIGKILL` (which cannot be ignored) before the stop
/// is reported as failed rather than waited on forever.
pub const STOP_KILL_WAIT_MS: u64 = 2_000;

/// How often a stop or a reap looks at `/proc` for the group's members.
pub const GROUP_POLL_MS: u64 = 10;

/// The longest session id: it names the lease file and the session's directory.
pub const SESSION_ID_BYTES_MAX: usize = 128;

/// The longest `TMPDIR` a child gets, in bytes. Claude Code 2.1.332's sandbox binds
/// `$TMPDIR/claude-http-<16 hex>.sock` and `$TMPDIR/claude-socks-<16 hex>.sock` (34 bytes
/// after the directory), and a unix socket's path must fit `sun_path` (108 bytes on Linux,
/// unix(7)): a `TMPDIR` of 74 bytes worked, one of 75 failed every sandboxed command with
/// "Failed to create bridge sockets" (seen 2026-12-05; `tests/sandbox_paths.rs` runs the
/// real binary at exactly this length). `base::tmpdir` places a longer one elsewhere.
pub const TMPDIR_BYTES_MAX: usize = 74;

/// Lease files looked at when the executor starts; more means something else writes there.
pub const LEASES_MAX: usize = 4_096;

/// The largest lease file read: a few short `key=value` lines.
pub const LEASE_BYTES_MAX: u64 = 4 * 1024;

/// The largest journal file read at start; past it the executor refuses to start rather
/// than guess (compaction keeps a healthy journal far below this).
pub const JOURNAL_BYTES_MAX: u64 = 64 * 1024 * 1024;

/// Commands the journal keeps; the oldest finished ones are dropped first, unfinished ones
/// never (a full journal of unfinished commands refuses new ones).
pub const JOURNAL_COMMANDS_MAX: usize = 1_024;

/// Records appended before the journal is compacted (rewritten with one record each).
pub const JOURNAL_LINES_COMPACT: usize = 8_192;

/// How far every worker's state sequence jumps when a journal line could not be read: a
/// lost `seq` record must never let a sequence go backwards.
pub const SEQ_SKIP_ON_DOUBT: u64 = 1_000_000;

/// Children of one worker that may exit in a row, each restarted after a backoff, before
/// the worker's conversation is reported in error and no child is started again until
/// its next command.
pub const CHILD_RESTARTS_MAX: u32 = 5;

/// The wait before restarting a child that exited; doubled for each exit in a row.
pub const CHILD_RESTART_BACKOFF_MS_MIN: u64 = 200;

/// The longest wait before restarting a child.
pub const CHILD_RESTART_BACKOFF_MS_MAX: u64 = 10_000;

/// The first wait before reconnecting to the daemon; doubled for each failure in a row.
pub const RECONNECT_BACKOFF_MS_MIN: u64 = 250;

/// The longest wait before reconnecting to the daemon.
pub const RECONNECT_BACKOFF_MS_MAX: u64 = 15_000;

/// How long the daemon has to answer `hello` with `welcome`.
pub const WELCOME_WAIT_MS: u64 = 10_000;

/// How long the daemon has to answer the `/executor` WebSocket upgrade: a stopped daemon
/// (SIGSTOP, a hung host) still completes the TCP connection in its kernel but never
/// answers, and the executor must go on down its list to the daemon that leads now.
pub const UPGRADE_WAIT_MS: u64 = 5_000;

/// How often the executor pings the daemon it is connected to (a WebSocket ping, which the
/// daemon's WebSocket layer answers with a pong).
pub const DAEMON_PING_MS: u64 = 1_000;

/// How long a connected daemon may send nothing at all (no frame, no pong) before the
/// executor drops the connection and tries its list again: a daemon stopped while
/// connected keeps its socket open, and a standby takes over its lease
/// (`LEASE_TTL_MS_DEFAULT`, 10 s) while the executor would otherwise wait on it forever.
pub const DAEMON_SILENCE_MS_MAX: u64 = 5_000;

/// Messages queued between a worker's task and the connection (and back): a full queue
/// makes the sender wait, never drops.
pub const CHANNEL_DEPTH: usize = 256;

/// The longest token read from the executor token file.
pub const TOKEN_BYTES_MAX: u64 = 4 * 1024;

/// How long a user line written to `claude` may go without its `command_lifecycle`
/// `queued` (or the echo of a uuid the session already holds) before the prompt is
/// reported `AMBIGUOUS_SUBMISSION`. Recorded: 0.3-0.5 s after spawn, 2 ms later on.
pub const CLAUDE_ACK_TIMEOUT_MS: u64 = 30_000;

/// User lines one Claude session may have written and not yet started (unacknowledged
/// or queued): more means the child stopped reading.
pub const CLAUDE_LINES_IN_FLIGHT_MAX: usize = 64;

/// How long the MCP probe ([`crate::base::mcp::probe`]: `initialize`, then `tools/list`) may take
/// before the server counts as unreachable. The daemon answers in milliseconds on loopback.
pub const MCP_PROBE_TIMEOUT_MS: u64 = 5_000;

/// The largest MCP answer the probe reads (`tools/list` with the whole catalog's schemas is
/// the largest, about 60 KB today).
pub const MCP_PROBE_BYTES_MAX: usize = 1024 * 1024;

/// The largest Claude session transcript read to settle a prompt after a restart; past it
/// the prompt's fate cannot be told (`AMBIGUOUS_SUBMISSION`), never guessed.
pub const TRANSCRIPT_BYTES_MAX: u64 = 256 * 1024 * 1024;

/// How long `claude --version` or `claude --help` may take at executor start (measured:
/// 20 ms and 0.55 s on 2026-12-02) before the binary counts as unusable.
pub const CLI_SURFACE_TIMEOUT_MS: u64 = 15_000;

/// The most of `--help`'s output read (2.1.332's is 17 KB).
pub const CLI_HELP_BYTES_MAX: usize = 1024 * 1024;

/// The largest `claude` binary whose settings schema is read at executor start
/// (`claude::cli::check_settings`; 2.1.332's is 402 MB); a larger one fails closed.
pub const CLAUDE_BINARY_BYTES_MAX: u64 = 2 * 1024 * 1024 * 1024;
/// How long a thread, once started or resumed, may go without its `ready` status of the
/// orchestrator's MCP server (`mcpServer/startupStatus/updated`) before its prompt fails
/// closed (`MCP_UNREACHABLE`). 0.169.0 sent it with the `thread/start` answer (recorded:
/// the same millisecond); this is above Codex's own MCP startup timeout (10 s by default).
pub const MCP_READY_WAIT_MS: u64 = 15_000;

/// How long `codex --version` or `codex app-server generate-json-schema` may take at
/// executor start (the schema took 0.25 s here) before the surface check fails.
pub const SURFACE_CHECK_MS_MAX: u64 = 30_000;

/// The largest generated schema file read by the surface check (0.169.0's largest is
/// 775 KB).
pub const SURFACE_SCHEMA_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// Workers' turns one host runs at once unless `--turns-max` says otherwise (its
/// `hello`'s `concurrencyMax`: the daemon holds a turn beyond it until one ends).
pub const TURNS_MAX_DEFAULT: u32 = 16;
