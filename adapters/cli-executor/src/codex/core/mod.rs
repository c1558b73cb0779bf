//! The Codex app-server core: executor commands in, JSON-RPC lines and observations out.
//!
//! [`Codex`] is sans IO (quinn-proto's shape): [`Codex::start`], [`Codex::command`],
//! [`Codex::line`] and [`Codex::tick`] take `now` and queue [`Effect`]s, which
//! [`Codex::poll_effect`] drains in order; [`Codex::next_deadline`] says when to tick. The
//! shell (a later slice) writes each [`Effect::Write`] line to the child's stdin, feeds
//! each stdout line to `line`, and turns results and states into the executor protocol.
//!
//! | command | app-server |
//! |---|---|
//! | `conversation.create` | `thread/start`, then `turn/start` |
//! | `conversation.send` | `turn/start` (held until a running turn ends: idle delivery) |
//! | `conversation.steer` | `turn/steer{expectedTurnId}` |
//! | `conversation.inspect` | `thread/read{includeTurns}` |
//! | `conversation.close` | `turn/interrupt` of a running turn, `thread/unsubscribe`; the last thread's close stops the child ([`Effect::Stop`]) |
//! | `command.cancel` | withdraws a held send |
//!
//! Every prompt carries the command's idempotency key as `clientUserMessageId`: the
//! app-server stores it as the user message's `clientId`, so `thread/read` proves later
//! whether a prompt went in ([`record`]). A turn is ours when it started while our
//! `turn/start` was in flight and carries only our nonces; any other turn is
//! [`Effect::Foreign`]. A completed turn is an observation (`idle`), never a completion.
//! With [`Config::guarded`], a thread takes its first prompt only once the orchestrator's
//! MCP server is ready in it and it has no goal ([`ready`]).

mod approval;
mod effect;
mod notify;
mod ready;
pub mod record;
mod resume;
pub mod usage;

pub use approval::Approvals;
pub use effect::{Effect, Outcome, Report};
pub use ready::{CODEX_GOAL, MCP_UNREACHABLE};
pub use resume::Resume;

use crate::Error;
use crate::base::limits::{COMMANDS_WAITING_MAX, NONCES_PER_THREAD_MAX, THREADS_MAX};
use crate::codex::jsonrpc::{self, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND, Pending, RpcError};
use engine::effect::{CommandKind, ExecutorCommand};
use engine::ids::{CommandId, WorkerId};
use engine::model::ConversationState;
use engine::time::Timestamp;
use record::ThreadRecord;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};

/// How threads are started. The shell fills it from the worker's provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The working directory of new threads.
    pub cwd: String,
    /// `approvalPolicy` of new threads: `never` by default, the sandbox guards the work.
    pub approval_policy: String,
    /// `sandbox` of new threads: `workspace-write` by default.
    pub sandbox: String,
    /// The MCP server whose `mcpServer/startupStatus/updated` must say `ready` in a thread
    /// before it takes a prompt (the orchestrator's); `None`: no wait.
    pub mcp_server: Option<String>,
    /// Whether `thread/goal/get` must show no goal before a thread takes a prompt.
    pub goal_check: bool,
}

impl Config {
    /// The unattended defaults in `cwd`: no approval prompts, a workspace-write sandbox, and
    /// no wait before a prompt (for tests of the core's other rules).
    pub fn unattended(cwd: &str) -> Config {
        Config {
            cwd: cwd.to_string(),
            approval_policy: "never".to_string(),
            sandbox: "workspace-write".to_string(),
            mcp_server: None,
            goal_check: false,
        }
    }

    /// What the executor runs: unattended, and a thread takes a prompt only once
    /// `mcp_server` (if any) is ready in it and it has no goal.
    pub fn guarded(cwd: &str, mcp_server: Option<&str>) -> Config {
        Config { mcp_server: mcp_server.map(str::to_string), goal_check: true, ..Config::unattended(cwd) }
    }
}

/// What a request in flight was for.
#[derive(Debug)]
enum Purpose {
    Initialize,
    ThreadStart(ExecutorCommand),
    TurnStart { command: CommandId, thread: String },
    Steer { command: CommandId, thread: String },
    Read { worker: WorkerId },
    Resume { thread: String },
    Goal { thread: String },
    Unsubscribe,
    Interrupt,
}

