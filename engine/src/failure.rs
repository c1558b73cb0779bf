//! What the engine does when an executor says something went wrong, in one table: a
//! command's failure code (`command.result`, applied by `results.rs`) or the error a
//! conversation shows (a `conversation.state` with an `errorKind`, applied by
//! `executor.rs`) maps to the steps the engine takes, in order ([`steps`]), and the
//! sentences of the pauses those steps cause. For instance a delivery timeout, reported
//! either way, ends the turn and gets a fresh `continue`, never the page's Retry; a page
//! whose controls changed pauses the worker; a full conversation loses the lease.

use crate::engine::Engine;
use crate::ids::*;
use crate::input::ExecErrorCode;
use crate::kind::ExecutorKind;
use crate::limits::APP_NAME_BYTES_MAX;
use crate::model::*;
use crate::time::Timestamp;
use crate::wake::WakeReason;
use std::sync::Arc;

/// What went wrong, as the executor said it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure<'a> {
    /// A command failed with this code (its attempt is still scheduled).
    Command(&'a ExecErrorCode),
    /// The worker's conversation shows this error.
    Page(ErrorKind),
}

/// One thing the engine does about a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The attempt concerned ends so: a command's own attempt, or, for a page error, the
    /// turn that was running when it showed (if one was).
    End(AttemptState, AttemptOutcome),
    /// The lease on the conversation is lost (after a failed command, a half-made
    /// binding of a `conversation.create` is dropped first).
    LoseBinding,
    /// The undelivered wake comes back as it was (`idle_only`: only for the turn's end).
    Restore { idle_only: bool },
    /// The undelivered wake comes back after a backoff; after several definite
    /// non-deliveries in a row the worker is paused instead.
    Retry,
    /// A delivery-timeout wake: a fresh `continue`, never the page's Retry.
    FreshContinue,
    /// A ChatGPT turn ended on an error card: a fresh continuation, never the page's
    /// Retry (a CLI session's error holds the worker until another state instead: a CLI
    /// that fails every turn the same way must not be driven round in a loop).
    ContinueAfterPageError,
    /// The worker is paused for a person (see [`pause_detail`] for the words).
    Pause(PauseReason),
    /// The account (executor and worker kind) is held until its limit's time, or paused
    /// for a person when it needs a check or names no time. Nothing follows without a
    /// known executor.
    Account,
    /// A CLI session's limit ended the turn that hit it: the worker wakes as idle, and
    /// the account's hold (or pause) keeps the next turn back until it lifts.
    LimitEndsCliTurn,
    /// A dialog covers the conversation: the worker is held until a state without it.
    Dialog,
}

