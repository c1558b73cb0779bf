//! Time as the engine sees it: milliseconds handed in by the shell, never read from a clock.

use serde::{Deserialize, Serialize};

/// A point in time, in milliseconds since the Unix epoch, as given by the shell's clock seam.
///
/// The engine never reads a clock: every input carries `now`, and every deadline the
/// engine reports is a `Timestamp` the shell compares with its own clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// The timestamp `ms` milliseconds later, saturating instead of overflowing.
    pub fn plus_ms(self, ms: u64) -> Timestamp {
        Timestamp(self.0.saturating_add(ms))
    }

    /// Milliseconds from `earlier` to `self`, or zero when `earlier` is later.
    pub fn ms_since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// One second, in milliseconds.
pub const SECOND_MS: u64 = 1_000;
/// One minute, in milliseconds.
pub const MINUTE_MS: u64 = 60 * SECOND_MS;
/// One hour, in milliseconds.
pub const HOUR_MS: u64 = 60 * MINUTE_MS;
