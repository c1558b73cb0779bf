//! Which events are continuity events, their sentences, and the bounded buffers of the
//! newest per worker, without IO.

use engine::Timestamp;
use engine::event::{Event, EventKind};
use engine::ids::{Cursor, RunId, WorkerId};
use engine::kind::ExecutorKind;
use engine::model::{AttemptOutcome, AttemptReason, AttemptState, ErrorKind, PauseReason};
use engine::wake::{WakeReason, WakeSet};
use executor_protocol::continuity::{
    RecentEvents, RecentSentences, SUMMARY_EVENTS_MAX, WORKER_EVENTS_MAX, is_continuity, sentence,
};
use std::sync::Arc;

const T0: u64 = 1_764_466_000_000;

fn event(cursor: u64, worker: u64, kind: EventKind) -> Event {
    Event {
        cursor: Cursor(cursor),
        at: Timestamp(T0 + cursor * 1_000),
        run: RunId(1),
        worker: Some(WorkerId(worker)),
        attempt: None,
        kind,
    }
}

fn scheduled(sequence: u32) -> EventKind {
    EventKind::ExecutionScheduled { reason: AttemptReason::AutoResume, wake: WakeSet::EMPTY, sequence }
}

fn progress(summary: &str) -> EventKind {
    EventKind::WorkerProgress { summary: Arc::from(summary), commit: None }
}

fn ended(outcome: AttemptOutcome) -> EventKind {
    EventKind::ExecutionEnded { state: AttemptState::Failed, outcome }
}

#[test]
fn continuity_events_leave_out_the_per_turn_lifecycle_and_mirrors() {
    assert!(is_continuity(&progress("done")));
    assert!(is_continuity(&scheduled(2)));
    assert!(is_continuity(&ended(AttemptOutcome::DeliveryTimeout)));
    assert!(is_continuity(&EventKind::WorkerPaused { reason: PauseReason::Operator, after_turn: true }));
    assert!(!is_continuity(&ended(AttemptOutcome::TurnEnded)));
    assert!(!is_continuity(&ended(AttemptOutcome::WorkerBlocked)));
    assert!(!is_continuity(&EventKind::ExecutionGenerating));
    assert!(!is_continuity(&EventKind::ExecutionIdle));
    assert!(!is_continuity(&EventKind::ResumeScheduled { reasons: WakeSet::EMPTY, not_before: None }));
    assert!(!is_continuity(&EventKind::WorkerPaused { reason: PauseReason::Stall, after_turn: false }));
}

#[test]
fn sentences_are_short_and_say_what_happened() {
    let say = |kind| sentence(&event(1, 1, kind), ExecutorKind::Chatgpt);
    assert_eq!(say(scheduled(4)), "Auto resume sent (attempt 4)");
    assert_eq!(
        say(EventKind::ExecutionScheduled { reason: AttemptReason::Checkpoint, wake: WakeSet::EMPTY, sequence: 9 }),
        "Keepalive checkpoint sent (attempt 9)"
    );
    let keepalive = WakeSet::of(WakeReason::ActiveKeepalive);
    assert_eq!(
        say(EventKind::ExecutionScheduled { reason: AttemptReason::AutoResume, wake: keepalive, sequence: 3 }),
        "Keepalive checkpoint sent (attempt 3)"
    );
    let timed_out = WakeSet::of(WakeReason::DeliveryTimeout);
    assert_eq!(
        say(EventKind::ExecutionScheduled { reason: AttemptReason::AutoResume, wake: timed_out, sequence: 5 }),
        "Fresh continue sent (attempt 5)"
    );
    assert_eq!(
        say(EventKind::ConversationError { kind: ErrorKind::DeliveryTimeout }),
        "Delivery timed out; a fresh continue follows"
    );
    assert_eq!(say(ended(AttemptOutcome::DeliveryTimeout)), "Delivery timed out; a fresh continue follows");
    assert_eq!(
        say(EventKind::WorkerPaused { reason: PauseReason::Operator, after_turn: true }),
        "Pauses after the current turn"
    );
    let deferred =
        EventKind::ExecutionDeferred { reasons: WakeSet::EMPTY, not_before: Timestamp(T0 + 1_000 + 690_001) };
    assert_eq!(say(deferred), "Next continuation in 12 min (turns are spaced out)");
    // Agent text: the first non-empty line, cut on a character boundary.
    let long = format!("\n  {}\nsecond line", "é".repeat(100));
    assert_eq!(say(progress(&long)), format!("Progress: {}…", "é".repeat(80)));
}

