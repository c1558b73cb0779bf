//! One Claude Code worker's task, the shell around the Claude core: its pump (the
//! [`Claude`] core, which lives across children, and, one at a time, its `claude -p`
//! stream-json child, leased as `wrk-N`, with the session's own `CLAUDE_CONFIG_DIR` and
//! `TMPDIR`), the commands it serves through the journal, a new child (`--resume`) when one
//! exits (bounded, with backoff), and reconciliation from the session's transcript of
//! prompts an executor crash left `submission-started` and of the lines a crashed child
//! never acknowledged. The core meets the base's pump here too ([`Core`] for [`Claude`]).
//!
//! A child is started only when the core asks ([`Event::Spawn`]: a create, or a respawn
//! for a command, a restart or a recovery), and only after the orchestrator's MCP server
//! answered the handshake the child will make ([`mcp::probe`]): otherwise the commands
//! meant for that child fail definitely before anything is written (`HOST_UI_CHANGED`,
//! detail `MCP_UNREACHABLE: ...`), and the worker pauses. Durability is the Codex task's
//! ([`Books`], [`gate`]): `received`, then `submission-started` (a create's binding with
//! it) before the line is written, `completed` before the result is sent.

use crate::Error;
use crate::base::books::{Books, gate, receive, session_of};
use crate::base::child::{Exit, Spawn};
use crate::base::journal::Entry;
use crate::base::mcp;
use crate::base::pump::{Core, Event, Pump, Step};
use crate::base::report::{ABSENT, AMBIGUOUS};
use crate::base::worker::{In, Out, Restarts, Shared, Shell};
use crate::claude::cli::{self, read_transcript};
use crate::claude::transcript::{self, Found};
use crate::claude::tz::TzDir;
use crate::claude::{Claude, Effect, Landed, Outcome, Report, nonce};
use engine::ExecutorKind;
use engine::effect::ExecutorCommand;
use engine::ids::{CommandId, ExecutorId, WorkerId};
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use executor_protocol::{CommandWire, ExecutorKindWire, KindWire, LandedWire, OutcomeWire, PhaseWire, ResultWire};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One Claude worker's task.
pub struct ClaudeTask {
    worker: WorkerId,
    shared: Shared,
    /// Its reports, journaled first.
    books: Books,
    /// The pump: its core lives across children (the lines not yet acknowledged, the
    /// nonces); `None` before the first command or recovery.
    pump: Option<Pump<Claude>>,
    /// The working directory of the session's children.
    cwd: Option<String>,
    restarts: Restarts,
    /// Commands that came while a restart was due: served when the next child starts.
    deferred: Vec<(CommandWire, Option<String>)>,
    /// The last line of the last child's stderr, for people.
    last_exit: String,
}

impl ClaudeTask {
    /// A task for `worker`.
    pub fn new(worker: WorkerId, shared: Shared) -> ClaudeTask {
        ClaudeTask {
            worker,
            books: Books::new(worker, shared.clone()),
            shared,
            pump: None,
            cwd: None,
            restarts: Restarts::default(),
            deferred: Vec::new(),
            last_exit: String::new(),
        }
    }

