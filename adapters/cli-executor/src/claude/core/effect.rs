//! What the Claude core asks of its shell and reports to the daemon: effects as data.

use crate::Error;
pub use crate::base::report::Report;
use engine::ids::{CommandId, WorkerId};

/// Whether a new process starts the session or resumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// `--session-id <uuid>`: the session is new (refused if the id was ever used).
    New,
    /// `--resume <uuid>`: the session exists (its transcript is under the config home).
    Resume,
}

/// What the shell must do or report, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Start `claude` with these arguments (after the program name) for `session`, in the
    /// worker's directory with the session's own config home.
    Spawn {
        /// The session id (a uuid minted from the create command's idempotency key).
        session: String,
        /// New or resumed.
        launch: Launch,
        /// The arguments.
        args: Vec<String>,
    },
    /// Write this user line (and a newline) to the child's stdin. It carries a prompt: the
    /// shell journals the command's submission (`submission-started`) first, and writes
    /// nothing if it cannot ([`crate::claude::Claude::unsent`] then fails the command,
    /// definitely not submitted).
    Prompt {
        /// The command whose prompt it is.
        command: CommandId,
        /// Whose session.
        worker: WorkerId,
        /// The session it goes to.
        session: String,
        /// The stream-json user line (its `uuid` is the nonce).
        line: String,
    },
    /// Close the child's stdin: it ends after the running turn.
    CloseStdin,
    /// Stop the child now, its process group and all (after [`Effect::CloseStdin`], when a
    /// close finds a turn running or a line of ours in flight: the turn must not go on).
    /// The shell then tells the core the exit ([`crate::claude::Claude::exited`]).
    Stop,
    /// Write this line (and a newline) to the child's stdin at once: a `control_response`
    /// to a tool permission request (no prompt, nothing to journal).
    Write(String),
    /// A tool permission request waits for a person (`--approvals ask`): `report` is
    /// `awaiting_approval`, published with `approval`.
    Approval {
        /// Whose conversation.
        worker: WorkerId,
        /// The session.
        session: String,
        /// The `awaiting_approval` state, its detail the summary.
        report: Report,
        /// The handle and what is asked.
        approval: executor_protocol::ApprovalWire,
    },
    /// The outcome of an `approval.answer`: sent as its `command.result`, not journaled
    /// (its id is its turn's).
    Answered {
        /// The `approval.answer` command.
        command: CommandId,
        /// `Submitted` (the decision was written) or `Failed` `APPROVAL_GONE`.
        outcome: Outcome,
    },
    /// The outcome of a create, send or steer (or a withdrawn held send).
    Result {
        /// The command.
        command: CommandId,
        /// What happened.
        outcome: Outcome,
    },
    /// Where a submitted steer landed, once the stream shows it.
    Steered {
        /// The steer command.
        command: CommandId,
        /// Merged into the running turn, or queued as the next turn.
        landed: Landed,
    },
    /// A conversation's coarse state changed.
    State {
        /// Whose conversation.
        worker: WorkerId,
        /// The session (the conversation).
        session: String,
        /// What it shows.
        report: Report,
    },
    /// A turn or input the core did not start: the engine pauses the worker.
    Foreign {
        /// Whose conversation.
        worker: WorkerId,
        /// The session.
        session: String,
        /// The foreign message's uuid, when the stream named one.
        uuid: Option<String>,
    },
    /// The child exited. With `refusal`, it refused to start (nothing it was sent was
    /// read), and the core keeps the unacknowledged lines for [`crate::claude::Claude::respawn`].
    Exited {
        /// Whose conversation.
        worker: WorkerId,
        /// The session.
        session: String,
        /// The exit code (`None`: killed by a signal).
        code: Option<i32>,
        /// A definite refusal read from stderr.
        refusal: Option<Error>,
    },
}

/// Where a steer's message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landed {
    /// Absorbed into the running turn (at a tool boundary): the turn's one `result` lists it.
    Merged,
    /// Not taken by the running turn: it runs as the next turn (book it as a send).
    NextTurn,
}

/// A command's outcome, as `command.result` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The CLI took the prompt (`command_lifecycle` `queued`), or already held it.
    Submitted {
        /// The session (for a create: the new conversation).
        session: String,
        /// The prompt's nonce (its `uuid`).
        nonce: String,
        /// The session already held this nonce: the CLI did not run it again.
        duplicate: bool,
    },
    /// Not done; `code` is one of the protocol's failure codes.
    Failed {
        /// `DEADLINE_EXCEEDED`, `STEERING_UNAVAILABLE`, `CONVERSATION_CLOSED`, `CANCELLED`,
        /// `COMPOSER_BUSY` or `AMBIGUOUS_SUBMISSION` (no acknowledgment of a line that may
        /// have been read); for an `approval.answer`, `APPROVAL_GONE`.
        code: &'static str,
        /// For people.
        detail: String,
    },
}
