//! One worker's side of the executor, as a task: its session (one `codex app-server` child
//! and its core, leased as `wrk-N`), the commands it serves through the journal, a new
//! child with `thread/resume` when one exits (bounded, with backoff), and reconciliation
//! of prompts a dead child or executor left `submission-started`.
//!
//! Order of durability: the connection journals a command `received` before handing it
//! here; the pump's [`Gate`] journals `submission-started` (and, for a create, the new
//! binding) before the prompt's line is written; a result is journaled `completed` before
//! it is sent; a state's sequence is persisted before the state is sent.

use crate::Error;
use crate::codex::{Codex, Effect, Outcome, Report, Resume};
use crate::home;
use crate::journal::Journal;
use crate::lease::Leases;
use crate::limits::{CHILD_RESTART_BACKOFF_MS_MAX, CHILD_RESTART_BACKOFF_MS_MIN, CHILD_RESTARTS_MAX};
use crate::pump::{Event, Session};
use crate::reconcile::{self, Verdict};
use bridge::{
    BindingWire, CommandWire, KindWire, ObservationWire, OutcomeWire, PhaseWire, ResultWire, StateName, StateWire,
};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::model::{ConversationState, ErrorKind};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What every worker's child is started with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The CLI (`codex`, or a stand-in in tests).
    pub program: PathBuf,
    /// Its arguments (`app-server`, then any `-c key=value`).
    pub args: Vec<String>,
    /// Variables set for the child, beyond the allowlist.
    pub env_set: Vec<(String, String)>,
    /// The executor's state directory: journal, leases, session homes.
    pub state_dir: PathBuf,
    /// The working directory for a create whose command names none (`--workspace`).
    pub workspace: Option<String>,
    /// The orchestrator's MCP server, which every child is configured with (as required)
    /// and which must answer before a prompt goes in. `None` only in tests of the shell
    /// that run no turn needing it; `orchestrator executor-cli` always sets it.
    pub mcp: Option<crate::mcp::McpServer>,
    /// The person's Codex login (`--codex-auth`, checked by [`crate::home::check_auth_file`]),
    /// linked into every session's `CODEX_HOME`; `None`: the sessions have no login.
    pub codex_auth: Option<PathBuf>,
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

/// One worker's task.
pub struct Task {
    worker: WorkerId,
    shared: Shared,
    session: Option<Session>,
    /// The working directory of the current (or last) child.
    cwd: Option<String>,
    /// Children that exited in a row (reset by a submitted prompt or an idle turn end).
    exits: u32,
    /// When the next child is due after an exit.
    restart_at: Option<Instant>,
    /// [`CHILD_RESTARTS_MAX`] exits in a row: no child until the next command.
    gave_up: bool,
    /// Prompts a dead child or executor left `submission-started`, to settle from the
    /// next `thread/read`.
    orphans: BTreeSet<CommandId>,
    /// The latest state of a thread being created (published once its create reports).
    creating: Option<(String, Report)>,
}

impl Task {
    /// A task for `worker`.
    pub fn new(worker: WorkerId, shared: Shared) -> Task {
        Task {
            worker,
            shared,
            session: None,
            cwd: None,
            exits: 0,
            restart_at: None,
            gave_up: false,
            orphans: BTreeSet::new(),
            creating: None,
        }
    }

