//! fjall and Postgres side by side in one run (issue 32): durable mutations per second and
//! latency with 1, 8 and 64 concurrent callers on each store, then recovery time (open +
//! `load` + `Engine::recover`) from each at growing histories up to 1M events. PostgreSQL
//! is a throwaway server this benchmark starts (`store_pg::test_server`, fsync on, on the
//! same disk as fjall's temporary directory, over loopback TCP).
//!
//! Run with `cargo bench -p store-pg --bench side_by_side` (`-- commit` or `-- recovery`
//! runs one part; `ORCH_BENCH_EVENTS_MAX=300000` stops the recovery part earlier). Figures
//! go to docs/benchmarks.md.
//!
//! The harness is that of `adapters/store/benches/commit.rs`: callers are tokio tasks on a
//! two-worker runtime that each submit one engine mutation (a `worker_progress` batch:
//! worker record, event, meta) and wait for its acknowledgement; one committer thread takes
//! whatever is queued (up to the shell's 256-input group) and commits it through the
//! runtime's `Store::commit`, then acknowledges the group. Both stores get the same batches.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use engine::{Batch, Engine, Record};
use runtime::Store;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use store::FjallStore;
use store::workload::Workload;
use store_pg::PgStore;
use store_pg::test_server::TestServer;

/// Concurrent callers per configuration, and the mutations each configuration commits
/// (fewer than the fjall benchmark's: a Postgres commit costs a loopback round trip or
/// more per statement).
const CONFIGS: [(usize, usize); 3] = [(1, 3_000), (8, 12_000), (64, 48_000)];
/// Most mutations one group commit takes (the shell's `group_commit_inputs_max`).
const GROUP_MUTATIONS_MAX: usize = 256;
/// Workers the commit workload spreads its progress reports over.
const COMMIT_WORKERS_SPAWNED_PER_RUN: usize = 99;
/// History sizes of the recovery benchmark, in events (the 100k and 1M, and one
/// between).
const RECOVERY_EVENTS: [u64; 3] = [100_000, 300_000, 1_000_000];
/// The variable that stops the recovery part after the sizes up to it, in events.
const EVENTS_MAX_ENV: &str = "ORCH_BENCH_EVENTS_MAX";
/// Runs and spawned workers per run of the recovery benchmark: 10 × (root + 999) workers,
/// as in the fjall benchmark.
const RECOVERY_RUNS: usize = 10;
/// Spawned workers per run of the recovery benchmark.
const RECOVERY_SPAWNED_PER_RUN: usize = 999;
/// Mutations per commit while the recovery history is written.
const HISTORY_GROUP_MUTATIONS: usize = 1_000;
/// Timed recoveries per history size and store.
const RECOVERY_REPEATS: usize = 3;

/// One caller's request: a mutation and where to acknowledge it.
type Request = (Batch, tokio::sync::oneshot::Sender<()>);

/// What one configuration measured on one store.
struct Outcome {
    /// Acknowledged mutations per second of wall time.
    per_second: f64,
    /// Submit-to-acknowledgement latency, median.
    p50: Duration,
    /// Submit-to-acknowledgement latency, 99th percentile.
    p99: Duration,
    /// Mutations per group commit, mean.
    group_mean: f64,
    /// The store's own time per group commit, 99th percentile.
    commit_p99: Duration,
}

/// A workload past its setup (`runs` × (root + `spawned`) workers), the setup batches,
/// and then `count` progress mutations.
fn progress_batches(count: usize) -> (Vec<Batch>, Vec<Batch>) {
    let mut w = Workload::new(3, 1, COMMIT_WORKERS_SPAWNED_PER_RUN);
    let setup = (0..w.setup_mutations()).map(|_| w.next_mutation()).collect();
    let progress = (0..count).map(|_| w.next_mutation()).collect();
    (setup, progress)
}

/// The committer: takes whatever is queued (up to a group), commits it, then acknowledges
/// every mutation of the group. Returns the time of each group commit.
fn committer<S: Store>(mut store: S, rx: mpsc::Receiver<Request>) -> Vec<Duration> {
    let mut commits = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < GROUP_MUTATIONS_MAX {
            match rx.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        let (batches, acks): (Vec<Batch>, Vec<_>) = group.into_iter().unzip();
        let t0 = Instant::now();
        store.commit(&batches).expect("commit");
        commits.push(t0.elapsed());
        for ack in acks {
            ack.send(()).expect("caller waits");
        }
    }
    commits
}

