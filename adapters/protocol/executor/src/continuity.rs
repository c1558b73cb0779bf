//! Continuity events: which of a worker's events say whether, why and when it gets its
//! next turn, a short sentence for each (the popup's "recent events"), and the bounded
//! buffer of the newest ones per worker that the summary push keeps. No IO.
//!
//! [`sentence`] is the one source of these words. `tests/sentences.rs` pins them for
//! every event kind in `docs/protocol/fixtures/rules/sentences.json`, and the extension's
//! copy (`extension/src/ui/event-text.js`, for event-log items that carry no text) is
//! checked against that file; change the words here, regenerate the file and follow in
//! the copy.

use crate::message::RecentEventWire;
use engine::SteerLanding;
use engine::event::{Event, EventKind};
use engine::ids::{Cursor, WorkerId};
use engine::kind::ExecutorKind;
use engine::model::{
    AttemptOutcome, AttemptReason, ConversationState, ErrorKind, HoldReason, Lifecycle, PauseReason, SteeringOutcome,
};
use engine::policy::Mode;
use engine::wake::WakeReason;
use std::collections::{BTreeMap, VecDeque};

/// Recent events per worker in an `operator.summary`.
pub const SUMMARY_EVENTS_MAX: usize = 5;
/// Events one `worker_events` query returns.
pub const WORKER_EVENTS_MAX: usize = 50;
/// Longest excerpt of agent-written text (progress summaries, reasons) in a sentence, in
/// characters.
pub const EXCERPT_CHARS_MAX: usize = 80;

/// Whether the event belongs to the worker's continuity story. Left out: the run's own
/// events, the per-turn lifecycle the attempts already carry (`execution.submitted`,
/// `generating`, `idle`, and endings that only hand over to the next attempt or mirror a
/// worker event), intents being recorded or withdrawn, bindings confirmed, messages and
/// end-of-response blocks, and the stall pause's `worker.paused` (its
/// `continuation.paused_for_stall` says more).
pub fn is_continuity(kind: &EventKind) -> bool {
    match kind {
        EventKind::WorkerProgress { .. }
        | EventKind::WorkerCompleted { .. }
        | EventKind::WorkerFailed { .. }
        | EventKind::WorkerCancelled { .. }
        | EventKind::WorkerFollowup
        | EventKind::WorkerAwaitingHuman { .. }
        | EventKind::WorkerHumanResolved
        | EventKind::WorkerAwaitingDependency { .. }
        | EventKind::WorkerDependencyReleased { .. }
        | EventKind::WorkerDependencyEnded { .. }
        | EventKind::WorkerResumed
        | EventKind::PolicyChanged { .. }
        | EventKind::ExecutionScheduled { .. }
        | EventKind::ExecutionDeferred { .. }
        | EventKind::ContinuationWarning { .. }
        | EventKind::ContinuationPausedForStall { .. }
        | EventKind::ContinuationStallAcknowledged
        | EventKind::BindingLost { .. }
        | EventKind::BindingRefused { .. }
        | EventKind::SteeringRecorded { .. }
        | EventKind::WorkerHeld { .. }
        | EventKind::WorkerHoldLifted { .. }
        | EventKind::WorkerExecutorAbsent { .. }
        | EventKind::DeadManFired { .. } => true,
        // A limit or a dialog says more in its `worker.held`, a lost app or a foreign turn
        // in its `worker.paused`.
        EventKind::ConversationError { kind } => !matches!(
            kind,
            ErrorKind::UsageLimit
                | ErrorKind::RateLimited
                | ErrorKind::BlockedByDialog
                | ErrorKind::AppUnavailable
                | ErrorKind::ForeignTurn
        ),
        // A merged steer is the steer it was; a next turn is news.
        EventKind::SteerLanded { landed } => *landed == SteerLanding::NextTurn,
        EventKind::WorkerPaused { reason, .. } => *reason != PauseReason::Stall,
        EventKind::ExecutionEnded { outcome, .. } => !matches!(
            outcome,
            AttemptOutcome::TurnEnded
                | AttemptOutcome::Steered
                | AttemptOutcome::WorkerCompleted
                | AttemptOutcome::WorkerFailed
                | AttemptOutcome::WorkerCancelled
                | AttemptOutcome::WorkerBlocked
        ),
        EventKind::RunCreated
        | EventKind::RunContextUpdated
        | EventKind::RunPolicyChanged { .. }
        | EventKind::RunEnded { .. }
        | EventKind::WorkerSpawned
        | EventKind::WorkerAttached { .. }
        | EventKind::ResumeScheduled { .. }
        | EventKind::ResumeCancelled { .. }
        | EventKind::ExecutionSubmitted
        | EventKind::ExecutionGenerating
        | EventKind::ExecutionIdle
        | EventKind::BindingVerified { .. }
        | EventKind::MessageSent { .. }
        | EventKind::BlockReported { .. }
        | EventKind::BlockInvalid { .. }
        // The daemon's own plumbing: the log says it, the person was not reached by it.
        | EventKind::NotificationAbandoned { .. } => false,
    }
}

