//! Holds from what pages show (docs/engine.md, "Page holds"): an account's usage or rate
//! limit holds every worker on that executor until its time, a usage limit without a
//! time or an account check pauses them for a person, and a dialog, or a page its
//! executor does not recognize, holds its own worker until a later state.

mod support;
use engine::op::Operation;
use support::{World, check};

/// Two workers on executor e1: `a` generating, `b` generating.
const TWO: &str = "
    run auto
    executor e1
    spawn a
    submit a
    gen a
    spawn b
    submit b
    gen b
";

#[test]
fn a_usage_limit_holds_every_worker_of_the_account_until_its_time() {
    let world = check(
        &format!(
            "{TWO}
             error a usage until=30m detail=You've hit your limit
             show a
             idle b
             advance 3s
             show b
             advance 20m
             show b
             advance 10m
             show b
             show a
             idle a
             advance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         a: awaiting_execution #1 initial failed held:usage_limit@1800(You've hit your limit)
         b: awaiting_execution #1 initial idle intent[idle] held:usage_limit@1797(You've hit your limit)
         b: awaiting_execution #1 initial idle intent[idle] held:usage_limit@597(You've hit your limit)
         e1 send b#2 checkpoint checkpoint/v1
         b: running #2 checkpoint scheduled
         a: awaiting_execution #1 initial failed intent[active_keepalive]
         e1 send a#2 checkpoint checkpoint/v1",
    );
    world.check_recovery();
    let kinds: Vec<&str> = world.engine.recent_events().map(|e| e.kind.name()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "worker.held").count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "worker.hold_lifted").count(), 2, "{kinds:?}");
}

