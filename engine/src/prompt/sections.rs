//! Shared clauses of the prompt texts: headers, the assignment body and the ending contract.
//!
//! Each clause is written once here so every prompt states the same contract in the same words.

use super::{AttemptBrief, ROOT_WORKER_NAME, WorkerBrief};

/// Separator between the parts of a one-line header.
const HEADER_SEPARATOR: &str = " · ";

/// Line-oriented text builder: prompts are a list of lines joined by `\n`, with no trailing newline.
pub(super) struct PromptText {
    text: String,
}

impl PromptText {
    pub(super) fn new() -> Self {
        PromptText { text: String::new() }
    }

    /// Appends one line (which may itself contain newlines from caller input).
    pub(super) fn line(&mut self, line: &str) -> &mut Self {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self
    }

    /// Appends every line of a clause.
    pub(super) fn lines(&mut self, lines: &[&str]) -> &mut Self {
        for line in lines {
            self.line(line);
        }
        self
    }

    pub(super) fn finish(&mut self) -> String {
        std::mem::take(&mut self.text)
    }
}

/// Joins the non-empty parts with the header separator.
pub(super) fn join_parts(parts: &[&str]) -> String {
    let kept: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    kept.join(HEADER_SEPARATOR)
}

/// Task and lane in one phrase; the lane label usually already names the task.
fn task_and_lane(worker: &WorkerBrief<'_>) -> String {
    if worker.task_name.is_empty() || worker.lane_label.contains(worker.task_name) {
        join_parts(&[worker.lane_label])
    } else {
        join_parts(&[worker.task_name, worker.lane_label])
    }
}

/// Owner-readable first line (spec 003 decision 3): task/lane, root conversation, task summary.
pub(super) fn owner_header(worker: &WorkerBrief<'_>) -> String {
    let lane = task_and_lane(worker);
    let root = root_label(worker);
    join_parts(&[&lane, &root, worker.task_summary])
}

/// `root: <name>`, or nothing when the root conversation has no name yet.
pub(super) fn root_label(worker: &WorkerBrief<'_>) -> String {
    if worker.root_conversation_name.is_empty() {
        String::new()
    } else {
        format!("root: {}", worker.root_conversation_name)
    }
}

/// Short identifying header for continuation prompts: display name and worker name only.
pub(super) fn identity_header(worker: &WorkerBrief<'_>) -> String {
    join_parts(&[worker.display_name, worker.worker_name])
}

/// `Attempt 7 · auto_resume · exe-17`, so the submitted turn is recognisable.
pub(super) fn attempt_line(attempt: &AttemptBrief<'_>) -> String {
    let sequence = format!("Attempt {}", attempt.sequence);
    join_parts(&[&sequence, attempt.reason, attempt.execution_ref])
}

/// Wake provenance and the last progress cursor, one line each, only when known.
pub(super) fn provenance_lines(attempt: &AttemptBrief<'_>) -> Vec<String> {
    let mut lines = Vec::new();
    if !attempt.wake_reasons.is_empty() {
        lines.push(format!("Wake reasons: {}", attempt.wake_reasons.join(", ")));
    }
    if let Some(cursor) = attempt.last_progress_cursor {
        lines.push(format!("Last progress cursor seen by the orchestrator: {cursor}"));
    }
    lines
}

/// Whether the worker is the coordinating `/root`.
pub(super) fn is_root(worker: &WorkerBrief<'_>) -> bool {
    worker.worker_name == ROOT_WORKER_NAME
}

/// Objective, scope, bulleted acceptance criteria and optional worktree.
pub(super) fn push_assignment(out: &mut PromptText, worker: &WorkerBrief<'_>) {
    out.line(&format!("Objective: {}", worker.objective));
    out.line(&format!("Scope: {}", worker.scope));
    if worker.acceptance_criteria.is_empty() {
        out.line("Acceptance criteria: none recorded; the objective defines done.");
    } else {
        out.line("Acceptance criteria:");
        for criterion in worker.acceptance_criteria {
            out.line(&format!("- {criterion}"));
        }
    }
    if let Some(worktree) = worker.worktree {
        out.line(&format!("Worktree/branch: {worktree}"));
    }
}

/// `Worker: /root/backend · Attempt 1 · initial · exe-17`.
pub(super) fn worker_line(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>) -> String {
    let name = format!("Worker: {}", worker.worker_name);
    join_parts(&[&name, &attempt_line(attempt)])
}

/// The explicit ending protocol of spec 000 §8.4.
pub(super) const ENDING_PROTOCOL: &[&str] = &[
    "Before ending any response, choose the outcome that matches the assignment:",
    "- finished (every acceptance criterion met): call worker_complete with your handoff;",
    "- irrecoverable failure: call worker_fail with the reason;",
    "- human input genuinely required: call worker_await_human;",
    "- waiting on a dependency or external condition: call worker_await_dependency;",
    "- otherwise: remain active and do not claim completion.",
    "Only worker_complete completes the assignment.",
];

