//! The router between the daemon and the worker tasks: the journal opened (and its doubts
//! logged) and stale leases reaped at start, a task per worker of the kind its commands
//! name (`executorKind`: a [`CodexTask`] or a [`ClaudeTask`]), every command from the
//! daemon checked against the journal before it is served (a command id already journaled
//! is never submitted again: its stored result is sent again, or its result follows), and
//! the `hello` that announces the kinds this executor runs and republishes the bindings
//! and the journal. No socket here: the connection ([`crate::run::connection`]) feeds it
//! text frames and sends what it returns.
//!
//! Called the router, not the executor: the whole crate is an executor, the engine has its
//! own `executor.rs` (how executor reports are taken in), and the bridge is "the executor
//! bridge"; this file routes commands.

use crate::Error;
use crate::base::journal::Journal;
use crate::base::lease::Leases;
use crate::base::limits::CHANNEL_DEPTH;
use crate::base::settings::Settings;
use crate::base::worker::{In, Out, Shared, lock};
use crate::claude::task::ClaudeTask;
use crate::codex::task::CodexTask;
use crate::run::supervise::serve;
use engine::ids::WorkerId;
use executor_protocol::{
    BindingWire, Capabilities, CommandWire, DaemonMessage, ExecutorKindWire, ExecutorMessage, Hello, KindWire,
    MESSAGE_BYTES_MAX, OutcomeWire, PROTOCOL_VERSION, PhaseWire, ProtocolErrorCode, ResultWire, SteerLandedWire,
    encode,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// What a daemon frame asks of the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Send these messages (already encoded), in order.
    Send(Vec<String>),
    /// `welcome`: the connection is up; heartbeat at this interval.
    Welcome {
        /// `heartbeatMs`.
        heartbeat_ms: u64,
    },
    /// The daemon refused the executor for good.
    Refused(Error),
    /// The daemon will close the connection (a protocol error that closes): reconnect.
    Closing,
}

/// The executor's state beside its worker tasks.
pub struct Router {
    shared: Shared,
    /// Each worker's task input; dropping one ends that task.
    workers: BTreeMap<WorkerId, mpsc::Sender<In>>,
    /// Every worker task: dropped with the executor, which aborts them (their children
    /// are killed by their drop and reaped at the next start).
    tasks: JoinSet<()>,
}

/// Who this executor says it is in every `hello` of this start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intro {
    /// Its stable id (`--executor-id`, or the host id in the state directory).
    pub executor_id: String,
    /// This start's epoch: an older process of the same id is refused.
    pub epoch: u64,
    /// The host's cap on turns at once (`--turns-max`).
    pub turns_max: u32,
    /// The accounts its workers run under (`--account`), with their caps.
    pub accounts: Vec<executor_protocol::AccountWire>,
}

impl Intro {
    /// An introduction naming no account.
    pub fn new(executor_id: &str, epoch: u64, turns_max: u32) -> Intro {
        Intro { executor_id: executor_id.to_string(), epoch, turns_max, accounts: Vec::new() }
    }
}

impl Router {
    /// Opens the journal in `settings.state_dir`, reaps what a previous executor left, and
    /// starts a task for every worker the journal knows (bound, or with open commands),
    /// which resumes its thread and settles what was left open. The receiver yields
    /// every worker's reports.
    pub async fn open(settings: Settings) -> Result<(Router, mpsc::Receiver<Out>), Error> {
        let (journal, doubts) = Journal::open(&settings.state_dir)?;
        for doubt in &doubts {
            tracing::warn!(code = doubt.code(), "journal: {doubt}");
        }
        let (leases, reaped) = Leases::open(&settings.state_dir).await?;
        for r in &reaped {
            tracing::info!(?r, "reaped a lease left by a previous executor");
        }
        let known: BTreeMap<WorkerId, ExecutorKindWire> = {
            let open = journal
                .entries()
                .filter(|e| matches!(e.phase, PhaseWire::Received | PhaseWire::SubmissionStarted))
                .map(|e| (e.command.worker_id, kind_of(&e.command)));
            // A binding says which CLI holds the worker's conversation; it wins.
            open.chain(journal.bindings().map(|(w, b)| (w, b.kind))).collect()
        };
        let (out, reports) = mpsc::channel(CHANNEL_DEPTH);
        let shared = Shared {
            journal: Arc::new(Mutex::new(journal)),
            leases: Arc::new(leases),
            settings: Arc::new(settings),
            out,
        };
        let mut router = Router { shared, workers: BTreeMap::new(), tasks: JoinSet::new() };
        for (worker, kind) in known {
            router.hand(worker, kind, In::Recover).await;
        }
        Ok((router, reports))
    }

