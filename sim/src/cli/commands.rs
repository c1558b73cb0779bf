//! The daemon's commands at the CLI executor: journaled (the phase written before the
//! step), routed to the worker's session, delivered when the session is idle (a steer
//! only into a running turn of its own), acknowledged once the session took the prompt,
//! and finished with their result; `conversation.inspect` and `conversation.close`.

use super::{Cli, Event, failed, observation};
use crate::cli_session::*;
use crate::epoch::EPOCH_MS;
use crate::faults::Boundary;
use engine::ids::{AttemptId, WorkerId};
use engine::input::*;
use engine::model::ConversationState;
use engine::{CommandKind, ExecutorCommand, ExecutorKind};
use std::collections::VecDeque;
use std::sync::Arc;

/// How long a CLI takes to acknowledge a prompt line (Claude's `command_lifecycle`
/// `queued`, Codex's `turn/start` answer): the window in which a crash leaves a written
/// prompt unacknowledged. Longer than the real one (milliseconds) so that a fault applied
/// after a simulated step (1 s) can fall into it.
const ACK_MS: u64 = 1_500;
/// Purpose of the executor's seeded draw of a crash at submission (`roll`; the others are
/// in `turns.rs` and `reconcile.rs`).
const ROLL_SUBMIT_CRASH: u64 = 1;

impl Cli {
    pub(super) fn live(&self, worker: WorkerId, child: u64) -> bool {
        self.children.get(&worker) == Some(&Some(child))
    }

    /// A command from the daemon: journal it (idempotently) and queue it.
    pub(super) fn command(&mut self, c: ExecutorCommand) {
        let attempt = c.attempt;
        match c.kind {
            CommandKind::Cancel => {
                let queued = self.phase(attempt) == Some(JournalPhase::Received);
                if queued {
                    self.finish(
                        attempt,
                        CommandOutcome::Failed { code: ExecErrorCode::Cancelled, detail: String::new() },
                    );
                }
                return;
            }
            CommandKind::Inspect => return self.inspect(c.worker),
            CommandKind::Close => return self.close(c.worker, &c.conversation),
            CommandKind::ApprovalAnswer => return self.approval_answer(&c),
            _ => {}
        }
        let known = self.state.disk.borrow().journal.get(&attempt).cloned();
        match known {
            Some(e) if e.phase >= JournalPhase::Submitted => match e.failed {
                Some(code) => self
                    .result(c.id, CommandOutcome::Failed { code: ExecErrorCode::parse(&code), detail: String::new() }),
                None => self
                    .result(c.id, CommandOutcome::Submitted { state_seq: e.state_seq, conversation: e.conversation }),
            },
            Some(_) => {} // already queued or being submitted: never twice
            None => {
                let worker = c.worker;
                let entry =
                    Entry { command: c, phase: JournalPhase::Received, state_seq: 0, conversation: None, failed: None };
                self.state.disk.borrow_mut().journal.insert(attempt, entry);
                if self.boundary(Boundary::EnqueuedBeforeAck, worker) {
                    return;
                }
                // Idle delivery may hold it past its deadline: look again then.
                let deadline = self.state.disk.borrow().journal[&attempt].command.deadline.0;
                self.at(deadline.saturating_sub(EPOCH_MS) + 1_000, Event::Pump(worker));
                self.queues.entry(worker).or_default().push_back(attempt);
                self.pump(worker);
            }
        }
    }

    pub(super) fn phase(&self, attempt: AttemptId) -> Option<JournalPhase> {
        self.state.disk.borrow().journal.get(&attempt).map(|e| e.phase)
    }

    /// Ends a command: journal `completed` (with a failure's code), then its result.
    pub(super) fn finish(&mut self, attempt: AttemptId, outcome: CommandOutcome) {
        let (id, worker) = {
            let mut disk = self.state.disk.borrow_mut();
            let Some(e) = disk.journal.get_mut(&attempt) else { return };
            e.phase = JournalPhase::Completed;
            if let CommandOutcome::Failed { code, .. } = &outcome {
                e.failed = Some(code.as_str().to_string());
            }
            (e.command.id, e.command.worker)
        };
        if let Some(q) = self.queues.get_mut(&worker) {
            q.retain(|a| *a != attempt);
        }
        self.result(id, outcome);
        self.pump(worker);
    }

