//! The world's side of two daemons on one store (`standby on`): which host leads, the
//! faults that hit the leader (its death, a pause that makes it a zombie, a cut between
//! it and the store) and their ends. The daemons' own side is `lease.rs`.

use crate::faults::{LeaderFault, LeaderFaultKind, Target};
use crate::ledger::SharedLedger;
use runtime::Disk;
use std::cell::RefCell;
use std::rc::Rc;

/// How long a daemon's supervisor waits before it restarts a daemon that stepped down.
pub const SUPERVISOR_RESTART_MS: u64 = 1_000;

/// A leader fault's end, due at a simulated ms.
#[derive(Clone, Copy, Debug)]
enum End {
    /// The paused host wakes: its links deliver what they held.
    Wake(Target),
    /// The store is in the host's reach again.
    Reach(Target),
}

/// The leader faults of a run, pending and in force.
pub struct Failover {
    /// Whether a standby runs beside the daemon.
    standby: bool,
    /// The scenario's leader faults not yet applied.
    pending: Vec<LeaderFault>,
    /// Every host name but the daemons' (what a paused daemon's links lead to).
    others: Vec<String>,
    /// Faults in force and when they end.
    ends: Vec<(u64, End)>,
}

impl Failover {
    /// The faults of a run with `standby` and `faults`; `others`: every host but the
    /// daemons.
    pub fn new(standby: bool, faults: &[LeaderFault], others: Vec<String>) -> Failover {
        Failover { standby, pending: faults.to_vec(), others, ends: Vec::new() }
    }

    /// The daemon host that holds the lease now (`Target::Daemon` without a standby).
    pub fn leader(&self, disk: &Rc<RefCell<Disk>>) -> Target {
        let standby = self.standby && disk.borrow().lease.holder.as_deref() == Some(Target::Standby.host());
        if standby { Target::Standby } else { Target::Daemon }
    }

    /// Whether no leader fault is pending or in force.
    pub fn calm(&self) -> bool {
        self.pending.is_empty() && self.ends.is_empty()
    }

    /// Applies the faults due by `now` and ends those over; returns the leader to kill,
    /// with how long it stays down, when a `kill` fired.
    pub fn step(
        &mut self,
        sim: &turmoil::Sim<'_>,
        disk: &Rc<RefCell<Disk>>,
        ledger: &SharedLedger,
        now: u64,
    ) -> Option<(Target, u64)> {
        let (over, ends): (Vec<_>, Vec<_>) = self.ends.iter().partition(|(at, _)| *at <= now);
        self.ends = ends;
        for (_, end) in over {
            match end {
                End::Wake(host) => {
                    for other in self.hosts_but(host) {
                        sim.release(host.host(), other.as_str());
                    }
                    ledger.borrow_mut().paused.remove(&host);
                    ledger.borrow_mut().trace(host.host(), "WAKES");
                }
                End::Reach(host) => {
                    disk.borrow_mut().cut.remove(host.host());
                    ledger.borrow_mut().trace(host.host(), "store in reach again");
                }
            }
        }
        let due = self.pending.iter().position(|f| f.at_ms <= now)?;
        let fault = self.pending.remove(due);
        let leader = self.leader(disk);
        let until = now + fault.length_ms;
        let mut l = ledger.borrow_mut();
        l.crashes.push(format!(
            "{:?} of the leader {} at t={now} for {} ms",
            fault.kind,
            leader.host(),
            fault.length_ms
        ));
        match fault.kind {
            LeaderFaultKind::Kill => return Some((leader, fault.length_ms)),
            LeaderFaultKind::Pause => {
                for other in self.hosts_but(leader) {
                    sim.hold(leader.host(), other.as_str());
                }
                l.paused.insert(leader, until);
                l.trace(leader.host(), "PAUSED");
                self.ends.push((until, End::Wake(leader)));
            }
            LeaderFaultKind::StoreCut => {
                disk.borrow_mut().cut.insert(leader.host().to_string());
                l.trace(leader.host(), "cut off from the store");
                self.ends.push((until, End::Reach(leader)));
            }
        }
        None
    }

    /// Every host but `daemon`: the other daemon and the rest.
    fn hosts_but(&self, daemon: Target) -> Vec<String> {
        let other = if daemon == Target::Daemon { Target::Standby } else { Target::Daemon };
        self.others.iter().cloned().chain([other.host().to_string()]).collect()
    }
}
