//! The CLI executor's own semantics in the engine (issue 20): a turn the orchestrator did
//! not start pauses the worker for a person; a steer the session ran as the next turn is
//! booked as that turn (and nothing else goes in meanwhile); a usage limit holds or pauses
//! only the workers of its account (executor and kind), and for a CLI session the limit
//! ended the turn, so the next turn goes in once the hold lifts or a person resumes.

mod support;
use support::{World, check};

/// A Claude Code worker `a` generating its first turn, on a CLI executor that steers.
const CLAUDE: &str = "
    run auto
    executor cli-1 steering kinds=codex,claude
    spawn a claude dir=/src/a
    submit a
    gen a
";

/// `CLAUDE`, then the keepalive's checkpoint steer submitted into the running turn.
const STEERED: &str = "
    run auto
    executor cli-1 steering kinds=codex,claude
    spawn a claude dir=/src/a
    submit a
    gen a
    advance 21m
    submit a
";

fn names(world: &World) -> Vec<&'static str> {
    world.engine.recent_events().map(|e| e.kind.name()).collect()
}

#[test]
fn a_foreign_turn_pauses_the_worker_until_a_person_resumes() {
    let world = check(
        &format!(
            "{CLAUDE}
             idle a
             error a foreign detail=turn 019a started by a Stop hook
             show a
             advance 1h
             idle a
             advance 1h
             show a
             a.resume
             advance 3s
             show a"
        ),
        "cli-1 create a#1 initial bootstrap/v2
         a: paused #1 initial blocked intent[idle] paused:foreign_turn
         a: paused #1 initial blocked intent[idle] paused:foreign_turn
         cli-1 send a#2 auto_resume resume/v1
         a: running #2 auto_resume scheduled intent[active_keepalive]",
    );
    let detail = world.view("a").worker.pause.map(|p| p.detail);
    assert_eq!(detail, None, "resumed");
    let events = names(&world);
    assert!(events.contains(&"conversation.error"), "{events:?}");
    let paused = world.engine.recent_events().find_map(|e| match &e.kind {
        engine::event::EventKind::WorkerPaused { reason, .. } => Some(*reason),
        _ => None,
    });
    assert_eq!(paused, Some(engine::model::PauseReason::ForeignTurn));
}

#[test]
fn the_foreign_turn_pause_says_what_ran_where() {
    let world = check(&format!("{CLAUDE}\nerror a foreign detail=turn 019a"), "cli-1 create a#1 initial bootstrap/v2");
    let pause = world.worker("a").pause.clone().expect("paused");
    assert_eq!(pause.reason, engine::model::PauseReason::ForeignTurn);
    assert_eq!(
        pause.detail.as_deref(),
        Some(
            "A turn the orchestrator did not start ran in this Claude Code session ('turn 019a'). Look at the \
             session (a hook, a scheduled task or a person may have started it), then resume."
        )
    );
}

#[test]
fn a_steer_that_became_the_next_turn_is_booked_as_that_turn() {
    let world = check(
        &format!(
            "{STEERED}
             show a
             landed a next_turn
             show a
             idle a
             advance 10m
             show a
             gen a
             show a
             idle a
             advance 3s
             show a"
        ),
        // The steer (#2) took over the running turn when submitted; the landing report
        // gives that turn back: #2 waits for its own turn (nothing goes in meanwhile, not
        // even after the missed turn's end), runs it, and its end is the next boundary.
        "cli-1 create a#1 initial bootstrap/v2
         cli-1 steer a#2 checkpoint checkpoint/v1
         a: running #2 checkpoint generating auto=1
         a: running #2 checkpoint submitted auto=1
         a: running #2 checkpoint submitted auto=1
         a: running #2 checkpoint generating auto=1
         cli-1 send a#3 auto_resume resume/v1
         a: running #3 auto_resume scheduled auto=1",
    );
    world.check_recovery();
    let events = names(&world);
    assert_eq!(events.iter().filter(|n| **n == "execution.steer_landed").count(), 1, "{events:?}");
    let steer = world.engine.attempts().find(|a| a.sequence == 2).expect("the steer");
    // Its turn ended as any sent turn does (it stays open until the next submission).
    assert_eq!(steer.state, engine::model::AttemptState::Idle);
    assert!(steer.idle_at.is_some() && steer.generating_at > steer.submitted_at, "{steer:?}");
}

