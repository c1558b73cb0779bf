//! Liveness (issue 29): who carries each worker, a worker whose executor is gone never
//! reported running, one absence event per episode when no executor of a worker's kind is
//! connected for `EXECUTOR_ABSENT_MS_MAX`, and a CLI that keeps retrying its model
//! connection paused after `CLI_RETRY_MS_MAX`.

mod support;
use engine::event::EventKind;
use engine::model::PauseReason;
use support::check;

/// A ChatGPT worker `a` generating its first turn on the browser `e1` (no time-based
/// stall guard: a turn left generating for hours is what some tests look at).
const RUNNING: &str = "
    run auto no_time_stall
    executor e1
    spawn a
    submit a
    gen a
";

/// A Codex worker `a` generating its first turn on the CLI executor `cli-1`, with no
/// time-based stall guard (the retry bound is what is tested).
const CODEX: &str = "
    run auto no_time_stall
    executor cli-1 kinds=codex
    spawn a codex dir=/src/a
    submit a
    gen a
";

#[test]
fn a_worker_whose_executor_went_away_is_offline_since_then_and_running_again_when_it_is_back() {
    check(
        &format!(
            "{RUNNING}
             show a
             live a
             advance 10s
             disconnect e1
             advance 1m
             show a
             live a
             executor e1 bind=a:generating
             show a
             live a"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: running #1 initial generating
         live a: connected e1 since=-0s capable=1
         a: awaiting_execution #1 initial generating
         live a: offline e1 since=-60s capable=0
         a: running #1 initial generating
         live a: connected e1 since=-0s capable=1",
    );
}

#[test]
fn another_executor_of_the_kind_does_not_carry_a_worker_bound_to_one_that_is_gone() {
    check(
        &format!(
            "{RUNNING}
             executor e2
             disconnect e1
             show a
             live a"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial generating
         live a: offline e1 since=-0s capable=1",
    );
}

#[test]
fn after_a_daemon_restart_every_executor_is_offline_since_the_first_input() {
    check(
        &format!(
            "{RUNNING}
             crash
             tick
             advance 2m
             show a
             advance 1m
             live a"
        ),
        "e1 create a#1 initial bootstrap/v2
         crash
         a: awaiting_execution #1 initial generating
         live a: offline e1 since=-180s capable=0",
    );
}

#[test]
fn a_worker_without_an_executor_of_its_kind_is_unassigned_since_none_was_connected() {
    check(
        "run auto
         executor e1
         advance 1m
         spawn a codex dir=/src/a
         show a
         live a
         executor cli-1 kinds=codex
         live a
         show a",
        "a: awaiting_execution #1 initial scheduled
         live a: unassigned since=-60s capable=0
         cli-1 create a#1 initial bootstrap/v2
         live a: connected cli-1 since=-0s capable=1
         a: running #1 initial scheduled",
    );
}

#[test]
fn no_executor_of_its_kind_for_five_minutes_raises_one_event_per_episode() {
    let world = check(
        &format!(
            "{RUNNING}
             disconnect e1
             advance 299s
             events worker.executor_absent
             advance 1s
             events worker.executor_absent
             live a
             advance 1h
             events worker.executor_absent
             executor e1 bind=a:generating
             live a
             disconnect e1
             advance 5m
             events worker.executor_absent"
        ),
        "e1 create a#1 initial bootstrap/v2
         events worker.executor_absent: 0
         events worker.executor_absent: 1
         live a: offline e1 since=-300s capable=0 absent=-300s
         events worker.executor_absent: 1
         live a: connected e1 since=-0s capable=1
         events worker.executor_absent: 2",
    );
    let absent = world.engine.recent_events().find_map(|e| match &e.kind {
        EventKind::WorkerExecutorAbsent { kind, executor, .. } => Some((kind.as_str(), executor.clone())),
        _ => None,
    });
    assert_eq!(absent, Some(("chatgpt", Some(engine::ids::ExecutorId::new("e1")))));
}

#[test]
fn a_daemon_restart_starts_a_new_absence_episode() {
    check(
        &format!(
            "{RUNNING}
             disconnect e1
             advance 6m
             events worker.executor_absent
             crash
             tick
             advance 4m
             events worker.executor_absent
             advance 1m
             events worker.executor_absent"
        ),
        "e1 create a#1 initial bootstrap/v2
         events worker.executor_absent: 1
         crash
         events worker.executor_absent: 1
         events worker.executor_absent: 2",
    );
}

#[test]
fn a_worker_that_would_not_run_raises_no_absence() {
    check(
        &format!(
            "{RUNNING}
             a.pause
             spawn b detached
             b.await_dep a
             disconnect e1
             advance 1h
             events worker.executor_absent
             a.resume
             advance 5m
             events worker.executor_absent"
        ),
        "e1 create a#1 initial bootstrap/v2
         events worker.executor_absent: 0
         events worker.executor_absent: 1",
    );
}

#[test]
fn a_cli_lane_with_only_a_browser_connected_is_absent_and_the_browser_root_is_not() {
    let world = check(
        "run auto
         executor e1
         spawn a codex dir=/src/a
         advance 5m
         events worker.executor_absent
         executor cli-1 kinds=codex
         live a",
        "events worker.executor_absent: 1
         cli-1 create a#1 initial bootstrap/v2
         live a: connected cli-1 since=-0s capable=1",
    );
    let absent: Vec<_> = world.engine.recent_events().filter(|e| e.kind.name() == "worker.executor_absent").collect();
    assert_eq!(absent[0].worker, Some(world.id("a")), "the Codex lane, not the ChatGPT root");
}

#[test]
fn a_cli_that_keeps_retrying_pauses_its_worker_after_ten_minutes() {
    let world = check(
        &format!(
            "{CODEX}
             advance 1m
             retry a Reconnecting... waiting for network
             live a
             advance 5m
             retry a Reconnecting... waiting for network (attempt 2)
             advance 299s
             show a
             advance 1s
             show a
             live a"
        ),
        "cli-1 create a#1 initial bootstrap/v2
         live a: connected cli-1 since=-60s capable=1 retry=-0s(Reconnecting... waiting for network)
         a: running #1 initial generating
         a: paused #1 initial generating paused:cli_retrying
         live a: connected cli-1 since=-660s capable=1 retry=-600s(Reconnecting... waiting for network (attempt 2))",
    );
    let pause = world.view("a").worker.pause.expect("paused");
    assert_eq!(pause.reason, PauseReason::CliRetrying);
    assert_eq!(
        pause.detail.as_deref(),
        Some(
            "Codex CLI kept retrying its model connection for 10 min (Reconnecting... waiting for network \
             (attempt 2)). Check the network and Codex CLI's login on executor cli-1, then resume."
        )
    );
}

#[test]
fn a_retry_that_is_over_pauses_nothing() {
    check(
        &format!(
            "{CODEX}
             retry a stream disconnected
             advance 5m
             gen a
             live a
             advance 1h
             show a"
        ),
        "cli-1 create a#1 initial bootstrap/v2
         live a: connected cli-1 since=-300s capable=1
         a: running #1 initial generating intent[active_keepalive]",
    );
}

#[test]
fn progress_and_a_resume_restart_the_retry_clock() {
    check(
        &format!(
            "{CODEX}
             retry a stream disconnected
             advance 8m
             a.progress halfway
             advance 9m
             show a
             advance 1m
             show a
             a.resume
             advance 9m
             show a
             advance 1m
             show a"
        ),
        "cli-1 create a#1 initial bootstrap/v2
         a: running #1 initial generating
         a: paused #1 initial generating paused:cli_retrying
         a: running #1 initial generating intent[active_keepalive,operator:resume]
         a: paused #1 initial generating intent[active_keepalive,operator:resume] paused:cli_retrying",
    );
}

#[test]
fn an_executor_that_goes_away_takes_its_retries_with_it() {
    check(
        &format!(
            "{CODEX}
             retry a stream disconnected
             disconnect cli-1
             advance 1h
             show a
             executor cli-1 kinds=codex bind=a:generating
             live a
             advance 1h
             show a"
        ),
        "cli-1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial generating intent[active_keepalive]
         live a: connected cli-1 since=-0s capable=1
         a: running #1 initial generating intent[active_keepalive]",
    );
}

#[test]
fn a_finished_worker_has_no_liveness() {
    check(
        &format!(
            "{RUNNING}
             a.complete done
             live a"
        ),
        "e1 create a#1 initial bootstrap/v2
         live a: ended",
    );
}

#[test]
fn time_without_an_executor_is_never_a_stall() {
    // The default policy pauses after 60 minutes of execution time without progress.
    check(
        "run auto
         executor e1
         spawn a
         submit a
         gen a
         advance 20m
         disconnect e1
         advance 3h
         executor e1 bind=a:generating
         advance 39m
         show a
         advance 1m
         show a",
        "e1 create a#1 initial bootstrap/v2
         a: running #1 initial generating intent[active_keepalive] stall:warned
         a: paused #1 initial generating intent[active_keepalive] paused:stall stall:paused",
    );
}
