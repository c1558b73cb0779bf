//! The messages of protocol version 1 and their exact conversions to and from the
//! engine's executor types. Field names are camelCase; ids travel in their printed form
//! (`wrk-7`, `exe-12`, `cmd-12`); times are milliseconds since the Unix epoch. The
//! operator channel's messages are in `operator.rs`, its OAuth approval in `oauth.rs`,
//! the executor kinds and a CLI worker's workspace in `kind.rs`, a CLI steer's landing in
//! `landing.rs`.

mod kind;
mod landing;
mod oauth;
mod operator;

pub use kind::*;
pub use landing::*;
pub use oauth::*;
pub use operator::*;

use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::model::{ConversationState, ErrorKind};
use engine::{
    BindingReport, CommandKind, CommandOutcome, ExecErrorCode, ExecutorCommand, ExecutorInput, JournalEntry,
    JournalPhase, Observation, Timestamp,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

/// The protocol version this crate speaks; every message carries it as `v`.
pub const PROTOCOL_VERSION: u32 = 1;

/// A message from an executor to the daemon.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ExecutorMessage {
    /// The first message of every connection: who the executor is and what it holds.
    #[serde(rename = "hello")]
    Hello(Hello),
    /// A binding was verified (a new conversation's URL settled) or closed.
    #[serde(rename = "binding")]
    Binding(BindingWire),
    /// A conversation's coarse state changed (coalesced by the executor).
    #[serde(rename = "conversation.state")]
    State(StateWire),
    /// The result of a command.
    #[serde(rename = "command.result")]
    Result(ResultWire),
    /// Keeps the connection (and the browser's background worker) alive.
    #[serde(rename = "heartbeat")]
    Heartbeat {},
    /// An operator action from the extension's UI (operator channel).
    #[serde(rename = "operator.action")]
    OperatorAction(OperatorActionWire),
    /// A read-only question from the extension's UI (operator channel).
    #[serde(rename = "operator.query")]
    OperatorQuery(OperatorQueryWire),
    /// Where a submitted steer landed in a CLI session (merged, or the next turn).
    #[serde(rename = "steer.landed")]
    SteerLanded(SteerLandedWire),
}

impl ExecutorMessage {
    /// The wire name (`type`).
    pub fn type_name(&self) -> &'static str {
        match self {
            ExecutorMessage::Hello(_) => "hello",
            ExecutorMessage::Binding(_) => "binding",
            ExecutorMessage::State(_) => "conversation.state",
            ExecutorMessage::Result(_) => "command.result",
            ExecutorMessage::Heartbeat {} => "heartbeat",
            ExecutorMessage::OperatorAction(_) => "operator.action",
            ExecutorMessage::OperatorQuery(_) => "operator.query",
            ExecutorMessage::SteerLanded(_) => "steer.landed",
        }
    }

    /// The engine input this message carries for `executor` (heartbeats and the operator
    /// channel carry none: actions are operations, see [`OperatorActionWire::to_request`],
    /// and queries are reads, see [`OperatorQueryWire::to_query`]).
    /// A `hello` names its own executor; `executor` is ignored for it.
    pub fn into_input(self, executor: &ExecutorId) -> Option<ExecutorInput> {
        match self {
            ExecutorMessage::Hello(hello) => Some(hello.into_input()),
            ExecutorMessage::Binding(b) => {
                Some(ExecutorInput::Binding { executor: executor.clone(), report: BindingReport::from(b) })
            }
            ExecutorMessage::State(s) => Some(ExecutorInput::State {
                executor: executor.clone(),
                worker: s.worker_id,
                observation: s.observation(),
            }),
            ExecutorMessage::Result(r) => Some(ExecutorInput::Result {
                executor: executor.clone(),
                command: r.command_id,
                outcome: CommandOutcome::from(r.outcome),
            }),
            ExecutorMessage::SteerLanded(l) => Some(l.into_input(executor)),
            ExecutorMessage::Heartbeat {} | ExecutorMessage::OperatorAction(_) | ExecutorMessage::OperatorQuery(_) => {
                None
            }
        }
    }
}