    /// The `hello` frame: `token`, the executor's introduction (its id, this start's
    /// epoch, the host's cap on turns at once as `concurrencyMax`, the accounts its workers
    /// run under), steering, the kinds served, the bindings with their newest state, and
    /// the journal.
    pub fn hello(&self, token: &str, intro: &Intro) -> String {
        let journal = lock(&self.shared.journal);
        let bindings = journal
            .bindings()
            .map(|(worker, bound)| BindingWire {
                worker_id: worker,
                conversation_url: bound.conversation_url(),
                open: true,
                observation: journal.observed(worker).cloned(),
            })
            .collect();
        let hello = Hello {
            token: token.to_string(),
            executor_id: intro.executor_id.clone(),
            protocol: PROTOCOL_VERSION,
            capabilities: Capabilities {
                steering: true,
                operator: false,
                kinds: Some(self.shared.settings.kinds.clone()),
                // It pings the daemon at the WebSocket level instead.
                heartbeat_echo: false,
            },
            concurrency_max: intro.turns_max,
            bindings,
            journal: journal.hello_lines(),
            epoch: Some(intro.epoch),
            accounts: (!intro.accounts.is_empty()).then(|| intro.accounts.clone()),
        };
        encode(&ExecutorMessage::Hello(hello))
    }

    /// A worker's report as a frame, to send (or to drop while disconnected: results are
    /// in the journal, and the last state of each worker goes into the next `hello`).
    pub fn report(out: Out) -> String {
        match out {
            Out::State(state) => encode(&ExecutorMessage::State(state)),
            Out::Result(result) => encode(&ExecutorMessage::Result(result)),
            Out::Binding(binding) => encode(&ExecutorMessage::Binding(binding)),
            Out::Landed(landed) => encode(&ExecutorMessage::SteerLanded(landed)),
        }
    }

    /// What to send right after `welcome`: the journaled `steer.landed` reports whose
    /// state is still the binding's newest (or yet to come), so a landing the daemon may
    /// have missed (sent while disconnected, or the executor restarted) is heard again;
    /// the engine takes a repeated one as a no-op, and a stale one is never said.
    pub fn landings(&self) -> Vec<String> {
        let journal = lock(&self.shared.journal);
        journal
            .entries()
            .filter_map(|e| e.landed.map(|l| (e, l)))
            .filter(|(e, l)| {
                let worker = e.command.worker_id;
                journal.binding(worker).is_some() && l.seq >= journal.seq(worker)
            })
            .map(|(e, l)| {
                encode(&ExecutorMessage::SteerLanded(SteerLandedWire {
                    worker_id: e.command.worker_id,
                    command_id: e.command.command_id,
                    landed: l.landed,
                    seq: l.seq,
                }))
            })
            .collect()
    }

    /// A text frame from the daemon.
    pub async fn daemon(&mut self, text: &str) -> Reply {
        let message = match executor_protocol::decode_daemon(text, MESSAGE_BYTES_MAX) {
            Ok(message) => message,
            Err(e) => {
                tracing::warn!("undecodable daemon message: {e}");
                return Reply::Send(Vec::new());
            }
        };
        match message {
            DaemonMessage::Welcome(welcome) => Reply::Welcome { heartbeat_ms: welcome.heartbeat_ms },
            DaemonMessage::Command(command) => {
                let cwd = command.workspace.as_ref().map(|w| w.directory.clone()).filter(|d| !d.is_empty());
                Reply::Send(self.command(command, cwd).await)
            }
            DaemonMessage::ProtocolError(e) => {
                tracing::warn!(code = ?e.code, "protocol error from the daemon: {}", e.detail);
                let fatal = matches!(
                    e.code,
                    ProtocolErrorCode::Unauthorized
                        | ProtocolErrorCode::Replaced
                        | ProtocolErrorCode::Superseded
                        | ProtocolErrorCode::UnsupportedVersion
                        | ProtocolErrorCode::InvalidExecutorId
                );
                match (fatal, e.code.closes()) {
                    (true, _) => Reply::Refused(Error::Refused { code: wire_code(e.code), detail: e.detail }),
                    (false, true) => Reply::Closing,
                    (false, false) => Reply::Send(Vec::new()),
                }
            }
            DaemonMessage::OperatorResult(_)
            | DaemonMessage::OperatorSummary(_)
            | DaemonMessage::OperatorData(_)
            | DaemonMessage::Heartbeat {} => Reply::Send(Vec::new()),
        }
    }

