//! The executor-kind checks: the simulated browser is a `chatgpt` executor, so nothing of
//! a CLI (`codex`, `claude`) worker may ever reach it: no command, no binding, no
//! delivery. Without a CLI executor its CLI workers wait, unbound and unsent, for an
//! executor of their kind that never comes; with one (`cli-1`) they are bound to it only.

use engine::Engine;
use engine::ids::WorkerId;
use std::collections::BTreeSet;

/// What the CLI workers of a run came to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CliFacts {
    /// CLI workers still waiting for an executor of their kind (active, nothing submitted).
    pub waiting: usize,
    /// What broke.
    pub violations: Vec<String>,
}

/// The CLI executor's id in the simulator.
pub const CLI_EXECUTOR: &str = "cli-1";

/// Checks the CLI workers the operator spawned (`cli`) against the workers whose commands
/// the browser received (`browser_commands`) and the engine's final state; `served`: a
/// CLI executor runs them.
pub fn cli_workers_untouched(
    engine: &Engine,
    cli: &BTreeSet<WorkerId>,
    browser_commands: &BTreeSet<WorkerId>,
    served: bool,
) -> CliFacts {
    let mut facts = CliFacts::default();
    for id in cli {
        if browser_commands.contains(id) {
            facts.violations.push(format!("the browser received a command of CLI worker {id}"));
        }
        let Some(w) = engine.worker(*id) else {
            facts.violations.push(format!("CLI worker {id} is gone"));
            continue;
        };
        if !w.spec.executor.is_cli() {
            facts.violations.push(format!("{id} was spawned as a CLI worker but is {}", w.spec.executor));
        }
        if let Some(e) =
            w.binding.as_ref().and_then(|b| b.executor.as_ref()).filter(|e| !served || &*e.0 != CLI_EXECUTOR)
        {
            facts.violations.push(format!("CLI worker {id} is bound to executor {e}"));
        }
        let submitted = engine.attempts().any(|a| a.worker == *id && a.submitted_at.is_some());
        if submitted && !served {
            facts.violations.push(format!("an attempt of CLI worker {id} was submitted with no CLI executor"));
        }
        if !served && !w.lifecycle.is_terminal() && !submitted {
            facts.waiting += 1;
        }
    }
    facts
}
