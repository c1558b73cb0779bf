//! The approval mode of the CLI executor (`--approvals ask`, issue 20), as the real one
//! runs it for Codex workers (docs/cli-agents.md "Approvals", `codex/approval.rs`): a
//! turn may stop on a request to leave its sandbox (seeded: some turns, at a seeded point
//! mid-turn); the session reports `awaiting_approval` with `approval {id, kind, summary}`
//! and nothing of the turn runs until the answer. `approval.answer` naming the waiting
//! request writes its decision once (approve: the turn goes on; decline: it goes on
//! without what it asked) and reports `generating`; any other answer is `APPROVAL_GONE`
//! and writes nothing. A child crash, an executor restart, a turn ended by a limit or a
//! closed session drop the waiting request: it is gone, never answerable again. Handles are
//! numbered per child (harsher than the real executor, which numbers on across a worker's
//! children and starts again only when it restarts): a new child's first request is
//! `apr-1` again, a new request under a handle answered or gone before (the oracle checks that a
//! handle names one waiting request at a time, and the engine that it is answerable).

use super::Cli;
use crate::cli_session::*;
use engine::ids::WorkerId;
use engine::input::{CommandOutcome, ExecErrorCode};
use engine::model::{ConversationState, PendingApproval};
use engine::{ExecutorCommand, ExecutorKind};
use std::sync::Arc;
use tokio::sync::oneshot;

/// Purposes of the seeded draws (`roll`) of requests: whether a turn asks, and when.
const ROLL_ASK: u64 = 11;
/// How long into a request a scenario's `child-crash ... asking` crashes the child: after
/// the report reached the daemon, before the stand-in operator's earliest answer (10 s).
const CRASH_INTO_ASK_MS: u64 = 5_000;

impl Cli {
    /// When (ms into the turn) the worker's turn `turn` stops on an approval request, if
    /// it does: Codex sessions of an `ask` executor, on a seeded share of turns.
    pub(super) fn ask_at(&self, worker: WorkerId, kind: ExecutorKind, turn: usize, length_ms: u64) -> Option<u64> {
        let knobs = &self.state.knobs;
        if !knobs.approvals_ask || kind != ExecutorKind::Codex {
            return None;
        }
        let seed = self.state.seed;
        let asks = roll(seed, worker, turn as u64, ROLL_ASK) % 100 < knobs.ask_pct;
        asks.then(|| roll(seed, worker, turn as u64, ROLL_ASK + 1) % length_ms.max(1))
    }

    /// The turn asks: a new request waits (in the record first), reported
    /// `awaiting_approval` with it. `go` is kept until the request is answered or gone.
    pub(super) fn ask(&mut self, worker: WorkerId, turn: usize, go: oneshot::Sender<()>) {
        let Some((session, _)) = self.bound_session(worker) else { return };
        let now = self.now_ms();
        let id = {
            let mut disk = self.state.disk.borrow_mut();
            let running = disk.sessions[&session].turns.len() == turn + 1
                && disk.sessions[&session].turns[turn].state == TurnState::Running;
            if !running {
                return; // the turn ended meanwhile: `go` dropped, it stops
            }
            let seq = self.approval_seq.entry(worker).or_default();
            *seq += 1;
            let id = format!("apr-{seq}");
            let record = disk.sessions.get_mut(&session).expect("a session");
            record.asks.push(Ask { id: id.clone(), turn, asked_ms: now, end: None });
            id
        };
        self.asking.insert(worker, go);
        if self.crash_on_ask.remove(&worker)
            && let Some(child) = self.children.get(&worker).copied().flatten()
        {
            self.after(CRASH_INTO_ASK_MS, super::Event::ChildCrash { worker, child });
        }
        let summary = format!("cargo test --offline (cwd /sim/{worker}; network access asked)");
        self.trace(format!("{worker} asks {id}"));
        let approval = PendingApproval {
            id: Arc::from(id.as_str()),
            kind: Arc::from("command"),
            summary: Arc::from(summary.as_str()),
        };
        self.publish_with(worker, ConversationState::AwaitingApproval, None, Some(&summary), Some(approval));
    }

    /// A scenario's crash while a request waits: now if one does, else at the next one.
    pub(super) fn crash_while_asking(&mut self, worker: WorkerId) {
        if self.asking.contains_key(&worker) {
            self.child_crashed(worker);
        } else {
            self.crash_on_ask.insert(worker);
        }
    }

    /// `approval.answer`: written once to the request it names if that one waits in the
    /// command's session, else `APPROVAL_GONE`. Every answer is logged in the record.
    pub(super) fn approval_answer(&mut self, c: &ExecutorCommand) {
        let worker = c.worker;
        let now = self.now_ms();
        let Some(answer) = c.approval.clone() else {
            return self.result(c.id, gone("an approval.answer without its answer"));
        };
        let bound = self.bound_session(worker).filter(|(s, k)| *conversation_of(*k, s) == *c.conversation);
        let written = {
            let mut disk = self.state.disk.borrow_mut();
            // The session the command names (bound or not) logs the answer.
            let named = disk.sessions.iter().find(|(s, r)| *conversation_of(r.kind, s) == *c.conversation);
            let Some(session) = named.map(|(s, _)| s.clone()) else {
                drop(disk);
                return self.result(c.id, gone("no such session here"));
            };
            let record = disk.sessions.get_mut(&session).expect("a session");
            let waiting = bound.is_some()
                && self.asking.contains_key(&worker)
                && record.asking().is_some_and(|a| *a.id == *answer.id);
            if waiting {
                record.asking().expect("a waiting request").end = Some((AskEnd::Answered(answer.decision), now));
            }
            let (key, id) = (c.idempotency_key.clone(), answer.id.to_string());
            record.answers.push(AnswerSeen { key, id, decision: answer.decision, at_ms: now, written: waiting });
            waiting
        };
        self.trace(format!("{worker} approval.answer {} {}: {}", answer.id, answer.decision.as_str(), written));
        if !written {
            return self.result(
                c.id,
                gone("no such approval request waits here: answered already, or its turn or session ended"),
            );
        }
        if let Some(go) = self.asking.remove(&worker) {
            let _ = go.send(());
        }
        let conversation = bound.map(|(s, k)| Arc::from(conversation_of(k, &s)));
        self.result(c.id, CommandOutcome::Submitted { state_seq: self.seq(worker), conversation });
        self.publish(worker, ConversationState::Generating, None, None);
    }
}

/// The `APPROVAL_GONE` failure.
fn gone(detail: &str) -> CommandOutcome {
    CommandOutcome::Failed { code: ExecErrorCode::Other(Arc::from("APPROVAL_GONE")), detail: detail.into() }
}
