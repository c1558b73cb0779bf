//! A leased daemon's lease (`standby on`): standing by until the store's lease lapses,
//! taking the next epoch, renewing it, and stepping down when fenced or cut off, as the
//! Postgres store's daemons do (`docs/scale-out.md`, "The lease").

use crate::faults::Target;
use crate::ledger::SharedLedger;
use runtime::{Disk, MemStore, MemStoreError};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// How long a lease lives past its last renewal, by the disk's clock (`LEASE_TTL_MS`).
pub const LEASE_TTL_MS: u64 = 10_000;
/// How often the leader renews it (`LEASE_RENEW_MS`).
pub const LEASE_RENEW_MS: u64 = 2_000;
/// How often a standby reads it (`LEASE_POLL_MS`).
pub const LEASE_POLL_MS: u64 = 1_000;

/// Simulated ms since the start.
pub fn now_ms() -> u64 {
    turmoil::sim_elapsed().map_or(0, |d| d.as_millis() as u64)
}

/// A daemon's claim to lead: its store's epoch on the shared disk.
#[derive(Clone)]
pub struct Lead {
    /// The shared disk.
    pub disk: Rc<RefCell<Disk>>,
    /// The epoch the daemon writes under (0: a single daemon, nobody leases).
    pub epoch: u64,
}

impl Lead {
    /// Whether the disk's lease is still this daemon's epoch (always, for a single daemon).
    pub fn current(&self) -> bool {
        self.disk.borrow().lease.epoch == self.epoch
    }
}

/// Stands by until the lease is free (lapsed, or this host's own), takes the next epoch
/// and returns the store that writes under it.
pub async fn stand_by(disk: &Rc<RefCell<Disk>>, host: Target, ledger: &SharedLedger) -> MemStore {
    let mut standing = false;
    loop {
        let taken = disk.borrow_mut().take_lease(host.host(), now_ms(), LEASE_TTL_MS);
        match taken {
            Ok(epoch) => {
                ledger.borrow_mut().trace(host.host(), format!("lease taken: epoch {epoch}"));
                return MemStore::leased(disk.clone(), host.host());
            }
            Err(e) if !standing => {
                standing = true;
                ledger.borrow_mut().trace(host.host(), format!("standing by: {e}"));
            }
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(LEASE_POLL_MS)).await;
    }
}

/// The leader's renewals: every `LEASE_RENEW_MS`, push the lease's expiry. A renewal
/// refused by a newer epoch steps down at once; a leader that could not renew steps down
/// one renewal before its lease would lapse for the others (self-fencing: it stops
/// serving before a standby may take over). A paused host neither renews nor checks
/// until it wakes.
pub async fn keep(lead: Lead, host: Target, ledger: SharedLedger) {
    let mut renewed_ms = now_ms();
    loop {
        tokio::time::sleep(Duration::from_millis(LEASE_RENEW_MS)).await;
        let paused = ledger.borrow().paused.get(&host).copied();
        if let Some(until) = paused.filter(|until| *until > now_ms()) {
            tokio::time::sleep(Duration::from_millis(until - now_ms())).await;
        }
        let now = now_ms();
        let renewal = lead.disk.borrow_mut().renew_lease(host.host(), lead.epoch, now, LEASE_TTL_MS);
        match renewal {
            Ok(()) => renewed_ms = now,
            Err(e @ MemStoreError::Fenced { .. }) => return step_down(&ledger, host, format!("renewal refused: {e}")),
            Err(e) if now + LEASE_RENEW_MS >= renewed_ms + LEASE_TTL_MS => {
                return step_down(&ledger, host, format!("lease lost: no renewal since t={renewed_ms}: {e}"));
            }
            Err(_) => {}
        }
    }
}

/// The daemon stops serving and exits (the world ends the host; its supervisor restarts
/// it, as a standby unless the lease is free).
pub fn step_down(ledger: &SharedLedger, host: Target, why: String) {
    let mut l = ledger.borrow_mut();
    l.trace(host.host(), format!("STEP DOWN: {why}"));
    let line = format!("{} stepped down at t={}: {why}", host.host(), l.now_ms);
    l.step_downs.push(line);
    l.exits.push((host, why));
}
