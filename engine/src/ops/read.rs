//! Read-only operations: attempts of a worker and events after a cursor.

use crate::engine::Engine;
use crate::ids::*;
use crate::limits::*;
use crate::op::{EventsPage, Reply};
use crate::reject::Rejection;
use crate::validate;

impl Engine {
    pub(crate) fn worker_attempts(&self, id: WorkerId, after_sequence: u32, limit: usize) -> Result<Reply, Rejection> {
        self.find_worker(id)?;
        validate::limit("limit", limit, ATTEMPTS_PAGE_COUNT_MAX)?;
        let attempts = self
            .index
            .attempts_of(id)
            .map(|a| &self.state.attempts[&a])
            .filter(|a| a.sequence > after_sequence)
            .take(limit)
            .cloned()
            .collect();
        Ok(Reply::Attempts(attempts))
    }

    /// Events after `cursor` from the retained window; `retained_after` tells the shell
    /// when older events must come from the store.
    pub(crate) fn events_after(
        &self,
        cursor: Cursor,
        run: Option<RunId>,
        worker: Option<WorkerId>,
        limit: usize,
    ) -> Result<Reply, Rejection> {
        validate::limit("limit", limit, EVENTS_PAGE_COUNT_MAX)?;
        if let Some(r) = run {
            self.find_run(r)?;
        }
        if let Some(w) = worker {
            self.find_worker(w)?;
        }
        let events = self.state.log.retained();
        let retained_after = events.front().map_or(self.last_cursor(), |e| Cursor(e.cursor.0 - 1));
        let start = events.partition_point(|e| e.cursor <= cursor);
        let mut scanned_to = cursor.max(retained_after);
        let mut out = Vec::new();
        for e in events.range(start..) {
            if out.len() == limit {
                break;
            }
            scanned_to = e.cursor;
            if run.is_none_or(|r| r == e.run) && worker.is_none_or(|w| Some(w) == e.worker) {
                out.push(e.clone());
            }
        }
        if out.len() < limit {
            scanned_to = scanned_to.max(self.last_cursor());
        }
        Ok(Reply::Events(EventsPage { events: out, next_cursor: scanned_to, retained_after }))
    }
}
