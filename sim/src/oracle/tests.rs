//! The oracle's checks on synthetic logs and sightings: each passes on a correct trace and
//! breaks on the fault it names.

use super::*;
use engine::ids::Cursor;
use engine::model::{AttemptState, PauseReason};
use engine::wake::WakeSet;

const W: WorkerId = WorkerId(2);

/// A synthetic log: one event a second, cursors dense from 1.
#[derive(Default)]
struct Trace(Vec<Event>);

impl Trace {
    /// The log as the run ended `minutes` after its last event.
    fn ended(&self, auto: bool, minutes: u64) -> Log<'_> {
        let last = self.0.last().map_or(Timestamp(0), |e| e.at);
        Log { events: &self.0, auto, start: Timestamp(0), end: last.plus_ms(minutes * 60_000) }
    }
    fn push(mut self, attempt: Option<u64>, kind: EventKind) -> Trace {
        let cursor = Cursor(self.0.len() as u64 + 1);
        let at = Timestamp(cursor.0 * 1_000);
        self.0.push(Event { cursor, at, run: RunId(1), worker: Some(W), attempt: attempt.map(AttemptId), kind });
        self
    }
    fn scheduled(self, attempt: u64, reasons: &[WakeReason]) -> Trace {
        let mut wake = WakeSet::EMPTY;
        for r in reasons {
            wake.insert(*r);
        }
        let kind = EventKind::ExecutionScheduled { reason: AttemptReason::AutoResume, wake, sequence: attempt as u32 };
        self.push(Some(attempt), kind)
    }
    fn submitted(self, attempt: u64) -> Trace {
        self.push(Some(attempt), EventKind::ExecutionSubmitted)
    }
    fn timed_out(self, attempt: u64) -> Trace {
        let kind = EventKind::ExecutionEnded { state: AttemptState::Failed, outcome: AttemptOutcome::DeliveryTimeout };
        self.push(Some(attempt), kind)
    }
    fn keepalive_due(self) -> Trace {
        let kind = EventKind::ResumeScheduled { reasons: WakeSet::of(WakeReason::ActiveKeepalive), not_before: None };
        self.push(None, kind)
    }
    fn paused(self) -> Trace {
        self.push(None, EventKind::WorkerPaused { reason: PauseReason::Operator, after_turn: false })
    }
}

/// A worker whose first turn runs.
fn running() -> Trace {
    Trace::default().scheduled(1, &[WakeReason::Initial]).submitted(1)
}

fn held(trace: Trace, reason: HoldReason, until_s: u64) -> Trace {
    let kind = EventKind::WorkerHeld { reason, until: Some(Timestamp(until_s * 1_000)), detail: None };
    trace.push(None, kind)
}

#[test]
fn nothing_is_scheduled_while_an_account_is_held() {
    // Held at 3 s until 10 s: an attempt at 4 s breaks, one at or after 10 s passes.
    let log = held(running(), HoldReason::UsageLimit, 10).scheduled(2, &[WakeReason::Idle]);
    let broken = account_holds_honoured(log.ended(true, 1), &BTreeMap::new());
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].starts_with("scheduled while the account was held: exe-2 for wrk-2 at 4000 ms"), "{broken:?}");
    let log = held(running(), HoldReason::RateLimited, 4).scheduled(2, &[WakeReason::Idle]);
    assert!(account_holds_honoured(log.ended(true, 1), &BTreeMap::new()).is_empty());
    // A dialog holds only its own conversation, with no time: not an account hold.
    let dialog = EventKind::WorkerHeld { reason: HoldReason::BlockedByDialog, until: None, detail: None };
    let log = running().push(None, dialog).scheduled(2, &[WakeReason::Idle]);
    assert!(account_holds_honoured(log.ended(true, 1), &BTreeMap::new()).is_empty());
}

fn unrecognized() -> Trace {
    running().push(None, EventKind::WorkerHeld { reason: HoldReason::PageUnrecognized, until: None, detail: None })
}

#[test]
fn nothing_is_scheduled_while_a_page_is_unrecognized() {
    let lifted = unrecognized()
        .push(None, EventKind::WorkerHoldLifted { reason: HoldReason::PageUnrecognized })
        .scheduled(2, &[WakeReason::Idle]);
    assert!(unrecognized_pages_honoured(lifted.ended(true, 1)).is_empty());
    let typed_beside_it = unrecognized().scheduled(2, &[WakeReason::Idle]);
    let broken = unrecognized_pages_honoured(typed_beside_it.ended(true, 1));
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].contains("unrecognized page not honoured"), "{broken:?}");
}

