//! Admission into the connection pools. Every connection starts *pending*: nothing on it
//! has proven itself yet (silent TCP, headers on their way, an upgrade before its `hello`).
//! A route *establishes* it once it authenticated the client there (the `/mcp` guard's
//! token, an executor's `hello`: [`Standing::establish`]); only pending connections are
//! ever shed. When the pending pool or the total cap is full, a new connection is admitted
//! by shedding the pending connection idle the longest (one without a request in flight
//! first); it is refused only when every place is held by established connections. The
//! per-address cap applies only to addresses that mean one client: never to loopback (every
//! local client shares it) nor to a configured trusted proxy (a tunnel's address); at the
//! cap, that address's own longest-idle pending connection is shed, or the new one refused.

use crate::activity::Activity;
use axum::extract::Request;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The caps the gate enforces ([`crate::EdgeLimits`] gives them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Caps {
    /// Connections open at once, pending and established together.
    pub(crate) total_max: usize,
    /// Pending connections open at once.
    pub(crate) pending_max: usize,
    /// Connections open at once from one client address.
    pub(crate) per_ip_max: usize,
    /// Addresses that carry many clients (no per-address cap), besides loopback.
    pub(crate) trusted_proxies: Vec<IpAddr>,
}

/// A pending connection, as the gate sees it.
#[derive(Debug)]
struct Pending {
    ip: IpAddr,
    activity: Arc<Activity>,
    shed: CancellationToken,
}

/// What is open now.
#[derive(Debug, Default)]
struct State {
    next_id: u64,
    pending: BTreeMap<u64, Pending>,
    established: BTreeSet<u64>,
    /// Open connections per client address (only addresses under the per-address cap).
    per_ip: HashMap<IpAddr, usize>,
}

impl State {
    fn open(&self) -> usize {
        self.pending.len() + self.established.len()
    }

    fn release_ip(&mut self, ip: IpAddr) {
        if let Some(n) = self.per_ip.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&ip);
            }
        }
    }

    /// The pending connection to shed among those `eligible`: idle ones (no request in
    /// flight) before busy ones, then the one whose last byte is oldest, then the oldest.
    fn victim(&self, eligible: impl Fn(&Pending) -> bool) -> Option<u64> {
        self.pending
            .iter()
            .filter(|(_, p)| eligible(p))
            .min_by_key(|(id, p)| (p.activity.is_busy(), p.activity.last_moved(), **id))
            .map(|(id, _)| *id)
    }
}

/// The right to be open: a place in one of the pools (and under the address's cap).
/// Travels with the socket, through a WebSocket upgrade, until it is dropped.
#[derive(Debug)]
pub(crate) struct Admission {
    id: u64,
    ip: IpAddr,
    /// Counted under the per-address cap.
    capped: bool,
    shed: CancellationToken,
    gate: Arc<Gate>,
}

impl Admission {
    /// Cancelled when the connection is shed: its socket then fails every read and write.
    pub(crate) fn shed_signal(&self) -> CancellationToken {
        self.shed.clone()
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut state = self.gate.lock();
        // A shed connection gave its place back when it was shed.
        if state.pending.remove(&self.id).is_some() || state.established.remove(&self.id) {
            if self.capped {
                state.release_ip(self.ip);
            }
            if state.open() == 0 {
                self.gate.drained.notify_waiters();
            }
        }
    }
}

/// A connection's standing, in its requests' extensions: the route that authenticated the
/// client on it establishes it, and it is never shed after that.
#[derive(Clone, Debug)]
pub struct Standing {
    id: u64,
    gate: Arc<Gate>,
}

impl Standing {
    /// Moves the connection from the pending pool to the established one (idempotent; a
    /// connection already shed or closed stays gone).
    pub fn establish(&self) {
        let mut state = self.gate.lock();
        if state.pending.remove(&self.id).is_some() {
            state.established.insert(self.id);
        }
    }
}

