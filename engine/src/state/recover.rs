//! The durable state read back from stored records: the latest version per key, in any
//! order, checked against the counters and for dangling references. Rows loaded here are
//! the only ones that enter a table without being written again.

use super::{Counters, State};
use crate::deadman::state::DeadMen;
use crate::event::Event;
use crate::holds::state::Holds;
use crate::ids::*;
use crate::model::*;
use crate::notify::state::Notices;
use crate::record::{Record, RecordKey, RecoveryError};
use std::collections::BTreeMap;
use std::sync::Arc;

impl State {
    /// The state of stored records (events older than the retained window skipped), or
    /// `None` for an empty store (a fresh data directory).
    pub fn recover(
        events_retained_max: usize,
        records: impl IntoIterator<Item = Record>,
    ) -> Result<Option<State>, RecoveryError> {
        let mut meta = None;
        let mut holds = None;
        let mut dead_men = Vec::new();
        let mut notices = Vec::new();
        let (mut runs, mut workers, mut attempts, mut messages) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut specs: BTreeMap<WorkerId, Arc<WorkerSpec>> = BTreeMap::new();
        let mut events: BTreeMap<Cursor, Event> = BTreeMap::new();
        for record in records {
            match record {
                Record::Meta(m) => meta = Some(m),
                Record::Run(r) => runs.push(r),
                Record::WorkerSpec(spec) => {
                    specs.insert(spec.id, spec);
                }
                Record::Worker(w) => workers.push(w),
                Record::Attempt(a) => attempts.push(a),
                Record::Message(m) => messages.push(m),
                Record::Holds(h) => holds = Some(h),
                Record::DeadMan(d) => dead_men.push(d),
                Record::Notice(n) => notices.push(n),
                Record::Event(e) => {
                    events.insert(e.cursor, e);
                    if events.len() > events_retained_max {
                        events.pop_first();
                    }
                }
            }
        }
        let empty = runs.is_empty()
            && workers.is_empty()
            && attempts.is_empty()
            && messages.is_empty()
            && events.is_empty()
            && holds.is_none()
            && dead_men.is_empty()
            && notices.is_empty();
        let meta = match meta {
            Some(m) => m,
            None if empty => return Ok(None),
            None => return Err(RecoveryError::MissingMeta),
        };
        // Ids are checked against the counters before they size the dense maps.
        let behind = |counter: &'static str, id: u64, next: u64| {
            if id == 0 || id >= next { Err(RecoveryError::CounterBehind { counter }) } else { Ok(()) }
        };
        let mut s = State::new(meta.seed, events_retained_max);
        s.ids = Counters::new(meta);
        for r in runs {
            behind("next_run", r.id.0, meta.next_run)?;
            s.runs.load(r.id, r);
        }
        for mut w in workers {
            behind("next_worker", w.id.0, meta.next_worker)?;
            w.spec = specs.remove(&w.id).ok_or_else(|| RecoveryError::Dangling {
                key: RecordKey::Worker(w.id),
                missing: format!("worker spec {}", w.id),
            })?;
            s.workers.load(w);
        }
        for a in attempts {
            behind("next_attempt", a.id.0, meta.next_attempt)?;
            s.attempts.load(a.id, a);
        }
        for m in messages {
            behind("next_message", m.id.0, meta.next_message)?;
            s.messages.load(m.id, m);
        }
        s.log.load(events.into_values());
        s.holds = Holds::load(holds.unwrap_or_default());
        s.dead_men = DeadMen::load(dead_men);
        s.notices = Notices::load(notices);
        s.check_references()?;
        Ok(Some(s))
    }

    /// Verifies cross-record references and counters after a load.
    fn check_references(&self) -> Result<(), RecoveryError> {
        let s = self;
        let meta = s.ids.meta();
        let dangling = |key, missing: String| Err(RecoveryError::Dangling { key, missing });
        for r in s.runs.values() {
            if !s.workers.contains_key(&r.root) {
                return dangling(RecordKey::Run(r.id), format!("root worker {}", r.root));
            }
            if r.id.0 >= meta.next_run {
                return Err(RecoveryError::CounterBehind { counter: "next_run" });
            }
        }
        for d in s.dead_men.values() {
            if !s.runs.contains_key(&d.run) {
                return dangling(RecordKey::DeadMan(d.run), format!("run {}", d.run));
            }
        }
        for n in s.notices.values() {
            if !s.runs.contains_key(&n.run) {
                return dangling(RecordKey::Notice(n.id), format!("run {}", n.run));
            }
            if n.id.episode().0 >= meta.next_cursor {
                return Err(RecoveryError::CounterBehind { counter: "next_cursor" });
            }
        }
        for w in s.workers.values() {
            if !s.runs.contains_key(&w.run) {
                return dangling(RecordKey::Worker(w.id), format!("run {}", w.run));
            }
            for a in [w.in_flight, w.turn].into_iter().flatten() {
                if !s.attempts.contains_key(&a) {
                    return dangling(RecordKey::Worker(w.id), format!("attempt {a}"));
                }
            }
            if w.id.0 >= meta.next_worker {
                return Err(RecoveryError::CounterBehind { counter: "next_worker" });
            }
        }
        for a in s.attempts.values() {
            if !s.workers.contains_key(&a.worker) {
                return dangling(RecordKey::Attempt(a.id), format!("worker {}", a.worker));
            }
            if a.id.0 >= meta.next_attempt {
                return Err(RecoveryError::CounterBehind { counter: "next_attempt" });
            }
        }
        for m in s.messages.values() {
            if !s.workers.contains_key(&m.to) {
                return dangling(RecordKey::Message(m.id), format!("worker {}", m.to));
            }
            if m.id.0 >= meta.next_message {
                return Err(RecoveryError::CounterBehind { counter: "next_message" });
            }
        }
        if let Some(last) = s.log.retained().back()
            && last.cursor.0 >= meta.next_cursor
        {
            return Err(RecoveryError::CounterBehind { counter: "next_cursor" });
        }
        Ok(())
    }
}
