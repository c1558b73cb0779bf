//! One Codex worker's task, the shell around the Codex core: its pump (one `codex
//! app-server` child and its core, leased as `wrk-N`), the commands it serves through the journal, a new child with
//! `thread/resume` when one exits (bounded, with backoff), and reconciliation of prompts a
//! dead child or executor left `submission-started`. What every worker task shares is
//! `base::worker`; the executor loop drives this task as a `Shell`. The core meets the
//! base's pump here too: [`Core`] for [`Codex`], and [`Pump::start`] (its child at once).
//!
//! Order of durability: the connection journals a command `received` before handing it
//! here; the pump's [`Gate`] ([`gate`]) journals
//! `submission-started` (and, for a create, the new binding) before the prompt's line is
//! written; a result is journaled `completed` before it is sent; a state's sequence is
//! persisted before the state is sent ([`Books`]).

use crate::Error;
use crate::base::books::{Books, gate, receive};
use crate::base::child::{Exit, Spawn};
use crate::base::lease::Leases;
use crate::base::pump::{Core, Event, Gate, Pump, Step};
use crate::base::report::Report;
use crate::base::worker::{In, Out, Restarts, Shared, Shell, lock};
use crate::codex::home;
use crate::codex::reconcile::{self, Verdict};
use crate::codex::{Codex, Effect, Outcome, Resume};
use engine::effect::ExecutorCommand;
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use executor_protocol::{CommandWire, ExecutorKindWire, KindWire, OutcomeWire, PhaseWire, ResultWire};
use std::collections::BTreeSet;
use std::sync::Arc;

/// One Codex worker's task.
pub struct CodexTask {
    worker: WorkerId,
    shared: Shared,
    /// Its reports, journaled first.
    books: Books,
    pump: Option<Pump<Codex>>,
    /// The working directory of the current (or last) child.
    cwd: Option<String>,
    restarts: Restarts,
    /// Prompts a dead child or executor left `submission-started`, to settle from the
    /// next `thread/read`.
    orphans: BTreeSet<CommandId>,
    /// The approval handles the worker's earlier children gave: the next child numbers on
    /// from here (`Codex::approvals_from`).
    approvals_given: u64,
}

impl Shell for CodexTask {
    type Core = Codex;

    fn worker(&self) -> WorkerId {
        self.worker
    }

    fn pump(&mut self) -> &mut Option<Pump<Codex>> {
        &mut self.pump
    }

    fn restarts(&mut self) -> &mut Restarts {
        &mut self.restarts
    }

    async fn input(&mut self, message: In) {
        match message {
            In::Recover => {
                if self.pump.is_none() && self.restarts.at.is_none() {
                    self.start().await;
                }
            }
            In::Command(command, cwd) => self.command(*command, cwd).await,
        }
    }

    async fn event(&mut self, event: Result<Event<Effect>, Error>) {
        match event {
            Ok(Event::Effect(effect)) => self.effect(effect).await,
            Ok(Event::Exited { exit }) => {
                let gone = self.pump.take();
                self.approvals_given = gone.as_ref().map_or(self.approvals_given, |s| s.core().approvals_given());
                let stopped = gone.is_some_and(|s| s.core().stopped());
                if stopped {
                    // Stopped as asked: its last thread was closed. No restart; a later
                    // create starts a fresh child, in the directory it names.
                    tracing::info!(worker = %self.worker, "child stopped: its last thread was closed");
                    self.cwd = None;
                    return;
                }
                let last = exit.stderr_tail.lines().last().unwrap_or_default().to_string();
                let how = match (exit.code, exit.signal) {
                    (Some(code), _) => format!("exited with status {code}"),
                    (None, Some(signal)) => format!("was killed by signal {signal}"),
                    (None, None) => "ended".to_string(),
                };
                self.exited(&format!("codex app-server {how}: {last}")).await;
            }
            Ok(Event::Spawn(_)) => {} // the Codex core never asks: its child starts with the session
            Err(Error::ChildGone) => {} // the next call reports the exit
            Err(e) => tracing::warn!(worker = %self.worker, code = e.code(), "from the child: {e}"),
        }
    }

    async fn restart(&mut self) {
        self.start().await;
    }
}

impl CodexTask {
    /// A task for `worker`.
    pub fn new(worker: WorkerId, shared: Shared) -> CodexTask {
        CodexTask {
            worker,
            books: Books::new(worker, shared.clone()),
            shared,
            pump: None,
            cwd: None,
            restarts: Restarts::default(),
            orphans: BTreeSet::new(),
            approvals_given: 0,
        }
    }

