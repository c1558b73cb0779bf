//! Store benchmark: durable mutations per second and latency with 1, 8 and 64 concurrent
//! callers on fjall and, side by side, on SQLite (WAL, `synchronous=FULL`); then recovery
//! time (open + load + `Engine::recover`) with 10,000 workers at 10k, 100k and 1M events,
//! with one mutation per commit (`-- single`), and the largest start the group log files
//! allow (`-- worst`).
//!
//! Run with `cargo bench -p store --bench commit`. Figures go to docs/benchmarks.md.
//!
//! Callers are tokio tasks on a two-worker runtime (the daemon's tool and executor handlers
//! are such tasks; one more row runs 64 OS threads instead) that each submit one engine
//! mutation (a `worker_progress` batch: worker record, event, meta) and wait for its
//! acknowledgement. One committer thread
//! takes whatever is queued (up to the shell's 256-input group) and commits it as one
//! fsynced write, the way the runtime shell groups inputs: only then are the callers in
//! the group acknowledged. Both backends get the same batches, the same envelope bytes
//! and the same committer.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use engine::{Batch, Engine, Record};
use runtime::Store;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use store::workload::Workload;
use store::{FjallStore, envelope, key};

/// Concurrent callers per configuration, and the mutations each configuration commits.
const CONFIGS: [(usize, usize); 3] = [(1, 10_000), (8, 40_000), (64, 160_000)];
/// Most mutations one group commit takes (the shell's `group_commit_inputs_max`).
const GROUP_MUTATIONS_MAX: usize = 256;
/// Workers the commit workload spreads its progress reports over.
const COMMIT_WORKERS_SPAWNED_PER_RUN: usize = 99;
/// History sizes of the recovery benchmark, in events: the 10k, 100k and 1M,
/// and the points between, because reopening replays fjall's active journal (up to
/// 64 MB before fjall rotates it) and the points show that cycle's worst case.
const RECOVERY_EVENTS: [u64; 11] =
    [10_000, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000, 1_000_000];
/// Runs and spawned workers per run of the recovery benchmark: 10 × (root + 999) workers.
const RECOVERY_RUNS: usize = 10;
const RECOVERY_SPAWNED_PER_RUN: usize = 999;
/// Mutations per commit while the recovery history is written.
const HISTORY_GROUP_MUTATIONS: usize = 1_000;
/// Timed recoveries per history size.
const RECOVERY_REPEATS: usize = 3;
/// Points of the one-mutation-per-commit recovery run, in commits. They were chosen to
/// cover a cycle of fjall's journal (rotated past 64 MB, about 200k such commits) when
/// commits went there; now they cover several cycles of the group log files
/// (a checkpoint every 8 MiB, about 36k such commits).
const SINGLE_RECOVERY_COMMITS: [u64; 6] = [40_000, 80_000, 120_000, 160_000, 200_000, 240_000];

/// A store as the benchmark's committer sees it.
trait Backend: Send + 'static {
    fn commit_group(&mut self, batches: &[Batch]);
}

impl Backend for FjallStore {
    fn commit_group(&mut self, batches: &[Batch]) {
        Store::commit(self, batches).expect("fjall commit");
    }
}

/// The same records in SQLite: two tables, the same keys and envelope bytes.
struct Sqlite {
    conn: rusqlite::Connection,
}

impl Sqlite {
    fn open(dir: &Path) -> Sqlite {
        let conn = rusqlite::Connection::open(dir.join("store.sqlite")).expect("open sqlite");
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).expect("wal");
        assert_eq!(mode, "wal");
        conn.pragma_update(None, "synchronous", "FULL").expect("synchronous=FULL");
        conn.execute_batch(
            "CREATE TABLE state (key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
             CREATE TABLE events (key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;",
        )
        .expect("schema");
        Sqlite { conn }
    }
}

impl Backend for Sqlite {
    fn commit_group(&mut self, batches: &[Batch]) {
        let tx = self.conn.transaction().expect("begin");
        {
            let mut state =
                tx.prepare_cached("INSERT OR REPLACE INTO state (key, value) VALUES (?1, ?2)").expect("prep");
            let mut events =
                tx.prepare_cached("INSERT OR REPLACE INTO events (key, value) VALUES (?1, ?2)").expect("prep");
            for record in batches.iter().flat_map(|b| &b.records) {
                let k = key::encode(record.key());
                let v = envelope::encode(record).expect("encode");
                let stmt = if key::is_event(record.key()) { &mut events } else { &mut state };
                stmt.execute((k.as_bytes(), v.as_slice())).expect("insert");
            }
        }
        tx.commit().expect("commit");
    }
}