#[test]
fn a_next_turn_report_after_the_missed_turn_ended_still_books_the_turn() {
    // The executor reported the missed turn's end first (seq 2) and the landing after it:
    // the steer's turn is given back before the idle grace ran out.
    check(
        &format!(
            "{STEERED}
             idle a
             landed a next_turn seq=2
             advance 10m
             show a
             gen a
             idle a
             advance 3s"
        ),
        "cli-1 create a#1 initial bootstrap/v2
         cli-1 steer a#2 checkpoint checkpoint/v1
         a: running #2 checkpoint submitted intent[idle] auto=1
         cli-1 send a#3 auto_resume resume/v1",
    );
}

#[test]
fn a_steer_awaiting_its_turn_stays_so_across_a_daemon_restart() {
    check(
        &format!(
            "{STEERED}
             landed a next_turn
             idle a
             crash
             executor cli-1 steering kinds=codex,claude
             advance 10m
             show a
             gen a
             idle a
             advance 3s"
        ),
        "cli-1 create a#1 initial bootstrap/v2
         cli-1 steer a#2 checkpoint checkpoint/v1
         crash
         a: running #2 checkpoint submitted auto=1
         cli-1 send a#3 auto_resume resume/v1",
    );
}

#[test]
fn a_merged_steer_stays_a_steer_and_a_late_report_changes_nothing() {
    let mut world = check(
        &format!(
            "{STEERED}
             landed a merged
             show a
             idle a
             advance 3s
             show a"
        ),
        "cli-1 create a#1 initial bootstrap/v2
         cli-1 steer a#2 checkpoint checkpoint/v1
         a: running #2 checkpoint generating auto=1
         cli-1 send a#3 auto_resume resume/v1
         a: running #3 auto_resume scheduled auto=1",
    );
    // The steer's turn is over and another attempt is in flight: a late next-turn report
    // about it re-books nothing (and dispatches nothing).
    let before = world.commands.len();
    let trace = world.script("landed a next_turn\nshow a");
    assert_eq!(trace, "a: running #3 auto_resume scheduled auto=1");
    assert_eq!(world.commands.len(), before);
}

#[test]
fn a_cli_usage_limit_holds_only_its_account_then_the_next_turn_goes_in() {
    let world = check(
        "run auto
         executor cli-1 steering kinds=codex,claude
         executor browser
         spawn c codex dir=/src/c
         spawn k claude dir=/src/k
         spawn w chatgpt
         submit c
         gen c
         submit k
         gen k
         submit w
         gen w
         error c usage until=30m detail=You've hit your usage limit
         show c
         show k
         show w
         idle k
         idle w
         advance 3s
         show c
         advance 30m
         show c",
        // The Codex account of cli-1 is held; its Claude account and the browser's
        // ChatGPT account are not. The limit ended Codex's turn: once it lifts, the next
        // turn goes in (no page will show a change).
        "cli-1 create c#1 initial bootstrap/v2
         cli-1 create k#1 initial bootstrap/v2
         browser create w#1 initial bootstrap/v2
         c: awaiting_execution #1 initial failed intent[idle] held:usage_limit@1800(You've hit your usage limit)
         k: running #1 initial generating
         w: running #1 initial generating
         cli-1 send k#2 auto_resume resume/v1
         browser send w#2 auto_resume resume/v1
         c: awaiting_execution #1 initial failed intent[idle] held:usage_limit@1797(You've hit your usage limit)
         cli-1 send c#2 checkpoint checkpoint/v1
         c: running #2 checkpoint scheduled",
    );
    world.check_recovery();
    let held: Vec<String> = world
        .engine
        .recent_events()
        .filter(|e| e.kind.name() == "worker.held")
        .map(|e| world.name_of(e.worker.expect("a worker")))
        .collect();
    assert_eq!(held, vec!["c"], "only the Codex worker was held");
}