    /// A command: journaled and handed to its worker, or answered from the journal.
    async fn command(&mut self, command: CommandWire, cwd: Option<String>) -> Vec<String> {
        let worker = command.worker_id;
        let kind = kind_of(&command);
        let entry = lock(&self.shared.journal).entry(command.command_id).cloned();
        let stored = |outcome: OutcomeWire| {
            vec![encode(&ExecutorMessage::Result(ResultWire { command_id: command.command_id, outcome }))]
        };
        match command.kind {
            KindWire::Create | KindWire::Send | KindWire::Steer => match entry {
                // Seen before: never submitted twice. Its stored result again, or none yet.
                Some(entry) => entry.outcome.map(stored).unwrap_or_default(),
                // Not a kind this executor runs (the daemon routes by `hello`): refused.
                None if !self.shared.settings.kinds.contains(&kind) => stored(OutcomeWire::Failed {
                    code: "HOST_UI_CHANGED".to_string(),
                    detail: format!("this executor does not run {} workers", engine::ExecutorKind::from(kind)),
                }),
                None => {
                    let received = lock(&self.shared.journal).receive(&command, cwd.as_deref());
                    match received {
                        Ok(()) => {
                            self.hand(worker, kind, In::Command(Box::new(command), cwd)).await;
                            Vec::new()
                        }
                        Err(e) => stored(OutcomeWire::Failed {
                            code: "HOST_UI_CHANGED".to_string(),
                            detail: format!("the executor could not journal the command: {e}"),
                        }),
                    }
                }
            },
            KindWire::Cancel => match entry {
                None => {
                    let outcome = OutcomeWire::Failed {
                        code: "CANCELLED".to_string(),
                        detail: "withdrawn before it was received".to_string(),
                    };
                    if let Err(e) = lock(&self.shared.journal).withdrawn(&command, &outcome) {
                        tracing::warn!(code = e.code(), "journaling a withdrawal: {e}");
                    }
                    stored(outcome)
                }
                Some(entry) => match (entry.outcome, entry.phase) {
                    (Some(outcome), _) => stored(outcome),
                    (None, PhaseWire::Received) => {
                        self.hand(worker, kind, In::Command(Box::new(command), None)).await;
                        Vec::new()
                    }
                    (None, _) => Vec::new(), // submission began: its real result follows
                },
            },
            // Not journaled: its id is its turn's (whose result the journal keeps), and
            // the core answers a request at most once (then `APPROVAL_GONE`).
            KindWire::ApprovalAnswer if self.workers.contains_key(&worker) => {
                self.hand(worker, kind, In::Command(Box::new(command), None)).await;
                Vec::new()
            }
            KindWire::ApprovalAnswer => stored(OutcomeWire::Failed {
                code: "APPROVAL_GONE".to_string(),
                detail: "no approval request of this worker waits in this executor".to_string(),
            }),
            KindWire::Inspect | KindWire::Close => {
                self.hand(worker, kind, In::Command(Box::new(command), None)).await;
                Vec::new()
            }
        }
    }

    /// Hands `input` to the worker's task, starting one of `kind` if it has none.
    async fn hand(&mut self, worker: WorkerId, kind: ExecutorKindWire, input: In) {
        if self.workers.get(&worker).is_none_or(|tx| tx.is_closed()) {
            let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
            let shared = self.shared.clone();
            match kind {
                ExecutorKindWire::Claude => self.tasks.spawn(serve(ClaudeTask::new(worker, shared), rx)),
                _ => self.tasks.spawn(serve(CodexTask::new(worker, shared), rx)),
            };
            self.workers.insert(worker, tx);
        }
        if let Some(tx) = self.workers.get(&worker)
            && tx.send(input).await.is_err()
        {
            tracing::warn!(%worker, "the worker's task ended");
        }
    }
}

/// The CLI a command is for: its `executorKind` (a daemon older than kinds names none:
/// Codex, the only CLI it knew).
fn kind_of(command: &CommandWire) -> ExecutorKindWire {
    command.executor_kind.unwrap_or(ExecutorKindWire::Codex)
}

/// A protocol error code as the wire and the docs spell it (`REPLACED`, not `Replaced`).
fn wire_code(code: executor_protocol::ProtocolErrorCode) -> String {
    serde_json::to_value(code).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_else(|| format!("{code:?}"))
}

#[cfg(test)]
mod tests {
    use executor_protocol::ProtocolErrorCode;

    #[test]
    fn a_refusal_names_its_code_as_the_wire_does() {
        assert_eq!(super::wire_code(ProtocolErrorCode::Replaced), "REPLACED");
        assert_eq!(super::wire_code(ProtocolErrorCode::InvalidAccount), "INVALID_ACCOUNT");
        assert_eq!(super::wire_code(ProtocolErrorCode::Unauthorized), "UNAUTHORIZED");
    }
}