#[test]
fn a_fresh_continue_after_the_timeout_passes() {
    let log = running().timed_out(1).scheduled(2, &[WakeReason::DeliveryTimeout]).submitted(2);
    assert_eq!(delivery_timeouts_followed(log.ended(true, 1)), Vec::<String>::new());
}

#[test]
fn a_plain_resume_instead_of_the_continue_breaks() {
    let log = running().timed_out(1).scheduled(2, &[WakeReason::Idle]);
    let broken = delivery_timeouts_followed(log.ended(true, 1));
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].contains("exe-2 (wake idle)"), "{broken:?}");
}

#[test]
fn nothing_at_all_after_the_timeout_breaks_at_the_end() {
    let broken = delivery_timeouts_followed(running().timed_out(1).ended(true, 11));
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].contains("never got it in 11 min"), "{broken:?}");
    // A run that stops within the patience is not judged on it.
    assert!(delivery_timeouts_followed(running().timed_out(1).ended(true, 9)).is_empty());
}

#[test]
fn a_pause_a_completion_or_manual_mode_excuses_the_continue() {
    assert!(delivery_timeouts_followed(running().timed_out(1).paused().ended(true, 1)).is_empty());
    let done = running().timed_out(1).push(None, EventKind::WorkerCompleted { summary: "done".into() });
    assert!(delivery_timeouts_followed(done.ended(true, 1)).is_empty());
    assert!(delivery_timeouts_followed(running().timed_out(1).ended(false, 1)).is_empty());
}

#[test]
fn a_command_already_in_flight_carries_the_continue() {
    let log = running().scheduled(2, &[WakeReason::ActiveKeepalive]).timed_out(1).submitted(2);
    assert!(delivery_timeouts_followed(log.ended(true, 1)).is_empty());
    // ...but only that command: another attempt without the wake still breaks.
    let log = running().scheduled(2, &[WakeReason::ActiveKeepalive]).timed_out(1).timed_out(2);
    let log = log.scheduled(3, &[WakeReason::Idle]);
    assert_eq!(delivery_timeouts_followed(log.ended(true, 1)).len(), 1);
}

#[test]
fn a_keepalive_carried_by_an_attempt_or_superseded_passes() {
    let carried = running().keepalive_due().scheduled(2, &[WakeReason::ActiveKeepalive]);
    assert!(keepalives_kept(carried.ended(true, 1)).is_empty());
    let superseded = running().scheduled(2, &[WakeReason::Idle]).keepalive_due().submitted(2);
    assert!(keepalives_kept(superseded.ended(true, 1)).is_empty());
    let cancelled = running()
        .keepalive_due()
        .push(None, EventKind::ResumeCancelled { reasons: WakeSet::of(WakeReason::ActiveKeepalive) });
    assert!(keepalives_kept(cancelled.ended(true, 1)).is_empty());
}

#[test]
fn an_attempt_scheduled_after_the_end_is_found_by_log_order() {
    let done = || EventKind::WorkerCompleted { summary: "done".into() };
    let log = running().scheduled(2, &[WakeReason::Idle]).push(None, done());
    assert!(scheduled_after_end(log.ended(true, 1)).is_empty());
    let log = running().push(None, done()).scheduled(2, &[WakeReason::Idle]);
    assert_eq!(scheduled_after_end(log.ended(true, 1)).keys().copied().collect::<Vec<_>>(), vec![AttemptId(2)]);
}

#[test]
fn an_automatic_submission_while_paused_is_found() {
    let log = running().scheduled(2, &[WakeReason::Idle]).paused().submitted(2);
    assert_eq!(held_submissions(log.ended(true, 1)).len(), 1);
    let log = running().scheduled(2, &[WakeReason::Idle]).submitted(2).paused();
    assert!(held_submissions(log.ended(true, 1)).is_empty());
}

#[test]
fn a_keepalive_missing_from_the_next_attempt_was_dropped() {
    let log = running().keepalive_due().scheduled(2, &[WakeReason::Idle]);
    let broken = keepalives_kept(log.ended(true, 1));
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].starts_with("keepalive dropped: wrk-2"), "{broken:?}");
    assert_eq!(keepalives_kept(running().keepalive_due().ended(true, 61)).len(), 1);
    assert!(keepalives_kept(running().keepalive_due().ended(true, 59)).is_empty());
    assert!(keepalives_kept(running().keepalive_due().paused().ended(true, 61)).is_empty());
}

