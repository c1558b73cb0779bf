//! The rate limits of `/oauth/token` and `/oauth/authorize`: one budget per registered
//! client (so that a flood under one `client_id` never starves another client) and one
//! shared by every request that names no registered client. Each budget allows a burst
//! and then one request per interval (the generic cell rate algorithm: one instant per
//! key, no timer); a request past it is refused with the time until the next would pass
//! (a `429` with `Retry-After`). Time is an argument, as in the rest of the authority.

use std::collections::BTreeMap;

/// Requests to `/oauth/token` one client may make at once before being paced.
pub const TOKEN_REQUESTS_BURST: u64 = 20;
/// Then one `/oauth/token` request per this many milliseconds per client.
pub const TOKEN_REQUEST_INTERVAL_MS: u64 = 1_000;
/// Requests to `/oauth/authorize` one client may make at once before being paced.
pub const AUTHORIZE_REQUESTS_BURST: u64 = 20;
/// Then one `/oauth/authorize` request per this many milliseconds per client.
pub const AUTHORIZE_REQUEST_INTERVAL_MS: u64 = 3_000;
/// Budgets remembered per endpoint; past it the fullest (those that would pass a whole
/// burst again) are forgotten first, which changes nothing for them.
pub const RATE_KEYS_MAX: usize = 256;
/// The budget key of requests that name no registered client.
pub const UNKNOWN_CLIENT_KEY: &str = "";

/// One endpoint's budgets.
#[derive(Debug)]
pub struct Rate {
    burst: u64,
    interval_ms: u64,
    /// Per key: the instant (Unix ms) at which its budget is whole again plus one
    /// interval, as the algorithm keeps it ("theoretical arrival time").
    due_ms: BTreeMap<String, u64>,
}

impl Rate {
    /// A burst of `burst` requests (at least 1), then one per `interval_ms`.
    pub fn new(burst: u64, interval_ms: u64) -> Rate {
        Rate { burst: burst.max(1), interval_ms, due_ms: BTreeMap::new() }
    }

    /// Counts a request under `key` at `now_ms`: `Err(wait_ms)` when it is over the budget
    /// (`wait_ms` until one would pass; the refused request is not counted).
    pub fn admit(&mut self, key: &str, now_ms: u64) -> Result<(), u64> {
        let tolerance_ms = self.interval_ms.saturating_mul(self.burst - 1);
        let due = self.due_ms.get(key).copied().unwrap_or(now_ms).max(now_ms);
        let ahead = due - now_ms;
        if ahead > tolerance_ms {
            return Err(ahead - tolerance_ms);
        }
        self.due_ms.insert(key.to_string(), due.saturating_add(self.interval_ms));
        if self.due_ms.len() > RATE_KEYS_MAX {
            // A key whose instant has passed has its whole burst again: forgetting it is free.
            self.due_ms.retain(|_, d| *d > now_ms);
            while self.due_ms.len() > RATE_KEYS_MAX {
                let fullest = self.due_ms.iter().min_by_key(|(_, d)| **d).map(|(k, _)| k.clone());
                match fullest {
                    Some(k) => self.due_ms.remove(&k),
                    None => break,
                };
            }
        }
        Ok(())
    }
}

/// Whole seconds for a `Retry-After` header: `wait_ms` rounded up, at least 1.
pub fn retry_after_s(wait_ms: u64) -> u64 {
    wait_ms.div_ceil(1_000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_per_interval_per_key() {
        let mut r = Rate::new(3, 1_000);
        for _ in 0..3 {
            assert_eq!(r.admit("a", 10_000), Ok(()));
        }
        assert_eq!(r.admit("a", 10_000), Err(1_000), "the burst is spent");
        assert_eq!(r.admit("b", 10_000), Ok(()), "another client has its own budget");
        assert_eq!(r.admit("a", 10_999), Err(1));
        assert_eq!(r.admit("a", 11_000), Ok(()), "one more per interval");
        assert_eq!(r.admit("a", 11_000), Err(1_000));
        // Quiet for long enough, the whole burst is back.
        for _ in 0..3 {
            assert_eq!(r.admit("a", 20_000), Ok(()));
        }
        assert_eq!(retry_after_s(1), 1);
        assert_eq!(retry_after_s(1_001), 2);
        assert_eq!(retry_after_s(0), 1);
    }

    #[test]
    fn budgets_stay_bounded_and_forgetting_a_full_one_changes_nothing() {
        let mut r = Rate::new(2, 1_000);
        for i in 0..(RATE_KEYS_MAX + 50) {
            assert_eq!(r.admit(&format!("k{i}"), 5_000 + i as u64 * 100), Ok(()));
        }
        assert!(r.due_ms.len() <= RATE_KEYS_MAX);
        let last = format!("k{}", RATE_KEYS_MAX + 49);
        let now = 5_000 + (RATE_KEYS_MAX as u64 + 49) * 100;
        assert_eq!(r.admit(&last, now), Ok(()));
        assert!(r.admit(&last, now).is_err(), "a recent key is still paced");
    }
}