    async fn command(&mut self, command: CommandWire, cwd: Option<String>) {
        let submits = receive(&command, &mut self.restarts, &self.books);
        if command.kind == KindWire::ApprovalAnswer && !self.pump.as_ref().is_some_and(|s| s.core().has_child()) {
            // No child, no request: the one answered died with it.
            let detail = "the Claude Code process that asked has ended".to_string();
            let outcome = OutcomeWire::Failed { code: "APPROVAL_GONE".to_string(), detail };
            let _ = self.shared.out.send(Out::Result(ResultWire { command_id: command.command_id, outcome })).await;
            return;
        }
        if self.restarts.at.is_some() && !matches!(command.kind, KindWire::Create | KindWire::Close) {
            // A child is due shortly: the command is served when it starts (not a close:
            // it closes the session between children, and no child starts for it).
            self.deferred.push((command, cwd));
            return;
        }
        if command.kind == KindWire::Create || self.pump.is_none() {
            let bound = self.books.bound().map(|b| b.cwd);
            let dir = cwd
                .or_else(|| if command.kind == KindWire::Create { None } else { bound })
                .or_else(|| self.cwd.clone())
                .or_else(|| self.shared.settings.workspace.clone());
            let Some(dir) = dir else {
                let detail = "no working directory: the command names no workspace.directory and the executor has no --workspace";
                if submits {
                    self.books.fail(command.command_id, "HOST_UI_CHANGED", detail).await;
                }
                return;
            };
            if command.kind == KindWire::Create {
                // A new conversation is a new session: the old child (if any) ends.
                self.stop_child().await;
                self.pump = None;
            }
            if self.pump.is_none() && !self.open(&dir, command.kind != KindWire::Create) {
                return self
                    .books
                    .fail(command.command_id, "HOST_UI_CHANGED", "the executor runs no Claude worker")
                    .await;
            }
        }
        self.serve(command).await;
    }