/// A message from the daemon to an executor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum DaemonMessage {
    /// The answer to an accepted `hello`.
    #[serde(rename = "welcome")]
    Welcome(Welcome),
    /// Something to do.
    #[serde(rename = "command")]
    Command(CommandWire),
    /// The executor sent something the daemon could not accept.
    #[serde(rename = "protocol.error")]
    ProtocolError(ProtocolError),
    /// The answer to an `operator.action`.
    #[serde(rename = "operator.result")]
    OperatorResult(OperatorResultWire),
    /// Compact run and worker summaries for the operator UI, pushed when they change.
    #[serde(rename = "operator.summary")]
    OperatorSummary(OperatorSummaryWire),
    /// The answer to an `operator.query`.
    #[serde(rename = "operator.data")]
    OperatorData(OperatorDataWire),
}

impl DaemonMessage {
    /// The wire name (`type`).
    pub fn type_name(&self) -> &'static str {
        match self {
            DaemonMessage::Welcome(_) => "welcome",
            DaemonMessage::Command(_) => "command",
            DaemonMessage::ProtocolError(_) => "protocol.error",
            DaemonMessage::OperatorResult(_) => "operator.result",
            DaemonMessage::OperatorSummary(_) => "operator.summary",
            DaemonMessage::OperatorData(_) => "operator.data",
        }
    }
}

/// `hello`: the executor introduces itself and republishes its bindings and journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// The executor token (`DIR/executor-token`), separate from the MCP token.
    pub token: String,
    /// The executor's own stable name (1 to 128 printable ASCII characters).
    pub executor_id: String,
    /// The protocol version the executor speaks.
    pub protocol: u32,
    /// What it can do.
    pub capabilities: Capabilities,
    /// How many commands it works on at once (at most one per worker).
    pub concurrency_max: u32,
    /// The managed bindings it holds, with their observed state.
    pub bindings: Vec<BindingWire>,
    /// Its journal of recent commands.
    pub journal: Vec<JournalWire>,
}

impl Hello {
    /// The engine's `Hello` (the token, protocol and concurrency stay with the bridge).
    pub fn into_input(self) -> ExecutorInput {
        ExecutorInput::Hello {
            executor: ExecutorId::new(&self.executor_id),
            steering: self.capabilities.steering,
            kinds: kinds_of(self.capabilities.kinds.as_deref()),
            bindings: self.bindings.into_iter().map(BindingReport::from).collect(),
            journal: self.journal.into_iter().map(JournalEntry::from).collect(),
        }
    }
}

/// What an executor can do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// It can submit mid-turn steering while a turn is generating.
    pub steering: bool,
    /// It renders the operator UI: the daemon pushes `operator.summary` messages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub operator: bool,
    /// The executor kinds whose workers it runs (`["codex"]` for the CLI executor);
    /// absent means `["chatgpt"]`, what the browser extension runs. Only workers of these
    /// kinds get commands through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<ExecutorKindWire>>,
}

/// A binding: the worker's managed tab and its conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingWire {
    /// The worker the managed tab belongs to.
    #[serde(with = "printed")]
    pub worker_id: WorkerId,
    /// The conversation URL.
    pub conversation_url: String,
    /// Still open (`false`: closed).
    pub open: bool,
    /// The current observed state, when the tab is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<ObservationWire>,
}

impl From<BindingWire> for BindingReport {
    fn from(b: BindingWire) -> BindingReport {
        BindingReport {
            worker: b.worker_id,
            conversation: Arc::from(b.conversation_url),
            open: b.open,
            observation: b.observation.map(Observation::from),
        }
    }
}

impl From<&BindingReport> for BindingWire {
    fn from(b: &BindingReport) -> BindingWire {
        BindingWire {
            worker_id: b.worker,
            conversation_url: b.conversation.to_string(),
            open: b.open,
            observation: b.observation.as_ref().map(ObservationWire::from),
        }
    }
}

