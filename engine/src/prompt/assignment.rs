//! Prompts that carry the full assignment: bootstrap, root bootstrap, follow-up and recovery.
//!
//! Each starts with the owner-readable header line (spec 003 decision 3), states the objective,
//! scope and acceptance criteria, then the reporting duties, the ending protocol and the
//! continuation-state block.

use super::sections::{
    ENDING_PROTOCOL, LANE_REPORTING, OUTPUT_BLOCK, PromptText, RECOVER_STATE, ROOT_DUTIES, ROOT_RECOVERY, WAITS,
    is_root, owner_header, push_assignment, worker_line,
};
use super::{
    AttemptBrief, BOOTSTRAP_VERSION, FOLLOWUP_VERSION, Prompt, RECOVERY_VERSION, ROOT_BOOTSTRAP_VERSION, WorkerBrief,
};

/// The first message of a new lane worker: identity, full assignment and the ending contract.
pub fn bootstrap(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>) -> Prompt {
    let mut out = PromptText::new();
    out.line(&owner_header(worker));
    out.line("You are an orchestrated worker. Your assignment:");
    push_assignment(&mut out, worker);
    out.line(&worker_line(worker, attempt));
    push_contract(&mut out, worker);
    Prompt { version: BOOTSTRAP_VERSION, text: out.finish() }
}

/// The first message of `/root`: the run assignment plus the coordination duties.
pub fn root_bootstrap(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>) -> Prompt {
    let mut out = PromptText::new();
    out.line(&owner_header(worker));
    out.line("You are the root coordinator of this orchestrated run. The run assignment:");
    push_assignment(&mut out, worker);
    out.line(&worker_line(worker, attempt));
    out.lines(ROOT_DUTIES);
    out.lines(ENDING_PROTOCOL).lines(WAITS).lines(OUTPUT_BLOCK);
    Prompt { version: ROOT_BOOTSTRAP_VERSION, text: out.finish() }
}

/// A new or replaced assignment for an existing worker, with the new instructions first.
pub fn followup(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>, instructions: &str) -> Prompt {
    let mut out = PromptText::new();
    out.line(&owner_header(worker));
    out.line("New instructions from the orchestrator for this worker:");
    out.line(instructions);
    out.line("The current assignment:");
    push_assignment(&mut out, worker);
    out.line(&worker_line(worker, attempt));
    push_contract(&mut out, worker);
    Prompt { version: FOLLOWUP_VERSION, text: out.finish() }
}

/// The first message in a fresh conversation that replaces a missing or closed one.
pub fn recovery(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>) -> Prompt {
    let mut out = PromptText::new();
    out.line(&owner_header(worker));
    out.line(
        "This is a fresh conversation for the same logical worker: the previous conversation is \
         missing or closed, and none of its history is here. Your assignment:",
    );
    push_assignment(&mut out, worker);
    out.line(&worker_line(worker, attempt));
    out.lines(RECOVER_STATE);
    if is_root(worker) {
        out.lines(ROOT_RECOVERY);
    }
    push_contract(&mut out, worker);
    Prompt { version: RECOVERY_VERSION, text: out.finish() }
}

