//! The shrinker finds a smaller failing configuration, and its scenario file replays the
//! same configuration.

use sim::faults::{Boundary, CrashAt};
use sim::knobs::Knobs;
use sim::scenario;
use sim::shrink::{shrink, to_scenario};

#[test]
fn shrinks_to_what_the_failure_needs_and_the_file_replays_it() {
    let mut knobs = Knobs::swarm(5);
    knobs.workers = 4;
    knobs.daemon_crash_pct = 5;
    knobs.executor_crash_pct = 5;
    knobs.hold_pct = 3;
    knobs.agents.turns_min = 3;
    knobs.agents.turns_max = 6;
    let plan = vec![
        CrashAt { boundary: Boundary::SubmissionStarted, occurrence: 2 },
        CrashAt { boundary: Boundary::IdleDuringGrace, occurrence: 1 },
    ];
    // A synthetic failure: it needs two workers, daemon crashes and the submission crash.
    let fails = |k: &Knobs, p: &[CrashAt]| {
        k.workers >= 2 && k.daemon_crash_pct > 0 && p.iter().any(|c| c.boundary == Boundary::SubmissionStarted)
    };
    let (small, small_plan, runs) = shrink(&knobs, &plan, fails);
    assert!(fails(&small, &small_plan), "the shrunk configuration must still fail");
    assert_eq!(small.workers, 2);
    assert_eq!(small.executor_crash_pct, 0);
    assert_eq!(small.hold_pct, 0);
    assert_eq!(small_plan, vec![CrashAt { boundary: Boundary::SubmissionStarted, occurrence: 2 }]);
    assert_eq!((small.agents.turns_min, small.agents.turns_max), (1, 1));
    assert!(runs > 0);
    let file = to_scenario("shrunk", &small, &small_plan);
    let replay = scenario::parse("shrunk.scn", &file).expect("the written scenario parses");
    assert_eq!(replay.knobs.workers, small.workers);
    assert_eq!(replay.knobs.seed, small.seed);
    assert_eq!(replay.plan, small_plan);
    assert_eq!(replay.knobs.agents.turns_max, small.agents.turns_max);
    assert_eq!(replay.knobs.daemon_crash_pct, small.daemon_crash_pct);
}
