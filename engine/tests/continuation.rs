//! The core continuation rules (spec 000 §26.1, 001 C7.3), one tiny scenario each.
//! Every step also checks the invariants and that recovery reproduces the engine.

mod support;
use support::check;

/// An auto worker whose first turn is running in a managed conversation.
const RUNNING: &str = "
    run auto
    executor e1
    spawn a
    submit a
    gen a
";

fn with(prefix: &str, rest: &str) -> String {
    format!("{prefix}\n{rest}")
}

#[test]
fn idle_active_auto_schedules_one_resume_after_grace() {
    check(
        &with(RUNNING, "idle a\nadvance 2999ms\nshow a\nadvance 1ms\nsubmit a\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial idle intent[idle]
         e1 send a#2 auto_resume resume/v1
         a: running #2 auto_resume submitted auto=1",
    );
}

#[test]
fn idle_active_manual_does_not_resume() {
    check(
        "run manual
         executor e1
         spawn a
         submit a
         gen a
         idle a
         advance 1h
         show a",
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial idle intent[idle]",
    );
}

#[test]
fn manual_worker_resumes_once_auto_is_switched_on() {
    check(
        "run manual
         executor e1
         spawn a
         submit a
         gen a
         idle a
         advance 10s
         a.auto
         submit a
         show a",
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: running #2 auto_resume submitted auto=1",
    );
}

#[test]
fn idle_completed_does_not_resume() {
    check(
        &with(RUNNING, "a.complete done\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: completed #1 initial completed",
    );
}

#[test]
fn idle_failed_does_not_resume() {
    check(
        &with(RUNNING, "a.fail broken\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: failed #1 initial completed",
    );
}

#[test]
fn idle_cancelled_does_not_resume() {
    check(
        &with(RUNNING, "a.interrupt stop\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: cancelled #1 initial completed",
    );
}

#[test]
fn idle_awaiting_human_does_not_resume() {
    check(
        &with(RUNNING, "a.await_human which database\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_human #1 initial blocked intent[idle]",
    );
}

#[test]
fn idle_awaiting_dependency_does_not_resume() {
    check(
        &with(RUNNING, "a.await_dep\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_dependency #1 initial blocked intent[idle]",
    );
}

#[test]
fn idle_paused_does_not_resume() {
    check(
        &with(RUNNING, "a.pause\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: paused #1 initial blocked intent[idle] paused:operator",
    );
}

#[test]
fn duplicate_idle_observations_make_one_resume() {
    let world = check(
        &with(RUNNING, "idle a\nidle a\nready a\nadvance 3s\nidle a\nready a\nadvance 1m"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1",
    );
    assert_eq!(world.prompts_for("a"), 2);
}

#[test]
fn a_turn_never_reported_generating_ends_on_the_next_idle() {
    // The page went idle -> generating -> idle faster than the executor reports: it
    // publishes idle twice (newer sequence); the second idle ends the turn.
    check(
        &with(RUNNING, "idle a\nadvance 3s\nsubmit a\nidle a\nadvance 2999ms\nshow a\nadvance 1ms\nsubmit a\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: awaiting_execution #2 auto_resume idle intent[idle] auto=1
         e1 send a#3 auto_resume resume/v1
         a: running #3 auto_resume submitted auto=2",
    );
}

#[test]
fn an_idle_published_before_the_submitted_result_still_ends_the_turn() {
    // The executor published the turn's end (idle, newer sequence) before its
    // `submitted` result, whose stateSeq is the sequence from before the submission.
    check(
        &with(RUNNING, "idle a\nadvance 3s\nidle a\nsubmit a stale\nadvance 3s\nsubmit a\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 send a#3 auto_resume resume/v1
         a: running #3 auto_resume submitted auto=2",
    );
}

#[test]
fn completion_during_grace_cancels_the_pending_resume() {
    check(
        &with(RUNNING, "idle a\nadvance 1s\na.complete done\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: completed #1 initial completed",
    );
}

#[test]
fn completion_after_submission_suppresses_any_further_resume() {
    check(
        &with(RUNNING, "idle a\nadvance 3s\nsubmit a\na.complete done\ngen a\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: completed #2 auto_resume completed auto=1",
    );
}

// ----- 001 C7.3: completion racing the resume -----

#[test]
fn completion_before_resume_scheduling() {
    check(&with(RUNNING, "idle a\na.complete done\nadvance 1h"), "e1 create a#1 initial bootstrap/v2");
}

#[test]
fn completion_after_scheduling_before_dispatch_withdraws_the_attempt() {
    // The executor is gone when the resume is scheduled, so the command never leaves.
    check(
        &with(RUNNING, "idle a\ndisconnect e1\nadvance 3s\nshow a\na.complete done\nexecutor e1\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: running #2 auto_resume scheduled
         a: completed #2 auto_resume cancelled",
    );
}

#[test]
fn completion_after_ack_before_submission_cancels_the_command() {
    check(
        &with(RUNNING, "idle a\nadvance 3s\naccept a\na.complete done\nfail a CANCELLED\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 cancel a#2
         a: completed #2 auto_resume cancelled",
    );
}

#[test]
fn completion_immediately_after_submission_keeps_history_and_stops() {
    check(
        &with(RUNNING, "idle a\nadvance 3s\naccept a\na.complete done\nsubmit a\ngen a\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 cancel a#2
         a: completed #2 auto_resume completed auto=1",
    );
}

// ----- progress and the stall guard -----

#[test]
fn progress_resets_the_no_progress_counter() {
    let mut world = support::World::new();
    world.script(&with(RUNNING, "idle a\nadvance 3s\nsubmit a\ngen a\nidle a\nadvance 3s\nsubmit a"));
    assert_eq!(world.worker("a").progress.attempts_without, 2);
    world.script("a.progress halfway");
    assert_eq!(world.worker("a").progress.attempts_without, 0);
}

/// 000 §16.1.2 and §16.1.3: besides `worker.progress`, a change of assignment or disposition
/// (a follow-up, a human wait answered, a dependency wait released) and a message the worker
/// sends are progress too: each resets the count of turns without progress.
#[test]
fn assignment_disposition_and_messages_are_progress_signals() {
    let two_idle_turns = "idle a\nadvance 3s\nsubmit a\ngen a\nidle a\nadvance 3s\nsubmit a\ngen a";
    let setup = "run auto\nexecutor e1\nspawn a\nspawn b\nsubmit a\nsubmit b\ngen a\ngen b";
    for (signal, script) in [
        ("follow-up", "a.followup also write the changelog"),
        ("human wait answered", "a.await_human which base branch?\na.resolve main"),
        ("dependency released", "a.await_dep\na.release CI is green now"),
        ("message sent", "a.message b the API is ready"),
    ] {
        let mut world = support::World::new();
        world.script(&format!("{setup}\n{two_idle_turns}"));
        assert_eq!(world.worker("a").progress.attempts_without, 2, "{signal}: two turns without progress first");
        world.script(script);
        assert_eq!(world.worker("a").progress.attempts_without, 0, "{signal} resets the count");
    }
}

#[test]
fn no_progress_attempts_warn_then_pause() {
    let mut script =
        String::from("run auto warn_attempts=2 pause_attempts=3 no_time_stall\nexecutor e1\nspawn a\nsubmit a\n");
    for _ in 0..4 {
        script.push_str("gen a\nidle a\nadvance 3s\nsubmit a\n");
    }
    // The last `submit` has nothing to submit once the worker is paused: stop before it.
    let script = script.trim_end().rsplit_once('\n').map(|(s, _)| s.to_string()).unwrap_or_default();
    check(
        &format!("{script}\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 send a#3 auto_resume resume/v1
         e1 send a#4 auto_resume resume/v1
         a: paused #4 auto_resume blocked intent[idle] paused:stall stall:paused auto=3",
    );
}

#[test]
fn no_progress_time_thresholds_warn_then_pause() {
    let mut world = check(
        "run auto warn_ms=30m pause_ms=60m
         executor e1
         spawn a
         submit a
         gen a
         advance 20m
         a.progress still going
         advance 29m
         show a
         advance 2m
         show a
         advance 30m
         show a",
        "e1 create a#1 initial bootstrap/v2
         a: running #1 initial generating intent[active_keepalive]
         a: running #1 initial generating intent[active_keepalive] stall:warned
         a: paused #1 initial generating intent[active_keepalive] paused:stall stall:paused",
    );
    // Continue anyway acknowledges the stall and keeps the history.
    world.script("a.continue_now");
    let w = world.worker("a");
    assert!(w.pause.is_none());
    assert_eq!(w.progress.stall, engine::model::StallState::Clear);
}

#[test]
fn fifty_productive_turns_never_trip_the_stall_guard() {
    let mut script = String::from(RUNNING);
    for i in 0..50 {
        script.push_str(&format!("\na.progress step {i}\nidle a\nadvance 3s\nsubmit a\ngen a\nadvance 10m"));
    }
    let mut world = support::World::new();
    world.check_recovery_every = 25;
    world.script(&script);
    let w = world.worker("a");
    assert_eq!(w.progress.stall, engine::model::StallState::Clear);
    assert!(w.pause.is_none());
    assert_eq!(world.prompts_for("a"), 51);
}

#[test]
fn policy_changes_append_events_and_survive_restart() {
    let mut world = check(
        "run manual
         executor e1
         spawn a
         a.auto
         crash
         show a",
        "e1 create a#1 initial bootstrap/v2
         crash
         a: running #1 initial scheduled",
    );
    let names: Vec<&str> = world.engine.recent_events().map(|e| e.kind.name()).collect();
    assert!(names.contains(&"continuation.policy_changed"), "{names:?}");
    let view = world.view("a");
    assert_eq!(view.policy.mode, engine::policy::Mode::Auto);
    assert_eq!(view.policy_source, engine::op::PolicySource::Worker);
    world.script("a.inherit");
    assert_eq!(world.view("a").policy.mode, engine::policy::Mode::Manual);
}