/// Reporting duties (lane or root), the ending protocol, the two waits and the output block.
fn push_contract(out: &mut PromptText, worker: &WorkerBrief<'_>) {
    if is_root(worker) {
        out.lines(ROOT_DUTIES);
    } else {
        out.lines(LANE_REPORTING);
    }
    out.lines(ENDING_PROTOCOL).lines(WAITS).lines(OUTPUT_BLOCK);
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{OBJECTIVE, SCOPE, attempt, criteria, lane, root};
    use super::*;

    const ENDING_TOOLS: [&str; 4] = ["worker_complete", "worker_fail", "worker_await_human", "worker_await_dependency"];
    const BLOCK_FIELDS: [&str; 4] = ["status:", "summary:", "current:", "next:"];

    fn first_line(prompt: &Prompt) -> &str {
        prompt.text.lines().next().unwrap_or_default()
    }

    fn assert_full_contract(prompt: &Prompt, worker: &WorkerBrief<'_>) {
        let text = &prompt.text;
        assert!(text.contains(OBJECTIVE), "{}", prompt.version);
        assert!(text.contains(SCOPE), "{}", prompt.version);
        for criterion in worker.acceptance_criteria {
            assert!(text.contains(&format!("- {criterion}")), "{criterion}");
        }
        assert!(text.contains(worker.worker_name));
        for tool in ENDING_TOOLS.iter().chain(&BLOCK_FIELDS) {
            assert!(text.contains(tool), "{} lacks {tool}", prompt.version);
        }
        assert!(text.contains("do not claim completion"));
        assert!(text.contains("Waiting for another worker is not blocked"), "{}", prompt.version);
        assert!(text.contains("Only a person can unblock status: blocked"), "{}", prompt.version);
    }

    fn assert_owner_first_line(prompt: &Prompt, worker: &WorkerBrief<'_>) {
        let line = first_line(prompt);
        assert!(line.contains(worker.task_name), "{line}");
        assert!(line.contains(worker.root_conversation_name), "{line}");
        assert!(line.contains(worker.task_summary), "{line}");
    }

    #[test]
    fn bootstrap_first_line_is_owner_readable() {
        let c = criteria();
        let worker = lane(&c);
        let p = bootstrap(&worker, &attempt("initial"));
        assert_owner_first_line(&p, &worker);
        assert!(first_line(&p).contains(worker.lane_label));
    }

    #[test]
    fn bootstrap_carries_assignment_and_ending_protocol() {
        let c = criteria();
        let worker = lane(&c);
        assert_full_contract(&bootstrap(&worker, &attempt("initial")), &worker);
    }

    #[test]
    fn bootstrap_asks_for_durable_reports_to_root() {
        let c = criteria();
        let text = bootstrap(&lane(&c), &attempt("initial")).text;
        for clause in ["worker_progress", "message_send", "/root", "commit", "blockers"] {
            assert!(text.contains(clause), "{clause}");
        }
    }

    #[test]
    fn bootstrap_prints_attempt_and_worktree() {
        let c = criteria();
        let text = bootstrap(&lane(&c), &attempt("initial")).text;
        assert!(text.contains("exe-17"));
        assert!(text.contains("impl/continuity-a"));
    }

    #[test]
    fn bootstrap_has_no_browser_or_scheduling_policy() {
        let c = criteria();
        let text = bootstrap(&lane(&c), &attempt("initial")).text.to_lowercase();
        for banned in ["retry", "send continue", "`continue`", "browser", "auto-resume", "auto resume"] {
            assert!(!text.contains(banned), "{banned}");
        }
    }

    #[test]
    fn bootstrap_with_no_criteria_says_so() {
        let worker = lane(&[]);
        let text = bootstrap(&worker, &attempt("initial")).text;
        assert!(text.contains("Acceptance criteria: none recorded"));
    }

    #[test]
    fn root_bootstrap_carries_coordination_duties() {
        let c = criteria();
        let worker = root(&c);
        let p = root_bootstrap(&worker, &attempt("initial"));
        assert_owner_first_line(&p, &worker);
        assert_full_contract(&p, &worker);
        for duty in ["events_wait", "worker_steer", "entire run objective", "terminal_reconcile"] {
            assert!(p.text.contains(duty), "{duty}");
        }
    }

    #[test]
    fn root_bootstrap_teaches_spawning_answering_all_seven_outcomes_and_completing() {
        let c = criteria();
        let text = root_bootstrap(&root(&c), &attempt("initial")).text;
        let spawn = "start each with worker_spawn, giving it an objective, a scope";
        let answer = "answer worker messages and questions (message_send";
        for duty in ["run_get", spawn, "acceptance criteria", answer, "worker_resolve_human", "refused while a lane"] {
            assert!(text.contains(duty), "{duty}");
        }
        for outcome in crate::model::SteeringOutcome::ALL {
            assert!(text.contains(outcome.as_str()), "{}", outcome.as_str());
        }
    }

    #[test]
    fn followup_has_header_instructions_and_assignment() {
        let c = criteria();
        let worker = lane(&c);
        let p = followup(&worker, &attempt("followup"), "Switch to the jitter floor first.");
        assert_owner_first_line(&p, &worker);
        assert!(p.text.contains("Switch to the jitter floor first."));
        assert_full_contract(&p, &worker);
    }

    #[test]
    fn recovery_says_fresh_conversation_and_recovers_state() {
        let c = criteria();
        let worker = lane(&c);
        let p = recovery(&worker, &attempt("recovery"));
        assert_owner_first_line(&p, &worker);
        assert_full_contract(&p, &worker);
        for clause in ["fresh conversation", "worker_get", "Do not redo completed work"] {
            assert!(p.text.contains(clause), "{clause}");
        }
        assert!(!p.text.contains("consume lane handoffs"));
    }

    #[test]
    fn root_recovery_resumes_convergence() {
        let c = criteria();
        let worker = root(&c);
        let p = recovery(&worker, &attempt("recovery"));
        assert_full_contract(&p, &worker);
        for clause in ["worker list", "branches", "handoffs", "blockers", "convergence", "events_wait"] {
            assert!(p.text.contains(clause), "{clause}");
        }
    }
}
