//! The Claude Code core: executor commands in, stream-json lines and observations out, for
//! one `claude -p --input-format stream-json --output-format stream-json` process per
//! session (the real 2.1.332 recorded in `tests/fixtures/claude-2.1.332/`).
//!
//! [`Claude`] is sans IO, shaped as the Codex core (`codex::Codex`): [`Claude::command`],
//! [`Claude::line`], [`Claude::exited`] and [`Claude::tick`] take `now` and queue
//! [`Effect`]s, which [`Claude::poll_effect`] drains in order; [`Claude::next_deadline`]
//! says when to tick. The shell spawns the child on [`Effect::Spawn`] (or calls
//! [`Claude::not_started`]), writes each [`Effect::Prompt`] to its stdin once journaled (or
//! calls [`Claude::unsent`]), feeds each stdout line to `line`, and the exit (code and
//! stderr) to `exited`. The session outlives its children: after an exit,
//! [`Claude::respawn`] resumes it in a new child.
//!
//! | command | stream-json |
//! |---|---|
//! | `conversation.create` | [`Effect::Spawn`] with `--session-id` minted from the key, then the prompt's user line |
//! | `conversation.send` | a user line (held while a turn runs or a prompt waits: idle delivery) |
//! | `conversation.steer` | a user line while our turn runs; [`Effect::Steered`] says where it landed |
//! | `conversation.inspect` | the last `result` and the process state (no IO) |
//! | `conversation.close` | [`Effect::CloseStdin`]; with a turn running or a line in flight, [`Effect::Stop`] too; between children, closed at once |
//! | `command.cancel` | withdraws a held send |
//!
//! What the real CLI does (recorded, and the basis of each rule here):
//! - Every user line carries `uuid` = [`nonce::nonce_uuid`] of the command's idempotency
//!   key. `command_lifecycle` lines name it: `queued` at once (the CLI took the line: the
//!   command is **submitted**), `started` when it runs, `completed` or `cancelled` (an API
//!   error). The `--replay-user-messages` echo comes later, when the turn's answer starts
//!   or the line is absorbed, so it is not the acknowledgment. Nothing, not even
//!   `system/init`, is written before the first user line; `init` repeats at every turn.
//! - A turn is `started` .. `result`: `generating`, then `idle` on `is_error:false` (an
//!   observation, never a completion) or `error` on `is_error:true` ([`limit`]).
//! - A line written mid-turn is `queued` at once; it is absorbed into the running turn
//!   when a tool call ends first (`started` before the `result`, which lists both uuids in
//!   `user_message_uuids`: [`Landed::Merged`]), and otherwise runs as the next turn after
//!   the `result` ([`Landed::NextTurn`], `result_index` 1). `queued_turn_count` stayed 0 in
//!   both, so it is not read.
//! - A uuid the session already holds is echoed without a `timestamp` and not run, in the
//!   same process and after `--resume`: a resend is answered [`Outcome::Submitted`] with
//!   `duplicate`.
//! - A second `--session-id` with a used id exits 1 at once with "Error: Session ID <id>
//!   is already in use." on stderr, even after the first process exited: a definite
//!   [`Error::SessionInUse`]; the lines sent were never read, and [`Claude::respawn`]
//!   resumes the session (`--resume`) and writes them again.
//!
//! A `started` or `result` for a uuid we did not send, or a turn starting with no line of
//! ours queued (a Stop hook, a scheduled wake-up), is [`Effect::Foreign`]. With
//! [`Config::required_mcp`], a `system/init` that does not list that server as `connected`
//! reports the session `error`/`host_ui_changed` with a detail starting `MCP_UNREACHABLE:`.

mod approval;
mod children;
mod config;
mod effect;
pub mod limit;
pub mod nonce;
mod stream;
pub mod transcript;
pub mod tz;

pub use approval::{DECLINED, decision_line};
pub use config::{Config, FLAGS, flags_of};
pub use effect::{Effect, Landed, Launch, Outcome, Report};

use crate::Error;
use crate::base::limits::{
    BLOCK_CHARS_MAX, CLAUDE_ACK_TIMEOUT_MS, CLAUDE_LINES_IN_FLIGHT_MAX, LINE_BYTES_MAX, NONCES_PER_THREAD_MAX,
};
use crate::base::report::cut_detail;
use engine::effect::{CommandKind, ExecutorCommand};
use engine::ids::{CommandId, WorkerId};
use engine::model::{CliRetry, ConversationState, ErrorKind};
use engine::time::Timestamp;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use tz::Zones;

