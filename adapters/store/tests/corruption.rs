//! Flipped bytes in a stopped store: every start is refused with a typed error and
//! changes no file, or serves everything that was acknowledged. Never served short.
//!
//! One data directory is built through the real store (a workload of runs, spawned
//! workers and progress reports in group commits, its memtables flushed to tables half
//! way so that tables and version files exist), then closed. For each sampled offset of
//! every class of file (journal head, middle, last batch and zero padding; tables;
//! version and manifest files; the mark) a copy gets one byte flipped and is opened.
//!
//! Seeded: every seed is printed. CI runs [`SEEDS_DEFAULT`]; `STORE_CORRUPTION_SEED=N`
//! runs (replays) seed N alone, `STORE_CORRUPTION_SEED=random` one seed drawn from the
//! clock, and `STORE_CORRUPTION_OFFSETS=K` samples K offsets per class (default 8).
//!
//! No damage may abort the process: lsm-tree asserts on what its open reads, and a panic
//! inside fjall's open aborts (its destructor unwraps a poisoned lock). The store's
//! pre-scan (`tree_scan`) refuses such files before fjall opens them; an abort here
//! fails the whole test binary, loudly.

use engine::event::Event;
use engine::ids::Cursor;
use engine::{Batch, Record};
use runtime::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use store::FjallStore;
use store::workload::Workload;

/// Offsets sampled per class unless `STORE_CORRUPTION_OFFSETS` says otherwise.
const OFFSETS_PER_CLASS_DEFAULT: usize = 8;
/// The seeds CI runs (fixed, so that a CI run is reproducible; set
/// `STORE_CORRUPTION_SEED` to explore others). 16 was the only one before the tree
/// pre-scan, when about 1 in 300 table or version offsets aborted the process.
const SEEDS_DEFAULT: [u64; 4] = [16, 1_000_003, 0x5EED_0FC0_FFEE, 77_777];
/// Largest group commit of the workload, in mutations.
const GROUP_MUTATIONS_MAX: u64 = 8;
/// Mutations before and after the flush.
const MUTATIONS_PER_PHASE: usize = 160;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn write_phase(dir: &Path, workload: &mut Workload, rng: &mut u64, options: store::Options) {
    let mut store = FjallStore::open_with(dir, options).expect("open the store");
    let mut written = 0;
    while written < MUTATIONS_PER_PHASE {
        let group = (1 + splitmix(rng) % GROUP_MUTATIONS_MAX) as usize;
        let batches: Vec<Batch> = (0..group).map(|_| workload.next_mutation()).collect();
        store.commit(&batches).expect("commit");
        written += group;
    }
}

/// Flushes both keyspaces' memtables into tables, so the directory has tables and
/// version files besides the journal.
fn flush(dir: &Path) {
    let db = fjall::Database::builder(dir.join("fjall")).open().expect("open fjall");
    for name in [store::KEYSPACE_STATE, store::KEYSPACE_EVENTS] {
        let ks = db.keyspace(name, fjall::KeyspaceCreateOptions::default).expect("keyspace");
        ks.rotate_memtable_and_wait().expect("flush");
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() { stack.push(path) } else { out.push(path) }
        }
    }
    out.sort();
    out
}

/// Asserts that a refused start left every file of the data directory as it was: the
/// same names, the same bytes, nothing removed and nothing made.
fn assert_unchanged(before: &BTreeMap<PathBuf, (u64, u64)>, after: &BTreeMap<PathBuf, (u64, u64)>, what: &str) {
    for (rel, hash) in before {
        match after.get(rel) {
            Some(h) => assert_eq!(h, hash, "{what}: a refused start changed {}", rel.display()),
            None => panic!("{what}: a refused start removed {}", rel.display()),
        }
    }
    for rel in after.keys() {
        assert!(before.contains_key(rel), "{what}: a refused start made {}", rel.display());
    }
}

/// Every file under `dir` by relative path, with a hash of its bytes.
fn hashes(dir: &Path) -> BTreeMap<PathBuf, (u64, u64)> {
    files(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read");
            let rel = p.strip_prefix(dir).expect("under dir").to_path_buf();
            (rel, (bytes.len() as u64, xxhash_rust::xxh3::xxh3_64(&bytes)))
        })
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// `store verify` on a directory whose start was refused: it must say so (not intact),
/// without aborting, and change nothing.
fn check_verify(dir: &Path, before: &BTreeMap<PathBuf, (u64, u64)>, what: &str) {
    let report = store::verify(dir).unwrap_or_else(|e| panic!("{what}: verify fails [{}] {e}", e.code()));
    assert!(!report.intact, "{what}: verify calls a refused store intact:\n{}", report.text);
    assert_unchanged(before, &hashes(dir), &format!("{what} (verify)"));
}

