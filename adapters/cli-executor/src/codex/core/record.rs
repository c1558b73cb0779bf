//! A thread as `thread/read` returns it, reduced to what reconciliation needs: its turns,
//! their status, and the `clientId` of each user message (our nonce, when we sent it).
//!
//! This is the basis of exactly-once delivery: before anything is written to the child,
//! the nonce (the command's idempotency key) is journaled; after a crash, a user message
//! whose `clientId` is the nonce proves the prompt went in, and its turn's status says how
//! far it got. Only a nonce absent from the thread allows a resend.

use serde_json::Value;
use std::collections::BTreeSet;

/// A turn's status as the app-server reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnStatus {
    /// Still running.
    InProgress,
    /// Ended normally.
    Completed,
    /// Ended by `turn/interrupt`.
    Interrupted,
    /// Ended by an error.
    Failed,
}

impl TurnStatus {
    /// Reads the wire name; an unknown status is `None`.
    pub fn parse(name: &str) -> Option<TurnStatus> {
        match name {
            "inProgress" => Some(TurnStatus::InProgress),
            "completed" => Some(TurnStatus::Completed),
            "interrupted" => Some(TurnStatus::Interrupted),
            "failed" => Some(TurnStatus::Failed),
            _ => None,
        }
    }
}

/// One turn of the record.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRecord {
    /// The turn id.
    pub id: String,
    /// Its status (`None`: a status this version of the core does not know).
    pub status: Option<TurnStatus>,
    /// The `clientId` of each user message, in order (`None`: sent without one).
    pub client_ids: Vec<Option<String>>,
    /// The text of the turn's last agent message, if any.
    pub last_agent_text: Option<String>,
    /// The turn's `error` object, when it failed.
    pub error: Option<Value>,
}

/// Where a nonce was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonceFound {
    /// The turn holding the user message with this `clientId`.
    pub turn: String,
    /// That turn's status.
    pub status: Option<TurnStatus>,
}

/// A thread's turns, oldest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ThreadRecord {
    /// The thread id.
    pub id: String,
    /// Its turns, oldest first.
    pub turns: Vec<TurnRecord>,
}

impl ThreadRecord {
    /// Reads the `result` of a `thread/read` with `includeTurns`; `None` if it has no thread.
    pub fn from_read(result: &Value) -> Option<ThreadRecord> {
        let thread = result.get("thread")?;
        let id = thread.get("id")?.as_str()?.to_string();
        let turns = thread.get("turns").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        Some(ThreadRecord { id, turns: turns.iter().filter_map(turn_record).collect() })
    }

    /// The turn holding the user message whose `clientId` is `nonce`.
    pub fn find(&self, nonce: &str) -> Option<NonceFound> {
        self.turns
            .iter()
            .find(|turn| turn.client_ids.iter().any(|id| id.as_deref() == Some(nonce)))
            .map(|turn| NonceFound { turn: turn.id.clone(), status: turn.status })
    }

    /// Turns with a user message that carries none of `ours`: someone else started them.
    pub fn foreign_turns(&self, ours: &BTreeSet<String>) -> Vec<&TurnRecord> {
        let foreign = |id: &Option<String>| id.as_ref().is_none_or(|id| !ours.contains(id));
        self.turns.iter().filter(|turn| turn.client_ids.iter().any(foreign)).collect()
    }
}

fn turn_record(turn: &Value) -> Option<TurnRecord> {
    let id = turn.get("id")?.as_str()?.to_string();
    let status = turn.get("status").and_then(Value::as_str).and_then(TurnStatus::parse);
    let items = turn.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let client_ids = items
        .iter()
        .filter(|item| item_type(item) == Some("userMessage"))
        .map(|item| item.get("clientId").and_then(Value::as_str).map(str::to_string))
        .collect();
    let last_agent_text = items.iter().rev().find_map(agent_text).map(str::to_string);
    let error = turn.get("error").filter(|error| !error.is_null()).cloned();
    Some(TurnRecord { id, status, client_ids, last_agent_text, error })
}

/// An item's `type`.
pub fn item_type(item: &Value) -> Option<&str> {
    item.get("type").and_then(Value::as_str)
}

/// The text of an `agentMessage` item.
pub fn agent_text(item: &Value) -> Option<&str> {
    (item_type(item) == Some("agentMessage")).then(|| item.get("text").and_then(Value::as_str)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read() -> Value {
        json!({"thread": {"id": "t1", "turns": [
            {"id": "u1", "status": "completed", "error": null, "items": [
                {"type": "userMessage", "clientId": "n1"}, {"type": "agentMessage", "text": "one"}]},
            {"id": "u2", "status": "interrupted", "error": null, "items": [
                {"type": "userMessage", "clientId": "n2"}, {"type": "userMessage", "clientId": "s2"}]},
            {"id": "u3", "status": "inProgress", "items": [{"type": "userMessage", "clientId": null}]}]}})
    }

    #[test]
    fn finds_nonces_and_their_turn() {
        let record = ThreadRecord::from_read(&read()).expect("thread");
        assert_eq!(record.find("n1"), Some(NonceFound { turn: "u1".to_string(), status: Some(TurnStatus::Completed) }));
        assert_eq!(record.find("s2").map(|f| f.turn), Some("u2".to_string()));
        assert_eq!(record.find("n9"), None);
        assert_eq!(record.turns[0].last_agent_text.as_deref(), Some("one"));
    }

    #[test]
    fn a_turn_without_our_nonce_is_foreign() {
        let record = ThreadRecord::from_read(&read()).expect("thread");
        let ours: BTreeSet<String> = ["n1", "n2", "s2"].map(String::from).into();
        let foreign: Vec<&str> = record.foreign_turns(&ours).iter().map(|t| t.id.as_str()).collect();
        assert_eq!(foreign, ["u3"]);
        let fewer: BTreeSet<String> = ["n1"].map(String::from).into();
        assert_eq!(record.foreign_turns(&fewer).len(), 2);
    }

    #[test]
    fn no_thread_no_record() {
        assert_eq!(ThreadRecord::from_read(&json!({})), None);
        assert_eq!(TurnStatus::parse("paused"), None);
    }
}