/// A user line written and not yet acknowledged.
#[derive(Debug, Clone)]
struct Unacked {
    command: CommandId,
    kind: CommandKind,
    uuid: String,
    line: String,
    /// The prompt's text, to look it up in the transcript after a crash.
    prompt: String,
    written: Timestamp,
    /// Written again after a crash whose transcript proved it absent (never twice).
    resent: bool,
}

/// A line the CLI queued that has not started.
#[derive(Debug, Clone)]
struct Queued {
    command: CommandId,
    kind: CommandKind,
    uuid: String,
}

/// The running turn.
#[derive(Debug, Clone)]
struct Turn {
    /// Started by a line of ours.
    ours: bool,
    /// Flagged foreign already.
    flagged: bool,
}

/// The process as the core knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Process {
    /// No child yet (before a create, or an adopted session).
    None,
    /// A child runs; `closing` once stdin was closed.
    Running { closing: bool },
    /// The child exited on its own (or never started): the session lives on, and
    /// [`Claude::respawn`] resumes it.
    Exited,
    /// The child exited after `conversation.close`: the conversation is closed.
    Closed,
}

/// The Claude Code core. One per session (one child at a time).
#[derive(Debug)]
pub struct Claude {
    config: Config,
    zones: Box<dyn Zones + Send>,
    worker: WorkerId,
    session: Option<String>,
    process: Process,
    unacked: VecDeque<Unacked>,
    queued: VecDeque<Queued>,
    turn: Option<Turn>,
    held: Option<ExecutorCommand>,
    nonces: VecDeque<String>,
    /// Foreign uuids already reported (bounded), so each is reported once.
    strangers: VecDeque<String>,
    last: Option<Report>,
    assistant_error: Option<String>,
    /// The running turn's last `system/api_retry` said the CLI retries its API call:
    /// reported with the turn's `generating` until the turn moves again.
    retrying: bool,
    rate_limit: Option<Value>,
    /// How the last child was asked for: a new session that never started is forgotten.
    launch: Option<Launch>,
    /// Tool permission requests waiting for a person (`--approvals ask`), by handle
    /// (`apr-N`), at most [`crate::base::limits::APPROVALS_MAX`] ([`approval`]).
    approvals: BTreeMap<String, approval::Asked>,
    /// The last handle's number: handles are never reused in a core.
    approval_seq: u64,
    effects: VecDeque<Effect>,
}

impl Claude {
    /// A core with no session yet; `zones` resolves the zone of a limit notice.
    pub fn new(config: Config, zones: Box<dyn Zones + Send>) -> Claude {
        Claude {
            config,
            zones,
            worker: WorkerId(0),
            session: None,
            process: Process::None,
            unacked: VecDeque::new(),
            queued: VecDeque::new(),
            turn: None,
            held: None,
            nonces: VecDeque::new(),
            strangers: VecDeque::new(),
            last: None,
            assistant_error: None,
            retrying: false,
            rate_limit: None,
            launch: None,
            approvals: BTreeMap::new(),
            approval_seq: 0,
            effects: VecDeque::new(),
        }
    }

