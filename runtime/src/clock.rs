//! The clock seam: the only way the shell learns the time or waits for it.

use engine::Timestamp;
use std::future::Future;

/// Where time comes from. The engine never reads it; the shell passes it in.
pub trait Clock {
    /// The current time.
    fn now(&self) -> Timestamp;
    /// Completes once `now() >= at`.
    fn sleep_until(&self, at: Timestamp) -> impl Future<Output = ()>;
}

/// A clock built on tokio's monotonic time, anchored at an epoch in milliseconds.
///
/// In the daemon the epoch is the wall clock read once at start (so timestamps are
/// real and never go backwards); under turmoil, tokio time is virtual and the epoch is
/// fixed, so a seed always sees the same timestamps.
#[derive(Clone, Debug)]
pub struct TokioClock {
    /// Milliseconds since the Unix epoch at `start`.
    epoch_ms: u64,
    /// The tokio instant that corresponds to `epoch_ms`.
    start: tokio::time::Instant,
}

impl TokioClock {
    /// A clock whose `now()` is `epoch_ms` at the moment of this call.
    pub fn new(epoch_ms: u64) -> TokioClock {
        TokioClock { epoch_ms, start: tokio::time::Instant::now() }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        let elapsed = tokio::time::Instant::now().saturating_duration_since(self.start);
        Timestamp(self.epoch_ms + elapsed.as_millis() as u64)
    }

    fn sleep_until(&self, at: Timestamp) -> impl Future<Output = ()> {
        let offset = std::time::Duration::from_millis(at.0.saturating_sub(self.epoch_ms));
        tokio::time::sleep_until(self.start + offset)
    }
}
