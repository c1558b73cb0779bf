//! Prompts that continue an existing assignment without repeating it: resume, a person's
//! answer, keepalive checkpoint, completion reconciliation and the delivery-timeout turn.
//!
//! The assignment body lives in durable orchestrator state (spec 000 §11), so these texts carry
//! only the worker's identity, the attempt provenance and what to do next.

use super::sections::{
    ENDING_PROTOCOL, OUTPUT_BLOCK_REMINDER, PromptText, RECOVER_STATE, attempt_line, identity_header, join_parts,
    provenance_lines, root_label,
};
use super::{
    ANSWER_VERSION, AttemptBrief, CHECKPOINT_VERSION, COMPLETION_RECONCILE_VERSION, DELIVERY_TIMEOUT_VERSION,
    DEPENDENCY_ENDED_VERSION, Prompt, RESUME_VERSION, WorkerBrief,
};
use crate::model::Lifecycle;

/// The exact fresh turn submitted after a message-delivery timeout (spec 000 §22.3.1).
const DELIVERY_TIMEOUT_TEXT: &str = "continue";

/// Continues an unfinished worker in its own conversation, with durable state as the authority.
pub fn resume(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>) -> Prompt {
    let mut out = PromptText::new();
    out.line(&identity_header(worker));
    out.line(&attempt_line(attempt));
    push_provenance(&mut out, attempt);
    out.line("Continue the current orchestrated worker assignment.");
    out.lines(RECOVER_STATE);
    out.line("Continue until the assignment's acceptance criteria are satisfied.");
    out.lines(ENDING_PROTOCOL).lines(OUTPUT_BLOCK_REMINDER);
    Prompt { version: RESUME_VERSION, text: out.finish() }
}

/// The question a person answered, the choices it offered and the answer, one line each
/// (no choices line without choices): what [`answer`] carries, built when the answer
/// arrives and kept with the continuation so every rendering is the same.
pub fn answered(question: &str, choices: &[&str], answer: &str) -> String {
    let mut out = PromptText::new();
    out.line(&format!("Question: {question}"));
    if !choices.is_empty() {
        out.line(&format!("Choices offered: {}", choices.join(" | ")));
    }
    out.line(&format!("Answer: {answer}"));
    out.finish()
}

/// Resumes a worker a person just answered, with the question, its choices and the answer
/// (`answered`), so the worker goes on without asking the orchestrator what was said.
pub fn answer(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>, answered: &str) -> Prompt {
    let mut out = PromptText::new();
    out.line(&identity_header(worker));
    out.line(&attempt_line(attempt));
    push_provenance(&mut out, attempt);
    out.line("A person answered the question this worker asked:");
    out.line(answered);
    out.line("Continue the current orchestrated worker assignment with this answer.");
    out.lines(RECOVER_STATE);
    out.line("Continue until the assignment's acceptance criteria are satisfied.");
    out.lines(ENDING_PROTOCOL).lines(OUTPUT_BLOCK_REMINDER);
    Prompt { version: ANSWER_VERSION, text: out.finish() }
}

/// Which worker ended, how, and its reason, one line each: what [`dependency_ended`]
/// carries, built when the waited-for worker ends and kept with the continuation.
pub fn dependency_ended_note(name: &str, display_name: &str, outcome: Lifecycle, reason: Option<&str>) -> String {
    let how = match outcome {
        Lifecycle::Failed => "failed",
        Lifecycle::Cancelled => "was stopped",
        Lifecycle::Completed => "completed",
        Lifecycle::Active => "is unfinished",
    };
    let who = if display_name.is_empty() { name.to_string() } else { format!("{name} ({display_name})") };
    let mut out = PromptText::new();
    out.line(&format!("The worker this worker waited for, {who}, {how}; it will not complete."));
    if let Some(reason) = reason.filter(|r| !r.is_empty()) {
        out.line(&format!("Its reason: {reason}"));
    }
    out.finish()
}

