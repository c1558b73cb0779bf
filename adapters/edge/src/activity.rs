//! What moves on one connection ([`Activity`]): when a byte last moved, the requests in
//! flight (read by the pending pool to pick which connection to shed), and the requests
//! being answered (during which the idle timeout waits: a long poll holds its request
//! legitimately). Shared by the connection's socket and, as an extension, its requests.

use axum::extract::Request;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// What moves on one connection: when a byte last did, how many requests are in flight
/// and how many are being answered.
#[derive(Debug)]
pub struct Activity {
    /// Time origin of `last_ms`.
    base: Instant,
    /// When a byte last moved, in milliseconds after `base`.
    last_ms: AtomicU64,
    /// Requests whose answer is being worked on (marked by the route).
    answering: AtomicUsize,
    /// Requests handed to the router whose response has not been produced yet.
    in_flight: AtomicUsize,
}

impl Activity {
    pub(crate) fn new() -> Arc<Activity> {
        Arc::new(Activity {
            base: Instant::now(),
            last_ms: AtomicU64::new(0),
            answering: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
        })
    }

    pub(crate) fn touch(&self) {
        let now = self.base.elapsed().as_millis() as u64;
        self.last_ms.fetch_max(now, Ordering::Relaxed);
    }

    /// When a byte last moved (the connection's start if none has).
    pub(crate) fn last_moved(&self) -> Instant {
        self.base + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }

    /// Marks a request as being answered until the guard is dropped: the idle timeout
    /// does not run meanwhile (the client is waiting on us, not the other way round).
    pub fn answering(self: &Arc<Activity>) -> Answering {
        self.answering.fetch_add(1, Ordering::AcqRel);
        Answering(self.clone())
    }

    /// Whether a request is being answered now.
    pub(crate) fn is_answering(&self) -> bool {
        self.answering.load(Ordering::Acquire) > 0
    }

    /// Marks a request as in flight (from its head read to its response) until the
    /// guard is dropped.
    pub(crate) fn in_flight(self: &Arc<Activity>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// Whether a request is in flight now.
    pub(crate) fn is_busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }

    /// When the connection becomes idle past `idle`, unless a byte moves first.
    pub(crate) fn idle_deadline(&self, idle: Duration) -> Instant {
        self.last_moved() + idle
    }
}

/// A request being answered ([`Activity::answering`]).
#[derive(Debug)]
pub struct Answering(Arc<Activity>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.touch();
        let before = self.0.answering.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(before > 0, "one answering mark dropped twice");
    }
}

/// A request in flight ([`Activity::in_flight`]).
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let before = self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(before > 0, "one in-flight mark dropped twice");
    }
}

/// Marks `request` as being answered, when it came through the edge.
pub fn answering(request: &Request) -> Option<Answering> {
    request.extensions().get::<Arc<Activity>>().map(|a| a.answering())
}
