//! Typed identifiers: counters handed out by the engine, printed with a short prefix.
//!
//! Ids come from durable counters (never from a random source), so a replay or a
//! recovery produces the same ids in the same order.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

macro_rules! counter_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u64);

        impl $name {
            /// The printed prefix, e.g. `wrk` in `wrk-7`.
            pub const PREFIX: &'static str = $prefix;
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}-{}", $prefix, self.0)
            }
        }

        impl FromStr for $name {
            type Err = IdParseError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let digits = s
                    .strip_prefix($prefix)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .ok_or(IdParseError { expected: $prefix })?;
                if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(IdParseError { expected: $prefix });
                }
                digits.parse().map($name).map_err(|_| IdParseError { expected: $prefix })
            }
        }
    };
}

counter_id!(
    /// A run: one orchestrated objective with its `/root` and lanes.
    RunId, "run"
);
counter_id!(
    /// A logical worker: the durable job that outlives any conversation or turn.
    WorkerId, "wrk"
);
counter_id!(
    /// An execution attempt: one submitted turn (or mid-turn steer) of a worker.
    AttemptId, "exe"
);
counter_id!(
    /// A message between workers (or from the operator) kept in the control plane.
    MessageId, "msg"
);

/// Position in the durable event log; cursors are dense (no gaps) and start at 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Cursor(pub u64);

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Correlates a caller's operation with the engine's reply; chosen by the shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CallId(pub u64);

/// An executor (one browser extension instance), named by the executor itself.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ExecutorId(pub Arc<str>);

impl ExecutorId {
    /// Wraps an executor-chosen name.
    pub fn new(name: &str) -> ExecutorId {
        ExecutorId(Arc::from(name))
    }
}

impl fmt::Display for ExecutorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A command sent to an executor. Each attempt has exactly one command, re-sent unchanged
/// (same id, same idempotency key) when an executor reconnects without proof of receipt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CommandId {
    /// The execution attempt this command delivers.
    pub attempt: AttemptId,
}

impl fmt::Display for CommandId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cmd-{}", self.attempt.0)
    }
}

/// A malformed id string, e.g. `wrk-x` where `wrk-7` was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdParseError {
    /// The prefix the id should have started with.
    pub expected: &'static str,
}

impl fmt::Display for IdParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected an id of the form {}-<number>", self.expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_text() {
        let id = WorkerId(42);
        assert_eq!(id.to_string(), "wrk-42");
        assert_eq!("wrk-42".parse::<WorkerId>(), Ok(id));
        assert!("wrk-".parse::<WorkerId>().is_err());
        assert!("run-1".parse::<WorkerId>().is_err());
        assert!("wrk-1a".parse::<WorkerId>().is_err());
        assert!("wrk-99999999999999999999".parse::<WorkerId>().is_err());
    }
}
