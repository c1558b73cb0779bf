//! The simulated CLI executor (`orchestrator executor-cli`): a Rust model of what it does
//! for Codex CLI and Claude Code workers, speaking the bridge's protocol over turmoil as
//! the browser does, with `kinds: ["codex", "claude"]`.
//!
//! It follows the real executor's rules (docs/cli-agents.md, docs/protocol/executor.md):
//! one session per worker, its child on this host; a journal that survives restarts
//! (`received -> submission-started -> submitted -> completed`, the phase written before
//! the step); idle delivery (a send waits while a turn runs or a steer is queued); a steer
//! only into a running turn of its own. What it models of the CLIs (`cli_session.rs`
//! keeps their records):
//! - a child that crashes mid-turn or mid-submission: the session and its record
//!   survive; a new child resumes it, the interrupted turn shows `idle` (Claude reports
//!   the crash as an `error` first), and a `submission-started` prompt is settled from the
//!   record: found = `submitted`, provably absent = `DEADLINE_EXCEEDED`, a torn record =
//!   `AMBIGUOUS_SUBMISSION`; the executor never resends by itself;
//! - Claude steers, queued and then taken into the running turn (`steer.landed` merged)
//!   or run as the next turn (`steer.landed` next_turn, sent before the state that ends
//!   the turn it missed); Codex steers always join the turn (no report, as today);
//! - foreign turns (a user's hook): reported `error` / `foreign_turn`, then `idle`;
//! - usage limits per kind, with or without a reset time: the running turns of that kind
//!   end `error` / `usage_limit`, and any turn started before the reset fails the same way.
//!
//! An executor restart kills every child; the records, the journal and the sequences stay.

