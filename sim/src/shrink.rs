//! The shrinker: reduces a failing run's workload and fault mix to a smaller one that
//! still fails, and writes it as a scenario file that replays it.

use crate::faults::CrashAt;
use crate::knobs::Knobs;
use std::fmt::Write as _;

/// One candidate simplification of a failing configuration.
type Step = fn(&Knobs, &[CrashAt]) -> Option<(Knobs, Vec<CrashAt>)>;

/// The simplifications, tried in order until none applies (each makes the run strictly
/// smaller: fewer workers or turns, fewer fault classes, shorter fault phase).
const STEPS: [Step; 22] = [
    |k, p| (p.len() > 1).then(|| (k.clone(), p[1..].to_vec())),
    |k, p| (p.len() > 1).then(|| (k.clone(), p[..p.len() - 1].to_vec())),
    |k, p| (k.workers > 1).then(|| (Knobs { workers: k.workers - 1, ..k.clone() }, p.to_vec())),
    |k, p| (k.daemon_crash_pct > 0).then(|| (Knobs { daemon_crash_pct: 0, ..k.clone() }, p.to_vec())),
    |k, p| (k.executor_crash_pct > 0).then(|| (Knobs { executor_crash_pct: 0, ..k.clone() }, p.to_vec())),
    |k, p| (k.hold_pct > 0).then(|| (Knobs { hold_pct: 0, ..k.clone() }, p.to_vec())),
    |k, p| (k.partition_pct > 0).then(|| (Knobs { partition_pct: 0, ..k.clone() }, p.to_vec())),
    |k, p| (k.submit_delay_ms > 0).then(|| (Knobs { submit_delay_ms: 0, ..k.clone() }, p.to_vec())),
    |k, p| {
        (k.agents.fail_pct > 0).then(|| {
            let mut k = k.clone();
            k.agents.fail_pct = 0;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.agents.submit_timeout_pct > 0).then(|| {
            let mut k = k.clone();
            k.agents.submit_timeout_pct = 0;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.agents.delivery_timeout_pct > 0).then(|| {
            let mut k = k.clone();
            k.agents.delivery_timeout_pct = 0;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.agents.human_pct > 0).then(|| {
            let mut k = k.clone();
            k.agents.human_pct = 0;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.agents.long_turn_pct > 0).then(|| {
            let mut k = k.clone();
            k.agents.long_turn_pct = 0;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.agents.turns_max > k.agents.turns_min).then(|| {
            let mut k = k.clone();
            k.agents.turns_max -= 1;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.agents.turns_min > 1).then(|| {
            let mut k = k.clone();
            k.agents.turns_min -= 1;
            k.agents.turns_max = k.agents.turns_max.max(k.agents.turns_min);
            (k, p.to_vec())
        })
    },
    |k, p| (k.safety_ms > 10 * 60_000).then(|| (Knobs { safety_ms: k.safety_ms / 2, ..k.clone() }, p.to_vec())),
    |k, p| (k.cli_workers > 0).then(|| (Knobs { cli_workers: k.cli_workers - 1, ..k.clone() }, p.to_vec())),
    |k, p| {
        (k.cli.claude_workers > 0).then(|| {
            let mut k = k.clone();
            k.cli.claude_workers -= 1;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.cli.child_crash_pct > 0).then(|| {
            let mut k = k.clone();
            k.cli.child_crash_pct = 0;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.cli.foreign_pct + k.cli.limit_pct > 0).then(|| {
            let mut k = k.clone();
            (k.cli.foreign_pct, k.cli.limit_pct) = (0, 0);
            (k, p.to_vec())
        })
    },
    |k, p| {
        k.cli.approvals_ask.then(|| {
            let mut k = k.clone();
            k.cli.approvals_ask = false;
            (k, p.to_vec())
        })
    },
    |k, p| {
        (k.cli.torn_pct > 0).then(|| {
            let mut k = k.clone();
            k.cli.torn_pct = 0;
            (k, p.to_vec())
        })
    },
];

/// Greedily applies simplifications while `fails` still holds; returns the smallest
/// failing configuration found and how many runs it took.
pub fn shrink(
    knobs: &Knobs,
    plan: &[CrashAt],
    mut fails: impl FnMut(&Knobs, &[CrashAt]) -> bool,
) -> (Knobs, Vec<CrashAt>, usize) {
    let (mut k, mut p) = (knobs.clone(), plan.to_vec());
    let mut runs = 0;
    loop {
        let mut progressed = false;
        for step in STEPS {
            if let Some((k2, p2)) = step(&k, &p) {
                runs += 1;
                if fails(&k2, &p2) {
                    (k, p) = (k2, p2);
                    progressed = true;
                }
            }
        }
        if !progressed {
            return (k, p, runs);
        }
    }
}

/// A scenario file that replays a configuration (`sim scenario FILE`).
pub fn to_scenario(title: &str, k: &Knobs, plan: &[CrashAt]) -> String {
    let on = |b: bool| if b { "on" } else { "off" };
    let mut s = String::new();
    let _ = writeln!(s, "# {title}");
    let _ = writeln!(s, "seed {}", k.seed);
    let _ = writeln!(s, "workers {}", k.workers);
    let _ = writeln!(s, "turns {} {}", k.agents.turns_min, k.agents.turns_max);
    let _ = writeln!(s, "progress {}", k.agents.progress_pct);
    let _ = writeln!(s, "long-turns {}", k.agents.long_turn_pct);
    let _ = writeln!(s, "delivery-timeouts {}", k.agents.delivery_timeout_pct);
    let _ = writeln!(s, "submit-timeouts {}", k.agents.submit_timeout_pct);
    let _ = writeln!(s, "human {}", k.agents.human_pct);
    let _ = writeln!(s, "blocks {}", on(k.agents.blocks));
    let _ = writeln!(s, "forget-complete {}", on(k.agents.forget_complete));
    let _ = writeln!(s, "block-waits {}", on(k.agents.block_waits));
    let _ = writeln!(s, "steering {}", on(k.steering));
    let _ = writeln!(s, "concurrency {}", k.concurrency);
    let _ = writeln!(s, "auto {}", on(k.auto));
    let _ = writeln!(s, "root {}", on(k.root));
    let _ = writeln!(s, "dependencies {}", k.agents.dependency_pct);
    let _ = writeln!(s, "messages {}", k.agents.message_pct);
    let _ = writeln!(s, "lost-conversations {}", k.agents.lost_pct);
    let _ = writeln!(s, "host-ui-changes {}", k.agents.host_ui_pct);
    let _ = writeln!(s, "fails {}", k.agents.fail_pct);
    let _ = writeln!(s, "daemon-crash {}", k.daemon_crash_pct);
    let _ = writeln!(s, "executor-crash {}", k.executor_crash_pct);
    let _ = writeln!(s, "hold {}", k.hold_pct);
    let _ = writeln!(s, "partition {}", k.partition_pct);
    let _ = writeln!(s, "submit-delay {}s", k.submit_delay_ms / 1_000);
    let _ = writeln!(s, "safety {}m", k.safety_ms / 60_000);
    let c = &k.cli;
    let _ = writeln!(s, "cli-workers {}", k.cli_workers);
    let _ = writeln!(s, "claude-workers {}", c.claude_workers);
    let _ = writeln!(s, "cli-executor {}", on(c.executor));
    let _ = writeln!(s, "cli-child-crashes {}", c.child_crash_pct);
    let _ = writeln!(s, "cli-merge {}", c.merge_pct);
    let _ = writeln!(s, "cli-foreign {}", c.foreign_pct);
    let _ = writeln!(s, "cli-limits {}", c.limit_pct);
    let _ = writeln!(s, "cli-torn {}", c.torn_pct);
    let approvals = if c.approvals_ask { "ask" } else { "never" };
    let _ = writeln!(s, "cli-approvals {approvals} {}", c.ask_pct);
    for c in plan {
        let _ = writeln!(s, "crash {} {}", c.boundary, c.occurrence);
    }
    s
}