    async fn command(&mut self, command: CommandWire, cwd: Option<String>) {
        let submits = receive(&command, &mut self.restarts, &self.books);
        if self.pump.is_none() && command.kind == KindWire::ApprovalAnswer {
            // No child, no request: the one answered died with it.
            let outcome = OutcomeWire::Failed {
                code: "APPROVAL_GONE".to_string(),
                detail: "the Codex session that asked has ended".to_string(),
            };
            let _ = self.shared.out.send(Out::Result(ResultWire { command_id: command.command_id, outcome })).await;
            return;
        }
        if self.pump.is_none() && !matches!(command.kind, KindWire::Create | KindWire::Cancel) {
            let thread = reconcile::thread_of(&command.conversation_url);
            let bound = self.books.bound().map(|b| b.thread);
            if thread.is_none() || thread != bound.as_deref() {
                // Not the bound thread (a closed one): no child would host it, none starts.
                if submits {
                    self.books.fail(command.command_id, "CONVERSATION_CLOSED", "no such thread here").await;
                }
                return;
            }
        }
        if self.pump.is_none() {
            if self.restarts.at.is_some() {
                // A child is due shortly: a journaled command is requeued when it starts.
                if !submits {
                    tracing::info!(worker = %self.worker, "{:?} dropped while the child restarts", command.kind);
                }
                return;
            }
            if self.cwd.is_none() {
                self.cwd = cwd.or_else(|| self.bound_cwd()).or_else(|| self.shared.settings.workspace.clone());
            }
            if self.cwd.is_none() {
                let detail = "no working directory: the command names no workspace.directory and the executor has no --workspace";
                return self.books.fail(command.command_id, "HOST_UI_CHANGED", detail).await;
            }
            // The new child requeues every journaled command, this one included.
            return self.start().await;
        }
        let id = command.command_id;
        let engine_command = to_engine(command);
        let result = match self.pump.as_mut() {
            Some(pump) => pump.command(engine_command).await,
            None => Ok(()),
        };
        if let Err(e) = result {
            tracing::warn!(worker = %self.worker, code = e.code(), "command {id}: {e}");
            if submits && e != Error::ChildGone {
                self.books.fail(id, "HOST_UI_CHANGED", &format!("the Codex core refused the command: {e}")).await;
            }
        }
    }

    /// Starts a child for this worker: the bound thread resumed, the journal's `received`
    /// commands requeued, its `submission-started` ones settled by a `thread/read`.
    async fn start(&mut self) {
        let cwd = self.cwd.clone().or_else(|| self.bound_cwd()).or_else(|| self.shared.settings.workspace.clone());
        let Some(cwd) = cwd else { return };
        self.cwd = Some(cwd.clone());
        let (bound, received, started) = {
            let journal = lock(&self.shared.journal);
            let bound = journal.binding(self.worker).map(|b| b.thread.clone());
            let mine = |phase| {
                journal
                    .entries()
                    .filter(|e| e.command.worker_id == self.worker && e.phase == phase)
                    .cloned()
                    .collect::<Vec<_>>()
            };
            (bound, mine(PhaseWire::Received), mine(PhaseWire::SubmissionStarted))
        };
        if bound.is_none() && received.is_empty() {
            // Nothing to host (a close, an inspect of nothing): a child would only idle.
            // A prompt left `submission-started` has no thread to read: ambiguous.
            self.orphans = started.iter().map(|e| e.command.command_id).collect();
            return self.settle_orphans(None).await;
        }
        let resumes: Vec<Resume> = bound
            .iter()
            .map(|thread| {
                let journal = lock(&self.shared.journal);
                Resume {
                    worker: self.worker,
                    thread: thread.clone(),
                    nonces: journal.nonces(thread),
                    limit_until: journal.limit_until(self.worker).map(engine::Timestamp),
                }
            })
            .collect();
        let settings = &self.shared.settings;
        let core = match Codex::resuming(home::codex_config(settings, &cwd), &resumes) {
            Ok(mut core) => {
                core.approvals_from(self.approvals_given);
                core
            }
            Err(e) => return self.exited(&format!("cannot resume: {e}")).await,
        };
        let spec = match home::codex_spawn(settings, &self.worker.to_string(), std::path::Path::new(&cwd)) {
            Ok(spec) => spec,
            Err(e) => return self.exited(&format!("cannot prepare the session: {e}")).await,
        };
        let gate = gate(Arc::clone(&self.shared.journal), cwd.clone(), ExecutorKindWire::Codex);
        let mut pump = match Pump::start(&spec, &self.shared.leases, core, gate).await {
            Ok(pump) => pump,
            Err(e) => return self.exited(&format!("cannot start {}: {e}", settings.program.display())).await,
        };
        tracing::info!(worker = %self.worker, cwd, resumed = resumes.len(), "child started");
        self.orphans = started.iter().map(|e| e.command.command_id).collect();
        for entry in received {
            if let Err(e) = pump.command(to_engine(entry.command)).await {
                tracing::warn!(worker = %self.worker, code = e.code(), "requeue: {e}");
            }
        }
        self.pump = Some(pump);
        match bound {
            Some(thread) => {
                let inspect = inspect(self.worker, &thread);
                if let Some(pump) = self.pump.as_mut()
                    && let Err(e) = pump.command(inspect).await
                {
                    tracing::warn!(worker = %self.worker, code = e.code(), "inspect after start: {e}");
                }
            }
            None => self.settle_orphans(None).await,
        }
    }

