//! The store seam, and `MemStore`: an in-memory store with a durability model.

use engine::event::Event;
use engine::ids::Cursor;
use engine::{Batch, Record, RecordKey};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Durable storage for the engine's records.
///
/// Contract (checked by [`crate::contract`] for every implementation): `commit` applies
/// all its batches or none, and returns only once they are durable; `load` returns the
/// latest record of every key ever committed, except that a store may return only the
/// most recent events (the engine keeps only those in memory, and the shell serves older
/// ones through `events_after`); `events_after` pages the whole event log by cursor. After any error the store is poisoned and the daemon must exit
/// and recover by reopening.
pub trait Store {
    /// The store's error.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Every stored record (the latest version per key; possibly only recent events).
    fn load(&mut self) -> Result<Vec<Record>, Self::Error>;
    /// Commits the batches atomically and durably.
    fn commit(&mut self, batches: &[Batch]) -> Result<(), Self::Error>;
    /// Events with a cursor above `after`, in cursor order, at most `limit`.
    fn events_after(&self, after: Cursor, limit: usize) -> Result<Vec<Event>, Self::Error>;
}

/// The simulated disk behind a [`MemStore`]. It survives a simulated crash (the
/// simulator keeps it outside the crashed host); whatever was not synced does not.
#[derive(Debug, Default)]
pub struct Disk {
    /// Synced state: the latest record per key.
    durable: BTreeMap<RecordKey, Record>,
    /// Written but not yet synced (dropped by a crash).
    unsynced: Vec<Batch>,
    /// Fail the next commit this many times (simulated I/O errors).
    pub fail_commits: u32,
    /// Commits so far (for coverage reports).
    pub commits: u64,
}

impl Disk {
    /// A crash: unsynced writes are lost (a partially written batch is lost whole:
    /// batches are atomic).
    pub fn crash(&mut self) {
        self.unsynced.clear();
    }

    /// Number of durable records.
    pub fn len(&self) -> usize {
        self.durable.len()
    }

    /// Whether nothing is durable.
    pub fn is_empty(&self) -> bool {
        self.durable.is_empty()
    }

    /// The durable record of a key.
    pub fn get(&self, key: &RecordKey) -> Option<&Record> {
        self.durable.get(key)
    }
}

/// An error of the simulated store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemStoreError {
    /// An injected I/O failure: the store is poisoned.
    InjectedFailure,
    /// The store failed before and refuses further writes.
    Poisoned,
}

impl std::fmt::Display for MemStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemStoreError::InjectedFailure => write!(f, "injected write failure"),
            MemStoreError::Poisoned => write!(f, "store is poisoned after an earlier failure"),
        }
    }
}

impl std::error::Error for MemStoreError {}

/// An in-memory store over a shared [`Disk`]: writes go to the unsynced area, then a
/// sync moves them to the durable map. A crash between the two loses them.
#[derive(Debug, Clone)]
pub struct MemStore {
    disk: Rc<RefCell<Disk>>,
    poisoned: bool,
}

impl MemStore {
    /// A store over a (possibly non-empty) disk.
    pub fn open(disk: Rc<RefCell<Disk>>) -> MemStore {
        disk.borrow_mut().unsynced.clear();
        MemStore { disk, poisoned: false }
    }

    /// A store over a fresh disk.
    pub fn fresh() -> MemStore {
        MemStore::open(Rc::new(RefCell::new(Disk::default())))
    }

    /// The disk, for the simulator's checks.
    pub fn disk(&self) -> Rc<RefCell<Disk>> {
        self.disk.clone()
    }
}

impl Store for MemStore {
    type Error = MemStoreError;

    fn load(&mut self) -> Result<Vec<Record>, MemStoreError> {
        Ok(self.disk.borrow().durable.values().cloned().collect())
    }

    fn commit(&mut self, batches: &[Batch]) -> Result<(), MemStoreError> {
        if self.poisoned {
            return Err(MemStoreError::Poisoned);
        }
        let mut disk = self.disk.borrow_mut();
        disk.unsynced.extend(batches.iter().cloned());
        if disk.fail_commits > 0 {
            disk.fail_commits -= 1;
            disk.unsynced.clear();
            self.poisoned = true;
            return Err(MemStoreError::InjectedFailure);
        }
        // Sync: every unsynced batch becomes durable at once.
        let unsynced = std::mem::take(&mut disk.unsynced);
        for batch in unsynced {
            for record in batch.records {
                disk.durable.insert(record.key(), record);
            }
        }
        disk.commits += 1;
        Ok(())
    }

    fn events_after(&self, after: Cursor, limit: usize) -> Result<Vec<Event>, MemStoreError> {
        let disk = self.disk.borrow();
        let from = RecordKey::Event(Cursor(after.0.saturating_add(1)));
        Ok(disk
            .durable
            .range(from..)
            .map_while(|(_, r)| match r {
                Record::Event(e) => Some(e.clone()),
                _ => None,
            })
            .take(limit)
            .collect())
    }
}