impl Purpose {
    fn method(&self) -> &'static str {
        match self {
            Purpose::Initialize => "initialize",
            Purpose::ThreadStart(_) => "thread/start",
            Purpose::TurnStart { .. } => "turn/start",
            Purpose::Steer { .. } => "turn/steer",
            Purpose::Read { .. } => "thread/read",
            Purpose::Resume { .. } => "thread/resume",
            Purpose::Goal { .. } => "thread/goal/get",
            Purpose::Unsubscribe => "thread/unsubscribe",
            Purpose::Interrupt => "turn/interrupt",
        }
    }
}

/// One thread the core manages.
#[derive(Debug)]
struct Thread {
    /// The worker whose conversation it is.
    worker: WorkerId,
    /// Our `turn/start` is in flight: the next `turn/started` is ours.
    starting: bool,
    /// The running turn and whether it is ours.
    turn: Option<(String, bool)>,
    /// The last turn that ended, so a late `turn/start` answer does not revive it.
    ended: Option<String>,
    /// Nonces sent on this thread, oldest first (bounded).
    nonces: VecDeque<String>,
    /// A send held until the running turn ends.
    held: Option<ExecutorCommand>,
    /// The running turn's last agent message.
    agent_text: Option<String>,
    /// What the thread waits for before it takes a prompt.
    gate: ready::Gate,
    /// The reset of the usage or rate limit that failed its last turn: then it is
    /// reported `idle` again.
    limit_until: Option<Timestamp>,
    /// The running turn's last `error` said Codex retries (`willRetry`): reported with the
    /// turn's `generating` until the turn moves again.
    retrying: bool,
}

/// The Codex app-server core. One per app-server child.
#[derive(Debug)]
pub struct Codex {
    config: Config,
    pending: Pending<Purpose>,
    /// `initialize` was answered: requests may go out.
    ready: bool,
    /// Commands that arrived before `ready`.
    early: VecDeque<ExecutorCommand>,
    threads: BTreeMap<String, Thread>,
    /// The latest `rateLimits` of `account/rateLimits/updated` (account-wide).
    rate_limits: Option<Value>,
    /// Threads of an earlier child to `thread/resume` once initialized; commands wait
    /// until every one is answered.
    resuming: std::collections::BTreeSet<String>,
    /// MCP startup statuses of threads not known yet (sent before the `thread/start`
    /// answer), at most [`THREADS_MAX`].
    startups: BTreeMap<String, ready::Startup>,
    /// Approval requests waiting for a person, by handle (`apr-N`), at most
    /// [`crate::base::limits::APPROVALS_MAX`].
    approvals: BTreeMap<String, approval::Asked>,
    /// The last handle given (handles are never reused within a child).
    approval_seq: u64,
    /// A close left no thread: [`Effect::Stop`] is asked once the effects before it are
    /// drained and no request a command waits on is in flight (a `turn/start` or
    /// `thread/read` answered or timed out first), unless a new thread came meanwhile.
    stop_wanted: bool,
    /// [`Effect::Stop`] was asked: the child is ending for good, and so is this core.
    stopped: bool,
    effects: VecDeque<Effect>,
}

impl Codex {
    /// A core for a fresh child; call [`Codex::start`] first.
    pub fn new(config: Config) -> Codex {
        Codex {
            config,
            pending: Pending::default(),
            ready: false,
            early: VecDeque::new(),
            threads: BTreeMap::new(),
            rate_limits: None,
            resuming: std::collections::BTreeSet::new(),
            startups: BTreeMap::new(),
            approvals: BTreeMap::new(),
            approval_seq: 0,
            stop_wanted: false,
            stopped: false,
            effects: VecDeque::new(),
        }
    }