    /// The next effect, in order.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// When to call [`Claude::tick`]: the next acknowledgment timeout or held deadline.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        let acks = self.unacked.iter().map(|u| u.written.plus_ms(CLAUDE_ACK_TIMEOUT_MS));
        acks.chain(self.held.iter().map(|c| c.deadline.plus_ms(1))).min()
    }

    /// The session, once minted or adopted.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// A prompt's line was not written: the shell could not journal it. The command fails
    /// definitely (`HOST_UI_CHANGED`: the worker pauses), nothing was sent.
    pub fn unsent(&mut self, command: CommandId, detail: &str) {
        if let Some(at) = self.unacked.iter().position(|u| u.command == command) {
            self.unacked.remove(at);
        }
        self.fail(command, "HOST_UI_CHANGED", detail);
    }

    /// Nothing of ours is in flight: no line unacknowledged or queued, no turn, no held send.
    pub fn is_quiet(&self) -> bool {
        !self.busy() && self.held.is_none()
    }

    /// A command from the daemon.
    pub fn command(&mut self, now: Timestamp, command: ExecutorCommand) -> Result<(), Error> {
        let submits = matches!(command.kind, CommandKind::Create | CommandKind::Send | CommandKind::Steer);
        if submits && now > command.deadline {
            self.fail(command.id, "DEADLINE_EXCEEDED", "the deadline passed before submission");
            return Ok(());
        }
        let running = matches!(self.process, Process::Running { closing: false });
        match command.kind {
            CommandKind::Create => {
                if self.session.is_some() {
                    self.fail(command.id, "COMPOSER_BUSY", "this core already runs a session");
                    return Ok(());
                }
                let session = nonce::session_uuid(&command.idempotency_key);
                self.worker = command.worker;
                self.session = Some(session.clone());
                let args = self.config.args(&session, Launch::New);
                self.launch = Some(Launch::New);
                self.effects.push_back(Effect::Spawn { session, launch: Launch::New, args });
                self.process = Process::Running { closing: false };
                self.write(now, &command)
            }
            CommandKind::Send if !running || !self.serves(&command) => {
                self.fail(command.id, "CONVERSATION_CLOSED", "no such session running here");
                Ok(())
            }
            CommandKind::Send if self.held.is_some() => {
                self.fail(command.id, "COMPOSER_BUSY", "a send is already held");
                Ok(())
            }
            CommandKind::Send if self.busy() => {
                self.held = Some(command);
                Ok(())
            }
            CommandKind::Send => self.write(now, &command),
            CommandKind::Steer if !running || !self.serves(&command) => {
                self.fail(command.id, "CONVERSATION_CLOSED", "no such session running here");
                Ok(())
            }
            CommandKind::Steer => {
                if !self.turn.as_ref().is_some_and(|t| t.ours) {
                    self.fail(command.id, "STEERING_UNAVAILABLE", "no turn of ours is running");
                    return Ok(());
                }
                self.write(now, &command)
            }
            CommandKind::Cancel => {
                if self.held.take_if(|held| held.id == command.id).is_some() {
                    self.fail(command.id, "CANCELLED", "withdrawn before submission");
                }
                Ok(())
            }
            CommandKind::Inspect => {
                let report = self.inspect();
                self.state(report);
                Ok(())
            }
            CommandKind::ApprovalAnswer => {
                self.approval_answer(&command);
                Ok(())
            }
            CommandKind::Close => {
                self.close();
                Ok(())
            }
        }
    }

    /// `conversation.close`: a held send fails; a running child's stdin is closed, and the
    /// child is stopped at once if a turn runs or a line of ours is in flight (a person who
    /// stops a worker must see it stop), else it ends on its own at end of input; between
    /// children the session is closed now (never resumed: a respawn due is not made). A
    /// close of a closed session, or with none, changes nothing.
    fn close(&mut self) {
        if let Some(held) = self.held.take() {
            self.fail(held.id, "CONVERSATION_CLOSED", "the conversation was closed");
        }
        match self.process {
            Process::Running { closing: false } => {
                self.process = Process::Running { closing: true };
                self.effects.push_back(Effect::CloseStdin);
                if self.busy() {
                    self.effects.push_back(Effect::Stop);
                }
            }
            Process::Exited => {
                self.process = Process::Closed;
                for unacked in std::mem::take(&mut self.unacked) {
                    let detail = "the conversation was closed before the prompt was written again: not submitted";
                    self.fail(unacked.command, crate::base::report::ABSENT, detail);
                }
                self.queued.clear();
                self.turn = None;
                self.state(Report::bare(ConversationState::Closed));
            }
            Process::Running { closing: true } | Process::None | Process::Closed => {}
        }
    }

    /// Time passed: unacknowledged lines and held sends past their time end.
    pub fn tick(&mut self, now: Timestamp) {
        let (late, kept): (Vec<Unacked>, Vec<Unacked>) =
            self.unacked.drain(..).partition(|u| now >= u.written.plus_ms(CLAUDE_ACK_TIMEOUT_MS));
        self.unacked = kept.into();
        for unacked in late {
            self.fail(unacked.command, "AMBIGUOUS_SUBMISSION", "the CLI did not acknowledge the prompt");
        }
        if let Some(held) = self.held.take_if(|held| now > held.deadline) {
            self.fail(held.id, "DEADLINE_EXCEEDED", "the turn did not end before the deadline");
        }
    }

    fn serves(&self, command: &ExecutorCommand) -> bool {
        self.session.as_deref() == Some(&*command.conversation)
    }

    /// A turn runs or a prompt of ours waits: a send now would be a steer.
    fn busy(&self) -> bool {
        self.turn.is_some() || !self.queued.is_empty() || !self.unacked.is_empty()
    }

    fn write(&mut self, now: Timestamp, command: &ExecutorCommand) -> Result<(), Error> {
        if self.unacked.len() + self.queued.len() >= CLAUDE_LINES_IN_FLIGHT_MAX {
            return Err(Error::InFlightFull);
        }
        let uuid = nonce::nonce_uuid(&command.idempotency_key);
        let line = nonce::user_line(&uuid, &command.prompt);
        self.remember(&uuid);
        let (worker, session) = (command.worker, session_of(&self.session));
        self.effects.push_back(Effect::Prompt { command: command.id, worker, session, line: line.clone() });
        let prompt = command.prompt.clone();
        let unacked =
            Unacked { command: command.id, kind: command.kind, uuid, line, prompt, written: now, resent: false };
        self.unacked.push_back(unacked);
        Ok(())
    }

    fn inspect(&self) -> Report {
        match (self.process, &self.turn, &self.last) {
            (Process::None | Process::Closed, _, _) => Report::bare(ConversationState::Closed),
            // Between children the session lives on: what it showed last.
            (Process::Exited, _, last) => last.clone().unwrap_or_else(|| Report::bare(ConversationState::Ready)),
            (_, Some(_), _) => Report::bare(ConversationState::Generating),
            (_, None, Some(last)) => last.clone(),
            (_, None, None) => Report::bare(ConversationState::Ready),
        }
    }

    fn ours(&self, uuid: &str) -> bool {
        self.nonces.iter().any(|n| n == uuid)
    }

    fn remember(&mut self, uuid: &str) {
        if self.nonces.len() >= NONCES_PER_THREAD_MAX {
            self.nonces.pop_front();
        }
        self.nonces.push_back(uuid.to_string());
    }

    fn foreign(&mut self, uuid: Option<String>) {
        let known = uuid.as_ref().is_some_and(|u| self.strangers.contains(u));
        if let Some(turn) = self.turn.as_mut() {
            let flagged = turn.flagged;
            turn.flagged = true;
            turn.ours = false;
            if flagged {
                return;
            }
        }
        if known {
            return;
        }
        if let Some(uuid) = &uuid {
            if self.strangers.len() >= NONCES_PER_THREAD_MAX {
                self.strangers.pop_front();
            }
            self.strangers.push_back(uuid.clone());
        }
        let (worker, session) = (self.worker, self.session.clone().unwrap_or_default());
        self.effects.push_back(Effect::Foreign { worker, session, uuid });
    }

    fn submitted(&mut self, command: CommandId, uuid: &str, duplicate: bool) {
        let session = self.session.clone().unwrap_or_default();
        let outcome = Outcome::Submitted { session, nonce: uuid.to_string(), duplicate };
        self.effects.push_back(Effect::Result { command, outcome });
    }

    fn fail(&mut self, command: CommandId, code: &'static str, detail: &str) {
        let outcome = Outcome::Failed { code, detail: cut_detail(detail) };
        self.effects.push_back(Effect::Result { command, outcome });
    }

    fn state(&mut self, report: Report) {
        let (worker, session) = (self.worker, self.session.clone().unwrap_or_default());
        self.effects.push_back(Effect::State { worker, session, report });
    }
}

