//! The simulated network's messages and their framing.
//!
//! Executors speak the executor protocol for real (its JSON messages, through its `Session`)
//! on `EXECUTOR_PORT`, each message in a length-prefixed text frame instead of a
//! WebSocket frame; callers (agents, the operator) use compact postcard frames on
//! `DAEMON_PORT`, standing in for MCP.

use crate::faults::Call;
use engine::ids::WorkerId;
use engine::model::ConversationState;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest frame accepted; a larger length prefix is a protocol error.
pub const FRAME_BYTES_MAX: usize = 1 << 20;
/// The daemon's caller port on the simulated network (MCP's stand-in).
pub const DAEMON_PORT: u16 = 7411;
/// The daemon's executor port (the executor protocol).
pub const EXECUTOR_PORT: u16 = 7412;
/// The executor token of every simulated run.
pub const EXECUTOR_TOKEN: &str = "simulated-executor-token";
/// A conversation host's port.
pub const CHAT_PORT: u16 = 443;

/// Where every simulated conversation lives: a conversation host's URL is this prefix
/// and the host's name.
const CONVERSATION_URL_PREFIX: &str = "https://chatgpt.com/c/";

/// Connects to the daemon on `port`: with a standby (`standby`), to the first daemon
/// host that answers, in order, each within `CONNECT_MS_MAX`. A standby's ports stay
/// closed until it leads, so its refusal sends the caller on to the other host, as
/// executors and the command line follow a standby's `NOT_LEADER` to the leader; a dead
/// leader's host answers nothing, and the timeout sends the caller on.
pub async fn connect_daemon(port: u16, standby: bool) -> std::io::Result<turmoil::net::TcpStream> {
    use crate::faults::Target;
    if !standby {
        return turmoil::net::TcpStream::connect((Target::Daemon.host(), port)).await;
    }
    let timeout = std::time::Duration::from_millis(CONNECT_MS_MAX);
    let first = tokio::time::timeout(timeout, turmoil::net::TcpStream::connect((Target::Daemon.host(), port))).await;
    match first {
        Ok(Ok(stream)) => Ok(stream),
        _ => tokio::time::timeout(timeout, turmoil::net::TcpStream::connect((Target::Standby.host(), port)))
            .await
            .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into())),
    }
}

/// How long a caller waits for one daemon host to accept a connection (`standby on`).
pub const CONNECT_MS_MAX: u64 = 5_000;

/// The URL of the conversation a conversation host serves.
pub fn conversation_url(host: &str) -> String {
    format!("{CONVERSATION_URL_PREFIX}{host}")
}

/// The conversation host a URL names, if it names one.
pub fn conversation_host(url: &str) -> Option<&str> {
    url.strip_prefix(CONVERSATION_URL_PREFIX).filter(|host| !host.is_empty())
}

/// What a caller (agent or operator) asks the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum SimOp {
    /// Create the run (and its root) with Auto Resume on or off.
    CreateRun { auto: bool },
    /// Spawn `/root/<name>` and start it.
    Spawn { name: String },
    /// Spawn `/root/<name>` as a CLI worker of `kind` (workspace `/sim/<name>`) and start it.
    SpawnCli { name: String, kind: engine::ExecutorKind },
    /// Start the run's `/root` in a fresh conversation (`worker_continue_now` on it).
    StartRoot,
    /// `worker_progress`.
    Progress { worker: WorkerId, summary: String },
    /// `worker_complete`.
    Complete { worker: WorkerId, summary: String },
    /// `worker_fail`.
    Fail { worker: WorkerId, reason: String },
    /// `worker_await_human`.
    AwaitHuman { worker: WorkerId, question: String },
    /// `worker_resolve_human` (the simulated operator).
    Resolve { worker: WorkerId, answer: String },
    /// `message_send` to the run's root.
    MessageRoot { worker: WorkerId, body: String },
    /// `worker_await_dependency` on another worker's completion.
    AwaitWorker { worker: WorkerId, on: WorkerId },
    /// `worker_pause` (now, or after the current turn).
    Pause { worker: WorkerId, after_turn: bool },
    /// `worker_resume`.
    Resume { worker: WorkerId },
    /// `worker_continue_now` (an explicit, manual continue).
    ContinueNow { worker: WorkerId },
    /// `worker_steer` from root.
    Steer { worker: WorkerId, outcome: String, message: String },
    /// `worker_attach` (the operator binds a worker to another conversation).
    Attach { worker: WorkerId, conversation: String },
    /// `worker_interrupt` (the operator stops a lane for good: `orchestrator worker
    /// stop`, the dashboard's "Stop worker").
    Stop { worker: WorkerId },
    /// The operator looks at the CLI approval requests waiting in "Needs you" and answers
    /// those whose seeded delay has passed (`approval_answer`), sometimes twice or first
    /// with a stale id; the answer is the number of answers the engine accepted.
    ApprovalSweep { seed: u64 },
    /// The simulated operator's sweep: answer human waits, resume workers paused as
    /// ambiguous or failing after looking at them. Never a manual continue.
    OperatorSweep,
    /// Set the run's dead-man policy (`run_set_default_continuation`).
    SetDeadMan { mode: engine::deadman::DeadManMode, after_ms: u64 },
    /// `/root`'s agent recovers every lane without a live conversation into a fresh one
    /// (`worker_continue_now` on each, as the recovery prompt asks); answers how many.
    RecoverLanes,
}