/// Resumes a worker whose dependency failed or was stopped (`dependency_ended_note`): the
/// wait is over, and the worker decides what now (do the part itself, reassign it, report
/// blocked on a person) without asking the orchestrator what happened.
pub fn dependency_ended(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>, note: &str) -> Prompt {
    let mut out = PromptText::new();
    out.line(&identity_header(worker));
    out.line(&attempt_line(attempt));
    push_provenance(&mut out, attempt);
    out.line(note);
    out.line("The wait is over. Decide how the assignment goes on without that worker's result.");
    out.lines(RECOVER_STATE);
    out.line("Continue until the assignment's acceptance criteria are satisfied.");
    out.lines(ENDING_PROTOCOL).lines(OUTPUT_BLOCK_REMINDER);
    Prompt { version: DEPENDENCY_ENDED_VERSION, text: out.finish() }
}

/// Keepalive checkpoint (spec 000 §10.3): report durably to root now, then keep working.
pub fn checkpoint(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>) -> Prompt {
    let mut out = PromptText::new();
    out.line(&checkpoint_header(worker));
    out.line(&attempt_line(attempt));
    push_provenance(&mut out, attempt);
    out.lines(CHECKPOINT_BODY);
    Prompt { version: CHECKPOINT_VERSION, text: out.finish() }
}

/// The fresh `continue` turn after a delivery timeout; nothing else is sent.
pub fn delivery_timeout() -> Prompt {
    Prompt { version: DELIVERY_TIMEOUT_VERSION, text: DELIVERY_TIMEOUT_TEXT.to_string() }
}

/// Sent when a block said `status: complete` but no `worker_complete` was recorded.
pub fn completion_reconcile(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>) -> Prompt {
    let mut out = PromptText::new();
    out.line(&identity_header(worker));
    out.line(&attempt_line(attempt));
    out.lines(RECONCILE_BODY);
    out.lines(ENDING_PROTOCOL).lines(OUTPUT_BLOCK_REMINDER);
    Prompt { version: COMPLETION_RECONCILE_VERSION, text: out.finish() }
}

/// `Orchestrator checkpoint · <display name> · <worker> · root: <root conversation>`.
fn checkpoint_header(worker: &WorkerBrief<'_>) -> String {
    let identity = identity_header(worker);
    let root = root_label(worker);
    join_parts(&["Orchestrator checkpoint", &identity, &root])
}

fn push_provenance(out: &mut PromptText, attempt: &AttemptBrief<'_>) {
    for line in provenance_lines(attempt) {
        out.line(&line);
    }
}

/// The checkpoint request of spec 000 §10.3, with the report fields of §15.5.
const CHECKPOINT_BODY: &[&str] = &[
    "Send the root conversation a durable update about this assignment now, through \
     worker_progress and message_send to /root. Include:",
    "- commit: latest checkpoint commit SHA(s), if any;",
    "- completed: what has been completed since the previous report;",
    "- current: what you are working on now;",
    "- remaining: what remains before the full assignment is complete;",
    "- blockers: blockers, risks, dependency changes or cross-lane contract changes.",
    "Then continue working on the same assignment to completion. Do not stop because you sent \
     the update. If fully complete, call worker_complete with the terminal handoff. If genuinely \
     blocked, report the blocker and call worker_await_human or worker_await_dependency.",
];

/// Completion reconciliation: the block is a signal, `worker_complete` is the authority.
const RECONCILE_BODY: &[&str] = &[
    "Your last response ended with status complete, but the orchestrator has no worker_complete \
     for this worker. The block alone does not complete a worker.",
    "If every acceptance criterion of the assignment is really met, call worker_complete now \
     with your handoff. Otherwise continue working on the assignment.",
];

#[cfg(test)]
mod tests {
    use super::super::fixtures::{OBJECTIVE, SCOPE, attempt, criteria, lane, root};
    use super::*;

    /// Upper bound for a resume text with realistic names (the brief asks for well under 1,500 bytes).
    const RESUME_TEXT_BYTES_BUDGET: usize = 1_200;

    #[test]
    fn resume_omits_the_assignment_body() {
        let c = criteria();
        let text = resume(&lane(&c), &attempt("auto_resume")).text;
        assert!(!text.contains(OBJECTIVE));
        assert!(!text.contains(SCOPE));
        assert!(c.iter().all(|criterion| !text.contains(criterion.as_str())));
    }