/// The key of the first attempt, a create.
const CREATE: &str = "conversation.create:exe-1";

fn attach_kind() -> EventKind {
    EventKind::WorkerAttached { conversation: "https://chatgpt.com/c/fresh-0".into() }
}

/// A worker typed into `chat-0`, then attached to `fresh-0` at 3 s (event #3).
fn attached() -> Trace {
    running().push(None, attach_kind())
}

fn delivery(conversation: &str, key: &str, at_ms: u64) -> Delivery {
    Delivery { conversation: conversation.into(), worker: W, key: key.into(), at_ms }
}

fn managed(conversation: Option<&str>, at_ms: u64) -> Managed {
    Managed { worker: W, conversation: conversation.map(String::from), at_ms }
}

fn published(conversation: &str, at_ms: u64) -> Published {
    Published { worker: W, conversation: conversation.into(), at_ms }
}

/// What a correct executor shows: `chat-0` managed, closed at 3.1 s, `fresh-0`
/// opened and typed into after.
fn honoured() -> (Vec<Delivery>, Vec<Managed>, Vec<Closed>, Vec<Published>) {
    let deliveries = vec![delivery("chat-0", CREATE, 1_500), delivery("fresh-0", "conversation.send:exe-2", 9_000)];
    let managed = vec![managed(Some("chat-0"), 1_000), managed(None, 3_100), managed(Some("fresh-0"), 8_000)];
    let closes = vec![Closed { worker: W, conversation: "chat-0".into(), at_ms: 3_100, released: true }];
    let published = vec![published("chat-0", 2_000), published("fresh-0", 8_500)];
    (deliveries, managed, closes, published)
}

fn check_attach(seen: &(Vec<Delivery>, Vec<Managed>, Vec<Closed>, Vec<Published>)) -> Vec<String> {
    let (deliveries, managed, closes, published) = seen;
    let seen = Seen { deliveries, managed, closes, published };
    attachments_honoured(attached().ended(true, 1), seen)
}

#[test]
fn an_attach_honoured_passes() {
    assert_eq!(check_attach(&honoured()), Vec::<String>::new());
}

#[test]
fn typing_into_the_old_conversation_after_an_attach_breaks() {
    let mut seen = honoured();
    seen.0.push(delivery("chat-0", "conversation.send:exe-3", 9_500));
    let broken = check_attach(&seen);
    assert_eq!(
        broken,
        vec![
            "typed into an old conversation: conversation.send:exe-3 went into chat-0 at 9500 ms, after wrk-2 \
             was attached to fresh-0 at 3000 ms (event #3)"
        ]
    );
    // Attached back to it: typing there is right again.
    let back = EventKind::WorkerAttached { conversation: "https://chatgpt.com/c/chat-0".into() };
    let log = attached().push(None, back);
    let (deliveries, managed, closes, published) = &seen;
    let seen = Seen { deliveries, managed, closes, published };
    assert!(attachments_honoured(log.ended(true, 1), seen).is_empty());
}

#[test]
fn a_close_never_received_or_not_honoured_breaks() {
    let mut seen = honoured();
    seen.2.clear();
    let broken = check_attach(&seen);
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].starts_with("old conversation never released: the executor managed chat-0 when wrk-2"));
    let mut seen = honoured();
    seen.3.push(published("chat-0", 5_000));
    let broken = check_attach(&seen);
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].contains("published chat-0 for wrk-2 at 5000 ms, after conversation.close at 3100 ms"));
}

#[test]
fn every_retry_click_breaks() {
    assert!(no_retry_clicks(&[]).is_empty());
    let click = |resubmitted: Option<&str>| RetryClick {
        conversation: "chat-0".into(),
        worker: Some(W),
        at_ms: 5_000,
        resubmitted: resubmitted.map(String::from),
    };
    let broken = no_retry_clicks(&[click(Some("wrk-2-exe-3")), click(None)]);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].starts_with("Retry clicked: chat-0 (wrk-2) at 5000 ms re-sent wrk-2-exe-3"), "{broken:?}");
    assert!(broken[1].ends_with("with no delivery-timeout card showing"), "{broken:?}");
}
