//! The orchestrator's app in ChatGPT conversations (docs/engine.md, "Page holds" and
//! "Executor outcomes"): a tool-approval card holds its own worker until a person answers
//! it, a conversation that lost the app pauses its worker for a recovery into a new
//! conversation, and an app the executor could not choose pauses it before anything is
//! sent.

mod support;
use engine::op::Operation;
use support::{World, check};

/// One worker `a` on executor e1 (it can steer mid-turn), generating its first turn.
const ONE: &str = "
    run auto
    executor e1 steering
    spawn a
    submit a
    gen a
";

#[test]
fn an_approval_card_holds_the_worker_without_keepalive_or_stall_until_the_turn_goes_on() {
    let world = check(
        &format!(
            "{ONE}
             advance 5m
             approval a detail=Orchestrator
             show a
             advance 3h
             show a
             gen a
             show a
             advance 15m
             show a
             idle a
             advance 3s
             show a"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_human #1 initial generating held:awaiting_approval(Orchestrator)
         a: awaiting_human #1 initial generating held:awaiting_approval(Orchestrator)
         a: running #1 initial generating
         a: running #1 initial generating
         e1 send a#2 auto_resume resume/v1
         a: running #2 auto_resume scheduled",
    );
    world.check_recovery();
    let a = world.view("a");
    assert!(a.worker.progress.quiet_ms < 60 * 60_000, "the stall clock stood still: {:?}", a.worker.progress);
    assert!(a.worker.pause.is_none());
    let kinds: Vec<&str> = world.engine.recent_events().map(|e| e.kind.name()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "worker.held").count(), 1, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "worker.hold_lifted").count(), 1, "{kinds:?}");
}