/// The table: what the engine does, in order, about each failure.
pub(crate) fn steps(failure: Failure<'_>) -> &'static [Step] {
    use AttemptOutcome as O;
    use AttemptState::{Cancelled, Failed};
    use ErrorKind as K;
    use ExecErrorCode as C;
    use Step::*;
    match failure {
        // Both ways: the turn timed out; a fresh `continue` follows (with a command in
        // flight the wake merges into its intent, cleared if that command lands).
        Failure::Command(C::MessageDeliveryTimeout) | Failure::Page(K::DeliveryTimeout) => {
            &[End(Failed, O::DeliveryTimeout), FreshContinue]
        }
        // The page's controls changed: fail closed and pause. A page showing it leaves
        // the turn as it is (it may still end by itself).
        Failure::Command(C::HostUiChanged) => &[End(Failed, O::HostUiChanged), Pause(PauseReason::HostUiChanged)],
        Failure::Page(K::HostUiChanged) => &[Pause(PauseReason::HostUiChanged)],
        // The conversation is gone or full. A command was definitely not delivered: the
        // wake comes back after a backoff (even an explicit recovery backs off: an
        // executor that cannot open a conversation must not be asked again in a tight
        // loop). A page that shows it full loses the lease, which ends its open turn.
        Failure::Command(C::ConversationClosed | C::ConversationFull) => {
            &[End(Cancelled, O::ConversationLost), LoseBinding, Retry]
        }
        Failure::Page(K::ConversationFull) => &[LoseBinding],
        // The app could not be chosen before a send: definitely not sent; the wake comes
        // back, held by the pause (never a blind retry loop: the same page would fail
        // the same way).
        Failure::Command(C::AppNotSelected) => {
            &[End(Cancelled, O::NotDelivered), Restore { idle_only: false }, Pause(PauseReason::AppNotSelected)]
        }
        // The app is gone from this conversation: the turn ends as a page error, the
        // lease is lost (never a retry here) and a person recovers the worker into a new
        // conversation.
        Failure::Page(K::AppUnavailable) => {
            &[End(Failed, O::PageError), LoseBinding, Pause(PauseReason::AppUnavailable)]
        }
        // Definitely not delivered: back after a backoff.
        Failure::Command(C::DeadlineExceeded | C::ComposerBusy) => &[End(Cancelled, O::NotDelivered), Retry],
        // Withdrawn as asked: the wake comes back (held by whatever made it unwanted).
        Failure::Command(C::Cancelled) => &[End(Cancelled, O::Withdrawn), Restore { idle_only: false }],
        // No mid-turn steering now: the wake waits for the turn's end.
        Failure::Command(C::SteeringUnavailable) => &[End(Cancelled, O::NotDelivered), Restore { idle_only: true }],
        // May or may not have been delivered: fail closed, never resend (spec 000 §22).
        Failure::Command(C::AmbiguousSubmission | C::Other(_)) => {
            &[End(Failed, O::Ambiguous), Pause(PauseReason::AmbiguousSubmission)]
        }
        // A turn the orchestrator did not start: never resumed by itself (whatever
        // started it may start more). The open turn stays open; a later state ends it.
        Failure::Page(K::ForeignTurn) => &[Pause(PauseReason::ForeignTurn)],
        // A dialog never ends the turn: it may go on underneath.
        Failure::Page(K::BlockedByDialog) => &[Dialog],
        // Limits and account checks end the running turn as a page error and hold or
        // pause the account.
        Failure::Page(K::UsageLimit | K::RateLimited | K::SuspiciousActivity | K::Challenge | K::LoginRequired) => {
            &[End(Failed, O::PageError), Account, LimitEndsCliTurn]
        }
        // Any other error card on the latest turn (its words unknown, or "Something went
        // wrong"): the turn ended; a fresh continuation follows, never Retry.
        Failure::Page(K::Generic) => &[End(Failed, O::PageError), ContinueAfterPageError],
    }
}

/// What the steps of one failure apply to.
pub(crate) struct Trouble<'a> {
    pub worker: WorkerId,
    pub failure: Failure<'a>,
    /// The attempt `End` closes (and a command's wake comes from): the failed command's,
    /// or the turn running when the page showed the error.
    pub attempt: Option<AttemptId>,
    /// Who asked for what a fresh `continue` replaces: the failed command's origin, or
    /// the scheduler for a page.
    pub origin: Origin,
    /// The executor's words: a failed command's detail (truncated), or the page's words.
    pub words: Option<Arc<str>>,
    /// The page's reset time of a limit, when it gave one.
    pub until: Option<Timestamp>,
    /// The executor holding the worker's binding when the page showed the error.
    pub executor: Option<ExecutorId>,
    /// The conversation's state before this report.
    pub previous: ConversationState,
}

impl Engine {
    /// Takes the steps of the table for one failure, in order.
    pub(crate) fn react(&mut self, t: Trouble<'_>) {
        let id = t.worker;
        for step in steps(t.failure) {
            match *step {
                Step::End(state, outcome) => {
                    if let Some(a) = t.attempt {
                        self.close_attempt(a, state, outcome, Some(&code(t.failure)));
                    }
                }
                Step::LoseBinding => match t.failure {
                    Failure::Command(_) => {
                        self.forget_pending_binding(id);
                        self.lose_binding(id, ConversationState::Closed);
                    }
                    Failure::Page(kind) => self.lose_binding(id, ConversationState::Error(kind)),
                },
                Step::Restore { idle_only } => {
                    let attempt = t.attempt.expect("a command's failure names its attempt");
                    self.restore_intent(attempt, None, idle_only);
                }
                Step::Retry => {
                    let attempt = t.attempt.expect("a command's failure names its attempt");
                    self.retry_after_non_delivery(id, attempt);
                }
                Step::FreshContinue => self.wake(id, WakeReason::DeliveryTimeout, t.origin, IntentPayload::Continue),
                Step::ContinueAfterPageError => {
                    if !self.state.workers[&id].spec.executor.is_cli() {
                        self.wake(id, WakeReason::PageError, t.origin, IntentPayload::Continue);
                    }
                }
                Step::Pause(reason) => {
                    let detail = pause_detail(self, &t, reason);
                    self.set_pause(id, reason, Some(&detail));
                }
                Step::Account => {
                    let Failure::Page(kind) = t.failure else { continue };
                    let Some(executor) = t.executor.clone() else { return };
                    let worker_kind = self.state.workers[&id].spec.executor;
                    let account = AccountKey { executor, kind: worker_kind };
                    match kind {
                        ErrorKind::UsageLimit if t.until.is_none() => {
                            let detail = usage_limit_detail(worker_kind);
                            self.pause_account(&account, PauseReason::UsageLimit, &detail);
                        }
                        ErrorKind::UsageLimit => {
                            self.hold_account(&account, HoldReason::UsageLimit, t.until, t.words.clone())
                        }
                        ErrorKind::RateLimited => {
                            self.hold_account(&account, HoldReason::RateLimited, t.until, t.words.clone())
                        }
                        kind if kind.needs_account_check() => {
                            let detail = account_check_detail(kind, worker_kind);
                            self.pause_account(&account, PauseReason::AccountCheck, &detail);
                        }
                        _ => {}
                    }
                }
                Step::LimitEndsCliTurn => {
                    let worker_kind = self.state.workers[&id].spec.executor;
                    if let Failure::Page(kind) = t.failure
                        && worker_kind.is_cli()
                        && kind.is_account_limit()
                    {
                        self.wake(id, WakeReason::Idle, Origin::Scheduler, IntentPayload::Continue);
                    }
                }
                Step::Dialog => {
                    self.conversation_hold_shown(id, HoldReason::BlockedByDialog, t.previous, t.words.clone())
                }
            }
        }
    }
}