/// What a sentence calls the worker's host: the product a person knows it by.
fn host(kind: ExecutorKind) -> &'static str {
    match kind {
        ExecutorKind::Chatgpt => "ChatGPT",
        ExecutorKind::Codex => "Codex",
        ExecutorKind::Claude => "Claude Code",
    }
}

/// A short sentence for people about an event of a worker of `kind` (a ChatGPT tab or a
/// CLI session: what the host is called, a page or a session). Events that say the same
/// thing in one step (a delivery timeout seen on the page and the attempt it ends) get
/// the same sentence, so that the summary can drop the repetition.
pub fn sentence(e: &Event, kind: ExecutorKind) -> String {
    const DELIVERY_TIMEOUT: &str = "Delivery timed out; a fresh continue follows";
    const AMBIGUOUS: &str = "Paused: unsure whether the last prompt was sent";
    const APP_UNAVAILABLE: &str = "Paused: the app is unavailable in this conversation; recover into a new one";
    const FOREIGN_TURN: &str = "A turn the orchestrator did not start ran in this session";
    let name = host(kind);
    let host_ui_changed = || match kind {
        ExecutorKind::Chatgpt => "Paused: the ChatGPT page changed; check the extension".to_string(),
        _ => format!("Paused: {name} did not answer as expected; check the CLI executor's log"),
    };
    let host_error = || match kind {
        ExecutorKind::Chatgpt => "The page shows an error".to_string(),
        _ => format!("{name} reported an error"),
    };
    match &e.kind {
        EventKind::WorkerProgress { summary, .. } => format!("Progress: {}", excerpt(summary)),
        EventKind::WorkerCompleted { .. } => "Completed".into(),
        EventKind::WorkerFailed { reason } => format!("Failed: {}", excerpt(reason)),
        EventKind::WorkerCancelled { reason } => format!("Stopped: {}", excerpt(reason)),
        EventKind::WorkerFollowup => "New assignment".into(),
        EventKind::WorkerAwaitingHuman { reason } => format!("Needs you: {}", excerpt(reason)),
        EventKind::WorkerHumanResolved => "Answer received".into(),
        EventKind::WorkerAwaitingDependency { reason } => format!("Waiting for a dependency: {}", excerpt(reason)),
        EventKind::WorkerDependencyReleased { .. } => "Dependency released".into(),
        EventKind::WorkerDependencyEnded { outcome, .. } => match outcome {
            Lifecycle::Failed => "The worker it waited for failed: the wait is over".into(),
            _ => "The worker it waited for was stopped: the wait is over".into(),
        },
        EventKind::WorkerPaused { after_turn: true, .. } => "Pauses after the current turn".into(),
        EventKind::WorkerPaused { reason, .. } => match reason {
            PauseReason::Operator => "Paused".into(),
            PauseReason::Stall => "Paused: no durable progress".into(),
            PauseReason::HostUiChanged => host_ui_changed(),
            PauseReason::AmbiguousSubmission => AMBIGUOUS.into(),
            PauseReason::DeliveryFailing => "Paused: deliveries keep failing".into(),
            PauseReason::UsageLimit => "Usage limit with no reset time: a person must resume".into(),
            PauseReason::AccountCheck => format!("Paused: {name} asks a person to check the account"),
            PauseReason::AppUnavailable => APP_UNAVAILABLE.into(),
            PauseReason::AppNotSelected => "Paused: ChatGPT did not show the app in this conversation".into(),
            PauseReason::ForeignTurn => format!("Paused: {}", FOREIGN_TURN.to_lowercase()),
            PauseReason::CliRetrying => format!("Paused: {name} kept retrying its model connection"),
        },
        EventKind::WorkerHeld { reason, until, detail } => match (reason, until) {
            (HoldReason::UsageLimit, Some(t)) => format!("Usage limit: resumes at {}", clock(*t)),
            (HoldReason::RateLimited, Some(t)) => format!("{name} asked to slow down: resumes at {}", clock(*t)),
            (HoldReason::AwaitingApproval, _) => match (kind, detail) {
                (ExecutorKind::Chatgpt, Some(app)) => {
                    format!("Needs you: approve {} in this conversation", excerpt(app))
                }
                (ExecutorKind::Chatgpt, None) => "Needs you: approve the app in this conversation".into(),
                (_, Some(asked)) => format!("Needs you: {name} asks to {}", excerpt(asked)),
                (_, None) => format!("Needs you: {name} asks for an approval"),
            },
            (HoldReason::PageUnrecognized, _) => match detail {
                // The executor's words say what was not recognized, and where ("Page not
                // recognized: a form in the latest turn").
                Some(what) => format!("Needs you: {}; nothing is typed", excerpt(what)),
                None => "Needs you: the page is not recognized; nothing is typed".into(),
            },
            (HoldReason::BlockedByDialog, _) | (_, None) => match detail {
                Some(heading) => format!("A dialog blocks the conversation: {}", excerpt(heading)),
                None => "A dialog blocks the conversation".into(),
            },
        },
        EventKind::WorkerHoldLifted { reason } => match reason {
            HoldReason::UsageLimit => "Usage limit over; resuming".into(),
            HoldReason::RateLimited => "Slow-down over; resuming".into(),
            HoldReason::BlockedByDialog => "The dialog is gone; resuming".into(),
            HoldReason::AwaitingApproval => "Approval answered; the turn goes on".into(),
            HoldReason::PageUnrecognized => "The page is recognized again; resuming".into(),
        },
        EventKind::WorkerResumed => "Resumed".into(),
        EventKind::PolicyChanged { mode: Mode::Auto, .. } => "Auto resume on".into(),
        EventKind::PolicyChanged { mode: Mode::Manual, .. } => "Auto resume off".into(),
        EventKind::ExecutionScheduled { reason, wake, sequence } => {
            let keepalive = wake.contains(WakeReason::ActiveKeepalive);
            // A turn that ended on the page's error card gets a fresh one, never Retry.
            let timed_out = wake.contains(WakeReason::DeliveryTimeout) || wake.contains(WakeReason::PageError);
            let answered = wake.contains(WakeReason::HumanResolved);
            let what = match reason {
                AttemptReason::Initial => "Assignment sent",
                // A root's keepalive is a mid-turn resume rather than a checkpoint prompt.
                AttemptReason::AutoResume if keepalive => "Keepalive checkpoint sent",
                AttemptReason::AutoResume | AttemptReason::ManualResume if timed_out => "Fresh continue sent",
                // The prompt carries a person's answer (and the question's choices).
                AttemptReason::AutoResume | AttemptReason::ManualResume if answered => "Answer sent",
                AttemptReason::AutoResume => "Auto resume sent",
                AttemptReason::ManualResume => "Continue now sent",
                AttemptReason::Followup => "Follow-up sent",
                AttemptReason::Recovery => "Recovery sent to a fresh conversation",
                AttemptReason::Checkpoint => "Keepalive checkpoint sent",
                AttemptReason::Corrective => "Root's correction sent",
            };
            format!("{what} (attempt {sequence})")
        }
        EventKind::ExecutionDeferred { not_before, .. } => {
            format!("Next continuation in {} (turns are spaced out)", duration(not_before.0.saturating_sub(e.at.0)))
        }
        EventKind::ExecutionEnded { outcome, .. } => match outcome {
            AttemptOutcome::DeliveryTimeout => DELIVERY_TIMEOUT.into(),
            AttemptOutcome::Ambiguous => AMBIGUOUS.into(),
            AttemptOutcome::HostUiChanged => host_ui_changed(),
            AttemptOutcome::NotDelivered => "Not delivered; it will be tried again".into(),
            AttemptOutcome::ConversationLost => "Conversation lost".into(),
            AttemptOutcome::PageError if kind.is_cli() => format!("The turn ended with an error from {name}"),
            AttemptOutcome::PageError => "The turn ended with an error on the page".into(),
            AttemptOutcome::Withdrawn => "Withdrawn before it was sent".into(),
            AttemptOutcome::TurnEnded => "Turn ended".into(),
            AttemptOutcome::Steered => "Attempt joined the running turn".into(),
            AttemptOutcome::WorkerCompleted => "Turn ended: the worker completed".into(),
            AttemptOutcome::WorkerFailed => "Turn ended: the worker failed".into(),
            AttemptOutcome::WorkerCancelled => "Turn ended: the worker was stopped".into(),
            AttemptOutcome::WorkerBlocked => "Turn ended; the worker is waiting".into(),
        },
        EventKind::WorkerExecutorAbsent { kind, since, .. } => format!(
            "No {} executor connected since {}: nothing carries this worker",
            caller_protocol::executor_kind_name(*kind),
            clock(*since)
        ),
        EventKind::DeadManFired { condition, action, quiet_ms, .. } => {
            format!("Run stopped moving: {}", caller_protocol::dead_man_why(*condition, *action, *quiet_ms))
        }
        EventKind::ContinuationWarning { attempts, .. } => {
            format!("No durable progress in {attempts} attempts")
        }
        EventKind::ContinuationPausedForStall { attempts, .. } => {
            format!("Paused: no durable progress in {attempts} attempts")
        }
        EventKind::ContinuationStallAcknowledged => "Continued anyway after the stall".into(),
        EventKind::BindingLost { why } => match why {
            ConversationState::Error(ErrorKind::ConversationFull) => "Conversation full; a fresh one follows".into(),
            ConversationState::Error(ErrorKind::AppUnavailable) => APP_UNAVAILABLE.into(),
            _ => "Conversation closed; a fresh one follows".into(),
        },
        EventKind::BindingRefused { executor, why, .. } => {
            format!("Ignored a conversation reported by {}: {}", excerpt(&executor.to_string()), excerpt(why))
        }
        EventKind::ConversationError { kind } => match kind {
            ErrorKind::DeliveryTimeout => DELIVERY_TIMEOUT.into(),
            ErrorKind::ConversationFull => "Conversation full; a fresh one follows".into(),
            ErrorKind::HostUiChanged => host_ui_changed(),
            ErrorKind::UsageLimit => format!("{name} usage limit reached"),
            ErrorKind::LoginRequired => format!("{name} is logged out: a person must log in and resume"),
            ErrorKind::Generic => host_error(),
            ErrorKind::RateLimited => format!("{name} asked to slow down"),
            ErrorKind::SuspiciousActivity => "Suspicious activity detected: a person must resume".into(),
            ErrorKind::Challenge => format!("{name} shows a human check: a person must resume"),
            ErrorKind::BlockedByDialog => "A dialog blocks the conversation".into(),
            ErrorKind::AppUnavailable => APP_UNAVAILABLE.into(),
            ErrorKind::ForeignTurn => FOREIGN_TURN.into(),
        },
        EventKind::SteerLanded { landed: SteerLanding::NextTurn } => {
            "The steer became the next turn (counted as a turn)".into()
        }
        EventKind::SteerLanded { landed: SteerLanding::Merged } => "The steer joined the running turn".into(),
        EventKind::SteeringRecorded { outcome, .. } => match outcome {
            SteeringOutcome::ContinueAsPlanned => "Root: continue as planned".into(),
            SteeringOutcome::CorrectDirection => "Root asked for a correction".into(),
            SteeringOutcome::ChangePriority => "Root changed the priority".into(),
            SteeringOutcome::ProvideDependency => "Root provided a dependency".into(),
            SteeringOutcome::RequestEvidence => "Root asked for evidence".into(),
            SteeringOutcome::Pause => "Root asked to pause".into(),
            SteeringOutcome::TerminalReconcile => "Root asked to reconcile completion".into(),
        },
        other => other.name().into(),
    }
}

