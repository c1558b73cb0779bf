//! What a worker's conversation shows, as its executor reports it: the binding (the lease
//! of one conversation), its coarse state, the page errors an executor classifies, the
//! holds they cause (account limits, dialogs, approval cards) and CLI approval requests.

use crate::ids::*;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A page error the executor classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorKind {
    /// "Message delivery timed out": end the attempt, send a fresh `continue`, never Retry.
    DeliveryTimeout,
    /// "You've reached the maximum length": the conversation needs replacing.
    ConversationFull,
    /// Composer/send/stop controls not found: fail closed.
    HostUiChanged,
    /// A usage limit: a boundary to respect, not to work around.
    UsageLimit,
    /// Logged out: a person must log in (account-wide hard stop).
    LoginRequired,
    /// Any other error card ("Something went wrong").
    Generic,
    /// ChatGPT's "Too many requests" dialog: an account-wide hold until it lifts.
    RateLimited,
    /// "Suspicious activity detected": an account-wide hard stop until a person resumes.
    SuspiciousActivity,
    /// A Cloudflare challenge ("Just a moment...", "Verify you are human"): an
    /// account-wide hard stop until a person resumes.
    Challenge,
    /// An unknown modal dialog over this conversation, which the executor never
    /// dismisses: nothing is typed until a later report shows the page without it.
    BlockedByDialog,
    /// The latest turn says the conversation cannot use the orchestrator's app any more
    /// ("FORBIDDEN: This conversation does not support developer MCPs", "... is
    /// restricted to developer MCPs", "<App> tool has been disabled"): the binding is
    /// lost and the worker paused; recovery is a new conversation, never a retry here.
    AppUnavailable,
    /// A turn the orchestrator did not start ran in a CLI session (a user's own hook, a
    /// scheduled wake-up, a prompt typed by hand): the worker is paused for a person, who
    /// looks at the session and resumes. Appended last: stored states keep their encoding.
    ForeignTurn,
}

impl ErrorKind {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::DeliveryTimeout => "delivery_timeout",
            ErrorKind::ConversationFull => "conversation_full",
            ErrorKind::HostUiChanged => "host_ui_changed",
            ErrorKind::UsageLimit => "usage_limit",
            ErrorKind::LoginRequired => "login_required",
            ErrorKind::Generic => "generic",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::SuspiciousActivity => "suspicious_activity",
            ErrorKind::Challenge => "challenge",
            ErrorKind::BlockedByDialog => "blocked_by_dialog",
            ErrorKind::AppUnavailable => "app_unavailable",
            ErrorKind::ForeignTurn => "foreign_turn",
        }
    }
    /// Whether a page showing this error takes nothing typed into it, not even an
    /// operator's explicit turn: the page is the truth about limits, account checks and
    /// dialogs.
    pub fn stops_typing(self) -> bool {
        matches!(
            self,
            ErrorKind::UsageLimit
                | ErrorKind::RateLimited
                | ErrorKind::SuspiciousActivity
                | ErrorKind::Challenge
                | ErrorKind::LoginRequired
                | ErrorKind::BlockedByDialog
        )
    }
    /// Whether the error stops the whole account (every worker on that executor) until
    /// a person resumes.
    pub fn needs_account_check(self) -> bool {
        matches!(self, ErrorKind::SuspiciousActivity | ErrorKind::Challenge | ErrorKind::LoginRequired)
    }
    /// Whether the error is an account's usage or rate limit (held until its time).
    pub fn is_account_limit(self) -> bool {
        matches!(self, ErrorKind::UsageLimit | ErrorKind::RateLimited)
    }
}

/// Why a worker is held: waiting on something that lifts by itself (a limit's reset
/// time, a later page state), not a pause a person clears.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HoldReason {
    /// The account's usage limit, until the reset time the page named.
    UsageLimit,
    /// ChatGPT's "Too many requests", until the time the page named or a default wait.
    RateLimited,
    /// An unknown dialog covers the worker's conversation.
    BlockedByDialog,
    /// ChatGPT shows a tool-approval card ("Allow ChatGPT to use <App>?") in the worker's
    /// conversation: the turn is suspended until a person answers it.
    AwaitingApproval,
    /// The worker's page shows something its executor does not recognize (a card, a
    /// control, a dialog it cannot name, [`ConversationState::Unrecognized`]): nothing is
    /// typed until the page shows a state it knows. Appended last: the stored encoding of
    /// the older reasons is unchanged.
    PageUnrecognized,
}

impl HoldReason {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            HoldReason::UsageLimit => "usage_limit",
            HoldReason::RateLimited => "rate_limited",
            HoldReason::BlockedByDialog => "blocked_by_dialog",
            HoldReason::AwaitingApproval => "awaiting_approval",
            HoldReason::PageUnrecognized => "page_unrecognized",
        }
    }
}

/// One account: an executor and the kind of worker it runs there. A browser profile is
/// one ChatGPT login; a CLI executor has a Codex login and a Claude login, whose limits
/// are apart (a Codex usage limit never holds a Claude worker).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AccountKey {
    /// The executor that reported the limit (its profile or its CLI logins).
    pub executor: ExecutorId,
    /// The kind of worker whose account it is.
    pub kind: crate::kind::ExecutorKind,
}

impl std::fmt::Display for AccountKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.executor, self.kind)
    }
}

