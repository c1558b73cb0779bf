//! CLI approval requests waiting for a person, and which one was answered last, per
//! worker. Not persisted: after a restart the executor republishes its state, request
//! included.
//!
//! [`Approvals`] owns the rules of answerability: a request shown becomes answerable
//! unless it is the one answered last and nothing moved since (a report from before the
//! answer landed); an answer makes it unanswerable at once (at most one answer per
//! request); a reconnecting executor's republished request is answerable again (an
//! answer lost with the old connection never reached it).

use crate::ids::WorkerId;
use crate::model::PendingApproval;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Waiting and answered approval requests, by worker.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Approvals {
    /// Requests waiting for a person, by worker (at most one per worker: a turn waits on
    /// one request at a time).
    waiting: BTreeMap<WorkerId, PendingApproval>,
    /// The last request answered per worker: a republished report of it (the executor's
    /// state before the answer landed) does not make it answerable again.
    answered: BTreeMap<WorkerId, Arc<str>>,
}

impl Approvals {
    /// A state `awaiting_approval` showed `approval`. `republished`: a reconnecting
    /// executor's `hello` shows what it still holds.
    pub fn shown(&mut self, id: WorkerId, approval: Option<PendingApproval>, republished: bool) {
        let Some(approval) = approval else { return };
        if republished {
            self.answered.remove(&id);
        } else if self.answered.get(&id) == Some(&approval.id) {
            return;
        }
        self.waiting.insert(id, approval);
    }

    /// Whether `shown` is a request other than the one waiting and the one answered last:
    /// a new request, not a duplicate report (a request gone with its child, and the
    /// next child's).
    pub fn is_new(&self, id: WorkerId, shown: &PendingApproval) -> bool {
        let known = |known: Option<&Arc<str>>| known.is_some_and(|k| *k == shown.id);
        !known(self.waiting.get(&id).map(|a| &a.id)) && !known(self.answered.get(&id))
    }

    /// The executor moved past the request answered last (a state other than
    /// `awaiting_approval`): a later request with the same handle (a new child numbers
    /// its requests from `apr-1` again) is a new one.
    pub fn moved_past(&mut self, id: WorkerId) {
        self.answered.remove(&id);
    }

    /// The request waiting for a person in the worker's conversation, if any.
    pub fn waiting(&self, id: WorkerId) -> Option<&PendingApproval> {
        self.waiting.get(&id)
    }

    /// A person answered the waiting request `approval`: it is answerable no more.
    pub fn answer(&mut self, id: WorkerId, approval: &str) {
        self.waiting.remove(&id);
        self.answered.insert(id, Arc::from(approval));
    }

    /// The worker's conversation no longer shows the request (or is no longer the one).
    pub fn forget(&mut self, id: WorkerId) {
        self.waiting.remove(&id);
    }
}
