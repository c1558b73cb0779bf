//! The dead-man layer on the wire: a run's dead-man policy and its "stopped moving" alert,
//! with the sentence every surface shows.

use engine::deadman::{DeadManAction, DeadManCondition, DeadManFiring, DeadManView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A run's dead-man policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeadManOut {
    /// `off`, `notify` or `recover`.
    pub mode: String,
    /// How long the run may go without moving before the layer acts, ms (null: never).
    pub after_ms: Option<u64>,
}

/// The open "stopped moving" alert of a run: the latest dead-man firing while nothing
/// moved the run since (a "Needs you" for the whole run).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoppedMovingOut {
    /// When the layer fired, ms since the Unix epoch.
    pub at_ms: u64,
    /// `conversations_lost` (no live conversation or command) or `no_progress`.
    pub condition: String,
    /// `notified` or `recovery_requested` (/root reopened in a fresh conversation).
    pub action: String,
    /// How long nothing had moved the run, ms.
    pub quiet_ms: u64,
    /// The unfinished workers.
    pub worker_ids: Vec<String>,
    /// Their last conversations.
    pub conversation_urls: Vec<String>,
    /// The sentence for people: "Run X has stopped moving: why".
    pub text: String,
}

impl From<&DeadManView> for DeadManOut {
    fn from(v: &DeadManView) -> DeadManOut {
        DeadManOut { mode: v.policy.mode.as_str().to_string(), after_ms: v.policy.after_ms }
    }
}

impl StoppedMovingOut {
    /// The alert of a run named `task_name`.
    pub fn new(task_name: &str, f: &DeadManFiring) -> StoppedMovingOut {
        StoppedMovingOut {
            at_ms: f.at.0,
            condition: f.condition.as_str().to_string(),
            action: f.action.as_str().to_string(),
            quiet_ms: f.quiet_ms,
            worker_ids: f.workers.iter().map(|w| w.to_string()).collect(),
            conversation_urls: f.conversations.iter().map(|c| c.to_string()).collect(),
            text: format!("Run {task_name} has stopped moving: {}", why(f.condition, f.action, f.quiet_ms)),
        }
    }
}

/// Why, and what was done, in words.
pub fn why(condition: DeadManCondition, action: DeadManAction, quiet_ms: u64) -> String {
    let minutes = quiet_ms / 60_000;
    let cause = match condition {
        DeadManCondition::ConversationsLost => {
            format!("no conversation of it is alive (closed, errored or full) and nothing moved for {minutes} min")
        }
        DeadManCondition::NoProgress => format!("no turn was delivered and no progress came for {minutes} min"),
    };
    let done = match action {
        DeadManAction::Notified => "open the dashboard to recover it",
        DeadManAction::RecoveryRequested => "/root is being reopened in a fresh conversation",
    };
    format!("{cause}; {done}.")
}
