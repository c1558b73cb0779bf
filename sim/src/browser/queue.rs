//! A command's life in the browser: journaled on arrival (idempotently), queued per
//! worker, submitted when the page and the concurrency limit allow (journal first, then
//! the page), and ended by what the page answers; `command.cancel` withdraws one that has
//! not started.

use super::{Browser, Entry, Event};
use crate::faults::Boundary;
use crate::wire::ToChat;
use engine::ids::{AttemptId, WorkerId};
use engine::input::*;
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use engine::{CommandKind, ExecutorCommand};
use std::collections::VecDeque;
use std::time::Duration;

impl Browser {
    /// A command waits for the page to clear (or for its deadline): look again then.
    pub(super) fn wait_for_page(&mut self, worker: WorkerId, deadline: Timestamp) {
        if self.preparing.insert(worker) {
            let wait = Duration::from_millis(deadline.0.saturating_sub(self.now_ms()) + 1_000);
            let events = self.events.clone();
            tokio::task::spawn_local(async move {
                tokio::time::sleep(wait).await;
                let _ = events.send(Event::Pump(worker));
            });
        }
    }

    /// A command from the daemon: journal it (idempotently) and queue it.
    pub(super) fn command(&mut self, c: ExecutorCommand) {
        let attempt = c.attempt;
        self.state.ledger.borrow_mut().browser_commands.insert(c.worker);
        if c.kind == CommandKind::Cancel {
            // Withdraw it unless its submission already began.
            let queued =
                self.state.storage.borrow().journal.get(&attempt).is_some_and(|e| e.phase == JournalPhase::Received);
            if queued {
                self.finish(attempt);
                self.result(c.id, CommandOutcome::Failed { code: ExecErrorCode::Cancelled, detail: String::new() });
                self.pump(c.worker);
            }
            return;
        }
        match c.kind {
            CommandKind::Inspect => return self.inspect(c.worker, &c.conversation),
            CommandKind::Close => return self.release(c.worker, &c.conversation),
            _ => {}
        }
        let known = self.state.storage.borrow().journal.get(&attempt).cloned();
        match known {
            Some(e) if e.phase >= JournalPhase::Submitted => {
                self.result(c.id, CommandOutcome::Submitted { state_seq: e.state_seq, conversation: e.conversation });
            }
            Some(_) => {} // already queued or ambiguous: never twice
            None => {
                let worker = c.worker;
                let received_at = self.now_ms();
                self.state.storage.borrow_mut().journal.insert(
                    attempt,
                    Entry { command: c, phase: JournalPhase::Received, state_seq: 0, conversation: None, received_at },
                );
                self.boundary(Boundary::EnqueuedBeforeAck, worker);
                if self.halted() {
                    return;
                }
                self.queues.entry(worker).or_default().push_back(attempt);
                self.pump(worker);
            }
        }
    }

    /// Works the worker's queue: one submission at a time.
    pub(super) fn pump(&mut self, worker: WorkerId) {
        if !self.ready || self.busy.contains(&worker) || self.busy.len() >= self.state.concurrency || self.halted() {
            return;
        }
        let Some(&attempt) = self.queues.get(&worker).and_then(|q| q.front()) else { return };
        let entry = self.state.storage.borrow().journal.get(&attempt).cloned();
        let Some(entry) = entry.filter(|e| e.phase == JournalPhase::Received) else {
            self.queues.get_mut(&worker).map(VecDeque::pop_front);
            return self.pump(worker);
        };
        let c = entry.command;
        if self.now_ms() > c.deadline.0 {
            self.finish(attempt);
            self.result(c.id, CommandOutcome::Failed { code: ExecErrorCode::DeadlineExceeded, detail: String::new() });
            return self.pump(worker);
        }
        if c.kind == CommandKind::Create
            && (!self.state.storage.borrow().tabs.contains_key(&worker) || self.tab_closed(worker))
        {
            let index = self.state.storage.borrow().next_chat;
            let Some(chat) = self.state.chats.get(index).cloned() else {
                self.finish(attempt);
                let detail = "no free conversation".into();
                self.result(c.id, CommandOutcome::Failed { code: ExecErrorCode::ConversationClosed, detail });
                return;
            };
            self.state.storage.borrow_mut().next_chat += 1;
            return self.bind(worker, chat); // submit once the tab is connected and ready
        }
        if c.kind != CommandKind::Create && !self.holds(worker, &c.conversation) {
            return self.not_held(attempt, &c);
        }
        let Some((tab, state)) = self.tabs.get(&worker).cloned() else {
            return; // the tab is still connecting
        };
        let Some(state) = state else { return };
        let steer = match (state, c.kind) {
            (ConversationState::Closed, _) => {
                self.finish(attempt);
                self.result(
                    c.id,
                    CommandOutcome::Failed { code: ExecErrorCode::ConversationClosed, detail: String::new() },
                );
                return self.pump(worker);
            }
            (ConversationState::Generating, CommandKind::Steer) if self.state.steering => true,
            (ConversationState::Generating, CommandKind::Steer) => {
                self.finish(attempt);
                self.result(
                    c.id,
                    CommandOutcome::Failed { code: ExecErrorCode::SteeringUnavailable, detail: String::new() },
                );
                return self.pump(worker);
            }
            (ConversationState::Generating, _) => return, // wait for idle
            (ConversationState::Error(kind), _) if kind.stops_typing() || kind == ErrorKind::AppUnavailable => {
                // Nothing is typed into a page that shows a limit, a check, a dialog or a
                // lost app: the command waits for the page to clear, or for its deadline.
                self.wait_for_page(worker, c.deadline);
                return;
            }
            (ConversationState::AwaitingApproval, _) => {
                // Nor while an approval card waits (never clicked): the command waits.
                self.wait_for_page(worker, c.deadline);
                return;
            }
            (ConversationState::Unrecognized, _) => {
                // Nor into a page showing something the adapter cannot name (issue 27):
                // only what is positively recognized is typed into.
                self.wait_for_page(worker, c.deadline);
                return;
            }
            _ => false,
        };
        // The composer needs a moment after the command arrived.
        let ready_at = entry.received_at + self.state.submit_delay_ms;
        if self.now_ms() < ready_at {
            if self.preparing.insert(worker) {
                let (events, wait) = (self.events.clone(), Duration::from_millis(ready_at - self.now_ms()));
                tokio::task::spawn_local(async move {
                    tokio::time::sleep(wait).await;
                    let _ = events.send(Event::Pump(worker));
                });
            }
            return;
        }
        // Submission starts: journal first, then touch the page.
        self.set_phase(attempt, JournalPhase::SubmissionStarted);
        self.boundary(Boundary::SubmissionStarted, worker);
        if self.halted() {
            return;
        }
        self.busy.insert(worker);
        let _ = tab.send(ToChat::Submit { worker, key: c.idempotency_key.clone(), prompt: c.prompt.clone(), steer });
    }

