//! The store contract suite: one body, every backend (the simulated store here, fjall
//! in its adapter). A backend's tests call [`check_all`] with a [`Harness`].

use crate::store::Store;
use engine::ids::*;
use engine::input::Input;
use engine::op::Operation;
use engine::policy::{Mode, PolicyPatch};
use engine::{Batch, Effect, Engine, EngineConfig, Record, RecordKey, Timestamp};
use std::collections::BTreeMap;

/// How the suite gets stores of the backend under test.
pub trait Harness {
    /// The backend.
    type S: Store;
    /// A store over empty storage.
    fn fresh(&mut self) -> Self::S;
    /// Closes `store` and opens the same storage again.
    fn reopen(&mut self, store: Self::S) -> Self::S;
}

/// Runs every contract check; panics with the name of the first that fails.
pub fn check_all<H: Harness>(h: &mut H) {
    empty_store_loads_nothing(h);
    latest_record_per_key_wins(h);
    several_batches_commit_together(h);
    reopen_keeps_everything(h);
    events_page_by_cursor(h);
    engine_recovers_equal_from_the_store(h);
}

fn load_map<S: Store>(store: &mut S) -> BTreeMap<RecordKey, Record> {
    store.load().expect("load").into_iter().map(|r| (r.key(), r)).collect()
}

/// Drives a small engine scenario and returns the engine and its persisted batches.
fn scenario() -> (Engine, Vec<Batch>) {
    let mut engine = Engine::new(EngineConfig { seed: 3, ..EngineConfig::default() });
    let mut batches = Vec::new();
    let mut now = 1_000_000;
    let mut call = 0;
    let mut step = |engine: &mut Engine, input: Input, batches: &mut Vec<Batch>| {
        now += 1_000;
        engine.handle(Timestamp(now), input);
        while let Some(e) = engine.poll_effect() {
            if let Effect::Persist(b) = e {
                batches.push(b);
            }
        }
    };
    let mut op = |engine: &mut Engine, op: Operation, batches: &mut Vec<Batch>| {
        call += 1;
        step(engine, Input::Call { call: CallId(call), op }, batches);
    };
    op(
        &mut engine,
        Operation::RunCreate {
            task_name: "Contract".into(),
            root_conversation_name: "Root".into(),
            context: "x".repeat(10_000),
            default_policy: Some(PolicyPatch::mode(Mode::Auto)),
            root_executor: Default::default(),
        },
        &mut batches,
    );
    let root = WorkerId(1);
    for i in 0..5 {
        op(
            &mut engine,
            Operation::WorkerProgress { worker: root, summary: format!("step {i}"), commit: None },
            &mut batches,
        );
    }
    op(&mut engine, Operation::WorkerPause { worker: root, after_current_turn: false }, &mut batches);
    (engine, batches)
}

/// An empty store loads no record and no event.
pub fn empty_store_loads_nothing<H: Harness>(h: &mut H) {
    let mut s = h.fresh();
    assert!(s.load().expect("load").is_empty(), "contract: empty store loads nothing");
    assert!(s.events_after(Cursor(0), 10).expect("events").is_empty(), "contract: empty store has no events");
}

/// Later batches overwrite earlier records of the same key.
pub fn latest_record_per_key_wins<H: Harness>(h: &mut H) {
    let (_, batches) = scenario();
    let mut s = h.fresh();
    for b in &batches {
        s.commit(std::slice::from_ref(b)).expect("commit");
    }
    let mut expected = BTreeMap::new();
    for b in &batches {
        for r in &b.records {
            expected.insert(r.key(), r.clone());
        }
    }
    assert_eq!(load_map(&mut s), expected, "contract: load returns the latest record per key");
}

/// One commit of several batches applies them all, in order.
pub fn several_batches_commit_together<H: Harness>(h: &mut H) {
    let (_, batches) = scenario();
    let mut s = h.fresh();
    s.commit(&batches).expect("commit");
    let mut one_by_one = h.fresh();
    for b in &batches {
        one_by_one.commit(std::slice::from_ref(b)).expect("commit");
    }
    assert_eq!(load_map(&mut s), load_map(&mut one_by_one), "contract: a group commit equals commits one by one");
}

/// Closing and reopening loses nothing that was committed.
pub fn reopen_keeps_everything<H: Harness>(h: &mut H) {
    let (_, batches) = scenario();
    let mut s = h.fresh();
    s.commit(&batches).expect("commit");
    let before = load_map(&mut s);
    let mut s = h.reopen(s);
    assert_eq!(load_map(&mut s), before, "contract: reopen keeps every committed record");
    let mut s = h.reopen(s);
    assert_eq!(load_map(&mut s), before, "contract: a second reopen keeps every committed record");
}

/// Events come back in cursor order, paged, without gaps.
pub fn events_page_by_cursor<H: Harness>(h: &mut H) {
    let (engine, batches) = scenario();
    let mut s = h.fresh();
    s.commit(&batches).expect("commit");
    let last = engine.last_cursor().0;
    let first = s.events_after(Cursor(0), 3).expect("events");
    assert_eq!(first.iter().map(|e| e.cursor.0).collect::<Vec<_>>(), vec![1, 2, 3], "contract: first page");
    let rest = s.events_after(Cursor(3), 10_000).expect("events");
    let cursors: Vec<u64> = rest.iter().map(|e| e.cursor.0).collect();
    assert_eq!(cursors, (4..=last).collect::<Vec<_>>(), "contract: the rest, dense");
    assert!(s.events_after(Cursor(last), 10).expect("events").is_empty(), "contract: nothing after the last");
}

/// An engine recovered from the store equals the live one.
pub fn engine_recovers_equal_from_the_store<H: Harness>(h: &mut H) {
    let (engine, batches) = scenario();
    let mut s = h.fresh();
    for chunk in batches.chunks(3) {
        s.commit(chunk).expect("commit");
    }
    let mut s = h.reopen(s);
    let recovered = Engine::recover(engine.config().clone(), s.load().expect("load")).expect("recover");
    assert!(recovered.durable_eq(&engine), "contract: the recovered engine equals the live one");
}