/// The first line of untrusted text, cut to [`EXCERPT_CHARS_MAX`] characters.
fn excerpt(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    match line.char_indices().nth(EXCERPT_CHARS_MAX) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

/// A time of day as `16:04 UTC` (the daemon knows no time zone; the extension shows
/// `untilMs` in the person's own).
fn clock(t: engine::time::Timestamp) -> String {
    const MINUTE_MS: u64 = 60_000;
    let minutes = (t.0 / MINUTE_MS) % (24 * 60);
    format!("{:02}:{:02} UTC", minutes / 60, minutes % 60)
}

/// `45 s`, `12 min`, `3 h`: rounded up, so that a hold is never shown shorter than it is.
fn duration(ms: u64) -> String {
    const MINUTE: u64 = 60_000;
    if ms < MINUTE {
        format!("{} s", ms.div_ceil(1_000))
    } else if ms < 60 * MINUTE {
        format!("{} min", ms.div_ceil(MINUTE))
    } else {
        format!("{} h", ms.div_ceil(60 * MINUTE))
    }
}

/// The newest continuity sentences of every worker, fed with events in cursor order.
/// A sentence equal to the worker's previous one is dropped.
#[derive(Clone, Debug, Default)]
pub struct RecentSentences {
    /// Every event up to here has been seen.
    cursor: Cursor,
    /// Per worker, oldest first, at most [`SUMMARY_EVENTS_MAX`].
    workers: BTreeMap<WorkerId, VecDeque<RecentEventWire>>,
}

impl RecentSentences {
    /// Nothing seen yet; events after `cursor` come next.
    pub fn after(cursor: Cursor) -> RecentSentences {
        RecentSentences { cursor, workers: BTreeMap::new() }
    }

    /// The cursor to read on from.
    pub fn cursor(&self) -> Cursor {
        self.cursor
    }

    /// Takes in the next event (events at or before the cursor are ignored); `kind_of`
    /// names the kind of the event's worker, which words its sentence.
    pub fn absorb(&mut self, e: &Event, kind_of: impl Fn(WorkerId) -> ExecutorKind) {
        if e.cursor <= self.cursor {
            return;
        }
        self.cursor = e.cursor;
        let Some(worker) = e.worker else { return };
        if !is_continuity(&e.kind) {
            return;
        }
        let text = sentence(e, kind_of(worker));
        let recent = self.workers.entry(worker).or_default();
        if recent.back().is_some_and(|last| last.text == text) {
            return;
        }
        recent.push_back(RecentEventWire { at_ms: e.at.0, kind: e.kind.name().to_string(), text });
        if recent.len() > SUMMARY_EVENTS_MAX {
            recent.pop_front();
        }
    }

    /// The worker's recent sentences, oldest first.
    pub fn of(&self, worker: WorkerId) -> Vec<RecentEventWire> {
        self.workers.get(&worker).map(|r| r.iter().cloned().collect()).unwrap_or_default()
    }

    /// Forgets the workers `keep` refuses (those no longer in the summary).
    pub fn retain(&mut self, keep: impl Fn(WorkerId) -> bool) {
        self.workers.retain(|w, _| keep(*w));
    }
}

/// The newest continuity events of one worker, fed with its events in cursor order.
#[derive(Clone, Debug, Default)]
pub struct RecentEvents {
    events: VecDeque<Event>,
}

impl RecentEvents {
    /// Keeps `e` when it is a continuity event, dropping the oldest beyond
    /// [`WORKER_EVENTS_MAX`].
    pub fn absorb(&mut self, e: &Event) {
        if !is_continuity(&e.kind) {
            return;
        }
        self.events.push_back(e.clone());
        if self.events.len() > WORKER_EVENTS_MAX {
            self.events.pop_front();
        }
    }

    /// The kept events, oldest first.
    pub fn into_events(self) -> Vec<Event> {
        self.events.into()
    }
}
