//! The dead-man fallback (spec 000 §12.0, 001 phase 16.5, 003 decision 11): the last line
//! of defence when every wake path of a run is gone while its person is away.
//!
//! The engine is the only authority. A run is watched while its dead-man mode is not
//! `off`, its threshold is set and one of its unfinished workers resumes automatically. It
//! is *quiet* once nothing moved it (no submission, no durable progress, no earlier firing,
//! no policy change) for `deadManAfterMs`; the check runs on the root worker's timer at
//! that moment. A quiet run fires unless something already asks a person or waits for a
//! clock (a human wait, any pause, a dialog or approval card, an account limit, an
//! external dependency) or a normal wake is on its way (a deliverable pending
//! continuation). A firing appends `deadman.fired` and raises the run's "stopped moving"
//! alert; with `recover` it also asks for exactly one recovery of `/root` into a fresh
//! conversation, coalesced into any pending continuation of root and never while root has
//! a command in flight or a live conversation. A quiet run that does not fire re-arms the
//! window, so the check runs at most once per `deadManAfterMs`.
//!
//! This file holds the layer's public types; `rules.rs` its rules (the check on the root
//! worker's timer, the firing and the recovery), and `state.rs` the owner of the
//! durable dead-man records (`state::DeadMen`), which only those rules change.

use crate::ids::*;
use crate::limits::DEADMAN_AFTER_MS_DEFAULT;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

mod rules;
pub(crate) mod state;

/// What the dead-man layer does for a run that stopped moving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeadManMode {
    /// Nothing: the layer is disabled.
    Off,
    /// Raise the run's "stopped moving" alert (Needs you) and record the firing.
    Notify,
    /// Notify, and recover `/root` once into a fresh conversation.
    Recover,
}

impl DeadManMode {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeadManMode::Off => "off",
            DeadManMode::Notify => "notify",
            DeadManMode::Recover => "recover",
        }
    }
}

/// A run's dead-man policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadManPolicy {
    /// Off, notify or recover.
    pub mode: DeadManMode,
    /// How long a run may go without moving before the layer acts (`None` disables it).
    pub after_ms: Option<u64>,
}

impl DeadManPolicy {
    /// Off, with the conservative threshold ready for when a run turns it on. Off by
    /// default so that runs which never asked for the layer behave exactly as before it.
    pub const DEFAULT: DeadManPolicy =
        DeadManPolicy { mode: DeadManMode::Off, after_ms: Some(DEADMAN_AFTER_MS_DEFAULT) };

    /// The threshold, when the layer is on.
    pub(crate) fn armed_ms(&self) -> Option<u64> {
        if self.mode == DeadManMode::Off { None } else { self.after_ms }
    }
}

impl Default for DeadManPolicy {
    fn default() -> Self {
        DeadManPolicy::DEFAULT
    }
}

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

/// The dead-man state of a run as reads show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadManView {
    /// The run's effective policy.
    pub policy: DeadManPolicy,
    /// The latest firing while nothing moved the run since: "Run X has stopped moving".
    pub alert: Option<DeadManFiring>,
}
