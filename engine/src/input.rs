//! Everything that can happen to the engine: caller operations, executor reports, time.

use crate::ids::*;
use crate::model::ConversationState;
pub use crate::model::SteerLanding;
use crate::op::Operation;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One input. The engine handles inputs one at a time, each with the time it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A caller operation; the reply carries the same call id.
    Call {
        /// Chosen by the shell to match the reply.
        call: CallId,
        /// What is asked.
        op: Operation,
    },
    /// A report from an executor (already decoded and authenticated by the bridge).
    Executor(ExecutorInput),
    /// Time passed: handle every deadline at or before `now`.
    Tick,
    /// What the shell's post of a notification ([`crate::Effect::Notify`]) came to.
    Notified {
        /// The notification.
        id: crate::notice::NoticeId,
        /// Delivered, failed or refused.
        outcome: crate::notice::NoticeOutcome,
    },
}

/// What an executor tells the engine (spec 000 §12, 001 C6-C7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecutorInput {
    /// A (re)connected executor introduces itself and republishes what it holds.
    Hello {
        /// Which executor.
        executor: ExecutorId,
        /// It can submit mid-turn steering while generating.
        steering: bool,
        /// The executor kinds it runs; only workers of these kinds get its commands (the
        /// bridge passes `[Chatgpt]` for a hello that names none).
        kinds: Vec<crate::kind::ExecutorKind>,
        /// Managed bindings it holds, with their current observed state.
        bindings: Vec<BindingReport>,
        /// Its command journal for recent commands.
        journal: Vec<JournalEntry>,
        /// How many CLI workers' turns it runs at once (its host's cap); a turn beyond it
        /// waits for one to end. `None`: no cap (a browser queues its own commands).
        turns_max: Option<u32>,
        /// The accounts its CLI workers run under, each with a cap on turns at once shared
        /// by every executor that names the same account for the same kind.
        accounts: Vec<AccountCap>,
    },
    /// The executor's connection ended.
    Disconnected {
        /// Which executor.
        executor: ExecutorId,
    },
    /// A binding was verified (e.g. a new conversation's URL settled) or closed.
    Binding {
        /// Which executor.
        executor: ExecutorId,
        /// The report.
        report: BindingReport,
    },
    /// The conversation's coarse state changed (coalesced by the executor).
    State {
        /// Which executor.
        executor: ExecutorId,
        /// Which worker's conversation.
        worker: WorkerId,
        /// The observation.
        observation: Observation,
    },
    /// The result of a command.
    Result {
        /// Which executor.
        executor: ExecutorId,
        /// Which command.
        command: CommandId,
        /// What happened.
        outcome: CommandOutcome,
    },
    /// Where a submitted steer landed: a CLI session may take a mid-turn message into the
    /// running turn, or run it as the next turn once that one ends (Claude Code).
    SteerLanded {
        /// Which executor.
        executor: ExecutorId,
        /// Whose conversation.
        worker: WorkerId,
        /// The steer's command.
        command: CommandId,
        /// Merged, or the next turn.
        landed: SteerLanding,
        /// For the next turn: the sequence of the state that ends the turn the steer
        /// missed (sent right after this report); only a later state counts for the
        /// steer's own turn. For a merged steer, the binding's sequence when it was seen.
        seq: u64,
    },
}

/// A binding as an executor sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindingReport {
    /// The worker the managed tab belongs to.
    pub worker: WorkerId,
    /// The conversation URL.
    pub conversation: Arc<str>,
    /// Still open, or closed.
    pub open: bool,
    /// The current observed state, when the tab is open.
    pub observation: Option<Observation>,
}

/// One coarse state observation with its per-binding sequence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The state.
    pub state: ConversationState,
    /// Per-binding sequence; within one connection, older reports are ignored.
    pub seq: u64,
    /// The tail of the last assistant turn's end-of-response block, when idle (untrusted).
    pub block: Option<String>,
    /// With a usage or rate limit: when the page says it lifts, if it names a time.
    pub until: Option<crate::time::Timestamp>,
    /// Page text for people (a dialog's heading, a limit notice): untrusted, capped at
    /// [`crate::limits::PAGE_DETAIL_CHARS_MAX`] characters by the adapter that decoded it.
    pub detail: Option<Arc<str>>,
    /// With `awaiting_approval` from a CLI executor in its `ask` approval mode: the request
    /// waiting for a person, whose id the operator's answer must name. `None` for
    /// ChatGPT's card (answered in the page) and every other state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<crate::model::PendingApproval>,
    /// With `generating` from a CLI executor: the CLI is retrying its model connection
    /// inside the running turn (a later state without it says the retry is over).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<crate::model::CliRetry>,
}

/// How far an executor got with a command (spec 000 §12.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum JournalPhase {
    /// Received and queued; nothing typed yet.
    Received,
    /// Typing or clicking began; delivery is unknown without proof.
    SubmissionStarted,
    /// The page accepted the prompt.
    Submitted,
    /// The command finished and its result was stored.
    Completed,
}

