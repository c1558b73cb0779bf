//! What runs in the CLI executor's sessions (the CLIs' side of the model): a prompt taken
//! in, turns and the agent working in them, where a Claude steer lands (merged, or the next
//! turn), children that crash and come back, turns nobody here started, and usage limits
//! per account. `cli.rs` is the executor around them (journal, commands, reports).

use super::{Cli, Event};
use crate::cli_session::*;
use crate::ledger::SharedLedger;
use crate::wire::SimOp;
use engine::ids::WorkerId;
use engine::model::{ConversationState, ErrorKind};
use engine::{CommandKind, ExecutorCommand, ExecutorKind};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a new child needs to resume a session after the last one exited.
const RESPAWN_MS: u64 = 1_500;
/// How long a limited account takes to fail a turn started anyway.
const LIMITED_TURN_MS: u64 = 2_000;
/// How long Claude takes to start the turn of a line queued behind the one that ended
/// (its `init` and first request): longer than the idle grace, so the daemon must know
/// the steer is that turn rather than wait for it to show.
const NEXT_TURN_MS: u64 = 5_000;
/// How long a foreign turn that found the session busy waits before it looks again.
const FOREIGN_RETRY_MS: u64 = 20_000;

/// Purposes of seeded draws (`roll`); the executor's own are in `cli.rs`.
const ROLL_TURN: u64 = 2;
const ROLL_TURN_CRASH: u64 = 3;
const ROLL_MERGE: u64 = 4;
const ROLL_AFTER_TURN: u64 = 5;
const ROLL_AGENT: u64 = 7;

impl Cli {
    /// The session takes the prompt in (its record first): a create or send starts a
    /// turn, a steer joins the running one (Codex) or waits behind it (Claude).
    pub(super) fn take_in(&mut self, worker: WorkerId, session: &str, c: &ExecutorCommand, child: u64) {
        let steer = c.kind == CommandKind::Steer;
        let now = self.now_ms();
        let (kind, n) = {
            let mut disk = self.state.disk.borrow_mut();
            let up_ms = now.saturating_sub(self.started_ms);
            let record = disk.sessions.get_mut(session).expect("a session");
            record.prompts.push(Taken { key: c.idempotency_key.clone(), steer, at_ms: now, up_ms });
            (record.kind, record.prompts.len() as u64)
        };
        self.state.ledger.borrow_mut().delivered(session, worker, &c.idempotency_key, &c.prompt);
        self.trace(format!("{worker} takes {} in", c.idempotency_key));
        if !steer {
            return self.start_turn(worker, session, Some(c.idempotency_key.clone()), child);
        }
        let mut disk = self.state.disk.borrow_mut();
        let record = disk.sessions.get_mut(session).expect("a session");
        if kind == ExecutorKind::Codex {
            // `turn/steer` joins the active turn (the executor checked it runs).
            if let Some(t) = record.running() {
                t.merged.push(c.idempotency_key.clone());
            }
            return;
        }
        record.queued.push(c.idempotency_key.clone());
        drop(disk);
        // Claude takes it into the running turn at a tool boundary, or after it.
        if roll(self.state.seed, worker, n, ROLL_MERGE) % 100 < self.state.knobs.merge_pct {
            let key = c.idempotency_key.clone();
            self.after(
                5_000 + roll(self.state.seed, worker, n, ROLL_MERGE + 100) % 60_000,
                Event::Absorb { worker, key, child },
            );
        }
    }