/// Every worker in these tests is a ChatGPT one.
const CHATGPT: fn(WorkerId) -> ExecutorKind = |_| ExecutorKind::Chatgpt;

#[test]
fn summaries_keep_the_newest_five_per_worker_without_repeats() {
    let mut recent = RecentSentences::after(Cursor(0));
    recent.absorb(&event(1, 1, EventKind::ConversationError { kind: ErrorKind::DeliveryTimeout }), CHATGPT);
    recent.absorb(&event(2, 1, ended(AttemptOutcome::DeliveryTimeout)), CHATGPT);
    recent.absorb(&event(3, 1, EventKind::ExecutionGenerating), CHATGPT);
    recent.absorb(&event(4, 2, progress("the other worker")), CHATGPT);
    let texts = |r: &RecentSentences, w| r.of(WorkerId(w)).into_iter().map(|e| e.text).collect::<Vec<_>>();
    assert_eq!(texts(&recent, 1), ["Delivery timed out; a fresh continue follows"], "the mirror is left out");
    assert_eq!(recent.of(WorkerId(1))[0].kind, "conversation.error");
    assert_eq!(recent.of(WorkerId(1))[0].at_ms, T0 + 1_000);
    for cursor in 5..15 {
        recent.absorb(&event(cursor, 1, scheduled(cursor as u32)), CHATGPT);
    }
    let expected: Vec<String> = (10..15).map(|n| format!("Auto resume sent (attempt {n})")).collect();
    assert_eq!(texts(&recent, 1), expected);
    assert_eq!(recent.of(WorkerId(1)).len(), SUMMARY_EVENTS_MAX);
    // Already seen: ignored.
    recent.absorb(&event(3, 1, progress("late")), CHATGPT);
    assert_eq!(texts(&recent, 1), expected);
    assert_eq!(recent.cursor(), Cursor(14));
    recent.retain(|w| w == WorkerId(2));
    assert!(recent.of(WorkerId(1)).is_empty());
    assert_eq!(texts(&recent, 2), ["Progress: the other worker"]);
}

#[test]
fn worker_events_keep_the_newest_continuity_events_in_order() {
    let mut recent = RecentEvents::default();
    for cursor in 1..=120 {
        let kind = if cursor % 2 == 0 { progress(&format!("step {cursor}")) } else { EventKind::ExecutionIdle };
        recent.absorb(&event(cursor, 1, kind));
    }
    let events = recent.into_events();
    assert_eq!(events.len(), WORKER_EVENTS_MAX);
    let cursors: Vec<u64> = events.iter().map(|e| e.cursor.0).collect();
    let expected: Vec<u64> = (1..=120).filter(|c| c % 2 == 0).skip(10).collect();
    assert_eq!(cursors, expected);
}

#[test]
fn holds_and_account_pauses_read_as_sentences_for_people() {
    use engine::model::HoldReason;
    // 2026-01-01 16:04 UTC.
    let at = Timestamp(1_767_283_440_000);
    let held = |reason, until, detail: Option<&str>| {
        sentence(
            &event(1, 2, EventKind::WorkerHeld { reason, until, detail: detail.map(Arc::from) }),
            ExecutorKind::Chatgpt,
        )
    };
    assert_eq!(held(HoldReason::UsageLimit, Some(at), Some("limit")), "Usage limit: resumes at 16:04 UTC");
    assert_eq!(held(HoldReason::RateLimited, Some(at), None), "ChatGPT asked to slow down: resumes at 16:04 UTC");
    assert_eq!(
        held(HoldReason::BlockedByDialog, None, Some("Temporary Chat")),
        "A dialog blocks the conversation: Temporary Chat"
    );
    let lifted =
        sentence(&event(2, 2, EventKind::WorkerHoldLifted { reason: HoldReason::UsageLimit }), ExecutorKind::Chatgpt);
    assert_eq!(lifted, "Usage limit over; resuming");
    let error = |kind| sentence(&event(3, 2, EventKind::ConversationError { kind }), ExecutorKind::Chatgpt);
    assert_eq!(error(ErrorKind::SuspiciousActivity), "Suspicious activity detected: a person must resume");
    let paused = EventKind::WorkerPaused { reason: PauseReason::AccountCheck, after_turn: false };
    assert!(is_continuity(&paused) && is_continuity(&EventKind::WorkerHoldLifted { reason: HoldReason::RateLimited }));
    // The hold's own event says more than the page error that started it.
    assert!(!is_continuity(&EventKind::ConversationError { kind: ErrorKind::UsageLimit }));
    assert!(is_continuity(&EventKind::ConversationError { kind: ErrorKind::Challenge }));
}

