//! Typed domain rejections with stable codes: what a caller did wrong, never a panic.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The stable code of a rejection. Codes never change meaning; new ones are appended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RejectionCode {
    /// An argument is malformed, out of range or too long; the message names the field.
    InvalidArgument,
    /// A continuation policy violates its limits.
    InvalidPolicy,
    /// No run has this id.
    UnknownRun,
    /// No worker has this id (or name in this run).
    UnknownWorker,
    /// A worker with this name already exists in the run.
    DuplicateWorkerName,
    /// The parent of a hierarchical worker name does not exist.
    ParentWorkerMissing,
    /// The run is cancelled, failed or completed.
    RunTerminal,
    /// The worker is completed, failed or cancelled.
    WorkerTerminal,
    /// The worker waits for a human; resolve the wait (or override it) first.
    WorkerAwaitingHuman,
    /// The worker waits for a dependency; release it (or override it) first.
    WorkerAwaitingDependency,
    /// The operation needs a human wait that does not exist.
    NotAwaitingHuman,
    /// `approval_answer` names no approval request waiting on that worker (none waits, it
    /// was answered already, or another one waits), or no executor is connected to take it.
    NotAwaitingApproval,
    /// The operation needs a dependency wait that does not exist.
    NotAwaitingDependency,
    /// `/root` cannot complete while other workers of the run are unfinished.
    RunHasUnfinishedWorkers,
    /// The conversation is already bound to another live worker.
    ConversationInUse,
    /// A count limit (workers per run, runs) would be exceeded.
    LimitExceeded,
    /// `/root` cannot be interrupted or failed this way; cancel the run instead.
    RootLifecycle,
    /// A `codex` or `claude` worker was spawned without `workspace.directory` (and has no
    /// CLI parent to inherit one from).
    WorkspaceRequired,
}

impl RejectionCode {
    /// The stable wire code, e.g. `WORKER_TERMINAL`.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectionCode::InvalidArgument => "INVALID_ARGUMENT",
            RejectionCode::InvalidPolicy => "INVALID_POLICY",
            RejectionCode::UnknownRun => "UNKNOWN_RUN",
            RejectionCode::UnknownWorker => "UNKNOWN_WORKER",
            RejectionCode::DuplicateWorkerName => "DUPLICATE_WORKER_NAME",
            RejectionCode::ParentWorkerMissing => "PARENT_WORKER_MISSING",
            RejectionCode::RunTerminal => "RUN_TERMINAL",
            RejectionCode::WorkerTerminal => "WORKER_TERMINAL",
            RejectionCode::WorkerAwaitingHuman => "WORKER_AWAITING_HUMAN",
            RejectionCode::WorkerAwaitingDependency => "WORKER_AWAITING_DEPENDENCY",
            RejectionCode::NotAwaitingHuman => "NOT_AWAITING_HUMAN",
            RejectionCode::NotAwaitingApproval => "NOT_AWAITING_APPROVAL",
            RejectionCode::NotAwaitingDependency => "NOT_AWAITING_DEPENDENCY",
            RejectionCode::RunHasUnfinishedWorkers => "RUN_HAS_UNFINISHED_WORKERS",
            RejectionCode::ConversationInUse => "CONVERSATION_IN_USE",
            RejectionCode::LimitExceeded => "LIMIT_EXCEEDED",
            RejectionCode::RootLifecycle => "ROOT_LIFECYCLE",
            RejectionCode::WorkspaceRequired => "WORKSPACE_REQUIRED",
        }
    }

    /// Every code, for documentation and exhaustiveness tests.
    pub const ALL: [RejectionCode; 18] = [
        RejectionCode::InvalidArgument,
        RejectionCode::InvalidPolicy,
        RejectionCode::UnknownRun,
        RejectionCode::UnknownWorker,
        RejectionCode::DuplicateWorkerName,
        RejectionCode::ParentWorkerMissing,
        RejectionCode::RunTerminal,
        RejectionCode::WorkerTerminal,
        RejectionCode::WorkerAwaitingHuman,
        RejectionCode::WorkerAwaitingDependency,
        RejectionCode::NotAwaitingHuman,
        RejectionCode::NotAwaitingApproval,
        RejectionCode::NotAwaitingDependency,
        RejectionCode::RunHasUnfinishedWorkers,
        RejectionCode::ConversationInUse,
        RejectionCode::LimitExceeded,
        RejectionCode::RootLifecycle,
        RejectionCode::WorkspaceRequired,
    ];
}

/// A refused operation: a stable code and a sentence the caller (often an agent) can act on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// What kind of refusal this is.
    pub code: RejectionCode,
    /// What to do about it, in words.
    pub message: String,
}

impl Rejection {
    /// A rejection with a code and a message.
    pub fn new(code: RejectionCode, message: &str) -> Rejection {
        Rejection { code, message: message.to_string() }
    }

    /// An `INVALID_ARGUMENT` rejection naming the offending field.
    pub fn invalid(field: &str, problem: &str) -> Rejection {
        Rejection { code: RejectionCode::InvalidArgument, message: format!("{field}: {problem}") }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_screaming_snake() {
        let mut seen = std::collections::BTreeSet::new();
        for code in RejectionCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(s.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'), "{s}");
        }
    }
}
