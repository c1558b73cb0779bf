//! The simulated network's messages and their framing (length-prefixed postcard).
//!
//! The real executor protocol is JSON over WebSocket (the bridge's); the simulator
//! carries the same engine inputs and commands, framed compactly, over turmoil TCP.

use engine::ExecutorCommand;
use engine::ids::WorkerId;
use engine::input::ExecutorInput;
use engine::model::ConversationState;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest frame accepted; a larger length prefix is a protocol error.
pub const FRAME_BYTES_MAX: usize = 1 << 20;
/// The daemon's port on the simulated network.
pub const DAEMON_PORT: u16 = 7411;
/// A conversation host's port.
pub const CHAT_PORT: u16 = 443;

/// What a caller (agent or operator) asks the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum SimOp {
    /// Create the run (and its root) with Auto Resume on or off.
    CreateRun { auto: bool },
    /// Spawn `/root/<name>` and start it.
    Spawn { name: String },
    /// Start the run's `/root` in a fresh conversation (`worker_continue_now` on it).
    StartRoot,
    /// `worker_progress`.
    Progress { worker: WorkerId, summary: String },
    /// `worker_complete`.
    Complete { worker: WorkerId, summary: String },
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
    /// The simulated operator's sweep: answer human waits, resume workers paused as
    /// ambiguous or failing after looking at them. Never a manual continue.
    OperatorSweep,
}

/// Frames sent to the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ToDaemon {
    /// An executor report.
    Executor(ExecutorInput),
    /// A caller operation with a caller-chosen id.
    Call { call: u64, op: SimOp },
}

/// Frames sent by the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum FromDaemon {
    /// An executor command.
    Command(ExecutorCommand),
    /// A caller reply: the created or affected worker, or a rejection code.
    Reply { call: u64, result: Result<Option<WorkerId>, String> },
}

/// Frames the executor (browser tab) sends to a conversation host.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ToChat {
    /// Submit a user message (`steer` while generating).
    Submit { worker: WorkerId, key: String, prompt: String, steer: bool },
}

/// Frames a conversation host sends to its tab.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum FromChat {
    /// The page's coarse state changed (or the tab just connected). When a turn ended,
    /// `block` is the tail of the last assistant message (its continuation block).
    State { state: ConversationState, block: Option<String> },
    /// The submitted message shows as a new user turn.
    Accepted { key: String },
    /// The page refused the submission (closed, busy): nothing was sent.
    Refused { key: String },
}

/// Writes one frame.
pub async fn write_frame<W: AsyncWrite + Unpin, T: Serialize>(w: &mut W, message: &T) -> std::io::Result<()> {
    let bytes = postcard::to_stdvec(message).map_err(std::io::Error::other)?;
    w.write_u32(bytes.len() as u32).await?;
    w.write_all(&bytes).await?;
    w.flush().await
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