#[test]
fn the_app_states_read_as_sentences_for_people() {
    use engine::model::HoldReason;
    let held = |detail: Option<&str>| {
        let kind =
            EventKind::WorkerHeld { reason: HoldReason::AwaitingApproval, until: None, detail: detail.map(Arc::from) };
        sentence(&event(1, 2, kind), ExecutorKind::Chatgpt)
    };
    assert_eq!(held(Some("Orchestrator")), "Needs you: approve Orchestrator in this conversation");
    assert_eq!(held(None), "Needs you: approve the app in this conversation");
    let lifted = sentence(
        &event(2, 2, EventKind::WorkerHoldLifted { reason: HoldReason::AwaitingApproval }),
        ExecutorKind::Chatgpt,
    );
    assert_eq!(lifted, "Approval answered; the turn goes on");
    let paused =
        |reason| sentence(&event(3, 2, EventKind::WorkerPaused { reason, after_turn: false }), ExecutorKind::Chatgpt);
    assert!(paused(PauseReason::AppUnavailable).contains("recover into a new one"));
    assert!(paused(PauseReason::AppNotSelected).contains("did not show the app"));
    // The pause says more than the page error that caused it.
    assert!(!is_continuity(&EventKind::ConversationError { kind: ErrorKind::AppUnavailable }));
}

#[test]
fn the_app_states_decode() {
    let decode = |text: &str| match executor_protocol::decode_executor(text, executor_protocol::MESSAGE_BYTES_MAX)
        .expect("decodes")
    {
        executor_protocol::ExecutorMessage::State(s) => s,
        other => panic!("{other:?}"),
    };
    let s = decode(
        r#"{"v":1,"type":"conversation.state","workerId":"wrk-7","state":"awaiting_approval","seq":4,"detail":"Orchestrator"}"#,
    );
    let o = s.observation();
    assert_eq!(o.state, engine::model::ConversationState::AwaitingApproval);
    assert_eq!(o.detail.as_deref(), Some("Orchestrator"));
    let s = decode(
        r#"{"v":1,"type":"conversation.state","workerId":"wrk-7","state":"error","errorKind":"app_unavailable","seq":5}"#,
    );
    assert_eq!(s.observation().state, engine::model::ConversationState::Error(ErrorKind::AppUnavailable));
}

#[test]
fn page_states_decode_with_their_time_and_capped_clean_words() {
    let text = |kind: &str, detail: &str| {
        format!(
            r#"{{"v":1,"type":"conversation.state","workerId":"wrk-7","state":"error","errorKind":"{kind}","seq":4,"untilMs":1767283440000,"detail":"{detail}"}}"#
        )
    };
    let observation = |text: &str| match executor_protocol::decode_executor(text, executor_protocol::MESSAGE_BYTES_MAX)
        .expect("decodes")
    {
        executor_protocol::ExecutorMessage::State(s) => s.observation(),
        other => panic!("{other:?}"),
    };
    let o = observation(&text("rate_limited", "Too\\u0007 many\\n\\nrequests"));
    assert_eq!(o.state, engine::model::ConversationState::Error(ErrorKind::RateLimited));
    assert_eq!(o.until, Some(Timestamp(1_767_283_440_000)));
    assert_eq!(o.detail.as_deref(), Some("Too many requests"));
    // Long text is cut, never refused; an unknown kind is generic.
    let long = "x".repeat(1_000);
    let o = observation(&text("something_new", &long));
    assert_eq!(o.state, engine::model::ConversationState::Error(ErrorKind::Generic));
    let detail = o.detail.expect("kept");
    assert_eq!(detail.chars().count(), engine::limits::PAGE_DETAIL_CHARS_MAX);
    assert!(detail.ends_with('…'));
    // Only control characters or spaces: no text.
    assert_eq!(observation(&text("blocked_by_dialog", "\\u0000 \\t")).detail, None);
}