/// An account-wide hold on one account (an executor and a worker kind): nothing is typed
/// into any of that account's conversations until `until`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountHold {
    /// Usage limit or rate limit.
    pub reason: HoldReason,
    /// When it began.
    pub since: Timestamp,
    /// When it lifts by itself (clamped between the report and
    /// [`crate::limits::ACCOUNT_HOLD_MS_MAX`] after it).
    pub until: Timestamp,
    /// The page's own words (untrusted, capped), for people.
    pub detail: Option<Arc<str>>,
}

/// A CLI's approval request waiting for a person (the executor's `ask` mode): what the
/// dashboard shows in "Needs you" and what an `approval_answer` must name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The executor's handle for the request, stable while it waits (e.g. `apr-3`).
    pub id: Arc<str>,
    /// What is asked: `command` (run a command line) or `file_change` (apply edits).
    pub kind: Arc<str>,
    /// The command line and its directory, or the files changed (untrusted, capped at
    /// [`crate::limits::PAGE_DETAIL_CHARS_MAX`] characters, control characters removed).
    pub summary: Arc<str>,
}

/// A CLI retrying its model connection inside a running turn, as its executor read it
/// from the CLI's own reports (Codex's `error` with `willRetry`, Claude Code's
/// `api_retry`): network, login or server errors. Not persisted: the executor republishes
/// it with the state after a restart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CliRetry {
    /// What the CLI said ("Reconnecting... waiting for network: Connection failed"):
    /// untrusted, capped at [`crate::limits::RETRY_REASON_CHARS_MAX`] characters.
    pub reason: Arc<str>,
    /// Which retry this is, when the CLI counts them.
    pub attempt: Option<u32>,
}

/// A person's answer to a [`PendingApproval`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApprovalDecision {
    /// Let the CLI go on with what it asked.
    Approve,
    /// Refuse it; the CLI's turn goes on without it.
    Decline,
}

impl ApprovalDecision {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::Approve => "approve",
            ApprovalDecision::Decline => "decline",
        }
    }
}

/// Holds that come from what pages show, persisted as one record (rarely written: only
/// when a hold begins, changes or lifts).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageHolds {
    /// Account-wide holds by account (executor and worker kind), at most
    /// [`crate::limits::ACCOUNT_HOLDS_COUNT_MAX`]. Keyed by executor only before store
    /// format version 3 (such a hold loads as a hold of each kind of that executor).
    pub accounts: std::collections::BTreeMap<AccountKey, AccountHold>,
    /// The page's words for a hold over one worker's conversation: the heading of the
    /// dialog covering it, or the name of the app whose approval card waits (the hold
    /// itself is the binding's state, `Error(BlockedByDialog)` or `AwaitingApproval`;
    /// this is only what people read).
    pub dialogs: std::collections::BTreeMap<WorkerId, Arc<str>>,
}

/// The coarse state of a managed conversation, as last reported by its executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConversationState {
    /// Nothing reported yet.
    Unknown,
    /// Loaded, composer usable, nothing generating.
    Ready,
    /// A turn is being generated.
    Generating,
    /// The last turn ended.
    Idle,
    /// An error card is the current state.
    Error(ErrorKind),
    /// The tab is gone.
    Closed,
    /// A tool-approval card waits for a person in this conversation ("Allow ChatGPT to
    /// use <App>?"): the turn is suspended, nothing is typed and the executor never
    /// clicks the card. Appended last: the stored encoding of older states is unchanged.
    AwaitingApproval,
    /// The page shows something its executor does not recognize, in the latest turn or
    /// around the composer (on the wire: `unknown` with what was not recognized, and where,
    /// in `detail`): the executor types nothing into it, and the worker is held, its stall
    /// clock stopped, until a state the executor knows (the page is re-read on every
    /// change). Unlike [`ConversationState::Unknown`] (nothing reported yet) a person is
    /// told. Appended last: the stored encoding of older states is unchanged.
    Unrecognized,
}

impl ConversationState {
    /// Whether a new user turn may be submitted now (idle delivery).
    pub fn accepts_send(self) -> bool {
        matches!(
            self,
            ConversationState::Ready | ConversationState::Idle | ConversationState::Error(ErrorKind::DeliveryTimeout)
        )
    }
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationState::Unknown => "unknown",
            ConversationState::Ready => "ready",
            ConversationState::Generating => "generating",
            ConversationState::Idle => "idle",
            ConversationState::Error(_) => "error",
            ConversationState::Closed => "closed",
            ConversationState::AwaitingApproval => "awaiting_approval",
            ConversationState::Unrecognized => "unrecognized",
        }
    }
}

/// Whether a binding can host turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BindingStatus {
    /// Attached by a call or created by a command; no executor has confirmed it yet.
    Pending,
    /// An executor holds this conversation in a managed tab.
    Verified,
    /// The tab is gone or the conversation is full: recovery needs a fresh conversation.
    Lost,
}

/// The managed conversation currently leased to a worker: replaceable, never the identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// Conversation URL (or the empty string while a `conversation.create` is in flight).
    pub conversation: Arc<str>,
    /// The executor that last confirmed the binding.
    pub executor: Option<ExecutorId>,
    /// Usable or lost.
    pub status: BindingStatus,
    /// Last reported coarse state.
    pub state: ConversationState,
    /// Per-binding sequence of that report; older reports are ignored.
    pub state_seq: u64,
    /// When the state was first reported.
    pub state_since: Timestamp,
}
