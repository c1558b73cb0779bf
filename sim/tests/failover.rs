//! Two daemons on one store under a lease (issue 32): the failover scenarios pass every
//! check (no stale epoch commits or dispatches, no prompt twice, acknowledged writes kept)
//! and replay byte for byte; a leader killed mid-submission is taken over by the standby.

use sim::faults::{Boundary, CrashAt};
use sim::matrix;
use sim::world;

#[test]
fn the_failover_scenarios_pass_and_replay_byte_for_byte() {
    let files = [
        ("failover-leader-dies.scn", include_str!("../../scenarios/failover-leader-dies.scn")),
        ("failover-zombie-leader.scn", include_str!("../../scenarios/failover-zombie-leader.scn")),
        ("failover-store-partition.scn", include_str!("../../scenarios/failover-store-partition.scn")),
    ];
    for (name, text) in files {
        let s = sim::scenario::parse(name, text).expect("the scenario parses");
        let a = world::run(&s.knobs, &s.plan);
        assert!(a.violations.is_empty(), "{name}: {:?}", a.violations);
        assert!(sim::scenario::verify(&s, &a).is_empty(), "{name}: {:?}", sim::scenario::verify(&s, &a));
        assert!(a.lease_takes >= 3, "{name}: only {} leases taken", a.lease_takes);
        assert_eq!(world::run(&s.knobs, &s.plan).trace, a.trace, "{name} is not deterministic");
    }
}

#[test]
fn a_zombie_leader_is_fenced_when_it_wakes() {
    let s = sim::scenario::parse("zombie", include_str!("../../scenarios/failover-zombie-leader.scn")).expect("parses");
    let outcome = world::run(&s.knobs, &s.plan);
    assert!(outcome.step_downs.iter().all(|d| d.contains("fenced off by a newer writer")), "{:?}", outcome.step_downs);
    assert!(outcome.trace.iter().any(|l| l.contains("WAKES")), "the zombie never woke");
}

#[test]
fn a_leader_cut_off_from_the_store_steps_down_before_its_lease_lapses() {
    let text = "standby on\nworkers 1\nturns 2 2\nat 3m partition leader store 2m\nexpect completed all\n";
    let s = sim::scenario::parse("cut", text).expect("parses");
    let outcome = world::run(&s.knobs, &s.plan);
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    assert_eq!(outcome.step_downs.len(), 1, "{:?}", outcome.step_downs);
    // The standby takes the lease only after the old leader stepped down.
    let at = |what: &str| outcome.trace.iter().position(|l| l.contains(what)).unwrap_or(usize::MAX);
    assert!(at("STEP DOWN") < at("lease taken: epoch 2"), "{:?}", outcome.trace);
}

#[test]
fn a_leader_killed_mid_submission_is_taken_over_without_duplicates() {
    let takeover =
        matrix::Takeover { at: CrashAt { boundary: Boundary::SubmissionStarted, occurrence: 1 }, lane: 0, seed: 5_030 };
    assert_eq!(matrix::Takeover::parse(&takeover.spec(), 5_030), Some(takeover));
    let knobs = matrix::knobs_for_takeover(takeover);
    let outcome = world::run(&knobs, &[]);
    assert!(outcome.unreached.is_empty(), "the takeover never happened: {:?}", outcome.unreached);
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    assert_eq!(outcome.lease_takes, 2, "one takeover");
    assert_eq!(outcome.completed, outcome.workers, "not every worker completed");
}

#[test]
fn the_matrix_takes_over_at_every_boundary() {
    let takeovers = matrix::takeovers();
    for boundary in Boundary::ALL {
        assert!(takeovers.iter().any(|t| t.at.boundary == boundary), "{boundary} has no failover cell");
    }
    let seeds: std::collections::BTreeSet<u64> = takeovers.iter().map(|t| t.seed).collect();
    assert_eq!(seeds.len(), takeovers.len(), "two failover cells share a seed");
}

#[test]
fn a_leader_fault_without_a_standby_is_refused() {
    let error = sim::scenario::parse("x", "workers 1\nat 3m kill leader 1m\n").expect_err("refused");
    assert!(error.message.contains("standby on"), "{error}");
    assert!(sim::scenario::parse("x", "standby on\nat 3m pause leader\n").is_err());
}
