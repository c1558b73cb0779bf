//! The ledger: what every simulated host observed, for the checkers and the trace.
//!
//! Hosts write to it; no host's behaviour ever reads it (they talk only over the
//! simulated network), so it cannot hide a protocol bug.

use crate::faults::{Boundary, CrashAt, Reaction, Target, Trigger};
use crate::oracle::{Closed, Delivery, Managed, Published, RetryClick};
use crate::wire::SimOp;
use engine::ids::{ExecutorId, WorkerId};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

/// Shared handle to the ledger.
pub type SharedLedger = Rc<RefCell<Ledger>>;

/// Everything observed in one run.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Simulated milliseconds since the start, updated by the world every step.
    pub now_ms: u64,
    /// Every user message a conversation accepted, by idempotency key.
    pub deliveries: BTreeMap<String, u32>,
    /// Every delivery, in order, with the conversation that took it.
    pub delivered: Vec<Delivery>,
    /// Every change of the conversation the executor manages for a worker, in order.
    pub managed: Vec<Managed>,
    /// Every `conversation.close` the executor received, in order.
    pub closes: Vec<Closed>,
    /// Every state and binding the executor published, in order.
    pub published: Vec<Published>,
    /// Acknowledged durable agent calls: (worker, unique summary).
    pub acked: Vec<(WorkerId, String)>,
    /// Agents whose `worker_complete` was acknowledged (or refused as already terminal).
    pub finished_agents: BTreeSet<WorkerId>,
    /// Agents whose `worker_fail` was acknowledged (a subset of `finished_agents`).
    pub failed_agents: BTreeSet<WorkerId>,
    /// Fresh `continue` deliveries.
    pub fresh_continues: u32,
    /// Times a conversation showed the delivery-timeout card, which offers the Retry
    /// control: a run's zero clicks prove something only if the control was there.
    pub retry_offers: u32,
    /// Approval cards a page showed (each answered by a simulated person, never clicked).
    pub approvals: u32,
    /// Every click on a conversation's Retry control (the oracle breaks on each one).
    pub retry_clicks: Vec<RetryClick>,
    /// Broken invariants, with the time they were seen.
    pub violations: Vec<String>,
    /// Compact trace lines: `time host what`.
    pub trace: Vec<String>,
    /// Occurrences of each boundary so far.
    pub boundaries: BTreeMap<Boundary, u32>,
    /// Occurrences of each boundary for each worker so far (triggers count these).
    pub worker_boundaries: BTreeMap<(Boundary, WorkerId), u32>,
    /// Crashes scheduled by the run's fault plan, not yet triggered.
    pub crash_plan: Vec<CrashAt>,
    /// A crash the world must perform after this step, and when to restart.
    pub crash_now: Option<(Target, u64)>,
    /// Whether faults are still on (safety phase) or healed (liveness phase).
    pub faults_on: bool,
    /// Crashes performed, for the report.
    pub crashes: Vec<String>,
    /// Workers the operator recovered into a fresh conversation after an ambiguous create.
    pub operator_recoveries: usize,
    /// Lanes `/root`'s agent recovered into fresh conversations (`RecoverLanes`).
    pub root_recoveries: usize,
    /// Times the executor said `hello` (its first connection included).
    pub hellos: usize,
    /// When the daemon (re)started, simulated ms: a report sent while it was down is lost.
    pub daemon_starts: Vec<u64>,
    /// Every notification the model receiver took: (id, simulated ms). Survives daemon
    /// crashes, as a real receiver would.
    pub notify_received: Vec<(engine::notify::NoticeId, u64)>,
    /// Windows (from, until, simulated ms) in which the model receiver is down.
    pub notify_down: Vec<(u64, u64)>,
    /// Triggers of the run's scenario not yet fired.
    pub triggers: Vec<Trigger>,
    /// Calls a fired trigger delivers to the daemon (it drains them at once).
    pub calls: VecDeque<SimOp>,
    /// Wakes the daemon's trigger task when `calls` gains one.
    pub calls_ready: Rc<tokio::sync::Notify>,
    /// Link faults and outages a fired trigger asks the world to apply after this step,
    /// with the executor host an outage takes down.
    pub reactions: Vec<(Reaction, Target)>,
    /// CLI (`codex`, `claude`) workers the operator spawned: served by the CLI executor
    /// when the run has one, else waiting for an executor of their kind that never comes.
    pub cli_workers: BTreeSet<WorkerId>,
    /// Workers whose commands the browser received (it is a `chatgpt` executor).
    pub browser_commands: BTreeSet<WorkerId>,
    /// The scenario's attaches and stops not yet committed (a scenario fails on one left
    /// over).
    pub uncommitted: BTreeSet<String>,
    /// Lanes the operator stopped (`worker_interrupt` accepted, or refused as already
    /// terminal on a retry): cancelled is how they may end.
    pub stopped: BTreeSet<WorkerId>,
    /// Every CLI `approval_answer` the operator made, with the engine's verdict.
    pub approval_calls: Vec<crate::cli_session::ApprovalCall>,
    /// The daemon host's executor connections, open or closed since when (the liveness
    /// oracle's ground truth).
    pub links: Links,
    /// A standby daemon host shares the store under a lease (`standby on`): callers try
    /// both daemon hosts, as executors follow a standby's `NOT_LEADER` (run configuration,
    /// like an executor's `--daemon` list).
    pub standby: bool,
    /// Daemon hosts that stopped (fenced, lease lost, store error): the world ends them
    /// after this step and their supervisor restarts them (pending, drained by the world).
    pub exits: Vec<(Target, String)>,
    /// Every such stop, for the report and the scenarios' `expect step-downs`.
    pub step_downs: Vec<String>,
    /// Times the browser left a daemon that answered its heartbeats and then went silent
    /// (`link.rs`), for the scenarios' `expect silent-leaves`.
    pub silent_leaves: usize,
    /// Daemon hosts stopped (a zombie: SIGSTOP, a hung VM) until a simulated ms: their
    /// links hold every message, their lease task neither renews nor fences itself.
    pub paused: BTreeMap<Target, u64>,
    /// Every command a leased daemon sent an executor: the lease oracle's input.
    pub dispatches: Vec<crate::lease_oracle::Dispatch>,
}