/// One coarse state observation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservationWire {
    /// The coarse state.
    pub state: StateName,
    /// With `state: "error"`: the classified kind (`generic` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKindWire>,
    /// Per-binding sequence, increasing with every observation of that binding.
    pub seq: u64,
    /// When idle: the tail of the last assistant turn's end-of-response block (untrusted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// With `usage_limit` or `rate_limited`: when the page says the limit lifts (ms since
    /// the Unix epoch); absent when it names no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// Page text for people (a dialog's heading, a limit notice): untrusted, capped and
    /// cleaned on decode ([`page_detail`]).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "page_detail::deserialize")]
    pub detail: Option<String>,
    /// With `awaiting_approval` from a CLI executor in its `ask` mode: the request waiting
    /// for a person (absent for ChatGPT's card, answered in its page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalWire>,
}

/// A CLI approval request waiting for a person (`approval` of `conversation.state`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalWire {
    /// The executor's handle for it (1 to 64 printable ASCII characters), which the
    /// answer names.
    #[serde(deserialize_with = "approval_id::deserialize")]
    pub id: String,
    /// `command` or `file_change`.
    pub kind: ApprovalKindWire,
    /// What is asked (untrusted; cleaned and capped on decode like `detail`).
    #[serde(deserialize_with = "page_detail::deserialize_text")]
    pub summary: String,
}

/// What an approval request asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalKindWire {
    /// Run a command line.
    Command,
    /// Apply file changes.
    FileChange,
}

impl ApprovalKindWire {
    fn as_str(self) -> &'static str {
        match self {
            ApprovalKindWire::Command => "command",
            ApprovalKindWire::FileChange => "file_change",
        }
    }
}

impl From<ApprovalWire> for engine::model::PendingApproval {
    fn from(a: ApprovalWire) -> engine::model::PendingApproval {
        engine::model::PendingApproval {
            id: Arc::from(a.id),
            kind: Arc::from(a.kind.as_str()),
            summary: Arc::from(a.summary),
        }
    }
}

impl From<&engine::model::PendingApproval> for ApprovalWire {
    fn from(a: &engine::model::PendingApproval) -> ApprovalWire {
        let kind = if &*a.kind == "file_change" { ApprovalKindWire::FileChange } else { ApprovalKindWire::Command };
        ApprovalWire { id: a.id.to_string(), kind, summary: a.summary.to_string() }
    }
}

mod approval_id {
    //! An approval id on decode: 1 to 64 printable ASCII characters, or the message is
    //! malformed (it is echoed back in `approval.answer`, so it must be safe to show).
    use serde::{Deserialize, Deserializer, de::Error};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        let id = String::deserialize(d)?;
        let printable = id.bytes().all(|b| b.is_ascii_graphic());
        if id.is_empty() || id.len() > 64 || !printable {
            return Err(D::Error::custom("approval id: 1 to 64 printable ASCII characters"));
        }
        Ok(id)
    }
}

impl From<ObservationWire> for Observation {
    fn from(o: ObservationWire) -> Observation {
        Observation {
            state: o.state.to_engine(o.error_kind),
            seq: o.seq,
            block: o.block,
            until: o.until_ms.map(Timestamp),
            detail: o.detail.map(Arc::from),
            approval: o.approval.map(Into::into),
        }
    }
}

impl From<&Observation> for ObservationWire {
    fn from(o: &Observation) -> ObservationWire {
        let (state, error_kind) = StateName::from_engine(o.state);
        ObservationWire {
            state,
            error_kind,
            seq: o.seq,
            block: o.block.clone(),
            until_ms: o.until.map(|t| t.0),
            detail: o.detail.as_deref().map(String::from),
            approval: o.approval.as_ref().map(ApprovalWire::from),
        }
    }
}

/// `conversation.state`: a worker's conversation changed state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateWire {
    /// Whose conversation.
    #[serde(with = "printed")]
    pub worker_id: WorkerId,
    /// The coarse state.
    pub state: StateName,
    /// With `state: "error"`: the classified kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKindWire>,
    /// Per-binding sequence.
    pub seq: u64,
    /// When idle: the end-of-response block's tail (untrusted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// With `usage_limit` or `rate_limited`: when the page says the limit lifts (ms since
    /// the Unix epoch); absent when it names no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// Page text for people (a dialog's heading, a limit notice): untrusted, capped and
    /// cleaned on decode ([`page_detail`]).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "page_detail::deserialize")]
    pub detail: Option<String>,
    /// With `awaiting_approval` from a CLI executor in its `ask` mode: the request waiting
    /// for a person, which `approval.answer` names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalWire>,
}

