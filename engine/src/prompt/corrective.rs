//! Root steering delivered to a lane (spec 000 §10.4): the outcome, its meaning and the message.

use super::sections::{ENDING_PROTOCOL, OUTPUT_BLOCK_REMINDER, PromptText, attempt_line, owner_header};
use super::{AttemptBrief, CORRECTIVE_VERSION, Prompt, WorkerBrief};

/// Every steering outcome root may send, with the one-line meaning printed to the lane.
const OUTCOME_MEANINGS: [(&str, &str); 7] = [
    ("continue_as_planned", "your work is aligned; keep going."),
    ("correct_direction", "your work is drifting from the assignment or architecture; correct it."),
    ("change_priority", "another subgoal must be handled first."),
    ("provide_dependency", "a commit, contract or result you needed is now available."),
    ("request_evidence", "root needs tests, a diff or other proof before accepting your direction."),
    (
        "pause",
        "continuing would create harmful or conflicting work; stop the affected work until root \
         says otherwise.",
    ),
    ("terminal_reconcile", "you claimed completion; root requests a final correction or review before accepting it."),
];

/// Printed when the outcome is not one of [`STEERING_OUTCOMES`]; the message still applies.
const UNKNOWN_OUTCOME_MEANING: &str = "unrecognised outcome; follow root's message.";

/// The steering outcomes of spec 000 §10.4, in the order the spec lists them.
pub const STEERING_OUTCOMES: [&str; 7] = [
    OUTCOME_MEANINGS[0].0,
    OUTCOME_MEANINGS[1].0,
    OUTCOME_MEANINGS[2].0,
    OUTCOME_MEANINGS[3].0,
    OUTCOME_MEANINGS[4].0,
    OUTCOME_MEANINGS[5].0,
    OUTCOME_MEANINGS[6].0,
];

/// The one-line meaning of a steering outcome, so callers can validate or display it.
pub fn outcome_meaning(outcome: &str) -> Option<&'static str> {
    OUTCOME_MEANINGS.iter().find(|(name, _)| *name == outcome).map(|(_, meaning)| *meaning)
}

/// Root steering for a lane: outcome, meaning, root's message verbatim, then acknowledge and go on.
pub fn corrective(worker: &WorkerBrief<'_>, attempt: &AttemptBrief<'_>, outcome: &str, message: &str) -> Prompt {
    let meaning = outcome_meaning(outcome).unwrap_or(UNKNOWN_OUTCOME_MEANING);
    let mut out = PromptText::new();
    out.line(&owner_header(worker));
    out.line(&attempt_line(attempt));
    out.line(&format!("Steering from root: {outcome} — {meaning}"));
    out.line("Root's message:");
    out.line(message);
    out.line(
        "Acknowledge this through worker_progress and message_send to /root, then continue the \
         assignment as steered.",
    );
    out.lines(ENDING_PROTOCOL).lines(OUTPUT_BLOCK_REMINDER);
    Prompt { version: CORRECTIVE_VERSION, text: out.finish() }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{attempt, criteria, lane};
    use super::*;

    #[test]
    fn every_outcome_has_a_meaning() {
        for outcome in STEERING_OUTCOMES {
            assert!(outcome_meaning(outcome).is_some_and(|m| !m.is_empty()), "{outcome}");
        }
        assert_eq!(outcome_meaning("Continue_As_Planned"), None);
    }

    #[test]
    fn corrective_carries_outcome_meaning_and_message_verbatim() {
        let c = criteria();
        let message = "Stop editing engine/src/store.\nIt belongs to Lane B.";
        let p = corrective(&lane(&c), &attempt("corrective"), "correct_direction", message);
        assert!(p.text.contains("correct_direction"));
        assert!(p.text.contains(outcome_meaning("correct_direction").unwrap_or("?")));
        assert!(p.text.contains(message));
    }

    #[test]
    fn corrective_asks_for_acknowledgement_and_ending_protocol() {
        let c = criteria();
        let text = corrective(&lane(&c), &attempt("corrective"), "pause", "Hold.").text;
        for clause in ["worker_progress", "message_send", "/root", "worker_complete", "continuation-state block"] {
            assert!(text.contains(clause), "{clause}");
        }
    }

    #[test]
    fn corrective_first_line_is_owner_readable() {
        let c = criteria();
        let worker = lane(&c);
        let text = corrective(&worker, &attempt("corrective"), "pause", "Hold.").text;
        let first = text.lines().next().unwrap_or_default();
        assert!(first.contains(worker.task_name) && first.contains(worker.root_conversation_name));
    }

    #[test]
    fn unknown_outcome_is_printed_not_rejected() {
        let c = criteria();
        let text = corrective(&lane(&c), &attempt("corrective"), "shrug", "Do X.").text;
        assert!(text.contains("shrug"));
        assert!(text.contains(UNKNOWN_OUTCOME_MEANING));
        assert!(text.contains("Do X."));
    }
}