    /// A turn starts in the session: the agent works on it (or a limited account fails it).
    pub(super) fn start_turn(&mut self, worker: WorkerId, session: &str, starter: Option<String>, child: u64) {
        let now = self.now_ms();
        let (kind, turn) = {
            let mut disk = self.state.disk.borrow_mut();
            let record = disk.sessions.get_mut(session).expect("a session");
            let turn = Turn {
                starter,
                merged: Vec::new(),
                dropped: Vec::new(),
                state: TurnState::Running,
                started_ms: now,
                ended_ms: None,
            };
            record.turns.push(turn);
            (record.kind, record.turns.len() - 1)
        };
        if self.limit_of(kind).is_some() {
            // The first model request fails with the limit.
            return self.after(LIMITED_TURN_MS, Event::TurnEnd { worker, turn, child, finished: false });
        }
        let seed = self.state.seed;
        let n = turn as u64;
        let a = &self.state.agents;
        let length_ms = if roll(seed, worker, n, ROLL_TURN) % 100 < a.long_turn_pct {
            20 * 60_000 + roll(seed, worker, n, ROLL_TURN + 1) % (25 * 60_000)
        } else {
            30_000 + roll(seed, worker, n, ROLL_TURN + 1) % (10 * 60_000)
        };
        let report = roll(seed, worker, n, ROLL_TURN + 2) % 100 < a.progress_pct;
        let agent = *self.state.disk.borrow_mut().agents.entry(worker).or_insert_with(|| {
            let span = u64::from(a.turns_max - a.turns_min + 1);
            let needed = a.turns_min + (roll(seed, worker, 0, ROLL_AGENT) % span) as u32;
            Agent { turns_needed: needed, turns_done: 0, finished: false }
        });
        let finish = !agent.finished && agent.turns_done + 1 >= agent.turns_needed;
        if roll(seed, worker, n, ROLL_TURN_CRASH) % 100 < self.state.knobs.child_crash_pct {
            let at = roll(seed, worker, n, ROLL_TURN_CRASH + 1) % length_ms;
            self.after(at, Event::ChildCrash { worker, child });
        }
        let ask = self.ask_at(worker, kind, turn, length_ms);
        let task =
            TurnTask { events: self.events.clone(), alive: self.alive.clone(), ledger: self.state.ledger.clone() };
        tokio::task::spawn_local(task.run(worker, (turn, child), length_ms, report, finish, ask));
    }

    /// The account's limit in force for `kind`, if any: a scenario's or one reached at a
    /// turn's end.
    pub(super) fn limit_of(&self, kind: ExecutorKind) -> Option<Limit> {
        let now = self.now_ms();
        let scheduled = self.state.knobs.events.iter().find_map(|e| match e.what {
            CliEventKind::Limit { kind: k, length_ms, names_time } if k == kind => {
                let l = Limit { kind, from_ms: e.at_ms, until_ms: e.at_ms + length_ms, names_time };
                (l.from_ms <= now && now < l.until_ms).then_some(l)
            }
            _ => None,
        });
        let reached = self.state.disk.borrow().accounts.get(&kind).copied().filter(|l| now < l.until_ms);
        scheduled.or(reached)
    }

    /// The turn's end as the CLI reports it: `idle`, or the limit's error.
    pub(super) fn ending(&self, kind: ExecutorKind) -> (ConversationState, Option<u64>, Option<&'static str>) {
        match self.limit_of(kind) {
            Some(l) => {
                let words = match kind {
                    ExecutorKind::Claude => "Claude AI usage limit reached",
                    _ => "You've hit your usage limit. Try again later.",
                };
                (ConversationState::Error(ErrorKind::UsageLimit), l.names_time.then_some(l.until_ms), Some(words))
            }
            None => (ConversationState::Idle, None, None),
        }
    }

