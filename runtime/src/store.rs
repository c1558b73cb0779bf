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
    /// The lease that says which daemon may write (the simulator's model of the Postgres
    /// store's lease row); epoch 0 and no holder for a store nobody leases.
    pub lease: Lease,
    /// The epoch of every commit the disk accepted, in order (the fence's oracle input).
    pub commit_epochs: Vec<u64>,
    /// Every lease taken: (epoch, simulated ms, commits accepted before it).
    pub takes: Vec<LeaseTake>,
    /// Holders cut off from the disk (a partition between a daemon and its database):
    /// their takes, renewals and commits fail with [`MemStoreError::Unreachable`].
    pub cut: std::collections::BTreeSet<String>,
}

/// The lease row: who leads, under which epoch, until when (simulated ms, the disk's
/// clock: the daemons' clocks never decide who leads).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Bumped by every take; a store writes only while it is its own.
    pub epoch: u64,
    /// The daemon that took it last.
    pub holder: Option<String>,
    /// When it lapses unless renewed.
    pub expires_ms: u64,
}

/// One take of the lease, as the disk recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTake {
    /// The epoch taken.
    pub epoch: u64,
    /// When, simulated ms.
    pub at_ms: u64,
    /// How many commits the disk had accepted before it.
    pub commits_before: usize,
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

    /// Takes the next epoch for `holder` if the lease lapsed at `now_ms` or is its own
    /// (a restarted leader takes its lease back at once), for `ttl_ms`.
    pub fn take_lease(&mut self, holder: &str, now_ms: u64, ttl_ms: u64) -> Result<u64, MemStoreError> {
        self.reach(holder)?;
        let own = self.lease.holder.as_deref() == Some(holder);
        if !own && self.lease.holder.is_some() && now_ms < self.lease.expires_ms {
            return Err(MemStoreError::LeaseHeld { epoch: self.lease.epoch });
        }
        let epoch = self.lease.epoch + 1;
        self.lease = Lease { epoch, holder: Some(holder.to_string()), expires_ms: now_ms + ttl_ms };
        self.takes.push(LeaseTake { epoch, at_ms: now_ms, commits_before: self.commit_epochs.len() });
        Ok(epoch)
    }

    /// Renews `holder`'s lease of `epoch` until `now_ms + ttl_ms`; refused once another
    /// daemon took a newer epoch.
    pub fn renew_lease(&mut self, holder: &str, epoch: u64, now_ms: u64, ttl_ms: u64) -> Result<(), MemStoreError> {
        self.reach(holder)?;
        if self.lease.epoch != epoch {
            return Err(MemStoreError::Fenced { mine: epoch, current: self.lease.epoch });
        }
        self.lease.expires_ms = now_ms + ttl_ms;
        Ok(())
    }

    /// Fails when `holder` is cut off from the disk.
    fn reach(&self, holder: &str) -> Result<(), MemStoreError> {
        if self.cut.contains(holder) { Err(MemStoreError::Unreachable) } else { Ok(()) }
    }
}

/// An error of the simulated store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemStoreError {
    /// An injected I/O failure: the store is poisoned.
    InjectedFailure,
    /// The store failed before and refuses further writes.
    Poisoned,
    /// The fence: the disk's lease holds a newer epoch than this store's (another daemon
    /// took over); nothing was written, the store is poisoned.
    Fenced {
        /// The store's epoch.
        mine: u64,
        /// The disk's.
        current: u64,
    },
    /// Another daemon's lease is live: this one is a standby.
    LeaseHeld {
        /// The live lease's epoch.
        epoch: u64,
    },
    /// The disk is out of this daemon's reach (a partition): the store is poisoned.
    Unreachable,
}

impl std::fmt::Display for MemStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemStoreError::InjectedFailure => write!(f, "injected write failure"),
            MemStoreError::Poisoned => write!(f, "store is poisoned after an earlier failure"),
            MemStoreError::Fenced { mine, current } => {
                write!(f, "this store's epoch {mine} was fenced off by a newer writer (epoch {current})")
            }
            MemStoreError::LeaseHeld { epoch } => write!(f, "another daemon holds the lease (epoch {epoch})"),
            MemStoreError::Unreachable => write!(f, "the store is out of reach"),
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
    /// The lease epoch the store writes under (the disk's when it was opened).
    epoch: u64,
    /// The daemon that leases the disk, for a leased store.
    holder: Option<String>,
}

