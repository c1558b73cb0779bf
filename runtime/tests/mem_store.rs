//! The store contract suite against the simulated store, plus its crash model.

use engine::Batch;
use runtime::contract::{Harness, check_all};
use runtime::{Disk, MemStore, Store};
use std::cell::RefCell;
use std::rc::Rc;

struct Mem;

impl Harness for Mem {
    type S = MemStore;
    fn fresh(&mut self) -> MemStore {
        MemStore::fresh()
    }
    fn reopen(&mut self, store: MemStore) -> MemStore {
        MemStore::open(store.disk())
    }
}

#[test]
fn mem_store_passes_the_contract() {
    check_all(&mut Mem);
}

#[test]
fn an_injected_failure_poisons_and_loses_only_the_failed_commit() {
    let disk = Rc::new(RefCell::new(Disk::default()));
    let mut store = MemStore::open(disk.clone());
    let record = engine::Record::Meta(engine::Meta::new(1));
    store.commit(&[Batch { records: vec![record.clone()] }]).expect("first commit");
    disk.borrow_mut().fail_commits = 1;
    let second = engine::Record::Meta(engine::Meta { next_run: 9, ..engine::Meta::new(1) });
    assert!(store.commit(&[Batch { records: vec![second] }]).is_err());
    assert!(store.commit(&[Batch { records: vec![] }]).is_err(), "poisoned stores refuse writes");
    let mut reopened = MemStore::open(disk);
    assert_eq!(reopened.load().expect("load"), vec![record], "the acknowledged write survives, the failed one is gone");
}