#[test]
fn a_cli_usage_limit_without_a_time_pauses_its_account_and_a_resume_sends_the_next_turn() {
    check(
        "run auto
         executor cli-1 steering kinds=codex,claude
         spawn c codex dir=/src/c
         spawn c2 codex dir=/src/c2
         spawn k claude dir=/src/k
         submit c
         gen c
         submit c2
         gen c2
         submit k
         gen k
         error c usage
         show c
         show c2
         show k
         idle c2
         advance 1h
         show c2
         c.resume
         show c",
        "cli-1 create c#1 initial bootstrap/v2
         cli-1 create c2#1 initial bootstrap/v2
         cli-1 create k#1 initial bootstrap/v2
         c: paused #1 initial failed intent[idle] paused:usage_limit
         c2: paused #1 initial generating paused:usage_limit
         k: running #1 initial generating
         cli-1 steer k#2 checkpoint checkpoint/v1
         c2: paused #1 initial blocked intent[idle] paused:usage_limit
         cli-1 send c#2 auto_resume resume/v1
         c: running #2 auto_resume scheduled",
    );
}

#[test]
fn a_chatgpt_limit_never_holds_a_cli_worker_of_another_executor() {
    check(
        "run auto
         executor browser
         executor cli-1 kinds=codex
         spawn w chatgpt
         spawn c codex dir=/src/c
         submit w
         gen w
         submit c
         gen c
         error w rate until=20m
         idle c
         advance 3s
         show w",
        "browser create w#1 initial bootstrap/v2
         cli-1 create c#1 initial bootstrap/v2
         cli-1 send c#2 auto_resume resume/v1
         w: awaiting_execution #1 initial failed held:rate_limited@1197",
    );
}

#[test]
fn an_unbound_worker_stays_held_while_no_executor_of_its_kind_is_connected() {
    // Found by the simulator (seed 570): after a daemon restart, before the browser's
    // hello, the operator's continue-now for an unbound `/root` was scheduled while the
    // ChatGPT account was held. With no executor of its kind connected, a held account
    // of its kind holds it (its command could only go there).
    check(
        "run auto
         executor e1
         spawn a
         submit a
         gen a
         error a rate until=20m
         crash
         root.continue_now
         show root
         executor e1
         show root
         advance 21m
         show root",
        "e1 create a#1 initial bootstrap/v2
         crash
         continue_now recovering
         root: awaiting_execution intent[operator:continue_now] held:rate_limited@1200
         root: awaiting_execution intent[operator:continue_now] held:rate_limited@1200
         e1 create root#1 recovery recovery/v2
         root: running #1 recovery scheduled",
    );
}

/// The `conversation.close` commands sent for worker `a`.
fn closes(world: &World) -> usize {
    let a = world.id("a");
    world.commands.iter().filter(|c| c.worker == a && c.kind == engine::effect::CommandKind::Close).count()
}

#[test]
fn a_stopped_cli_worker_s_session_is_closed_at_once_even_mid_turn() {
    let world =
        check(&format!("{CLAUDE}\na.interrupt not needed"), "cli-1 create a#1 initial bootstrap/v2\ncli-1 close a#1");
    assert_eq!(closes(&world), 1);
}

#[test]
fn a_completed_cli_worker_s_session_is_closed_once_its_last_turn_ended() {
    // worker_complete comes inside the turn: the agent's closing words are not cut off.
    let world = check(&format!("{CLAUDE}\na.complete done"), "cli-1 create a#1 initial bootstrap/v2");
    assert_eq!(closes(&world), 0, "not while the turn runs");
    let world =
        check(&format!("{CLAUDE}\na.complete done\nidle a"), "cli-1 create a#1 initial bootstrap/v2\ncli-1 close a#1");
    assert_eq!(closes(&world), 1);
}

#[test]
fn a_chatgpt_worker_s_tab_is_left_alone_when_it_ends() {
    let world = check(
        "run auto
         executor e1 steering
         spawn a
         submit a
         gen a
         a.interrupt not needed",
        "e1 create a#1 initial bootstrap/v2",
    );
    assert_eq!(closes(&world), 0);
}

#[test]
fn a_finished_worker_s_session_reported_by_a_returning_executor_is_closed() {
    // The executor was away when the worker was stopped: its hello still lists the
    // session, which is closed then.
    let world = check(
        &format!(
            "{CLAUDE}
             disconnect cli-1
             a.interrupt not needed
             hello cli-1 steering kinds=codex,claude bind=a:idle"
        ),
        "cli-1 create a#1 initial bootstrap/v2\ncli-1 close a#1",
    );
    assert_eq!(closes(&world), 1);
}
