//! The continuity sentences pinned in `docs/protocol/fixtures/rules/sentences.json`, the
//! one list of these words the extension's copy (`extension/src/ui/event-text.js`) is
//! checked against: every event kind (a new one fails to compile here until it has a
//! case), every reason, outcome and error kind a sentence tells apart, for every executor
//! kind. `UPDATE_FIXTURES=1 cargo test -p executor-protocol --test sentences` rewrites
//! the file after a deliberate change of words; the extension's test then shows where its
//! copy differs.

use caller_protocol::EventOut;
use engine::Timestamp;
use engine::block::BlockStatus;
use engine::deadman::{DeadManAction, DeadManCondition};
use engine::event::{Event, EventKind};
use engine::ids::{Cursor, ExecutorId, MessageId, RunId, WorkerId};
use engine::input::SteerLanding;
use engine::kind::ExecutorKind;
use engine::model::{
    AttemptOutcome, AttemptReason, AttemptState, ConversationState, ErrorKind, HoldReason, Lifecycle, PauseReason,
    RunStatus, SteeringOutcome,
};
use engine::policy::Mode;
use engine::wake::{WakeReason, WakeSet};
use executor_protocol::continuity::{is_continuity, sentence};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// When every case happened (2025-11-30 01:26:40 UTC).
const T0: u64 = 1_764_466_000_000;
const MINUTE_MS: u64 = 60_000;

/// Every variant of a fieldless enum, in order; a variant added to the enum fails to
/// compile here until it is listed.
macro_rules! every {
    ($ty:ident: $($variant:ident),+ $(,)?) => {{
        fn _listed(x: $ty) {
            match x {
                $($ty::$variant)|+ => {}
            }
        }
        vec![$($ty::$variant),+]
    }};
}

/// The position of `kind`'s variant in [`EventKind`], for the coverage check. Exhaustive
/// on purpose: a new event kind fails to compile here, and then fails
/// [`every_event_kind_has_a_case`] until [`cases`] words it.
fn variant(kind: &EventKind) -> usize {
    match kind {
        EventKind::RunCreated => 0,
        EventKind::RunContextUpdated => 1,
        EventKind::RunPolicyChanged { .. } => 2,
        EventKind::RunEnded { .. } => 3,
        EventKind::WorkerSpawned => 4,
        EventKind::WorkerAttached { .. } => 5,
        EventKind::WorkerProgress { .. } => 6,
        EventKind::WorkerCompleted { .. } => 7,
        EventKind::WorkerFailed { .. } => 8,
        EventKind::WorkerCancelled { .. } => 9,
        EventKind::WorkerFollowup => 10,
        EventKind::WorkerAwaitingHuman { .. } => 11,
        EventKind::WorkerHumanResolved => 12,
        EventKind::WorkerAwaitingDependency { .. } => 13,
        EventKind::WorkerDependencyReleased { .. } => 14,
        EventKind::WorkerPaused { .. } => 15,
        EventKind::WorkerResumed => 16,
        EventKind::PolicyChanged { .. } => 17,
        EventKind::ResumeScheduled { .. } => 18,
        EventKind::ExecutionDeferred { .. } => 19,
        EventKind::ResumeCancelled { .. } => 20,
        EventKind::ExecutionScheduled { .. } => 21,
        EventKind::ExecutionSubmitted => 22,
        EventKind::ExecutionGenerating => 23,
        EventKind::ExecutionIdle => 24,
        EventKind::ExecutionEnded { .. } => 25,
        EventKind::ContinuationWarning { .. } => 26,
        EventKind::ContinuationPausedForStall { .. } => 27,
        EventKind::ContinuationStallAcknowledged => 28,
        EventKind::BindingVerified { .. } => 29,
        EventKind::BindingLost { .. } => 30,
        EventKind::ConversationError { .. } => 31,
        EventKind::MessageSent { .. } => 32,
        EventKind::SteeringRecorded { .. } => 33,
        EventKind::BlockReported { .. } => 34,
        EventKind::BlockInvalid { .. } => 35,
        EventKind::WorkerHeld { .. } => 36,
        EventKind::WorkerHoldLifted { .. } => 37,
        EventKind::DeadManFired { .. } => 38,
        EventKind::BindingRefused { .. } => 39,
        EventKind::SteerLanded { .. } => 40,
        EventKind::WorkerDependencyEnded { .. } => 41,
        EventKind::WorkerExecutorAbsent { .. } => 42,
        EventKind::NotificationAbandoned { .. } => 43,
    }
}

/// How many variants [`variant`] numbers.
const EVENT_KINDS: usize = 44;

fn text(s: &str) -> Arc<str> {
    Arc::from(s)
}

