//! Daemon to executor: `welcome`, `command` (with a CLI approval's answer) and
//! `protocol.error`, with the exact conversions from and to the engine's
//! [`ExecutorCommand`].

use super::{ExecutorKindWire, WorkspaceWire, approval_id, command_id, printed};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::{CommandKind, ExecutorCommand, Timestamp};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

/// `welcome`: the hello was accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Welcome {
    /// The protocol version the daemon speaks on this connection.
    pub protocol: u32,
    /// The executor id the daemon registered.
    pub executor_id: String,
    /// Send a heartbeat (or anything) at least this often.
    pub heartbeat_ms: u64,
    /// The largest message the daemon accepts, in bytes.
    pub message_bytes_max: u64,
    /// Messages per second the daemon accepts (sustained).
    pub messages_per_second_max: u32,
}

/// `command`: something for the executor to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandWire {
    /// Command id (`cmd-N`, one per attempt); re-sent unchanged after a reconnect.
    #[serde(with = "command_id")]
    pub command_id: CommandId,
    /// What to do.
    pub kind: KindWire,
    /// Stable key derived from the attempt: never submit the same key twice.
    pub idempotency_key: String,
    /// The worker.
    #[serde(with = "printed")]
    pub worker_id: WorkerId,
    /// The attempt the command delivers.
    #[serde(with = "printed")]
    pub attempt_id: AttemptId,
    /// The target conversation (empty for `conversation.create`).
    pub conversation_url: String,
    /// The prompt text.
    pub prompt: String,
    /// The prompt generator's version, for audit.
    pub prompt_version: String,
    /// Do not start submitting after this time (ms since the Unix epoch).
    pub deadline: u64,
    /// The worker's executor kind, for a CLI worker (absent: `chatgpt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_kind: Option<ExecutorKindWire>,
    /// A CLI worker's workspace: where its session runs (absent for ChatGPT workers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceWire>,
    /// With `approval.answer`: the request answered and the person's decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalAnswerWire>,
}

/// `approval` of an `approval.answer` command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalAnswerWire {
    /// The request's id, as `conversation.state` reported it.
    #[serde(deserialize_with = "approval_id::deserialize")]
    pub approval_id: String,
    /// `approve` or `decline`.
    pub decision: ApprovalDecisionWire,
}

/// A person's decision on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecisionWire {
    /// Go on with it.
    Approve,
    /// Refuse it.
    Decline,
}

impl From<ApprovalDecisionWire> for engine::model::ApprovalDecision {
    fn from(d: ApprovalDecisionWire) -> engine::model::ApprovalDecision {
        match d {
            ApprovalDecisionWire::Approve => engine::model::ApprovalDecision::Approve,
            ApprovalDecisionWire::Decline => engine::model::ApprovalDecision::Decline,
        }
    }
}

impl From<engine::model::ApprovalDecision> for ApprovalDecisionWire {
    fn from(d: engine::model::ApprovalDecision) -> ApprovalDecisionWire {
        match d {
            engine::model::ApprovalDecision::Approve => ApprovalDecisionWire::Approve,
            engine::model::ApprovalDecision::Decline => ApprovalDecisionWire::Decline,
        }
    }
}

impl From<&ExecutorCommand> for CommandWire {
    fn from(c: &ExecutorCommand) -> CommandWire {
        CommandWire {
            command_id: c.id,
            kind: c.kind.into(),
            idempotency_key: c.idempotency_key.clone(),
            worker_id: c.worker,
            attempt_id: c.attempt,
            conversation_url: c.conversation.to_string(),
            prompt: c.prompt.clone(),
            prompt_version: c.prompt_version.to_string(),
            deadline: c.deadline.0,
            executor_kind: c.executor_kind.is_cli().then(|| c.executor_kind.into()),
            workspace: c.workspace.as_ref().map(WorkspaceWire::from),
            approval: c
                .approval
                .as_ref()
                .map(|a| ApprovalAnswerWire { approval_id: a.id.to_string(), decision: a.decision.into() }),
        }
    }
}

