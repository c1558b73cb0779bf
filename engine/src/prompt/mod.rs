//! Versioned prompt generators: the exact text the orchestrator submits into a worker's ChatGPT conversation.
//!
//! Every generator is a pure function of borrowed briefs and returns a [`Prompt`] tagged with a
//! version string, so the durable attempt record can say which contract a turn was sent under.
//! The texts tell the agent what to do and how to end a turn (spec 000 §8.4, §10.3, §10.4, §11);
//! they never mention browser mechanics such as Retry, sending `continue` or auto-resume
//! scheduling (spec 001 C18.4). The one exception is [`delivery_timeout`], whose whole text is
//! the fresh `continue` turn of spec 000 §22.3.1.

mod assignment;
mod continuation;
mod corrective;
mod sections;

pub use assignment::{bootstrap, followup, recovery, root_bootstrap};
pub use continuation::{
    answer, answered, checkpoint, completion_reconcile, delivery_timeout, dependency_ended, dependency_ended_note,
    resume,
};
pub use corrective::{STEERING_OUTCOMES, corrective, outcome_meaning};

/// Version of the first message of a new lane worker (v2: `blocked` is for a person only;
/// waiting for another worker is a dependency wait and `working`).
pub const BOOTSTRAP_VERSION: &str = "bootstrap/v2";
/// Version of the first message of the coordinating `/root` worker (v2: as bootstrap/v2).
pub const ROOT_BOOTSTRAP_VERSION: &str = "root-bootstrap/v2";
/// Version of the ordinary continuation of an unfinished worker.
pub const RESUME_VERSION: &str = "resume/v1";
/// Version of the keepalive checkpoint that asks for a durable report to root.
pub const CHECKPOINT_VERSION: &str = "checkpoint/v1";
/// Version of the fresh turn sent after a message-delivery timeout.
pub const DELIVERY_TIMEOUT_VERSION: &str = "delivery-timeout/v1";
/// Version of root steering delivered to a lane.
pub const CORRECTIVE_VERSION: &str = "corrective/v1";
/// Version of a new or replaced assignment for an existing worker (v2: as bootstrap/v2).
pub const FOLLOWUP_VERSION: &str = "followup/v2";
/// Version of the first message in a fresh conversation that replaces a lost one (v2: as
/// bootstrap/v2).
pub const RECOVERY_VERSION: &str = "recovery/v2";
/// Version of the nudge sent when a block said `complete` but no `worker_complete` arrived.
pub const COMPLETION_RECONCILE_VERSION: &str = "completion-reconcile/v1";
/// Version of the continuation that carries a person's answer to the worker's question.
pub const ANSWER_VERSION: &str = "answer/v1";
/// Version of the continuation that says a worker this one waited for failed or was stopped.
pub const DEPENDENCY_ENDED_VERSION: &str = "dependency-ended/v1";

/// Hierarchical name of the coordinating worker; prompts for it carry root duties.
pub const ROOT_WORKER_NAME: &str = "/root";

/// The durable identity and assignment of one logical worker, as the prompts need it.
#[derive(Clone, Copy, Debug)]
pub struct WorkerBrief<'a> {
    /// The run's concise main task name, e.g. "Execution continuity".
    pub task_name: &'a str,
    /// Owner-readable name of the root conversation.
    pub root_conversation_name: &'a str,
    /// Hierarchical worker name, e.g. "/root/backend".
    pub worker_name: &'a str,
    /// Owner-readable worker name, e.g. "Execution continuity Lane A".
    pub display_name: &'a str,
    /// "<task name> Lane A", or "Root" for `/root`.
    pub lane_label: &'a str,
    /// One-line summary of the worker's task.
    pub task_summary: &'a str,
    /// What the worker must achieve.
    pub objective: &'a str,
    /// What the worker owns and may change.
    pub scope: &'a str,
    /// Conditions that together mean the assignment is done.
    pub acceptance_criteria: &'a [String],
    /// Optional worktree or branch label (provenance).
    pub worktree: Option<&'a str>,
}

/// The execution attempt a prompt is submitted for, printed so the turn is recognisable.
#[derive(Clone, Copy, Debug)]
pub struct AttemptBrief<'a> {
    /// Per-worker execution attempt number, 1-based.
    pub sequence: u32,
    /// Why the attempt exists: "initial", "auto_resume", "manual_resume", "followup",
    /// "recovery", "checkpoint" or "corrective".
    pub reason: &'a str,
    /// Short reference such as "exe-17".
    pub execution_ref: &'a str,
    /// Coalesced wake provenance, e.g. ["idle", "event:worker.progress", "active_keepalive"].
    pub wake_reasons: &'a [&'a str],
    /// Latest durable progress cursor the orchestrator has seen from this worker.
    pub last_progress_cursor: Option<u64>,
}