    /// Works the worker's queue: one submission at a time, a send only into an idle session.
    pub(super) fn pump(&mut self, worker: WorkerId) {
        if !self.ready || self.halted() {
            return;
        }
        let Some(&attempt) = self.queues.get(&worker).and_then(|q| q.front()) else { return };
        let Some(entry) = self.state.disk.borrow().journal.get(&attempt).cloned() else { return };
        match entry.phase {
            JournalPhase::Received => {}
            // Under way: its acknowledgment or its child's fate settles it.
            JournalPhase::SubmissionStarted => return,
            // Settled (reconciled after a crash): the next one.
            JournalPhase::Submitted | JournalPhase::Completed => {
                self.queues.get_mut(&worker).map(VecDeque::pop_front);
                return self.pump(worker);
            }
        }
        let c = entry.command;
        let now = self.now_ms();
        if EPOCH_MS + now > c.deadline.0 {
            return self.finish(attempt, failed(ExecErrorCode::DeadlineExceeded, "the session stayed busy"));
        }
        if c.kind == CommandKind::Create {
            if self.children.get(&worker) == Some(&None) {
                return; // the last session's child is still being replaced
            }
            let kind = c.executor_kind;
            let session = format!("{}-{}-{}", kind.as_str(), worker.0, attempt.0);
            {
                let mut disk = self.state.disk.borrow_mut();
                disk.sessions.insert(session.clone(), SessionRecord::new(kind, worker));
                disk.bound.insert(worker, session.clone());
                disk.seq.insert(worker, 0);
                disk.shown.remove(&worker);
                let e = disk.journal.get_mut(&attempt).expect("journaled");
                e.conversation = Some(Arc::from(conversation_of(kind, &session)));
            }
            self.trace(format!("{worker} session {session}"));
            self.spawn_child(worker);
            return self.submit(attempt);
        }
        let Some((session, kind)) = self.bound_session(worker) else {
            return self.finish(attempt, failed(ExecErrorCode::ConversationClosed, "no session for this worker"));
        };
        if *c.conversation != conversation_of(kind, &session) {
            let code = if c.kind == CommandKind::Steer {
                ExecErrorCode::SteeringUnavailable
            } else {
                ExecErrorCode::ConversationClosed
            };
            return self.finish(attempt, failed(code, "not a session of this executor"));
        }
        if self.children.get(&worker).copied().flatten().is_none() {
            return; // a new child is resuming the session
        }
        let (busy, ours_running) = {
            let disk = self.state.disk.borrow();
            let record = &disk.sessions[&session];
            let running = record.turns.last().filter(|t| t.state == TurnState::Running);
            (record.busy(), running.is_some_and(|t| t.starter.as_deref().is_some_and(|k| !k.starts_with("foreign-"))))
        };
        match c.kind {
            CommandKind::Steer if ours_running => self.submit(attempt),
            CommandKind::Steer => {
                self.finish(attempt, failed(ExecErrorCode::SteeringUnavailable, "no turn of ours is running"))
            }
            _ if busy => {} // idle delivery: the turn's end pumps again
            _ => self.submit(attempt),
        }
    }

    pub(super) fn bound_session(&self, worker: WorkerId) -> Option<(String, ExecutorKind)> {
        let disk = self.state.disk.borrow();
        let session = disk.bound.get(&worker)?;
        Some((session.clone(), disk.sessions[session].kind))
    }

    /// Starts a new child for the worker's session.
    pub(super) fn spawn_child(&mut self, worker: WorkerId) {
        self.next_child += 1;
        let child = self.next_child;
        self.children.insert(worker, Some(child));
        self.alive.borrow_mut().insert(worker, child);
        self.approval_seq.remove(&worker);
    }

