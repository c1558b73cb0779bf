//! Wake reasons and their coalesced set: the provenance of every continuation.

use serde::{Deserialize, Serialize};

/// Why a worker was woken. The three wake classes of spec 000 §10.2 (event, idle,
/// active keepalive) plus the explicit actions that create continuations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum WakeReason {
    /// Idle wake: the conversation became idle while the worker is unfinished.
    Idle = 0,
    /// Active keepalive: the jittered 20-21 minute timer fired.
    ActiveKeepalive = 1,
    /// Event: a lane reported progress (wakes `/root`).
    Progress = 2,
    /// Event: a message arrived for this worker.
    Message = 3,
    /// Event: a lane completed, failed or was cancelled (wakes `/root`).
    LaneTerminal = 4,
    /// Event: a lane is blocked on a human or a dependency (wakes `/root`).
    LaneBlocked = 5,
    /// Event: the worker's dependency was released.
    DependencyReleased = 6,
    /// Event: the worker's human wait was resolved.
    HumanResolved = 7,
    /// Operator: continue now.
    ContinueNow = 8,
    /// Operator: resume after a pause.
    Resumed = 9,
    /// Root steering.
    Steering = 10,
    /// The page showed "Message delivery timed out": send a fresh `continue`.
    DeliveryTimeout = 11,
    /// The end-of-response block said complete without `worker_complete`.
    BlockComplete = 12,
    /// A new or replaced assignment.
    Followup = 13,
    /// The first turn of a new worker.
    Initial = 14,
    /// A fresh conversation for a worker whose conversation was lost.
    Recovery = 15,
    /// A previous delivery definitely did not happen; try again.
    Redelivery = 16,
    /// The dead-man layer found the run stopped: recover `/root` into a fresh conversation.
    DeadMan = 17,
    /// The latest turn of a ChatGPT conversation ended on an error card other than a
    /// delivery timeout (its words unknown, or "Something went wrong"): a fresh
    /// continuation, never the page's Retry.
    PageError = 18,
    /// Event: the worker this one waited for failed or was stopped, so the wait was
    /// released unmet (the waiter decides what now).
    DependencyEnded = 19,
}

impl WakeReason {
    /// Every reason, in bit order.
    pub const ALL: [WakeReason; 20] = [
        WakeReason::Idle,
        WakeReason::ActiveKeepalive,
        WakeReason::Progress,
        WakeReason::Message,
        WakeReason::LaneTerminal,
        WakeReason::LaneBlocked,
        WakeReason::DependencyReleased,
        WakeReason::HumanResolved,
        WakeReason::ContinueNow,
        WakeReason::Resumed,
        WakeReason::Steering,
        WakeReason::DeliveryTimeout,
        WakeReason::BlockComplete,
        WakeReason::Followup,
        WakeReason::Initial,
        WakeReason::Recovery,
        WakeReason::Redelivery,
        WakeReason::DeadMan,
        WakeReason::PageError,
        WakeReason::DependencyEnded,
    ];

    /// The provenance label recorded with attempts, e.g. `event:worker.progress`.
    pub fn as_str(self) -> &'static str {
        match self {
            WakeReason::Idle => "idle",
            WakeReason::ActiveKeepalive => "active_keepalive",
            WakeReason::Progress => "event:worker.progress",
            WakeReason::Message => "event:message",
            WakeReason::LaneTerminal => "event:worker.terminal",
            WakeReason::LaneBlocked => "event:worker.blocked",
            WakeReason::DependencyReleased => "event:dependency_released",
            WakeReason::HumanResolved => "event:human_resolved",
            WakeReason::ContinueNow => "operator:continue_now",
            WakeReason::Resumed => "operator:resume",
            WakeReason::Steering => "root:steering",
            WakeReason::DeliveryTimeout => "delivery_timeout",
            WakeReason::BlockComplete => "block:complete",
            WakeReason::Followup => "followup",
            WakeReason::Initial => "initial",
            WakeReason::Recovery => "recovery",
            WakeReason::Redelivery => "redelivery",
            WakeReason::DeadMan => "deadman",
            WakeReason::PageError => "page_error",
            WakeReason::DependencyEnded => "event:dependency_ended",
        }
    }

    /// Whether the wake asks for an idle delivery only (never a mid-turn steer).
    pub fn needs_idle(self) -> bool {
        matches!(
            self,
            WakeReason::Idle
                | WakeReason::DeliveryTimeout
                | WakeReason::PageError
                | WakeReason::BlockComplete
                | WakeReason::ContinueNow
                | WakeReason::Resumed
                | WakeReason::HumanResolved
                | WakeReason::DependencyReleased
                | WakeReason::DependencyEnded
                | WakeReason::Followup
                | WakeReason::Initial
                | WakeReason::Recovery
                | WakeReason::Redelivery
                | WakeReason::DeadMan
        )
    }
}

/// A set of wake reasons, stored as a bit set (small, ordered, cheap to persist).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WakeSet(pub u32);

impl WakeSet {
    /// The empty set.
    pub const EMPTY: WakeSet = WakeSet(0);

    /// A set with one reason.
    pub fn of(reason: WakeReason) -> WakeSet {
        WakeSet(1 << reason as u8)
    }
    /// Adds a reason.
    pub fn insert(&mut self, reason: WakeReason) {
        self.0 |= 1 << reason as u8;
    }
    /// Removes a reason.
    pub fn remove(&mut self, reason: WakeReason) {
        self.0 &= !(1 << reason as u8);
    }
    /// Whether the reason is present.
    pub fn contains(self, reason: WakeReason) -> bool {
        self.0 & (1 << reason as u8) != 0
    }
    /// Whether no reason is present.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Union.
    pub fn union(self, other: WakeSet) -> WakeSet {
        WakeSet(self.0 | other.0)
    }
    /// The reasons, in bit order.
    pub fn iter(self) -> impl Iterator<Item = WakeReason> {
        WakeReason::ALL.into_iter().filter(move |r| self.contains(*r))
    }
    /// The provenance labels, in bit order.
    pub fn labels(self) -> Vec<&'static str> {
        self.iter().map(WakeReason::as_str).collect()
    }
    /// Whether every reason asks for an idle delivery (so the wake may not steer).
    pub fn all_need_idle(self) -> bool {
        self.iter().all(WakeReason::needs_idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let mut s = WakeSet::EMPTY;
        assert!(s.is_empty());
        s.insert(WakeReason::Idle);
        s.insert(WakeReason::ActiveKeepalive);
        s.insert(WakeReason::Idle);
        assert_eq!(s.labels(), vec!["idle", "active_keepalive"]);
        s.remove(WakeReason::Idle);
        assert!(!s.contains(WakeReason::Idle));
        assert!(s.contains(WakeReason::ActiveKeepalive));
    }

    #[test]
    fn every_reason_fits_and_has_a_unique_label() {
        let mut labels = std::collections::BTreeSet::new();
        for (i, r) in WakeReason::ALL.into_iter().enumerate() {
            assert_eq!(r as usize, i);
            assert!(labels.insert(r.as_str()));
        }
        assert!(WakeReason::ALL.len() <= 32);
    }
}
