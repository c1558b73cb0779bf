//! Reconciliation after a crash: what became of a prompt whose submission began
//! (`submission-started` in the journal) when the child or the executor died before the
//! answer came. The CLI's own record decides, never a guess: a user message whose
//! `clientId` is the command's nonce proves the prompt went in; a thread read after the
//! old child is gone (so nothing can still land) without it proves it did not; anything
//! else (the thread could not be resumed or read) cannot tell, and is ambiguous: the
//! worker pauses for a person rather than risk a second copy of the prompt.

use crate::base::report::{ABSENT, AMBIGUOUS};
use crate::codex::record::ThreadRecord;
use executor_protocol::OutcomeWire;

/// The conversation id of a Codex thread on the wire: `codex:thread/<threadId>`.
pub const CONVERSATION_PREFIX: &str = "codex:thread/";

/// What a prompt's journal entry resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Its nonce is in the thread, in this turn: it was sent.
    Sent {
        /// The turn that holds it.
        turn: String,
    },
    /// The thread holds no message with its nonce: it was not sent.
    Absent,
    /// The record cannot tell (not this thread, or no record at all).
    Unknown,
}

/// Reads `record` (a `thread/read` of `thread`, taken after the old child ended) for `nonce`.
pub fn verdict(record: Option<&ThreadRecord>, thread: &str, nonce: &str) -> Verdict {
    match record {
        Some(record) if record.id == thread => match record.find(nonce) {
            Some(found) => Verdict::Sent { turn: found.turn },
            None => Verdict::Absent,
        },
        _ => Verdict::Unknown,
    }
}

/// The `command.result` outcome of a verdict. `state_seq` is the journaled sequence at
/// submission; `create` says whether the command was a `conversation.create` (whose
/// result names its conversation).
pub fn outcome(verdict: &Verdict, thread: &str, state_seq: u64, create: bool) -> OutcomeWire {
    match verdict {
        Verdict::Sent { .. } => {
            OutcomeWire::Submitted { state_seq, conversation_url: create.then(|| conversation_url(thread)) }
        }
        Verdict::Absent => OutcomeWire::Failed {
            code: ABSENT.to_string(),
            detail: "the executor restarted before the prompt reached Codex (thread/read shows no message with its nonce): not submitted".to_string(),
        },
        Verdict::Unknown => ambiguous("the executor restarted mid-submission and Codex's record of the thread could not be read"),
    }
}

/// An `AMBIGUOUS_SUBMISSION` failure with `detail`.
pub fn ambiguous(detail: &str) -> OutcomeWire {
    OutcomeWire::Failed { code: AMBIGUOUS.to_string(), detail: detail.to_string() }
}

/// `codex:thread/<thread>`.
pub fn conversation_url(thread: &str) -> String {
    format!("{CONVERSATION_PREFIX}{thread}")
}

/// The thread of a `codex:thread/<thread>` conversation id; `None` for any other form.
pub fn thread_of(conversation: &str) -> Option<&str> {
    conversation.strip_prefix(CONVERSATION_PREFIX).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> ThreadRecord {
        ThreadRecord::from_read(&json!({"thread": {"id": "t1", "turns": [
            {"id": "u1", "status": "interrupted", "items": [{"type": "userMessage", "clientId": "conversation.send:exe-2"}]}]}}))
        .expect("a thread")
    }

    #[test]
    fn the_nonce_in_the_thread_is_sent_its_absence_is_not_and_no_record_cannot_tell() {
        let r = record();
        assert_eq!(verdict(Some(&r), "t1", "conversation.send:exe-2"), Verdict::Sent { turn: "u1".to_string() });
        assert_eq!(verdict(Some(&r), "t1", "conversation.send:exe-3"), Verdict::Absent);
        assert_eq!(verdict(Some(&r), "t2", "conversation.send:exe-2"), Verdict::Unknown);
        assert_eq!(verdict(None, "t1", "conversation.send:exe-2"), Verdict::Unknown);
    }

    #[test]
    fn outcomes_submitted_definite_or_ambiguous() {
        let sent = Verdict::Sent { turn: "u1".to_string() };
        assert_eq!(
            outcome(&sent, "t1", 4, true),
            OutcomeWire::Submitted { state_seq: 4, conversation_url: Some("codex:thread/t1".to_string()) }
        );
        assert_eq!(outcome(&sent, "t1", 4, false), OutcomeWire::Submitted { state_seq: 4, conversation_url: None });
        assert!(
            matches!(outcome(&Verdict::Absent, "t1", 4, false), OutcomeWire::Failed { code, .. } if code == ABSENT)
        );
        assert!(
            matches!(outcome(&Verdict::Unknown, "t1", 4, false), OutcomeWire::Failed { code, .. } if code == AMBIGUOUS)
        );
    }

    #[test]
    fn conversation_ids() {
        assert_eq!(thread_of(&conversation_url("019a")), Some("019a"));
        assert_eq!(thread_of("https://chatgpt.com/c/x"), None);
        assert_eq!(thread_of("codex:thread/"), None);
    }
}
