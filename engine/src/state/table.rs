//! Durable tables that remember what changed: the rows of runs, workers, attempts and
//! messages, each keyed by a dense id, and the ids changed by the input being handled.
//!
//! A row changes only through the table (`get_mut`, `insert`, `mark`), and each of those
//! records its id, so every change reaches the input's `Persist` batch (and, for a
//! worker, its timer is recomputed) without the rule that made it having to remember.
//! Read with `get` or indexing; ask for `get_mut` only on the path that changes the row:
//! a mutable borrow that changes nothing still rewrites the row.
//!
//! The id lists may repeat ids (they are sorted and deduplicated when the input
//! finishes) and keep their capacity between inputs, so the hot path does not allocate.

use crate::dense::{DenseKey, DenseMap, settle};
use crate::ids::WorkerId;
use crate::model::{Intent, Worker, WorkerSpec};
use std::sync::Arc;

/// Rows keyed by dense ids, with the ids changed since the last batch.
#[derive(Clone, Debug)]
pub(crate) struct Table<K, V> {
    rows: DenseMap<K, V>,
    /// Rows changed by the input being handled, in no order, maybe repeated.
    changed: Vec<K>,
}

impl<K, V> Default for Table<K, V> {
    fn default() -> Self {
        Table { rows: DenseMap::default(), changed: Vec::new() }
    }
}

/// Equal rows (what recovery must reproduce); the changed ids are bookkeeping.
impl<K: DenseKey, V: PartialEq> PartialEq for Table<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.rows == other.rows
    }
}

impl<K: DenseKey, V: Eq> Eq for Table<K, V> {}

impl<K: DenseKey + Ord, V> Table<K, V> {
    /// The row of an id.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.rows.get(key)
    }

    /// Whether the id has a row.
    pub fn contains_key(&self, key: &K) -> bool {
        self.rows.contains_key(key)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Rows in id order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.rows.values()
    }

    /// The row of an id, to change it: the row is written in this input's batch.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let row = self.rows.get_mut(key)?;
        self.changed.push(*key);
        Some(row)
    }

    /// Adds (or replaces) a row: it is written in this input's batch.
    pub fn insert(&mut self, key: K, value: V) {
        self.rows.insert(key, value);
        self.changed.push(key);
    }

    /// Writes a row unchanged in this input's batch.
    pub fn mark(&mut self, key: K) {
        self.changed.push(key);
    }

    /// Adds a row read back from the store (recovery): nothing to write.
    pub(super) fn load(&mut self, key: K, value: V) {
        self.rows.insert(key, value);
    }

    /// Whether no row changed in this input.
    pub fn unchanged(&self) -> bool {
        self.changed.is_empty()
    }

    /// The ids changed in this input, sorted, each once.
    pub fn changed(&mut self) -> &[K] {
        settle(&mut self.changed);
        &self.changed
    }

    /// The rows changed in this input, in id order, forgetting that they changed.
    pub fn drain_changed(&mut self) -> impl Iterator<Item = &V> {
        settle(&mut self.changed);
        let rows = &self.rows;
        self.changed.drain(..).filter_map(|id| rows.get(&id))
    }
}

impl<K: DenseKey + Ord, V> std::ops::Index<&K> for Table<K, V> {
    type Output = V;
    fn index(&self, key: &K) -> &V {
        self.rows.get(key).expect("id is present")
    }
}

/// The workers: live rows (one `Worker` record each) and their specs (a `WorkerSpec`
/// record each, rarely written), which change apart.
#[derive(Clone, Debug, Default)]
pub(crate) struct Workers {
    rows: Table<WorkerId, Worker>,
    /// Workers whose spec changed in this input.
    specs: Vec<WorkerId>,
}

/// Equal rows (specs included); the changed ids are bookkeeping.
impl PartialEq for Workers {
    fn eq(&self, other: &Self) -> bool {
        self.rows == other.rows
    }
}

impl Eq for Workers {}

impl std::ops::Deref for Workers {
    type Target = Table<WorkerId, Worker>;
    fn deref(&self) -> &Self::Target {
        &self.rows
    }
}

impl Workers {
    /// A worker's live row, to change it: written in this input's batch, and its timer
    /// recomputed when the input finishes. Its spec is changed with `replace_spec`.
    pub fn get_mut(&mut self, id: &WorkerId) -> Option<&mut Worker> {
        self.rows.get_mut(id)
    }

    /// A new worker: its spec and live row are both written.
    pub fn insert(&mut self, worker: Worker) {
        self.specs.push(worker.id);
        self.rows.insert(worker.id, worker);
    }

    /// Writes a worker's live row unchanged (and recomputes its timer).
    pub fn mark(&mut self, id: WorkerId) {
        self.rows.mark(id);
    }

    /// Replaces a worker's spec: only the spec record is written.
    pub fn replace_spec(&mut self, id: WorkerId, spec: WorkerSpec) {
        if let Some(w) = self.rows.rows.get_mut(&id) {
            w.spec = Arc::new(spec);
            self.specs.push(id);
        }
    }

    /// A worker's pending continuation, changed without writing its row.
    ///
    /// Known defect, kept so that this refactoring changes no batch: two changes to an
    /// intent were never persisted unless something else rewrote the worker in the same
    /// input (a floor deferral's `deferred_until`, and the idle wakes a newly started
    /// turn drops). After a restart the recovered intent still has them. Only
    /// `scheduler::defer` and `executor::observed_generating` call this.
    pub fn intent_unrecorded(&mut self, id: &WorkerId) -> Option<&mut Option<Intent>> {
        self.rows.rows.get_mut(id).map(|w| &mut w.intent)
    }

    /// Adds a worker read back from the store (recovery): nothing to write.
    pub(super) fn load(&mut self, worker: Worker) {
        self.rows.load(worker.id, worker);
    }

    /// Workers whose live row changed in this input, sorted, each once.
    pub fn changed(&mut self) -> &[WorkerId] {
        self.rows.changed()
    }

    /// Whether no worker changed in this input.
    pub fn unchanged(&self) -> bool {
        self.rows.unchanged() && self.specs.is_empty()
    }

    /// Workers whose spec changed in this input, sorted, each once.
    pub fn changed_specs(&mut self) -> &[WorkerId] {
        settle(&mut self.specs);
        &self.specs
    }

    /// The specs changed in this input, in worker order, forgetting that they changed.
    pub fn drain_changed_specs(&mut self) -> impl Iterator<Item = &Arc<WorkerSpec>> {
        settle(&mut self.specs);
        let rows = &self.rows.rows;
        self.specs.drain(..).filter_map(|id| rows.get(&id)).map(|w| &w.spec)
    }

    /// The live rows changed in this input, in id order, forgetting that they changed.
    pub fn drain_changed(&mut self) -> impl Iterator<Item = &Worker> {
        self.rows.drain_changed()
    }
}
