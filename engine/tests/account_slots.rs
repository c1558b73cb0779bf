//! An account several CLI hosts share (`executor-cli --account codex=team:N`): the daemon
//! runs at most N turns under it at once, on all of them together, whichever host would
//! carry the next one; the smallest cap any of them named holds; another kind's workers,
//! or another account's, are not held by it; after a restart, a turn on a host not heard
//! from yet counts against every account of its kind until that host says what it runs
//! under; and every surface says which account a waiting turn waits for.

mod support;
use support::{World, check};

#[test]
fn two_hosts_sharing_an_account_run_no_more_turns_under_it_than_it_allows() {
    // Each host could run two turns; the account they share allows two in all.
    let mut world = check(
        "run auto
         executor cli-1 kinds=codex turns=2 account=codex:team:2
         executor cli-2 kinds=codex turns=2 account=codex:team:2
         spawn a codex dir=/src/a
         advance 1s
         spawn b codex dir=/src/b
         advance 1s
         spawn c codex dir=/src/c
         advance 1m",
        "cli-1 create a#1 initial bootstrap/v2
         cli-1 create b#1 initial bootstrap/v2",
    );
    assert_eq!(world.busy(), ["a", "b"], "c waits for the account, though cli-2 is free");
    let c = world.engine.worker_view(world.id("c")).expect("c's view");
    let slot = c.liveness.and_then(|l| l.slot).expect("c says it waits for a slot");
    assert_eq!(slot.account.as_deref(), Some("team"), "the account's slots, not the host's: {slot:?}");
    assert_eq!((slot.busy, slot.max), (2, 2));
    let trace = world.script("submit a\ngen a\nsubmit b\ngen b\nadvance 10m");
    assert_eq!(trace, "", "a and b run: c still waits");
    let trace = world.script("idle a");
    assert!(trace.contains("create c#1 initial"), "the slot a freed goes to c at once: {trace}");
    assert_eq!(world.busy(), ["b", "c"]);
}

#[test]
fn the_smallest_cap_the_hosts_named_holds() {
    let world = check(
        "run auto
         executor cli-1 kinds=codex account=codex:team:3
         executor cli-2 kinds=codex account=codex:team:1
         spawn a codex dir=/src/a
         advance 1s
         spawn b codex dir=/src/b
         advance 1m",
        "cli-1 create a#1 initial bootstrap/v2",
    );
    assert_eq!(world.busy(), ["a"], "one turn under the account: cli-2 said 1");
}

#[test]
fn another_kind_and_another_account_are_not_held() {
    let world = check(
        "run auto
         executor cli-1 kinds=codex,claude account=codex:team:1,claude:solo:1
         executor cli-2 kinds=codex account=codex:other:1
         spawn a codex dir=/src/a
         advance 1s
         spawn b codex dir=/src/b
         advance 1s
         spawn c claude dir=/src/c
         advance 1m",
        "cli-1 create a#1 initial bootstrap/v2
         cli-2 create b#1 initial bootstrap/v2
         cli-1 create c#1 initial bootstrap/v2",
    );
    assert_eq!(world.busy(), ["a", "b", "c"], "team, other and solo each run one turn");
}

/// One run, a's worker on cli-1, the only host, under the Codex account team (cap 1): its
/// first turn created.
fn a_on_cli_1_under_team() -> World {
    check(
        "run auto
         executor cli-1 kinds=codex account=codex:team:1
         spawn a codex dir=/src/a
         advance 1m",
        "cli-1 create a#1 initial bootstrap/v2",
    )
}

#[test]
fn a_turn_on_a_host_that_went_away_still_counts_against_its_account() {
    // cli-1 carries a's running turn and drops its connection: the turn may still run
    // there, under the account, so b (which cli-2 would carry) still waits.
    let mut world = a_on_cli_1_under_team();
    let trace = world.script(
        "submit a
         gen a
         disconnect cli-1
         executor cli-2 kinds=codex account=codex:team:1
         spawn b codex dir=/src/b
         advance 5m",
    );
    assert_eq!(trace, "", "b waits for the account while a's turn may run on cli-1: {trace}");
}

#[test]
fn after_a_restart_a_turn_on_a_host_not_heard_from_yet_counts_against_the_account() {
    // The daemon restarts while cli-1 runs a's turn under the account. cli-2 says hello
    // first: what cli-1 runs under is not known until it does, so its running turn counts
    // against every account of its kind, and b waits rather than run a second turn
    // under team. Once cli-1 is back naming another account, b goes.
    let mut world = a_on_cli_1_under_team();
    let trace = world.script(
        "submit a
         gen a
         crash
         executor cli-2 kinds=codex account=codex:team:1
         spawn b codex dir=/src/b
         advance 5m",
    );
    assert_eq!(trace, "crash", "b waits while a's turn may run under team on cli-1: {trace}");
    let b = world.engine.worker_view(world.id("b")).expect("b's view");
    let slot = b.liveness.and_then(|l| l.slot).expect("b says it waits for a slot");
    assert_eq!((slot.account.as_deref(), slot.busy, slot.unheard, slot.max), (Some("team"), 1, 1, 1), "{slot:?}");
    let trace = world.script("executor cli-1 kinds=codex account=codex:solo:1\nadvance 1m");
    assert!(trace.contains("cli-2 create b#1 initial"), "cli-1 runs a under solo: b goes under team: {trace}");
}
