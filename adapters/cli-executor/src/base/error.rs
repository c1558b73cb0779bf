//! The crate's one error type: what went wrong reading the app-server, serving a command
//! or keeping the child in hand, each with a stable code for logs and tests.

use thiserror::Error;

/// Everything the core can refuse. A command the CLI refused is not an error here: it
/// becomes a failed command result with a protocol code.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// A line from the app-server is not JSON or fits no JSON-RPC message.
    #[error("malformed app-server message: {detail}")]
    Malformed {
        /// What did not fit.
        detail: String,
    },
    /// A line longer than [`crate::base::limits::LINE_BYTES_MAX`].
    #[error("app-server line of {bytes} bytes is over the limit")]
    LineTooLong {
        /// Its length (from the child's stdout: the bytes read before giving up on it).
        bytes: usize,
    },
    /// A response whose id names no request in flight (answered twice, or never asked).
    #[error("response to unknown request id {id}")]
    UnknownResponse {
        /// The id it carried.
        id: String,
    },
    /// [`crate::base::limits::REQUESTS_IN_FLIGHT_MAX`] requests are already outstanding.
    #[error("too many requests in flight")]
    InFlightFull,
    /// [`crate::base::limits::COMMANDS_WAITING_MAX`] commands are already waiting.
    #[error("too many commands waiting")]
    WaitingFull,
    /// [`crate::base::limits::THREADS_MAX`] threads are already hosted.
    #[error("too many threads")]
    ThreadsFull,
    /// A command this core does not serve for the conversation it names.
    #[error("no thread {thread} is managed here")]
    UnknownThread {
        /// The thread id (the conversation) the command named.
        thread: String,
    },
    /// A session id that cannot name a lease file and a directory (empty, too long, or
    /// not `[A-Za-z0-9_.-]` with no leading dot).
    #[error("bad session id {session:?}")]
    BadSession {
        /// The id as given.
        session: String,
    },
    /// The session already has a child: one child per session at most.
    #[error("session {session} is leased to process group {pgid}")]
    Leased {
        /// The session.
        session: String,
        /// The group holding it (0 while that child is being spawned).
        pgid: i32,
    },
    /// A file or directory operation of the shell failed.
    #[error("{op} {path}: {detail}")]
    Io {
        /// What was being done (`write lease`, `create session home`, ...).
        op: &'static str,
        /// On what.
        path: String,
        /// The OS error.
        detail: String,
    },
    /// The CLI could not be started.
    #[error("cannot spawn {program}: {detail}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        detail: String,
    },
    /// The child's stdin or stdout is closed (it exited, or was stopped).
    #[error("the child is gone")]
    ChildGone,
    /// `claude --session-id` refused an id the config home already holds ("Error: Session
    /// ID <id> is already in use.", exit 1, stdin never read): the session exists, live or
    /// on disk; it is resumed (`--resume`), never started twice.
    #[error("session {session} is already in use")]
    SessionInUse {
        /// The session id.
        session: String,
    },
    /// `claude --resume` found no transcript for the session ("No conversation found with
    /// session ID: ...", exit 1, after a `result` with `num_turns:0`; 2.1.332, seen
    /// 2026-12-02): the session never reached disk, so the conversation is gone.
    #[error("no conversation {session} to resume")]
    SessionNotFound {
        /// The session id.
        session: String,
    },
    /// A process group still had live members after `SIGKILL` and
    /// [`crate::base::limits::STOP_KILL_WAIT_MS`].
    #[error("process group {pgid} did not end")]
    StopFailed {
        /// The group.
        pgid: i32,
    },
    /// A journal line could not be read (torn or foreign): acted on safely at open.
    #[error("journal line {line} is unreadable: {detail}")]
    JournalCorrupt {
        /// Its number, from 1.
        line: usize,
        /// Why it did not parse.
        detail: String,
    },
    /// The journal file is larger than [`crate::base::limits::JOURNAL_BYTES_MAX`].
    #[error("the journal {path} is over its size limit")]
    JournalTooLarge {
        /// The file.
        path: String,
    },
    /// [`crate::base::limits::JOURNAL_COMMANDS_MAX`] unfinished commands are journaled already.
    #[error("the journal is full of unfinished commands")]
    JournalFull,
    /// A phase change for a command the journal never received (a bug, not bad input).
    #[error("command {command} is not journaled")]
    NotJournaled {
        /// The command id.
        command: String,
    },
    /// A flag or option of the executor that cannot be used.
    #[error("{detail}")]
    BadOption {
        /// Which and why, in one line.
        detail: String,
    },
    /// The executor token could not be read.
    #[error("cannot read the executor token from {path}: {detail}")]
    Token {
        /// The token file.
        path: String,
        /// Why.
        detail: String,
    },
    /// The CLI binary is not there or not executable.
    #[error(
        "the codex binary {program} was not found or is not executable (install @openai/codex or pass --codex PATH)"
    )]
    CodexMissing {
        /// The program as given.
        program: String,
    },
    /// The Claude Code binary is not there or not executable.
    #[error(
        "the claude binary {program} was not found or is not executable (install @anthropic-ai/claude-code@{version} or pass --claude PATH)"
    )]
    ClaudeMissing {
        /// The program as given.
        program: String,
        /// The version the executor runs.
        version: &'static str,
    },
    /// The Claude Code binary is not the one the executor was built against: another
    /// version, or a `--help` without a flag the executor passes. Claude workers are not run.
    #[error("the claude binary {program} cannot run Claude workers: {detail}")]
    ClaudeSurface {
        /// The binary.
        program: String,
        /// What differs, in one line.
        detail: String,
    },
    /// Claude Code's sandbox is required (`--claude-sandbox required`, the default) but a
    /// program it needs is not on the children's `PATH`: Claude workers are not run.
    #[error(
        "Claude Code's sandbox needs bubblewrap and socat (missing: {missing}): install them (Debian: apt install bubblewrap socat) or run with --claude-sandbox off to let Claude workers' commands run unconfined"
    )]
    ClaudeSandboxUnavailable {
        /// The programs not found (`bwrap`, `socat`).
        missing: String,
    },
    /// A `--claude-arg=--settings...`: 2.1.332 honours only the last `--settings`, so it
    /// would silently drop the executor's (the sandbox's, and the switches that keep Claude
    /// Code from starting turns of its own). Claude workers are not run.
    #[error(
        "--claude-arg {arg}: Claude Code 2.1.332 reads only the last --settings, so this one would replace the settings the executor passes (its sandbox, and hooks, auto-continue at a usage limit and model-proposed goals turned off); leave it out"
    )]
    ClaudeSettingsReplaced {
        /// The operator's argument, cut to its flag.
        arg: String,
    },
    /// No private `TMPDIR` can be made for a CLI child where `base::tmpdir` places it: a
    /// session's own is too long for Claude Code's sandbox sockets, and the short one under
    /// `/tmp` is refused (not a directory of this user's with mode 0700) or cannot be made.
    /// At start no worker runs; at a spawn that worker's child does not start.
    #[error(
        "no private TMPDIR for CLI children at {path}: {detail}; fix: give the executor a --state-dir of at most {state_dir_bytes_max} bytes (each session's own tmp then fits), or let this user own /tmp/orc-<uid> with mode 0700 (remove whatever is there now; the executor creates it)"
    )]
    TmpUnavailable {
        /// The directory that could not be used.
        path: String,
        /// Why, in one line.
        detail: String,
        /// The longest `--state-dir` that needs no short directory, in bytes.
        state_dir_bytes_max: usize,
    },
    /// A CLI kind `--kinds` asked for that this executor cannot run, or no kind at all.
    #[error("{detail}")]
    NoKind {
        /// Which kind, and why.
        detail: String,
    },
    /// The orchestrator's MCP server did not answer the handshake a CLI child would make
    /// (connection, status, or no `worker_complete` offered): a worker started without it
    /// could never complete, so nothing is sent (fail closed).
    #[error("the orchestrator's MCP server at {url} is not usable: {detail}")]
    McpUnreachable {
        /// The MCP endpoint.
        url: String,
        /// What failed (never the token).
        detail: String,
    },
    /// The codex on hand is not the pinned version, or its app-server schema lacks a method,
    /// field or value the core relies on (`surface.txt`): Codex workers are not run.
    #[error("the codex CLI does not offer what this executor relies on: {detail}")]
    CodexSurface {
        /// What moved, in one line.
        detail: String,
    },
    /// The daemon is a standby of a shared PostgreSQL store (HTTP 503 `NOT_LEADER` to the
    /// upgrade): another daemon leads it, at `leader` (its MCP URL; empty when not known).
    #[error("{url} is a standby: not the leader; the leader is {leader} (NOT_LEADER)")]
    NotLeader {
        /// The executor endpoint that answered.
        url: String,
        /// The leader's MCP URL, as the standby named it.
        leader: String,
    },
    /// The daemon refused the executor for good (`UNAUTHORIZED`, `REPLACED`, a version it
    /// does not speak): reconnecting would not help.
    #[error("the daemon refused this executor: {code}: {detail}")]
    Refused {
        /// The protocol error code.
        code: String,
        /// The daemon's detail.
        detail: String,
    },
}