    /// Hands a command to the core, with a child for it: a session between children is
    /// resumed first (`--resume`), unless it was closed.
    async fn serve(&mut self, command: CommandWire) {
        let id = command.command_id;
        let needs_child = matches!(command.kind, KindWire::Send | KindWire::Steer);
        let Some(pump) = self.pump.as_mut() else { return };
        let core = pump.core();
        if needs_child
            && !core.has_child()
            && !core.is_closed()
            && core.session().is_some()
            && let Err(e) = pump.drive(|core, now| core.respawn(now)).await
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "respawn: {e}");
        }
        let result = match self.pump.as_mut() {
            Some(pump) => pump.command(to_engine(command)).await,
            None => Ok(()),
        };
        if let Err(e) = result
            && e != Error::ChildGone
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "command {id}: {e}");
            self.books.fail(id, "HOST_UI_CHANGED", &format!("the Claude core refused the command: {e}")).await;
        }
    }

    /// Opens the worker's session in `dir`: a fresh core, or (`adopt`) the bound session's,
    /// to resume. `false` when this executor has no Claude settings.
    fn open(&mut self, dir: &str, adopt: bool) -> bool {
        let settings = &self.shared.settings;
        let Some(claude) = &settings.claude else { return false };
        let mut core =
            Claude::new(cli::config(claude, settings.mcp.as_ref(), settings.approvals), Box::new(TzDir::default()));
        if adopt && let Some(bound) = self.books.bound().filter(|b| b.kind == ExecutorKindWire::Claude) {
            let nonces: Vec<String> =
                self.books.journal().nonces(&bound.thread).iter().map(|key| nonce::nonce_uuid(key)).collect();
            core.adopt(self.worker, &bound.thread, &nonces);
        }
        let mut spec = Spawn::claude(&self.worker.to_string(), Path::new(dir), &settings.state_dir);
        spec.program.clone_from(&claude.program);
        spec.env_set.extend(claude.env_set.iter().cloned());
        spec.env_set.extend(settings.mcp.iter().flat_map(mcp::McpServer::env));
        let gate = gate(Arc::clone(&self.shared.journal), dir.to_string(), ExecutorKindWire::Claude);
        self.pump = Some(Pump::new(&spec, &self.shared.leases, core, gate));
        self.cwd = Some(dir.to_string());
        true
    }

    /// The executor (re)started: settle what the journal left `submission-started` from
    /// the bound session's transcript (the old child is gone, reaped at start), resume the
    /// session in a new child, and serve the commands the journal still holds `received`.
    async fn recover(&mut self) {
        if self.pump.is_some() {
            return;
        }
        let bound = self.books.bound().filter(|b| b.kind == ExecutorKindWire::Claude);
        let started = self.books.entries(PhaseWire::SubmissionStarted);
        let received = self.books.entries(PhaseWire::Received);
        if let Some(bound) = &bound {
            let text = read_transcript(&self.config_home(), &bound.thread);
            for entry in started {
                self.settle(&entry, &bound.thread, &text).await;
            }
        } else {
            for entry in started {
                let detail = "the executor restarted mid-submission and the worker has no Claude session to read";
                self.books.result(entry.command.command_id, reconcile_ambiguous(detail)).await;
            }
        }
        if let Some(bound) = self.books.bound().filter(|b| b.kind == ExecutorKindWire::Claude)
            && self.open(&bound.cwd, true)
            && let Some(pump) = self.pump.as_mut()
            && let Err(e) = pump.drive(|core, now| core.respawn(now)).await
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "resume after a restart: {e}");
        }
        for entry in received {
            let cwd = entry.cwd.clone();
            self.command(entry.command, cwd).await;
        }
    }

    /// Settles one prompt left `submission-started` from the session's transcript `text`.
    async fn settle(&mut self, entry: &Entry, session: &str, text: &Result<String, String>) {
        let uuid = nonce::nonce_uuid(&entry.command.idempotency_key);
        let found = match text {
            Ok(text) => transcript::find(text, &uuid, &entry.command.prompt),
            Err(why) => {
                tracing::warn!(worker = %self.worker, "the transcript of {session}: {why}");
                Found::CannotTell { why: "the session's transcript cannot be read" }
            }
        };
        tracing::info!(worker = %self.worker, command = %entry.command.command_id, ?found, "reconciled");
        let create = entry.command.kind == KindWire::Create;
        let outcome = match found {
            Found::Sent { .. } => OutcomeWire::Submitted {
                state_seq: entry.state_seq,
                conversation_url: create.then(|| claude_url(session)),
            },
            Found::Absent => {
                if create && let Err(e) = self.books.journal().unbind(self.worker) {
                    tracing::warn!(worker = %self.worker, code = e.code(), "unbinding a session never started: {e}");
                }
                OutcomeWire::Failed {
                    code: ABSENT.to_string(),
                    detail: "the executor restarted before the prompt reached Claude Code (the session's transcript holds no message with its nonce): not submitted".to_string(),
                }
            }
            Found::CannotTell { why } => {
                reconcile_ambiguous(&format!("the executor restarted mid-submission and {why}"))
            }
        };
        self.books.result(entry.command.command_id, outcome).await;
    }

    /// The core asks for a child: only once the MCP server answers, under the lease.
    async fn spawn(&mut self, args: Vec<String>) {
        let refusal = match &self.shared.settings.mcp {
            Some(server) => mcp::probe(server).await.err().map(|e| format!("{}: {e}", mcp::UNREACHABLE)),
            None => None,
        };
        let Some(pump) = self.pump.as_mut() else { return };
        let refusal = match refusal {
            Some(refusal) => Some(refusal),
            None => pump.spawn(Some(args)).err().map(|e| format!("cannot start claude: {e}")),
        };
        match refusal {
            Some(detail) => {
                tracing::warn!(worker = %self.worker, "no child: {detail}");
                let refused = pump.refuse_spawn(|core| core.not_started("HOST_UI_CHANGED", &detail)).await;
                if let Err(e) = refused {
                    tracing::warn!(worker = %self.worker, code = e.code(), "after a refused start: {e}");
                }
            }
            None => {
                tracing::info!(worker = %self.worker, cwd = self.cwd.as_deref().unwrap_or_default(), "child started");
                if pump.core().is_quiet()
                    && let Some(id) = pump.core().session().map(str::to_string)
                {
                    // The session takes input again, and no turn of ours runs in it.
                    self.books.publish(&id, Report::bare(ConversationState::Idle)).await;
                }
            }
        }
        // Commands that came during a restart's backoff: served now (each asks for a child
        // again if this one was refused, and fails definitely if that one is refused too).
        for (command, cwd) in std::mem::take(&mut self.deferred) {
            self.command(command, cwd).await;
        }
    }

    async fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::Result { command, outcome } => self.result(command, outcome).await,
            Effect::State { session, report, .. } => {
                if report.state == ConversationState::Idle {
                    self.restarts.exits = 0;
                }
                self.books.publish(&session, report).await;
            }
            Effect::Foreign { session, uuid, .. } => {
                self.books.publish(&session, foreign_report(uuid.as_deref())).await
            }
            Effect::Steered { command, landed } => self.steer_landed(command, landed).await,
            Effect::Approval { session, report, approval, .. } => {
                self.books.publish_asking(&session, report, Some(approval)).await;
            }
            Effect::Answered { command, outcome } => self.answered(command, outcome).await,
            Effect::Exited { session, refusal, code, .. } => self.child_exited(&session, refusal, code).await,
            Effect::Spawn { .. } | Effect::Prompt { .. } | Effect::CloseStdin | Effect::Stop | Effect::Write(_) => {} // done by the pump
        }
    }

    async fn result(&mut self, command: CommandId, outcome: Outcome) {
        let wire = match outcome {
            Outcome::Submitted { session, .. } => {
                self.restarts.exits = 0;
                let entry = self.books.journal().entry(command).cloned();
                let create = entry.as_ref().is_some_and(|e| e.command.kind == KindWire::Create);
                let state_seq = entry.map_or(0, |e| e.state_seq);
                OutcomeWire::Submitted { state_seq, conversation_url: create.then(|| claude_url(&session)) }
            }
            Outcome::Failed { code, detail } => OutcomeWire::Failed { code: code.to_string(), detail },
        };
        self.books.result(command, wire).await;
    }

    /// An `approval.answer`'s outcome, straight to the daemon: the command is not
    /// journaled (its id is its turn's, whose result the journal keeps).
    async fn answered(&mut self, command: CommandId, outcome: Outcome) {
        let outcome = match outcome {
            Outcome::Submitted { .. } => {
                let state_seq = self.books.journal().entry(command).map_or(0, |e| e.state_seq);
                OutcomeWire::Submitted { state_seq, conversation_url: None }
            }
            Outcome::Failed { code, detail } => OutcomeWire::Failed { code: code.to_string(), detail },
        };
        let _ = self.shared.out.send(Out::Result(ResultWire { command_id: command, outcome })).await;
    }

    /// Where a steer landed: `steer.landed`, journaled first (the core says a next-turn
    /// landing just before the state that ends the turn the steer missed).
    async fn steer_landed(&mut self, command: CommandId, landed: Landed) {
        tracing::info!(worker = %self.worker, %command, ?landed, "a steer landed");
        let wire = match landed {
            Landed::Merged => LandedWire::Merged,
            Landed::NextTurn => LandedWire::NextTurn,
        };
        self.books.landed(command, wire).await;
    }

    /// The child exited (its effects came first): start the next one, or not.
    async fn child_exited(&mut self, session: &str, refusal: Option<Error>, code: Option<i32>) {
        match refusal {
            Some(Error::SessionInUse { .. }) => {
                // The new child read nothing: resume the session and write the lines again.
                if let Some(s) = self.pump.as_mut()
                    && let Err(e) = s.drive(|core, now| core.respawn(now)).await
                {
                    tracing::warn!(worker = %self.worker, code = e.code(), "respawn: {e}");
                }
            }
            Some(Error::SessionNotFound { .. }) => {
                if self.books.bound().is_some_and(|b| b.thread == session)
                    && let Err(e) = self.books.journal().unbind(self.worker)
                {
                    tracing::warn!(worker = %self.worker, code = e.code(), "unbinding a lost session: {e}");
                }
            }
            _ if self.pump.as_ref().is_some_and(|s| s.core().is_closed()) => {}
            _ => {
                self.settle_unacknowledged(session).await;
                let why = format!("claude exited ({code:?}): {}", self.last_exit);
                self.crashed(session, &why).await;
            }
        }
    }

    /// The lines a crashed child never acknowledged, settled from the session's transcript
    /// (the child is gone, so nothing more can land): found, `submitted`; a send proven
    /// absent, written again by the next child (once), a steer or create proven absent,
    /// `DEADLINE_EXCEEDED` (a create's binding dropped); a transcript that cannot be read or
    /// tell, `AMBIGUOUS_SUBMISSION` ([`Claude::settle`]).
    async fn settle_unacknowledged(&mut self, session: &str) {
        let lines = self.pump.as_ref().map(|s| s.core().unacknowledged()).unwrap_or_default();
        if lines.is_empty() {
            return;
        }
        let text = read_transcript(&self.config_home(), session);
        let verdicts: Vec<(CommandId, Found)> = lines
            .into_iter()
            .map(|(command, uuid, prompt)| {
                let found = match &text {
                    Ok(text) => transcript::find(text, &uuid, &prompt),
                    Err(why) => {
                        tracing::warn!(worker = %self.worker, "the transcript of {session}: {why}");
                        Found::CannotTell { why: "the session's transcript cannot be read" }
                    }
                };
                tracing::info!(worker = %self.worker, %command, ?found, "settled after a crash");
                (command, found)
            })
            .collect();
        if let Some(s) = self.pump.as_mut() {
            let settled = s.drive(|core, _| {
                verdicts.iter().for_each(|(command, found)| core.settle(*command, found));
                Ok(())
            });
            if let Err(e) = settled.await {
                tracing::warn!(worker = %self.worker, code = e.code(), "settling after a crash: {e}");
            }
        }
        let forgotten = self.pump.as_ref().is_some_and(|s| s.core().session().is_none());
        if forgotten
            && self.books.bound().is_some_and(|b| b.thread == session)
            && let Err(e) = self.books.journal().unbind(self.worker)
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "unbinding a session never started: {e}");
        }
    }

    /// A child ended on its own: restart after a backoff, or give up.
    async fn crashed(&mut self, session: &str, why: &str) {
        let gave_up = self.restarts.exited();
        tracing::warn!(worker = %self.worker, exits = self.restarts.exits, "{why}");
        if gave_up {
            if let Some(s) = self.pump.as_mut() {
                let detail = "the Claude child kept exiting before it took the prompt in: not submitted";
                let abandoned = s.drive(|core, _| {
                    core.abandon(ABSENT, detail);
                    Ok(())
                });
                if let Err(e) = abandoned.await {
                    tracing::warn!(worker = %self.worker, code = e.code(), "after giving up: {e}");
                }
            }
            let exits = self.restarts.exits;
            let detail = format!("the Claude child exited {exits} times in a row ({why}); resume to try again");
            let report =
                Report { detail: Some(detail), ..Report::bare(ConversationState::Error(ErrorKind::HostUiChanged)) };
            self.books.publish(session, report).await;
        }
    }

    /// Stops the running child, if any (the session is replaced).
    async fn stop_child(&mut self) {
        if let Some(pump) = self.pump.take()
            && pump.child().is_some()
            && let Err(e) = pump.stop().await
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "stopping the child: {e}");
        }
    }

    /// The session's config home (`CLAUDE_CONFIG_DIR`).
    fn config_home(&self) -> PathBuf {
        Spawn::claude(&self.worker.to_string(), Path::new("/"), &self.shared.settings.state_dir).home()
    }
}