    /// The agent's turn ended: record it, say where queued steers landed, publish the end,
    /// and run what follows (the next turn a steer started, a user's hook).
    pub(super) fn turn_ended(&mut self, worker: WorkerId, turn: usize, finished: bool) {
        let Some((session, kind)) = self.bound_session(worker) else { return };
        let seed = self.state.seed;
        // Rarely, this turn's requests reach the account's limit.
        if self.limit_of(kind).is_none()
            && roll(seed, worker, turn as u64, ROLL_AFTER_TURN) % 100 < self.state.knobs.limit_pct
        {
            let now = self.now_ms();
            let r = roll(seed, worker, turn as u64, ROLL_AFTER_TURN + 1);
            let limit = Limit {
                kind,
                from_ms: now,
                until_ms: now + 10 * 60_000 + r % (30 * 60_000),
                names_time: r.is_multiple_of(2),
            };
            let mut disk = self.state.disk.borrow_mut();
            disk.accounts.insert(kind, limit);
            disk.limits.push(limit);
        }
        let (state, until, detail) = self.ending(kind);
        let next = {
            let mut disk = self.state.disk.borrow_mut();
            let record = disk.sessions.get_mut(&session).expect("a session");
            if record.turns.get(turn).is_some_and(|t| t.state == TurnState::Running) {
                // A request still waiting goes with its turn (a limit ended it).
                record.asks_gone(self.state.ledger.borrow().now_ms);
                self.asking.remove(&worker);
            }
            let Some(t) = record.turns.get_mut(turn).filter(|t| t.state == TurnState::Running) else { return };
            let limited = state != ConversationState::Idle;
            t.state = if limited { TurnState::Limited } else { TurnState::Ended };
            t.ended_ms = Some(self.now_ms());
            let ours = t.starter.is_some();
            // A limited turn takes its queued steers down with it.
            let next = if limited {
                let dropped = std::mem::take(&mut record.queued);
                record.turns[turn].dropped.extend(dropped);
                Vec::new()
            } else {
                std::mem::take(&mut record.queued)
            };
            if ours && !limited {
                let agent = disk.agents.get_mut(&worker).expect("the agent");
                agent.turns_done += 1;
                agent.finished |= finished;
            }
            next
        };
        let seq = self.seq(worker);
        // Claude runs the lines the turn did not take as the next turn, together: say so
        // (for each) before the state that ends this one. The newest is the steer the
        // daemon's attempt is about (each steer took the turn over from the one before).
        for key in &next {
            self.landed(worker, key, executor_protocol::LandedWire::NextTurn, seq + 1);
        }
        self.publish(worker, state, until, detail);
        if !next.is_empty() {
            // They wait in the session (it stays busy) until the CLI starts that turn.
            self.state.disk.borrow_mut().sessions.get_mut(&session).expect("a session").queued = next;
            if let Some(child) = self.children.get(&worker).copied().flatten() {
                self.after(NEXT_TURN_MS, Event::NextTurn { worker, child });
            }
            return;
        }
        let draw = roll(seed, worker, turn as u64, ROLL_AFTER_TURN + 2);
        if state == ConversationState::Idle && draw % 100 < self.state.knobs.foreign_pct {
            self.after(5_000 + (draw / 100) % 55_000, Event::ForeignStart { worker });
        }
        self.pump(worker);
    }

    /// The CLI starts the turn of the steers the last turn did not take.
    pub(super) fn next_turn(&mut self, worker: WorkerId, child: u64) {
        let Some((session, _)) = self.bound_session(worker) else { return };
        let next =
            std::mem::take(&mut self.state.disk.borrow_mut().sessions.get_mut(&session).expect("a session").queued);
        let Some((newest, earlier)) = next.split_last() else { return };
        self.start_turn(worker, &session, Some(newest.clone()), child);
        {
            let mut disk = self.state.disk.borrow_mut();
            let running = disk.sessions.get_mut(&session).and_then(|r| r.running()).expect("the steer's turn");
            running.merged.extend(earlier.iter().cloned());
        }
        self.publish(worker, ConversationState::Generating, None, None);
    }

    /// `steer.landed` for the steer whose nonce is `key`.
    pub(super) fn landed(&self, worker: WorkerId, key: &str, landed: executor_protocol::LandedWire, seq: u64) {
        let command =
            self.state.disk.borrow().journal.values().find(|e| e.command.idempotency_key == key).map(|e| e.command.id);
        let Some(command_id) = command else { return };
        self.trace(format!("{worker} steer {key} landed {landed:?}"));
        self.send(executor_protocol::ExecutorMessage::SteerLanded(executor_protocol::SteerLandedWire {
            worker_id: worker,
            command_id,
            landed,
            seq,
        }));
    }

    /// A queued Claude steer joins the running turn (a tool call ended first).
    pub(super) fn absorb(&mut self, worker: WorkerId, key: &str) {
        let Some((session, _)) = self.bound_session(worker) else { return };
        let joined = {
            let mut disk = self.state.disk.borrow_mut();
            let record = disk.sessions.get_mut(&session).expect("a session");
            let Some(at) = record.queued.iter().position(|k| k == key) else { return };
            match record.running() {
                Some(t) => {
                    t.merged.push(key.to_string());
                    record.queued.remove(at);
                    true
                }
                None => false,
            }
        };
        if joined {
            self.landed(worker, key, executor_protocol::LandedWire::Merged, self.seq(worker));
        }
    }

