//! Notifications (issue 31, `docs/notifications.md`): an episode a person must hear about
//! creates one outbox record per target in the batch of its event; delivery is retried
//! with backoff until acknowledged or given up; a restart re-sends what is pending under
//! the same id and never creates a second notice for the same episode.

mod support;
use engine::ids::RunId;
use engine::notify::{Notice, NoticeId, NoticeKind, NoticeOutcome, NoticeStatus};
use engine::op::Operation;
use engine::{Input, Record, RecordKey};
use std::sync::Arc;
use support::World;

const RUNNING: &str = "
    run auto
    executor e1
    spawn a
    submit a
    gen a
";

const TARGETS: [&str; 2] = ["https://hooks.example/a", "text:https://ntfy.example/b"];

fn world() -> World {
    let mut w = World::with_config(|c| c.notify_targets = TARGETS.iter().map(|t| Arc::from(*t)).collect());
    w.script(RUNNING);
    w
}

fn ask(w: &mut World) {
    let worker = w.id("a");
    let op = Operation::WorkerAwaitHuman {
        worker,
        reason: "two schemas fit".into(),
        question: "Which database?".into(),
        choices: vec!["postgres".into(), "sqlite".into()],
    };
    w.call(op).expect("await_human accepted");
}

fn answer(w: &mut World, id: NoticeId, outcome: NoticeOutcome) {
    w.input(Input::Notified { id, outcome });
}

fn failed() -> NoticeOutcome {
    NoticeOutcome::Failed { detail: "connection refused".into() }
}

fn stored(w: &World) -> Vec<Notice> {
    w.store.values().filter_map(|r| if let Record::Notice(n) = r { Some(n.clone()) } else { None }).collect()
}

#[test]
fn a_question_is_one_notice_per_target_durable_with_its_event_and_sent_once() {
    let mut w = world();
    assert!(w.notified.is_empty(), "nothing happened a person must hear about");
    ask(&mut w);
    let sent: Vec<_> = w.notified.clone();
    assert_eq!(sent.len(), 2, "one per target");
    let event = w.engine.recent_events().find(|e| e.kind.name() == "worker.awaiting_human").expect("the event");
    for (i, n) in sent.iter().enumerate() {
        assert_eq!(n.id, NoticeId::new(event.cursor, i as u64));
        assert_eq!(n.kind, NoticeKind::HumanQuestion);
        assert_eq!(&*n.target, TARGETS[i]);
        assert_eq!(&*n.text, "Which database? Choices: postgres / sqlite");
        assert!(w.store.contains_key(&RecordKey::Notice(n.id)), "durable before it is sent");
    }
    // Answers settle them; nothing more is sent, however much time passes.
    answer(&mut w, sent[0].id, NoticeOutcome::Delivered);
    answer(&mut w, sent[1].id, NoticeOutcome::Delivered);
    w.advance(48 * 3_600_000);
    assert_eq!(w.notified.len(), 2);
    assert!(stored(&w).iter().all(|n| matches!(n.status, NoticeStatus::Delivered(_))));
}

#[test]
fn a_failed_post_is_retried_after_5s_then_10s_with_the_same_id() {
    let mut w = world();
    ask(&mut w);
    let id = w.notified[0].id;
    let other = w.notified[1].id;
    answer(&mut w, other, NoticeOutcome::Delivered);
    answer(&mut w, id, failed());
    w.advance(4_999);
    assert_eq!(w.notified.len(), 2, "not before the backoff");
    w.advance(1);
    assert_eq!(w.notified.len(), 3);
    assert_eq!(w.notified[2].id, id, "the same notification again");
    answer(&mut w, id, failed());
    w.advance(9_999);
    assert_eq!(w.notified.len(), 3);
    w.advance(1);
    assert_eq!(w.notified.len(), 4);
    answer(&mut w, id, NoticeOutcome::Delivered);
    w.advance(3_600_000);
    assert_eq!(w.notified.len(), 4, "delivered: never again");
}

#[test]
fn an_unanswered_post_counts_as_failed_after_a_minute() {
    let mut w = world();
    ask(&mut w);
    assert_eq!(w.notified.len(), 2);
    w.advance(60_000 + 5_000);
    assert_eq!(w.notified.len(), 4, "both re-sent after the overdue answer and the first backoff");
}

#[test]
fn a_notice_nobody_takes_is_abandoned_after_a_day_with_an_event() {
    let mut w = world();
    ask(&mut w);
    let id = w.notified[0].id;
    let other = w.notified[1].id;
    answer(&mut w, other, NoticeOutcome::Delivered);
    for _ in 0..400 {
        let pending = stored(&w).into_iter().find(|n| n.id == id).expect("stored");
        if pending.status != NoticeStatus::Pending {
            break;
        }
        answer(&mut w, id, failed());
        w.advance(pending.next_at.0.saturating_sub(w.now).max(600_000));
    }
    let n = stored(&w).into_iter().find(|n| n.id == id).expect("stored");
    assert!(matches!(n.status, NoticeStatus::Abandoned(_)), "{n:?}");
    assert!(w.engine.recent_events().any(|e| e.kind.name() == "notification.abandoned"));
    let tries = w.notified.iter().filter(|x| x.id == id).count();
    assert!((140..=150).contains(&tries), "10-minute retries for a day: {tries}");
}

