//! Reconciliation after an executor crash: does the session's transcript
//! (`~/.claude/projects/<encoded cwd>/<session>.jsonl`) hold a prompt, and did its turn end?
//!
//! Recorded (2.1.332, `tests/fixtures/claude-2.1.332/*.transcript.jsonl`): each prompt is
//! first a `queue-operation` `enqueue` with its text but no uuid, then a `dequeue`, then a
//! `user` entry whose `uuid` is the line's `uuid` (our nonce, [`super::nonce`]). A
//! prompt absorbed mid-turn has no `user` entry: a `queue-operation` `remove` with
//! `reason:"absorbed_mid_turn"` and `commandUuid`, and an `attachment` of type
//! `queued_command` with `source_uuid`. There is no turn-end entry; an `assistant` entry
//! with a `stop_reason` other than `tool_use` (`end_turn`, or `stop_sequence` on the
//! synthetic API-error message) ends the answer, and a later prompt's `user` entry proves the
//! turn before it is over.
//!
//! Only [`Found::Absent`] allows a resend. A prompt still enqueued (its text in an
//! `enqueue` with no `dequeue` or `remove` after it) may yet run on `--resume`, and a
//! line that cannot be read may be the one we look for: both are [`Found::CannotTell`].

use crate::Error;
use crate::base::limits::LINE_BYTES_MAX;
use serde_json::Value;
use std::collections::VecDeque;

/// What the transcript says of one nonce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The prompt went in: never resend it.
    Sent {
        /// Absorbed into a running turn (a `queued_command` attachment), not its own turn.
        merged: bool,
        /// An answer that ended, or a later prompt, follows it.
        finished: bool,
    },
    /// No trace of it in a transcript read to its end: a resend is safe.
    Absent,
    /// Neither proof: the worker waits for a person rather than risk a duplicate.
    CannotTell {
        /// Why, for people.
        why: &'static str,
    },
}

/// Looks for the prompt with nonce `uuid` and text `prompt` in a transcript's text.
/// Any line that cannot be read (a torn last write) makes a missing nonce unprovable. An
/// empty `prompt` is a text not known any more (the journal keeps no prompt once its
/// submission began): then any prompt still enqueued may be this one.
pub fn find(transcript: &str, uuid: &str, prompt: &str) -> Found {
    let mut hit: Option<bool> = None; // merged?
    let mut finished = false;
    let mut pending: VecDeque<String> = VecDeque::new();
    let mut unreadable = false;
    for line in transcript.lines().filter(|line| !line.trim().is_empty()) {
        let Ok(entry) = parse(line) else {
            // A torn last write or a garbled line: it may be the entry we look for.
            unreadable = true;
            continue;
        };
        let kind = entry.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |key: &str| entry.get(key).and_then(Value::as_str);
        match kind {
            "queue-operation" => match text("operation") {
                Some("enqueue") => pending.push_back(text("content").unwrap_or_default().to_string()),
                Some("dequeue") => {
                    pending.pop_front();
                }
                Some("remove") => {
                    if let Some(at) = pending.iter().position(|c| Some(c.as_str()) == text("content")) {
                        pending.remove(at);
                    }
                    if text("commandUuid") == Some(uuid) {
                        hit = hit.or(Some(true));
                    }
                }
                _ => {}
            },
            "attachment" => {
                let attachment = entry.get("attachment");
                let queued = attachment.and_then(|a| a.get("type")).and_then(Value::as_str) == Some("queued_command");
                if queued && attachment.and_then(|a| a.get("source_uuid")).and_then(Value::as_str) == Some(uuid) {
                    hit = hit.or(Some(true));
                }
            }
            "user" if text("uuid") == Some(uuid) => hit = Some(false),
            "user" if hit.is_some() && entry.get("promptSource").is_some() => finished = true,
            "assistant" if hit.is_some() => {
                let stop = entry.pointer("/message/stop_reason").and_then(Value::as_str);
                if stop.is_some_and(|s| s != "tool_use") {
                    finished = true;
                }
            }
            _ => {}
        }
    }
    match hit {
        Some(merged) => Found::Sent { merged, finished },
        None if unreadable => Found::CannotTell { why: "a transcript line cannot be read" },
        None if pending.iter().any(|c| prompt.is_empty() || c == prompt) => {
            Found::CannotTell { why: "the prompt is still enqueued and may run on resume" }
        }
        None => Found::Absent,
    }
}

fn parse(line: &str) -> Result<Value, Error> {
    if line.len() > LINE_BYTES_MAX {
        return Err(Error::LineTooLong { bytes: line.len() });
    }
    let value: Value = serde_json::from_str(line).map_err(|e| Error::Malformed { detail: e.to_string() })?;
    if value.is_object() { Ok(value) } else { Err(Error::Malformed { detail: "not an object".to_string() }) }
}