use crate::cli_session::*;
use crate::daemon::EPOCH_MS;
use crate::faults::{Boundary, Target};
use crate::ledger::SharedLedger;
use crate::wire::{EXECUTOR_TOKEN, SimOp};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::input::*;
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use engine::{CommandKind, ExecutorCommand, ExecutorKind};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a CLI takes to acknowledge a prompt line (Claude's `command_lifecycle`
/// `queued`, Codex's `turn/start` answer): the window in which a crash leaves a written
/// prompt unacknowledged. Longer than the real one (milliseconds) so that a fault applied
/// after a simulated step (1 s) can fall into it.
const ACK_MS: u64 = 1_500;
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

/// Purposes of seeded draws (`roll`).
const ROLL_SUBMIT_CRASH: u64 = 1;
const ROLL_TURN: u64 = 2;
const ROLL_TURN_CRASH: u64 = 3;
const ROLL_MERGE: u64 = 4;
const ROLL_AFTER_TURN: u64 = 5;
const ROLL_TORN: u64 = 6;
const ROLL_AGENT: u64 = 7;

/// What the CLI host is given at every (re)start.
#[derive(Clone)]
pub struct CliState {
    /// The machine's disk.
    pub disk: Rc<RefCell<CliDisk>>,
    /// How the sessions behave.
    pub knobs: CliKnobs,
    /// How the agents behave (turn counts and lengths, progress), as in the chat hosts.
    pub agents: crate::chat::AgentKnobs,
    /// The run's seed.
    pub seed: u64,
    /// Observations.
    pub ledger: SharedLedger,
}

/// Inputs of the executor's event loop.
enum Event {
    Command(ExecutorCommand),
    DaemonClosed,
    /// Look at the worker's queue again (a deadline, a freed session).
    Pump(WorkerId),
    /// The CLI acknowledged the prompt of `attempt` (if its child still lives).
    Ack {
        worker: WorkerId,
        attempt: AttemptId,
        child: u64,
    },
    /// A queued Claude steer joins the running turn at a tool boundary.
    Absorb {
        worker: WorkerId,
        key: String,
        child: u64,
    },
    /// The agent finished the turn; `finished`: it called `worker_complete` and was answered.
    TurnEnd {
        worker: WorkerId,
        turn: usize,
        child: u64,
        finished: bool,
    },
    /// The child dies.
    ChildCrash {
        worker: WorkerId,
        child: u64,
    },
    /// A new child resumed the worker's session.
    ChildBack {
        worker: WorkerId,
        child: u64,
    },
    /// A turn nobody commanded starts, and later ends.
    ForeignStart {
        worker: WorkerId,
    },
    ForeignEnd {
        worker: WorkerId,
        turn: usize,
        child: u64,
    },
    /// A scenario's limit begins: the kind's running turns fail now.
    LimitBegins {
        kind: ExecutorKind,
    },
    /// The CLI starts the turn of the steers the last one did not take.
    NextTurn {
        worker: WorkerId,
        child: u64,
    },
}

/// Runtime state: lost when the executor restarts (its children die with it).
struct Cli {
    state: CliState,
    id: ExecutorId,
    daemon: Option<mpsc::UnboundedSender<String>>,
    events: mpsc::UnboundedSender<Event>,
    queues: BTreeMap<WorkerId, VecDeque<AttemptId>>,
    /// Each worker's live child (its incarnation number), `None` while a new one starts.
    children: BTreeMap<WorkerId, Option<u64>>,
    /// The live incarnation per worker, read by the agents' turn tasks.
    alive: Rc<RefCell<BTreeMap<WorkerId, u64>>>,
    next_child: u64,
    /// When this start began, simulated ms.
    started_ms: u64,
    /// Reconciled with the daemon (hello sent): only then are submissions started.
    ready: bool,
}

/// The CLI host's software.
pub async fn run(state: CliState) -> turmoil::Result {
    let (events, mut rx) = mpsc::unbounded_channel();
    let now = state.ledger.borrow().now_ms;
    let mut cli = Cli {
        state: state.clone(),
        id: ExecutorId::new("cli-1"),
        daemon: None,
        events,
        queues: BTreeMap::new(),
        children: BTreeMap::new(),
        alive: Rc::default(),
        next_child: 0,
        started_ms: now,
        ready: false,
    };
    cli.state.ledger.borrow_mut().trace("cli", "start");
    {
        let mut disk = state.disk.borrow_mut();
        disk.starts.push(now);
        // Every child died with the last executor: their running turns are interrupted.
        for record in disk.sessions.values_mut() {
            record.interrupt();
        }
        // A session whose create never reached it holds nothing: it is not reported (the
        // create is settled as not submitted, and a new one makes a new session).
        let empty: Vec<WorkerId> =
            disk.bound.iter().filter(|(_, s)| disk.sessions[*s].prompts.is_empty()).map(|(w, _)| *w).collect();
        for worker in empty {
            disk.bound.remove(&worker);
            disk.shown.remove(&worker);
        }
    }
    for event in state.knobs.events.iter().filter(|e| e.at_ms > now) {
        cli.at(event.at_ms, scenario_event(&event.what));
    }
    cli.connect().await;
    cli.reconcile_all();
    cli.ready = true;
    let bound: Vec<WorkerId> = state.disk.borrow().bound.keys().copied().collect();
    for worker in bound {
        cli.spawn_child(worker);
        cli.idle_if_interrupted(worker);
    }
    let resumable: Vec<(WorkerId, AttemptId)> = state
        .disk
        .borrow()
        .journal
        .iter()
        .filter(|(_, e)| e.phase == JournalPhase::Received)
        .map(|(a, e)| (e.command.worker, *a))
        .collect();
    for (worker, attempt) in resumable {
        cli.queues.entry(worker).or_default().push_back(attempt);
        cli.pump(worker);
    }
    while let Some(event) = rx.recv().await {
        if let Event::DaemonClosed = event {
            cli.daemon = None;
            tokio::time::sleep(Duration::from_secs(2)).await;
            cli.connect().await;
        } else {
            cli.handle(event);
        }
        if cli.halted() {
            std::future::pending::<()>().await;
        }
    }
    Ok(())
}

/// The loop event a scenario event becomes.
fn scenario_event(what: &CliEventKind) -> Event {
    match *what {
        CliEventKind::Limit { kind, .. } => Event::LimitBegins { kind },
        CliEventKind::Foreign { worker } => Event::ForeignStart { worker },
        CliEventKind::ChildCrash { worker } => Event::ChildCrash { worker, child: u64::MAX },
    }
}

impl Cli {
    fn now_ms(&self) -> u64 {
        self.state.ledger.borrow().now_ms
    }

    fn halted(&self) -> bool {
        self.state.ledger.borrow().crash_now.is_some_and(|(t, _)| t == Target::Cli)
    }

    fn boundary(&self, b: Boundary, worker: WorkerId) -> bool {
        self.state.ledger.borrow_mut().boundary(b, worker, Some(Target::Cli));
        self.halted()
    }

    fn trace(&self, what: String) {
        self.state.ledger.borrow_mut().trace("cli", what);
    }

    /// Sends `event` to the loop at simulated ms `at_ms`.
    fn at(&self, at_ms: u64, event: Event) {
        let (events, wait) = (self.events.clone(), at_ms.saturating_sub(self.now_ms()));
        tokio::task::spawn_local(async move {
            tokio::time::sleep(Duration::from_millis(wait)).await;
            let _ = events.send(event);
        });
    }

    fn after(&self, ms: u64, event: Event) {
        self.at(self.now_ms() + ms, event);
    }

    async fn connect(&mut self) {
        let (events, ledger, id) = (self.events.clone(), self.state.ledger.clone(), self.id.clone());
        let tx = crate::link::connect(events, ledger, id, Event::Command, || Event::DaemonClosed).await;
        let hello = self.hello();
        let _ = tx.send(bridge::encode(&hello));
        self.daemon = Some(tx);
        let mut l = self.state.ledger.borrow_mut();
        l.hellos += 1;
        l.trace("cli", "hello");
    }

    /// `hello`: the journal, and every bound session with the state it last showed.
    fn hello(&mut self) -> bridge::ExecutorMessage {
        let mut disk = self.state.disk.borrow_mut();
        let journal: Vec<bridge::JournalWire> = disk
            .journal
            .iter()
            .map(|(a, e)| {
                let entry = JournalEntry {
                    command: CommandId { attempt: *a },
                    phase: e.phase,
                    state_seq: e.state_seq,
                    conversation: e.conversation.clone(),
                };
                bridge::JournalWire::from(&entry)
            })
            .collect();
        let mut bindings = Vec::new();
        let bound: Vec<(WorkerId, String)> = disk.bound.iter().map(|(w, s)| (*w, s.clone())).collect();
        for (worker, session) in bound {
            let kind = disk.sessions[&session].kind;
            let seq = disk.seq.entry(worker).or_insert(0);
            *seq += 1;
            let seq = *seq;
            let observation = disk.shown.get_mut(&worker).map(|shown| {
                shown.seq = seq;
                observation(shown)
            });
            let conversation = Arc::from(conversation_of(kind, &session));
            let report = BindingReport { worker, conversation, open: true, observation };
            bindings.push(bridge::BindingWire::from(&report));
        }
        let kinds = Some(vec![bridge::ExecutorKindWire::Codex, bridge::ExecutorKindWire::Claude]);
        bridge::ExecutorMessage::Hello(bridge::Hello {
            token: EXECUTOR_TOKEN.to_string(),
            executor_id: self.id.to_string(),
            protocol: bridge::PROTOCOL_VERSION,
            capabilities: bridge::Capabilities { steering: true, operator: false, kinds },
            concurrency_max: 16,
            bindings,
            journal,
        })
    }

    fn send(&self, message: bridge::ExecutorMessage) {
        if let Some(tx) = &self.daemon {
            let _ = tx.send(bridge::encode(&message));
        }
    }

    fn result(&self, command: CommandId, outcome: CommandOutcome) {
        let outcome = bridge::OutcomeWire::from(&outcome);
        self.send(bridge::ExecutorMessage::Result(bridge::ResultWire { command_id: command, outcome }));
    }

    /// Publishes the worker's session state (a new sequence, journaled first).
    fn publish(&self, worker: WorkerId, state: ConversationState, until: Option<u64>, detail: Option<&str>) {
        let shown = {
            let mut disk = self.state.disk.borrow_mut();
            let seq = disk.seq.entry(worker).or_insert(0);
            *seq += 1;
            let until = until.map(|ms| Timestamp(EPOCH_MS + ms));
            let shown = Shown { state, seq: *seq, until, detail: detail.map(Arc::from) };
            disk.shown.insert(worker, shown.clone());
            shown
        };
        self.trace(format!("{worker} {} #{}", state.as_str(), shown.seq));
        self.send(bridge::ExecutorMessage::State(bridge::StateWire::new(worker, &observation(&shown))));
    }

    fn seq(&self, worker: WorkerId) -> u64 {
        self.state.disk.borrow().seq.get(&worker).copied().unwrap_or(0)
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Command(c) => self.command(c),
            Event::DaemonClosed => {}
            Event::Pump(worker) => self.pump(worker),
            Event::Ack { worker, attempt, child } if self.live(worker, child) => self.acked(worker, attempt),
            Event::Absorb { worker, key, child } if self.live(worker, child) => self.absorb(worker, &key),
            Event::TurnEnd { worker, turn, child, finished } if self.live(worker, child) => {
                self.turn_ended(worker, turn, finished)
            }
            Event::ChildCrash { worker, child } if child == u64::MAX || self.live(worker, child) => {
                self.child_crashed(worker)
            }
            Event::ChildBack { worker, child } => self.child_back(worker, child),
            Event::ForeignStart { worker } => self.foreign_start(worker),
            Event::ForeignEnd { worker, turn, child } if self.live(worker, child) => self.foreign_end(worker, turn),
            Event::LimitBegins { kind } => self.limit_begins(kind),
            Event::NextTurn { worker, child } if self.live(worker, child) => self.next_turn(worker, child),
            // Something of a child that died since.
            Event::Ack { .. }
            | Event::Absorb { .. }
            | Event::TurnEnd { .. }
            | Event::ForeignEnd { .. }
            | Event::NextTurn { .. } => {}
            Event::ChildCrash { .. } => {}
        }
    }

    fn live(&self, worker: WorkerId, child: u64) -> bool {
        self.children.get(&worker) == Some(&Some(child))
    }

    /// A command from the daemon: journal it (idempotently) and queue it.
    fn command(&mut self, c: ExecutorCommand) {
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

    fn phase(&self, attempt: AttemptId) -> Option<JournalPhase> {
        self.state.disk.borrow().journal.get(&attempt).map(|e| e.phase)
    }

    /// Ends a command: journal `completed` (with a failure's code), then its result.
    fn finish(&mut self, attempt: AttemptId, outcome: CommandOutcome) {
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
    fn pump(&mut self, worker: WorkerId) {
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

    fn bound_session(&self, worker: WorkerId) -> Option<(String, ExecutorKind)> {
        let disk = self.state.disk.borrow();
        let session = disk.bound.get(&worker)?;
        Some((session.clone(), disk.sessions[session].kind))
    }

    /// Starts a new child for the worker's session.
    fn spawn_child(&mut self, worker: WorkerId) {
        self.next_child += 1;
        let child = self.next_child;
        self.children.insert(worker, Some(child));
        self.alive.borrow_mut().insert(worker, child);
    }

    /// Submission: journal `submission-started`, then write the line to the child.
    fn submit(&mut self, attempt: AttemptId) {
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

    /// The session takes the prompt in (its record first): a create or send starts a
    /// turn, a steer joins the running one (Codex) or waits behind it (Claude).
    fn take_in(&mut self, worker: WorkerId, session: &str, c: &ExecutorCommand, child: u64) {
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

    /// The CLI acknowledged the line: `submitted` (journal first), the result, and for a
    /// create its binding.
    fn acked(&mut self, worker: WorkerId, attempt: AttemptId) {
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
            self.send(bridge::ExecutorMessage::Binding(bridge::BindingWire::from(&report)));
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

    /// A turn starts in the session: the agent works on it (or a limited account fails it).
    fn start_turn(&mut self, worker: WorkerId, session: &str, starter: Option<String>, child: u64) {
        let now = self.now_ms();
        let (kind, turn) = {
            let mut disk = self.state.disk.borrow_mut();
            let record = disk.sessions.get_mut(session).expect("a session");
            let turn =
                Turn { starter, merged: Vec::new(), dropped: Vec::new(), state: TurnState::Running, started_ms: now };
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
        let task =
            TurnTask { events: self.events.clone(), alive: self.alive.clone(), ledger: self.state.ledger.clone() };
        tokio::task::spawn_local(task.run(worker, turn, child, length_ms, report, finish));
    }

    /// The account's limit in force for `kind`, if any: a scenario's or one reached at a
    /// turn's end.
    fn limit_of(&self, kind: ExecutorKind) -> Option<Limit> {
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
    fn ending(&self, kind: ExecutorKind) -> (ConversationState, Option<u64>, Option<&'static str>) {
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
    fn turn_ended(&mut self, worker: WorkerId, turn: usize, finished: bool) {
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
            let Some(t) = record.turns.get_mut(turn).filter(|t| t.state == TurnState::Running) else { return };
            let limited = state != ConversationState::Idle;
            t.state = if limited { TurnState::Limited } else { TurnState::Ended };
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
            self.landed(worker, key, bridge::LandedWire::NextTurn, seq + 1);
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
    fn next_turn(&mut self, worker: WorkerId, child: u64) {
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
    fn landed(&self, worker: WorkerId, key: &str, landed: bridge::LandedWire, seq: u64) {
        let command =
            self.state.disk.borrow().journal.values().find(|e| e.command.idempotency_key == key).map(|e| e.command.id);
        let Some(command_id) = command else { return };
        self.trace(format!("{worker} steer {key} landed {landed:?}"));
        self.send(bridge::ExecutorMessage::SteerLanded(bridge::SteerLandedWire {
            worker_id: worker,
            command_id,
            landed,
            seq,
        }));
    }

    /// A queued Claude steer joins the running turn (a tool call ended first).
    fn absorb(&mut self, worker: WorkerId, key: &str) {
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
            self.landed(worker, key, bridge::LandedWire::Merged, self.seq(worker));
        }
    }

    /// The worker's child exits: the session and its record stay; a new child resumes it.
    fn child_crashed(&mut self, worker: WorkerId) {
        let Some((session, kind)) = self.bound_session(worker) else { return };
        if self.children.get(&worker).copied().flatten().is_none() {
            return;
        }
        self.children.insert(worker, None);
        self.alive.borrow_mut().remove(&worker);
        let was_running = {
            let mut disk = self.state.disk.borrow_mut();
            let record = disk.sessions.get_mut(&session).expect("a session");
            let running = record.running().is_some();
            record.interrupt();
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
    fn child_back(&mut self, worker: WorkerId, child: u64) {
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
    fn idle_if_interrupted(&mut self, worker: WorkerId) {
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

    /// After a restart: every worker's unacknowledged submissions, from the records.
    fn reconcile_all(&mut self) {
        let workers: Vec<WorkerId> = self.state.disk.borrow().journal.values().map(|e| e.command.worker).collect();
        for worker in workers {
            self.reconcile(worker);
        }
    }

    /// Settles the worker's `submission-started` commands from its session's record, read
    /// now that the child that had them is gone: the nonce found means submitted, the
    /// nonce provably absent means not (the daemon may send it again, as a new attempt),
    /// a torn record means nobody knows. Never resent from here.
    fn reconcile(&mut self, worker: WorkerId) {
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
                        self.send(bridge::ExecutorMessage::Binding(bridge::BindingWire::from(&report)));
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

    /// A turn nobody here commanded starts (a user's Stop hook, a scheduled wake-up).
    fn foreign_start(&mut self, worker: WorkerId) {
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
            };
            record.turns.push(turn);
            record.turns.len() - 1
        };
        let detail = format!("a turn the orchestrator did not start ran in this session (turn {turn})");
        self.publish(worker, ConversationState::Error(ErrorKind::ForeignTurn), None, Some(&detail));
        let length_ms = 60_000 + roll(self.state.seed, worker, turn as u64, ROLL_AFTER_TURN + 3) % 240_000;
        self.after(length_ms, Event::ForeignEnd { worker, turn, child });
    }

    fn foreign_end(&mut self, worker: WorkerId, turn: usize) {
        let Some((session, _)) = self.bound_session(worker) else { return };
        {
            let mut disk = self.state.disk.borrow_mut();
            let record = disk.sessions.get_mut(&session).expect("a session");
            let Some(t) = record.turns.get_mut(turn).filter(|t| t.state == TurnState::Running) else { return };
            t.state = TurnState::Ended;
        }
        self.publish(worker, ConversationState::Idle, None, None);
        self.pump(worker);
    }

    /// A scenario's limit begins: the kind's running turns fail with it now (their next
    /// model request does).
    fn limit_begins(&mut self, kind: ExecutorKind) {
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

    /// `conversation.inspect`: republish what the session last showed, same sequence.
    fn inspect(&self, worker: WorkerId) {
        let shown = self.state.disk.borrow().shown.get(&worker).cloned();
        if let Some(shown) = shown {
            self.send(bridge::ExecutorMessage::State(bridge::StateWire::new(worker, &observation(&shown))));
        }
    }

    /// `conversation.close`: stop managing the session (its record stays on disk).
    fn close(&mut self, worker: WorkerId, conversation: &str) {
        let ours = self.bound_session(worker).is_some_and(|(s, k)| conversation_of(k, &s) == conversation);
        if ours {
            let mut disk = self.state.disk.borrow_mut();
            disk.bound.remove(&worker);
            disk.shown.remove(&worker);
            drop(disk);
            self.children.remove(&worker);
            self.alive.borrow_mut().remove(&worker);
            self.trace(format!("{worker} close: session released"));
        }
    }
}

/// A failure outcome.
fn failed(code: ExecErrorCode, detail: &str) -> CommandOutcome {
    CommandOutcome::Failed { code, detail: detail.into() }
}

/// A published state as an observation.
fn observation(shown: &Shown) -> Observation {
    Observation { state: shown.state, seq: shown.seq, block: None, until: shown.until, detail: shown.detail.clone() }
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
    async fn run(self, worker: WorkerId, turn: usize, child: u64, length_ms: u64, report: bool, finish: bool) {
        let live = || self.alive.borrow().get(&worker) == Some(&child);
        let half = Duration::from_millis(length_ms / 2);
        tokio::time::sleep(half).await;
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
        tokio::time::sleep(half).await;
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
}
