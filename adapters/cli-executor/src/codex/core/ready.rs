//! Before a thread takes a prompt: the orchestrator's MCP server ready in it, and no goal
//! loop on it. Either one missing fails the prompt closed, before its line is written.
//!
//! A worker finishes only through the MCP server's `worker_complete`, so a thread that cannot
//! reach it would run turns that can never complete; and a Codex goal (`/goal`) starts turns
//! of its own whenever the thread goes idle. What codex-cli 0.169.0 does (recorded
//! 2026-12-02, `tests/fixtures/codex-0.169.0/`):
//! - with the server `required`, `thread/start` and `thread/resume` are refused while it is
//!   down (-32603 "... required MCP servers failed to initialize ..."; `mcp-down.jsonl`,
//!   `mcp-resume-down.jsonl`) and the child stays up;
//! - otherwise `mcpServer/startupStatus/updated{threadId, name, status}` says `starting`,
//!   then `ready` (or `failed`), before or after the `thread/start` answer (both orders
//!   were seen; `mcp-ready.jsonl` has it before) and before the `thread/resume` answer;
//! - `thread/goal/get` answers `{"goal": null}` (`goal-null-*.jsonl`), or -32600 "goals
//!   feature is disabled" when the session's config turns goals off, as the executor's does.
//!
//! So after a thread is started or resumed, its prompt waits until the server's status is
//! `ready` (within [`MCP_READY_WAIT_MS`]) and `thread/goal/get` shows no goal. A failed or
//! missing status fails it `HOST_UI_CHANGED` with a detail starting [`MCP_UNREACHABLE`]; a
//! goal, with one starting [`CODEX_GOAL`]. The worker pauses. A thread whose resume was
//! refused for want of the server is kept: the next prompt for it resumes it again.

use super::{Codex, Config, Purpose, Report};
use crate::Error;
use crate::base::limits::{MCP_READY_WAIT_MS, THREADS_MAX};
use crate::codex::jsonrpc::{INVALID_REQUEST, RpcError};
use engine::effect::{CommandKind, ExecutorCommand};
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use serde_json::{Value, json};

/// How a prompt's failure detail starts when the MCP server is not ready.
pub const MCP_UNREACHABLE: &str = "MCP_UNREACHABLE:";

/// How a prompt's failure detail starts when the thread has (or may have) a goal.
pub const CODEX_GOAL: &str = "CODEX_GOAL:";

/// What 0.169.0 says when a required MCP server fails its handshake (`thread/start`,
/// `thread/resume`).
const REQUIRED_MCP_FAILED: &str = "required MCP servers failed to initialize";

/// What 0.169.0 answers `thread/goal/get` when the session's config turns goals off.
const GOALS_DISABLED: &str = "goals feature is disabled";

/// The MCP server's startup in one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Startup {
    /// No status yet (or `starting`).
    Waiting,
    /// `ready`, or no server is required.
    Ready,
    /// `failed`, `cancelled`, no status in time, or the thread refused: the detail.
    Failed(String),
}

/// The goal check of one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Goal {
    /// `thread/goal/get` not sent yet.
    Unasked,
    /// Sent, not answered.
    Asked,
    /// No goal (or goals off), or no check configured.
    Clear,
    /// A goal, or an answer that cannot prove there is none: the detail.
    Present(String),
}

/// What a thread waits for before it takes a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Gate {
    startup: Startup,
    goal: Goal,
    /// When the wait for the server's status began (the thread's start or resume was
    /// answered); `None` before.
    since: Option<Timestamp>,
    /// The child does not host the thread (its resume was refused for want of the server):
    /// the next prompt resumes it again.
    unloaded: bool,
    /// The failure was reported as the conversation's state: once is enough.
    reported: bool,
}

/// Whether a thread takes a prompt now.
enum Verdict {
    Open,
    Wait,
    Closed(String),
}

impl Gate {
    /// A thread's gate under `config`: nothing to wait for unless a server is required or
    /// goals are checked.
    pub(super) fn new(config: &Config) -> Gate {
        Gate {
            startup: if config.mcp_server.is_some() { Startup::Waiting } else { Startup::Ready },
            goal: if config.goal_check { Goal::Unasked } else { Goal::Clear },
            since: None,
            unloaded: false,
            reported: false,
        }
    }