    /// Works every queue (a slot under the concurrency limit may have freed up).
    pub(super) fn pump_all(&mut self) {
        let workers: Vec<WorkerId> = self.queues.iter().filter(|(_, q)| !q.is_empty()).map(|(w, _)| *w).collect();
        for worker in workers {
            self.pump(worker);
        }
    }

    pub(super) fn set_phase(&self, attempt: AttemptId, phase: JournalPhase) {
        if let Some(e) = self.state.storage.borrow_mut().journal.get_mut(&attempt) {
            e.phase = phase;
        }
    }

    /// Marks the queue head done (journal `completed`) and frees the worker's queue.
    pub(super) fn finish(&mut self, attempt: AttemptId) {
        self.set_phase(attempt, JournalPhase::Completed);
        if let Some(entry) = self.state.storage.borrow().journal.get(&attempt) {
            let worker = entry.command.worker;
            if let Some(q) = self.queues.get_mut(&worker) {
                q.retain(|a| *a != attempt);
            }
        }
    }

    pub(super) fn head(&self, worker: WorkerId) -> Option<AttemptId> {
        self.queues.get(&worker).and_then(|q| q.front()).copied()
    }

    /// The page shows our message: submitted.
    pub(super) fn accepted(&mut self, worker: WorkerId, key: &str) {
        let Some(attempt) = self.head(worker) else { return };
        let (id, kind) = {
            let storage = self.state.storage.borrow();
            let e = &storage.journal[&attempt];
            if e.command.idempotency_key != key {
                return;
            }
            (e.command.id, e.command.kind)
        };
        self.busy.remove(&worker);
        let conversation = (kind == CommandKind::Create).then(|| self.state.storage.borrow().tabs[&worker].url.clone());
        let state_seq = self.state.storage.borrow().seq.get(&worker).copied().unwrap_or(0);
        {
            let mut storage = self.state.storage.borrow_mut();
            let e = storage.journal.get_mut(&attempt).expect("journaled");
            e.phase = JournalPhase::Submitted;
            e.state_seq = state_seq;
            e.conversation = conversation.clone();
        }
        self.boundary(Boundary::SubmittedBeforeResult, worker);
        if self.halted() {
            return;
        }
        self.result(id, CommandOutcome::Submitted { state_seq, conversation: conversation.clone() });
        if let Some(url) = conversation {
            let report = BindingReport { worker, conversation: url, open: true, observation: None };
            self.send(ExecutorInput::Binding { executor: self.id.clone(), report });
        }
        self.finish(attempt);
        self.boundary(Boundary::JournalCompleted, worker);
        if self.halted() {
            return;
        }
        self.pump_all();
    }

    /// The page refused (definitely not submitted), or showed the delivery-timeout card
    /// (submitted or not, nobody knows): the command ends with `code`.
    pub(super) fn refused(&mut self, worker: WorkerId, key: &str, code: ExecErrorCode, detail: &str) {
        let Some(attempt) = self.head(worker) else { return };
        let id = {
            let storage = self.state.storage.borrow();
            let e = &storage.journal[&attempt];
            if e.command.idempotency_key != key {
                return;
            }
            e.command.id
        };
        self.busy.remove(&worker);
        self.finish(attempt);
        self.result(id, CommandOutcome::Failed { code, detail: detail.into() });
        self.pump(worker);
    }
}
