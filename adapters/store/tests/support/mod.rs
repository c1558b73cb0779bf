//! Helpers shared by the store's integration tests: reading back everything a store
//! holds and checking that it is exactly a prefix of the crash-child workload.

#![allow(dead_code, reason = "each test binary uses a different part of the helpers")]

use engine::event::Event;
use engine::ids::Cursor;
use engine::{Engine, Record, RecordKey};
use runtime::Store;
use std::collections::BTreeMap;
use std::path::Path;
use store::workload::{Workload, crash_child_workload};
use store::{FjallStore, KEYSPACE_EVENTS, KEYSPACE_STATE};

/// Events read per `events_after` page.
pub const EVENTS_PAGE_COUNT: usize = 1_000;

/// Every event in the store, paged by cursor.
pub fn all_events(store: &FjallStore) -> Vec<Event> {
    let mut events = Vec::new();
    let mut after = Cursor(0);
    loop {
        let page = store.events_after(after, EVENTS_PAGE_COUNT).expect("events_after");
        let Some(last) = page.last() else { return events };
        after = last.cursor;
        events.extend(page);
    }
}

/// What a store holds: every record of `load` plus every event, by key; and what `load`
/// returned, for recovery.
pub fn read_all(store: &mut FjallStore) -> (BTreeMap<RecordKey, Record>, Vec<Record>) {
    let loaded = store.load().expect("load");
    let mut all: BTreeMap<RecordKey, Record> = loaded.iter().map(|r| (r.key(), r.clone())).collect();
    let events = all_events(store);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.cursor.0, i as u64 + 1, "event cursors are dense from 1 (no gap before {})", e.cursor);
    }
    let meta = all.get(&RecordKey::Meta).map(|r| match r {
        Record::Meta(m) => *m,
        other => panic!("the meta key holds {other:?}"),
    });
    let next_cursor = meta.map_or(1, |m| m.next_cursor);
    assert_eq!(
        next_cursor,
        events.len() as u64 + 1,
        "the meta counter and the event log agree (no half-applied batch)"
    );
    for event in events {
        let key = RecordKey::Event(event.cursor);
        if let Some(loaded) = all.get(&key) {
            assert_eq!(loaded, &Record::Event(event.clone()), "load and events_after agree on {key:?}");
        }
        all.insert(key, Record::Event(event));
    }
    (all, loaded)
}

/// A workload and the records its first `applied` mutations leave behind.
pub struct Prefix {
    /// The generator, positioned after `applied` mutations.
    pub workload: Workload,
    /// Mutations applied.
    pub applied: u64,
    /// The latest record per key after them.
    pub records: BTreeMap<RecordKey, Record>,
}

impl Prefix {
    /// The empty prefix of the crash-child workload.
    pub fn crash_child() -> Prefix {
        Prefix { workload: crash_child_workload(), applied: 0, records: BTreeMap::new() }
    }

    /// Applies the next mutation and returns its batch.
    pub fn advance(&mut self) -> engine::Batch {
        let batch = self.workload.next_mutation();
        for r in &batch.records {
            self.records.insert(r.key(), r.clone());
        }
        self.applied += 1;
        batch
    }
}

/// Checks that the store holds exactly the first `m` mutations of the crash-child
/// workload for some `m` in `acked..=acked + slack`, that nothing else is there, and
/// that the engine recovers from it equal to the workload's engine. Returns `m`.
pub fn assert_crash_child_prefix(store: &mut FjallStore, acked: u64, slack: u64) -> u64 {
    let (stored, loaded) = read_all(store);
    let mut prefix = Prefix::crash_child();
    while prefix.applied < acked {
        prefix.advance();
    }
    loop {
        if prefix.records == stored {
            let engine = prefix.workload.engine();
            let recovered = Engine::recover(engine.config().clone(), loaded).expect("recover");
            assert!(
                recovered.durable_eq(engine),
                "the recovered engine equals the workload's after {}",
                prefix.applied
            );
            return prefix.applied;
        }
        assert!(
            prefix.applied < acked + slack,
            "the store is no prefix of the workload between {acked} (acknowledged) and {} mutations: {} records stored",
            acked + slack,
            stored.len()
        );
        prefix.advance();
    }
}

/// A store as the code before the group logs wrote it: records in `state` and `events`,
/// one fjall batch per commit with the commit counter (version 1), no log keyspace.
pub fn write_pre_group_log_store(dir: &Path, count: u64) -> Prefix {
    let mut prefix = Prefix::crash_child();
    std::fs::create_dir_all(dir).expect("data dir");
    store::mark::create(dir, 0).expect("mark");
    let db = fjall::Database::builder(dir.join("fjall")).open().expect("open fjall");
    let state = db.keyspace(KEYSPACE_STATE, fjall::KeyspaceCreateOptions::default).expect("state");
    let events = db.keyspace(KEYSPACE_EVENTS, fjall::KeyspaceCreateOptions::default).expect("events");
    for commit in 1..=count {
        let mut latest = std::collections::BTreeMap::new();
        for record in prefix.advance().records {
            latest.insert(record.key(), record);
        }
        let mut batch = db.batch().durability(Some(fjall::PersistMode::SyncAll));
        for (key, record) in &latest {
            let keyspace = if store::key::is_event(*key) { &events } else { &state };
            batch.insert(
                keyspace,
                store::key::encode(*key).as_bytes(),
                store::envelope::encode(record).expect("encode"),
            );
        }
        // The counter as those builds wrote it: version 1, then the count.
        let mut counter = vec![store::key::COMMITS_VALUE_VERSION_KEYSPACES];
        counter.extend_from_slice(&commit.to_be_bytes());
        batch.insert(&state, store::key::COMMITS_KEY, counter);
        batch.commit().expect("commit");
    }
    drop((state, events, db));
    store::mark::create(dir, count).expect("mark");
    prefix
}

/// SplitMix64: seeded choices for the tests.
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