/// The representative events: every event kind, and for the kinds whose sentence depends
/// on a reason, an outcome, a time or page text, each of those.
fn cases() -> Vec<EventKind> {
    let mut out = vec![
        EventKind::RunCreated,
        EventKind::RunContextUpdated,
        EventKind::RunPolicyChanged { mode: Mode::Auto },
        EventKind::RunEnded { status: RunStatus::Completed },
        EventKind::WorkerSpawned,
        EventKind::WorkerAttached { conversation: text("https://chatgpt.com/c/6829e3b1-aaaa") },
        EventKind::WorkerProgress {
            summary: text("The parser handles quoted newlines"),
            commit: Some(text("4be1c0d")),
        },
        // Untrusted text: the first non-empty line, cut to 80 characters (not bytes).
        EventKind::WorkerProgress {
            summary: text(&format!("  \n\t Étape 2 — {}\nsecond line", "é".repeat(90))),
            commit: None,
        },
        EventKind::WorkerCompleted { summary: text("All tests pass") },
        EventKind::WorkerFailed { reason: text("The repository is gone") },
        EventKind::WorkerCancelled { reason: text("Superseded by /root/api") },
        EventKind::WorkerFollowup,
        EventKind::WorkerAwaitingHuman { reason: text("Which database should the tests use?") },
        EventKind::WorkerHumanResolved,
        EventKind::WorkerAwaitingDependency { reason: text("Waits for /root/schema") },
        EventKind::WorkerDependencyReleased { automatic: true },
        EventKind::WorkerDependencyEnded { dependency: WorkerId(4), outcome: Lifecycle::Failed },
        EventKind::WorkerDependencyEnded { dependency: WorkerId(4), outcome: Lifecycle::Cancelled },
        EventKind::WorkerPaused { reason: PauseReason::Operator, after_turn: true },
    ];
    let pauses = every!(PauseReason: Operator, Stall, HostUiChanged, AmbiguousSubmission, DeliveryFailing, UsageLimit,
        AccountCheck, AppUnavailable, AppNotSelected, ForeignTurn, CliRetrying);
    out.extend(pauses.into_iter().map(|reason| EventKind::WorkerPaused { reason, after_turn: false }));
    out.extend([
        EventKind::WorkerResumed,
        EventKind::PolicyChanged { mode: Mode::Auto, inherited: false },
        EventKind::PolicyChanged { mode: Mode::Manual, inherited: true },
        EventKind::ResumeScheduled { reasons: WakeSet::of(WakeReason::Idle), not_before: None },
        EventKind::ResumeCancelled { reasons: WakeSet::of(WakeReason::Idle) },
    ]);
    // The spacing floor's wait, rounded up: seconds, minutes, hours.
    for wait_ms in [44_100, 11 * MINUTE_MS + 1, 150 * MINUTE_MS] {
        let not_before = Timestamp(T0 + wait_ms);
        out.push(EventKind::ExecutionDeferred { reasons: WakeSet::of(WakeReason::Idle), not_before });
    }
    let reasons = every!(AttemptReason: Initial, AutoResume, ManualResume, Followup, Recovery, Checkpoint, Corrective);
    out.extend(reasons.into_iter().map(|reason| EventKind::ExecutionScheduled {
        reason,
        wake: WakeSet::EMPTY,
        sequence: 4,
    }));
    let keepalive = WakeSet::of(WakeReason::ActiveKeepalive);
    let timed_out = WakeSet::of(WakeReason::DeliveryTimeout);
    let mut both = keepalive;
    both.insert(WakeReason::DeliveryTimeout);
    for (reason, wake) in [
        (AttemptReason::AutoResume, keepalive),
        (AttemptReason::AutoResume, timed_out),
        (AttemptReason::ManualResume, timed_out),
        (AttemptReason::AutoResume, both),
        (AttemptReason::Initial, timed_out),
        (AttemptReason::AutoResume, WakeSet::of(WakeReason::PageError)),
        (AttemptReason::ManualResume, WakeSet::of(WakeReason::HumanResolved)),
    ] {
        out.push(EventKind::ExecutionScheduled { reason, wake, sequence: 5 });
    }
    out.extend([EventKind::ExecutionSubmitted, EventKind::ExecutionGenerating, EventKind::ExecutionIdle]);
    let outcomes = every!(AttemptOutcome: TurnEnded, Steered, WorkerCompleted, WorkerFailed, WorkerCancelled,
        WorkerBlocked, DeliveryTimeout, Ambiguous, HostUiChanged, NotDelivered, ConversationLost, PageError, Withdrawn);
    out.extend(outcomes.into_iter().map(|outcome| EventKind::ExecutionEnded { state: AttemptState::Failed, outcome }));
    out.extend([
        EventKind::ContinuationWarning { attempts: 3, quiet_ms: 40 * MINUTE_MS },
        EventKind::ContinuationPausedForStall { attempts: 5, quiet_ms: 70 * MINUTE_MS },
        EventKind::ContinuationStallAcknowledged,
        EventKind::BindingVerified { conversation: text("https://chatgpt.com/c/6829e3b1-aaaa") },
        EventKind::BindingLost { why: ConversationState::Closed },
    ]);
    let errors = every!(ErrorKind: DeliveryTimeout, ConversationFull, HostUiChanged, UsageLimit, LoginRequired, Generic,
        RateLimited, SuspiciousActivity, Challenge, BlockedByDialog, AppUnavailable, ForeignTurn);
    // The event log says only `error` for these: the sentence knows more than its data.
    out.extend(
        [ErrorKind::ConversationFull, ErrorKind::AppUnavailable, ErrorKind::Generic]
            .map(|kind| EventKind::BindingLost { why: ConversationState::Error(kind) }),
    );
    out.extend(errors.into_iter().map(|kind| EventKind::ConversationError { kind }));
    out.push(EventKind::MessageSent { message: MessageId(9), from: Some(WorkerId(1)) });
    let steering = every!(SteeringOutcome: ContinueAsPlanned, CorrectDirection, ChangePriority, ProvideDependency,
        RequestEvidence, Pause, TerminalReconcile);
    out.extend(steering.into_iter().map(|outcome| EventKind::SteeringRecorded {
        outcome,
        material: true,
        coalesced: false,
    }));
    out.extend([
        EventKind::BlockReported { status: BlockStatus::Working },
        EventKind::BlockInvalid { code: text("BLOCK_UNREADABLE") },
    ]);
    // 16:04 UTC on the day of T0.
    let until = Some(Timestamp((T0 / (24 * 60 * MINUTE_MS)) * 24 * 60 * MINUTE_MS + (16 * 60 + 4) * MINUTE_MS));
    for (reason, until, detail) in [
        (HoldReason::UsageLimit, until, None),
        (HoldReason::UsageLimit, None, Some("You've hit your usage limit")),
        (HoldReason::RateLimited, until, None),
        (HoldReason::RateLimited, None, None),
        (HoldReason::AwaitingApproval, None, Some("Orchestrator")),
        (HoldReason::AwaitingApproval, until, Some("run `cargo test --workspace`")),
        (HoldReason::AwaitingApproval, None, None),
        (HoldReason::BlockedByDialog, None, Some("Share this chat\nwith your team")),
        (HoldReason::BlockedByDialog, until, None),
        (HoldReason::PageUnrecognized, None, Some("Page not recognized: a form in the latest turn")),
        (HoldReason::PageUnrecognized, None, None),
    ] {
        out.push(EventKind::WorkerHeld { reason, until, detail: detail.map(text) });
    }
    let holds = every!(HoldReason: UsageLimit, RateLimited, BlockedByDialog, AwaitingApproval, PageUnrecognized);
    out.extend(holds.into_iter().map(|reason| EventKind::WorkerHoldLifted { reason }));
    for (condition, action) in [
        (DeadManCondition::ConversationsLost, DeadManAction::Notified),
        (DeadManCondition::NoProgress, DeadManAction::RecoveryRequested),
    ] {
        out.push(EventKind::DeadManFired {
            condition,
            action,
            quiet_ms: 125 * MINUTE_MS,
            workers: vec![WorkerId(7)],
            conversations: vec![text("https://chatgpt.com/c/6829e3b1-aaaa")],
        });
    }
    out.push(EventKind::BindingRefused {
        executor: ExecutorId::new("chrome-2"),
        conversation: text("https://chatgpt.com/c/6829e3b1-bbbb"),
        why: text("the conversation belongs to another executor"),
    });
    out.extend(every!(SteerLanding: Merged, NextTurn).into_iter().map(|landed| EventKind::SteerLanded { landed }));
    // No executor of the worker's kind since 01:21 UTC: a browser, a Codex CLI executor.
    for (kind, executor) in [(ExecutorKind::Chatgpt, None), (ExecutorKind::Codex, Some("cli-host"))] {
        let since = Timestamp(T0 - 5 * MINUTE_MS);
        out.push(EventKind::WorkerExecutorAbsent { kind, since, executor: executor.map(ExecutorId::new) });
    }
    out.push(EventKind::NotificationAbandoned {
        notice: engine::notify::NoticeId::new(Cursor(800), 0),
        kind: engine::notify::NoticeKind::HumanQuestion,
        detail: text("not taken for a day"),
    });
    out
}

