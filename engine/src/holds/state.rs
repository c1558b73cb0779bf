//! The page-holds record's owner: account holds and the words of conversation holds,
//! changed only by the hold rules (`holds/mod.rs`), each change written in the input's
//! batch.

use crate::ids::WorkerId;
use crate::model::{AccountHold, AccountKey, PageHolds};
use crate::time::Timestamp;
use std::sync::Arc;

/// The page holds (one durable record) and whether this input changed them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Holds {
    record: PageHolds,
    /// Whether the record changed in this input.
    changed: bool,
}

/// Equal records; the changed flag is bookkeeping.
impl PartialEq for Holds {
    fn eq(&self, other: &Self) -> bool {
        self.record == other.record
    }
}

impl Eq for Holds {}

impl Holds {
    /// The record read back from the store (recovery): nothing to write.
    pub(crate) fn load(record: PageHolds) -> Holds {
        Holds { record, changed: false }
    }

    /// The record, to read.
    pub(crate) fn record(&self) -> &PageHolds {
        &self.record
    }

    /// When the soonest account hold lifts.
    pub(crate) fn next_lift(&self) -> Option<Timestamp> {
        self.record.accounts.values().map(|h| h.until).min()
    }

    /// Sets an account's hold.
    pub(super) fn set_account(&mut self, account: AccountKey, hold: AccountHold) {
        self.record.accounts.insert(account, hold);
        self.changed = true;
    }

    /// Ends an account's hold, if it has one.
    pub(super) fn remove_account(&mut self, account: &AccountKey) -> Option<AccountHold> {
        let hold = self.record.accounts.remove(account)?;
        self.changed = true;
        Some(hold)
    }

    /// Sets (or, with `None`, drops) the words shown over a worker's conversation.
    pub(super) fn set_words(&mut self, id: WorkerId, words: Option<Arc<str>>) {
        match words {
            Some(d) => self.record.dialogs.insert(id, d),
            None => self.record.dialogs.remove(&id),
        };
        self.changed = true;
    }

    /// Drops the words shown over a worker's conversation, if any.
    pub(super) fn forget_words(&mut self, id: WorkerId) {
        if self.record.dialogs.remove(&id).is_some() {
            self.changed = true;
        }
    }

    /// Whether the record changed in this input.
    pub(crate) fn is_changed(&self) -> bool {
        self.changed
    }

    /// The record, if it changed in this input (then forgotten).
    pub(crate) fn drain_changed(&mut self) -> Option<PageHolds> {
        std::mem::take(&mut self.changed).then(|| self.record.clone())
    }
}
