//! Admission: the connection caps (total and per remote IP). A connection past either is
//! refused; an admitted one holds its [`Admission`] until its socket is dropped.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The right to be open: a place under the total cap and one under the peer's cap.
/// Travels with the socket, through a WebSocket upgrade, until it is dropped.
#[derive(Debug)]
pub(crate) struct Admission {
    _total: OwnedSemaphorePermit,
    ip: IpAddr,
    gate: Arc<Gate>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut per_ip = self.gate.per_ip.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                per_ip.remove(&self.ip);
            }
        }
    }
}

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    Total,
    PerIp,
}

/// The connection caps.
#[derive(Debug)]
pub(crate) struct Gate {
    total: Arc<Semaphore>,
    total_max: usize,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
    per_ip_max: usize,
}

impl Gate {
    /// Caps of `total_max` connections at once, `per_ip_max` from one address.
    pub(crate) fn new(total_max: usize, per_ip_max: usize) -> Arc<Gate> {
        Arc::new(Gate {
            total: Arc::new(Semaphore::new(total_max)),
            total_max,
            per_ip: Mutex::new(HashMap::new()),
            per_ip_max,
        })
    }

    /// A place for a connection from `ip`, or why there is none.
    pub(crate) fn admit(self: &Arc<Gate>, ip: IpAddr) -> Result<Admission, Refusal> {
        let mut per_ip = self.per_ip.lock().unwrap_or_else(|p| p.into_inner());
        let n = per_ip.get(&ip).copied().unwrap_or(0);
        if n >= self.per_ip_max {
            return Err(Refusal::PerIp);
        }
        let total = self.total.clone().try_acquire_owned().map_err(|_| Refusal::Total)?;
        per_ip.insert(ip, n + 1);
        Ok(Admission { _total: total, ip, gate: self.clone() })
    }

    /// Completes once every admitted connection is gone.
    pub(crate) async fn drained(&self) {
        let _ = self.total.acquire_many(self.total_max as u32).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_counts_per_ip_and_in_total_and_frees_on_drop() {
        let gate = Arc::new(Gate {
            total: Arc::new(Semaphore::new(3)),
            total_max: 3,
            per_ip: Mutex::new(HashMap::new()),
            per_ip_max: 2,
        });
        let a: IpAddr = "10.0.0.1".parse().expect("ip");
        let b: IpAddr = "10.0.0.2".parse().expect("ip");
        let a1 = gate.admit(a).expect("first from a");
        let _a2 = gate.admit(a).expect("second from a");
        assert_eq!(gate.admit(a).err(), Some(Refusal::PerIp));
        let _b1 = gate.admit(b).expect("first from b");
        assert_eq!(gate.admit(b).err(), Some(Refusal::Total));
        drop(a1);
        assert!(gate.admit(b).is_ok(), "a freed place is free again");
        assert!(gate.per_ip.lock().expect("lock").get(&a).is_some_and(|n| *n == 1));
    }
}