/// Lane-to-root reporting throughout the work (spec 000 §15.5).
pub(super) const LANE_REPORTING: &[&str] =
    &["Report durably throughout the work, not only at the end: at each checkpoint commit or \
     milestone call worker_progress and message_send to /root with commit, progress, completed, \
     remaining, blockers and contracts."];

/// Waiting for a person and waiting for another worker are different waits (issue 29):
/// only the first is `blocked`, and a person is shown only the first as "Needs you".
pub(super) const WAITS: &[&str] = &[
    "Waiting for another worker is not blocked: call worker_await_dependency with its \
     workerId (the wait ends when that worker completes, fails or is stopped, and you are \
     told how) and end with status: working.",
    "Only a person can unblock status: blocked: call worker_await_human with the question, \
     and its choices when the answer is one of a few; the answer comes back in your next \
     prompt.",
];

/// The end-of-response continuation-state block (spec 000 §27.2).
pub(super) const OUTPUT_BLOCK: &[&str] = &[
    "End every response with this continuation-state block as its last four lines \
     (working = unfinished, also while waiting for another worker; complete = all \
     requested work and acceptance gates done; blocked = only a person can unblock you, \
     and next says what you need from them):",
    "status: working | complete | blocked",
    "summary: <one line>",
    "current: <one line>",
    "next: <one line>",
];

/// Short reminder of the block for prompts sent into a conversation that already has the contract.
pub(super) const OUTPUT_BLOCK_REMINDER: &[&str] =
    &["End every response with the continuation-state block: status (working | complete | \
     blocked), summary, current, next."];

/// Recover durable state before acting (spec 000 §11).
pub(super) const RECOVER_STATE: &[&str] =
    &["Orchestrator MCP and durable state are authoritative. Recover them before acting \
     (worker_get, messages, events) and inspect the repository/worktree and progress state. \
     Do not redo completed work."];

/// The coordination duties of `/root` (spec 000 §10.4, §13.4).
pub(super) const ROOT_DUTIES: &[&str] = &[
    "As /root you coordinate the run:",
    "- read the run state first (run_get, worker_list, events_wait with a short timeout): \
     workers, messages, events and branches;",
    "- split the objective into lanes and start each with worker_spawn, giving it an \
     objective, a scope (what it owns and what it must not touch) and acceptance criteria \
     that can be checked;",
    "- loop on events_wait with a bounded timeout, handle what arrived, then wait again;",
    "- answer worker messages and questions (message_send to the lane, or worker_resolve_human \
     when it waits for an answer);",
    "- review each lane checkpoint against the entire run objective, lane assignments, \
     dependencies, acceptance criteria, cross-lane contracts, landed work and the convergence \
     plan, not merely that the lane is alive;",
    "- steer lanes with worker_steer using one outcome: continue_as_planned, correct_direction, \
     change_priority, provide_dependency, request_evidence, pause or terminal_reconcile;",
    "- release dependency waits once their condition holds, and integrate landed lane work;",
    "- record run progress with worker_progress; when every lane has completed (or failed or \
     been stopped) and the whole run objective is met, call worker_complete with the run \
     handoff: it is refused while a lane is unfinished.",
];

/// What a recovered `/root` must do first (spec 003 next action 5).
pub(super) const ROOT_RECOVERY: &[&str] =
    &["As /root: inspect the current worker list, messages/events and branches, consume lane \
     handoffs and blockers, then continue convergence."];

#[cfg(test)]
mod tests {
    use super::super::fixtures::{attempt, criteria, lane, root};
    use super::*;

    #[test]
    fn blocked_is_for_a_person_and_waiting_for_a_worker_is_working() {
        let text = [WAITS, OUTPUT_BLOCK].concat().join("\n");
        assert!(!text.contains("unavailable dependency"), "a lane is not a blocker: {text}");
        for clause in ["worker_await_dependency", "status: working", "worker_await_human", "choices", "only a person"] {
            assert!(text.to_lowercase().contains(&clause.to_lowercase()), "{clause}");
        }
    }

    #[test]
    fn owner_header_names_task_root_and_summary() {
        let c = criteria();
        let header = owner_header(&lane(&c));
        assert_eq!(header, "Execution continuity Lane A · root: Orchestrator root · Build the scheduler");
    }

    #[test]
    fn owner_header_adds_task_name_when_lane_label_lacks_it() {
        let c = criteria();
        let header = owner_header(&root(&c));
        assert!(header.starts_with("Execution continuity · Root · root: Orchestrator root"));
    }

    #[test]
    fn empty_parts_are_skipped() {
        assert_eq!(join_parts(&["", "a", "", "b"]), "a · b");
        assert_eq!(join_parts(&["", ""]), "");
    }

    #[test]
    fn provenance_is_omitted_when_unknown() {
        let a = AttemptBrief { wake_reasons: &[], last_progress_cursor: None, ..attempt("initial") };
        assert!(provenance_lines(&a).is_empty());
        assert_eq!(provenance_lines(&attempt("initial")).len(), 2);
    }

    #[test]
    fn builder_has_no_trailing_newline() {
        let text = PromptText::new().line("a").line("b").finish();
        assert_eq!(text, "a\nb");
    }
}
