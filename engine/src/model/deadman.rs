//! A run's durable dead-man record and what a firing found and did (spec 000 §12.0). The
//! rules that write them are in `deadman/`, the policy in `policy.rs`.

use crate::ids::*;
use crate::policy::DeadManPolicy;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Why a run was found stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeadManCondition {
    /// No unfinished worker has a live conversation or a command in flight (tabs closed,
    /// error cards, full conversations).
    ConversationsLost,
    /// Conversations exist, but nothing was delivered and no progress came for the threshold.
    NoProgress,
}

impl DeadManCondition {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeadManCondition::ConversationsLost => "conversations_lost",
            DeadManCondition::NoProgress => "no_progress",
        }
    }
}

/// What a firing did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeadManAction {
    /// Raised the alert only (mode `notify`, or `recover` while root still has a live
    /// conversation or a command in flight, so a fresh one would be a second root).
    Notified,
    /// Raised the alert and asked for one recovery of `/root` into a fresh conversation.
    RecoveryRequested,
}

impl DeadManAction {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeadManAction::Notified => "notified",
            DeadManAction::RecoveryRequested => "recovery_requested",
        }
    }
}

/// One firing, as evidence and as the alert people see.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadManFiring {
    /// When it fired.
    pub at: Timestamp,
    /// Why the run was found stopped.
    pub condition: DeadManCondition,
    /// What was done.
    pub action: DeadManAction,
    /// How long nothing had moved the run, ms.
    pub quiet_ms: u64,
    /// The unfinished workers, in id order.
    pub workers: Vec<WorkerId>,
    /// Their last conversations (lost ones included), in worker order.
    pub conversations: Vec<Arc<str>>,
}

/// A run's durable dead-man state (its own record: rarely written, only when the policy
/// is set, a window re-arms or the layer fires).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadMan {
    /// The run.
    pub run: RunId,
    /// The run's policy.
    pub policy: DeadManPolicy,
    /// Start of the current watch window (policy set, or a quiet run found fine).
    pub since: Timestamp,
    /// The latest firing.
    pub last: Option<DeadManFiring>,
}