fn event(kind: EventKind) -> Event {
    Event { cursor: Cursor(812), at: Timestamp(T0), run: RunId(3), worker: Some(WorkerId(7)), attempt: None, kind }
}

/// One case: the event as the event log (`worker_events`) carries it, whether it is a
/// continuity event, and its sentence for each executor kind.
fn case(kind: EventKind) -> (Value, bool, BTreeMap<&'static str, String>) {
    let e = event(kind);
    let texts = ExecutorKind::ALL.into_iter().map(|k| (k.as_str(), sentence(&e, k))).collect();
    let out = serde_json::to_value(EventOut::from(&e)).expect("an event serializes");
    (out, is_continuity(&e.kind), texts)
}

/// The fixture's text for [`cases`].
fn fixture_text() -> String {
    let all: Vec<_> = cases().into_iter().map(case).collect();
    // Cases whose event-log data another case shares with other words: the log cannot
    // tell them apart, so a reader of the log alone may show either case's sentence.
    let mut words_of: BTreeMap<String, Vec<&BTreeMap<&str, String>>> = BTreeMap::new();
    for (e, _, texts) in &all {
        words_of.entry(e.to_string()).or_default().push(texts);
    }
    let attempt_reasons: Vec<&str> =
        every!(AttemptReason: Initial, AutoResume, ManualResume, Followup, Recovery, Checkpoint, Corrective)
            .into_iter()
            .map(AttemptReason::as_str)
            .collect();
    let attempt_outcomes: Vec<&str> = every!(AttemptOutcome: TurnEnded, Steered, WorkerCompleted, WorkerFailed,
        WorkerCancelled, WorkerBlocked, DeliveryTimeout, Ambiguous, HostUiChanged, NotDelivered, ConversationLost,
        PageError, Withdrawn)
    .into_iter()
    .map(AttemptOutcome::as_str)
    .collect();
    let rule = "The sentences people read for a worker's events (operator.summary's recentEvents[].text), \
                written by executor-protocol's continuity::sentence for each executor kind. The extension words \
                worker_events' event-log items (which carry no text) with its copy in \
                extension/src/ui/event-text.js, which must say the same for every continuity case. Cases marked \
                ambiguousInTheLog share their event-log data with a case of other words (binding.lost says only \
                `error`): there the copy may say either. attemptReasons and attemptOutcomes are every reason and \
                outcome an attempt can have, each of which extension/src/ui/timeline-model.js must label. \
                Generated: UPDATE_FIXTURES=1 cargo test -p executor-protocol --test sentences.";
    let mut lines = vec![
        format!("{{\"rule\":{},", json!(rule)),
        format!(" \"attemptReasons\":{},", json!(attempt_reasons)),
        format!(" \"attemptOutcomes\":{},", json!(attempt_outcomes)),
        " \"cases\":[".to_string(),
    ];
    let count = all.len();
    for (i, (e, continuity, texts)) in all.iter().enumerate() {
        let ambiguous = words_of[&e.to_string()].iter().any(|other| *other != texts);
        let mut line = json!({ "event": e, "continuity": continuity, "text": texts });
        if ambiguous {
            line["ambiguousInTheLog"] = json!(true);
        }
        lines.push(format!("  {line}{}", if i + 1 < count { "," } else { "" }));
    }
    lines.push("]}".to_string());
    lines.join("\n") + "\n"
}

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../docs/protocol/fixtures/rules/sentences.json")
}