fn all_events(store: &FjallStore) -> Result<Vec<Event>, store::Error> {
    let mut events = Vec::new();
    let mut after = Cursor(0);
    loop {
        let page = store.events_after(after, 1_000)?;
        let Some(last) = page.last() else { return Ok(events) };
        after = last.cursor;
        events.extend(page);
    }
}

/// What a start serves: `load` and every event, as debug strings (records have no `Eq`).
fn served(store: &mut FjallStore) -> Result<(Vec<String>, Vec<String>), store::Error> {
    let loaded: Vec<Record> = store.load()?;
    let events = all_events(store)?;
    Ok((loaded.iter().map(|r| format!("{r:?}")).collect(), events.iter().map(|e| format!("{e:?}")).collect()))
}

#[derive(Debug, Default)]
struct Tally {
    tried: usize,
    refused_before_open: usize,
    refused_after_open: usize,
    served_intact: usize,
    read_error_later: usize,
}

#[test]
fn flipped_bytes_are_refused_unchanged_or_served_whole_never_short() {
    let seeds: Vec<u64> = match std::env::var("STORE_CORRUPTION_SEED") {
        Ok(s) if s == "random" => {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_nanos();
            vec![nanos as u64]
        }
        Ok(s) => vec![s.parse().expect("STORE_CORRUPTION_SEED is a u64 or `random`")],
        Err(_) => SEEDS_DEFAULT.to_vec(),
    };
    let per_class: usize = std::env::var("STORE_CORRUPTION_OFFSETS")
        .map(|s| s.parse().expect("STORE_CORRUPTION_OFFSETS is a count"))
        .unwrap_or(OFFSETS_PER_CLASS_DEFAULT);
    let started = std::time::Instant::now();
    let mut totals: BTreeMap<&str, Tally> = BTreeMap::new();
    for seed in &seeds {
        eprintln!(
            "corruption test: seed {seed} (replay with STORE_CORRUPTION_SEED={seed}), {per_class} offsets per class"
        );
        for (name, t) in run_seed(*seed, per_class) {
            let total = totals.entry(name).or_default();
            total.tried += t.tried;
            total.refused_before_open += t.refused_before_open;
            total.refused_after_open += t.refused_after_open;
            total.served_intact += t.served_intact;
            total.read_error_later += t.read_error_later;
        }
    }
    eprintln!("corruption test: seeds {seeds:?}, {:.1} s", started.elapsed().as_secs_f64());
    for (name, t) in &totals {
        eprintln!(
            "  {name}: {} tried, {} refused before open, {} refused at load, {} served intact, {} read error later",
            t.tried, t.refused_before_open, t.refused_after_open, t.served_intact, t.read_error_later
        );
    }
    let tried: usize = totals.values().map(|t| t.tried).sum();
    assert_eq!(tried, seeds.len() * per_class * totals.len(), "every class was sampled");
}