#[test]
fn a_refused_notice_is_abandoned_at_once() {
    let mut w = world();
    ask(&mut w);
    let first = w.notified[0].id;
    answer(&mut w, first, NoticeOutcome::Refused { detail: "404".into() });
    w.advance(3_600_000);
    assert_eq!(w.notified.iter().filter(|n| n.id == first).count(), 1);
    assert!(w.engine.recent_events().any(|e| e.kind.name() == "notification.abandoned"));
}

#[test]
fn a_crash_before_the_answer_resends_the_same_ids_and_creates_none() {
    let mut w = world();
    ask(&mut w);
    let before: Vec<NoticeId> = w.notified.iter().map(|n| n.id).collect();
    w.crash();
    w.input(Input::Tick);
    let after: Vec<NoticeId> = w.notified[2..].iter().map(|n| n.id).collect();
    assert_eq!(after, before, "pending notices re-sent under their ids");
    assert_eq!(stored(&w).len(), 2, "no second notice for the episode");
    // A late acknowledgement of the first send is not booked twice.
    answer(&mut w, before[0], NoticeOutcome::Delivered);
    answer(&mut w, before[0], NoticeOutcome::Delivered);
    answer(&mut w, before[1], NoticeOutcome::Delivered);
    w.advance(3_600_000);
    assert_eq!(w.notified.len(), 4);
}

#[test]
fn a_crash_after_the_answer_sends_nothing_again() {
    let mut w = world();
    ask(&mut w);
    for n in w.notified.clone() {
        answer(&mut w, n.id, NoticeOutcome::Delivered);
    }
    w.crash();
    w.input(Input::Tick);
    w.advance(3_600_000);
    assert_eq!(w.notified.len(), 2);
}

#[test]
fn without_targets_nothing_is_created() {
    let mut w = World::new();
    w.script(RUNNING);
    ask(&mut w);
    w.script("root.complete done");
    assert!(w.notified.is_empty());
    assert!(stored(&w).is_empty());
}

#[test]
fn the_other_kinds_each_notify_once() {
    // Distinct notices of the first target (unanswered ones are re-sent, same id).
    let kinds = |w: &World| -> Vec<&'static str> {
        let mut seen = std::collections::BTreeMap::new();
        for n in w.notified.iter().filter(|n| n.id.target() == 0) {
            seen.entry(n.id).or_insert(n.kind.as_str());
        }
        seen.into_values().collect()
    };
    let mut w = world();
    w.script("approval a detail=GitHub");
    assert_eq!(kinds(&w), ["approval_card"]);
    let mut w = world();
    w.script("error a usage until=30m detail=You've hit your limit");
    assert_eq!(kinds(&w), ["usage_limit"]);
    assert!(w.notified[0].until.is_some(), "with its reset time");
    let mut w = world();
    w.script("error a challenge");
    assert_eq!(kinds(&w), ["login_or_challenge"]);
    let mut w = world();
    w.script("disconnect e1\nadvance 6m");
    assert_eq!(kinds(&w), ["executor_offline"]);
    w.script("advance 2h");
    assert_eq!(kinds(&w), ["executor_offline"], "one per absence episode");
    let mut w = world();
    w.script("a.complete done\nroot.complete all done");
    assert_eq!(kinds(&w), ["run_finished"]);
    let run = w.run.expect("a run");
    assert_eq!(w.notified[0].run, run);
    let mut w = world();
    w.call(Operation::RunCancel { run: w.run.unwrap_or(RunId(1)), reason: "enough".into() }).expect("cancel");
    assert_eq!(kinds(&w), ["run_failed"]);
}

/// A world with notification targets, running `script` from scratch.
fn world_running(script: &str) -> World {
    let mut w = World::with_config(|c| c.notify_targets = TARGETS.iter().map(|t| Arc::from(*t)).collect());
    w.script(script);
    w
}

fn first_target_kinds(w: &World) -> Vec<&'static str> {
    let mut seen = std::collections::BTreeMap::new();
    for n in w.notified.iter().filter(|n| n.id.target() == 0) {
        seen.entry(n.id).or_insert(n.kind.as_str());
    }
    seen.into_values().collect()
}

#[test]
fn a_stall_pause_notifies_once() {
    let mut script =
        String::from("run auto warn_attempts=2 pause_attempts=3 no_time_stall\nexecutor e1\nspawn a\nsubmit a\n");
    for _ in 0..3 {
        script.push_str("gen a\nidle a\nadvance 3s\nsubmit a\n");
    }
    script.push_str("gen a\nidle a\nadvance 3s\n");
    let w = world_running(&script);
    assert_eq!(first_target_kinds(&w), ["stall"], "the warning does not notify; the pause does, once");
}

#[test]
fn a_dead_man_firing_notifies_once() {
    let w = world_running(
        "run auto deadman=recover
         executor e1
         root.continue_now
         submit root
         gen root
         spawn a
         submit a
         gen a
         closed a
         closed root
         advance 46m
         advance 40m",
    );
    let kinds = first_target_kinds(&w);
    assert_eq!(kinds.iter().filter(|k| **k == "dead_man").count(), 1, "{kinds:?}");
}