#[test]
fn the_sentences_are_the_fixtures() {
    let expected = fixture_text();
    let path = fixture_path();
    if std::env::var_os("UPDATE_FIXTURES").is_some_and(|v| v == "1") {
        std::fs::write(&path, &expected).expect("the fixture is writable");
    }
    let found = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        found == expected,
        "{} differs from continuity::sentence; after a deliberate change of words run \
         UPDATE_FIXTURES=1 cargo test -p executor-protocol --test sentences and update \
         extension/src/ui/event-text.js until the extension's unit tests pass",
        path.display()
    );
}

#[test]
fn every_event_kind_has_a_case() {
    let covered: std::collections::BTreeSet<usize> = cases().iter().map(variant).collect();
    let missing: Vec<usize> = (0..EVENT_KINDS).filter(|i| !covered.contains(i)).collect();
    assert!(missing.is_empty(), "event kinds (by variant number) without a sentence case: {missing:?}");
    assert!(covered.iter().all(|i| *i < EVENT_KINDS), "EVENT_KINDS counts every variant");
}

#[test]
fn only_the_event_log_of_binding_lost_is_ambiguous() {
    let text = fixture_text();
    let ambiguous: Vec<&str> = text.lines().filter(|l| l.contains("\"ambiguousInTheLog\":true")).collect();
    assert_eq!(ambiguous.len(), 3, "{ambiguous:#?}");
    assert!(ambiguous.iter().all(|l| l.contains("\"name\":\"binding.lost\"")), "{ambiguous:#?}");
}