/// One journal line republished in `hello`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The command.
    pub command: CommandId,
    /// Its phase.
    pub phase: JournalPhase,
    /// Binding state sequence at submission, when submitted.
    pub state_seq: u64,
    /// The conversation URL a `conversation.create` produced, when known.
    pub conversation: Option<Arc<str>>,
}

/// A command's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CommandOutcome {
    /// Queued by the executor; nothing submitted yet.
    Accepted,
    /// Submitted and accepted by the page (a send is complete here: generation is observed later).
    Submitted {
        /// Binding state sequence at submission.
        state_seq: u64,
        /// For `conversation.create`: the new conversation's URL, when it settled.
        conversation: Option<Arc<str>>,
    },
    /// Failed, with a stable code.
    Failed {
        /// The code.
        code: ExecErrorCode,
        /// Free-form detail (capped by the engine).
        detail: String,
    },
}

/// Stable executor error codes. Anything the engine does not know is treated as ambiguous.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecErrorCode {
    /// Submission began and its result is unknown: never resend automatically.
    AmbiguousSubmission,
    /// The page's controls changed: fail closed, pause the worker.
    HostUiChanged,
    /// "Message delivery timed out": end the attempt, a fresh `continue` follows.
    MessageDeliveryTimeout,
    /// The deadline passed before submission started: definitely not submitted.
    DeadlineExceeded,
    /// The page does not offer mid-turn steering now: definitely not submitted.
    SteeringUnavailable,
    /// The composer holds a draft the executor did not write: definitely not submitted.
    ComposerBusy,
    /// The tab is closed or the conversation is gone: definitely not submitted.
    ConversationClosed,
    /// The conversation is full: definitely not submitted.
    ConversationFull,
    /// Withdrawn by `command.cancel` before submission began: definitely not submitted.
    Cancelled,
    /// An unknown code, kept verbatim.
    Other(Arc<str>),
    /// The executor could not choose or verify the orchestrator's app in the composer
    /// before the send: definitely not submitted; the worker is paused (never a blind
    /// retry). Appended last to keep the encoding of the others.
    AppNotSelected,
}

impl ExecErrorCode {
    /// The stable wire code.
    pub fn as_str(&self) -> &str {
        match self {
            ExecErrorCode::AmbiguousSubmission => "AMBIGUOUS_SUBMISSION",
            ExecErrorCode::HostUiChanged => "HOST_UI_CHANGED",
            ExecErrorCode::MessageDeliveryTimeout => "MESSAGE_DELIVERY_TIMEOUT",
            ExecErrorCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            ExecErrorCode::SteeringUnavailable => "STEERING_UNAVAILABLE",
            ExecErrorCode::ComposerBusy => "COMPOSER_BUSY",
            ExecErrorCode::ConversationClosed => "CONVERSATION_CLOSED",
            ExecErrorCode::ConversationFull => "CONVERSATION_FULL",
            ExecErrorCode::Cancelled => "CANCELLED",
            ExecErrorCode::AppNotSelected => "APP_NOT_SELECTED",
            ExecErrorCode::Other(code) => code,
        }
    }

    /// Parses a wire code; unknown codes are kept as `Other`.
    pub fn parse(code: &str) -> ExecErrorCode {
        match code {
            "AMBIGUOUS_SUBMISSION" => ExecErrorCode::AmbiguousSubmission,
            "HOST_UI_CHANGED" => ExecErrorCode::HostUiChanged,
            "MESSAGE_DELIVERY_TIMEOUT" => ExecErrorCode::MessageDeliveryTimeout,
            "DEADLINE_EXCEEDED" => ExecErrorCode::DeadlineExceeded,
            "STEERING_UNAVAILABLE" => ExecErrorCode::SteeringUnavailable,
            "COMPOSER_BUSY" => ExecErrorCode::ComposerBusy,
            "CONVERSATION_CLOSED" => ExecErrorCode::ConversationClosed,
            "CONVERSATION_FULL" => ExecErrorCode::ConversationFull,
            "CANCELLED" => ExecErrorCode::Cancelled,
            "APP_NOT_SELECTED" => ExecErrorCode::AppNotSelected,
            other => ExecErrorCode::Other(Arc::from(other)),
        }
    }
}

/// An account a CLI executor's workers of one kind run under (`executor-cli --account
/// codex=team:6`), and how many turns it allows at once across every host that names it:
/// a Codex or Claude login several build machines share has one rate limit, so the daemon
/// holds a turn that would go past it, whichever host would carry it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AccountCap {
    /// The kind of worker that runs under it (a CLI kind).
    pub kind: crate::kind::ExecutorKind,
    /// The account's name as the person gave it (the same on every host that shares it).
    pub name: Arc<str>,
    /// Turns at once under it, on all its hosts together; when hosts disagree, the
    /// smallest holds.
    pub turns_max: u32,
}
