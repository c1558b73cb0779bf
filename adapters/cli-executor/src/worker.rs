//! One worker's side of the executor, as a task: what every worker task shares (the
//! settings, the messages in and out, the loop `serve` and the restart backoff
//! [`Restarts`]), and the Codex worker's task: its session (one `codex app-server` child
//! and its core, leased as `wrk-N`), the commands it serves through the journal, a new
//! child with `thread/resume` when one exits (bounded, with backoff), and reconciliation
//! of prompts a dead child or executor left `submission-started`. The Claude worker's
//! task is `crate::claude_worker`.
//!
//! Order of durability: the connection journals a command `received` before handing it
//! here; the pump's [`crate::pump::Gate`] ([`crate::ledger::gate`]) journals
//! `submission-started` (and, for a create, the new binding) before the prompt's line is
//! written; a result is journaled `completed` before it is sent; a state's sequence is
//! persisted before the state is sent ([`Ledger`]).

use crate::Error;
use crate::codex::{Codex, Effect, Outcome, Report, Resume};
use crate::home;
use crate::journal::Journal;
use crate::lease::Leases;
use crate::ledger::{Ledger, gate};
use crate::limits::{CHILD_RESTART_BACKOFF_MS_MAX, CHILD_RESTART_BACKOFF_MS_MIN, CHILD_RESTARTS_MAX};
use crate::pump::{Core, Event, Session};
use crate::reconcile::{self, Verdict};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::model::{ConversationState, ErrorKind};
use executor_protocol::{
    BindingWire, CommandWire, ExecutorKindWire, KindWire, OutcomeWire, PhaseWire, ResultWire, StateWire,
    SteerLandedWire,
};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What every worker's child is started with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The Codex CLI (`codex`, or a stand-in in tests).
    pub program: PathBuf,
    /// Its arguments (`app-server`, then any `-c key=value`).
    pub args: Vec<String>,
    /// Variables set for a Codex child, beyond the allowlist.
    pub env_set: Vec<(String, String)>,
    /// The executor's state directory: journal, leases, session homes.
    pub state_dir: PathBuf,
    /// The working directory for a create whose command names none (`--workspace`).
    pub workspace: Option<String>,
    /// The orchestrator's MCP server, which every child is configured with (as required)
    /// and which must answer before a prompt goes in. `None` only in tests of the shell
    /// that run no turn needing it; `orchestrator executor-cli` always sets it.
    pub mcp: Option<crate::mcp::McpServer>,
    /// How Claude Code children start; `None`: this executor runs no Claude worker.
    pub claude: Option<crate::claude_cli::ClaudeSettings>,
    /// The kinds this executor runs, announced in `hello` (`capabilities.kinds`); a
    /// command of another kind is refused.
    pub kinds: Vec<ExecutorKindWire>,
    /// The person's Codex login (`--codex-auth`, checked by [`crate::home::check_auth_file`]),
    /// linked into every session's `CODEX_HOME`; `None`: the sessions have no login.
    pub codex_auth: Option<PathBuf>,
    /// `--approvals`: `never` (no prompts, the sandbox guards the work) or `ask` (a Codex
    /// approval request, or a Claude Code tool permission request, waits for a person's
    /// answer from the dashboard).
    pub approvals: crate::codex::Approvals,
}

/// What the connection hands a worker's task.
#[derive(Debug, Clone)]
pub enum In {
    /// A command from the daemon (a create, send or steer already journaled `received`),
    /// with the working directory it named (`workspace.directory`).
    Command(Box<CommandWire>, Option<String>),
    /// The executor (re)started: start the child, resume the bound thread, settle what the
    /// journal left open and publish the conversation's state.
    Recover,
}

/// What a worker's task reports for the daemon, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// A `conversation.state` (its `seq` already persisted).
    State(StateWire),
    /// A `command.result` (already journaled).
    Result(ResultWire),
    /// A `binding`: a created thread settled (sent after its create's result).
    Binding(BindingWire),
    /// A `steer.landed` (already journaled; a `next_turn` one before the state it names).
    Landed(SteerLandedWire),
}

/// What the worker tasks share.
#[derive(Clone)]
pub struct Shared {
    /// The one journal.
    pub journal: Arc<Mutex<Journal>>,
    /// The lease directory (reaped at start).
    pub leases: Arc<Leases>,
    /// How children start.
    pub settings: Arc<Settings>,
    /// Reports, to the connection.
    pub out: mpsc::Sender<Out>,
}