    /// The worker's child exits: the session and its record stay; a new child resumes it.
    pub(super) fn child_crashed(&mut self, worker: WorkerId) {
        let Some((session, kind)) = self.bound_session(worker) else { return };
        if self.children.get(&worker).copied().flatten().is_none() {
            return;
        }
        self.children.insert(worker, None);
        self.alive.borrow_mut().remove(&worker);
        self.asking.remove(&worker);
        self.approval_seq.remove(&worker);
        let was_running = {
            let mut disk = self.state.disk.borrow_mut();
            let record = disk.sessions.get_mut(&session).expect("a session");
            let running = record.running().is_some();
            let now_ms = self.state.ledger.borrow().now_ms;
            record.interrupt(now_ms);
            record.asks_gone(now_ms);
            running
        };
        self.trace(format!("{worker} child crashed"));
        if was_running && kind == ExecutorKind::Claude {
            self.publish(
                worker,
                ConversationState::Error(ErrorKind::Generic),
                None,
                Some("the Claude Code child exited"),
            );
        }
        self.next_child += 1;
        let child = self.next_child;
        self.after(RESPAWN_MS, Event::ChildBack { worker, child });
    }

    /// A new child resumed the session: settle what the old one left unacknowledged, then
    /// show the session as it is (an interrupted turn is over).
    pub(super) fn child_back(&mut self, worker: WorkerId, child: u64) {
        if self.children.get(&worker) != Some(&None) {
            return;
        }
        self.children.insert(worker, Some(child));
        self.alive.borrow_mut().insert(worker, child);
        self.reconcile(worker);
        self.idle_if_interrupted(worker);
        self.pump(worker);
    }

    /// Shows `idle` if the session's last turn was interrupted (its child died): the
    /// session is idle again, an observation like any turn's end.
    pub(super) fn idle_if_interrupted(&mut self, worker: WorkerId) {
        let interrupted = self.bound_session(worker).is_some_and(|(session, _)| {
            let disk = self.state.disk.borrow();
            disk.sessions[&session].turns.last().is_some_and(|t| t.state == TurnState::Interrupted)
        });
        let shown_idle =
            self.state.disk.borrow().shown.get(&worker).is_some_and(|s| s.state == ConversationState::Idle);
        if interrupted && !shown_idle {
            self.publish(worker, ConversationState::Idle, None, None);
        }
    }

    /// A turn nobody here commanded starts (a user's Stop hook, a scheduled wake-up).
    pub(super) fn foreign_start(&mut self, worker: WorkerId) {
        let Some((session, _)) = self.bound_session(worker) else { return };
        let Some(child) = self.children.get(&worker).copied().flatten() else { return };
        let turn = {
            let mut disk = self.state.disk.borrow_mut();
            disk.foreign_turns += 1;
            let key = format!("foreign-{}", disk.foreign_turns);
            let now = self.now_ms();
            let record = disk.sessions.get_mut(&session).expect("a session");
            if record.busy() {
                // A Stop hook runs when the session's turn is over: a little later.
                drop(disk);
                return self.after(FOREIGN_RETRY_MS, Event::ForeignStart { worker });
            }
            let turn = Turn {
                starter: None,
                merged: vec![key],
                dropped: Vec::new(),
                state: TurnState::Running,
                started_ms: now,
                ended_ms: None,
            };
            record.turns.push(turn);
            record.turns.len() - 1
        };
        let detail = format!("a turn the orchestrator did not start ran in this session (turn {turn})");
        self.publish(worker, ConversationState::Error(ErrorKind::ForeignTurn), None, Some(&detail));
        let length_ms = 60_000 + roll(self.state.seed, worker, turn as u64, ROLL_AFTER_TURN + 3) % 240_000;
        self.after(length_ms, Event::ForeignEnd { worker, turn, child });
    }

    pub(super) fn foreign_end(&mut self, worker: WorkerId, turn: usize) {
        let Some((session, _)) = self.bound_session(worker) else { return };
        let now = self.now_ms();
        {
            let mut disk = self.state.disk.borrow_mut();
            let record = disk.sessions.get_mut(&session).expect("a session");
            let Some(t) = record.turns.get_mut(turn).filter(|t| t.state == TurnState::Running) else { return };
            t.state = TurnState::Ended;
            t.ended_ms = Some(now);
        }
        self.publish(worker, ConversationState::Idle, None, None);
        self.pump(worker);
    }