/// One seed: builds the directory, flips `per_class` bytes per class, one copy each.
fn run_seed(seed: u64, per_class: usize) -> BTreeMap<&'static str, Tally> {
    let mut rng = seed;
    let root = tempfile::tempdir().expect("tempdir");
    let pristine = root.path().join("pristine");
    let mut workload = Workload::new(7, 3, 8);
    // The first phase closes cleanly (checkpointed into the keyspaces: the log file's
    // frames are stale), the second as a crash leaves it (its frames are the only copy of
    // its records, written over the first phase's).
    write_phase(&pristine, &mut workload, &mut rng, store::Options::default());
    flush(&pristine);
    write_phase(
        &pristine,
        &mut workload,
        &mut rng,
        store::Options { checkpoint_on_close: false, ..Default::default() },
    );

    // The acknowledged data: what the intact directory serves.
    let reference = {
        let copy = root.path().join("reference");
        copy_tree(&pristine, &copy);
        let mut store = FjallStore::open(&copy).expect("the intact store opens");
        let reference = served(&mut store).expect("the intact store serves");
        assert!(store.commits() > 20, "the workload made its group commits");
        reference
    };
    assert!(reference.1.len() > MUTATIONS_PER_PHASE, "every mutation made an event");

    // Classes of files and offset ranges.
    let scan = store::journal_scan::scan(&pristine.join("fjall")).expect("scan");
    let mut classes: Vec<(&'static str, PathBuf, u64, u64)> = Vec::new();
    // fjall's journal holds little now (the format marker, memtable rotations): each
    // class where it has bytes.
    for file in &scan.files {
        let end = file.valid_end;
        if end >= 8 {
            classes.push(("journal head", file.path.clone(), 0, end.min(64)));
            classes.push(("journal middle", file.path.clone(), end / 4, end * 3 / 4));
            classes.push(("journal last batch", file.path.clone(), end.saturating_sub(48), end));
        }
        if file.len > end {
            classes.push(("journal padding", file.path.clone(), end, (end + 4096).min(file.len)));
        }
    }
    // The log files: the run of frames (the second phase's commits), and what follows
    // it (the first phase's stale frames, then zeros).
    for name in store::log_file::LOG_FILE_NAMES {
        let read = store::log_file::read(&pristine.join(name)).expect("read the log file");
        let end = read.end;
        if read.frames() > 0 {
            classes.push(("log head", read.path.clone(), 0, 64));
            classes.push(("log middle", read.path.clone(), end / 4, end * 3 / 4));
            classes.push(("log last frame", read.path.clone(), end - 48, end));
        }
        if read.len() > end {
            classes.push(("log after the run", read.path.clone(), end, (end + 4096).min(read.len())));
        }
    }
    for path in files(&pristine) {
        let rel = path.strip_prefix(&pristine).expect("under").to_string_lossy().into_owned();
        let len = std::fs::metadata(&path).expect("metadata").len();
        if len == 0 || rel.ends_with(".jnl") || rel.starts_with("group-log") || rel == "store.lock" {
            continue;
        }
        let class = if rel == "commits.mark" {
            "mark"
        } else if rel.ends_with("/current") {
            "version pointer (current)"
        } else if rel.contains("/tables/") {
            "table"
        } else {
            "version or manifest"
        };
        classes.push((class, path, 0, len));
    }
    for class in ["table", "version or manifest", "version pointer (current)", "mark", "log head", "log after the run"]
    {
        assert!(classes.iter().any(|c| c.0 == class), "the directory has a {class} file: {classes:?}");
    }

    // Sample `per_class` offsets per class name (over all its files).
    let names: Vec<&'static str> = {
        let mut n: Vec<&str> = classes.iter().map(|c| c.0).collect();
        n.dedup();
        n.sort();
        n.dedup();
        n
    };
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    for name in names {
        let members: Vec<&(&str, PathBuf, u64, u64)> = classes.iter().filter(|c| c.0 == name).collect();
        for trial in 0..per_class {
            let (_, path, from, to) = members[(splitmix(&mut rng) % members.len() as u64) as usize];
            let offset = from + splitmix(&mut rng) % (to - from);
            let mask = 1u8 << (splitmix(&mut rng) % 8);
            let rel = path.strip_prefix(&pristine).expect("under");
            let dir = root.path().join(format!("trial-{}-{trial}", name.replace(' ', "-")));
            copy_tree(&pristine, &dir);
            let target = dir.join(rel);
            let mut bytes = std::fs::read(&target).expect("read");
            bytes[offset as usize] ^= mask;
            std::fs::write(&target, &bytes).expect("write");
            let before = hashes(&dir);
            let what = format!("{name}: {} offset {offset} ^ {mask:#04x} (seed {seed})", rel.display());
            let tally = tallies.entry(name).or_default();
            tally.tried += 1;
            match FjallStore::open(&dir) {
                Err(error) => {
                    assert!(error.code().starts_with("STORE_"), "{what}: typed error {error}");
                    assert!(!error.to_string().is_empty());
                    eprintln!("  {what}: refused [{}] {error}", error.code());
                    assert_unchanged(&before, &hashes(&dir), &what);
                    check_verify(&dir, &before, &what);
                    tally.refused_before_open += 1;
                }
                Ok(mut store) => match store.load() {
                    Err(error) => {
                        eprintln!("  {what}: refused at load [{}] {error}", error.code());
                        drop(store);
                        assert_unchanged(&before, &hashes(&dir), &what);
                        check_verify(&dir, &before, &what);
                        tally.refused_after_open += 1;
                    }
                    Ok(loaded) => {
                        assert!(
                            !dir.join("fjall.before-open").exists(),
                            "{what}: a start that served left its links to the files before the open"
                        );
                        let loaded: Vec<String> = loaded.iter().map(|r| format!("{r:?}")).collect();
                        assert_eq!(loaded, reference.0, "{what}: the start served other state than was acknowledged");
                        match all_events(&store) {
                            Ok(events) => {
                                let events: Vec<String> = events.iter().map(|e| format!("{e:?}")).collect();
                                assert_eq!(
                                    events.len(),
                                    reference.1.len(),
                                    "{what}: served {} of {} events",
                                    events.len(),
                                    reference.1.len()
                                );
                                assert_eq!(events, reference.1, "{what}: served other events");
                                eprintln!("  {what}: served intact");
                                tally.served_intact += 1;
                            }
                            Err(error) => {
                                // Loud, not short: an old event's table block fails its
                                // checksum when it is read, and the store says so.
                                eprintln!("  {what}: read error later [{}] {error}", error.code());
                                tally.read_error_later += 1;
                            }
                        }
                    }
                },
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    tallies
}
