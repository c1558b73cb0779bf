//! Finished runs stay readable (issue 29): `run_history` lists them, the most recently
//! ended first, with how they ended, within a bounded, configurable retention; `run_list`
//! puts them after the unfinished ones; both survive a restart.

mod support;
use engine::ids::RunId;
use engine::op::*;
use support::World;

fn ids(reply: Result<Reply, engine::Rejection>) -> Vec<RunId> {
    match reply {
        Ok(Reply::Runs(runs)) => runs.iter().map(|r| r.run.id).collect(),
        other => panic!("runs expected: {other:?}"),
    }
}

/// Three runs: the first stopped last, the second stopped first, the third unfinished.
fn three_runs() -> (World, [RunId; 3]) {
    three_runs_in(World::new())
}

fn three_runs_in(mut world: World) -> (World, [RunId; 3]) {
    let mut runs = Vec::new();
    for _ in 0..3 {
        world.script("run auto");
        runs.push(world.run.expect("run"));
    }
    let stop = |world: &mut World, run| {
        world.call(Operation::RunCancel { run, reason: "done for today".into() }).expect("stopped");
        world.script("advance 1m");
    };
    stop(&mut world, runs[1]);
    stop(&mut world, runs[0]);
    (world, [runs[0], runs[1], runs[2]])
}

#[test]
fn history_is_the_most_recently_finished_first() {
    let (mut world, [first, second, third]) = three_runs();
    assert_eq!(ids(world.call(Operation::RunHistory { limit: 10 })), [first, second]);
    assert_eq!(ids(world.call(Operation::RunHistory { limit: 1 })), [first]);
    assert_eq!(ids(world.call(Operation::RunList { include_terminal: true })), [third, first, second]);
    assert_eq!(ids(world.call(Operation::RunList { include_terminal: false })), [third]);
    world.script("crash");
    assert_eq!(ids(world.call(Operation::RunHistory { limit: 10 })), [first, second], "after a restart");
}

#[test]
fn history_pages_are_bounded() {
    let (mut world, _) = three_runs();
    let too_many = engine::limits::LIST_PAGE_COUNT_MAX + 1;
    let refused = world.call(Operation::RunHistory { limit: too_many }).expect_err("refused");
    assert_eq!(refused.code, engine::RejectionCode::InvalidArgument);
}

#[test]
fn history_keeps_at_most_the_configured_runs_for_the_configured_time() {
    let (mut world, [first, second, third]) = three_runs_in(World::with_config(|c| c.history_runs_max = 1));
    assert_eq!(ids(world.call(Operation::RunHistory { limit: 10 })), [first], "one run kept");
    assert_eq!(ids(world.call(Operation::RunList { include_terminal: true })), [third, first], "run_list too");
    let (mut world, [first, second_again, _]) = three_runs_in(World::with_config(|c| {
        c.history_kept_ms = engine::time::HOUR_MS;
    }));
    assert_eq!(second, second_again);
    assert_eq!(ids(world.call(Operation::RunHistory { limit: 10 })), [first, second]);
    // `first` ended a minute after `second`: after an hour `second` leaves, then `first`.
    world.script("advance 59m");
    assert_eq!(ids(world.call(Operation::RunHistory { limit: 10 })), [first]);
    world.script("advance 1m");
    assert!(ids(world.call(Operation::RunHistory { limit: 10 })).is_empty());
}

#[test]
fn a_finished_run_says_how_it_ended_in_its_roots_words() {
    let mut world = World::new();
    world.script("run auto\nexecutor e1\nspawn a\nsubmit a\ngen a");
    let run = world.run.expect("run");
    let Ok(Reply::Run(open)) = world.call(Operation::RunGet { run }) else { panic!("the run") };
    assert_eq!(open.outcome, None, "a running run has no outcome yet");
    world.call(Operation::RunCancel { run, reason: "enough for tonight".into() }).expect("stopped");
    let Ok(Reply::Runs(history)) = world.call(Operation::RunHistory { limit: 10 }) else { panic!("history") };
    assert_eq!(history[0].outcome.as_deref(), Some("enough for tonight"));
    assert!(history[0].run.ended_at.is_some());
}
