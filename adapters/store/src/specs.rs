//! A worker's spec is stored as its own record (`Worker.spec` is not serialized, so the
//! spec is written once, not with every change of its worker): [`SpecRejoin`] gives each
//! worker its spec back as the records are read in key order (a spec's key sorts before
//! its worker's), so that a load returns the records exactly as they were committed. The
//! fjall store's and the Postgres store's loads both use it.

use engine::Record;
use engine::ids::WorkerId;
use engine::model::WorkerSpec;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The specs read and not yet given to their worker.
#[derive(Debug, Default)]
pub struct SpecRejoin {
    specs: BTreeMap<WorkerId, Arc<WorkerSpec>>,
}

impl SpecRejoin {
    /// Notes a spec, or gives a worker the spec read before it.
    pub fn rejoin(&mut self, record: &mut Record) {
        match record {
            Record::WorkerSpec(spec) => {
                self.specs.insert(spec.id, spec.clone());
            }
            Record::Worker(worker) => {
                if let Some(spec) = self.specs.remove(&worker.id) {
                    worker.spec = spec;
                }
            }
            _ => {}
        }
    }
}