/// The journal, even if a task panicked while holding it (the journal's own state is
/// only changed after a successful append, so it is never half updated).
pub fn lock(journal: &Mutex<Journal>) -> MutexGuard<'_, Journal> {
    journal.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Children of a worker that exited in a row, and when the next one is due.
#[derive(Debug, Default)]
pub struct Restarts {
    /// Exits in a row (reset by a submitted prompt or an idle turn end).
    pub exits: u32,
    /// When the next child is due after an exit.
    pub at: Option<Instant>,
    /// [`CHILD_RESTARTS_MAX`] exits in a row: no child until the next command.
    pub gave_up: bool,
}

impl Restarts {
    /// A child exited (or could not start): `true` when that made [`CHILD_RESTARTS_MAX`]
    /// in a row (given up); otherwise the next child is due after a backoff of
    /// [`CHILD_RESTART_BACKOFF_MS_MIN`], doubled for each exit in a row.
    pub fn exited(&mut self) -> bool {
        self.exits += 1;
        if self.exits >= CHILD_RESTARTS_MAX {
            self.gave_up = true;
            self.at = None;
            return true;
        }
        let backoff = CHILD_RESTART_BACKOFF_MS_MIN
            .saturating_mul(1 << (self.exits - 1).min(16))
            .min(CHILD_RESTART_BACKOFF_MS_MAX);
        self.at = Some(Instant::now() + Duration::from_millis(backoff));
        false
    }

    /// A command that submits: a worker whose child was given up on tries again.
    pub fn retry(&mut self) {
        if self.gave_up {
            self.gave_up = false;
            self.exits = 0;
        }
    }
}

/// What every worker task does first with a command from the daemon: a command that
/// submits lets a worker whose child was given up on try again, and a close of the bound
/// conversation forgets the binding. Says whether the command submits a prompt.
pub(crate) fn receive(command: &CommandWire, restarts: &mut Restarts, ledger: &Ledger) -> bool {
    let submits = matches!(command.kind, KindWire::Create | KindWire::Send | KindWire::Steer);
    if submits {
        restarts.retry();
    }
    ledger.closing(command);
    submits
}

/// A worker's task as [`serve`] drives it.
pub(crate) trait Shell: Send {
    /// The core of its children.
    type Core: Core;
    /// The worker.
    fn worker(&self) -> WorkerId;
    /// Its session (a core and its child), if one was started.
    fn session(&mut self) -> &mut Option<Session<Self::Core>>;
    /// Its restart backoff.
    fn restarts(&mut self) -> &mut Restarts;
    /// A message from the connection.
    async fn input(&mut self, message: In);
    /// What the session's pump observed.
    async fn event(&mut self, event: Result<Event<<Self::Core as Core>::Report>, Error>);
    /// The backoff after an exit passed: start the next child.
    async fn restart(&mut self);
}

/// Serves `input` until the connection drops its sender; the child is then stopped.
pub(crate) async fn serve<S: Shell>(mut shell: S, mut input: mpsc::Receiver<In>) {
    loop {
        let restart_at = shell.restarts().at;
        tokio::select! {
            message = input.recv() => match message {
                Some(message) => shell.input(message).await,
                None => break,
            },
            event = next(shell.session()) => shell.event(event).await,
            () = sleep_until(restart_at) => {
                shell.restarts().at = None;
                shell.restart().await;
            }
        }
    }
    let worker = shell.worker();
    if let Some(session) = shell.session().take()
        && let Err(e) = session.stop().await
        && e != Error::ChildGone
    {
        tracing::warn!(%worker, code = e.code(), "stopping the child: {e}");
    }
}

/// One Codex worker's task.
pub struct Task {
    worker: WorkerId,
    shared: Shared,
    /// Its reports, journaled first.
    ledger: Ledger,
    session: Option<Session<Codex>>,
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

impl Shell for Task {
    type Core = Codex;

    fn worker(&self) -> WorkerId {
        self.worker
    }

    fn session(&mut self) -> &mut Option<Session<Codex>> {
        &mut self.session
    }

    fn restarts(&mut self) -> &mut Restarts {
        &mut self.restarts
    }

