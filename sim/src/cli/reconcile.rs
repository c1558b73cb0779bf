//! How the CLI executor settles the prompts a crash left `submission-started`: from the
//! session's own record (a Codex thread read, a Claude transcript), read once the child
//! that had them is gone. Found means submitted; provably absent means not (the daemon
//! may send it again, as a new attempt); a torn record means nobody knows
//! (`AMBIGUOUS_SUBMISSION`). Nothing is ever resent from here.

use super::{Cli, failed};
use crate::cli_session::roll;
use engine::CommandKind;
use engine::ExecutorCommand;
use engine::ids::{AttemptId, WorkerId};
use engine::input::{BindingReport, CommandOutcome, ExecErrorCode, JournalPhase};
use std::sync::Arc;

/// Purpose of the seeded draw of a torn record (`roll`).
const ROLL_TORN: u64 = 6;

impl Cli {
    /// After a restart: every worker's unacknowledged submissions, from the records.
    pub(super) fn reconcile_all(&mut self) {
        let workers: Vec<WorkerId> = self.state.disk.borrow().journal.values().map(|e| e.command.worker).collect();
        for worker in workers {
            self.reconcile(worker);
        }
    }

    /// Settles the worker's `submission-started` commands from its session's record, read
    /// now that the child that had them is gone: the nonce found means submitted, the
    /// nonce provably absent means not (the daemon may send it again, as a new attempt),
    /// a torn record means nobody knows. Never resent from here.
    pub(super) fn reconcile(&mut self, worker: WorkerId) {
        let started: Vec<(AttemptId, ExecutorCommand, u64, Option<Arc<str>>)> = {
            let disk = self.state.disk.borrow();
            let entries = disk.journal.iter().filter(|(_, e)| e.command.worker == worker);
            let started = entries.filter(|(_, e)| e.phase == JournalPhase::SubmissionStarted);
            started.map(|(a, e)| (*a, e.command.clone(), e.state_seq, e.conversation.clone())).collect()
        };
        for (attempt, c, state_seq, conversation) in started {
            let session = conversation.as_deref().and_then(|url| url.split('/').nth(1)).map(String::from);
            let session = session.or_else(|| self.bound_session(worker).map(|(s, _)| s));
            let disk = self.state.disk.borrow();
            let record = session.as_ref().and_then(|s| disk.sessions.get(s));
            let found = record.is_some_and(|r| r.took(&c.idempotency_key));
            let prompts = record.map_or(0, |r| r.prompts.len() as u64);
            drop(disk);
            let torn = roll(self.state.seed, worker, attempt.0 + prompts, ROLL_TORN) % 100 < self.state.knobs.torn_pct;
            let verdict = if torn {
                "torn"
            } else if found {
                "found"
            } else {
                "absent"
            };
            self.trace(format!("{worker} reconciles {}: {verdict}", c.idempotency_key));
            *self.state.disk.borrow_mut().reconciled.entry(verdict).or_insert(0) += 1;
            match (torn, found) {
                (true, _) => {
                    self.finish(attempt, failed(ExecErrorCode::AmbiguousSubmission, "the session's record is torn"))
                }
                (false, true) => {
                    {
                        let mut disk = self.state.disk.borrow_mut();
                        let e = disk.journal.get_mut(&attempt).expect("journaled");
                        e.phase = JournalPhase::Completed;
                    }
                    let created = if c.kind == CommandKind::Create { conversation.clone() } else { None };
                    self.result(c.id, CommandOutcome::Submitted { state_seq, conversation: created.clone() });
                    if let Some(url) = created {
                        let report = BindingReport { worker, conversation: url, open: true, observation: None };
                        self.send(executor_protocol::ExecutorMessage::Binding(executor_protocol::BindingWire::from(
                            &report,
                        )));
                    }
                }
                (false, false) => {
                    if c.kind == CommandKind::Create {
                        // The new session holds nothing: the next create makes another.
                        let mut disk = self.state.disk.borrow_mut();
                        if disk.bound.get(&worker) == session.as_ref() {
                            disk.bound.remove(&worker);
                            disk.shown.remove(&worker);
                        }
                    }
                    self.finish(
                        attempt,
                        failed(ExecErrorCode::DeadlineExceeded, "the session never took the prompt in"),
                    )
                }
            }
        }
    }
}