/// One caller's request: a mutation and where to acknowledge it.
type Request = (Batch, Ack);

/// Where the committer acknowledges a mutation, by the kind of caller waiting for it.
enum Ack {
    /// A tokio task, as in the daemon (an MCP or bridge handler waiting for the engine thread).
    Task(tokio::sync::oneshot::Sender<()>),
    /// An OS thread.
    Thread(mpsc::SyncSender<()>),
}

/// What the callers are.
#[derive(Clone, Copy, PartialEq)]
enum Callers {
    /// Tasks on a two-worker tokio runtime, the daemon's shape: its tool and executor
    /// handlers are tasks that hand mutations to the engine thread and await the answer.
    Tasks,
    /// One OS thread per caller.
    Threads,
}

struct Outcome {
    per_second: f64,
    p50: Duration,
    p99: Duration,
    group_mean: f64,
    /// The store's own time per group commit (encode, write, fsync): median, 99th
    /// percentile and maximum.
    commit_p50: Duration,
    commit_p99: Duration,
    commit_max: Duration,
}

/// A workload past its setup (`runs` × (root + `spawned`) workers), the setup batches,
/// and then `count` progress mutations.
fn progress_batches(runs: usize, spawned: usize, count: usize) -> (Vec<Batch>, Vec<Batch>) {
    let mut w = Workload::new(3, runs, spawned);
    let setup = (0..w.setup_mutations()).map(|_| w.next_mutation()).collect();
    let progress = (0..count).map(|_| w.next_mutation()).collect();
    (setup, progress)
}

/// The committer: takes whatever is queued (up to a group), commits it, then
/// acknowledges every mutation of the group. Returns the time of each group commit.
fn committer<B: Backend>(mut backend: B, rx: mpsc::Receiver<Request>) -> Vec<Duration> {
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
        backend.commit_group(&batches);
        commits.push(t0.elapsed());
        for ack in acks {
            match ack {
                Ack::Task(tx) => tx.send(()).expect("caller waits"),
                Ack::Thread(tx) => tx.send(()).expect("caller waits"),
            }
        }
    }
    commits
}