impl Error {
    /// The stable code: logs and tests match on it, never on the sentence.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Malformed { .. } => "MALFORMED",
            Error::LineTooLong { .. } => "LINE_TOO_LONG",
            Error::UnknownResponse { .. } => "UNKNOWN_RESPONSE",
            Error::InFlightFull => "IN_FLIGHT_FULL",
            Error::WaitingFull => "WAITING_FULL",
            Error::ThreadsFull => "THREADS_FULL",
            Error::UnknownThread { .. } => "UNKNOWN_THREAD",
            Error::BadSession { .. } => "BAD_SESSION",
            Error::Leased { .. } => "LEASED",
            Error::Io { .. } => "IO",
            Error::Spawn { .. } => "SPAWN",
            Error::ChildGone => "CHILD_GONE",
            Error::StopFailed { .. } => "STOP_FAILED",
            Error::JournalCorrupt { .. } => "JOURNAL_CORRUPT",
            Error::JournalTooLarge { .. } => "JOURNAL_TOO_LARGE",
            Error::JournalFull => "JOURNAL_FULL",
            Error::NotJournaled { .. } => "NOT_JOURNALED",
            Error::BadOption { .. } => "BAD_OPTION",
            Error::Token { .. } => "TOKEN",
            Error::CodexMissing { .. } => "CODEX_MISSING",
            Error::ClaudeMissing { .. } => "CLAUDE_MISSING",
            Error::ClaudeSurface { .. } => "CLAUDE_SURFACE",
            Error::ClaudeSandboxUnavailable { .. } => "CLAUDE_SANDBOX_UNAVAILABLE",
            Error::ClaudeSettingsReplaced { .. } => "CLAUDE_SETTINGS_REPLACED",
            Error::TmpUnavailable { .. } => "TMP_UNAVAILABLE",
            Error::NoKind { .. } => "NO_KIND",
            Error::Refused { .. } => "REFUSED",
            Error::NotLeader { .. } => "NOT_LEADER",
            Error::McpUnreachable { .. } => "MCP_UNREACHABLE",
            Error::CodexSurface { .. } => "CODEX_SURFACE",
            Error::SessionInUse { .. } => "SESSION_IN_USE",
            Error::SessionNotFound { .. } => "SESSION_NOT_FOUND",
        }
    }
}

impl Error {
    /// An [`Error::Io`] from an OS error.
    pub(crate) fn io(op: &'static str, path: &std::path::Path, error: &std::io::Error) -> Error {
        Error::Io { op, path: path.display().to_string(), detail: error.to_string() }
    }

    /// An [`Error::Io`] from any other error (an encoding failure).
    pub(crate) fn io_text(op: &'static str, path: &std::path::Path, error: impl std::fmt::Display) -> Error {
        Error::Io { op, path: path.display().to_string(), detail: error.to_string() }
    }
}
