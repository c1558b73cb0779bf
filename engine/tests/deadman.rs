//! The dead-man fallback (`deadman.rs`, issue 19): a watched run whose conversations all
//! died, or that stopped moving, is reported once per window and, with `recover`, `/root`
//! is recovered once into a fresh conversation; nothing fires while a person or a clock
//! is in charge, and a run that never turned the layer on behaves exactly as before.

mod support;
use engine::op::Operation;
use engine::policy::PolicyPatch;
use support::{World, check};

/// Root and lane `a` running in their own conversations on e1.
fn running(policy: &str) -> String {
    format!(
        "run auto {policy}
         executor e1
         root.continue_now
         submit root
         gen root
         spawn a
         submit a
         gen a"
    )
}

/// As [`running`], with a Codex root in `/w` on e1 (a CLI session's error card, unlike a
/// ChatGPT page's, gets no fresh continuation: it holds the session).
fn running_cli_root(policy: &str) -> String {
    format!(
        "run auto root=codex dir=/w {policy}
         executor e1 kinds=chatgpt,codex
         root.continue_now
         submit root
         gen root
         spawn a chatgpt
         submit a
         gen a"
    )
}

#[test]
fn recover_opens_one_fresh_root_conversation_after_every_tab_closed() {
    let world = check(
        &format!(
            "{}
             closed a
             closed root
             advance 44m
             deadman
             advance 2m
             deadman
             submit root
             deadman
             advance 40m
             deadman",
            running("deadman=recover")
        ),
        "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
         e1 create a#1 initial bootstrap/v2
         deadman: no alert fired=0
         e1 create root#2 recovery recovery/v2
         deadman: alert conversations_lost recovery_requested quiet=2700s fired=1
         deadman: no alert fired=1
         deadman: no alert fired=1",
    );
    world.check_recovery();
}

/// (A CLI root: a ChatGPT page's error card gets a fresh continuation, so it is no dead
/// conversation; `a_chatgpt_error_card_is_no_dead_conversation` below.)
#[test]
fn notify_types_nothing_and_raises_the_alert_once_per_window() {
    check(
        &format!(
            "{}
             closed a
             error root generic
             advance 46m
             deadman
             advance 43m
             deadman
             advance 2m
             deadman",
            running_cli_root("deadman=notify")
        ),
        "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
         e1 create a#1 initial bootstrap/v2
         deadman: alert conversations_lost notified quiet=2700s fired=1
         deadman: alert conversations_lost notified quiet=2700s fired=1
         deadman: alert conversations_lost notified quiet=2700s fired=2",
    );
}

#[test]
fn an_errored_root_is_released_before_its_recovery() {
    check(
        &format!(
            "{}
             closed a
             error root generic
             advance 46m",
            running_cli_root("deadman=recover deadman_after=45m")
        ),
        "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
         e1 create a#1 initial bootstrap/v2
         e1 close root#1
         e1 create root#2 recovery recovery/v2",
    );
}

#[test]
fn a_chatgpt_error_card_is_no_dead_conversation() {
    // The root's page shows an error card: its turn ended, and a fresh continuation goes
    // in (never Retry); the dead-man has nothing to do.
    check(
        &format!(
            "{}
             closed a
             error root generic
             advance 46m
             deadman",
            running("deadman=recover deadman_after=45m")
        ),
        "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
         e1 create a#1 initial bootstrap/v2
         e1 send root#2 auto_resume resume/v1
         deadman: no alert fired=0",
    );
}

#[test]
fn nothing_fires_while_a_worker_waits_for_a_human_or_an_approval() {
    check(
        &format!(
            "{}
             closed root
             a.await_human which database?
             advance 3h
             deadman
             a.resolve postgres
             advance 1m
             deadman",
            running("deadman=recover")
        ),
        "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
         e1 create a#1 initial bootstrap/v2
         deadman: no alert fired=0
         deadman: no alert fired=0",
    );
    check(
        &format!(
            "{}
             closed a
             approval root
             advance 3h
             deadman",
            running("deadman=recover")
        ),
        "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
         e1 create a#1 initial bootstrap/v2
         deadman: no alert fired=0",
    );
}

#[test]
fn an_operator_pause_or_a_live_turn_with_keepalives_is_not_dead() {
    check(
        &format!(
            "{}
             closed root
             a.pause
             advance 3h
             deadman",
            running("deadman=recover")
        ),
        "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
         e1 create a#1 initial bootstrap/v2
         deadman: no alert fired=0",
    );
}

#[test]
fn a_silent_run_with_an_open_root_conversation_is_only_notified() {
    // The executor went away: the conversations look alive, nothing is delivered.
    check(
        &format!(
            "{}
             disconnect e1
             advance 46m
             deadman",
            running("deadman=recover")
        ),
        "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
         e1 create a#1 initial bootstrap/v2
         deadman: alert no_progress notified quiet=2700s fired=1",
    );
}

#[test]
fn off_and_null_disable_the_layer() {
    for policy in ["", "deadman=off", "deadman=recover deadman_after=null"] {
        check(
            &format!(
                "{}
                 closed a
                 closed root
                 advance 5h
                 deadman",
                running(policy)
            ),
            "e1 create root#1 initial root-bootstrap/v2
         continue_now recovering
             e1 create a#1 initial bootstrap/v2
             deadman: no alert fired=0",
        );
    }
}

#[test]
fn thresholds_out_of_range_and_worker_fields_are_rejected() {
    check(
        "run auto deadman=notify deadman_after=59s
         run auto deadman_after=200h",
        "reject INVALID_POLICY
         reject INVALID_POLICY",
    );
    let mut world = World::new();
    world.script("run auto\nspawn a");
    let patch = PolicyPatch { dead_man: Some(engine::deadman::DeadManMode::Notify), ..PolicyPatch::default() };
    let id = world.id("a");
    let reply = world.call(Operation::WorkerContinuationSet { worker: id, patch, inherit: false });
    assert_eq!(reply.unwrap_err().code.as_str(), "INVALID_POLICY");
    let run = world.run.expect("run");
    assert!(world.call(Operation::RunSetDefaultContinuation { run, patch }).is_ok());
    let view = world.engine.run_view(run).expect("run");
    assert_eq!(view.dead_man.policy.mode.as_str(), "notify");
}
