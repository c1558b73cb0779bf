//! Executor outcomes (spec 000 §22): delivery timeout, ambiguous submission, host UI
//! changes, unavailable executors, lost conversations and definite non-deliveries.

mod support;
use engine::model::AttemptOutcome;
use engine::op::{Operation, Reply};
use support::check;

const RUNNING: &str = "
    run auto
    executor e1
    spawn a
    submit a
    gen a
";

#[test]
fn delivery_timeout_ends_the_attempt_and_sends_a_fresh_continue() {
    let world = check(
        &format!("{RUNNING}\nerror a delivery_timeout\nshow a\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial failed intent[delivery_timeout]
         e1 send a#2 auto_resume delivery-timeout/v1",
    );
    let last = world.commands.last().expect("a command");
    assert_eq!(last.prompt, "continue");
    let first = world.engine.attempts().next().expect("attempt 1");
    assert_eq!(first.error_code.as_deref(), Some("MESSAGE_DELIVERY_TIMEOUT"));
}

#[test]
fn repeated_delivery_timeouts_each_get_one_fresh_continue() {
    let world = check(
        &format!(
            "{RUNNING}
             error a delivery_timeout
             error a delivery_timeout
             advance 3s
             submit a
             gen a
             error a delivery_timeout
             advance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume delivery-timeout/v1
         e1 send a#3 auto_resume delivery-timeout/v1",
    );
    assert!(world.commands.iter().skip(1).all(|c| c.prompt == "continue"));
}

#[test]
fn delivery_timeout_reported_as_a_command_failure_also_continues_fresh() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\nfail a MESSAGE_DELIVERY_TIMEOUT\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 send a#3 auto_resume delivery-timeout/v1",
    );
}

#[test]
fn delivery_timeout_on_a_manual_worker_waits_for_the_operator() {
    check(
        "run manual
         executor e1
         spawn a
         submit a
         gen a
         error a delivery_timeout
         advance 1h
         a.continue_now",
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 manual_resume delivery-timeout/v1
         continue_now scheduled",
    );
}

#[test]
fn an_error_card_in_unknown_words_ends_the_turn_and_gets_one_fresh_continuation() {
    // A ChatGPT turn that ended on an error card the executor cannot name (`generic`):
    // the turn failed as a page error and one fresh continuation follows, never Retry.
    let world = check(
        &format!(
            "{RUNNING}
             error a generic detail=Что-то пошло не так
             show a
             advance 3s
             advance 1h"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial failed intent[page_error]
         e1 send a#2 auto_resume resume/v1",
    );
    let first = world.engine.attempts().next().expect("attempt 1");
    assert_eq!(first.outcome, Some(AttemptOutcome::PageError));
}

#[test]
fn a_cli_sessions_error_holds_it_without_a_fresh_turn() {
    // A CLI session whose turn failed (a 500, a dropped stream) is not driven round again
    // by itself: the error holds it until another state.
    check(
        "run auto
         executor cli-1 kinds=codex
         spawn c codex dir=/src/c
         submit c
         gen c
         error c generic detail=stream disconnected
         show c
         advance 2h",
        "cli-1 create c#1 initial bootstrap/v2
         c: awaiting_execution #1 initial failed",
    );
}

#[test]
fn ambiguous_submission_pauses_and_is_never_resent() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\nfail a AMBIGUOUS_SUBMISSION\nadvance 2h\nshow a\na.resume"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: paused #2 auto_resume failed paused:ambiguous_submission
         e1 send a#3 auto_resume resume/v1",
    );
}

#[test]
fn unknown_failure_codes_fail_closed_as_ambiguous() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\nfail a SOMETHING_NEW\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: paused #2 auto_resume failed paused:ambiguous_submission",
    );
}

#[test]
fn silent_executor_past_the_deadline_fails_closed() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\nadvance 2m\nshow a\nadvance 31s\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: running #2 auto_resume scheduled
         a: paused #2 auto_resume failed paused:ambiguous_submission",
    );
}

