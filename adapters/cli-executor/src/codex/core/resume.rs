//! A core for a new child of a session whose child exited: the threads the earlier child
//! hosted are registered with their nonces ([`Codex::adopt`]) and `thread/resume`d once
//! the new child is initialized; commands wait until every resume is answered. Also the
//! way back for a prompt the shell could not journal ([`Codex::unsent`]).

use super::{Codex, Config, Purpose, Report};
use crate::Error;
use crate::codex::jsonrpc::RpcError;
use engine::effect::ExecutorCommand;
use engine::ids::{CommandId, WorkerId};
use engine::model::ConversationState;
use engine::time::Timestamp;
use serde_json::{Value, json};

/// A thread to resume in a new child: its worker, its id and the nonces sent on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// Whose conversation it is.
    pub worker: WorkerId,
    /// The thread id.
    pub thread: String,
    /// The idempotency keys sent on it, oldest first (to tell our turns from foreign ones).
    pub nonces: Vec<String>,
    /// The reset of the usage or rate limit its conversation was last reported under (the
    /// journaled `untilMs`): the rate-limit notification that named it is gone with the
    /// old child, so a `thread/read` showing that limit keeps this reset, and the thread is
    /// reported `idle` at it.
    pub limit_until: Option<Timestamp>,
}

impl Codex {
    /// A core for a new child that resumes `threads` after `initialize`.
    pub fn resuming(config: Config, threads: &[Resume]) -> Result<Codex, Error> {
        let mut core = Codex::new(config);
        for resume in threads {
            core.adopt(resume.worker, &resume.thread, &resume.nonces)?;
            if let Some(t) = core.threads.get_mut(&resume.thread) {
                t.limit_until = resume.limit_until;
            }
            core.resuming.insert(resume.thread.clone());
        }
        Ok(core)
    }

    /// The prompt line of `command` was not written (the shell could not journal it):
    /// the request is forgotten and the command fails as definitely not submitted.
    pub fn unsent(&mut self, command: CommandId, detail: &str) {
        let removed = self.pending.remove_where(|purpose| match purpose {
            Purpose::TurnStart { command: c, .. } | Purpose::Steer { command: c, .. } => *c == command,
            _ => false,
        });
        if let Some(Purpose::TurnStart { thread, .. }) = removed
            && let Some(t) = self.threads.get_mut(&thread)
        {
            t.starting = false;
        }
        self.fail(command, "HOST_UI_CHANGED", detail);
    }

    /// `initialize` was answered: resume the earlier child's threads, or open for commands.
    pub(super) fn after_initialize(&mut self, now: Timestamp) -> Result<(), Error> {
        if self.resuming.is_empty() {
            return self.open(now);
        }
        let threads: Vec<String> = self.resuming.iter().cloned().collect();
        for thread in threads {
            self.request(now, Purpose::Resume { thread: thread.clone() }, json!({"threadId": thread}))?;
        }
        Ok(())
    }

    /// A `thread/resume` was answered: the thread waits for its MCP server and goal check
    /// ([`super::ready`]). A refusal for want of the required MCP server keeps the thread
    /// (reported in error, resumed again by its next prompt); any other refusal loses it:
    /// its conversation is reported `closed` (the engine then recovers the worker
    /// explicitly).
    pub(super) fn resumed(
        &mut self,
        now: Timestamp,
        thread: String,
        outcome: Result<Value, RpcError>,
    ) -> Result<(), Error> {
        self.resuming.remove(&thread);
        match outcome.as_ref().map_err(super::ready::mcp_refusal) {
            Ok(_) => self.opened(now, &thread)?,
            Err(Some(detail)) => self.resume_refused(now, &thread, detail)?,
            Err(None) => {
                if let Some(t) = self.threads.remove(&thread) {
                    if let Some(held) = t.held {
                        self.fail(held.id, "CONVERSATION_CLOSED", "the thread could not be resumed");
                    }
                    self.state(t.worker, &thread, Report::bare(ConversationState::Closed));
                }
            }
        }
        if self.resuming.is_empty() { self.open(now) } else { Ok(()) }
    }

    fn open(&mut self, now: Timestamp) -> Result<(), Error> {
        self.ready = true;
        let early: Vec<ExecutorCommand> = self.early.drain(..).collect();
        early.into_iter().try_for_each(|command| self.command(now, command))
    }
}