impl CommandWire {
    /// The engine's command, addressed to `executor`.
    pub fn into_engine(self, executor: ExecutorId) -> ExecutorCommand {
        ExecutorCommand {
            executor,
            id: self.command_id,
            idempotency_key: self.idempotency_key,
            worker: self.worker_id,
            attempt: self.attempt_id,
            kind: self.kind.into(),
            conversation: Arc::from(self.conversation_url),
            prompt: self.prompt,
            prompt_version: Cow::Owned(self.prompt_version),
            deadline: Timestamp(self.deadline),
            executor_kind: self.executor_kind.map(engine::ExecutorKind::from).unwrap_or_default(),
            workspace: self.workspace.map(engine::Workspace::from),
            approval: self
                .approval
                .map(|a| engine::effect::ApprovalAnswer { id: Arc::from(a.approval_id), decision: a.decision.into() }),
        }
    }
}

/// Command kinds on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KindWire {
    /// Open a fresh conversation and submit the first prompt.
    #[serde(rename = "conversation.create")]
    Create,
    /// Submit once the conversation is idle.
    #[serde(rename = "conversation.send")]
    Send,
    /// Submit while generating (mid-turn steering).
    #[serde(rename = "conversation.steer")]
    Steer,
    /// Withdraw the command with this id unless its submission already began.
    #[serde(rename = "command.cancel")]
    Cancel,
    /// Look at the conversation again and publish its state.
    #[serde(rename = "conversation.inspect")]
    Inspect,
    /// Stop managing the conversation; leave its tab alone.
    #[serde(rename = "conversation.close")]
    Close,
    /// Answer the CLI approval request named in `approval` (a CLI executor in `ask` mode).
    #[serde(rename = "approval.answer")]
    ApprovalAnswer,
}

impl From<CommandKind> for KindWire {
    fn from(k: CommandKind) -> KindWire {
        match k {
            CommandKind::Create => KindWire::Create,
            CommandKind::Send => KindWire::Send,
            CommandKind::Steer => KindWire::Steer,
            CommandKind::Cancel => KindWire::Cancel,
            CommandKind::Inspect => KindWire::Inspect,
            CommandKind::Close => KindWire::Close,
            CommandKind::ApprovalAnswer => KindWire::ApprovalAnswer,
        }
    }
}

impl From<KindWire> for CommandKind {
    fn from(k: KindWire) -> CommandKind {
        match k {
            KindWire::Create => CommandKind::Create,
            KindWire::Send => CommandKind::Send,
            KindWire::Steer => CommandKind::Steer,
            KindWire::Cancel => CommandKind::Cancel,
            KindWire::Inspect => CommandKind::Inspect,
            KindWire::Close => CommandKind::Close,
            KindWire::ApprovalAnswer => CommandKind::ApprovalAnswer,
        }
    }
}

/// `protocol.error`: what the daemon could not accept, with a stable code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProtocolError {
    /// The stable code.
    pub code: ProtocolErrorCode,
    /// Detail for people (and logs).
    pub detail: String,
}

/// Stable `protocol.error` codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProtocolErrorCode {
    /// Not JSON, or JSON that does not fit any message. The connection stays open.
    Malformed,
    /// `v` (or `hello.protocol`) is a number but not a version the daemon speaks. Closes.
    /// (A `v` that is missing or not a number is `Malformed`: it claims no version.)
    UnsupportedVersion,
    /// Larger than `messageBytesMax`. Closes.
    TooLarge,
    /// More messages than the rate cap allows. The message is dropped; the connection stays.
    RateLimited,
    /// The first message was not a `hello`. Closes.
    HelloRequired,
    /// The token in `hello` is wrong. Closes.
    Unauthorized,
    /// The executor id is empty, too long or not printable ASCII. Closes.
    InvalidExecutorId,
    /// A second `hello` on the same connection. Dropped.
    DuplicateHello,
    /// Another connection took over this executor id. Closes.
    Replaced,
    /// A later start of this executor id (a higher `hello.epoch`) connected: this one is
    /// the older process, on a replaced host or a second copy, and must stop. Closes.
    Superseded,
    /// `hello.accounts` names an account wrongly (a kind the executor does not run, a bad
    /// name, a cap of no turns, two for one kind, too many). Closes.
    InvalidAccount,
}

impl ProtocolErrorCode {
    /// Whether the daemon closes the connection after this error.
    pub fn closes(self) -> bool {
        !matches!(
            self,
            ProtocolErrorCode::Malformed | ProtocolErrorCode::RateLimited | ProtocolErrorCode::DuplicateHello
        )
    }
}
