//! Who carries a worker, as views show it (`worker_get`, the operator summary): the data
//! only; the rules that fill it in are in [`crate::liveness`].

use crate::ids::ExecutorId;
use crate::kind::ExecutorKind;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Whether a worker's executor is there to carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Carrier {
    /// The executor holding its conversation (or its command) is connected.
    Connected,
    /// The executor holding its conversation is not connected: nothing watches or types
    /// into it until that executor is back.
    Offline,
    /// No executor holds it yet: its next command goes to any connected executor of its
    /// kind (`capable` says how many there are).
    Unassigned,
}

impl Carrier {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Carrier::Connected => "connected",
            Carrier::Offline => "offline",
            Carrier::Unassigned => "unassigned",
        }
    }
}

/// A CLI retrying inside the worker's running turn, for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryView {
    /// What the CLI said (untrusted, capped).
    pub reason: Arc<str>,
    /// Which retry, when the CLI counts them.
    pub attempt: Option<u32>,
    /// Since when it retries.
    pub since: Timestamp,
}

/// Who carries an unfinished worker, as `worker_get` and the operator summary show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivenessView {
    /// Connected, offline or unassigned.
    pub carrier: Carrier,
    /// The executor holding its conversation (or its command), if one does.
    pub executor: Option<ExecutorId>,
    /// The kind of executor the worker needs.
    pub kind: ExecutorKind,
    /// Connected: since its executor's `hello`. Offline: since its executor went away (or
    /// this daemon started). Unassigned: since no executor of its kind is connected
    /// (`None` while one is).
    pub since: Option<Timestamp>,
    /// Connected executors that run its kind.
    pub capable: u32,
    /// Since when no executor of its kind has been connected, once that lasted
    /// [`crate::limits::EXECUTOR_ABSENT_MS_MAX`] and `worker.executor_absent` was recorded for this
    /// episode (the surfaces notify once per such time).
    pub absent_since: Option<Timestamp>,
    /// Its CLI retrying inside the running turn, while its executor is connected.
    pub retry: Option<RetryView>,
    /// Its next turn waits for a free slot on its host, or on its account, which runs as
    /// many turns as it allows.
    pub slot: Option<SlotView>,
}

/// A CLI worker's next turn waiting for a free slot on its host, or on the account it
/// runs under there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotView {
    /// The host (the executor that will carry the turn).
    pub executor: ExecutorId,
    /// The host's other workers' turns running or on their way now (for an account: those
    /// of the account's workers, on all its hosts).
    pub busy: u32,
    /// How many it runs at once (the host's `hello` cap, or the account's).
    pub max: u32,
    /// The account whose slots are all taken; `None`: the host's are.
    pub account: Option<std::sync::Arc<str>>,
    /// How many of `busy` run on hosts not heard from since the daemon started, counted
    /// against the account until they say what they run under (0 for a host's slots).
    pub unheard: u32,
}
