//! Finished runs stay readable (issue 29): `run_history` lists them, the most recently
//! ended first, and `run_list` puts them after the unfinished ones; both survive a restart.

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
    let mut world = World::new();
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