    async fn input(&mut self, message: In) {
        match message {
            In::Recover => {
                if self.session.is_none() && self.restarts.at.is_none() {
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
                let gone = self.session.take();
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

impl Task {
    /// A task for `worker`.
    pub fn new(worker: WorkerId, shared: Shared) -> Task {
        Task {
            worker,
            ledger: Ledger::new(worker, shared.clone()),
            shared,
            session: None,
            cwd: None,
            restarts: Restarts::default(),
            orphans: BTreeSet::new(),
            approvals_given: 0,
        }
    }

    async fn command(&mut self, command: CommandWire, cwd: Option<String>) {
        let submits = receive(&command, &mut self.restarts, &self.ledger);
        if self.session.is_none() && command.kind == KindWire::ApprovalAnswer {
            // No child, no request: the one answered died with it.
            let outcome = OutcomeWire::Failed {
                code: "APPROVAL_GONE".to_string(),
                detail: "the Codex session that asked has ended".to_string(),
            };
            let _ = self.shared.out.send(Out::Result(ResultWire { command_id: command.command_id, outcome })).await;
            return;
        }
        if self.session.is_none() && !matches!(command.kind, KindWire::Create | KindWire::Cancel) {
            let thread = reconcile::thread_of(&command.conversation_url);
            let bound = self.ledger.bound().map(|b| b.thread);
            if thread.is_none() || thread != bound.as_deref() {
                // Not the bound thread (a closed one): no child would host it, none starts.
                if submits {
                    self.ledger.fail(command.command_id, "CONVERSATION_CLOSED", "no such thread here").await;
                }
                return;
            }
        }
        if self.session.is_none() {
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
                return self.ledger.fail(command.command_id, "HOST_UI_CHANGED", detail).await;
            }
            // The new child requeues every journaled command, this one included.
            return self.start().await;
        }
        let id = command.command_id;
        let engine_command = to_engine(command);
        let result = match self.session.as_mut() {
            Some(session) => session.command(engine_command).await,
            None => Ok(()),
        };
        if let Err(e) = result {
            tracing::warn!(worker = %self.worker, code = e.code(), "command {id}: {e}");
            if submits && e != Error::ChildGone {
                self.ledger.fail(id, "HOST_UI_CHANGED", &format!("the Codex core refused the command: {e}")).await;
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
        let mut session = match Session::start(&spec, &self.shared.leases, core, gate).await {
            Ok(session) => session,
            Err(e) => return self.exited(&format!("cannot start {}: {e}", settings.program.display())).await,
        };
        tracing::info!(worker = %self.worker, cwd, resumed = resumes.len(), "child started");
        self.orphans = started.iter().map(|e| e.command.command_id).collect();
        for entry in received {
            if let Err(e) = session.command(to_engine(entry.command)).await {
                tracing::warn!(worker = %self.worker, code = e.code(), "requeue: {e}");
            }
        }
        self.session = Some(session);
        match bound {
            Some(thread) => {
                let inspect = inspect(self.worker, &thread);
                if let Some(session) = self.session.as_mut()
                    && let Err(e) = session.command(inspect).await
                {
                    tracing::warn!(worker = %self.worker, code = e.code(), "inspect after start: {e}");
                }
            }
            None => self.settle_orphans(None).await,
        }
    }

    /// The child is gone (or could not start): restart after a backoff, or give up.
    async fn exited(&mut self, why: &str) {
        self.session = None;
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
            };
            let bound = lock(&self.shared.journal).binding(self.worker).map(|b| b.thread.clone());
            if let Some(thread) = bound {
                self.ledger.publish(&thread, report).await;
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
                self.ledger.publish(&thread, report).await;
            }
            Effect::Approval { thread, report, approval, .. } => {
                self.ledger.publish_asking(&thread, report, Some(approval)).await;
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
                };
                self.ledger.publish(&thread, report).await;
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
            self.ledger.result(id, outcome).await;
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
        self.ledger.result(command, wire).await;
    }

    fn bound_cwd(&self) -> Option<String> {
        lock(&self.shared.journal).binding(self.worker).map(|b| b.cwd.clone())
    }
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

async fn next<C: Core>(session: &mut Option<Session<C>>) -> Result<Event<C::Report>, Error> {
    match session.as_mut() {
        Some(session) => session.next().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
