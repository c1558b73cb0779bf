//! The Claude core's side of its children: a session outlives them. A session found after
//! an executor restart is adopted; a new child is asked for (`--resume`) and the lines it
//! never acknowledged are written again; a child the shell refused to start takes the lines
//! meant for it with it; and a child's exit is read (a crash, a close, the refusals of a
//! session id in use or of a session with no transcript).

use super::{Claude, Effect, Launch, Process, Report, session_of};
use crate::Error;
use engine::ids::WorkerId;
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;

impl Claude {
    /// Registers a session found after an executor restart (worker and nonces from the
    /// journal); [`Claude::respawn`] then resumes it.
    pub fn adopt(&mut self, worker: WorkerId, session: &str, nonces: &[String]) {
        self.worker = worker;
        self.session = Some(session.to_string());
        self.process = Process::Exited;
        nonces.iter().for_each(|n| self.remember(n));
    }

    /// A new child for the session (`--resume`), after [`Effect::Exited`] or
    /// [`Claude::adopt`]: the lines never acknowledged are written again (a line the
    /// session already holds is not run twice: the CLI deduplicates by uuid).
    pub fn respawn(&mut self, now: Timestamp) -> Result<(), Error> {
        let session = self.session.clone().ok_or(Error::ChildGone)?;
        if matches!(self.process, Process::Running { .. }) {
            return Ok(());
        }
        let args = self.config.args(&session, Launch::Resume);
        self.launch = Some(Launch::Resume);
        self.effects.push_back(Effect::Spawn { session, launch: Launch::Resume, args });
        self.process = Process::Running { closing: false };
        let worker = self.worker;
        for unacked in self.unacked.iter_mut() {
            unacked.written = now;
            let (command, line) = (unacked.command, unacked.line.clone());
            let session = session_of(&self.session);
            self.effects.push_back(Effect::Prompt { command, worker, session, line });
        }
        Ok(())
    }

    /// The child the last [`Effect::Spawn`] asked for was not started (the shell refused
    /// it before it ran: the MCP server did not answer, the binary could not start): the
    /// lines queued for it were never written, so each command fails definitely with
    /// `code`, and the next child is a [`Claude::respawn`].
    pub fn not_started(&mut self, code: &'static str, detail: &str) {
        self.effects.retain(|e| !matches!(e, Effect::Prompt { .. } | Effect::CloseStdin));
        for unacked in std::mem::take(&mut self.unacked) {
            self.fail(unacked.command, code, detail);
        }
        if let Some(held) = self.held.take() {
            self.fail(held.id, code, detail);
        }
        if self.launch == Some(Launch::New) {
            // The session was never started: a later create mints its own.
            self.session = None;
            self.process = Process::None;
        } else if self.session.is_some() {
            self.process = Process::Exited;
        }
    }

    /// A child runs (or was asked for and not refused yet).
    pub fn has_child(&self) -> bool {
        matches!(self.process, Process::Running { .. })
    }

    /// The session was closed (`conversation.close`, then the child's exit).
    pub fn is_closed(&self) -> bool {
        self.process == Process::Closed
    }

    /// The child exited with `code` (`None`: a signal), its stderr tail in hand.
    pub fn exited(&mut self, _now: Timestamp, code: Option<i32>, stderr: &str) {
        let session = self.session.clone().unwrap_or_default();
        let refusal = if stderr.contains("is already in use") && stderr.contains("Session ID") {
            Some(Error::SessionInUse { session: session.clone() })
        } else if stderr.contains("No conversation found with session ID") {
            Some(Error::SessionNotFound { session: session.clone() })
        } else {
            None
        };
        let closing = matches!(self.process, Process::Running { closing: true });
        self.process = if closing { Process::Closed } else { Process::Exited };
        match &refusal {
            None => {
                for unacked in std::mem::take(&mut self.unacked) {
                    self.fail(
                        unacked.command,
                        "AMBIGUOUS_SUBMISSION",
                        "the CLI exited before acknowledging the prompt",
                    );
                }
                if let Some(held) = self.held.take() {
                    self.fail(held.id, "CONVERSATION_CLOSED", "the CLI exited");
                }
            }
            Some(Error::SessionNotFound { .. }) => {
                // Nothing was read, and there is no session to write into: closed for good.
                let detail = "the CLI has no such session to resume (No conversation found)";
                for unacked in std::mem::take(&mut self.unacked) {
                    self.fail(unacked.command, "CONVERSATION_CLOSED", detail);
                }
                if let Some(held) = self.held.take() {
                    self.fail(held.id, "CONVERSATION_CLOSED", detail);
                }
                self.process = Process::Closed;
                self.state(Report { detail: Some(detail.to_string()), ..Report::bare(ConversationState::Closed) });
            }
            // "Already in use": nothing was read; `respawn` resumes and writes the lines again.
            Some(_) => {}
        }
        if self.turn.take().is_some() {
            let detail = format!("the CLI exited mid-turn (exit {code:?})");
            let report = Report { detail: Some(detail), ..Report::bare(ConversationState::Error(ErrorKind::Generic)) };
            self.state(report);
        } else if closing {
            self.state(Report::bare(ConversationState::Closed));
        }
        // Queued lines were reported submitted; their fate is in the transcript.
        self.queued.clear();
        let worker = self.worker;
        self.effects.push_back(Effect::Exited { worker, session, code, refusal });
    }
}
