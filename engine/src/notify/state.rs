//! The notification outbox's owner: one durable record per (episode, target), changed
//! only by the notification rules (`notify/rules.rs`), each change written in the input's
//! batch; and, not persisted, the notices handed to the shell and not yet answered.

use super::{Notice, NoticeId, NoticeStatus};
use crate::time::Timestamp;
use std::collections::{BTreeMap, BTreeSet};

/// The outbox.
#[derive(Clone, Debug, Default)]
pub(crate) struct Notices {
    notices: BTreeMap<NoticeId, Notice>,
    /// The pending ones (settled records stay, and are never scanned again).
    pending: BTreeSet<NoticeId>,
    /// Notices whose record changed in this input, in no order, maybe repeated.
    changed: Vec<NoticeId>,
    /// Handed to the shell in this process and not yet answered, with the time after
    /// which the delivery counts as failed. Not persisted: after a restart every pending
    /// notice is sent again (with the same id).
    in_flight: BTreeMap<NoticeId, Timestamp>,
}

/// Equal records; the changes and the deliveries under way are bookkeeping.
impl PartialEq for Notices {
    fn eq(&self, other: &Self) -> bool {
        self.notices == other.notices
    }
}

impl Eq for Notices {}

impl Notices {
    /// The records read back from the store (recovery): nothing to write, nothing sent.
    pub(crate) fn load(records: impl IntoIterator<Item = Notice>) -> Notices {
        let notices: BTreeMap<NoticeId, Notice> = records.into_iter().map(|n| (n.id, n)).collect();
        let pending = notices.values().filter(|n| n.status == NoticeStatus::Pending).map(|n| n.id).collect();
        Notices { notices, pending, ..Notices::default() }
    }

    /// A notice.
    pub(crate) fn get(&self, id: &NoticeId) -> Option<&Notice> {
        self.notices.get(id)
    }

    /// Every notice, in id order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Notice> {
        self.notices.values()
    }

    /// Sets a notice's record.
    pub(super) fn set(&mut self, notice: Notice) {
        self.changed.push(notice.id);
        if notice.status == NoticeStatus::Pending {
            self.pending.insert(notice.id);
        } else {
            self.pending.remove(&notice.id);
        }
        self.notices.insert(notice.id, notice);
    }

    /// Pending notices due at `now` and not under way, in id order.
    pub(super) fn due(&self, now: Timestamp) -> Vec<NoticeId> {
        self.pending
            .iter()
            .filter_map(|id| self.notices.get(id))
            .filter(|n| n.next_at <= now && !self.in_flight.contains_key(&n.id))
            .map(|n| n.id)
            .collect()
    }

    /// Deliveries under way whose answer is overdue at `now`.
    pub(super) fn overdue(&self, now: Timestamp) -> Vec<NoticeId> {
        self.in_flight.iter().filter(|(_, at)| **at <= now).map(|(id, _)| *id).collect()
    }

    /// A delivery under way of a notice that is not pending (an invariant says none).
    pub(crate) fn stray(&self) -> Option<NoticeId> {
        self.in_flight.keys().find(|id| !self.pending.contains(id)).copied()
    }

    /// Marks a notice handed to the shell, answer expected by `deadline`.
    pub(super) fn start(&mut self, id: NoticeId, deadline: Timestamp) {
        self.in_flight.insert(id, deadline);
    }

    /// Forgets a delivery under way; whether it was.
    pub(super) fn finish(&mut self, id: NoticeId) -> bool {
        self.in_flight.remove(&id).is_some()
    }

    /// When a notice next needs the engine: a pending one falls due, or a delivery's
    /// answer is overdue.
    pub(crate) fn next_deadline(&self) -> Option<Timestamp> {
        let pending = self
            .pending
            .iter()
            .filter(|id| !self.in_flight.contains_key(id))
            .filter_map(|id| self.notices.get(id))
            .map(|n| n.next_at);
        pending.chain(self.in_flight.values().copied()).min()
    }

    /// The records changed in this input, in id order, forgetting that they changed.
    pub(crate) fn drain_changed(&mut self) -> impl Iterator<Item = &Notice> {
        crate::dense::settle(&mut self.changed);
        let notices = &self.notices;
        self.changed.drain(..).filter_map(|id| notices.get(&id))
    }

    /// How many records changed in this input (maybe counted twice).
    pub(crate) fn changed_len(&self) -> usize {
        self.changed.len()
    }
}