    /// The child is gone (or could not start): restart after a backoff, or give up.
    async fn exited(&mut self, why: &str) {
        self.pump = None;
        let gave_up = self.restarts.exited();
        tracing::warn!(worker = %self.worker, exits = self.restarts.exits, "{why}");
        if gave_up {
            let started: Vec<CommandId> = lock(&self.shared.journal)
                .entries()
                .filter(|e| e.command.worker_id == self.worker && e.phase == PhaseWire::SubmissionStarted)
                .map(|e| e.command.command_id)
                .collect();
            self.orphans.extend(started);
            self.settle_orphans(None).await;
            let exits = self.restarts.exits;
            let detail = format!("the Codex child exited {exits} times in a row ({why}); resume to try again");
            let report = Report {
                state: ConversationState::Error(ErrorKind::HostUiChanged),
                block: None,
                until: None,
                detail: Some(detail),
                retry: None,
            };
            let bound = lock(&self.shared.journal).binding(self.worker).map(|b| b.thread.clone());
            if let Some(thread) = bound {
                self.books.publish(&thread, report).await;
            }
        }
    }

    async fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::Result { command, outcome } => self.result(command, outcome).await,
            Effect::State { thread, report, .. } => {
                if report.state == ConversationState::Idle {
                    self.restarts.exits = 0;
                }
                self.books.publish(&thread, report).await;
            }
            Effect::Approval { thread, report, approval, .. } => {
                self.books.publish_asking(&thread, report, Some(approval)).await;
            }
            Effect::Answered { command, outcome } => {
                let outcome = match outcome {
                    // The turn's conversation already has its binding: no URL again.
                    Outcome::Submitted { .. } => {
                        let state_seq = lock(&self.shared.journal).entry(command).map_or(0, |e| e.state_seq);
                        OutcomeWire::Submitted { state_seq, conversation_url: None }
                    }
                    Outcome::Failed { code, detail } => OutcomeWire::Failed { code: code.to_string(), detail },
                };
                let _ = self.shared.out.send(Out::Result(ResultWire { command_id: command, outcome })).await;
            }
            Effect::Foreign { thread, turn, .. } => {
                let detail = format!(
                    "a turn the orchestrator did not start ran in this Codex thread (turn {turn}): check the session, then resume"
                );
                let report = Report {
                    state: ConversationState::Error(ErrorKind::ForeignTurn),
                    block: None,
                    until: None,
                    detail: Some(detail),
                    retry: None,
                };
                self.books.publish(&thread, report).await;
            }
            Effect::Thread { record, .. } => self.settle_orphans(Some(&record)).await,
            Effect::Unresponsive { method, error } => {
                tracing::warn!(worker = %self.worker, method, ?error, "the app-server did not serve a request");
                if method == "thread/read" || method == "thread/resume" {
                    self.settle_orphans(None).await;
                }
            }
            Effect::Write(_) | Effect::Prompt { .. } | Effect::Stop => {} // done by the pump
        }
    }

    /// Settles the orphaned prompts from `record` (`None`: nothing can be read).
    async fn settle_orphans(&mut self, record: Option<&crate::codex::record::ThreadRecord>) {
        let orphans: Vec<CommandId> = std::mem::take(&mut self.orphans).into_iter().collect();
        for id in orphans {
            let Some(entry) = lock(&self.shared.journal).entry(id).cloned() else { continue };
            let Some(thread) = entry.thread.clone() else { continue };
            let verdict = reconcile::verdict(record, &thread, &entry.command.idempotency_key);
            if let (Some(record), Verdict::Unknown) = (record, &verdict)
                && record.id != thread
            {
                self.orphans.insert(id); // another thread's read: keep waiting
                continue;
            }
            tracing::info!(worker = %self.worker, command = %id, ?verdict, "reconciled");
            let create = entry.command.kind == KindWire::Create;
            let outcome = reconcile::outcome(&verdict, &thread, entry.state_seq, create);
            self.books.result(id, outcome).await;
        }
    }

    async fn result(&mut self, command: CommandId, outcome: Outcome) {
        let wire = match outcome {
            Outcome::Submitted { thread, .. } => {
                self.restarts.exits = 0;
                let entry = lock(&self.shared.journal).entry(command).cloned();
                let create = entry.as_ref().is_some_and(|e| e.command.kind == KindWire::Create);
                let state_seq = entry.map_or(0, |e| e.state_seq);
                let url = create.then(|| reconcile::conversation_url(&thread));
                OutcomeWire::Submitted { state_seq, conversation_url: url }
            }
            Outcome::Failed { code, detail } => OutcomeWire::Failed { code: code.to_string(), detail },
        };
        self.books.result(command, wire).await;
    }

    fn bound_cwd(&self) -> Option<String> {
        lock(&self.shared.journal).binding(self.worker).map(|b| b.cwd.clone())
    }
}

