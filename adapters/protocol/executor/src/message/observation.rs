//! Executor to daemon: what an executor observes of a conversation (its coarse state, a
//! page error's kind, page text for people, a CLI approval request waiting for a person, a
//! CLI retrying its model connection inside the running turn),
//! as `conversation.state` reports it and a binding carries it, with the exact
//! conversions to and from the engine's [`Observation`].

use super::{approval_id, printed};
use engine::ids::WorkerId;
use engine::model::{CliRetry, ConversationState, ErrorKind};
use engine::{Observation, Timestamp};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    /// With `generating` from a CLI executor: the CLI retries its model connection inside
    /// the running turn (ignored with any other state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryWire>,
}

/// A CLI retrying its model connection (`retry` of `conversation.state`): what it said,
/// and which retry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryWire {
    /// What the CLI said (untrusted; cleaned and capped on decode like `detail`).
    #[serde(deserialize_with = "page_detail::deserialize_text")]
    pub reason: String,
    /// Which retry, when the CLI counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
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

impl From<ObservationWire> for Observation {
    fn from(o: ObservationWire) -> Observation {
        // `unknown` with words says what the page shows that the executor does not
        // recognize; without them, only that nothing is known yet.
        let state = match o.state.to_engine(o.error_kind) {
            ConversationState::Unknown if o.detail.is_some() => ConversationState::Unrecognized,
            state => state,
        };
        let retry = o.retry.filter(|_| state == ConversationState::Generating);
        Observation {
            state,
            seq: o.seq,
            block: o.block,
            until: o.until_ms.map(Timestamp),
            detail: o.detail.map(Arc::from),
            approval: o.approval.map(Into::into),
            retry: retry.map(|r| CliRetry { reason: Arc::from(r.reason), attempt: r.attempt }),
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
            retry: o.retry.as_ref().map(|r| RetryWire { reason: r.reason.to_string(), attempt: r.attempt }),
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
    /// With `generating` from a CLI executor: the CLI retries its model connection inside
    /// the running turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryWire>,
}

impl StateWire {
    /// The engine's observation.
    pub fn observation(self) -> Observation {
        let StateWire { state, error_kind, seq, block, until_ms, detail, approval, retry, .. } = self;
        ObservationWire { state, error_kind, seq, block, until_ms, detail, approval, retry }.into()
    }

    /// The message for `worker`'s observation.
    pub fn new(worker: WorkerId, o: &Observation) -> StateWire {
        let ObservationWire { state, error_kind, seq, block, until_ms, detail, approval, retry } =
            ObservationWire::from(o);
        StateWire { worker_id: worker, state, error_kind, seq, block, until_ms, detail, approval, retry }
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
    /// Nothing known yet; with `detail`, what the page shows that the executor does not
    /// recognize (the engine's `Unrecognized`: the worker is held and a person told).
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
            ConversationState::Unknown | ConversationState::Unrecognized => (StateName::Unknown, None),
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
