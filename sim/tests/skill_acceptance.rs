//! Acceptance of the agent skill's output contract (spec 001 C18.7): agents that end
//! every turn with a valid continuation block and know nothing of the mechanics; the
//! backend alone decides whether another execution happens.

use sim::knobs::Knobs;
use sim::world;

fn knobs(seed: u64) -> Knobs {
    let mut k = Knobs::calm(seed);
    k.workers = 3;
    k.agents.turns_min = 4;
    k.agents.turns_max = 5;
    k.agents.blocks = true;
    k.agents.forget_complete = true;
    k.agents.block_waits = true;
    k.agents.human_pct = 30;
    k
}

#[test]
fn the_backend_alone_decides_from_the_block() {
    let mut totals = [0usize; 3];
    let mut reconciles = 0;
    for seed in [21, 22, 23] {
        let outcome = world::run(&knobs(seed), &[]);
        assert!(outcome.violations.is_empty(), "seed {seed}: {:?}", outcome.violations);
        // `working` with the auto policy resumed every worker to the end.
        assert_eq!(outcome.completed, outcome.workers, "seed {seed}: every worker completed");
        // `blocked` held every continuation until the operator answered.
        assert_eq!(outcome.scheduled_while_blocked, 0, "seed {seed}: a continuation went to a blocked worker");
        for (t, n) in totals.iter_mut().zip(outcome.blocks) {
            *t += n;
        }
        reconciles += outcome.reconciles;
    }
    assert!(totals[0] > 0 && totals[1] > 0 && totals[2] > 0, "every status was exercised: {totals:?}");
    // `complete` without `worker_complete` fabricated nothing: the worker got a
    // completion-reconcile turn, and completed only when its agent called.
    assert!(reconciles > 0, "no completion-reconcile turn happened");
}