/// Establishes the connection `request` came on, when it came through the edge: for a
/// route that has just authenticated its client.
pub fn establish(request: &Request) {
    if let Some(standing) = request.extensions().get::<Standing>() {
        standing.establish();
    }
}

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Every place is held by established connections.
    Total,
    /// The client address is at its cap with no pending connection of its own to shed.
    PerIp,
}

/// Which cap made room by shedding a pending connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShedFor {
    /// The pending pool or the total cap.
    Pool,
    /// The client address's cap.
    Address,
}

/// An admitted connection: its place, its standing, and what was shed to make room.
#[derive(Debug)]
pub(crate) struct Admitted {
    pub(crate) admission: Admission,
    pub(crate) standing: Standing,
    pub(crate) shed: Vec<ShedFor>,
}

/// The connection pools.
#[derive(Debug)]
pub(crate) struct Gate {
    caps: Caps,
    state: Mutex<State>,
    drained: Notify,
}

impl Gate {
    /// A gate with these caps.
    pub(crate) fn new(caps: Caps) -> Arc<Gate> {
        Arc::new(Gate { caps, state: Mutex::new(State::default()), drained: Notify::new() })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `ip` means one client (under the per-address cap): not loopback, not a
    /// trusted proxy.
    fn is_client(&self, ip: IpAddr) -> bool {
        !ip.is_loopback() && !self.caps.trusted_proxies.contains(&ip)
    }

    /// A place for a new pending connection from `ip` whose activity is `activity`,
    /// shedding pending connections to make room, or why there is none.
    pub(crate) fn admit(self: &Arc<Gate>, ip: IpAddr, activity: Arc<Activity>) -> Result<Admitted, Refusal> {
        let ip = ip.to_canonical();
        let capped = self.is_client(ip);
        let mut state = self.lock();
        let mut shed = Vec::new();
        if capped && state.per_ip.get(&ip).copied().unwrap_or(0) >= self.caps.per_ip_max {
            let victim = state.victim(|p| p.ip == ip).ok_or(Refusal::PerIp)?;
            self.shed(&mut state, victim);
            shed.push(ShedFor::Address);
        }
        if state.open() >= self.caps.total_max || state.pending.len() >= self.caps.pending_max {
            let victim = state.victim(|_| true).ok_or(Refusal::Total)?;
            self.shed(&mut state, victim);
            shed.push(ShedFor::Pool);
        }
        state.next_id += 1;
        let id = state.next_id;
        let token = CancellationToken::new();
        state.pending.insert(id, Pending { ip, activity, shed: token.clone() });
        if capped {
            *state.per_ip.entry(ip).or_insert(0) += 1;
        }
        let admission = Admission { id, ip, capped, shed: token, gate: self.clone() };
        Ok(Admitted { admission, standing: Standing { id, gate: self.clone() }, shed })
    }

    /// Takes the pending connection `id` out of the pools and tells its socket to fail.
    fn shed(&self, state: &mut State, id: u64) {
        if let Some(p) = state.pending.remove(&id) {
            if self.is_client(p.ip) {
                state.release_ip(p.ip);
            }
            p.shed.cancel();
        }
    }

    /// Completes once every admitted connection is gone.
    pub(crate) async fn drained(&self) {
        loop {
            let notified = self.drained.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.lock().open() == 0 {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(total_max: usize, pending_max: usize, per_ip_max: usize, trusted: &[&str]) -> Arc<Gate> {
        let trusted_proxies = trusted.iter().map(|t| t.parse().expect("ip")).collect();
        Gate::new(Caps { total_max, pending_max, per_ip_max, trusted_proxies })
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    /// Admits a connection from `from`, a tick after the previous one (so that connections
    /// admitted later moved their last byte later).
    async fn admit(g: &Arc<Gate>, from: &str) -> Result<(Admitted, Arc<Activity>), Refusal> {
        tokio::time::advance(std::time::Duration::from_millis(1)).await;
        let activity = Activity::new();
        g.admit(ip(from), activity.clone()).map(|a| (a, activity))
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_pending_pool_sheds_its_longest_idle_connection_and_never_an_established_one() {
        let g = gate(4, 2, 4, &[]);
        let (established, _) = admit(&g, "127.0.0.1").await.expect("first");
        established.standing.establish();
        let (older, older_activity) = admit(&g, "127.0.0.1").await.expect("second");
        let (newer, _) = admit(&g, "127.0.0.1").await.expect("third");
        // The older pending connection moves a byte now: the newer one is idle the longest.
        tokio::time::advance(std::time::Duration::from_millis(1)).await;
        older_activity.touch();
        let (fourth, _) = admit(&g, "127.0.0.1").await.expect("admitted by shedding");
        assert_eq!(fourth.shed, vec![ShedFor::Pool]);
        assert!(newer.admission.shed.is_cancelled(), "the connection idle the longest is shed");
        assert!(!older.admission.shed.is_cancelled() && !established.admission.shed.is_cancelled());
        // Everything established: a new connection is refused, not shed into.
        older.standing.establish();
        fourth.standing.establish();
        let (last, _) = admit(&g, "127.0.0.1").await.expect("the place the shed one freed");
        last.standing.establish();
        assert_eq!(admit(&g, "127.0.0.1").await.err(), Some(Refusal::Total));
        drop(last);
        assert!(admit(&g, "127.0.0.1").await.is_ok(), "a closed connection frees its place");
    }

    #[tokio::test(start_paused = true)]
    async fn busy_pending_connections_are_shed_after_idle_ones() {
        let g = gate(8, 2, 8, &[]);
        let (busy, busy_activity) = admit(&g, "127.0.0.1").await.expect("busy");
        let _request = busy_activity.in_flight();
        let (idle, _) = admit(&g, "127.0.0.1").await.expect("idle");
        let (third, third_activity) = admit(&g, "127.0.0.1").await.expect("third");
        assert!(idle.admission.shed.is_cancelled() && !busy.admission.shed.is_cancelled());
        let _also = third_activity.in_flight();
        let (_fourth, _) = admit(&g, "127.0.0.1").await.expect("fourth");
        assert!(busy.admission.shed.is_cancelled(), "with no idle one left, the longest idle busy one goes");
        assert!(!third.admission.shed.is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn the_per_address_cap_applies_to_clients_only_and_sheds_their_own_connections() {
        let g = gate(16, 16, 2, &["10.0.0.9"]);
        let (a1, _) = admit(&g, "10.0.0.1").await.expect("a1");
        let (a2, _) = admit(&g, "10.0.0.1").await.expect("a2");
        let (b1, _) = admit(&g, "10.0.0.2").await.expect("b1");
        let (a3, _) = admit(&g, "10.0.0.1").await.expect("a3 sheds a1");
        assert_eq!(a3.shed, vec![ShedFor::Address]);
        assert!(a1.admission.shed.is_cancelled() && !b1.admission.shed.is_cancelled());
        a2.standing.establish();
        a3.standing.establish();
        assert_eq!(admit(&g, "10.0.0.1").await.err(), Some(Refusal::PerIp), "nothing of its own to shed");
        // IPv4-mapped addresses are the same client.
        assert_eq!(admit(&g, "::ffff:10.0.0.1").await.err(), Some(Refusal::PerIp));
        // Loopback and the trusted proxy have no per-address cap.
        let mut held = Vec::new();
        for from in ["127.0.0.1", "127.0.0.1", "127.0.0.1", "10.0.0.9", "10.0.0.9", "10.0.0.9", "::1"] {
            held.push(admit(&g, from).await.expect("uncapped"));
        }
        assert!(held.iter().all(|(a, _)| a.shed.is_empty()));
    }

    #[tokio::test(start_paused = true)]
    async fn drained_waits_for_the_last_connection() {
        let g = gate(4, 4, 4, &[]);
        let (a, _) = admit(&g, "127.0.0.1").await.expect("a");
        let (b, _) = admit(&g, "127.0.0.1").await.expect("b");
        b.standing.establish();
        let waiting = tokio::spawn({
            let g = g.clone();
            async move { g.drained().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(a);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "an established connection is still open");
        drop(b);
        waiting.await.expect("drained");
    }
}