/// The error code an ended attempt records: the command's, or the page's error kind (a
/// page's delivery timeout records the command code of the same thing).
fn code(failure: Failure<'_>) -> String {
    match failure {
        Failure::Command(code) => code.as_str().to_string(),
        Failure::Page(ErrorKind::DeliveryTimeout) => ExecErrorCode::MessageDeliveryTimeout.as_str().to_string(),
        Failure::Page(kind) => kind.as_str().to_string(),
    }
}

/// The actionable sentence of a pause a failure causes.
fn pause_detail(engine: &Engine, t: &Trouble<'_>, reason: PauseReason) -> String {
    let words = t.words.as_deref();
    match reason {
        PauseReason::HostUiChanged => {
            "The ChatGPT page's controls changed; the executor failed closed. Check the extension, then resume.".into()
        }
        PauseReason::AppNotSelected => app_not_selected_detail(words.unwrap_or("")),
        PauseReason::AppUnavailable => {
            let words = words.map(|d| format!(" ('{d}')")).unwrap_or_default();
            format!(
                "ChatGPT no longer lets this conversation use the orchestrator's app{words}. Recover the worker into a new conversation: Continue anyway opens a fresh one with the recovery prompt, or attach it to a conversation you opened and resume."
            )
        }
        PauseReason::ForeignTurn => foreign_turn_detail(engine.state.workers[&t.worker].spec.executor, words),
        PauseReason::AmbiguousSubmission => {
            let sequence = t.attempt.map_or(0, |a| engine.state.attempts[&a].sequence);
            format!(
                "Attempt {sequence} may or may not have reached the conversation. Open it and check, then continue now or resume."
            )
        }
        // Not a pause the table causes.
        _ => String::new(),
    }
}

/// The actionable sentence of an account-check pause.
fn account_check_detail(kind: ErrorKind, worker_kind: ExecutorKind) -> String {
    if worker_kind.is_cli() {
        let cli = cli_name(worker_kind);
        return format!(
            "{cli} is not logged in (or its account needs a check). Log it in on the executor's machine, then resume."
        );
    }
    match kind {
        ErrorKind::SuspiciousActivity => {
            "ChatGPT showed 'Suspicious activity detected'. Check the browser, then resume.".into()
        }
        ErrorKind::Challenge => {
            "ChatGPT showed a human check ('Verify you are human'). Complete it in the browser, then resume.".into()
        }
        _ => "ChatGPT is logged out. Log in in the browser, then resume.".into(),
    }
}

/// The actionable sentence of a usage-limit pause (a limit that names no reset time).
fn usage_limit_detail(worker_kind: ExecutorKind) -> String {
    if worker_kind.is_cli() {
        let cli = cli_name(worker_kind);
        return format!("{cli}'s usage limit was reached and it named no reset time. Resume once it is over.");
    }
    "ChatGPT's usage limit was reached and the page names no reset time. Resume once it is over.".into()
}

/// The actionable sentence of a foreign-turn pause, with the executor's words (untrusted,
/// capped by the adapter) when it gave some.
fn foreign_turn_detail(worker_kind: ExecutorKind, words: Option<&str>) -> String {
    let session = if worker_kind.is_cli() {
        format!("this {} session", cli_name(worker_kind))
    } else {
        "this conversation".into()
    };
    let words = words.map(|w| format!(" ('{w}')")).unwrap_or_default();
    format!(
        "A turn the orchestrator did not start ran in {session}{words}. Look at the session (a hook, a scheduled task or a person may have started it), then resume."
    )
}

/// The actionable sentence of an `APP_NOT_SELECTED` pause. The result's `detail` names
/// the app the executor looked for (its setting); a longer text is not a name and is
/// left out.
fn app_not_selected_detail(detail: &str) -> String {
    let name = detail.trim();
    if name.is_empty() || name.len() > APP_NAME_BYTES_MAX || name.contains(['\'', '\n']) {
        return "ChatGPT did not show the orchestrator's app in this conversation: check it is installed and its name in the extension settings, then resume".into();
    }
    format!(
        "ChatGPT did not show the app '{name}' in this conversation: check it is installed and its name in the extension settings, then resume"
    )
}

/// How people call a CLI kind.
fn cli_name(kind: ExecutorKind) -> &'static str {
    match kind {
        ExecutorKind::Codex => "Codex CLI",
        ExecutorKind::Claude => "Claude Code",
        ExecutorKind::Chatgpt => "ChatGPT",
    }
}