/// Runs `shares` on tokio task callers; returns every caller's latencies and the wall time.
fn callers(tx: mpsc::Sender<Request>, shares: Vec<Vec<Batch>>) -> (Vec<Duration>, Duration) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("runtime");
    rt.block_on(async move {
        let start = Arc::new(tokio::sync::Barrier::new(shares.len() + 1));
        let tasks: Vec<_> = shares
            .into_iter()
            .map(|share| {
                let (tx, start) = (tx.clone(), start.clone());
                tokio::spawn(async move {
                    let mut latencies = Vec::with_capacity(share.len());
                    start.wait().await;
                    for batch in share {
                        let t0 = Instant::now();
                        let (ack_tx, ack_rx) = tokio::sync::oneshot::channel();
                        tx.send((batch, ack_tx)).expect("committer runs");
                        ack_rx.await.expect("acknowledged");
                        latencies.push(t0.elapsed());
                    }
                    latencies
                })
            })
            .collect();
        drop(tx);
        start.wait().await;
        let t0 = Instant::now();
        let mut latencies = Vec::new();
        for task in tasks {
            latencies.extend(task.await.expect("caller"));
        }
        (latencies, t0.elapsed())
    })
}

/// `count` progress mutations from `callers_count` callers on `store`.
fn run<S: Store + Send + 'static>(mut store: S, callers_count: usize, count: usize) -> Outcome {
    let (setup, batches) = progress_batches(count);
    store.commit(&setup).expect("setup");
    let (tx, rx) = mpsc::channel::<Request>();
    let committer = std::thread::spawn(move || committer(store, rx));
    let mut shares: Vec<Vec<Batch>> =
        (0..callers_count).map(|_| Vec::with_capacity(count / callers_count + 1)).collect();
    for (i, b) in batches.into_iter().enumerate() {
        shares[i % callers_count].push(b);
    }
    let (mut latencies, wall) = callers(tx, shares);
    let mut commits = committer.join().expect("committer");
    latencies.sort();
    commits.sort();
    let at = |v: &[Duration], q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    Outcome {
        per_second: count as f64 / wall.as_secs_f64(),
        p50: at(&latencies, 0.50),
        p99: at(&latencies, 0.99),
        group_mean: count as f64 / commits.len() as f64,
        commit_p99: at(&commits, 0.99),
    }
}

