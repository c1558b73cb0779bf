//! The simulated epoch: the wall-clock time every run starts at, fixed so that every seed
//! sees the same times. The daemon's clock, the pages' reset times, the CLI executor's
//! deadlines and the checkers all count from it.

/// The simulated epoch (2026-01-01T00:00:00Z), ms since the Unix epoch.
pub const EPOCH_MS: u64 = 1_767_225_600_000;