    /// Submission: journal `submission-started`, then write the line to the child.
    pub(super) fn submit(&mut self, attempt: AttemptId) {
        let (worker, c) = {
            let mut disk = self.state.disk.borrow_mut();
            let e = disk.journal.get_mut(&attempt).expect("journaled");
            e.phase = JournalPhase::SubmissionStarted;
            (e.command.worker, e.command.clone())
        };
        let seq = self.seq(worker);
        self.state.disk.borrow_mut().journal.get_mut(&attempt).expect("journaled").state_seq = seq;
        if self.boundary(Boundary::SubmissionStarted, worker) {
            return; // the executor dies before it writes the line
        }
        let Some((session, _)) = self.bound_session(worker) else { return };
        let child = self.children.get(&worker).copied().flatten().expect("a live child");
        let draw = roll(self.state.seed, worker, attempt.0, ROLL_SUBMIT_CRASH);
        let crash = draw % 100 < self.state.knobs.child_crash_pct;
        // A crashing child reads the line or dies first, at even odds.
        if !crash || (draw / 100).is_multiple_of(2) {
            self.take_in(worker, &session, &c, child);
        }
        if crash {
            self.trace(format!("{worker} child exits while {} is unacknowledged", c.idempotency_key));
            return self.child_crashed(worker);
        }
        self.after(ACK_MS, Event::Ack { worker, attempt, child });
    }

    /// The CLI acknowledged the line: `submitted` (journal first), the result, and for a
    /// create its binding.
    pub(super) fn acked(&mut self, worker: WorkerId, attempt: AttemptId) {
        let (id, kind, state_seq, conversation) = {
            let mut disk = self.state.disk.borrow_mut();
            let Some(e) = disk.journal.get_mut(&attempt).filter(|e| e.phase == JournalPhase::SubmissionStarted) else {
                return;
            };
            e.phase = JournalPhase::Submitted;
            (e.command.id, e.command.kind, e.state_seq, e.conversation.clone())
        };
        if self.boundary(Boundary::SubmittedBeforeResult, worker) {
            return;
        }
        let created = if kind == CommandKind::Create { conversation } else { None };
        self.result(id, CommandOutcome::Submitted { state_seq, conversation: created.clone() });
        if let Some(url) = created {
            let report = BindingReport { worker, conversation: url, open: true, observation: None };
            self.send(executor_protocol::ExecutorMessage::Binding(executor_protocol::BindingWire::from(&report)));
        }
        if let Some(e) = self.state.disk.borrow_mut().journal.get_mut(&attempt) {
            e.phase = JournalPhase::Completed;
        }
        if let Some(q) = self.queues.get_mut(&worker) {
            q.retain(|a| *a != attempt);
        }
        if self.boundary(Boundary::JournalCompleted, worker) {
            return;
        }
        if kind != CommandKind::Steer {
            self.publish(worker, ConversationState::Generating, None, None);
        }
        self.pump(worker);
    }

    /// `conversation.inspect`: republish what the session last showed, same sequence.
    pub(super) fn inspect(&self, worker: WorkerId) {
        let shown = self.state.disk.borrow().shown.get(&worker).cloned();
        if let Some(shown) = shown {
            self.send(executor_protocol::ExecutorMessage::State(executor_protocol::StateWire::new(
                worker,
                &observation(&shown),
            )));
        }
    }

    /// `conversation.close`: stop managing the session (its record stays on disk).
    pub(super) fn close(&mut self, worker: WorkerId, conversation: &str) {
        let bound = self.bound_session(worker);
        if let Some((s, _)) = bound.filter(|(s, k)| conversation_of(*k, s) == conversation) {
            let mut disk = self.state.disk.borrow_mut();
            disk.bound.remove(&worker);
            disk.shown.remove(&worker);
            let now = self.now_ms();
            disk.sessions.get_mut(&s).expect("a session").asks_gone(now);
            drop(disk);
            self.asking.remove(&worker);
            self.children.remove(&worker);
            self.alive.borrow_mut().remove(&worker);
            self.trace(format!("{worker} close: session released"));
        }
    }
}
