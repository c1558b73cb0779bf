//! The dead-man fallback (spec 000 §12.0, 001 phase 16.5, 003 decision 11): the last line
//! of defence when every wake path of a run is gone while its person is away.
//!
//! The engine is the only authority. A run is watched while its dead-man mode is not
//! `off`, its threshold is set and one of its unfinished workers resumes automatically. It
//! is *quiet* once nothing moved it (no submission, no durable progress, no earlier firing,
//! no policy change) for `deadManAfterMs`; the check runs on the root worker's timer at
//! that moment. A quiet run fires unless something already asks a person or waits for a
//! clock (a human wait, any pause, a dialog or approval card, an account limit, an
//! external dependency) or a normal wake is on its way (a deliverable pending
//! continuation). A firing appends `deadman.fired` and raises the run's "stopped moving"
//! alert; with `recover` it also asks for exactly one recovery of `/root` into a fresh
//! conversation, coalesced into any pending continuation of root and never while root has
//! a command in flight or a live conversation. A quiet run that does not fire re-arms the
//! window, so the check runs at most once per `deadManAfterMs`.
//!
//! `rules.rs` holds the layer's rules (the check on the root worker's timer, the firing
//! and the recovery), and `state.rs` the owner of the durable dead-man records
//! (`state::DeadMen`), which only those rules change. The layer's types live where the
//! modules below need them (the policy in `policy.rs`, the record and its firings in
//! `model/deadman.rs`, the view in `op.rs`) and are named here too, as the layer's face.

mod rules;
pub(crate) mod state;

pub use crate::model::{DeadMan, DeadManAction, DeadManCondition, DeadManFiring};
pub use crate::op::DeadManView;
pub use crate::policy::{DeadManMode, DeadManPolicy};