    fn verdict(&self) -> Verdict {
        match (&self.startup, &self.goal) {
            (Startup::Failed(detail), _) | (_, Goal::Present(detail)) => Verdict::Closed(detail.clone()),
            (Startup::Ready, Goal::Clear) => Verdict::Open,
            _ => Verdict::Wait,
        }
    }

    /// When a missing status counts as a failure.
    pub(super) fn deadline(&self) -> Option<Timestamp> {
        match self.startup {
            Startup::Waiting => self.since.map(|since| since.plus_ms(MCP_READY_WAIT_MS)),
            _ => None,
        }
    }
}

/// The detail of a `thread/start` or `thread/resume` refusal that is the required MCP
/// server failing, if it is.
pub(super) fn mcp_refusal(error: &RpcError) -> Option<String> {
    error.message.contains(REQUIRED_MCP_FAILED).then(|| format!("{MCP_UNREACHABLE} {}", error.message))
}

impl Codex {
    /// `thread` was started or resumed (answered at `now`): ask for its goal, take any
    /// status that came first, and let its held prompt go once nothing is missing.
    pub(super) fn opened(&mut self, now: Timestamp, thread: &str) -> Result<(), Error> {
        let early = self.startups.remove(thread);
        let Some(t) = self.threads.get_mut(thread) else { return Ok(()) };
        t.gate.since = Some(now);
        t.gate.unloaded = false;
        if let (Some(status), Startup::Waiting) = (early, &t.gate.startup) {
            t.gate.startup = status;
        }
        if t.gate.goal == Goal::Unasked {
            t.gate.goal = Goal::Asked;
            self.request(now, Purpose::Goal { thread: thread.to_string() }, json!({"threadId": thread}))?;
        }
        self.advance(now, thread)
    }

    /// `mcpServer/startupStatus/updated`: the configured server's status in a thread.
    pub(super) fn startup_status(&mut self, now: Timestamp, params: &Value) -> Result<(), Error> {
        let name = params.get("name").and_then(Value::as_str);
        if name.is_none() || name != self.config.mcp_server.as_deref() {
            return Ok(());
        }
        let Some(thread) = params.get("threadId").and_then(Value::as_str) else { return Ok(()) };
        let status = match params.get("status").and_then(Value::as_str) {
            Some("ready") => Startup::Ready,
            Some("starting") => Startup::Waiting,
            other => {
                let error = params.get("error").and_then(Value::as_str).unwrap_or("no detail");
                let status = other.unwrap_or("no status");
                Startup::Failed(format!(
                    "{MCP_UNREACHABLE} the MCP server `{}` is {status} in Codex: {error}",
                    name.unwrap_or_default()
                ))
            }
        };
        match self.threads.get_mut(thread) {
            Some(t) => {
                t.gate.startup = status;
                self.advance(now, thread)
            }
            None => {
                // Before the `thread/start` answer: kept for the thread it names (bounded).
                if self.startups.len() < THREADS_MAX || self.startups.contains_key(thread) {
                    self.startups.insert(thread.to_string(), status);
                }
                Ok(())
            }
        }
    }

    /// The answer to `thread/goal/get`.
    pub(super) fn goal_answer(
        &mut self,
        now: Timestamp,
        thread: &str,
        outcome: Result<Value, RpcError>,
    ) -> Result<(), Error> {
        let goal = match outcome {
            Ok(result) if result.get("goal").is_some_and(Value::is_null) => Goal::Clear,
            Ok(result) => Goal::Present(goal_detail(result.get("goal"))),
            Err(error) if error.code == INVALID_REQUEST && error.message.contains(GOALS_DISABLED) => Goal::Clear,
            Err(error) => Goal::Present(format!(
                "{CODEX_GOAL} thread/goal/get was refused ({}: {}), so a goal loop cannot be ruled out",
                error.code, error.message
            )),
        };
        if let Some(t) = self.threads.get_mut(thread) {
            t.gate.goal = goal;
        }
        self.advance(now, thread)
    }

    /// `thread/goal/updated`: a goal appeared on a thread after all (it would start turns of
    /// its own): the thread takes no prompt, and the worker pauses.
    pub(super) fn goal_updated(&mut self, now: Timestamp, thread: &str, params: &Value) -> Result<(), Error> {
        if !self.config.goal_check {
            return Ok(());
        }
        if let Some(t) = self.threads.get_mut(thread) {
            t.gate.goal = Goal::Present(goal_detail(params.get("goal")));
        }
        self.advance(now, thread)
    }