/// A generated prompt and the version of the contract it was written under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    /// One of the `*_VERSION` constants of this module.
    pub version: &'static str,
    /// The exact text to submit.
    pub text: String,
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::{AttemptBrief, WorkerBrief};

    pub(crate) const OBJECTIVE: &str = "Implement the durable keepalive scheduler with jitter.";
    pub(crate) const SCOPE: &str = "engine/src/scheduler only.";

    pub(crate) fn criteria() -> Vec<String> {
        vec![
            "Keepalive deadlines survive restart.".to_string(),
            "Anti-spam floor holds for non-idle wakes.".to_string(),
        ]
    }

    pub(crate) fn lane(criteria: &[String]) -> WorkerBrief<'_> {
        WorkerBrief {
            task_name: "Execution continuity",
            root_conversation_name: "Orchestrator root",
            worker_name: "/root/backend",
            display_name: "Execution continuity Lane A",
            lane_label: "Execution continuity Lane A",
            task_summary: "Build the scheduler",
            objective: OBJECTIVE,
            scope: SCOPE,
            acceptance_criteria: criteria,
            worktree: Some("impl/continuity-a"),
        }
    }

    pub(crate) fn root(criteria: &[String]) -> WorkerBrief<'_> {
        WorkerBrief {
            worker_name: "/root",
            display_name: "Execution continuity Root",
            lane_label: "Root",
            task_summary: "Coordinate lanes A-C to a landed feature",
            worktree: None,
            ..lane(criteria)
        }
    }

    pub(crate) const WAKES: &[&str] = &["idle", "event:worker.progress"];

    pub(crate) fn attempt(reason: &str) -> AttemptBrief<'_> {
        AttemptBrief {
            sequence: 7,
            reason,
            execution_ref: "exe-17",
            wake_reasons: WAKES,
            last_progress_cursor: Some(42),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{attempt, criteria, lane, root};
    use super::*;

    fn all_prompts(worker: &WorkerBrief<'_>) -> Vec<Prompt> {
        let a = attempt("auto_resume");
        vec![
            bootstrap(worker, &a),
            root_bootstrap(worker, &a),
            resume(worker, &a),
            checkpoint(worker, &a),
            delivery_timeout(),
            corrective(worker, &a, "correct_direction", "Stay inside scope."),
            followup(worker, &a, "Also add metrics."),
            recovery(worker, &a),
            completion_reconcile(worker, &a),
            answer(worker, &a, &answered("Which database?", &["sqlite", "postgres"], "postgres")),
            dependency_ended(
                worker,
                &a,
                &dependency_ended_note("/root/db", "Schema", crate::model::Lifecycle::Cancelled, Some("not needed")),
            ),
        ]
    }

    #[test]
    fn versions_are_distinct_and_non_empty() {
        let c = criteria();
        let prompts = all_prompts(&lane(&c));
        let mut versions: Vec<&str> = prompts.iter().map(|p| p.version).collect();
        assert!(versions.iter().all(|v| !v.is_empty()));
        versions.sort_unstable();
        versions.dedup();
        assert_eq!(versions.len(), prompts.len());
    }

    #[test]
    fn every_text_is_non_empty() {
        let c = criteria();
        assert!(all_prompts(&lane(&c)).iter().all(|p| !p.text.is_empty()));
    }

    #[test]
    fn no_prompt_mentions_retry() {
        let c = criteria();
        for worker in [lane(&c), root(&c)] {
            for p in all_prompts(&worker) {
                assert!(!p.text.to_lowercase().contains("retry"), "{}", p.version);
            }
        }
    }

    #[test]
    fn no_prompt_except_delivery_timeout_is_bare_continue() {
        let c = criteria();
        for p in all_prompts(&lane(&c)) {
            if p.version != DELIVERY_TIMEOUT_VERSION {
                assert_ne!(p.text.trim(), "continue", "{}", p.version);
            }
        }
    }

    #[test]
    fn prompts_are_deterministic() {
        let c = criteria();
        assert_eq!(all_prompts(&lane(&c)), all_prompts(&lane(&c)));
        assert_eq!(all_prompts(&root(&c)), all_prompts(&root(&c)));
    }

    #[test]
    fn empty_inputs_do_not_panic() {
        let worker = WorkerBrief {
            task_name: "",
            root_conversation_name: "",
            worker_name: "",
            display_name: "",
            lane_label: "",
            task_summary: "",
            objective: "",
            scope: "",
            acceptance_criteria: &[],
            worktree: None,
        };
        let a =
            AttemptBrief { sequence: 0, reason: "", execution_ref: "", wake_reasons: &[], last_progress_cursor: None };
        for p in [
            bootstrap(&worker, &a),
            root_bootstrap(&worker, &a),
            resume(&worker, &a),
            checkpoint(&worker, &a),
            corrective(&worker, &a, "", ""),
            followup(&worker, &a, ""),
            recovery(&worker, &a),
            completion_reconcile(&worker, &a),
            answer(&worker, &a, ""),
        ] {
            assert!(!p.text.is_empty(), "{}", p.version);
        }
    }

    #[test]
    fn non_ascii_inputs_pass_through_verbatim() {
        let c = vec!["Ünïcödé criterion ✓".to_string()];
        let worker = WorkerBrief { task_summary: "Résumé 🚀", ..lane(&c) };
        let p = bootstrap(&worker, &attempt("initial"));
        assert!(p.text.lines().next().unwrap().contains("Résumé 🚀"));
        assert!(p.text.contains("Ünïcödé criterion ✓"));
    }
}
