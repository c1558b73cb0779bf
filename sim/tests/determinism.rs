//! The simulator's own guarantees: same seed, same trace, byte for byte; different
//! seeds explore differently; a few swarm seeds and matrix cells pass in debug builds
//! (the release `matrix` and `run --seeds` commands in test.sh cover the rest).

use sim::faults::{Boundary, CrashAt};
use sim::knobs::Knobs;
use sim::matrix;
use sim::world;

#[test]
fn same_seed_same_trace_hash() {
    for seed in [3, 11] {
        let knobs = Knobs::swarm(seed);
        let a = world::run(&knobs, &[]);
        let b = world::run(&knobs, &[]);
        assert_eq!(a.trace_hash, b.trace_hash, "seed {seed} is not deterministic");
        assert_eq!(a.trace, b.trace);
    }
    let other = world::run(&Knobs::swarm(4), &[]);
    assert_ne!(other.trace_hash, world::run(&Knobs::swarm(3), &[]).trace_hash);
}

#[test]
fn triggers_partitions_failures_and_attaches_replay_byte_for_byte() {
    let files = [
        ("bridge-partition.scn", include_str!("../../scenarios/bridge-partition.scn")),
        ("race-complete-after-ack.scn", include_str!("../../scenarios/race-complete-after-ack.scn")),
        ("worker-fail.scn", include_str!("../../scenarios/worker-fail.scn")),
        ("reattach-lane.scn", include_str!("../../scenarios/reattach-lane.scn")),
        ("approvals-per-tool.scn", include_str!("../../scenarios/approvals-per-tool.scn")),
        ("app-unavailable.scn", include_str!("../../scenarios/app-unavailable.scn")),
        ("cli-steer-next-turn.scn", include_str!("../../scenarios/cli-steer-next-turn.scn")),
        ("cli-child-crash.scn", include_str!("../../scenarios/cli-child-crash.scn")),
        ("lane-stopped-while-root-waits.scn", include_str!("../../scenarios/lane-stopped-while-root-waits.scn")),
    ];
    for (name, text) in files {
        let s = sim::scenario::parse(name, text).expect("the scenario parses");
        let a = world::run(&s.knobs, &s.plan);
        let b = world::run(&s.knobs, &s.plan);
        assert_eq!(a.trace, b.trace, "{name} is not deterministic");
        assert!(a.violations.is_empty(), "{name}: {:?}", a.violations);
        assert!(sim::scenario::verify(&s, &a).is_empty(), "{name}: {:?}", sim::scenario::verify(&s, &a));
    }
}

#[test]
fn a_few_swarm_seeds_pass() {
    for seed in 0..4 {
        let outcome = world::run(&Knobs::swarm(seed), &[]);
        assert!(outcome.violations.is_empty(), "seed {seed}: {:?}", outcome.violations);
        assert_eq!(
            outcome.completed + outcome.failed + outcome.stalled,
            outcome.workers,
            "seed {seed}: not every worker finished"
        );
        assert!(outcome.deliveries > outcome.workers, "seed {seed}: the agents needed several turns");
    }
}

#[test]
fn a_crash_at_submission_started_converges_without_duplicates() {
    let cell = matrix::Cell { crash: CrashAt { boundary: Boundary::SubmissionStarted, occurrence: 2 }, seed: 7 };
    let result = matrix::run_cell(cell);
    assert!(result.crashed, "the planned crash did not happen");
    assert!(result.outcome.violations.is_empty(), "{:?}", result.outcome.violations);
}

#[test]
fn the_matrix_names_every_boundary() {
    let cells = matrix::cells();
    for boundary in Boundary::ALL {
        assert!(cells.iter().any(|c| c.crash.boundary == boundary), "{boundary} missing from the matrix");
        assert_eq!(Boundary::parse(boundary.name()), Some(boundary));
    }
}

#[test]
fn a_cli_executor_lost_past_the_absence_limit_converges_and_replays() {
    let loss = matrix::Loss {
        at: CrashAt { boundary: Boundary::SubmissionStarted, occurrence: 1 },
        lane: 3,
        length_ms: 8 * 60_000,
        seed: 11,
    };
    assert_eq!(loss.spec(), "submission-started:1:lane3:8m");
    assert_eq!(matrix::Loss::parse(&loss.spec(), 11), Some(loss));
    let knobs = matrix::knobs_for_loss(loss);
    let outcome = world::run(&knobs, &[]);
    assert!(outcome.unreached.is_empty(), "the loss never happened: {:?}", outcome.unreached);
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    assert_eq!(outcome.completed, outcome.workers, "not every worker completed");
    assert!(outcome.trace.iter().any(|l| l.contains("worker.executor_absent")), "no absence past the limit");
    assert_eq!(world::run(&knobs, &[]).trace, outcome.trace, "the loss cell is not deterministic");
}

#[test]
fn the_matrix_loses_an_executor_at_every_boundary() {
    let losses = matrix::losses();
    for boundary in Boundary::ALL {
        assert!(losses.iter().any(|l| l.at.boundary == boundary), "{boundary} has no executor loss");
    }
    // ChatGPT lanes (0) and both CLI kinds (2: Codex, 3: Claude Code), under and past the limit.
    for lane in [0, 2, 3] {
        for length_ms in matrix::LOSS_LENGTHS_MS {
            assert!(losses.iter().any(|l| l.lane == lane && l.length_ms == length_ms), "lane{lane} {length_ms}");
        }
    }
    assert!(matrix::LOSS_LENGTHS_MS.iter().any(|ms| *ms > engine::limits::EXECUTOR_ABSENT_MS_MAX));
    assert!(matrix::LOSS_LENGTHS_MS.iter().any(|ms| *ms < engine::limits::EXECUTOR_ABSENT_MS_MAX));
    let seeds: std::collections::BTreeSet<u64> = losses.iter().map(|l| l.seed).collect();
    assert_eq!(seeds.len(), losses.len(), "two loss cells share a seed");
}