    /// A refused `thread/resume` for want of the server: the thread is kept, unloaded, and
    /// reported in error; the next prompt for it resumes it again.
    pub(super) fn resume_refused(&mut self, now: Timestamp, thread: &str, detail: String) -> Result<(), Error> {
        if let Some(t) = self.threads.get_mut(thread) {
            t.gate.startup = Startup::Failed(detail);
            t.gate.unloaded = true;
        }
        self.advance(now, thread)
    }

    /// A send for an idle thread: submitted now, held until the gate opens, resumed again
    /// first if its resume was refused, or failed closed.
    pub(super) fn send_when_open(
        &mut self,
        now: Timestamp,
        thread: &str,
        command: ExecutorCommand,
    ) -> Result<(), Error> {
        let fresh = Gate::new(&self.config);
        let Some(t) = self.threads.get_mut(thread) else { return Ok(()) };
        match t.gate.verdict() {
            Verdict::Open => self.start_turn(now, thread, &command),
            Verdict::Wait => {
                t.held = Some(command);
                Ok(())
            }
            Verdict::Closed(_) if t.gate.unloaded => {
                t.gate = Gate { unloaded: true, ..fresh };
                t.held = Some(command);
                self.request(now, Purpose::Resume { thread: thread.to_string() }, json!({"threadId": thread}))
            }
            Verdict::Closed(detail) => {
                self.fail(command.id, "HOST_UI_CHANGED", &detail);
                Ok(())
            }
        }
    }

    /// Time passed: a server that gave no status in time failed.
    pub(super) fn expire_gates(&mut self, now: Timestamp) {
        let late: Vec<String> = self
            .threads
            .iter()
            .filter(|(_, t)| t.gate.deadline().is_some_and(|at| now > at))
            .map(|(id, _)| id.clone())
            .collect();
        let name = self.config.mcp_server.clone().unwrap_or_default();
        for thread in late {
            let detail = format!(
                "{MCP_UNREACHABLE} the MCP server `{name}` reported no startup status within {MCP_READY_WAIT_MS} ms"
            );
            if let Some(t) = self.threads.get_mut(&thread) {
                t.gate.startup = Startup::Failed(detail.clone());
            }
            self.close(&thread, &detail);
        }
    }

    /// Lets the thread's held prompt go if its gate is open, or fails it if the gate is
    /// closed.
    fn advance(&mut self, now: Timestamp, thread: &str) -> Result<(), Error> {
        let Some(t) = self.threads.get_mut(thread) else { return Ok(()) };
        match t.gate.verdict() {
            Verdict::Wait => Ok(()),
            Verdict::Open => match t.held.take() {
                Some(command) if command.kind == CommandKind::Create => self.start_turn(now, thread, &command),
                Some(command) => self.command(now, command),
                None => Ok(()),
            },
            Verdict::Closed(detail) => {
                self.close(thread, &detail);
                Ok(())
            }
        }
    }

    /// A closed gate: the held prompt fails definitely (its line was never written), and
    /// the conversation is reported in error, once, so the worker pauses.
    fn close(&mut self, thread: &str, detail: &str) {
        let Some(t) = self.threads.get_mut(thread) else { return };
        let held = t.held.take();
        let worker = t.worker;
        let report = !std::mem::replace(&mut t.gate.reported, true);
        if let Some(command) = held {
            self.fail(command.id, "HOST_UI_CHANGED", detail);
        }
        if report {
            let state = ConversationState::Error(ErrorKind::HostUiChanged);
            let detail = Some(crate::base::report::cut_detail(detail));
            self.state(worker, thread, Report { detail, ..Report::bare(state) });
        }
    }
}

/// The failure detail of a goal `thread/goal/get` or `thread/goal/updated` showed.
fn goal_detail(goal: Option<&Value>) -> String {
    let status = goal.and_then(|g| g.get("status")).and_then(Value::as_str).unwrap_or("unknown");
    format!(
        "{CODEX_GOAL} the thread has a Codex goal (status {status}), whose loop would start turns of its own: clear it, then resume"
    )
}
