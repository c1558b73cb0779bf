//! A worker's books, shared by the Codex and Claude tasks: everything a task reports to
//! the daemon goes through the journal first. A command result is journaled `completed`,
//! then sent; a created conversation's `binding` follows its create's result; a state's
//! sequence is persisted before the state is sent, and an unchanged state is never sent
//! again (a larger `seq` would read as a new turn end); where a steer landed is journaled
//! with the command, then sent (`steer.landed`). The [`gate`] journals a prompt's
//! submission (and a create's binding) before its line is written to the child.
//!
//! Called books, not a ledger: the simulator's `ledger.rs` is what hosts observed, for its
//! checkers; these are what one worker of this executor told the daemon.

use crate::base::journal::{Bound, Entry, Journal, Landing};
use crate::base::pump::Gate;
use crate::base::report::Report;
use crate::base::worker::{Out, Restarts, Shared, lock};
use engine::ExecutorKind;
use engine::ids::{CommandId, WorkerId};
use engine::model::ConversationState;
use executor_protocol::{
    ApprovalWire, BindingWire, CommandWire, ExecutorKindWire, KindWire, LandedWire, ObservationWire, OutcomeWire,
    PhaseWire, ResultWire, RetryWire, StateName, StateWire, SteerLandedWire,
};
use std::sync::{Arc, Mutex, MutexGuard};

/// One worker's reports, journaled first.
pub struct Books {
    worker: WorkerId,
    shared: Shared,
    /// The latest state of a conversation being created (published once its create
    /// reports, so the daemon hears of the binding before its states).
    creating: Option<(String, Report)>,
}

impl Books {
    /// The books of `worker`.
    pub fn new(worker: WorkerId, shared: Shared) -> Books {
        Books { worker, shared, creating: None }
    }

    /// The journal, locked.
    pub fn journal(&self) -> MutexGuard<'_, Journal> {
        lock(&self.shared.journal)
    }

    /// The worker's binding.
    pub fn bound(&self) -> Option<Bound> {
        self.journal().binding(self.worker).cloned()
    }

    /// This worker's journaled commands in `phase`, oldest first.
    pub fn entries(&self, phase: PhaseWire) -> Vec<Entry> {
        let journal = self.journal();
        journal.entries().filter(|e| e.command.worker_id == self.worker && e.phase == phase).cloned().collect()
    }

    /// A `conversation.close` of the bound conversation forgets the binding (journaled).
    pub fn closing(&self, command: &CommandWire) {
        let closes = command.kind == KindWire::Close
            && session_of(&command.conversation_url).is_some_and(|id| self.bound().is_some_and(|b| b.thread == id));
        if closes && let Err(e) = self.journal().unbind(self.worker) {
            tracing::warn!(worker = %self.worker, code = e.code(), "journaling a close: {e}");
        }
    }

    /// Fails `command` with `code` (journaled, then sent).
    pub async fn fail(&mut self, command: CommandId, code: &str, detail: &str) {
        self.result(command, OutcomeWire::Failed { code: code.to_string(), detail: detail.to_string() }).await;
    }

    /// Journals `outcome` as the command's completion, then sends it; a create's result
    /// is followed by the new conversation's binding and its state so far.
    pub async fn result(&mut self, command: CommandId, outcome: OutcomeWire) {
        if let Err(e) = self.journal().complete(command, &outcome) {
            tracing::warn!(worker = %self.worker, code = e.code(), "journaling the result of {command}: {e}");
        }
        let created = match &outcome {
            OutcomeWire::Submitted { conversation_url: Some(url), .. } => Some(url.clone()),
            _ => None,
        };
        let _ = self.shared.out.send(Out::Result(ResultWire { command_id: command, outcome })).await;
        let Some(url) = created else { return };
        let binding =
            BindingWire { worker_id: self.worker, conversation_url: url.clone(), open: true, observation: None };
        let _ = self.shared.out.send(Out::Binding(binding)).await;
        if let Some(id) = session_of(&url)
            && let Some((creating, report)) = self.creating.take()
            && creating == id
        {
            self.publish(id, report).await;
        }
    }

    /// Where the submitted steer `command` landed: journaled, then sent as `steer.landed`.
    /// A `next_turn` landing names the state that ends the turn the steer missed: the next
    /// one published when that turn still shows `generating` (the core says the landing
    /// just before that state, so the daemon hears it first), else the last one published
    /// (a steer acknowledged after its turn had ended). `merged` names the current one.
    pub async fn landed(&mut self, command: CommandId, landed: LandedWire) {
        let seq = {
            let mut journal = self.journal();
            let seq = journal.seq(self.worker);
            let running = journal.observed(self.worker).is_some_and(|o| o.state == StateName::Generating);
            let seq = if landed == LandedWire::NextTurn && running { seq + 1 } else { seq };
            if let Err(e) = journal.landed(command, Landing { landed, seq }) {
                tracing::warn!(worker = %self.worker, code = e.code(), "journaling where {command} landed: {e}");
            }
            seq
        };
        let wire = SteerLandedWire { worker_id: self.worker, command_id: command, landed, seq };
        let _ = self.shared.out.send(Out::Landed(wire)).await;
    }

    /// Publishes a state of `conversation` (a thread or session id) with the next persisted
    /// sequence, unless it is the state last published: only for the bound conversation (a
    /// conversation being created waits for its create's result; older ones of the worker
    /// are not its conversation any more).
    pub async fn publish(&mut self, conversation: &str, report: Report) {
        self.publish_asking(conversation, report, None).await;
    }

    /// [`Books::publish`], with the approval request an `awaiting_approval` waits on.
    pub async fn publish_asking(&mut self, conversation: &str, report: Report, approval: Option<ApprovalWire>) {
        let (state, error_kind) = StateName::from_engine(report.state);
        let observation = ObservationWire {
            state,
            error_kind,
            seq: 0,
            block: report.block.clone(),
            until_ms: report.until.map(|t| t.0),
            detail: report.detail.clone(),
            approval,
            retry: report.retry.as_ref().map(|r| RetryWire { reason: r.reason.to_string(), attempt: r.attempt }),
        };
        let seq = {
            let mut journal = self.journal();
            if journal.binding(self.worker).is_none_or(|b| b.thread != conversation) {
                drop(journal);
                // A conversation closed (its binding dropped first) is not one being
                // created: its `closed` must not take the place of a create's first state.
                if report.state != ConversationState::Closed {
                    self.creating = Some((conversation.to_string(), report));
                }
                return;
            }
            match journal.publish(self.worker, &observation) {
                Ok(Some(seq)) => seq,
                Ok(None) => return, // unchanged: a larger seq would read as a new turn end
                Err(e) => {
                    tracing::warn!(worker = %self.worker, code = e.code(), "persisting a sequence: {e}");
                    return;
                }
            }
        };
        let wire = StateWire {
            worker_id: self.worker,
            state,
            error_kind,
            seq,
            block: observation.block,
            until_ms: observation.until_ms,
            detail: observation.detail,
            approval: observation.approval,
            retry: observation.retry,
        };
        let _ = self.shared.out.send(Out::State(wire)).await;
    }
}

