//! The dead-man records' owner: one durable record per run that set a dead-man policy,
//! changed only by the dead-man rules (`deadman/rules.rs`), each change written in the
//! input's batch.

use super::DeadMan;
use crate::ids::RunId;
use std::collections::BTreeMap;

/// The dead-man records by run, and the runs whose record this input changed.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeadMen {
    runs: BTreeMap<RunId, DeadMan>,
    /// Runs whose record changed in this input, in no order, maybe repeated.
    changed: Vec<RunId>,
}

/// Equal records; the changed runs are bookkeeping.
impl PartialEq for DeadMen {
    fn eq(&self, other: &Self) -> bool {
        self.runs == other.runs
    }
}

impl Eq for DeadMen {}

impl DeadMen {
    /// The records read back from the store (recovery): nothing to write.
    pub(crate) fn load(records: impl IntoIterator<Item = DeadMan>) -> DeadMen {
        DeadMen { runs: records.into_iter().map(|d| (d.run, d)).collect(), changed: Vec::new() }
    }

    /// A run's record, if it set a policy.
    pub(crate) fn get(&self, run: &RunId) -> Option<&DeadMan> {
        self.runs.get(run)
    }

    /// Every record, in run order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &DeadMan> {
        self.runs.values()
    }

    /// Sets a run's record.
    pub(super) fn set(&mut self, record: DeadMan) {
        self.changed.push(record.run);
        self.runs.insert(record.run, record);
    }

    /// Runs whose record changed in this input, sorted, each once.
    pub(crate) fn changed(&mut self) -> &[RunId] {
        crate::dense::settle(&mut self.changed);
        &self.changed
    }

    /// The records changed in this input, in run order, forgetting that they changed.
    pub(crate) fn drain_changed(&mut self) -> impl Iterator<Item = &DeadMan> {
        crate::dense::settle(&mut self.changed);
        let runs = &self.runs;
        self.changed.drain(..).filter_map(|run| runs.get(&run))
    }
}