/// Runs `shares` on `kind` callers; returns every caller's latencies and the wall time.
fn callers(kind: Callers, tx: mpsc::Sender<Request>, shares: Vec<Vec<Batch>>) -> (Vec<Duration>, Duration) {
    match kind {
        Callers::Tasks => {
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
                                tx.send((batch, Ack::Task(ack_tx))).expect("committer runs");
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
        Callers::Threads => {
            let start = Arc::new(Barrier::new(shares.len() + 1));
            let threads: Vec<_> = shares
                .into_iter()
                .map(|share| {
                    let (tx, start) = (tx.clone(), start.clone());
                    std::thread::spawn(move || {
                        let (ack_tx, ack_rx) = mpsc::sync_channel(1);
                        let mut latencies = Vec::with_capacity(share.len());
                        start.wait();
                        for batch in share {
                            let t0 = Instant::now();
                            tx.send((batch, Ack::Thread(ack_tx.clone()))).expect("committer runs");
                            ack_rx.recv().expect("acknowledged");
                            latencies.push(t0.elapsed());
                        }
                        latencies
                    })
                })
                .collect();
            drop(tx);
            start.wait();
            let t0 = Instant::now();
            let latencies = threads.into_iter().flat_map(|t| t.join().expect("caller")).collect();
            (latencies, t0.elapsed())
        }
    }
}

fn run<B: Backend>(mut backend: B, kind: Callers, callers_count: usize, count: usize) -> Outcome {
    let (setup, batches) = progress_batches(1, COMMIT_WORKERS_SPAWNED_PER_RUN, count);
    backend.commit_group(&setup);
    let (tx, rx) = mpsc::channel::<Request>();
    let committer = std::thread::spawn(move || committer(backend, rx));
    let mut shares: Vec<Vec<Batch>> =
        (0..callers_count).map(|_| Vec::with_capacity(count / callers_count + 1)).collect();
    for (i, b) in batches.into_iter().enumerate() {
        shares[i % callers_count].push(b);
    }
    let (mut latencies, wall) = callers(kind, tx, shares);
    let mut commits = committer.join().expect("committer");
    latencies.sort();
    commits.sort();
    let at = |v: &[Duration], q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    Outcome {
        per_second: count as f64 / wall.as_secs_f64(),
        p50: at(&latencies, 0.50),
        p99: at(&latencies, 0.99),
        group_mean: count as f64 / commits.len() as f64,
        commit_p50: at(&commits, 0.50),
        commit_p99: at(&commits, 0.99),
        commit_max: at(&commits, 1.0),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// Median fsync of a 4 KiB append in `dir`, for context.
fn fsync_p50(dir: &Path) -> Duration {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("fsync-probe")).expect("probe");
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

fn commit_benchmark() {
    let probe = tempfile::tempdir().expect("tempdir");
    println!("fdatasync of a 4 KiB append, median: {} ms", ms(fsync_p50(probe.path())));
    let (_, sample) = progress_batches(1, COMMIT_WORKERS_SPAWNED_PER_RUN, 1);
    let bytes: usize = sample[0].records.iter().map(|r| envelope::encode(r).expect("encode").len() + 9).sum();
    println!("one mutation: {} records, {bytes} bytes of keys and values", sample[0].records.len());
    println!();
    println!(
        "| callers | fjall mutations/s | fjall p50 ms | fjall p99 ms | fjall mean group | fjall commit p50 / p99 / max ms | SQLite mutations/s | SQLite p50 ms | SQLite p99 ms | SQLite mean group | SQLite commit p50 / p99 / max ms | fjall / SQLite |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let rows = CONFIGS.iter().map(|&(n, count)| (Callers::Tasks, n, count)).chain([(Callers::Threads, 64, 160_000)]);
    for (kind, callers, count) in rows {
        let dir = tempfile::tempdir().expect("tempdir");
        let fjall = run(FjallStore::open(dir.path()).expect("open fjall"), kind, callers, count);
        let dir = tempfile::tempdir().expect("tempdir");
        let sqlite = run(Sqlite::open(dir.path()), kind, callers, count);
        let label = if kind == Callers::Tasks { format!("{callers}") } else { format!("{callers} (OS threads)") };
        println!(
            "| {label} | {:.0} | {} | {} | {:.1} | {} / {} / {} | {:.0} | {} | {} | {:.1} | {} / {} / {} | {:.2} |",
            fjall.per_second,
            ms(fjall.p50),
            ms(fjall.p99),
            fjall.group_mean,
            ms(fjall.commit_p50),
            ms(fjall.commit_p99),
            ms(fjall.commit_max),
            sqlite.per_second,
            ms(sqlite.p50),
            ms(sqlite.p99),
            sqlite.group_mean,
            ms(sqlite.commit_p50),
            ms(sqlite.commit_p99),
            ms(sqlite.commit_max),
            fjall.per_second / sqlite.per_second
        );
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let e = e.expect("entry");
            let meta = e.metadata().expect("metadata");
            if meta.is_dir() { dir_bytes(&e.path()) } else { meta.len() }
        })
        .sum()
}

/// One timed start: the store's open, `load` and `Engine::recover`, in that order, and
/// the records `load` returned. Ordered by the total first, for medians.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Start {
    total: Duration,
    open: Duration,
    load: Duration,
    recover: Duration,
    loaded: usize,
}

/// Starts the store in `dir` [`RECOVERY_REPEATS`] times as after a crash (each run's store
/// closed, without a checkpoint, before the next opens), checking every recovered engine
/// against `live`. The runs in order, their median, and the last run's store, still open.
fn timed_starts(dir: &Path, live: &Engine) -> (Vec<Start>, Start, FjallStore) {
    let crash_like = || store::Options { checkpoint_on_close: false, ..store::Options::default() };
    let mut runs = Vec::new();
    let mut last = None;
    for _ in 0..RECOVERY_REPEATS {
        drop(last.take());
        let t0 = Instant::now();
        let mut s = FjallStore::open_with(dir, crash_like()).expect("open");
        let t1 = Instant::now();
        let records: Vec<Record> = s.load().expect("load");
        let loaded = records.len();
        let t2 = Instant::now();
        let engine = Engine::recover(live.config().clone(), records).expect("recover");
        let t3 = Instant::now();
        assert!(engine.durable_eq(live), "the recovered engine equals the live one");
        runs.push(Start { total: t3 - t0, open: t1 - t0, load: t2 - t1, recover: t3 - t2, loaded });
        last = Some(s);
    }
    let mut sorted = runs.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    (runs, median, last.expect("at least one run"))
}

/// Every run's total, in ms.
fn all_runs(runs: &[Start]) -> String {
    runs.iter().map(|r| ms(r.total)).collect::<Vec<_>>().join(" / ")
}

fn recovery_benchmark() {
    println!();
    println!(
        "| events | workers | records loaded | open ms | load ms | recover ms | total ms (median of {RECOVERY_REPEATS}) | all runs ms | of the open: pre-scan ms (journals + tables) | data dir MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut workload = Workload::new(5, RECOVERY_RUNS, RECOVERY_SPAWNED_PER_RUN);
    // Every close below stands for a crash: the group log is left as it is.
    let crash_like = || store::Options { checkpoint_on_close: false, ..store::Options::default() };
    let mut store = FjallStore::open_with(dir.path(), crash_like()).expect("open");
    let setup: Vec<Batch> = (0..workload.setup_mutations()).map(|_| workload.next_mutation()).collect();
    for chunk in setup.chunks(HISTORY_GROUP_MUTATIONS) {
        store.commit(chunk).expect("commit");
    }
    for target in RECOVERY_EVENTS {
        while workload.engine().last_cursor().0 < target {
            let group: Vec<Batch> = (0..HISTORY_GROUP_MUTATIONS).map(|_| workload.next_mutation()).collect();
            store.commit(&group).expect("commit");
        }
        drop(store);
        // The store's own checks before fjall opens (part of "open" above), timed alone
        // on the closed directory, before the timed opens: the journal scan and the
        // version and table checks.
        let db_path = dir.path().join("fjall");
        let prescan = {
            let mut times = Vec::new();
            for _ in 0..RECOVERY_REPEATS {
                let t = Instant::now();
                store::journal_scan::scan(&db_path).expect("journal scan");
                store::tree_scan::scan(&db_path, false).expect("tree scan").expect("intact tables");
                times.push(t.elapsed());
            }
            times.sort();
            times[times.len() / 2]
        };
        let (runs, Start { total, open, load, recover, loaded }, s) = timed_starts(dir.path(), workload.engine());
        store = s;
        println!(
            "| {} | {} | {loaded} | {} | {} | {} | {} | {} | {} | {:.0} |",
            workload.engine().last_cursor().0,
            workload.engine().workers().count(),
            ms(open),
            ms(load),
            ms(recover),
            ms(total),
            all_runs(&runs),
            ms(prescan),
            dir_bytes(dir.path()) as f64 / (1024.0 * 1024.0)
        );
    }
    // `store verify` on the largest directory: a private copy (links where it can), every
    // table file hashed whole, every record read back.
    drop(store);
    let t = Instant::now();
    let report = store::verify(dir.path()).expect("verify");
    assert!(report.intact, "{}", report.text);
    println!();
    println!("store verify of the {} MiB directory: {} ms", dir_bytes(dir.path()) / (1024 * 1024), ms(t.elapsed()));
}

/// Recovery when every group commit holds one mutation (one caller): the most journal
/// batches per byte, so the worst case of the journal's cycle.
fn single_recovery_benchmark() {
    println!();
    println!("one mutation per group commit:");
    println!(
        "| commits | events | open ms | load ms | recover ms | total ms (median of {RECOVERY_REPEATS}) | all runs ms | journal MiB | group log runs MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let dir = tempfile::tempdir().expect("tempdir");
    let crash_like = || store::Options { checkpoint_on_close: false, ..store::Options::default() };
    let mut workload = Workload::new(5, RECOVERY_RUNS, RECOVERY_SPAWNED_PER_RUN);
    let mut store = FjallStore::open_with(dir.path(), crash_like()).expect("open");
    let mut commits = 0;
    for target in SINGLE_RECOVERY_COMMITS {
        while commits < target {
            store.commit(&[workload.next_mutation()]).expect("commit");
            commits += 1;
        }
        drop(store);
        // Written journal bytes (fjall pre-allocates its files, so their length says less).
        let scan = store::journal_scan::scan(&dir.path().join("fjall")).expect("journal scan");
        let journal_bytes: u64 = scan.files.iter().map(|f| f.valid_end).sum();
        // What a start reads of the group log files: their runs.
        let log_bytes: u64 = store::log_file::LOG_FILE_NAMES
            .iter()
            .map(|name| store::log_file::read(&dir.path().join(name)).expect("read a log file").end)
            .sum();
        let (runs, Start { total, open, load, recover, .. }, s) = timed_starts(dir.path(), workload.engine());
        store = s;
        println!(
            "| {commits} | {} | {} | {} | {} | {} | {} | {:.0} | {:.1} |",
            workload.engine().last_cursor().0,
            ms(open),
            ms(load),
            ms(recover),
            ms(total),
            all_runs(&runs),
            journal_bytes as f64 / (1024.0 * 1024.0),
            log_bytes as f64 / (1024.0 * 1024.0)
        );
    }
}

/// The largest start of all, built on purpose: a crash that interrupted a checkpoint of a
/// full log file (8 MiB of one-mutation commits) while the other file had reached the
/// bound at which commits wait (16 MiB). Neither benchmark above reaches it, because
/// their checkpoints keep up; a daemon reaches it only if a checkpoint falls a whole log
/// behind and then the process dies.
fn worst_start_benchmark() {
    println!();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut workload = Workload::new(5, RECOVERY_RUNS, RECOVERY_SPAWNED_PER_RUN);
    // The older log: commits with no checkpoint until the first file holds 8 MiB.
    let no_checkpoint = store::Options {
        checkpoint_log_bytes: u64::MAX / 2,
        log_bytes_max: u64::MAX / 2,
        checkpoint_on_close: false,
        ..store::Options::default()
    };
    let mut store = FjallStore::open_with(dir.path(), no_checkpoint).expect("open");
    let mut commits = 0;
    while store.group_log_bytes() < store::CHECKPOINT_LOG_BYTES_DEFAULT {
        store.commit(&[workload.next_mutation()]).expect("commit");
        commits += 1;
    }
    let frozen_commits = commits;
    drop(store);
    // The newer log: frames written the way the store writes them into the second file,
    // up to the bound.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join(store::log_file::LOG_FILE_NAMES[1]))
        .expect("the second log file");
    let mut active_bytes = 0;
    while active_bytes < store::LOG_BYTES_MAX_DEFAULT {
        commits += 1;
        let batch = workload.next_mutation();
        let latest: std::collections::BTreeMap<_, _> = batch.records.iter().map(|r| (r.key(), r)).collect();
        let mut group = store::group_log::GroupWriter::new(commits);
        for (record_key, record) in latest {
            group.push(key::encode(record_key), &envelope::encode(record).expect("encode"));
        }
        let value = group.finish();
        use std::io::Write;
        file.write_all(&store::log_file::FRAME_MAGIC).expect("write");
        file.write_all(&(value.len() as u32).to_be_bytes()).expect("write");
        file.write_all(&value).expect("write");
        active_bytes += value.len() as u64;
    }
    file.sync_all().expect("sync");
    drop(file);
    store::mark::create(dir.path(), commits).expect("mark");
    // A start changes no file and no run commits: each finds the interrupted checkpoint.
    let (runs, Start { total, open, load, recover, .. }, s) = timed_starts(dir.path(), workload.engine());
    assert!(s.resumed_checkpoint(), "the start found the interrupted checkpoint");
    println!(
        "worst start: an interrupted checkpoint of {frozen_commits} one-mutation commits (8 MiB) under {} more (16 MiB): open {} ms, load {} ms, recover {} ms, total {} ms (median of {RECOVERY_REPEATS}; all runs {})",
        commits - frozen_commits,
        ms(open),
        ms(load),
        ms(recover),
        ms(total),
        all_runs(&runs)
    );
}

fn main() {
    // `cargo bench -p store --bench commit -- recovery` (or `-- commit`, `-- single`, `-- worst`)
    // runs one part; no filter runs them all.
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |part: &str| filter.is_empty() || filter.iter().any(|f| part.contains(f.as_str()));
    if wanted("commit") {
        commit_benchmark();
    }
    if wanted("recovery") {
        recovery_benchmark();
    }
    if wanted("single") {
        single_recovery_benchmark();
    }
    if wanted("worst") {
        worst_start_benchmark();
    }
}
