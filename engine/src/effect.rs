//! What the engine asks the shell to do: persist, command an executor, reply. Data only.

use crate::ids::*;
use crate::op::Reply;
use crate::record::Record;
use crate::reject::Rejection;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

/// One effect. The shell performs effects in order, and performs nothing after a
/// `Persist` until the store has acknowledged that batch as durable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Commit these records atomically and durably.
    Persist(Batch),
    /// Send a command to an executor.
    Command(ExecutorCommand),
    /// Answer a caller.
    Reply {
        /// The call being answered.
        call: CallId,
        /// The result or a typed rejection.
        result: Result<Reply, Rejection>,
    },
    /// Post a notification to its target; the answer comes back as
    /// [`crate::Input::Notified`]. Sent again (same id) until an answer settles it.
    Notify(crate::notice::Notice),
}

/// The records one mutation writes: state records plus the events it appends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// Latest versions of every changed record; later records of a key win.
    pub records: Vec<Record>,
}

/// The executor command names of the bridge protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CommandKind {
    /// Open a fresh conversation and submit the first prompt.
    Create,
    /// Submit a prompt once the conversation is idle.
    Send,
    /// Submit a prompt while the conversation is generating (mid-turn steering).
    Steer,
    /// Withdraw a command that is no longer wanted, unless its submission already began.
    Cancel,
    /// Look at the conversation again and publish its state: sent when a submitted turn
    /// has gone unreported for a while (a lost report must not stall the worker).
    Inspect,
    /// Stop managing a conversation the worker no longer uses (it was re-attached
    /// elsewhere, or lost): the executor forgets the binding and leaves the tab alone.
    Close,
    /// Answer a CLI's approval request ([`ExecutorCommand::approval`]) that holds the
    /// worker `awaiting_approval`: sent once, per the operator's `approval_answer`.
    ApprovalAnswer,
}

impl CommandKind {
    /// The wire name, e.g. `conversation.send`.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandKind::Create => "conversation.create",
            CommandKind::Send => "conversation.send",
            CommandKind::Steer => "conversation.steer",
            CommandKind::Cancel => "command.cancel",
            CommandKind::Inspect => "conversation.inspect",
            CommandKind::Close => "conversation.close",
            CommandKind::ApprovalAnswer => "approval.answer",
        }
    }
}

/// A command for one executor. Re-sent unchanged (same id, same key) after a reconnect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutorCommand {
    /// The executor that must perform it.
    pub executor: ExecutorId,
    /// Command id.
    pub id: CommandId,
    /// Stable idempotency key derived from the attempt.
    pub idempotency_key: String,
    /// The worker.
    pub worker: WorkerId,
    /// The attempt it delivers.
    pub attempt: AttemptId,
    /// What to do.
    pub kind: CommandKind,
    /// Target conversation URL (empty for create).
    pub conversation: Arc<str>,
    /// The prompt text.
    pub prompt: String,
    /// The prompt generator's version, for audit.
    pub prompt_version: Cow<'static, str>,
    /// The executor must not start submitting after this.
    pub deadline: Timestamp,
    /// The worker's executor kind (the executor was chosen for it).
    pub executor_kind: crate::kind::ExecutorKind,
    /// A CLI worker's workspace, where its session runs; `None` for ChatGPT.
    pub workspace: Option<crate::kind::Workspace>,
    /// With `approval.answer`: which request and the person's decision; `None` otherwise.
    pub approval: Option<ApprovalAnswer>,
}

/// The answer an `approval.answer` command carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalAnswer {
    /// The request's id, as the executor reported it.
    pub id: Arc<str>,
    /// What the person decided.
    pub decision: crate::model::ApprovalDecision,
}
