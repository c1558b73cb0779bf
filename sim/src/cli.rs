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
//!
//! This file holds the executor's state, its connection and its event loop;
//! `cli/commands.rs` the daemon's commands (journal, routing to a session, delivery,
//! acknowledgement, inspect, close), `cli/turns.rs` what runs in the sessions,
//! `cli/reconcile.rs` the settling of prompts a crash left, `cli/approval.rs` the
//! approval mode.

mod approval;
mod commands;
mod reconcile;
mod turns;
use crate::cli_session::*;
use crate::epoch::EPOCH_MS;
use crate::faults::{Boundary, Target};
use crate::ledger::SharedLedger;
use crate::wire::EXECUTOR_TOKEN;
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::input::*;
use engine::model::ConversationState;
use engine::time::Timestamp;
use engine::{ExecutorCommand, ExecutorKind};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

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
            record.interrupt(now);
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
        let tx = crate::link::connect(events, ledger, id, (Event::Command, || Event::DaemonClosed), false).await;
        let hello = self.hello();
        let _ = tx.send(executor_protocol::encode(&hello));
        self.daemon = Some(tx);
        let mut l = self.state.ledger.borrow_mut();
        l.hellos += 1;
        l.trace("cli", "hello");
    }

    /// `hello`: the journal, and every bound session with the state it last showed.
    fn hello(&mut self) -> executor_protocol::ExecutorMessage {
        let disk = self.state.disk.borrow();
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
            // The state last shown, with the sequence it was shown under (the executor's
            // journal keeps both): republished with a larger sequence, an unchanged idle
            // would read as the end of a turn the executor took while the daemon was
            // down and has not yet shown generating.
            let observation = disk.shown.get(&worker).map(observation);
            let conversation = Arc::from(conversation_of(kind, &session));
            let report = BindingReport { worker, conversation, open: true, observation };
            bindings.push(executor_protocol::BindingWire::from(&report));
        }
        let kinds = Some(vec![executor_protocol::ExecutorKindWire::Codex, executor_protocol::ExecutorKindWire::Claude]);
        executor_protocol::ExecutorMessage::Hello(executor_protocol::Hello {
            token: EXECUTOR_TOKEN.to_string(),
            executor_id: self.id.to_string(),
            protocol: executor_protocol::PROTOCOL_VERSION,
            capabilities: executor_protocol::Capabilities {
                steering: true,
                operator: false,
                kinds,
                heartbeat_echo: false,
            },
            concurrency_max: self.state.knobs.turns_max.unwrap_or(crate::cli_session::TURNS_MAX_DEFAULT),
            bindings,
            journal,
            epoch: None,
            accounts: (!self.state.knobs.accounts.is_empty())
                .then(|| self.state.knobs.accounts.iter().map(executor_protocol::AccountWire::from).collect()),
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
