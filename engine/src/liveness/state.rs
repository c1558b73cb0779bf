//! What the engine knows, and deliberately does not persist, about whether each worker's
//! executor can carry it beyond connections: the CLI retries executors report inside a
//! running turn, and the absence episodes already raised. Lost on restart by design: an
//! executor republishes its retries with its states after `hello`, and a daemon that
//! restarted starts a new absence episode (a person is told again if nothing comes back).
//!
//! [`Liveness`] owns both behind methods that keep them consistent: a retry keeps the time
//! it began across repeated reports, and an episode is named by the time its kind went
//! missing, so a kind that came back and left again is a new episode without anything to
//! clear.

use crate::ids::WorkerId;
use crate::kind::ExecutorKind;
use crate::model::CliRetry;
use crate::time::Timestamp;
use std::collections::BTreeMap;

/// A retry an executor reports for a worker's running turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Retrying {
    /// What the CLI said, and which retry.
    pub retry: CliRetry,
    /// When the executor first reported this run of retries.
    pub since: Timestamp,
}

/// Retries and raised absence episodes, by worker.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Liveness {
    /// Workers whose CLI is retrying inside the running turn.
    retries: BTreeMap<WorkerId, Retrying>,
    /// Workers for which `worker.executor_absent` was recorded, with the episode: their
    /// kind and the time it went missing.
    raised: BTreeMap<WorkerId, (ExecutorKind, Timestamp)>,
}

impl Liveness {
    /// The executor reports the worker's CLI retrying at `now` (a repeat keeps its start).
    pub fn retrying(&mut self, id: WorkerId, retry: CliRetry, now: Timestamp) {
        let since = self.retries.get(&id).map_or(now, |r| r.since);
        self.retries.insert(id, Retrying { retry, since });
    }

    /// The worker's CLI is not retrying (a later state said so, or its executor went away).
    pub fn retry_over(&mut self, id: WorkerId) {
        self.retries.remove(&id);
    }

    /// The worker's CLI retry, if one is reported.
    pub fn retry_of(&self, id: WorkerId) -> Option<&Retrying> {
        self.retries.get(&id)
    }

    /// The absence of the worker's kind since `since` was recorded for it.
    pub fn raise(&mut self, id: WorkerId, kind: ExecutorKind, since: Timestamp) {
        self.raised.insert(id, (kind, since));
    }

    /// Whether the absence of `kind` since `since` was already recorded for the worker.
    pub fn raised(&self, id: WorkerId, kind: ExecutorKind, since: Timestamp) -> bool {
        self.raised.get(&id) == Some(&(kind, since))
    }

    /// An executor of these kinds connected: their episodes are over.
    pub fn kinds_back(&mut self, kinds: &[ExecutorKind]) {
        self.raised.retain(|_, (kind, _)| !kinds.contains(kind));
    }
}