impl StateWire {
    /// The engine's observation.
    pub fn observation(self) -> Observation {
        let StateWire { state, error_kind, seq, block, until_ms, detail, approval, .. } = self;
        ObservationWire { state, error_kind, seq, block, until_ms, detail, approval }.into()
    }

    /// The message for `worker`'s observation.
    pub fn new(worker: WorkerId, o: &Observation) -> StateWire {
        let ObservationWire { state, error_kind, seq, block, until_ms, detail, approval } = ObservationWire::from(o);
        StateWire { worker_id: worker, state, error_kind, seq, block, until_ms, detail, approval }
    }
}

/// Page text an executor passes on (`detail`): untrusted, for people only. Control
/// characters become spaces, runs of whitespace one space, and anything past
/// [`engine::limits::PAGE_DETAIL_CHARS_MAX`] characters is cut (with an ellipsis): long
/// text is truncated, never refused. Empty text is no text.
pub mod page_detail {
    use engine::limits::PAGE_DETAIL_CHARS_MAX;
    use serde::{Deserialize, Deserializer};

    /// Cleans and caps one text.
    pub fn clean(text: &str) -> Option<String> {
        let words: Vec<&str> =
            text.split(|c: char| c.is_control() || c.is_whitespace()).filter(|w| !w.is_empty()).collect();
        let joined = words.join(" ");
        if joined.is_empty() {
            return None;
        }
        Some(match joined.char_indices().nth(PAGE_DETAIL_CHARS_MAX) {
            Some((end, _)) => {
                let keep = joined[..end].char_indices().nth(PAGE_DETAIL_CHARS_MAX - 1).map_or(end, |(i, _)| i);
                format!("{}…", &joined[..keep])
            }
            None => joined,
        })
    }

    /// Serde: an optional string, cleaned.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.as_deref().and_then(clean))
    }

    /// Serde: a required string, cleaned (empty when nothing is left).
    pub fn deserialize_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Ok(clean(&String::deserialize(d)?).unwrap_or_default())
    }
}

/// The coarse conversation states on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateName {
    /// Nothing known yet.
    Unknown,
    /// Loaded, composer usable, nothing generating.
    Ready,
    /// A turn is being generated.
    Generating,
    /// The last turn ended.
    Idle,
    /// An error card is showing (see `errorKind`).
    Error,
    /// The tab is gone.
    Closed,
    /// A tool-approval card ("Allow ChatGPT to use <App>?") waits for a person; the app's
    /// name in `detail`.
    #[serde(rename = "awaiting_approval")]
    AwaitingApproval,
}

impl StateName {
    /// The engine state; an error without a kind is `generic`, a kind on another state
    /// is ignored.
    pub fn to_engine(self, kind: Option<ErrorKindWire>) -> ConversationState {
        match self {
            StateName::Unknown => ConversationState::Unknown,
            StateName::Ready => ConversationState::Ready,
            StateName::Generating => ConversationState::Generating,
            StateName::Idle => ConversationState::Idle,
            StateName::Error => ConversationState::Error(kind.unwrap_or(ErrorKindWire::Generic).into()),
            StateName::Closed => ConversationState::Closed,
            StateName::AwaitingApproval => ConversationState::AwaitingApproval,
        }
    }

    /// The wire state and error kind of an engine state.
    pub fn from_engine(state: ConversationState) -> (StateName, Option<ErrorKindWire>) {
        match state {
            ConversationState::Unknown => (StateName::Unknown, None),
            ConversationState::Ready => (StateName::Ready, None),
            ConversationState::Generating => (StateName::Generating, None),
            ConversationState::Idle => (StateName::Idle, None),
            ConversationState::Error(kind) => (StateName::Error, Some(kind.into())),
            ConversationState::Closed => (StateName::Closed, None),
            ConversationState::AwaitingApproval => (StateName::AwaitingApproval, None),
        }
    }
}