impl Shell for ClaudeTask {
    type Core = Claude;

    fn worker(&self) -> WorkerId {
        self.worker
    }

    fn pump(&mut self) -> &mut Option<Pump<Claude>> {
        &mut self.pump
    }

    fn restarts(&mut self) -> &mut Restarts {
        &mut self.restarts
    }

    async fn input(&mut self, message: In) {
        match message {
            In::Recover => self.recover().await,
            In::Command(command, cwd) => self.command(*command, cwd).await,
        }
    }

    async fn event(&mut self, event: Result<Event<Effect>, Error>) {
        match event {
            Ok(Event::Effect(effect)) => self.effect(effect).await,
            Ok(Event::Spawn(args)) => self.spawn(args).await,
            Ok(Event::Exited { exit }) => {
                self.last_exit = exit.stderr_tail.lines().last().unwrap_or_default().to_string();
            }
            Err(Error::ChildGone) => {} // the exit follows
            Err(e) => tracing::warn!(worker = %self.worker, code = e.code(), "from the child: {e}"),
        }
    }

    async fn restart(&mut self) {
        let resumable = self.pump.as_ref().is_some_and(|s| {
            let core = s.core();
            !core.has_child() && !core.is_closed() && core.session().is_some()
        });
        if resumable && let Some(pump) = self.pump.as_mut() {
            if let Err(e) = pump.drive(|core, now| core.respawn(now)).await {
                tracing::warn!(worker = %self.worker, code = e.code(), "respawn: {e}");
            }
        } else {
            let deferred = std::mem::take(&mut self.deferred);
            for (command, cwd) in deferred {
                self.command(command, cwd).await;
            }
        }
    }
}