    /// The next effect, in order; after the last one, [`Effect::Stop`] if a close left the
    /// child with nothing to host.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        if let Some(effect) = self.effects.pop_front() {
            return Some(effect);
        }
        if self.stop_wanted && !self.threads.is_empty() {
            self.stop_wanted = false; // a new thread came: the child hosts it
        } else if self.stop_wanted && self.vacant() {
            self.stop_wanted = false;
            self.stopped = true;
            return Some(Effect::Stop);
        }
        None
    }

    /// [`Effect::Stop`] was asked: the child ends for good (the shell starts no other for
    /// this core; a later create gets a fresh child and core).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The child hosts nothing: no thread, no command waiting, none being started or
    /// resumed, no `thread/read` out (reconciliation waits on it).
    fn vacant(&self) -> bool {
        self.threads.is_empty()
            && self.early.is_empty()
            && self.resuming.is_empty()
            && !self.pending.any(|p| {
                matches!(
                    p,
                    Purpose::ThreadStart(_) | Purpose::TurnStart { .. } | Purpose::Steer { .. } | Purpose::Read { .. }
                )
            })
    }

    /// When to call [`Codex::tick`]: the next request timeout or held command's deadline.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        let held =
            self.threads.values().filter_map(|t| t.held.as_ref()).chain(&self.early).map(|c| c.deadline.plus_ms(1));
        let gates = self.threads.values().filter_map(|t| t.gate.deadline()).map(|at| at.plus_ms(1));
        let limits = self.threads.values().filter_map(|t| t.limit_until);
        self.pending.next_deadline().into_iter().chain(held).chain(gates).chain(limits).min()
    }

    /// The threads hosted, with their workers: what a new child resumes after a crash.
    pub fn threads(&self) -> impl Iterator<Item = (WorkerId, &str)> {
        self.threads.iter().map(|(id, thread)| (thread.worker, id.as_str()))
    }

    /// Says `initialize` to a fresh child.
    pub fn start(&mut self, now: Timestamp) -> Result<(), Error> {
        let params = json!({"clientInfo": {"name": "orchestrator-cli-executor", "title": null, "version": env!("CARGO_PKG_VERSION")},
                            "capabilities": {"experimentalApi": true}});
        self.request(now, Purpose::Initialize, params)
    }

    /// Registers a thread found after a restart (its worker known from the journal), so
    /// `inspect` can read it and its nonces are recognized.
    pub fn adopt(&mut self, worker: WorkerId, thread: &str, nonces: &[String]) -> Result<(), Error> {
        let entry = self.insert_thread(worker, thread)?;
        nonces.iter().for_each(|nonce| remember(entry, nonce));
        Ok(())
    }

    /// Ends the running turn of `thread` (`turn/interrupt`): it completes as `interrupted`.
    pub fn interrupt(&mut self, now: Timestamp, thread: &str) -> Result<(), Error> {
        let running = self.threads.get(thread).ok_or_else(|| unknown(thread))?.turn.clone();
        let Some((turn, _)) = running else { return Ok(()) };
        self.request(now, Purpose::Interrupt, json!({"threadId": thread, "turnId": turn}))
    }

    /// A command from the daemon.
    pub fn command(&mut self, now: Timestamp, command: ExecutorCommand) -> Result<(), Error> {
        if !self.ready {
            if self.early.len() >= COMMANDS_WAITING_MAX {
                return Err(Error::WaitingFull);
            }
            self.early.push_back(command);
            return Ok(());
        }
        let submits = matches!(command.kind, CommandKind::Create | CommandKind::Send | CommandKind::Steer);
        if submits && now > command.deadline {
            self.fail(command.id, "DEADLINE_EXCEEDED", "the deadline passed before submission");
            return Ok(());
        }
        let thread = command.conversation.to_string();
        match command.kind {
            CommandKind::Create => {
                let params = json!({"cwd": self.config.cwd, "approvalPolicy": self.config.approval_policy,
                                    "sandbox": self.config.sandbox, "ephemeral": false});
                self.request(now, Purpose::ThreadStart(command), params)
            }
            CommandKind::Send => match self.threads.get_mut(&thread) {
                None => {
                    self.fail(command.id, "CONVERSATION_CLOSED", "no such thread here");
                    Ok(())
                }
                Some(t) if t.held.is_some() => {
                    self.fail(command.id, "COMPOSER_BUSY", "a send is already held");
                    Ok(())
                }
                Some(t) if t.starting || t.turn.is_some() => {
                    t.held = Some(command);
                    Ok(())
                }
                Some(_) => self.send_when_open(now, &thread, command),
            },
            CommandKind::Steer => self.steer(now, &thread, &command),
            CommandKind::Cancel => {
                let held = self.threads.values_mut().find(|t| t.held.as_ref().is_some_and(|h| h.id == command.id));
                if held.and_then(|t| t.held.take()).is_some() {
                    self.fail(command.id, "CANCELLED", "withdrawn before submission");
                }
                Ok(())
            }
            CommandKind::Inspect => match self.threads.get(&thread) {
                None => {
                    self.state(command.worker, &thread, Report::bare(ConversationState::Closed));
                    Ok(())
                }
                Some(t) => {
                    let worker = t.worker;
                    self.request(now, Purpose::Read { worker }, json!({"threadId": thread, "includeTurns": true}))
                }
            },
            CommandKind::ApprovalAnswer => {
                self.approval_answer(&command);
                Ok(())
            }
            // A close of a thread not here (unknown, or closed already) changes nothing.
            CommandKind::Close => match self.threads.remove(&thread) {
                None => Ok(()),
                Some(t) => {
                    self.approvals_gone(&thread);
                    self.close_thread(now, &thread, t)
                }
            },
        }
    }

    /// Closes `thread` (already removed): a held send fails, a running turn is interrupted
    /// (its end is not reported: the thread is gone), the thread unsubscribed and reported
    /// `closed`; with no thread left the child is to stop ([`Effect::Stop`]).
    fn close_thread(&mut self, now: Timestamp, thread: &str, t: Thread) -> Result<(), Error> {
        if let Some(held) = t.held {
            self.fail(held.id, "CONVERSATION_CLOSED", "the conversation was closed");
        }
        // The close holds even if a request cannot go out (too many in flight): the
        // thread is gone either way, and a child with no thread left stops.
        let interrupted = match &t.turn {
            Some((turn, _)) => self.request(now, Purpose::Interrupt, json!({"threadId": thread, "turnId": turn})),
            None => Ok(()),
        };
        let unsubscribed = self.request(now, Purpose::Unsubscribe, json!({"threadId": thread}));
        self.state(t.worker, thread, Report::bare(ConversationState::Closed));
        self.stop_wanted = self.threads.is_empty();
        interrupted.and(unsubscribed)
    }

    /// A line from the app-server's stdout.
    pub fn line(&mut self, now: Timestamp, line: &str) -> Result<(), Error> {
        match jsonrpc::decode(line)? {
            Incoming::Response { id, outcome } => {
                let purpose = self.pending.take(id)?;
                self.response(now, purpose, outcome)
            }
            Incoming::Notification { method, params } => self.notification(now, &method, &params),
            Incoming::ServerRequest { id, method, params } => match method.as_str() {
                // Unattended threads ask nothing (`approvalPolicy: never`): a request that
                // comes anyway is declined, never left hanging; with `ask` it waits for a
                // person ([`approval`]).
                approval::COMMAND_APPROVAL | approval::FILE_CHANGE_APPROVAL => {
                    self.approval_request(id, &method, &params)
                }
                _ => {
                    let line = jsonrpc::error_line(&id, METHOD_NOT_FOUND, "not supported by this executor");
                    self.effects.push_back(Effect::Write(line));
                    Ok(())
                }
            },
        }
    }

    /// Time passed: unanswered requests and held commands past their deadline end, a
    /// thread still waiting for its MCP server's status fails, and a limit whose reset came
    /// leaves its thread idle.
    pub fn tick(&mut self, now: Timestamp) {
        self.expire_gates(now);
        self.lift_limits(now);
        for (_, purpose) in self.pending.expire(now) {
            match purpose {
                Purpose::ThreadStart(command) => {
                    self.fail(command.id, "DEADLINE_EXCEEDED", "thread/start went unanswered")
                }
                Purpose::TurnStart { command, .. } | Purpose::Steer { command, .. } => self.fail(
                    command,
                    "AMBIGUOUS_SUBMISSION",
                    "the app-server did not answer; the prompt may have gone in",
                ),
                other => self.effects.push_back(Effect::Unresponsive { method: other.method(), error: None }),
            }
        }
        let late: Vec<CommandId> = self
            .threads
            .values_mut()
            .filter_map(|t| t.held.take_if(|held| now > held.deadline).map(|held| held.id))
            .collect();
        late.into_iter().for_each(|id| self.fail(id, "DEADLINE_EXCEEDED", "the turn did not end before the deadline"));
        let (early_late, early): (Vec<_>, Vec<_>) = self.early.drain(..).partition(|c| now > c.deadline);
        self.early = early.into();
        early_late
            .into_iter()
            .for_each(|c| self.fail(c.id, "DEADLINE_EXCEEDED", "the app-server was not ready in time"));
    }

    fn response(&mut self, now: Timestamp, purpose: Purpose, outcome: Result<Value, RpcError>) -> Result<(), Error> {
        match (purpose, outcome) {
            (Purpose::Initialize, Ok(_)) => {
                self.effects.push_back(Effect::Write(jsonrpc::notification_line("initialized", None)));
                self.after_initialize(now)
            }
            (Purpose::Resume { thread }, outcome) => self.resumed(now, thread, outcome),
            (Purpose::ThreadStart(command), Ok(result)) => {
                let Some(thread) = result.pointer("/thread/id").and_then(Value::as_str) else {
                    self.fail(command.id, "HOST_UI_CHANGED", "thread/start answered without a thread id");
                    return Err(Error::Malformed { detail: "thread/start result without thread.id".to_string() });
                };
                let thread = thread.to_string();
                let worker = command.worker;
                self.insert_thread(worker, &thread)?.held = Some(command);
                self.opened(now, &thread)
            }
            (Purpose::TurnStart { command, thread }, Ok(result)) => {
                let turn = result.pointer("/turn/id").and_then(Value::as_str).unwrap_or_default().to_string();
                if let Some(t) = self.threads.get_mut(&thread) {
                    t.starting = false;
                    if t.ended.as_deref() != Some(turn.as_str()) {
                        t.turn = Some((turn.clone(), true));
                    }
                }
                self.submitted(command, thread, turn);
                Ok(())
            }
            (Purpose::Steer { command, thread }, Ok(result)) => {
                let turn = result.get("turnId").and_then(Value::as_str).unwrap_or_default().to_string();
                self.submitted(command, thread, turn);
                Ok(())
            }
            (Purpose::Steer { command, .. }, Err(error)) if error.code == INVALID_REQUEST => {
                // "no active turn to steer": the turn ended first. Definitely not submitted.
                {
                    self.fail(command, "STEERING_UNAVAILABLE", &error.message);
                    Ok(())
                }
            }
            (Purpose::TurnStart { command, thread }, Err(error)) => {
                if let Some(t) = self.threads.get_mut(&thread) {
                    t.starting = false;
                }
                {
                    self.fail(command, "HOST_UI_CHANGED", &error.message);
                    Ok(())
                }
            }
            (Purpose::ThreadStart(ExecutorCommand { id: command, .. }), Err(error)) => {
                let detail = ready::mcp_refusal(&error).unwrap_or(error.message);
                self.fail(command, "HOST_UI_CHANGED", &detail);
                Ok(())
            }
            (Purpose::Steer { command, .. }, Err(error)) => {
                self.fail(command, "HOST_UI_CHANGED", &error.message);
                Ok(())
            }
            (Purpose::Goal { thread }, outcome) => self.goal_answer(now, &thread, outcome),
            (Purpose::Read { worker }, Ok(result)) => {
                let record = ThreadRecord::from_read(&result)
                    .ok_or_else(|| Error::Malformed { detail: "thread/read result without a thread".to_string() })?;
                self.observe_record(now, worker, &record);
                self.effects.push_back(Effect::Thread { worker, record });
                Ok(())
            }
            (Purpose::Interrupt, Err(error)) if error.code == INVALID_REQUEST => Ok(()), // ended already
            (Purpose::Unsubscribe | Purpose::Interrupt, Ok(_)) => Ok(()),
            (purpose, Err(error)) => {
                self.effects.push_back(Effect::Unresponsive { method: purpose.method(), error: Some(error) });
                Ok(())
            }
        }
    }

    fn steer(&mut self, now: Timestamp, thread: &str, command: &ExecutorCommand) -> Result<(), Error> {
        let Some(t) = self.threads.get_mut(thread) else {
            self.fail(command.id, "CONVERSATION_CLOSED", "no such thread here");
            return Ok(());
        };
        let Some((turn, true)) = t.turn.clone() else {
            self.fail(command.id, "STEERING_UNAVAILABLE", "no turn of ours is running");
            return Ok(());
        };
        remember(t, &command.idempotency_key);
        let worker = t.worker;
        let params = json!({"threadId": thread, "expectedTurnId": turn, "clientUserMessageId": command.idempotency_key,
                            "input": [{"type": "text", "text": command.prompt}]});
        let purpose = Purpose::Steer { command: command.id, thread: thread.to_string() };
        self.prompt(now, purpose, params, command.id, worker, thread)
    }

    fn start_turn(&mut self, now: Timestamp, thread: &str, command: &ExecutorCommand) -> Result<(), Error> {
        let t = self.threads.get_mut(thread).ok_or_else(|| unknown(thread))?;
        t.starting = true;
        remember(t, &command.idempotency_key);
        let worker = t.worker;
        let params = json!({"threadId": thread, "clientUserMessageId": command.idempotency_key,
                            "input": [{"type": "text", "text": command.prompt}]});
        let purpose = Purpose::TurnStart { command: command.id, thread: thread.to_string() };
        self.prompt(now, purpose, params, command.id, worker, thread)
    }

    /// A request carrying a prompt: the shell journals it before the line goes out.
    fn prompt(
        &mut self,
        now: Timestamp,
        purpose: Purpose,
        params: Value,
        command: CommandId,
        worker: WorkerId,
        thread: &str,
    ) -> Result<(), Error> {
        let method = purpose.method();
        let id = self.pending.insert(now, purpose)?;
        let line = jsonrpc::request_line(id, method, params);
        self.effects.push_back(Effect::Prompt { command, worker, thread: thread.to_string(), line });
        Ok(())
    }

    fn request(&mut self, now: Timestamp, purpose: Purpose, params: Value) -> Result<(), Error> {
        let method = purpose.method();
        let id = self.pending.insert(now, purpose)?;
        self.effects.push_back(Effect::Write(jsonrpc::request_line(id, method, params)));
        Ok(())
    }

    fn insert_thread(&mut self, worker: WorkerId, thread: &str) -> Result<&mut Thread, Error> {
        if !self.threads.contains_key(thread) && self.threads.len() >= THREADS_MAX {
            return Err(Error::ThreadsFull);
        }
        let gate = ready::Gate::new(&self.config);
        Ok(self.threads.entry(thread.to_string()).or_insert_with(|| Thread {
            worker,
            starting: false,
            turn: None,
            ended: None,
            nonces: VecDeque::new(),
            held: None,
            agent_text: None,
            gate,
            limit_until: None,
            retrying: false,
        }))
    }

    fn submitted(&mut self, command: CommandId, thread: String, turn: String) {
        self.effects.push_back(Effect::Result { command, outcome: Outcome::Submitted { thread, turn } });
    }

    fn fail(&mut self, command: CommandId, code: &'static str, detail: &str) {
        let outcome = Outcome::Failed { code, detail: crate::base::report::cut_detail(detail) };
        self.effects.push_back(Effect::Result { command, outcome });
    }

    fn state(&mut self, worker: WorkerId, thread: &str, report: Report) {
        self.effects.push_back(Effect::State { worker, thread: thread.to_string(), report });
    }
}

fn remember(thread: &mut Thread, nonce: &str) {
    if thread.nonces.len() >= NONCES_PER_THREAD_MAX {
        thread.nonces.pop_front();
    }
    thread.nonces.push_back(nonce.to_string());
}

fn unknown(thread: &str) -> Error {
    Error::UnknownThread { thread: thread.to_string() }
}
