//! Scenario files' failover lines (two daemons on one store): `standby on|off`,
//! `at TIME kill|pause leader DURATION`, `at TIME partition leader store DURATION`,
//! `expect lease-takes >= K`, `expect step-downs >= K` and `expect silent-leaves >= K`.

use super::{Expectation, duration_ms};
use crate::faults::{LeaderFault, LeaderFaultKind, Reaction};
use crate::knobs::Knobs;

/// Parses a failover line into the knobs or an expectation: `None` when the line is not
/// one, else what it gave or what is wrong with it.
pub(super) fn parse(w: &[&str], knobs: &mut Knobs) -> Option<Result<Option<Expectation>, &'static str>> {
    match w {
        ["standby", flag] => Some(match *flag {
            "on" | "off" => {
                knobs.standby = *flag == "on";
                Ok(None)
            }
            _ => Err("expected on or off"),
        }),
        ["at", at, kind, "leader", rest @ ..] => {
            let (kind, length) = match (*kind, rest) {
                ("kill", [length]) => (LeaderFaultKind::Kill, length),
                ("pause", [length]) => (LeaderFaultKind::Pause, length),
                ("partition", ["store", length]) => (LeaderFaultKind::StoreCut, length),
                _ => return Some(Err("expected kill|pause leader DURATION or partition leader store DURATION")),
            };
            let (Some(at_ms), Some(length_ms)) = (duration_ms(at), duration_ms(length)) else {
                return Some(Err("expected a time and a duration"));
            };
            knobs.leader_faults.push(LeaderFault { at_ms, kind, length_ms });
            Some(Ok(None))
        }
        ["expect", what @ ("lease-takes" | "step-downs" | "silent-leaves"), ">=", n] => {
            Some(match n.parse::<usize>() {
                Ok(n) if *what == "lease-takes" => Ok(Some(Expectation::LeaseTakesAtLeast(n))),
                Ok(n) if *what == "silent-leaves" => Ok(Some(Expectation::SilentLeavesAtLeast(n))),
                Ok(n) => Ok(Some(Expectation::StepDownsAtLeast(n))),
                Err(_) => Err("expected a number"),
            })
        }
        _ => None,
    }
}

/// A leader fault, or a `leader-down` reaction, needs a standby to take over.
pub(super) fn check(knobs: &Knobs) -> Result<(), &'static str> {
    let leader_down = knobs.triggers.iter().any(|t| matches!(t.reaction, Reaction::LeaderDown(_)));
    if !knobs.standby && (leader_down || !knobs.leader_faults.is_empty()) {
        return Err("a leader fault needs `standby on` (a second daemon to take over)");
    }
    Ok(())
}
