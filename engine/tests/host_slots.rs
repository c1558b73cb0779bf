//! A CLI host's cap on turns at once (its `hello`'s `concurrencyMax`, `executor-cli
//! --turns-max`): a turn beyond it waits for one to end on that host, looked at again every
//! `HOST_SLOT_RECHECK_MS`; an unbound worker goes to a host with a free slot first; a
//! browser's `concurrencyMax` is no cap for the daemon.

mod support;
use support::check;

#[test]
fn a_host_with_one_slot_runs_one_turn_at_a_time_and_the_next_waits_for_it() {
    let mut world = check(
        "run auto
         executor cli-1 kinds=codex turns=1
         spawn a codex dir=/src/a
         spawn b codex dir=/src/b
         advance 1m",
        "cli-1 create a#1 initial bootstrap/v2",
    );
    assert_eq!(world.busy(), ["a"], "b waits for the slot");
    let b = world.engine.worker_view(world.id("b")).expect("b's view");
    let slot = b.liveness.and_then(|l| l.slot).expect("b says it waits for a slot");
    assert_eq!((slot.executor.to_string().as_str(), slot.busy, slot.max), ("cli-1", 1, 1));
    let trace = world.script("submit a\ngen a\nadvance 10m");
    assert_eq!(trace, "", "a's turn runs: b still waits");
    let trace = world.script("idle a");
    assert_eq!(trace, "cli-1 create b#1 initial bootstrap/v2", "the slot a freed goes to b at once");
    assert_eq!(world.busy(), ["b"]);
    // a's own next turn waits for b's to end.
    let trace = world.script("submit b\ngen b\nadvance 5m");
    assert_eq!(trace, "", "b runs: a waits");
    let trace = world.script("idle b\nadvance 2m");
    assert!(trace.starts_with("cli-1 send a#2 auto_resume"), "a resumes once b's turn ended: {trace}");
    assert_eq!(world.busy().len(), 1, "one turn at a time: {:?}", world.busy());
}

#[test]
fn an_unbound_worker_goes_to_a_host_with_a_free_slot() {
    let world = check(
        "run auto
         executor cli-1 kinds=codex turns=1
         executor cli-2 kinds=codex turns=1
         spawn a codex dir=/src/a
         advance 1s
         spawn b codex dir=/src/b
         advance 1m",
        "cli-1 create a#1 initial bootstrap/v2
         cli-2 create b#1 initial bootstrap/v2",
    );
    assert_eq!(world.busy(), ["a", "b"]);
}

#[test]
fn without_a_cap_every_worker_runs_at_once() {
    let world = check(
        "run auto
         executor cli-1 kinds=codex
         spawn a codex dir=/src/a
         spawn b codex dir=/src/b
         advance 1m",
        "cli-1 create a#1 initial bootstrap/v2
         cli-1 create b#1 initial bootstrap/v2",
    );
    assert_eq!(world.busy(), ["a", "b"]);
}

#[test]
fn commands_that_waited_for_their_host_go_out_one_slot_at_a_time_when_it_connects() {
    let mut world = check(
        "run auto
         spawn a codex dir=/src/a
         spawn b codex dir=/src/b
         advance 1m",
        "",
    );
    let trace = world.script("executor cli-1 kinds=codex turns=1");
    assert_eq!(trace, "cli-1 create a#1 initial bootstrap/v2", "one slot: one command");
    let trace = world.script("submit a\ngen a\nadvance 5m");
    assert_eq!(trace, "", "b's command waits while a's turn runs");
    let trace = world.script("idle a");
    assert!(trace.starts_with("cli-1 create b#1 initial"), "b's command goes out when a's turn ends: {trace}");
}