/// Milliseconds with three decimals.
fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// Median `fdatasync` of a 4 KiB append in a temporary directory, for context: the bound
/// of one caller's durable commits on this disk.
fn fsync_p50() -> Duration {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut f = std::fs::File::create(dir.path().join("fsync-probe")).expect("probe");
    let mut times: Vec<Duration> = (0..500)
        .map(|_| {
            f.write_all(&[7u8; 4096]).expect("write");
            let t0 = Instant::now();
            f.sync_data().expect("fdatasync");
            t0.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// The commit part: one row per caller count, fjall then Postgres (a fresh database each).
fn commit_benchmark(server: &TestServer) {
    println!("fdatasync of a 4 KiB append, median: {} ms", ms(fsync_p50()));
    println!(
        "| callers | fjall mutations/s | fjall p50 / p99 ms | fjall mean group | fjall commit p99 ms | Postgres mutations/s | Postgres p50 / p99 ms | Postgres mean group | Postgres commit p99 ms | Postgres / fjall |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (callers, count) in CONFIGS {
        let dir = tempfile::tempdir().expect("tempdir");
        let fjall = run(FjallStore::open(dir.path()).expect("open fjall"), callers, count);
        let pg = run(PgStore::open(&server.fresh_database()).expect("open postgres"), callers, count);
        println!(
            "| {callers} | {:.0} | {} / {} | {:.1} | {} | {:.0} | {} / {} | {:.1} | {} | {:.2} |",
            fjall.per_second,
            ms(fjall.p50),
            ms(fjall.p99),
            fjall.group_mean,
            ms(fjall.commit_p99),
            pg.per_second,
            ms(pg.p50),
            ms(pg.p99),
            pg.group_mean,
            ms(pg.commit_p99),
            pg.per_second / fjall.per_second
        );
    }
}

/// One timed recovery: total, open, load and recover time, and the records loaded.
type Timed = (Duration, Duration, Duration, Duration, usize);

/// Opens a store with `open`, loads it and recovers the engine: the times, the engine and
/// the store.
fn recover_once<S: Store>(open: impl FnOnce() -> S, config: &engine::EngineConfig) -> (Timed, Engine, S) {
    let t0 = Instant::now();
    let mut store = open();
    let t1 = Instant::now();
    let records: Vec<Record> = store.load().expect("load");
    let loaded = records.len();
    let t2 = Instant::now();
    let engine = Engine::recover(config.clone(), records).expect("recover");
    let t3 = Instant::now();
    ((t3 - t0, t1 - t0, t2 - t1, t3 - t2, loaded), engine, store)
}

/// The recovery part: one history written to both stores alike, timed at each size.
fn recovery_benchmark(server: &TestServer) {
    let events_max: u64 = std::env::var(EVENTS_MAX_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(u64::MAX);
    println!();
    println!(
        "| events | store | records loaded | open ms | load ms | recover ms | total ms (median of {RECOVERY_REPEATS}) | all runs ms | history written s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let dir = tempfile::tempdir().expect("tempdir");
    let url = server.fresh_database();
    let mut workload = Workload::new(5, RECOVERY_RUNS, RECOVERY_SPAWNED_PER_RUN);
    let mut fjall = Some(FjallStore::open(dir.path()).expect("open fjall"));
    let mut pg = Some(PgStore::open(&url).expect("open postgres"));
    let mut written = [Duration::ZERO; 2];
    let setup: Vec<Batch> = (0..workload.setup_mutations()).map(|_| workload.next_mutation()).collect();
    for chunk in setup.chunks(HISTORY_GROUP_MUTATIONS) {
        fjall.as_mut().expect("fjall").commit(chunk).expect("commit");
        pg.as_mut().expect("postgres").commit(chunk).expect("commit");
    }
    for target in RECOVERY_EVENTS.into_iter().filter(|&t| t <= events_max) {
        while workload.engine().last_cursor().0 < target {
            let group: Vec<Batch> = (0..HISTORY_GROUP_MUTATIONS).map(|_| workload.next_mutation()).collect();
            let t = Instant::now();
            fjall.as_mut().expect("fjall").commit(&group).expect("commit");
            written[0] += t.elapsed();
            let t = Instant::now();
            pg.as_mut().expect("postgres").commit(&group).expect("commit");
            written[1] += t.elapsed();
        }
        let config = workload.engine().config().clone();
        let events = workload.engine().last_cursor().0;
        for (name, i) in [("fjall", 0), ("Postgres", 1)] {
            // Closed as after a crash (nothing flushed); the last of the timed opens stays
            // open for the next size's history.
            let mut runs = Vec::new();
            for _ in 0..RECOVERY_REPEATS {
                let (run, engine) = if i == 0 {
                    drop(fjall.take());
                    let (run, engine, s) = recover_once(|| FjallStore::open(dir.path()).expect("open"), &config);
                    fjall = Some(s);
                    (run, engine)
                } else {
                    drop(pg.take());
                    let (run, engine, s) = recover_once(|| PgStore::open(&url).expect("open"), &config);
                    pg = Some(s);
                    (run, engine)
                };
                assert!(engine.durable_eq(workload.engine()), "the recovered engine equals the live one");
                runs.push(run);
            }
            let mut sorted = runs.clone();
            sorted.sort();
            let (total, open, load, recover, loaded) = sorted[sorted.len() / 2];
            let all: Vec<String> = runs.iter().map(|r| ms(r.0)).collect();
            println!(
                "| {events} | {name} | {loaded} | {} | {} | {} | {} | {} | {:.1} |",
                ms(open),
                ms(load),
                ms(recover),
                ms(total),
                all.join(" / "),
                written[i].as_secs_f64()
            );
        }
    }
}

fn main() {
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |part: &str| filter.is_empty() || filter.iter().any(|f| part.contains(f.as_str()));
    let server = TestServer::start();
    println!("PostgreSQL: {}", server.version());
    if wanted("commit") {
        commit_benchmark(&server);
    }
    if wanted("recovery") {
        recovery_benchmark(&server);
    }
}