impl SimOp {
    /// The operation a trigger's call makes for a worker.
    pub fn from_call(worker: WorkerId, call: Call) -> SimOp {
        match call {
            Call::Complete => SimOp::Complete { worker, summary: format!("{worker}-done") },
            Call::Fail => SimOp::Fail { worker, reason: format!("{worker}-gave-up") },
            Call::Human => SimOp::AwaitHuman { worker, question: format!("{worker}-raced-question") },
            Call::Pause { after_turn } => SimOp::Pause { worker, after_turn },
            Call::Resume => SimOp::Resume { worker },
        }
    }
}

/// Frames a caller sends to the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ToDaemon {
    /// A caller operation with a caller-chosen id.
    Call { call: u64, op: SimOp },
}

/// Frames the daemon sends a caller.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum FromDaemon {
    /// A caller reply: the created or affected worker, or a rejection code.
    Reply { call: u64, result: Result<Option<WorkerId>, String> },
}

/// Frames the executor (browser tab) sends to a conversation host.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ToChat {
    /// Submit a user message (`steer` while generating).
    Submit { worker: WorkerId, key: String, prompt: String, steer: bool },
    /// Click the Retry control of the delivery-timeout card. The real page offers it and
    /// re-sends the last user message when it is clicked; the executor must never click
    /// it (only the daemon commands a fresh `continue`). Modelled so that "never" is
    /// checked (`oracle::no_retry_clicks`), not true for want of a control.
    ClickRetry,
    /// Click a control of a dialog covering the page (a limit's "Got it", an unknown
    /// modal's close button). The executor must never do it: a person decides. Modelled so
    /// that "never" is checked (the conversation host records every click as a violation).
    ClickDialog,
}

/// Frames a conversation host sends to its tab.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum FromChat {
    /// The page's coarse state changed (or the tab just connected). When a turn ended,
    /// `block` is the tail of the last assistant message (its continuation block).
    /// With a limit, `until_ms` is the reset time the page names (epoch ms) and `detail`
    /// the page's words (a dialog's heading, a limit notice).
    State { state: ConversationState, block: Option<String>, until_ms: Option<u64>, detail: Option<String> },
    /// The submitted message shows as a new user turn.
    Accepted { key: String },
    /// The page refused the submission (closed, busy): nothing was sent.
    Refused { key: String },
    /// The submission went in and the page showed "Message delivery timed out".
    TimedOut { key: String },
    /// The composer's app picker did not offer the orchestrator's app: nothing was typed.
    AppMissing { key: String },
}

/// Writes one frame.
pub async fn write_frame<W: AsyncWrite + Unpin, T: Serialize>(w: &mut W, message: &T) -> std::io::Result<()> {
    let bytes = postcard::to_stdvec(message).map_err(std::io::Error::other)?;
    w.write_u32(bytes.len() as u32).await?;
    w.write_all(&bytes).await?;
    w.flush().await
}

/// Writes one text frame (an executor protocol message).
pub async fn write_text<W: AsyncWrite + Unpin>(w: &mut W, text: &str) -> std::io::Result<()> {
    w.write_u32(text.len() as u32).await?;
    w.write_all(text.as_bytes()).await?;
    w.flush().await
}

/// Reads one text frame; `None` at a clean end of stream.
pub async fn read_text<R: AsyncRead + Unpin>(r: &mut R) -> std::io::Result<Option<String>> {
    let len = match r.read_u32().await {
        Ok(len) => len as usize,
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    };
    if len > FRAME_BYTES_MAX {
        return Err(std::io::Error::other(format!("frame of {len} bytes exceeds {FRAME_BYTES_MAX}")));
    }
    let mut bytes = vec![0; len];
    r.read_exact(&mut bytes).await?;
    String::from_utf8(bytes).map(Some).map_err(std::io::Error::other)
}

/// Reads one frame; `None` at a clean end of stream.
pub async fn read_frame<R: AsyncRead + Unpin, T: DeserializeOwned>(r: &mut R) -> std::io::Result<Option<T>> {
    let len = match r.read_u32().await {
        Ok(len) => len as usize,
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    };
    if len > FRAME_BYTES_MAX {
        return Err(std::io::Error::other(format!("frame of {len} bytes exceeds {FRAME_BYTES_MAX}")));
    }
    let mut bytes = vec![0; len];
    r.read_exact(&mut bytes).await?;
    postcard::from_bytes(&bytes).map(Some).map_err(std::io::Error::other)
}