/// A classified page error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKindWire {
    /// "Message delivery timed out".
    DeliveryTimeout,
    /// The conversation reached its maximum length.
    ConversationFull,
    /// Composer, send or stop controls not found.
    HostUiChanged,
    /// A usage limit.
    UsageLimit,
    /// Logged out.
    LoginRequired,
    /// "Too many requests": slow down until the page's time (or a default wait).
    RateLimited,
    /// "Suspicious activity detected".
    SuspiciousActivity,
    /// A human check ("Just a moment...", "Verify you are human").
    Challenge,
    /// An unknown modal dialog the executor must never dismiss.
    BlockedByDialog,
    /// A turn the orchestrator did not start ran in a CLI session.
    ForeignTurn,
    /// The conversation lost the orchestrator's app ("FORBIDDEN: This conversation does
    /// not support developer MCPs", "<App> tool has been disabled").
    AppUnavailable,
    /// Any other error card; also what an unknown kind decodes to.
    #[serde(other)]
    Generic,
}

impl From<ErrorKindWire> for ErrorKind {
    fn from(k: ErrorKindWire) -> ErrorKind {
        match k {
            ErrorKindWire::DeliveryTimeout => ErrorKind::DeliveryTimeout,
            ErrorKindWire::ConversationFull => ErrorKind::ConversationFull,
            ErrorKindWire::HostUiChanged => ErrorKind::HostUiChanged,
            ErrorKindWire::UsageLimit => ErrorKind::UsageLimit,
            ErrorKindWire::LoginRequired => ErrorKind::LoginRequired,
            ErrorKindWire::RateLimited => ErrorKind::RateLimited,
            ErrorKindWire::SuspiciousActivity => ErrorKind::SuspiciousActivity,
            ErrorKindWire::Challenge => ErrorKind::Challenge,
            ErrorKindWire::BlockedByDialog => ErrorKind::BlockedByDialog,
            ErrorKindWire::AppUnavailable => ErrorKind::AppUnavailable,
            ErrorKindWire::ForeignTurn => ErrorKind::ForeignTurn,
            ErrorKindWire::Generic => ErrorKind::Generic,
        }
    }
}

impl From<ErrorKind> for ErrorKindWire {
    fn from(k: ErrorKind) -> ErrorKindWire {
        match k {
            ErrorKind::DeliveryTimeout => ErrorKindWire::DeliveryTimeout,
            ErrorKind::ConversationFull => ErrorKindWire::ConversationFull,
            ErrorKind::HostUiChanged => ErrorKindWire::HostUiChanged,
            ErrorKind::UsageLimit => ErrorKindWire::UsageLimit,
            ErrorKind::LoginRequired => ErrorKindWire::LoginRequired,
            ErrorKind::RateLimited => ErrorKindWire::RateLimited,
            ErrorKind::SuspiciousActivity => ErrorKindWire::SuspiciousActivity,
            ErrorKind::Challenge => ErrorKindWire::Challenge,
            ErrorKind::BlockedByDialog => ErrorKindWire::BlockedByDialog,
            ErrorKind::AppUnavailable => ErrorKindWire::AppUnavailable,
            ErrorKind::ForeignTurn => ErrorKindWire::ForeignTurn,
            ErrorKind::Generic => ErrorKindWire::Generic,
        }
    }
}

/// One journal line republished in `hello`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalWire {
    /// The command.
    #[serde(with = "command_id")]
    pub command_id: CommandId,
    /// How far the executor got.
    pub phase: PhaseWire,
    /// The binding's state sequence at submission (0 before).
    #[serde(default)]
    pub state_seq: u64,
    /// The URL a `conversation.create` produced, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_url: Option<String>,
}

impl From<JournalWire> for JournalEntry {
    fn from(j: JournalWire) -> JournalEntry {
        JournalEntry {
            command: j.command_id,
            phase: j.phase.into(),
            state_seq: j.state_seq,
            conversation: j.conversation_url.map(Arc::from),
        }
    }
}

impl From<&JournalEntry> for JournalWire {
    fn from(j: &JournalEntry) -> JournalWire {
        JournalWire {
            command_id: j.command,
            phase: j.phase.into(),
            state_seq: j.state_seq,
            conversation_url: j.conversation.as_ref().map(|c| c.to_string()),
        }
    }
}

