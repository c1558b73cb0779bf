//! One Claude Code worker's side of the executor, as a task: its session (the
//! [`crate::claude::Claude`] core and, one at a time, its `claude -p` stream-json child, leased as
//! `wrk-N`, with the session's own `CLAUDE_CONFIG_DIR` and `TMPDIR`), the commands it serves
//! through the journal, a new child (`--resume`) when one exits (bounded, with backoff),
//! and reconciliation from the session's transcript of prompts an executor crash left
//! `submission-started` and of the lines a crashed child never acknowledged.
//!
//! A child is started only when the core asks ([`Event::Spawn`]: a create, or a respawn
//! for a command, a restart or a recovery), and only after the orchestrator's MCP server
//! answered the handshake the child will make ([`mcp::probe`]): otherwise the commands
//! meant for that child fail definitely before anything is written (`HOST_UI_CHANGED`,
//! detail `MCP_UNREACHABLE: ...`), and the worker pauses. Durability is the Codex task's
//! ([`Ledger`], [`gate`]): `received`, then `submission-started` (a create's binding with
//! it) before the line is written, `completed` before the result is sent.

use crate::Error;
use crate::child::Spawn;
use crate::claude::transcript::{self, Found};
use crate::claude::tz::TzDir;
use crate::claude::{Claude, Effect, Landed, Outcome, Report, nonce};
use crate::claude_cli;
use crate::journal::Entry;
use crate::ledger::{Ledger, gate, session_of};
use crate::limits::TRANSCRIPT_BYTES_MAX;
use crate::mcp;
use crate::pump::{Event, Session};
use crate::reconcile::{ABSENT, AMBIGUOUS};
use crate::worker::{In, Out, Restarts, Shared, Shell, receive};
use engine::ExecutorKind;
use engine::ids::{CommandId, ExecutorId, WorkerId};
use engine::model::{ConversationState, ErrorKind};
use executor_protocol::{CommandWire, ExecutorKindWire, KindWire, LandedWire, OutcomeWire, PhaseWire, ResultWire};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One Claude worker's task.
pub struct ClaudeTask {
    worker: WorkerId,
    shared: Shared,
    /// Its reports, journaled first.
    ledger: Ledger,
    /// The session: its core lives across children (the lines not yet acknowledged, the
    /// nonces); `None` before the first command or recovery.
    session: Option<Session<Claude>>,
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
            ledger: Ledger::new(worker, shared.clone()),
            shared,
            session: None,
            cwd: None,
            restarts: Restarts::default(),
            deferred: Vec::new(),
            last_exit: String::new(),
        }
    }

    async fn command(&mut self, command: CommandWire, cwd: Option<String>) {
        let submits = receive(&command, &mut self.restarts, &self.ledger);
        if command.kind == KindWire::ApprovalAnswer && !self.session.as_ref().is_some_and(|s| s.core().has_child()) {
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
        if command.kind == KindWire::Create || self.session.is_none() {
            let bound = self.ledger.bound().map(|b| b.cwd);
            let dir = cwd
                .or_else(|| if command.kind == KindWire::Create { None } else { bound })
                .or_else(|| self.cwd.clone())
                .or_else(|| self.shared.settings.workspace.clone());
            let Some(dir) = dir else {
                let detail = "no working directory: the command names no workspace.directory and the executor has no --workspace";
                if submits {
                    self.ledger.fail(command.command_id, "HOST_UI_CHANGED", detail).await;
                }
                return;
            };
            if command.kind == KindWire::Create {
                // A new conversation is a new session: the old child (if any) ends.
                self.stop_child().await;
                self.session = None;
            }
            if self.session.is_none() && !self.open(&dir, command.kind != KindWire::Create) {
                return self
                    .ledger
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
        let Some(session) = self.session.as_mut() else { return };
        let core = session.core();
        if needs_child
            && !core.has_child()
            && !core.is_closed()
            && core.session().is_some()
            && let Err(e) = session.drive(|core, now| core.respawn(now)).await
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "respawn: {e}");
        }
        let result = match self.session.as_mut() {
            Some(session) => session.command(to_engine(command)).await,
            None => Ok(()),
        };
        if let Err(e) = result
            && e != Error::ChildGone
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "command {id}: {e}");
            self.ledger.fail(id, "HOST_UI_CHANGED", &format!("the Claude core refused the command: {e}")).await;
        }
    }

    /// Opens the worker's session in `dir`: a fresh core, or (`adopt`) the bound session's,
    /// to resume. `false` when this executor has no Claude settings.
    fn open(&mut self, dir: &str, adopt: bool) -> bool {
        let settings = &self.shared.settings;
        let Some(claude) = &settings.claude else { return false };
        let mut core = Claude::new(
            claude_cli::config(claude, settings.mcp.as_ref(), settings.approvals),
            Box::new(TzDir::default()),
        );
        if adopt && let Some(bound) = self.ledger.bound().filter(|b| b.kind == ExecutorKindWire::Claude) {
            let nonces: Vec<String> =
                self.ledger.journal().nonces(&bound.thread).iter().map(|key| nonce::nonce_uuid(key)).collect();
            core.adopt(self.worker, &bound.thread, &nonces);
        }
        let mut spec = Spawn::claude(&self.worker.to_string(), Path::new(dir), &settings.state_dir);
        spec.program.clone_from(&claude.program);
        spec.env_set.extend(claude.env_set.iter().cloned());
        spec.env_set.extend(settings.mcp.iter().flat_map(mcp::McpServer::env));
        let gate = gate(Arc::clone(&self.shared.journal), dir.to_string(), ExecutorKindWire::Claude);
        self.session = Some(Session::new(&spec, &self.shared.leases, core, gate));
        self.cwd = Some(dir.to_string());
        true
    }

    /// The executor (re)started: settle what the journal left `submission-started` from
    /// the bound session's transcript (the old child is gone, reaped at start), resume the
    /// session in a new child, and serve the commands the journal still holds `received`.
    async fn recover(&mut self) {
        if self.session.is_some() {
            return;
        }
        let bound = self.ledger.bound().filter(|b| b.kind == ExecutorKindWire::Claude);
        let started = self.ledger.entries(PhaseWire::SubmissionStarted);
        let received = self.ledger.entries(PhaseWire::Received);
        if let Some(bound) = &bound {
            let text = read_transcript(&self.config_home(), &bound.thread);
            for entry in started {
                self.settle(&entry, &bound.thread, &text).await;
            }
        } else {
            for entry in started {
                let detail = "the executor restarted mid-submission and the worker has no Claude session to read";
                self.ledger.result(entry.command.command_id, reconcile_ambiguous(detail)).await;
            }
        }
        if let Some(bound) = self.ledger.bound().filter(|b| b.kind == ExecutorKindWire::Claude)
            && self.open(&bound.cwd, true)
            && let Some(session) = self.session.as_mut()
            && let Err(e) = session.drive(|core, now| core.respawn(now)).await
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
                if create && let Err(e) = self.ledger.journal().unbind(self.worker) {
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
        self.ledger.result(entry.command.command_id, outcome).await;
    }

    /// The core asks for a child: only once the MCP server answers, under the lease.
    async fn spawn(&mut self, args: Vec<String>) {
        let refusal = match &self.shared.settings.mcp {
            Some(server) => mcp::probe(server).await.err().map(|e| format!("{}: {e}", mcp::UNREACHABLE)),
            None => None,
        };
        let Some(session) = self.session.as_mut() else { return };
        let refusal = match refusal {
            Some(refusal) => Some(refusal),
            None => session.spawn(Some(args)).err().map(|e| format!("cannot start claude: {e}")),
        };
        match refusal {
            Some(detail) => {
                tracing::warn!(worker = %self.worker, "no child: {detail}");
                let refused = session.refuse_spawn(|core| core.not_started("HOST_UI_CHANGED", &detail)).await;
                if let Err(e) = refused {
                    tracing::warn!(worker = %self.worker, code = e.code(), "after a refused start: {e}");
                }
            }
            None => {
                tracing::info!(worker = %self.worker, cwd = self.cwd.as_deref().unwrap_or_default(), "child started");
                if session.core().is_quiet()
                    && let Some(id) = session.core().session().map(str::to_string)
                {
                    // The session takes input again, and no turn of ours runs in it.
                    self.ledger.publish(&id, Report::bare(ConversationState::Idle)).await;
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
                self.ledger.publish(&session, report).await;
            }
            Effect::Foreign { session, uuid, .. } => {
                self.ledger.publish(&session, foreign_report(uuid.as_deref())).await
            }
            Effect::Steered { command, landed } => self.steer_landed(command, landed).await,
            Effect::Approval { session, report, approval, .. } => {
                self.ledger.publish_asking(&session, report, Some(approval)).await;
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
                let entry = self.ledger.journal().entry(command).cloned();
                let create = entry.as_ref().is_some_and(|e| e.command.kind == KindWire::Create);
                let state_seq = entry.map_or(0, |e| e.state_seq);
                OutcomeWire::Submitted { state_seq, conversation_url: create.then(|| claude_url(&session)) }
            }
            Outcome::Failed { code, detail } => OutcomeWire::Failed { code: code.to_string(), detail },
        };
        self.ledger.result(command, wire).await;
    }

    /// An `approval.answer`'s outcome, straight to the daemon: the command is not
    /// journaled (its id is its turn's, whose result the journal keeps).
    async fn answered(&mut self, command: CommandId, outcome: Outcome) {
        let outcome = match outcome {
            Outcome::Submitted { .. } => {
                let state_seq = self.ledger.journal().entry(command).map_or(0, |e| e.state_seq);
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
        self.ledger.landed(command, wire).await;
    }

    /// The child exited (its effects came first): start the next one, or not.
    async fn child_exited(&mut self, session: &str, refusal: Option<Error>, code: Option<i32>) {
        match refusal {
            Some(Error::SessionInUse { .. }) => {
                // The new child read nothing: resume the session and write the lines again.
                if let Some(s) = self.session.as_mut()
                    && let Err(e) = s.drive(|core, now| core.respawn(now)).await
                {
                    tracing::warn!(worker = %self.worker, code = e.code(), "respawn: {e}");
                }
            }
            Some(Error::SessionNotFound { .. }) => {
                if self.ledger.bound().is_some_and(|b| b.thread == session)
                    && let Err(e) = self.ledger.journal().unbind(self.worker)
                {
                    tracing::warn!(worker = %self.worker, code = e.code(), "unbinding a lost session: {e}");
                }
            }
            _ if self.session.as_ref().is_some_and(|s| s.core().is_closed()) => {}
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
        let lines = self.session.as_ref().map(|s| s.core().unacknowledged()).unwrap_or_default();
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
        if let Some(s) = self.session.as_mut() {
            let settled = s.drive(|core, _| {
                verdicts.iter().for_each(|(command, found)| core.settle(*command, found));
                Ok(())
            });
            if let Err(e) = settled.await {
                tracing::warn!(worker = %self.worker, code = e.code(), "settling after a crash: {e}");
            }
        }
        let forgotten = self.session.as_ref().is_some_and(|s| s.core().session().is_none());
        if forgotten
            && self.ledger.bound().is_some_and(|b| b.thread == session)
            && let Err(e) = self.ledger.journal().unbind(self.worker)
        {
            tracing::warn!(worker = %self.worker, code = e.code(), "unbinding a session never started: {e}");
        }
    }

    /// A child ended on its own: restart after a backoff, or give up.
    async fn crashed(&mut self, session: &str, why: &str) {
        let gave_up = self.restarts.exited();
        tracing::warn!(worker = %self.worker, exits = self.restarts.exits, "{why}");
        if gave_up {
            if let Some(s) = self.session.as_mut() {
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
            self.ledger.publish(session, report).await;
        }
    }

    /// Stops the running child, if any (the session is replaced).
    async fn stop_child(&mut self) {
        if let Some(session) = self.session.take()
            && session.child().is_some()
            && let Err(e) = session.stop().await
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

    fn session(&mut self) -> &mut Option<Session<Claude>> {
        &mut self.session
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
        let resumable = self.session.as_ref().is_some_and(|s| {
            let core = s.core();
            !core.has_child() && !core.is_closed() && core.session().is_some()
        });
        if resumable && let Some(session) = self.session.as_mut() {
            if let Err(e) = session.drive(|core, now| core.respawn(now)).await {
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

/// The session's transcript, `<home>/projects/<encoded cwd>/<session>.jsonl` (found by
/// its name under `projects/`, so the CLI's encoding of the directory need not be
/// guessed). A config home with no such file holds no line of the session: the empty
/// text. A missing home, an unreadable or oversized file: an error (nothing can be told).
pub fn read_transcript(home: &Path, session: &str) -> Result<String, String> {
    if !home.is_dir() {
        return Err(format!("no config home {}", home.display()));
    }
    let projects = home.join("projects");
    let dirs = match std::fs::read_dir(&projects) {
        Ok(dirs) => dirs,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(format!("{}: {e}", projects.display())),
    };
    let name = format!("{session}.jsonl");
    let found = dirs.filter_map(Result::ok).map(|d| d.path().join(&name)).find(|p| p.is_file());
    let Some(path) = found else { return Ok(String::new()) };
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(TRANSCRIPT_BYTES_MAX + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > TRANSCRIPT_BYTES_MAX {
        return Err(format!("{} is over {TRANSCRIPT_BYTES_MAX} bytes", path.display()));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_is_found_by_its_session_under_any_project_and_its_absence_is_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("claude-config");
        assert!(read_transcript(&home, "s-1").is_err(), "no config home: nothing can be told");
        std::fs::create_dir_all(&home).expect("home");
        assert_eq!(read_transcript(&home, "s-1"), Ok(String::new()), "no session ran here yet");
        let project = home.join("projects").join("-work-app");
        std::fs::create_dir_all(&project).expect("project");
        std::fs::write(project.join("s-2.jsonl"), "other\n").expect("another session");
        assert_eq!(read_transcript(&home, "s-1"), Ok(String::new()));
        std::fs::write(project.join("s-1.jsonl"), "{\"type\":\"user\"}\n").expect("the session");
        assert_eq!(read_transcript(&home, "s-1"), Ok("{\"type\":\"user\"}\n".to_string()));
    }
}
