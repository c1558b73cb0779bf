//! The lease's checks (two daemons on one store, `standby on`): no epoch but the newest
//! ever commits, and no daemon dispatches a command once a newer one took the lease.
//! Exactly once across a takeover (no prompt delivered twice, every acknowledged write
//! kept) is checked by every run's own checks (`ledger.rs`, `outcome.rs`), which read
//! the shared disk and the conversations whichever daemon led.

use runtime::LeaseTake;

/// A command a leased daemon sent an executor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// The daemon host that sent it.
    pub host: &'static str,
    /// The epoch it led under.
    pub epoch: u64,
    /// When, simulated ms.
    pub at_ms: u64,
    /// The command's idempotency key.
    pub key: String,
}

/// The fence held: every commit the disk accepted was written under the newest epoch
/// taken before it (`epochs`: the epoch of each commit, in order).
pub fn fence_held(epochs: &[u64], takes: &[LeaseTake]) -> Vec<String> {
    let mut broken = Vec::new();
    let mut newest = 0;
    let mut next_take = takes.iter().peekable();
    for (i, &epoch) in epochs.iter().enumerate() {
        while let Some(take) = next_take.next_if(|t| t.commits_before <= i) {
            newest = take.epoch;
        }
        if epoch != newest {
            broken.push(format!("commit #{} written under epoch {epoch}, but epoch {newest} led", i + 1));
        }
    }
    broken
}

/// No command left a daemon after a newer epoch's lease was taken: a fenced or cut-off
/// leader stops serving (a take in the same simulated millisecond as the dispatch is the
/// race of a command committed just before it, which the new leader loads and resends:
/// the executor's journal makes that resend harmless, and the delivery check proves it).
pub fn dispatches_led(dispatches: &[Dispatch], takes: &[LeaseTake]) -> Vec<String> {
    dispatches
        .iter()
        .filter_map(|d| {
            let newer = takes.iter().find(|t| t.epoch > d.epoch && t.at_ms < d.at_ms)?;
            Some(format!(
                "{} dispatched {} under epoch {} at t={}, after epoch {} was taken at t={}",
                d.host, d.key, d.epoch, d.at_ms, newer.epoch, newer.at_ms
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(epoch: u64, at_ms: u64, commits_before: usize) -> LeaseTake {
        LeaseTake { epoch, at_ms, commits_before }
    }

    #[test]
    fn a_stale_epochs_commit_breaks_the_fence() {
        let takes = [take(1, 0, 0), take(2, 50, 2)];
        assert!(fence_held(&[1, 1, 2, 2], &takes).is_empty());
        assert_eq!(fence_held(&[1, 1, 2, 1], &takes), vec!["commit #4 written under epoch 1, but epoch 2 led"]);
        assert!(fence_held(&[0, 0], &[]).is_empty(), "a single daemon writes under epoch 0");
    }

    #[test]
    fn a_dispatch_after_a_newer_take_is_stale() {
        let takes = [take(1, 0, 0), take(2, 50, 2)];
        let d = |epoch, at_ms| Dispatch { host: "daemon", epoch, at_ms, key: "k".into() };
        assert!(dispatches_led(&[d(1, 10), d(1, 50), d(2, 60)], &takes).is_empty());
        assert_eq!(
            dispatches_led(&[d(1, 51)], &takes),
            vec!["daemon dispatched k under epoch 1 at t=51, after epoch 2 was taken at t=50"]
        );
    }
}