/// A Codex pump: its child starts with it.
impl Pump<Codex> {
    /// Spawns `spec` under its lease and starts `core` (fresh, or [`Codex::resuming`]).
    pub async fn start(spec: &Spawn, leases: &Leases, core: Codex, gate: Box<dyn Gate>) -> Result<Pump<Codex>, Error> {
        let mut pump = Pump::new(spec, leases, core, gate);
        pump.spawn(None)?;
        pump.drive(|core, now| core.start(now)).await?;
        Ok(pump)
    }
}

impl Core for Codex {
    type Report = Effect;

    fn command(&mut self, now: Timestamp, command: ExecutorCommand) -> Result<(), Error> {
        Codex::command(self, now, command)
    }

    fn line(&mut self, now: Timestamp, line: &str) -> Result<(), Error> {
        Codex::line(self, now, line)
    }

    fn tick(&mut self, now: Timestamp) {
        Codex::tick(self, now)
    }

    fn next_deadline(&self) -> Option<Timestamp> {
        Codex::next_deadline(self)
    }

    fn step(&mut self) -> Option<Step<Effect>> {
        Some(match self.poll_effect()? {
            Effect::Write(line) => Step::Write(line),
            Effect::Prompt { command, worker, thread, line } => {
                Step::Prompt { command, worker, conversation: thread, line }
            }
            Effect::Stop => Step::Stop,
            other => Step::Report(other),
        })
    }

    fn unsent(&mut self, command: CommandId, detail: &str) {
        Codex::unsent(self, command, detail)
    }

    /// The threads stay in the core ([`Codex::threads`]): the owner resumes them in a new
    /// child with a fresh core.
    fn exited(&mut self, _now: Timestamp, _exit: &Exit) {}
}

/// The engine's command for the core: a `codex:thread/<id>` conversation becomes the
/// thread id (any other form names no thread here, so the core answers it as closed).
fn to_engine(command: CommandWire) -> engine::ExecutorCommand {
    let mut command = command.into_engine(ExecutorId::new("cli"));
    if let Some(thread) = reconcile::thread_of(&command.conversation) {
        command.conversation = Arc::from(thread);
    }
    command
}

/// A `conversation.inspect` of `thread`, for the executor's own reconciliation.
fn inspect(worker: WorkerId, thread: &str) -> engine::ExecutorCommand {
    engine::ExecutorCommand {
        executor: ExecutorId::new("cli"),
        id: CommandId { attempt: AttemptId(0) },
        idempotency_key: String::new(),
        worker,
        attempt: AttemptId(0),
        kind: engine::CommandKind::Inspect,
        conversation: Arc::from(thread),
        prompt: String::new(),
        prompt_version: std::borrow::Cow::Borrowed(""),
        deadline: engine::Timestamp(u64::MAX),
        executor_kind: engine::ExecutorKind::Codex,
        workspace: None,
        approval: None,
    }
}