#[test]
fn an_approval_answered_when_the_turn_ends_is_one_normal_turn_end() {
    check(
        &format!(
            "{ONE}
             approval a detail=Orchestrator
             advance 2h
             idle a
             show a
             advance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial idle intent[idle]
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn a_steer_in_flight_when_the_card_shows_is_withdrawn() {
    // The keepalive fell due while the turn ran (before the card): its steer is withdrawn
    // (a `command.cancel`), nothing is typed while the card waits.
    check(
        &format!(
            "{ONE}
             advance 22m
             show a
             approval a detail=Orchestrator
             show a"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 steer a#2 checkpoint checkpoint/v1
         a: running #2 checkpoint scheduled
         e1 cancel a#2
         a: awaiting_human #2 checkpoint scheduled held:awaiting_approval(Orchestrator)",
    );
}

#[test]
fn a_command_queued_while_the_card_shows_is_withdrawn_and_waits_without_failing() {
    let mut world = World::new();
    world.script(&format!("{ONE}\nadvance 22m\naccept a\napproval a detail=Orchestrator"));
    // The steer went out before the card: the engine withdraws it (nothing may be typed).
    let cancels = world.commands.iter().filter(|c| c.kind == engine::effect::CommandKind::Cancel).count();
    assert_eq!(cancels, 1, "{:?}", world.commands);
    world.script("fail a CANCELLED\nshow a\nadvance 1h\nshow a");
    let trace = world.trace.join("\n");
    assert!(trace.contains("held:awaiting_approval(Orchestrator)"), "{trace}");
    let a = world.view("a");
    assert!(a.worker.pause.is_none() && a.worker.delivery_failures == 0, "{:?}", a.worker);
    let intent = a.worker.intent.as_ref().expect("the wake waits");
    assert!(intent.reasons.contains(engine::wake::WakeReason::ActiveKeepalive), "{intent:?}");
    // Answered: the approved call runs in the resumed turn (it may be the worker's own
    // worker_complete), so the kept wake waits for the turn's end instead of steering into it.
    let before = world.commands.len();
    world.script("gen a\nadvance 1m");
    assert_eq!(
        world.commands.len(),
        before,
        "no steer into the turn the approval resumed: {:?}",
        &world.commands[before..]
    );
    world.script("idle a\nadvance 1m");
    assert!(world.commands.len() > before, "the kept wake goes out once the resumed turn ends");
}

#[test]
fn an_approval_hold_survives_a_daemon_restart_and_follows_the_executors_next_state() {
    check(
        &format!(
            "{ONE}
             approval a detail=Orchestrator
             crash
             show a
             executor e1 steering bind=a:approval
             show a
             advance 2h
             executor e1 steering bind=a:generating
             show a
             idle a
             advance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         crash
         a: awaiting_human #1 initial generating held:awaiting_approval(Orchestrator)
         a: awaiting_human #1 initial generating held:awaiting_approval(Orchestrator)
         a: running #1 initial generating
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn an_operator_turn_is_not_typed_while_the_card_waits() {
    let mut world = World::new();
    world.script(&format!("{ONE}\napproval a detail=Orchestrator"));
    let before = world.commands.len();
    let a = world.id("a");
    let _ = world.call(Operation::WorkerContinueNow { worker: a, override_wait: false, clear_pause: false });
    world.script("advance 2h");
    let to_a: Vec<_> = world.commands[before..].iter().filter(|c| c.worker == a).collect();
    assert!(to_a.is_empty(), "{to_a:?}");
}

#[test]
fn a_conversation_that_lost_the_app_pauses_and_recovers_only_into_a_new_conversation() {
    let world = check(
        &format!(
            "{ONE}
             error a app_unavailable detail=FORBIDDEN: This conversation does not support developer MCPs
             show a
             advance 2h
             a.resume
             advance 1h
             show a
             a.continue_now
             advance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: paused #1 initial failed paused:app_unavailable
         a: awaiting_execution #1 initial failed intent[operator:resume]
         e1 create a#2 recovery recovery/v2
         continue_now recovering",
    );
    world.check_recovery();
}

#[test]
fn the_app_unavailable_pause_says_to_recover_into_a_new_conversation() {
    let mut world = World::new();
    world.script(&format!(
        "{ONE}\nerror a app_unavailable detail=FORBIDDEN: This conversation does not support developer MCPs"
    ));
    let p = world.view("a").worker.pause.clone().expect("paused");
    let detail = p.detail.as_deref().unwrap_or_default();
    assert!(detail.contains("FORBIDDEN: This conversation does not support developer MCPs"), "{detail}");
    assert!(detail.contains("new conversation"), "{detail}");
    // Continue anyway (clearing the pause) opens the fresh conversation at once.
    let before = world.commands.len();
    let a = world.id("a");
    let _ = world.call(Operation::WorkerContinueNow { worker: a, override_wait: false, clear_pause: true });
    world.script("advance 3s");
    let created: Vec<_> = world.commands[before..].iter().filter(|c| c.conversation.is_empty()).collect();
    assert_eq!(created.len(), 1, "{:?}", &world.commands[before..]);
}

#[test]
fn app_not_selected_pauses_before_anything_is_sent_and_keeps_the_wake() {
    let world = check(
        &format!(
            "{ONE}
             idle a
             advance 3s
             fail a APP_NOT_SELECTED detail=Orchestrator
             show a
             advance 2h
             show a
             a.resume
             advance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: paused #2 auto_resume cancelled intent[idle] paused:app_not_selected
         a: paused #2 auto_resume cancelled intent[idle] paused:app_not_selected
         e1 send a#3 auto_resume resume/v1",
    );
    world.check_recovery();
    let mut world = World::new();
    world.script(&format!("{ONE}\nidle a\nadvance 3s\nfail a APP_NOT_SELECTED detail=Orchestrator"));
    let p = world.view("a").worker.pause.clone().expect("paused");
    assert_eq!(
        p.detail.as_deref(),
        Some(
            "ChatGPT did not show the app 'Orchestrator' in this conversation: check it is installed and its name in the extension settings, then resume"
        )
    );
}
