//! What the Codex core asks of its shell and reports to the daemon: effects as data.

use super::record::ThreadRecord;
pub use crate::base::report::Report;
use crate::codex::jsonrpc::RpcError;
use engine::ids::{CommandId, WorkerId};

/// What the shell must do or report, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Write this line (and a newline) to the app-server's stdin.
    Write(String),
    /// Write this line too, but it carries a prompt: the shell journals the command's
    /// submission (`submission-started`) first, and writes nothing if it cannot
    /// ([`crate::codex::Codex::unsent`] then fails the command, definitely not submitted).
    Prompt {
        /// The command whose prompt it is.
        command: CommandId,
        /// Whose thread.
        worker: WorkerId,
        /// The thread it goes to.
        thread: String,
        /// The `turn/start` or `turn/steer` request line.
        line: String,
    },
    /// The outcome of a create, send or steer (or a withdrawn held send).
    Result {
        /// The command.
        command: CommandId,
        /// What happened.
        outcome: Outcome,
    },
    /// A conversation's coarse state changed.
    State {
        /// Whose conversation.
        worker: WorkerId,
        /// The thread (the conversation).
        thread: String,
        /// What it shows.
        report: Report,
    },
    /// An approval request waits for a person (`--approvals ask`): `report` is
    /// `awaiting_approval`, published with `approval`.
    Approval {
        /// Whose conversation.
        worker: WorkerId,
        /// The thread.
        thread: String,
        /// The state, with what is asked as its detail.
        report: Report,
        /// The request's handle, kind and summary.
        approval: executor_protocol::ApprovalWire,
    },
    /// The outcome of an `approval.answer`: sent as its `command.result` but not
    /// journaled (the command id is its turn's, whose own result the journal keeps).
    Answered {
        /// The command.
        command: CommandId,
        /// `Submitted` (the decision was written) or `Failed` `APPROVAL_GONE`.
        outcome: Outcome,
    },
    /// A turn the core did not start: the engine pauses the worker.
    Foreign {
        /// Whose conversation.
        worker: WorkerId,
        /// The thread.
        thread: String,
        /// The foreign turn.
        turn: String,
    },
    /// A `thread/read` came back (for `conversation.inspect`): reconciliation reads it.
    Thread {
        /// Whose conversation.
        worker: WorkerId,
        /// What the app-server holds.
        record: ThreadRecord,
    },
    /// Stop the child (its process group, then its lease), and do not start another for
    /// it: its last thread was closed (`conversation.close`) and nothing else waits on it.
    /// Asked only once every effect before it was drained; the core is spent after it
    /// ([`crate::codex::Codex::stopped`]).
    Stop,
    /// A request without a command behind it went unanswered or was refused: the child is
    /// not serving us (the shell restarts it).
    Unresponsive {
        /// The method.
        method: &'static str,
        /// The refusal, when there was one.
        error: Option<RpcError>,
    },
}

/// A command's outcome, as `command.result` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The app-server accepted the prompt into `turn` of `thread`.
    Submitted {
        /// The thread (for a create: the new conversation).
        thread: String,
        /// The turn the prompt went into.
        turn: String,
    },
    /// Not done; `code` is one of the protocol's failure codes.
    Failed {
        /// `DEADLINE_EXCEEDED`, `STEERING_UNAVAILABLE`, `CONVERSATION_CLOSED`, `CANCELLED`,
        /// `COMPOSER_BUSY`, `HOST_UI_CHANGED` (the CLI refused: fail closed) or
        /// `AMBIGUOUS_SUBMISSION` (no answer to a prompt that may have gone in), or for
        /// an `approval.answer`, `APPROVAL_GONE` (no such request waits).
        code: &'static str,
        /// For people.
        detail: String,
    },
}