/// The last [`BLOCK_CHARS_MAX`] characters of the turn's result text.
fn tail(text: &str) -> String {
    let skip = text.chars().count().saturating_sub(BLOCK_CHARS_MAX);
    text.chars().skip(skip).collect()
}

/// The session id for an effect (empty before one is minted or adopted).
fn session_of(session: &Option<String>) -> String {
    session.clone().unwrap_or_default()
}

/// The state to report when `system/init` does not list the MCP server `name` as
/// `connected` (recorded 2026-12-02: `"mcp_servers":[{"name":"orchestrator","status":
/// "connected"}]`, and `"failed"` for a server that did not answer, whose turn still ran):
/// a worker that cannot reach `worker_complete` must not go on unnoticed.
fn mcp_missing(init: &Value, name: &str) -> Option<Report> {
    let servers = init.get("mcp_servers").and_then(Value::as_array);
    let status = servers
        .and_then(|s| s.iter().find(|server| server.get("name").and_then(Value::as_str) == Some(name)))
        .map(|server| server.get("status").and_then(Value::as_str).unwrap_or("without a status"));
    let why = match status {
        Some("connected") => return None,
        Some(status) => format!("is {status}"),
        None => "is not listed".to_string(),
    };
    let detail = format!(
        "{}: the MCP server {name} {why} in this Claude session (system/init): the worker cannot call worker_complete",
        crate::base::mcp::UNREACHABLE
    );
    Some(Report {
        detail: Some(cut_detail(&detail)),
        ..Report::bare(ConversationState::Error(ErrorKind::HostUiChanged))
    })
}
