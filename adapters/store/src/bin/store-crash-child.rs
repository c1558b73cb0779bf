//! The kill -9 test's child: applies workload mutations through the real store and
//! prints one `ack N` line per mutation once its group commit returned.
//!
//! Usage: `store-crash-child DATA_DIR SEED`. On start it loads the store, finds how many
//! workload mutations are already applied (by the stored meta record), prints
//! `ready N`, and continues from there in groups of seeded random size (group commit),
//! until killed, until its stdout closes, or until a limit. It starts a checkpoint every
//! 1 KiB of group log (not 8 MiB), so that a background checkpoint runs during much of
//! its life and kills land inside checkpoints too. A store error is printed to
//! stderr and ends the process with exit code 2 (after checking that the poisoned store
//! refuses the next commit); a locked data directory ends it with exit code 3.

use engine::Record;
use runtime::Store;
use std::io::Write;
use std::process::ExitCode;
use store::workload::{CRASH_CHILD_GROUP_MUTATIONS_MAX, crash_child_workload};
use store::{Error, FjallStore, Options};

/// Mutations one process applies at most, so that a forgotten child ends by itself.
const MUTATIONS_COUNT_MAX: u64 = 200_000;
/// Group log bytes between checkpoints: small (the default is 8 MiB), so that a kill
/// lands inside a checkpoint as often as inside a commit.
const CHECKPOINT_LOG_BYTES: u64 = 1024;
/// Active group log bytes past which a commit waits for the checkpoint in flight: small
/// too, so that kills also land in commits that wait.
const LOG_BYTES_MAX: u64 = 4 * CHECKPOINT_LOG_BYTES;
/// Wall time one process runs at most, for the same reason.
const RUN_MS_MAX: u128 = 60_000;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(seed)) = (args.get(1), args.get(2).and_then(|s| s.parse::<u64>().ok())) else {
        eprintln!("usage: store-crash-child DATA_DIR SEED");
        return ExitCode::from(64);
    };
    let options =
        Options { checkpoint_log_bytes: CHECKPOINT_LOG_BYTES, log_bytes_max: LOG_BYTES_MAX, ..Options::default() };
    let mut store = match FjallStore::open_with(dir, options) {
        Ok(store) => store,
        Err(e @ Error::Locked { .. }) => {
            eprintln!("error: {e}");
            return ExitCode::from(3);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&mut store, seed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(first) => {
            eprintln!("error: {first}");
            let mut workload = crash_child_workload();
            match store.commit(&[workload.next_mutation()]) {
                Ok(()) => eprintln!("after the failure: the store accepted another commit"),
                Err(second) => eprintln!("after the failure: {second}"),
            }
            ExitCode::from(2)
        }
    }
}

fn run(store: &mut FjallStore, seed: u64) -> Result<(), Error> {
    let stored_meta = store.load()?.into_iter().find_map(|r| match r {
        Record::Meta(m) => Some(m),
        _ => None,
    });
    let mut workload = crash_child_workload();
    let mut applied = 0u64;
    if let Some(stored) = stored_meta {
        // Every workload mutation writes the meta record (it appends events), so the
        // stored meta names the last applied mutation.
        loop {
            applied += 1;
            let batch = workload.next_mutation();
            let meta = batch.records.iter().find_map(|r| match r {
                Record::Meta(m) => Some(*m),
                _ => None,
            });
            let meta = meta.expect("every workload mutation writes the meta record");
            if meta == stored {
                break;
            }
            assert!(meta.next_cursor <= stored.next_cursor, "the stored meta matches no workload mutation");
        }
    }
    let mut out = std::io::stdout().lock();
    if writeln!(out, "ready {applied}").and_then(|()| out.flush()).is_err() {
        return Ok(());
    }
    let mut rng = seed ^ 0x9e37_79b9_7f4a_7c15;
    let started = std::time::Instant::now();
    let mut done = 0;
    while done < MUTATIONS_COUNT_MAX && started.elapsed().as_millis() < RUN_MS_MAX {
        let group = 1 + splitmix(&mut rng) % CRASH_CHILD_GROUP_MUTATIONS_MAX;
        let batches: Vec<_> = (0..group).map(|_| workload.next_mutation()).collect();
        store.commit(&batches)?;
        for _ in 0..group {
            applied += 1;
            if writeln!(out, "ack {applied}").is_err() {
                return Ok(());
            }
        }
        if out.flush().is_err() {
            return Ok(());
        }
        done += group;
    }
    Ok(())
}

/// SplitMix64: a tiny seeded generator, enough for group sizes.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