#[test]
fn a_hold_survives_a_daemon_restart() {
    check(
        &format!(
            "{TWO}
             error a usage until=30m
             idle b
             crash
             executor e1
             advance 10m
             show b
             advance 21m
             show b"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         crash
         b: awaiting_execution #1 initial idle intent[idle] held:usage_limit@1200
         e1 send b#2 checkpoint checkpoint/v1
         b: running #2 checkpoint scheduled",
    );
}

#[test]
fn a_rate_limit_without_a_time_holds_for_the_default_and_clamps_past_times() {
    check(
        &format!(
            "{TWO}
             error a rate
             idle b
             show b
             advance 14m
             show b
             advance 1m
             show b"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         b: awaiting_execution #1 initial idle intent[idle] held:rate_limited@900
         b: awaiting_execution #1 initial idle intent[idle] held:rate_limited@60
         e1 send b#2 auto_resume resume/v1
         b: running #2 auto_resume scheduled",
    );
    // A reset time in the past holds nothing past the next tick.
    check(
        &format!("{TWO}\nerror a usage until=-5m\nidle b\nadvance 3s\nshow b"),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         e1 send b#2 auto_resume resume/v1
         b: running #2 auto_resume scheduled",
    );
}

#[test]
fn a_reset_time_months_away_is_clamped_to_eight_days() {
    let world = check(
        &format!("{TWO}\nerror a usage until=2000h\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         a: awaiting_execution #1 initial failed held:usage_limit@691200",
    );
    let until = world.engine.next_deadline().expect("the hold lifts");
    assert!(until.0 <= world.now + engine::limits::ACCOUNT_HOLD_MS_MAX);
}

#[test]
fn a_held_worker_gets_no_command_not_even_an_operator_turn_nor_an_inspection() {
    let mut world = World::new();
    world.script(&format!("{TWO}\nerror a usage until=2h\nidle b\nadvance 3s"));
    let before = world.commands.len();
    let b = world.id("b");
    let _ = world.call(Operation::WorkerContinueNow { worker: b, override_wait: false, clear_pause: false });
    world.script("advance 90m");
    assert_eq!(world.commands.len(), before, "{:?}", &world.commands[before..]);
    world.script("advance 31m");
    assert!(world.commands.len() > before, "the hold lifted and b went on");
}

#[test]
fn a_usage_limit_without_a_time_pauses_for_a_person_and_resume_all_clears_it_not() {
    check(
        &format!(
            "{TWO}
             error a usage
             show a
             show b
             RUN_RESUME_ALL
             idle b
             advance 1h
             show b
             b.resume
             advance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         a: paused #1 initial failed paused:usage_limit
         b: paused #1 initial generating paused:usage_limit
         b: paused #1 initial blocked intent[idle] paused:usage_limit
         e1 send b#2 auto_resume resume/v1",
    );
}

#[test]
fn suspicious_activity_a_challenge_or_a_login_page_pause_the_account_until_a_person_resumes() {
    for kind in ["suspicious", "challenge", "login"] {
        let world = check(
            &format!(
                "{TWO}
                 error a {kind}
                 show b
                 RUN_RESUME_ALL
                 idle b
                 advance 1h
                 show b
                 a.resume
                 b.resume
                 advance 3s"
            ),
            "e1 create a#1 initial bootstrap/v2
             e1 create b#1 initial bootstrap/v2
             b: paused #1 initial generating paused:account_check
             b: paused #1 initial blocked intent[idle] paused:account_check
             e1 send b#2 auto_resume resume/v1",
        );
        // a's page still shows the check: nothing is typed there until it reports a quiet state.
        let a = world.view("a");
        assert!(a.worker.pause.is_none() && a.worker.in_flight.is_none(), "{kind}: {a:?}");
        let detail = world.view("b").worker.pause.clone();
        assert!(detail.is_none());
    }
}

#[test]
fn the_account_check_detail_says_what_to_do() {
    let mut world = World::new();
    world.script(&format!("{TWO}\nerror a suspicious"));
    let p = world.view("b").worker.pause.clone().expect("paused");
    assert_eq!(
        p.detail.as_deref(),
        Some("ChatGPT showed 'Suspicious activity detected'. Check the browser, then resume.")
    );
}

#[test]
fn a_dialog_holds_its_own_worker_until_a_later_state_and_never_ends_the_turn() {
    let world = check(
        &format!(
            "{TWO}
             error a dialog detail=Update your settings
             show a
             show b
             advance 2h
             show a
             idle a
             show a
             advance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         a: awaiting_human #1 initial generating held:blocked_by_dialog(Update your settings)
         b: running #1 initial generating
         a: awaiting_human #1 initial generating intent[active_keepalive] held:blocked_by_dialog(Update your settings)
         a: awaiting_execution #1 initial idle intent[idle,active_keepalive]
         e1 send a#2 checkpoint checkpoint/v1",
    );
    world.check_recovery();
    // The stall clock stood still while the dialog showed.
    let a = world.view("a");
    assert!(a.worker.progress.quiet_ms < 60 * 60_000, "{:?}", a.worker.progress);
}

#[test]
fn a_page_not_recognized_holds_its_worker_for_a_person_until_a_known_state() {
    let world = check(
        &format!(
            "{TWO}
             unrecognized a detail=Page not recognized: a form in the latest turn
             show a
             advance 2h
             show a
             idle a
             show a
             advance 3s
             advance 30s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         a: awaiting_human #1 initial generating held:page_unrecognized(Page not recognized: a form in the latest turn)
         a: awaiting_human #1 initial generating intent[active_keepalive] held:page_unrecognized(Page not recognized: a form in the latest turn)
         a: awaiting_execution #1 initial idle intent[idle,active_keepalive]
         e1 send a#2 checkpoint checkpoint/v1",
    );
    world.check_recovery();
    // Told once, lifted once; the stall clock stood still meanwhile.
    let kinds: Vec<&str> = world.engine.recent_events().map(|e| e.kind.name()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "worker.held").count(), 1, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "worker.hold_lifted").count(), 1, "{kinds:?}");
    let a = world.view("a");
    assert!(a.worker.progress.quiet_ms < 60 * 60_000, "{:?}", a.worker.progress);
}

#[test]
fn nothing_is_typed_into_a_page_not_recognized_not_even_an_operator_turn() {
    let mut world = World::new();
    world.script(&format!("{TWO}\nidle a\nunrecognized a detail=Page not recognized: a dialog over the composer"));
    let before = world.commands.len();
    let a = world.id("a");
    let _ = world.call(Operation::WorkerContinueNow { worker: a, override_wait: false, clear_pause: false });
    world.script("advance 30m");
    let to_a: Vec<_> = world.commands[before..].iter().filter(|c| c.worker == a).collect();
    assert!(to_a.is_empty(), "{to_a:?}");
}

#[test]
fn an_operator_turn_is_not_typed_into_a_page_that_shows_a_stop() {
    let mut world = World::new();
    world.script(&format!("{TWO}\nerror a dialog\na.resume"));
    let before = world.commands.len();
    let a = world.id("a");
    let _ = world.call(Operation::WorkerContinueNow { worker: a, override_wait: false, clear_pause: false });
    world.script("advance 10m");
    let to_a: Vec<_> = world.commands[before..].iter().filter(|c| c.worker == a).collect();
    assert!(to_a.is_empty(), "{to_a:?}");
}

#[test]
fn a_login_page_reported_for_a_new_chat_pauses_the_account_and_withdraws_the_create() {
    // The extension publishes a stopping state for a create that waits on its new chat
    // (docs/protocol/executor.md): the pending conversation takes it, without the create's deadline.
    for kind in ["login", "challenge", "suspicious"] {
        check(
            &format!(
                "run auto
                 executor e1
                 spawn a
                 error a {kind}
                 show a"
            ),
            "e1 create a#1 initial bootstrap/v2
             e1 cancel a#1
             a: paused #1 initial scheduled paused:account_check",
        );
    }
}