impl Ledger {
    /// Appends a trace line.
    pub fn trace(&mut self, host: &str, what: impl Into<String>) {
        let line = format!("{:>9} {host:<8} {}", self.now_ms, what.into());
        self.trace.push(line);
    }

    /// Records a violation.
    pub fn violation(&mut self, what: impl Into<String>) {
        let line = format!("t={} {}", self.now_ms, what.into());
        self.violations.push(line);
    }

    /// A boundary was passed for a worker: count it, fire the triggers pinned to this
    /// occurrence for this worker and, if the plan says so, ask for a crash (the crash
    /// plan counts occurrences across workers). `by` is the executor host that passed it
    /// (`None`: the daemon saw it; an executor's fault then hits the worker's executor).
    pub fn boundary(&mut self, boundary: Boundary, worker: WorkerId, by: Option<Target>) {
        let executor = by.unwrap_or_else(|| self.executor_of(worker));
        let mine = self.worker_boundaries.entry((boundary, worker)).or_insert(0);
        *mine += 1;
        let mine = *mine;
        let pinned = |t: &Trigger| t.at.boundary == boundary && t.at.occurrence == mine && t.worker() == worker;
        while let Some(i) = self.triggers.iter().position(pinned) {
            let trigger = self.triggers.remove(i);
            self.trace("trigger", format!("{boundary} #{mine} of {worker}: {:?}", trigger.reaction));
            match trigger.reaction {
                Reaction::Call(call) => {
                    self.calls.push_back(SimOp::from_call(worker, call));
                    self.calls_ready.notify_one();
                }
                other => self.reactions.push((other, executor)),
            }
        }
        let n = self.boundaries.entry(boundary).or_insert(0);
        *n += 1;
        let n = *n;
        if !self.faults_on || self.crash_now.is_some() {
            return;
        }
        if let Some(i) = self.crash_plan.iter().position(|c| c.boundary == boundary && c.occurrence == n) {
            let plan = self.crash_plan.remove(i);
            let delay_ms = if boundary == Boundary::IdleDuringGrace { 1_000 } else { 0 };
            let host = match boundary.host() {
                Target::Daemon => Target::Daemon,
                _ => executor,
            };
            self.crash_now = Some((host, self.now_ms + delay_ms));
            self.crashes.push(format!("{} at {} #{}", host.host(), plan.boundary, plan.occurrence));
        }
    }