impl MemStore {
    /// A store over a (possibly non-empty) disk, writing under the disk's current epoch.
    pub fn open(disk: Rc<RefCell<Disk>>) -> MemStore {
        disk.borrow_mut().unsynced.clear();
        let epoch = disk.borrow().lease.epoch;
        MemStore { disk, poisoned: false, epoch, holder: None }
    }

    /// A store for `holder`, which just took the disk's lease ([`Disk::take_lease`]):
    /// its commits are fenced by that epoch and fail while the disk is out of its reach.
    pub fn leased(disk: Rc<RefCell<Disk>>, holder: &str) -> MemStore {
        MemStore { holder: Some(holder.to_string()), ..MemStore::open(disk) }
    }

    /// The lease epoch the store writes under.
    pub fn epoch(&self) -> u64 {
        self.epoch
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
        let reach = self.holder.as_deref().map_or(Ok(()), |h| disk.reach(h));
        // The fence: write only under the disk's current epoch.
        let fence = if disk.lease.epoch == self.epoch {
            reach
        } else {
            Err(MemStoreError::Fenced { mine: self.epoch, current: disk.lease.epoch })
        };
        if let Err(e) = fence {
            self.poisoned = true;
            return Err(e);
        }
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
        let epoch = self.epoch;
        disk.commit_epochs.push(epoch);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lapsed_lease_is_taken_and_the_old_epoch_is_fenced() {
        let disk = Rc::new(RefCell::new(Disk::default()));
        assert_eq!(disk.borrow_mut().take_lease("a", 0, 10), Ok(1));
        let mut a = MemStore::leased(disk.clone(), "a");
        assert_eq!(disk.borrow_mut().take_lease("b", 5, 10), Err(MemStoreError::LeaseHeld { epoch: 1 }));
        assert_eq!(a.commit(&[]), Ok(()));
        assert_eq!(disk.borrow_mut().take_lease("b", 10, 10), Ok(2));
        assert_eq!(a.commit(&[]), Err(MemStoreError::Fenced { mine: 1, current: 2 }));
        assert_eq!(a.commit(&[]), Err(MemStoreError::Poisoned));
        assert_eq!(disk.borrow_mut().renew_lease("a", 1, 11, 10), Err(MemStoreError::Fenced { mine: 1, current: 2 }));
        let mut b = MemStore::leased(disk.clone(), "b");
        assert_eq!(b.commit(&[]), Ok(()));
        assert_eq!(disk.borrow().commit_epochs, vec![1, 2]);
        let takes: Vec<(u64, usize)> = disk.borrow().takes.iter().map(|t| (t.epoch, t.commits_before)).collect();
        assert_eq!(takes, vec![(1, 0), (2, 1)]);
    }

    #[test]
    fn a_holder_cut_off_from_the_disk_can_neither_renew_nor_commit() {
        let disk = Rc::new(RefCell::new(Disk::default()));
        assert_eq!(disk.borrow_mut().take_lease("a", 0, 10), Ok(1));
        let mut a = MemStore::leased(disk.clone(), "a");
        disk.borrow_mut().cut.insert("a".into());
        assert_eq!(disk.borrow_mut().renew_lease("a", 1, 2, 10), Err(MemStoreError::Unreachable));
        assert_eq!(a.commit(&[]), Err(MemStoreError::Unreachable));
        assert_eq!(disk.borrow_mut().take_lease("a", 20, 10), Err(MemStoreError::Unreachable));
        assert!(disk.borrow().commit_epochs.is_empty());
    }

    #[test]
    fn an_unleased_store_writes_under_epoch_zero() {
        let mut store = MemStore::fresh();
        assert_eq!(store.commit(&[]), Ok(()));
        assert_eq!(store.epoch(), 0);
        assert_eq!(store.disk().borrow().commit_epochs, vec![0]);
    }
}