impl Core for Claude {
    type Report = Effect;

    fn command(&mut self, now: Timestamp, command: ExecutorCommand) -> Result<(), Error> {
        Claude::command(self, now, command)
    }

    fn line(&mut self, now: Timestamp, line: &str) -> Result<(), Error> {
        Claude::line(self, now, line)
    }

    fn tick(&mut self, now: Timestamp) {
        Claude::tick(self, now)
    }

    fn next_deadline(&self) -> Option<Timestamp> {
        Claude::next_deadline(self)
    }

    fn step(&mut self) -> Option<Step<Effect>> {
        Some(match self.poll_effect()? {
            Effect::Prompt { command, worker, session, line } => {
                Step::Prompt { command, worker, conversation: session, line }
            }
            Effect::Spawn { args, .. } => Step::Spawn(args),
            Effect::CloseStdin => Step::CloseStdin,
            Effect::Stop => Step::Stop,
            Effect::Write(line) => Step::Write(line),
            other => Step::Report(other),
        })
    }

    fn unsent(&mut self, command: CommandId, detail: &str) {
        Claude::unsent(self, command, detail)
    }

    fn exited(&mut self, now: Timestamp, exit: &Exit) {
        Claude::exited(self, now, exit.code, &exit.stderr_tail)
    }
}