    /// The executor host that runs the worker: the CLI executor for a CLI worker, else the
    /// browser.
    pub fn executor_of(&self, worker: WorkerId) -> Target {
        if self.cli_workers.contains(&worker) { Target::Cli } else { Target::Executor }
    }

    /// Records an accepted user message; a second acceptance of one key is the bug
    /// this project exists to prevent.
    pub fn delivered(&mut self, conversation: &str, worker: WorkerId, key: &str, prompt: &str) {
        let count = self.deliveries.entry(key.to_string()).or_insert(0);
        *count += 1;
        let count = *count;
        if count > 1 {
            self.violation(format!("prompt {key} delivered {count} times"));
        }
        if prompt == "continue" {
            self.fresh_continues += 1;
        }
        let (conversation, key, at_ms) = (conversation.to_string(), key.to_string(), self.now_ms);
        self.delivered.push(Delivery { conversation, worker, key, at_ms });
    }

    /// The executor manages `conversation` for the worker from now on (`None`: nothing).
    pub fn managed(&mut self, worker: WorkerId, conversation: Option<&str>) {
        let (conversation, at_ms) = (conversation.map(String::from), self.now_ms);
        self.managed.push(Managed { worker, conversation, at_ms });
    }

    /// The executor received `conversation.close` (`released`: it held the binding).
    pub fn closed(&mut self, worker: WorkerId, conversation: &str, released: bool) {
        let (conversation, at_ms) = (conversation.to_string(), self.now_ms);
        self.closes.push(Closed { worker, conversation, at_ms, released });
    }

    /// The executor published a state or binding of the worker's `conversation`.
    pub fn published(&mut self, worker: WorkerId, conversation: &str) {
        let (conversation, at_ms) = (conversation.to_string(), self.now_ms);
        self.published.push(Published { worker, conversation, at_ms });
    }
}

/// The daemon host's executor connections, by executor id: `None` while one is open,
/// `Some(t)` once its last one closed at simulated time `t` (ms). Lost with the daemon.
#[derive(Clone, Debug, Default)]
pub struct Links(Rc<RefCell<BTreeMap<ExecutorId, Option<u64>>>>);

impl Links {
    /// The executor's connection said hello.
    pub fn opened(&self, executor: &ExecutorId) {
        self.0.borrow_mut().insert(executor.clone(), None);
    }

    /// The executor's current connection closed at `now_ms`.
    pub fn closed(&self, executor: &ExecutorId, now_ms: u64) {
        self.0.borrow_mut().insert(executor.clone(), Some(now_ms));
    }

    /// The daemon (re)started at `now_ms`: every connection of the one before is gone.
    pub fn daemon_started(&self, now_ms: u64) {
        for closed in self.0.borrow_mut().values_mut() {
            closed.get_or_insert(now_ms);
        }
    }

    /// Since when the executor's connection is closed, if it is.
    pub(crate) fn closed_since(&self, executor: &ExecutorId) -> Option<u64> {
        self.0.borrow().get(executor).copied().flatten()
    }
}