/// Journal phases on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseWire {
    /// Received and queued; nothing typed yet.
    Received,
    /// Typing or clicking began; delivery unknown without proof.
    SubmissionStarted,
    /// The page accepted the prompt.
    Submitted,
    /// The command finished and its result was stored.
    Completed,
}

impl From<PhaseWire> for JournalPhase {
    fn from(p: PhaseWire) -> JournalPhase {
        match p {
            PhaseWire::Received => JournalPhase::Received,
            PhaseWire::SubmissionStarted => JournalPhase::SubmissionStarted,
            PhaseWire::Submitted => JournalPhase::Submitted,
            PhaseWire::Completed => JournalPhase::Completed,
        }
    }
}

impl From<JournalPhase> for PhaseWire {
    fn from(p: JournalPhase) -> PhaseWire {
        match p {
            JournalPhase::Received => PhaseWire::Received,
            JournalPhase::SubmissionStarted => PhaseWire::SubmissionStarted,
            JournalPhase::Submitted => PhaseWire::Submitted,
            JournalPhase::Completed => PhaseWire::Completed,
        }
    }
}

/// `command.result`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultWire {
    /// Which command.
    #[serde(with = "command_id")]
    pub command_id: CommandId,
    /// What happened.
    pub outcome: OutcomeWire,
}

/// A command's outcome, tagged by `status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum OutcomeWire {
    /// Queued; nothing submitted yet.
    #[serde(rename = "accepted")]
    Accepted {},
    /// Submitted and accepted by the page; a send is complete here.
    #[serde(rename = "submitted", rename_all = "camelCase")]
    Submitted {
        /// The binding's state sequence at submission.
        state_seq: u64,
        /// For `conversation.create`: the new conversation's URL, once settled.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conversation_url: Option<String>,
    },
    /// Failed with a stable code (`AMBIGUOUS_SUBMISSION`, `HOST_UI_CHANGED`, ...).
    #[serde(rename = "failed")]
    Failed {
        /// The stable code; unknown codes are kept and treated as ambiguous.
        code: String,
        /// Free-form detail for people.
        detail: String,
    },
}

impl From<OutcomeWire> for CommandOutcome {
    fn from(o: OutcomeWire) -> CommandOutcome {
        match o {
            OutcomeWire::Accepted {} => CommandOutcome::Accepted,
            OutcomeWire::Submitted { state_seq, conversation_url } => {
                CommandOutcome::Submitted { state_seq, conversation: conversation_url.map(Arc::from) }
            }
            OutcomeWire::Failed { code, detail } => {
                CommandOutcome::Failed { code: ExecErrorCode::parse(&code), detail }
            }
        }
    }
}

impl From<&CommandOutcome> for OutcomeWire {
    fn from(o: &CommandOutcome) -> OutcomeWire {
        match o {
            CommandOutcome::Accepted => OutcomeWire::Accepted {},
            CommandOutcome::Submitted { state_seq, conversation } => OutcomeWire::Submitted {
                state_seq: *state_seq,
                conversation_url: conversation.as_ref().map(|c| c.to_string()),
            },
            CommandOutcome::Failed { code, detail } => {
                OutcomeWire::Failed { code: code.as_str().to_string(), detail: detail.clone() }
            }
        }
    }
}

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

/// Serde for ids in their printed form (`wrk-7`, `exe-12`).
mod printed {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::fmt::Display;
    use std::str::FromStr;

    pub fn serialize<T: Display, S: Serializer>(id: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    pub fn deserialize<'de, T: FromStr, D: Deserializer<'de>>(d: D) -> Result<T, D::Error>
    where
        T::Err: Display,
    {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Serde for command ids (`cmd-N`, N the attempt number).
mod command_id {
    use engine::ids::{AttemptId, CommandId};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(id: &CommandId, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CommandId, D::Error> {
        let text = String::deserialize(d)?;
        let attempt = text
            .strip_prefix("cmd-")
            .and_then(|n| format!("exe-{n}").parse::<AttemptId>().ok())
            .ok_or_else(|| serde::de::Error::custom("expected a command id of the form cmd-<number>"))?;
        Ok(CommandId { attempt })
    }
}