/// The gate of a worker's prompts: a create's prompt binds the worker to its new
/// conversation first (running in `cwd`, on a `kind` CLI), then every prompt is journaled
/// `submission-started` before its line is written. A prompt written again into a new
/// child (after a refused start) keeps its first record.
pub fn gate(journal: Arc<Mutex<Journal>>, cwd: String, kind: ExecutorKindWire) -> Box<dyn Gate> {
    Box::new(move |command: CommandId, worker: WorkerId, conversation: &str| {
        let mut journal = lock(&journal);
        let entry = journal.entry(command).cloned();
        if entry.as_ref().is_some_and(|e| e.phase == PhaseWire::SubmissionStarted) {
            return Ok(());
        }
        if entry.is_some_and(|e| e.command.kind == KindWire::Create) {
            journal.bind(worker, conversation, &cwd, kind)?;
        }
        journal.submission_started(command, conversation).map(|_| ())
    })
}

/// The thread or session id of a CLI conversation id (`codex:thread/<id>`,
/// `claude:session/<id>`); `None` for any other form.
pub fn session_of(conversation: &str) -> Option<&str> {
    ExecutorKind::ALL
        .into_iter()
        .filter_map(ExecutorKind::conversation_prefix)
        .find_map(|prefix| conversation.strip_prefix(prefix))
        .filter(|id| !id.is_empty())
}

/// What every worker task does first with a command from the daemon: a command that
/// submits lets a worker whose child was given up on try again, and a close of the bound
/// conversation forgets the binding. Says whether the command submits a prompt.
pub(crate) fn receive(command: &CommandWire, restarts: &mut Restarts, books: &Books) -> bool {
    let submits = matches!(command.kind, KindWire::Create | KindWire::Send | KindWire::Steer);
    if submits {
        restarts.retry();
    }
    books.closing(command);
    submits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversation_ids_of_both_clis() {
        assert_eq!(session_of("codex:thread/019a"), Some("019a"));
        assert_eq!(session_of("claude:session/b172ea10"), Some("b172ea10"));
        assert_eq!(session_of("claude:session/"), None);
        assert_eq!(session_of("https://chatgpt.com/c/x"), None);
    }
}
