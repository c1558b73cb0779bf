//! The durable state: everything that is persisted, and nothing else. Each part is owned
//! by a type that keeps its own changes (the tables of `table.rs`, the counters, the
//! event log, the page holds, the dead-man records), and [`State::drain_batch`] gathers
//! them, in a fixed order, into the records of the input's `Persist` batch. Only
//! `recover.rs` puts rows in without writing them (what the store already holds).

use crate::deadman::state::DeadMen;
use crate::event::{Event, EventKind};
use crate::holds::state::Holds;
use crate::ids::*;
use crate::model::*;
use crate::notify::state::Notices;
use crate::record::{Meta, Record};
use crate::state::table::{Table, Workers};
use crate::time::Timestamp;
use std::collections::VecDeque;

mod recover;
pub(crate) mod table;

/// Everything that is persisted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct State {
    /// Id counters and the data directory's seed (one record).
    pub ids: Counters,
    pub runs: Table<RunId, Run>,
    pub workers: Workers,
    pub attempts: Table<AttemptId, Attempt>,
    pub messages: Table<MessageId, Message>,
    /// The most recent events (older ones live only in the store).
    pub log: EventLog,
    /// Account-wide holds and dialog headings (one record).
    pub holds: Holds,
    /// Dead-man state of the runs that set a dead-man policy (one record each).
    pub dead_men: DeadMen,
    /// The notification outbox (one record per episode and target).
    pub notices: Notices,
}

impl State {
    /// The state of an empty data directory.
    pub fn new(seed: u64, events_retained_max: usize) -> State {
        State {
            ids: Counters::new(Meta::new(seed)),
            runs: Table::default(),
            workers: Workers::default(),
            attempts: Table::default(),
            messages: Table::default(),
            log: EventLog::new(events_retained_max),
            holds: Holds::default(),
            dead_men: DeadMen::default(),
            notices: Notices::default(),
        }
    }

    /// Appends an event at `at` with the next cursor (both counter and event are written).
    pub fn append_event(
        &mut self,
        at: Timestamp,
        run: RunId,
        worker: Option<WorkerId>,
        attempt: Option<AttemptId>,
        kind: EventKind,
    ) -> Cursor {
        let cursor = self.ids.next_cursor();
        self.log.append(Event { cursor, at, run, worker, attempt, kind });
        cursor
    }

    /// The records of everything that changed in this input, in batch order (counters,
    /// runs, specs, workers, attempts, messages, page holds, dead-man records, notices,
    /// events),
    /// forgetting that they changed.
    pub fn drain_batch(&mut self) -> Vec<Record> {
        // Sized up front: records are large, and growing the vector would copy them.
        let count = usize::from(self.ids.changed)
            + self.runs.changed().len()
            + self.workers.changed_specs().len()
            + self.workers.changed().len()
            + self.attempts.changed().len()
            + self.messages.changed().len()
            + usize::from(self.holds.is_changed())
            + self.dead_men.changed().len()
            + self.notices.changed_len()
            + self.log.appended.len();
        let mut records = Vec::with_capacity(count);
        if let Some(meta) = self.ids.drain_changed() {
            records.push(Record::Meta(meta));
        }
        records.extend(self.runs.drain_changed().cloned().map(Record::Run));
        records.extend(self.workers.drain_changed_specs().cloned().map(Record::WorkerSpec));
        records.extend(self.workers.drain_changed().cloned().map(Record::Worker));
        records.extend(self.attempts.drain_changed().cloned().map(Record::Attempt));
        records.extend(self.messages.drain_changed().cloned().map(Record::Message));
        if let Some(holds) = self.holds.drain_changed() {
            records.push(Record::Holds(holds));
        }
        records.extend(self.dead_men.drain_changed().cloned().map(Record::DeadMan));
        records.extend(self.notices.drain_changed().cloned().map(Record::Notice));
        records.extend(self.log.appended.drain(..).map(Record::Event));
        records
    }
}

/// The id counters (the `Meta` record): every id and event cursor is taken from here,
/// and taking one writes the record.
#[derive(Clone, Debug)]
pub(crate) struct Counters {
    meta: Meta,
    /// Whether a counter moved in this input.
    changed: bool,
}

/// Equal counters; the changed flag is bookkeeping.
impl PartialEq for Counters {
    fn eq(&self, other: &Self) -> bool {
        self.meta == other.meta
    }
}

impl Eq for Counters {}

impl Counters {
    /// Counters as stored (or fresh ones): nothing to write.
    fn new(meta: Meta) -> Counters {
        Counters { meta, changed: false }
    }

    /// The record.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Seeds keepalive jitter; fixed for the life of the data directory.
    pub fn seed(&self) -> u64 {
        self.meta.seed
    }

    /// The last event cursor handed out (0 before any event).
    pub fn last_cursor(&self) -> Cursor {
        Cursor(self.meta.next_cursor - 1)
    }

    fn take(&mut self, counter: fn(&mut Meta) -> &mut u64) -> u64 {
        let slot = counter(&mut self.meta);
        let id = *slot;
        *slot += 1;
        self.changed = true;
        id
    }

    pub fn next_run(&mut self) -> RunId {
        RunId(self.take(|m| &mut m.next_run))
    }

    pub fn next_worker(&mut self) -> WorkerId {
        WorkerId(self.take(|m| &mut m.next_worker))
    }

    pub fn next_attempt(&mut self) -> AttemptId {
        AttemptId(self.take(|m| &mut m.next_attempt))
    }

    pub fn next_message(&mut self) -> MessageId {
        MessageId(self.take(|m| &mut m.next_message))
    }

    fn next_cursor(&mut self) -> Cursor {
        Cursor(self.take(|m| &mut m.next_cursor))
    }

    /// The record, if a counter moved in this input (then forgotten).
    fn drain_changed(&mut self) -> Option<Meta> {
        std::mem::take(&mut self.changed).then_some(self.meta)
    }
}

/// The event log as the engine holds it: a window of the most recent events, and the
/// events appended in this input (all of them written).
#[derive(Clone, Debug)]
pub(crate) struct EventLog {
    retained: VecDeque<Event>,
    /// How many events `retained` keeps.
    retained_max: usize,
    /// Appended in this input.
    appended: Vec<Event>,
}

/// Equal windows; the rest is configuration and bookkeeping.
impl PartialEq for EventLog {
    fn eq(&self, other: &Self) -> bool {
        self.retained == other.retained
    }
}

impl Eq for EventLog {}

impl EventLog {
    fn new(retained_max: usize) -> EventLog {
        EventLog { retained: VecDeque::new(), retained_max, appended: Vec::new() }
    }

    /// The window read back from the store (recovery), oldest first: nothing to write.
    fn load(&mut self, events: impl IntoIterator<Item = Event>) {
        self.retained = events.into_iter().collect();
    }

    fn append(&mut self, event: Event) {
        self.retained.push_back(event.clone());
        while self.retained.len() > self.retained_max {
            self.retained.pop_front();
        }
        self.appended.push(event);
    }

    /// The retained window, oldest first.
    pub fn retained(&self) -> &VecDeque<Event> {
        &self.retained
    }

    /// The events appended in this input, in order.
    pub fn appended(&self) -> &[Event] {
        &self.appended
    }

    /// Whether nothing was appended in this input.
    pub fn nothing_appended(&self) -> bool {
        self.appended.is_empty()
    }
}