    /// A scenario's limit begins: the kind's running turns fail with it now (their next
    /// model request does).
    pub(super) fn limit_begins(&mut self, kind: ExecutorKind) {
        let running: Vec<(WorkerId, usize)> = {
            let disk = self.state.disk.borrow();
            let sessions = disk.bound.iter().map(|(w, s)| (*w, &disk.sessions[s]));
            let of_kind = sessions.filter(|(_, r)| r.kind == kind);
            of_kind
                .filter(|(_, r)| r.turns.last().is_some_and(|t| t.state == TurnState::Running))
                .map(|(w, r)| (w, r.turns.len() - 1))
                .collect()
        };
        for (worker, turn) in running {
            if self.children.get(&worker).copied().flatten().is_some() {
                self.turn_ended(worker, turn, false);
            }
        }
    }
}

/// The agent working on one turn inside a session's child: progress at half time, its
/// `worker_complete` near the end of its last turn, then the turn's end. It stops the
/// moment its child is gone.
struct TurnTask {
    events: mpsc::UnboundedSender<Event>,
    alive: Rc<RefCell<BTreeMap<WorkerId, u64>>>,
    ledger: SharedLedger,
}

impl TurnTask {
    /// `ask`: ms into the turn at which it stops on an approval request (and waits for
    /// its answer: it stops for good if the request goes unanswered).
    async fn run(
        self,
        worker: WorkerId,
        (turn, child): (usize, u64),
        length_ms: u64,
        report: bool,
        finish: bool,
        ask: Option<u64>,
    ) {
        let live = || self.alive.borrow().get(&worker) == Some(&child);
        let half_ms = length_ms / 2;
        let half = Duration::from_millis(half_ms);
        let mut waited = 0;
        if let Some(at) = ask.filter(|at| *at < half_ms) {
            tokio::time::sleep(Duration::from_millis(at)).await;
            if !self.ask(worker, turn, child).await {
                return;
            }
            waited = at;
        }
        tokio::time::sleep(half - Duration::from_millis(waited)).await;
        if !live() {
            return;
        }
        if report {
            let summary = format!("{worker}-cli-turn{turn}-progress");
            if crate::chat::agent_call("cli", SimOp::Progress { worker, summary: summary.clone() }, &self.ledger)
                .await
                .is_ok()
            {
                self.ledger.borrow_mut().acked.push((worker, summary));
            }
        }
        waited = half_ms;
        if let Some(at) = ask.filter(|at| *at >= half_ms) {
            tokio::time::sleep(Duration::from_millis(at - half_ms)).await;
            if !live() || !self.ask(worker, turn, child).await {
                return;
            }
            waited = at;
        }
        tokio::time::sleep(Duration::from_millis(half_ms - (waited - half_ms))).await;
        if !live() {
            return;
        }
        let mut finished = false;
        if finish {
            let summary = format!("{worker}-done");
            match crate::chat::agent_call("cli", SimOp::Complete { worker, summary: summary.clone() }, &self.ledger)
                .await
            {
                Ok(()) => {
                    let mut l = self.ledger.borrow_mut();
                    l.acked.push((worker, summary));
                    l.finished_agents.insert(worker);
                    finished = true;
                }
                Err(code) if code == "WORKER_TERMINAL" => {
                    self.ledger.borrow_mut().finished_agents.insert(worker);
                    finished = true;
                }
                Err(_) => {}
            }
        }
        let _ = self.events.send(Event::TurnEnd { worker, turn, child, finished });
    }

    /// Raises the approval request and waits for its answer: `false` if it went
    /// unanswered (the child died, the turn ended): the turn is over then.
    async fn ask(&self, worker: WorkerId, turn: usize, child: u64) -> bool {
        if self.alive.borrow().get(&worker) != Some(&child) {
            return false;
        }
        let (go, answered) = tokio::sync::oneshot::channel();
        let _ = self.events.send(Event::Ask { worker, turn, child, go });
        answered.await.is_ok() && self.alive.borrow().get(&worker) == Some(&child)
    }
}