/// How foreign input in a Claude session is reported: the conversation in error,
/// `foreign_turn`, with a detail naming it; the engine pauses the worker for a person to
/// look at the session (as the Codex task reports a foreign turn).
fn foreign_report(uuid: Option<&str>) -> Report {
    let what = match uuid {
        Some(uuid) => format!("input the orchestrator did not send (uuid {uuid})"),
        None => "a turn the orchestrator did not start".to_string(),
    };
    let detail = format!("{what} ran in this Claude session: check the session, then resume");
    Report { detail: Some(detail), ..Report::bare(ConversationState::Error(ErrorKind::ForeignTurn)) }
}

fn reconcile_ambiguous(detail: &str) -> OutcomeWire {
    OutcomeWire::Failed { code: AMBIGUOUS.to_string(), detail: detail.to_string() }
}

/// `claude:session/<session>`.
fn claude_url(session: &str) -> String {
    ExecutorKind::Claude.conversation_id(session).unwrap_or_else(|| session.to_string())
}

/// The engine's command for the core: a `claude:session/<id>` conversation becomes the
/// session id (any other form names no session here: the core answers it as closed).
fn to_engine(command: CommandWire) -> engine::ExecutorCommand {
    let mut command = command.into_engine(ExecutorId::new("cli"));
    if let Some(id) = session_of(&command.conversation) {
        command.conversation = Arc::from(id);
    }
    command
}
