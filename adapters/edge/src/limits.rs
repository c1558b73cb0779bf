//! The edge's limits: timeouts and connection caps for every route on the listener, the
//! addresses exempt from the per-address cap, their defaults (`docs/limits.md`), and the
//! check that they can work together.

use std::net::IpAddr;

/// Default of [`EdgeLimits::header_read_timeout_ms`].
pub const HEADER_READ_TIMEOUT_MS_DEFAULT: u64 = 10_000;
/// Default of [`EdgeLimits::idle_timeout_ms`]: three times the executor heartbeat (20 s),
/// and the bridge's own silence limit, so that a live executor is never cut.
pub const IDLE_TIMEOUT_MS_DEFAULT: u64 = 60_000;
/// Default of [`EdgeLimits::body_read_timeout_ms`].
pub const BODY_READ_TIMEOUT_MS_DEFAULT: u64 = 30_000;
/// Default of [`EdgeLimits::connections_max`]: below the usual 1,024 open-file limit,
/// with room for the store's files.
pub const CONNECTIONS_MAX_DEFAULT: usize = 512;
/// Default of [`EdgeLimits::pending_connections_max`]: every place. Pending connections may
/// hold any place no established connection holds, and an established one never waits for
/// them: a new connection takes the place of an old enough pending one. A lower cap makes
/// lingering connections shed each other sooner, and then a flood of more than the cap
/// turns the pool over and queues every new connection in the listen backlog behind its
/// reconnections (measured in docs/benchmarks.md: a new connection's p50 went from
/// 200 ms to under a millisecond when the default went from half the places to all).
pub const PENDING_CONNECTIONS_MAX_DEFAULT: usize = CONNECTIONS_MAX_DEFAULT;
/// Default of [`EdgeLimits::connections_per_ip_max`]: for an address that is one client
/// (loopback and trusted proxies have no per-address cap).
pub const CONNECTIONS_PER_IP_MAX_DEFAULT: usize = 64;
/// A pending connection open for less than this many milliseconds is never shed: its
/// client has this long to send its request however fast a flood reconnects. When the
/// pools are full of younger ones, the accept loop waits (new connections queue in the
/// listen backlog), which bounds the pool's turnover at
/// `pending_connections_max / PENDING_SHED_AGE_MIN_MS` connections per millisecond.
pub const PENDING_SHED_AGE_MIN_MS: u64 = 250;
/// Connections the listen backlog holds while they wait for `accept` (the kernel caps it at
/// `net.core.somaxconn`, 4,096 on current Linux): room for a flood's reconnections queued
/// while the accept loop waits for a pending connection to come of age, so that a new
/// client's handshake is never dropped.
pub const LISTEN_BACKLOG: u32 = 4_096;
/// Repeated events at the edge (refusals, timeouts) are logged once per interval.
pub const LOG_SUMMARY_INTERVAL_MS: u64 = 10_000;

/// The edge's limits (`orchestrator serve --help` documents each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeLimits {
    /// A request's headers must arrive within this long of the connection waiting for it.
    pub header_read_timeout_ms: u64,
    /// A connection with no byte in either direction for this long, and no request being
    /// answered, is closed.
    pub idle_timeout_ms: u64,
    /// A request body must arrive whole within this long of its headers.
    pub body_read_timeout_ms: u64,
    /// Connections open at once, all peers together.
    pub connections_max: usize,
    /// Connections open at once that no route has established yet (before a request
    /// authenticated by its route, or an executor's `hello`); past it the longest idle of
    /// them is shed for a new one.
    pub pending_connections_max: usize,
    /// Connections open at once from one client address (not loopback, not a trusted proxy).
    pub connections_per_ip_max: usize,
    /// Addresses whose connections carry many clients (a tunnel's or proxy's): no
    /// per-address cap. Loopback never has one.
    pub trusted_proxies: Vec<IpAddr>,
}

impl Default for EdgeLimits {
    fn default() -> EdgeLimits {
        EdgeLimits {
            header_read_timeout_ms: HEADER_READ_TIMEOUT_MS_DEFAULT,
            idle_timeout_ms: IDLE_TIMEOUT_MS_DEFAULT,
            body_read_timeout_ms: BODY_READ_TIMEOUT_MS_DEFAULT,
            connections_max: CONNECTIONS_MAX_DEFAULT,
            pending_connections_max: PENDING_CONNECTIONS_MAX_DEFAULT,
            connections_per_ip_max: CONNECTIONS_PER_IP_MAX_DEFAULT,
            trusted_proxies: Vec::new(),
        }
    }
}

/// Why a limit value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// A timeout or a cap of zero would refuse everything.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// A cap on part of the connections is above the total cap.
    #[error("{name} ({value}) is above --connections-max ({total})")]
    AboveTotal {
        /// The flag of the cap.
        name: &'static str,
        /// Its value.
        value: usize,
        /// The total cap.
        total: usize,
    },
}

impl LimitsError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            LimitsError::Zero(_) => "LIMIT_ZERO",
            LimitsError::AboveTotal { .. } => "LIMIT_ABOVE_TOTAL",
        }
    }
}

impl EdgeLimits {
    /// Checks that the limits can work together.
    pub fn validate(&self) -> Result<(), LimitsError> {
        let named = [
            ("--header-read-timeout-ms", self.header_read_timeout_ms as usize),
            ("--idle-timeout-ms", self.idle_timeout_ms as usize),
            ("--body-read-timeout-ms", self.body_read_timeout_ms as usize),
            ("--connections-max", self.connections_max),
            ("--pending-connections-max", self.pending_connections_max),
            ("--connections-per-ip-max", self.connections_per_ip_max),
        ];
        if let Some((name, _)) = named.iter().find(|(_, v)| *v == 0) {
            return Err(LimitsError::Zero(name));
        }
        let parts = [
            ("--pending-connections-max", self.pending_connections_max),
            ("--connections-per-ip-max", self.connections_per_ip_max),
        ];
        if let Some((name, value)) = parts.into_iter().find(|(_, v)| *v > self.connections_max) {
            return Err(LimitsError::AboveTotal { name, value, total: self.connections_max });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked() {
        assert_eq!(EdgeLimits::default().validate(), Ok(()));
        let zero = EdgeLimits { idle_timeout_ms: 0, ..EdgeLimits::default() };
        assert_eq!(zero.validate(), Err(LimitsError::Zero("--idle-timeout-ms")));
        let odd = EdgeLimits { connections_max: 4, connections_per_ip_max: 5, ..EdgeLimits::default() };
        assert_eq!(odd.validate().map_err(|e| e.code()), Err("LIMIT_ABOVE_TOTAL"));
        let pending = EdgeLimits { connections_max: 100, ..EdgeLimits::default() };
        assert_eq!(
            pending.validate(),
            Err(LimitsError::AboveTotal { name: "--pending-connections-max", value: 512, total: 100 })
        );
    }
}