#[test]
fn a_foreign_turn_and_a_steer_that_became_the_next_turn_are_told_once() {
    use engine::SteerLanding;
    let say = |kind| sentence(&event(1, 1, kind), ExecutorKind::Chatgpt);
    let paused = EventKind::WorkerPaused { reason: PauseReason::ForeignTurn, after_turn: false };
    assert!(is_continuity(&paused));
    assert_eq!(say(paused), "Paused: a turn the orchestrator did not start ran in this session");
    // The pause tells it; the page error it came from is not told twice.
    assert!(!is_continuity(&EventKind::ConversationError { kind: ErrorKind::ForeignTurn }));
    let next = EventKind::SteerLanded { landed: SteerLanding::NextTurn };
    assert!(is_continuity(&next));
    assert_eq!(say(next), "The steer became the next turn (counted as a turn)");
    assert!(!is_continuity(&EventKind::SteerLanded { landed: SteerLanding::Merged }));
}

#[test]
fn a_cli_worker_s_sentences_name_its_cli_not_chatgpt() {
    use engine::model::HoldReason;
    let at = Timestamp(1_767_283_440_000);
    let say = |kind, host| sentence(&event(1, 1, kind), host);
    let limit = || EventKind::ConversationError { kind: ErrorKind::UsageLimit };
    assert_eq!(say(limit(), ExecutorKind::Codex), "Codex usage limit reached");
    assert_eq!(say(limit(), ExecutorKind::Claude), "Claude Code usage limit reached");
    assert_eq!(say(limit(), ExecutorKind::Chatgpt), "ChatGPT usage limit reached");
    let slow = || EventKind::WorkerHeld { reason: HoldReason::RateLimited, until: Some(at), detail: None };
    assert_eq!(say(slow(), ExecutorKind::Codex), "Codex asked to slow down: resumes at 16:04 UTC");
    let changed = || EventKind::WorkerPaused { reason: PauseReason::HostUiChanged, after_turn: false };
    assert_eq!(say(changed(), ExecutorKind::Chatgpt), "Paused: the ChatGPT page changed; check the extension");
    let cli = say(changed(), ExecutorKind::Claude);
    assert_eq!(cli, "Paused: Claude Code did not answer as expected; check the CLI executor's log");
    let generic = || EventKind::ConversationError { kind: ErrorKind::Generic };
    assert_eq!(say(generic(), ExecutorKind::Codex), "Codex reported an error");
    assert_eq!(say(ended(AttemptOutcome::PageError), ExecutorKind::Codex), "The turn ended with an error from Codex");
    let asks = |detail: Option<&str>| EventKind::WorkerHeld {
        reason: HoldReason::AwaitingApproval,
        until: None,
        detail: detail.map(Arc::from),
    };
    assert_eq!(say(asks(Some("run `cargo test`")), ExecutorKind::Codex), "Needs you: Codex asks to run `cargo test`");
    assert_eq!(say(asks(None), ExecutorKind::Codex), "Needs you: Codex asks for an approval");
    // The summary words each worker's sentence by its own kind.
    let mut recent = RecentSentences::after(Cursor(0));
    let kinds = |w: WorkerId| if w == WorkerId(1) { ExecutorKind::Codex } else { ExecutorKind::Chatgpt };
    recent.absorb(&event(1, 1, slow()), kinds);
    recent.absorb(&event(2, 2, slow()), kinds);
    assert_eq!(recent.of(WorkerId(1))[0].text, "Codex asked to slow down: resumes at 16:04 UTC");
    assert_eq!(recent.of(WorkerId(2))[0].text, "ChatGPT asked to slow down: resumes at 16:04 UTC");
}
