//! The simulated CLI executor (`orchestrator executor-cli`): a Rust model of what it does
//! for Codex CLI and Claude Code workers, speaking the executor protocol over turmoil as
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
//! - approvals (`--approvals ask`, `cli/approval.rs`): a Codex turn stops on a request
//!   until the operator's answer comes as `approval.answer`.
//!
//! An executor restart kills every child; the records, the journal and the sequences stay.

mod approval;
mod reconcile;
mod turns;
use crate::cli_session::*;
use crate::daemon::EPOCH_MS;
use crate::faults::{Boundary, Target};
use crate::ledger::SharedLedger;
use crate::wire::EXECUTOR_TOKEN;
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::input::*;
use engine::model::ConversationState;
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
/// Purpose of the executor's seeded draw of a crash at submission (`roll`; the others are
/// in `turns.rs` and `reconcile.rs`).
const ROLL_SUBMIT_CRASH: u64 = 1;

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
    /// A scenario's crash of the worker's child while a request waits.
    CrashWhileAsking {
        worker: WorkerId,
    },
    /// The agent's turn asks before it leaves its sandbox; `go` lets it on once answered.
    Ask {
        worker: WorkerId,
        turn: usize,
        child: u64,
        go: tokio::sync::oneshot::Sender<()>,
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
    /// The turn waiting on each worker's approval request: dropped (the turn stops) when
    /// the request is gone, sent when it is answered.
    asking: BTreeMap<WorkerId, tokio::sync::oneshot::Sender<()>>,
    /// Workers whose child a scenario crashes 5 s into their next request.
    crash_on_ask: std::collections::BTreeSet<WorkerId>,
    /// The last approval handle (`apr-N`) each worker's live child gave: handles are
    /// numbered per child (the real executor only restarts them with itself), so a new
    /// child says `apr-1` again and the engine must take it for a new request.
    approval_seq: BTreeMap<WorkerId, u64>,
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
        asking: BTreeMap::new(),
        crash_on_ask: Default::default(),
        approval_seq: BTreeMap::new(),
    };
    cli.state.ledger.borrow_mut().trace("cli", "start");
    {
        let mut disk = state.disk.borrow_mut();
        disk.starts.push(now);
        // Every child died with the last executor: their running turns are interrupted.
        for record in disk.sessions.values_mut() {
            record.interrupt();
            record.asks_gone(now);
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
        CliEventKind::CrashWhileAsking { worker } => Event::CrashWhileAsking { worker },
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
        let _ = tx.send(executor_protocol::encode(&hello));
        self.daemon = Some(tx);
        let mut l = self.state.ledger.borrow_mut();
        l.hellos += 1;
        l.trace("cli", "hello");
    }

    /// `hello`: the journal, and every bound session with the state it last showed.
    fn hello(&mut self) -> executor_protocol::ExecutorMessage {
        let mut disk = self.state.disk.borrow_mut();
        let journal: Vec<executor_protocol::JournalWire> = disk
            .journal
            .iter()
            .map(|(a, e)| {
                let entry = JournalEntry {
                    command: CommandId { attempt: *a },
                    phase: e.phase,
                    state_seq: e.state_seq,
                    conversation: e.conversation.clone(),
                };
                executor_protocol::JournalWire::from(&entry)
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
            bindings.push(executor_protocol::BindingWire::from(&report));
        }
        let kinds = Some(vec![executor_protocol::ExecutorKindWire::Codex, executor_protocol::ExecutorKindWire::Claude]);
        executor_protocol::ExecutorMessage::Hello(executor_protocol::Hello {
            token: EXECUTOR_TOKEN.to_string(),
            executor_id: self.id.to_string(),
            protocol: executor_protocol::PROTOCOL_VERSION,
            capabilities: executor_protocol::Capabilities { steering: true, operator: false, kinds },
            concurrency_max: 16,
            bindings,
            journal,
        })
    }

    fn send(&self, message: executor_protocol::ExecutorMessage) {
        if let Some(tx) = &self.daemon {
            let _ = tx.send(executor_protocol::encode(&message));
        }
    }

    fn result(&self, command: CommandId, outcome: CommandOutcome) {
        let outcome = executor_protocol::OutcomeWire::from(&outcome);
        self.send(executor_protocol::ExecutorMessage::Result(executor_protocol::ResultWire {
            command_id: command,
            outcome,
        }));
    }

    /// Publishes the worker's session state (a new sequence, journaled first).
    fn publish(&self, worker: WorkerId, state: ConversationState, until: Option<u64>, detail: Option<&str>) {
        self.publish_with(worker, state, until, detail, None);
    }

    /// [`Cli::publish`], with the approval request an `awaiting_approval` shows.
    fn publish_with(
        &self,
        worker: WorkerId,
        state: ConversationState,
        until: Option<u64>,
        detail: Option<&str>,
        approval: Option<engine::model::PendingApproval>,
    ) {
        let shown = {
            let mut disk = self.state.disk.borrow_mut();
            let seq = disk.seq.entry(worker).or_insert(0);
            *seq += 1;
            let until = until.map(|ms| Timestamp(EPOCH_MS + ms));
            let shown = Shown { state, seq: *seq, until, detail: detail.map(Arc::from), approval };
            disk.shown.insert(worker, shown.clone());
            shown
        };
        self.trace(format!("{worker} {} #{}", state.as_str(), shown.seq));
        self.send(executor_protocol::ExecutorMessage::State(executor_protocol::StateWire::new(
            worker,
            &observation(&shown),
        )));
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
            Event::Ask { worker, turn, child, go } if self.live(worker, child) => self.ask(worker, turn, go),
            Event::CrashWhileAsking { worker } => self.crash_while_asking(worker),
            // Something of a child that died since.
            Event::Ack { .. }
            | Event::Absorb { .. }
            | Event::TurnEnd { .. }
            | Event::ForeignEnd { .. }
            | Event::NextTurn { .. }
            | Event::Ask { .. } => {}
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
        self.approval_seq.remove(&worker);
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
    fn inspect(&self, worker: WorkerId) {
        let shown = self.state.disk.borrow().shown.get(&worker).cloned();
        if let Some(shown) = shown {
            self.send(executor_protocol::ExecutorMessage::State(executor_protocol::StateWire::new(
                worker,
                &observation(&shown),
            )));
        }
    }

    /// `conversation.close`: stop managing the session (its record stays on disk).
    fn close(&mut self, worker: WorkerId, conversation: &str) {
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

/// A failure outcome.
fn failed(code: ExecErrorCode, detail: &str) -> CommandOutcome {
    CommandOutcome::Failed { code, detail: detail.into() }
}

/// A published state as an observation.
fn observation(shown: &Shown) -> Observation {
    Observation {
        state: shown.state,
        seq: shown.seq,
        block: None,
        until: shown.until,
        detail: shown.detail.clone(),
        approval: shown.approval.clone(),
        retry: None,
    }
}