    /// Serves `input` until the connection drops its sender; the child is then stopped.
    pub async fn run(mut self, mut input: mpsc::Receiver<In>) {
        loop {
            tokio::select! {
                message = input.recv() => match message {
                    Some(message) => self.input(message).await,
                    None => break,
                },
                event = next(&mut self.session) => self.event(event).await,
                () = sleep_until(self.restart_at) => {
                    self.restart_at = None;
                    self.start().await;
                }
            }
        }
        if let Some(session) = self.session.take()
            && let Err(e) = session.stop().await
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "stopping the child: {e}");
        }
    }

    async fn input(&mut self, message: In) {
        match message {
            In::Recover => {
                if self.session.is_none() && self.restart_at.is_none() {
                    self.start().await;
                }
            }
            In::Command(command, cwd) => self.command(*command, cwd).await,
        }
    }

    async fn command(&mut self, command: CommandWire, cwd: Option<String>) {
        let submits = matches!(command.kind, KindWire::Create | KindWire::Send | KindWire::Steer);
        if submits && self.gave_up {
            self.gave_up = false;
            self.exits = 0;
        }
        if command.kind == KindWire::Close
            && let Some(thread) = reconcile::thread_of(&command.conversation_url)
        {
            let bound = lock(&self.shared.journal).binding(self.worker).is_some_and(|b| b.thread == thread);
            if bound && let Err(e) = lock(&self.shared.journal).unbind(self.worker) {
                tracing::warn!(worker = %self.worker, code = e.code(), "journaling a close: {e}");
            }
        }
        if self.session.is_none() {
            if self.restart_at.is_some() {
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
                return self.fail(command.command_id, "HOST_UI_CHANGED", detail).await;
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
                self.fail(id, "HOST_UI_CHANGED", &format!("the Codex core refused the command: {e}")).await;
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
        let resumes: Vec<Resume> = bound
            .iter()
            .map(|thread| Resume {
                worker: self.worker,
                thread: thread.clone(),
                nonces: lock(&self.shared.journal).nonces(thread),
            })
            .collect();
        let settings = &self.shared.settings;
        let core = match Codex::resuming(home::codex_config(settings, &cwd), &resumes) {
            Ok(core) => core,
            Err(e) => return self.exited(&format!("cannot resume: {e}")).await,
        };
        let spec = match home::codex_spawn(settings, &self.worker.to_string(), std::path::Path::new(&cwd)) {
            Ok(spec) => spec,
            Err(e) => return self.exited(&format!("cannot prepare the session: {e}")).await,
        };
        let journal = Arc::clone(&self.shared.journal);
        let gate_cwd = cwd.clone();
        let gate = Box::new(move |command: CommandId, worker: WorkerId, thread: &str| {
            let mut journal = lock(&journal);
            let create = journal.entry(command).is_some_and(|e| e.command.kind == KindWire::Create);
            if create {
                journal.bind(worker, thread, &gate_cwd)?;
            }
            journal.submission_started(command, thread).map(|_| ())
        });
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

    async fn event(&mut self, event: Result<Event, Error>) {
        match event {
            Ok(Event::Effect(effect)) => self.effect(effect).await,
            Ok(Event::Exited { exit, .. }) => {
                self.session = None;
                let last = exit.stderr_tail.lines().last().unwrap_or_default().to_string();
                let how = match (exit.code, exit.signal) {
                    (Some(code), _) => format!("exited with status {code}"),
                    (None, Some(signal)) => format!("was killed by signal {signal}"),
                    (None, None) => "ended".to_string(),
                };
                self.exited(&format!("codex app-server {how}: {last}")).await;
            }
            Err(Error::ChildGone) => {} // the next call reports the exit
            Err(e) => tracing::warn!(worker = %self.worker, code = e.code(), "from the child: {e}"),
        }
    }

    /// The child is gone (or could not start): restart after a backoff, or give up.
    async fn exited(&mut self, why: &str) {
        self.session = None;
        self.exits += 1;
        tracing::warn!(worker = %self.worker, exits = self.exits, "{why}");
        if self.exits >= CHILD_RESTARTS_MAX {
            self.gave_up = true;
            let started: Vec<CommandId> = lock(&self.shared.journal)
                .entries()
                .filter(|e| e.command.worker_id == self.worker && e.phase == PhaseWire::SubmissionStarted)
                .map(|e| e.command.command_id)
                .collect();
            self.orphans.extend(started);
            self.settle_orphans(None).await;
            let detail = format!("the Codex child exited {} times in a row ({why}); resume to try again", self.exits);
            let report = Report {
                state: ConversationState::Error(ErrorKind::HostUiChanged),
                block: None,
                until: None,
                detail: Some(detail),
            };
            let bound = lock(&self.shared.journal).binding(self.worker).map(|b| b.thread.clone());
            if let Some(thread) = bound {
                self.publish(&thread, report).await;
            }
            return;
        }
        let backoff = CHILD_RESTART_BACKOFF_MS_MIN
            .saturating_mul(1 << (self.exits - 1).min(16))
            .min(CHILD_RESTART_BACKOFF_MS_MAX);
        self.restart_at = Some(Instant::now() + Duration::from_millis(backoff));
    }

    async fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::Result { command, outcome } => self.result(command, outcome).await,
            Effect::State { thread, report, .. } => {
                if report.state == ConversationState::Idle {
                    self.exits = 0;
                }
                self.publish(&thread, report).await;
            }
            Effect::Foreign { thread, turn, .. } => {
                let detail = format!(
                    "a turn the orchestrator did not start ran in this Codex thread (turn {turn}): check the session, then resume"
                );
                let report = Report {
                    state: ConversationState::Error(ErrorKind::HostUiChanged),
                    block: None,
                    until: None,
                    detail: Some(detail),
                };
                self.publish(&thread, report).await;
            }
            Effect::Thread { record, .. } => self.settle_orphans(Some(&record)).await,
            Effect::Unresponsive { method, error } => {
                tracing::warn!(worker = %self.worker, method, ?error, "the app-server did not serve a request");
                if method == "thread/read" || method == "thread/resume" {
                    self.settle_orphans(None).await;
                }
            }
            Effect::Write(_) | Effect::Prompt { .. } => {} // written by the pump
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
            self.send_result(id, outcome).await;
        }
    }

    async fn result(&mut self, command: CommandId, outcome: Outcome) {
        let wire = match outcome {
            Outcome::Submitted { thread, .. } => {
                self.exits = 0;
                let entry = lock(&self.shared.journal).entry(command).cloned();
                let create = entry.as_ref().is_some_and(|e| e.command.kind == KindWire::Create);
                let state_seq = entry.map_or(0, |e| e.state_seq);
                let url = create.then(|| reconcile::conversation_url(&thread));
                OutcomeWire::Submitted { state_seq, conversation_url: url }
            }
            Outcome::Failed { code, detail } => OutcomeWire::Failed { code: code.to_string(), detail },
        };
        self.send_result(command, wire).await;
    }

    async fn fail(&mut self, command: CommandId, code: &str, detail: &str) {
        self.send_result(command, OutcomeWire::Failed { code: code.to_string(), detail: detail.to_string() }).await;
    }

    /// Journals `outcome` as the command's completion, then sends it.
    async fn send_result(&mut self, command: CommandId, outcome: OutcomeWire) {
        if let Err(e) = lock(&self.shared.journal).complete(command, &outcome) {
            tracing::warn!(worker = %self.worker, code = e.code(), "journaling the result of {command}: {e}");
        }
        let thread = match &outcome {
            OutcomeWire::Submitted { conversation_url: Some(url), .. } => reconcile::thread_of(url).map(str::to_string),
            _ => None,
        };
        let _ = self.shared.out.send(Out::Result(ResultWire { command_id: command, outcome })).await;
        // A created thread: its binding settles after the result, then its states.
        if let Some(thread) = thread {
            let binding = BindingWire {
                worker_id: self.worker,
                conversation_url: reconcile::conversation_url(&thread),
                open: true,
                observation: None,
            };
            let _ = self.shared.out.send(Out::Binding(binding)).await;
            if let Some((creating, report)) = self.creating.take()
                && creating == thread
            {
                self.publish(&thread, report).await;
            }
        }
    }

    /// Publishes a state of `thread` with the next persisted sequence, unless it is the
    /// state last published: only for the bound thread (a thread being created waits for its create's result; older threads of the
    /// worker are not its conversation any more).
    async fn publish(&mut self, thread: &str, report: Report) {
        let (state, error_kind) = StateName::from_engine(report.state);
        let observation = ObservationWire {
            state,
            error_kind,
            seq: 0,
            block: report.block.clone(),
            until_ms: report.until.map(|t| t.0),
            detail: report.detail.clone(),
        };
        let seq = {
            let mut journal = lock(&self.shared.journal);
            if journal.binding(self.worker).is_none_or(|b| b.thread != thread) {
                drop(journal);
                self.creating = Some((thread.to_string(), report));
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
        };
        let _ = self.shared.out.send(Out::State(wire)).await;
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
    }
}

async fn next(session: &mut Option<Session>) -> Result<Event, Error> {
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