    #[test]
    fn resume_starts_with_identity() {
        let c = criteria();
        let worker = lane(&c);
        let text = resume(&worker, &attempt("auto_resume")).text;
        let first = text.lines().next().unwrap_or_default();
        assert!(first.contains(worker.display_name));
        assert!(first.contains(worker.worker_name));
    }

    #[test]
    fn resume_carries_attempt_provenance() {
        let c = criteria();
        let text = resume(&lane(&c), &attempt("auto_resume")).text;
        for clause in ["Attempt 7", "auto_resume", "exe-17", "idle", "event:worker.progress", "42"] {
            assert!(text.contains(clause), "{clause}");
        }
    }

    #[test]
    fn resume_makes_durable_state_authoritative() {
        let c = criteria();
        let text = resume(&lane(&c), &attempt("auto_resume")).text;
        for clause in [
            "authoritative",
            "before acting",
            "Do not redo completed work",
            "acceptance criteria",
            "worker_complete",
            "worker_fail",
            "worker_await_human",
            "worker_await_dependency",
            "continuation-state block",
        ] {
            assert!(text.contains(clause), "{clause}");
        }
    }

    #[test]
    fn resume_is_concise() {
        let c = criteria();
        for worker in [lane(&c), root(&c)] {
            let text = resume(&worker, &attempt("manual_resume")).text;
            assert!(text.len() < RESUME_TEXT_BYTES_BUDGET, "{} bytes", text.len());
        }
    }

    #[test]
    fn checkpoint_requests_report_to_root_then_work_on() {
        let c = criteria();
        let text = checkpoint(&lane(&c), &attempt("checkpoint")).text;
        for clause in [
            "/root",
            "worker_progress",
            "message_send",
            "continue working",
            "Do not stop",
            "worker_complete",
            "commit",
            "completed",
            "remaining",
            "blockers",
        ] {
            assert!(text.contains(clause), "{clause}");
        }
        assert!(!text.contains(OBJECTIVE));
    }

    #[test]
    fn checkpoint_header_names_worker_and_root_conversation() {
        let c = criteria();
        let text = checkpoint(&lane(&c), &attempt("checkpoint")).text;
        let first = text.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            "Orchestrator checkpoint · Execution continuity Lane A · /root/backend · root: Orchestrator root"
        );
        assert!(text.contains("42"));
    }

    #[test]
    fn checkpoint_header_without_root_name() {
        let c = criteria();
        let worker = WorkerBrief { root_conversation_name: "", ..lane(&c) };
        let text = checkpoint(&worker, &attempt("checkpoint")).text;
        let first = text.lines().next().unwrap_or_default();
        assert_eq!(first, "Orchestrator checkpoint · Execution continuity Lane A · /root/backend");
    }

    #[test]
    fn answer_carries_question_choices_and_answer() {
        let c = criteria();
        let carried = answered("Which database?", &["sqlite", "postgres"], "postgres, on port 5433");
        assert_eq!(
            carried,
            "Question: Which database?\nChoices offered: sqlite | postgres\nAnswer: postgres, on port 5433"
        );
        let p = answer(&lane(&c), &attempt("manual_resume"), &carried);
        assert_eq!(p.version, "answer/v1");
        assert!(p.text.contains(&carried), "{}", p.text);
        for clause in ["A person answered", "worker_complete", "worker_await_human", "continuation-state block"] {
            assert!(p.text.contains(clause), "{clause}");
        }
        assert!(!p.text.contains(OBJECTIVE));
        assert_eq!(answered("Go?", &[], "yes"), "Question: Go?\nAnswer: yes");
    }

    #[test]
    fn delivery_timeout_is_exactly_continue() {
        let p = delivery_timeout();
        assert_eq!(p.text, "continue");
        assert_eq!(p.version, "delivery-timeout/v1");
    }

    #[test]
    fn completion_reconcile_demands_worker_complete_or_more_work() {
        let c = criteria();
        let text = completion_reconcile(&lane(&c), &attempt("corrective")).text;
        for clause in ["worker_complete", "acceptance criterion", "does not complete", "continue working"] {
            assert!(text.contains(clause), "{clause}");
        }
    }
}