#[test]
fn host_ui_changed_pauses_with_an_actionable_error() {
    let world = check(
        &format!("{RUNNING}\nidle a\nadvance 3s\nfail a HOST_UI_CHANGED\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: paused #2 auto_resume failed paused:host_ui_changed",
    );
    let detail = world.worker("a").pause.as_ref().and_then(|p| p.detail.clone()).expect("detail");
    assert!(detail.contains("resume"), "{detail}");
}

#[test]
fn host_ui_changed_state_pauses_the_worker() {
    check(
        &format!("{RUNNING}\nerror a host_ui\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: paused #1 initial blocked intent[idle] paused:host_ui_changed",
    );
}

#[test]
fn page_errors_are_not_spun_against() {
    // One error card, one fresh continuation: the same card reported again (a
    // republished state) adds nothing, and nothing more goes in while the new turn runs.
    check(
        &format!("{RUNNING}\nerror a generic\nerror a generic\nadvance 3s\nsubmit a\ngen a\nadvance 10m"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn executor_unavailable_keeps_the_continuation_durable() {
    check(
        &format!("{RUNNING}\nidle a\ndisconnect e1\nadvance 1h\nshow a\ncrash\nexecutor e1\nsubmit a\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #2 auto_resume scheduled intent[active_keepalive]
         crash
         e1 send a#2 auto_resume resume/v1
         a: running #2 auto_resume submitted auto=1",
    );
}

#[test]
fn deadline_exceeded_retries_after_backoff_then_pauses() {
    check(
        &format!(
            "{RUNNING}
             idle a
             advance 3s
             fail a DEADLINE_EXCEEDED
             advance 29s
             advance 1s
             fail a COMPOSER_BUSY
             advance 30s
             fail a DEADLINE_EXCEEDED
             advance 30s
             fail a DEADLINE_EXCEEDED
             advance 30s
             fail a DEADLINE_EXCEEDED
             advance 1h
             show a"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 send a#3 auto_resume resume/v1
         e1 send a#4 auto_resume resume/v1
         e1 send a#5 auto_resume resume/v1
         e1 send a#6 auto_resume resume/v1
         a: paused #6 auto_resume cancelled intent[idle,redelivery] paused:delivery_failing",
    );
}

#[test]
fn steering_unavailable_keeps_the_checkpoint_for_idle() {
    check(
        "run auto
         executor e1 steering
         spawn a
         submit a
         gen a
         advance 21m
         fail a STEERING_UNAVAILABLE
         show a
         idle a
         advance 3s",
        "e1 create a#1 initial bootstrap/v2
         e1 steer a#2 checkpoint checkpoint/v1
         a: running #1 initial generating intent[active_keepalive]
         e1 send a#3 checkpoint checkpoint/v1",
    );
}

#[test]
fn closed_tab_loses_the_binding_and_never_adopts_another() {
    check(
        &format!("{RUNNING}\nclosed a\nadvance 2h\nshow a\na.continue_now\nsubmit a\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial failed
         e1 create a#2 recovery recovery/v2
         continue_now recovering
         a: running #2 recovery submitted",
    );
}

#[test]
fn conversation_full_needs_a_fresh_conversation() {
    check(
        &format!("{RUNNING}\nerror a full\nidle a\nadvance 1h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial failed",
    );
}

#[test]
fn follow_up_for_a_lost_conversation_relaunches_the_same_worker() {
    let world = check(
        &format!("{RUNNING}\nclosed a\na.followup finish the migration first\nsubmit a"),
        "e1 create a#1 initial bootstrap/v2
         e1 create a#2 followup followup/v2",
    );
    assert!(world.commands.last().expect("command").prompt.contains("finish the migration first"));
}

#[test]
fn state_reports_from_another_executor_are_ignored() {
    check(
        "run auto
         executor e1
         executor e2
         spawn a
         submit a
         gen a
         ",
        "e1 create a#1 initial bootstrap/v2",
    );
    let mut world = support::World::new();
    world.script("run auto\nexecutor e1\nexecutor e2\nspawn a\nsubmit a\ngen a");
    let id = world.id("a");
    world.input(engine::Input::Executor(engine::ExecutorInput::State {
        executor: engine::ids::ExecutorId::new("e2"),
        worker: id,
        observation: engine::Observation {
            state: engine::model::ConversationState::Idle,
            seq: 99,
            block: None,
            until: None,
            detail: None,
            approval: None,
            retry: None,
        },
    }));
    world.script("advance 1m");
    assert_eq!(world.prompts_for("a"), 1);
}

#[test]
fn attaching_a_conversation_leased_by_another_worker_is_refused() {
    check(
        "run auto
         executor e1
         spawn a
         spawn b detached
         submit a
         attach b https://chatgpt.com/c/a-1",
        "e1 create a#1 initial bootstrap/v2
         reject CONVERSATION_IN_USE",
    );
}

#[test]
fn an_executor_that_cannot_open_a_conversation_is_not_asked_in_a_loop() {
    check(
        &format!(
            "{RUNNING}
             closed a
             a.continue_now
             fail a CONVERSATION_CLOSED
             advance 29s
             advance 1s
             fail a CONVERSATION_CLOSED
             advance 30s
             fail a CONVERSATION_CLOSED
             advance 30s
             fail a CONVERSATION_CLOSED
             advance 30s
             fail a CONVERSATION_CLOSED
             advance 1h
             show a"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 create a#2 recovery recovery/v2
         continue_now recovering
         e1 create a#3 recovery recovery/v2
         e1 create a#4 recovery recovery/v2
         e1 create a#5 recovery recovery/v2
         e1 create a#6 recovery recovery/v2
         a: paused #6 recovery cancelled intent[operator:continue_now,redelivery] paused:delivery_failing",
    );
}

#[test]
fn a_delivery_timeout_while_a_steer_is_in_flight_still_gets_its_fresh_continue() {
    // Found by the simulator (seed 829): the page timed out while a keepalive steer was
    // in flight; the steer was not delivered, and the next attempt must be `continue`.
    let world = check(
        "run auto
         executor e1 steering
         spawn a
         submit a
         gen a
         advance 21m
         error a delivery_timeout
         fail a STEERING_UNAVAILABLE
         advance 3s",
        "e1 create a#1 initial bootstrap/v2
         e1 steer a#2 checkpoint checkpoint/v1
         e1 send a#3 auto_resume delivery-timeout/v1",
    );
    assert_eq!(world.commands.last().map(|c| c.prompt.as_str()), Some("continue"));
}

#[test]
fn a_late_timeout_card_does_not_rewrite_the_outcome_of_a_turn_that_ended_normally() {
    // The executor reported the new attempt MESSAGE_DELIVERY_TIMEOUT; the page's timeout
    // state arrives afterwards, while the previous turn (ended normally) is still open.
    let mut world = support::World::new();
    world.script(&format!("{RUNNING}\nidle a\nadvance 3s\nfail a MESSAGE_DELIVERY_TIMEOUT\nerror a delivery_timeout"));
    let a = world.id("a");
    let Ok(Reply::Attempts(list)) = world.call(Operation::WorkerAttempts { worker: a, after_sequence: 0, limit: 10 })
    else {
        panic!("attempts")
    };
    // The first turn ended idle and stays the open turn (the next one never went in).
    assert_eq!(list[0].outcome, None, "{list:#?}");
    assert_eq!(list[1].outcome, Some(AttemptOutcome::DeliveryTimeout));
}

/// The inspections the engine sent for a worker, as `idempotency-key conversation` lines.
fn inspections(world: &support::World, name: &str) -> Vec<String> {
    let id = world.id(name);
    world
        .commands
        .iter()
        .filter(|c| c.worker == id && c.kind == engine::CommandKind::Inspect)
        .map(|c| format!("{} {}", c.idempotency_key, c.conversation))
        .collect()
}

#[test]
fn a_submitted_turn_nobody_reports_on_is_inspected_and_its_lost_idle_still_resumes() {
    let mut world = support::World::new();
    world.script("run auto\nexecutor e1\nspawn a\nsubmit a\nadvance 9m");
    assert!(inspections(&world, "a").is_empty(), "inspected before inspect_after_ms");
    world.script("advance 1m");
    assert_eq!(inspections(&world, "a"), vec!["conversation.inspect:exe-1 https://chatgpt.com/c/a-1"]);
    // Another stretch of silence, another inspection; a report resets the clock.
    world.script("advance 10m");
    assert_eq!(inspections(&world, "a").len(), 2);
    world.script("gen a\nadvance 9m");
    assert_eq!(inspections(&world, "a").len(), 2, "a report restarts the inspection clock");
    // The inspection's answer is the idle the executor failed to report: the turn ends
    // and the worker is resumed once, as after any idle.
    let trace = world.script("idle a\nadvance 3s");
    assert_eq!(trace, "e1 send a#2 checkpoint checkpoint/v1");
    world.script("advance 30m");
    assert_eq!(inspections(&world, "a").len(), 2, "only the new turn's silence would count: it is not submitted yet");
}

#[test]
fn no_inspection_without_a_connected_executor_or_an_open_turn() {
    let mut world = support::World::new();
    world.script("run auto\nexecutor e1\nspawn a\nsubmit a\ngen a\ndisconnect e1\nadvance 1h");
    assert!(inspections(&world, "a").is_empty(), "inspected through a closed connection");
    // After hello the silence counts from the republished state.
    world.script("hello e1 bind=a:generating\nadvance 9m");
    assert!(inspections(&world, "a").is_empty());
    world.script("advance 1m");
    assert_eq!(inspections(&world, "a").len(), 1);
    world.script("a.complete done\nidle a\nadvance 1h");
    assert_eq!(inspections(&world, "a").len(), 1, "a completed worker's conversation is not inspected");
}

#[test]
fn reattaching_a_worker_releases_its_old_conversation() {
    let world = check(
        &format!("{RUNNING}\nidle a\na.pause\nattach a https://chatgpt.com/c/fresh"),
        "e1 create a#1 initial bootstrap/v2
         e1 close a#1",
    );
    let close = world.commands.last().expect("a command");
    assert_eq!(close.kind, engine::CommandKind::Close);
    assert_eq!(&*close.conversation, "https://chatgpt.com/c/a-1");
    assert_eq!(close.idempotency_key, "conversation.close:exe-1");
    assert!(close.prompt.is_empty());
}

#[test]
fn a_conversation_adopted_after_an_ambiguous_create_is_released_on_reattach() {
    // The executor restarted mid-create: its hello binds the conversation the create made
    // (the create goes out again, as every unanswered command does after a hello) before
    // the create's own answer comes back ambiguous, so no attempt ever carries the
    // conversation's URL. Re-attaching must still release it, named by that create.
    let world = check(
        "run auto
         executor e1
         spawn a
         disconnect e1
         hello e1
         bind a https://chatgpt.com/c/made-by-the-create e1
         fail a AMBIGUOUS_SUBMISSION
         show a
         attach a https://chatgpt.com/c/fresh",
        "e1 create a#1 initial bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         a: paused #1 initial failed paused:ambiguous_submission
         e1 close a#1",
    );
    let close = world.commands.last().expect("a command");
    assert_eq!(close.kind, engine::CommandKind::Close);
    assert_eq!(&*close.conversation, "https://chatgpt.com/c/made-by-the-create");
    assert_eq!(close.idempotency_key, "conversation.close:exe-1");
}

#[test]
fn a_stale_lease_republished_later_is_released_and_never_adopted() {
    let world = check(
        &format!(
            "{RUNNING}
             idle a
             a.pause
             disconnect e1
             attach a https://chatgpt.com/c/fresh
             hello e1
             bind a https://chatgpt.com/c/a-1 e1
             bind a https://chatgpt.com/c/fresh e1
             show a"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 close a#1
         a: paused #1 initial blocked intent[idle,recovery] paused:operator",
    );
    let b = world.worker("a").binding.as_ref().expect("binding");
    assert_eq!(&*b.conversation, "https://chatgpt.com/c/fresh");
    assert_eq!(b.status, engine::model::BindingStatus::Verified);
}

#[test]
fn an_attached_conversation_no_executor_reported_gets_its_first_turn() {
    // Spec 001 C15.4: spawn, attach, initial attempt. No executor has seen the attached
    // conversation, so none reports it: after the wait for a report the bootstrap goes
    // out as a send naming it (the executor opens it and types when the page allows).
    let mut world = check(
        "run auto
         executor e1
         spawn a detached
         attach a https://chatgpt.com/c/mine
         advance 9s",
        "",
    );
    world.script("advance 1s");
    assert_eq!(world.trace, vec!["e1 send a#1 initial bootstrap/v2".to_string()]);
    assert_eq!(&*world.commands.last().expect("a command").conversation, "https://chatgpt.com/c/mine");
}

#[test]
fn an_executor_reporting_the_attached_conversation_gets_its_turn() {
    let world = check(
        "run auto
         executor e1
         executor e2
         spawn a detached
         attach a https://chatgpt.com/c/mine
         bind a https://chatgpt.com/c/mine e2
         idle a
         advance 3s",
        "e2 send a#1 initial bootstrap/v2",
    );
    assert_eq!(&*world.commands.last().expect("a command").conversation, "https://chatgpt.com/c/mine");
}

#[test]
fn a_running_worker_reattached_continues_in_the_new_conversation() {
    let world = check(
        &format!(
            "{RUNNING}\nidle a\nadvance 3s\nsubmit a\ngen a\nidle a\nattach a https://chatgpt.com/c/fresh\nadvance 10s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 close a#2
         e1 send a#3 recovery recovery/v2",
    );
    assert_eq!(&*world.commands.last().expect("a command").conversation, "https://chatgpt.com/c/fresh");
}
