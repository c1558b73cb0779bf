//! The Claude core's side of its children: a session outlives them. A session found after
//! an executor restart is adopted; a new child is asked for (`--resume`) and the lines it
//! never acknowledged are written again; a child the shell refused to start takes the lines
//! meant for it with it; a child's exit is read (a crash, a close, the refusals of a
//! session id in use or of a session with no transcript); and the lines a crashed child
//! never acknowledged are settled from the session's transcript, as the shell read it.

use super::transcript::Found;
use super::{Claude, Effect, Launch, Process, Report, session_of};
use crate::Error;
use crate::base::report::{ABSENT, AMBIGUOUS};
use engine::effect::CommandKind;
use engine::ids::CommandId;
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
        self.effects.retain(|e| !matches!(e, Effect::Prompt { .. } | Effect::CloseStdin | Effect::Stop));
        let closing = matches!(self.process, Process::Running { closing: true });
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
        } else if closing {
            // Closed while its child was being started: it stays closed, never resumed.
            self.process = Process::Closed;
            self.state(Report::bare(ConversationState::Closed));
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
        self.approvals_gone();
        self.process = if closing { Process::Closed } else { Process::Exited };
        match &refusal {
            None => {
                // A crash: the lines it never acknowledged wait for the shell to read the
                // transcript ([`Claude::unacknowledged`], [`Claude::settle`]); after a
                // close nothing will read them again.
                if closing {
                    for unacked in std::mem::take(&mut self.unacked) {
                        self.fail(unacked.command, AMBIGUOUS, "the CLI exited before acknowledging the prompt");
                    }
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
        if closing {
            // Stopped mid-turn by a close, or ended after one: closed, not an error (said
            // once: a session not found was reported closed above).
            self.turn = None;
            if !matches!(refusal, Some(Error::SessionNotFound { .. })) {
                self.state(Report::bare(ConversationState::Closed));
            }
        } else if self.turn.take().is_some() {
            let detail = format!("the CLI exited mid-turn (exit {code:?})");
            let report = Report { detail: Some(detail), ..Report::bare(ConversationState::Error(ErrorKind::Generic)) };
            self.state(report);
        }
        // Queued lines were reported submitted; their fate is in the transcript.
        self.queued.clear();
        let worker = self.worker;
        self.effects.push_back(Effect::Exited { worker, session, code, refusal });
    }

    /// The lines a crashed child never acknowledged: `(command, nonce, prompt)`, for the
    /// shell to look up in the session's transcript (the child is gone: nothing more lands).
    pub fn unacknowledged(&self) -> Vec<(CommandId, String, String)> {
        self.unacked.iter().map(|u| (u.command, u.uuid.clone(), u.prompt.clone())).collect()
    }

    /// Settles a line a crashed child never acknowledged by what the transcript says: found
    /// is `submitted`; a send proven absent is written again by the next child, once (absent
    /// again after its resend, it fails `DEADLINE_EXCEEDED`: definitely not submitted); a
    /// steer or a create proven absent fails so at once (the turn a steer was for ended
    /// with the crash, and a create's session never started: the daemon decides what
    /// follows); anything else is `AMBIGUOUS_SUBMISSION`, as no proof either way.
    pub fn settle(&mut self, command: CommandId, found: &Found) {
        let Some(at) = self.unacked.iter().position(|u| u.command == command) else { return };
        let resend =
            matches!(found, Found::Absent) && !self.unacked[at].resent && self.unacked[at].kind == CommandKind::Send;
        if resend {
            self.unacked[at].resent = true;
            return;
        }
        let Some(unacked) = self.unacked.remove(at) else { return };
        match found {
            Found::Sent { .. } => self.submitted(unacked.command, &unacked.uuid, false),
            Found::Absent => {
                let detail = "the CLI exited before taking the prompt in (the session's transcript holds no message with its nonce): not submitted";
                self.fail(unacked.command, ABSENT, detail);
                if unacked.kind == CommandKind::Create && self.launch == Some(Launch::New) {
                    // The session never started: a later create mints its own.
                    self.session = None;
                    self.process = Process::None;
                }
            }
            Found::CannotTell { why } => {
                let detail = format!("the CLI exited before acknowledging the prompt and {why}");
                self.fail(unacked.command, AMBIGUOUS, &detail);
            }
        }
    }

    /// No next child (the shell gave up after repeated exits): the lines kept for it fail
    /// with `code` (they were proven absent: never written into a child that took them).
    pub fn abandon(&mut self, code: &'static str, detail: &str) {
        for unacked in std::mem::take(&mut self.unacked) {
            self.fail(unacked.command, code, detail);
        }
    }
}
