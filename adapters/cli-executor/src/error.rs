//! The crate's one error type: what went wrong reading the app-server or serving a
//! command, each with a stable code for logs and tests.

use thiserror::Error;

/// Everything the core can refuse. A command the CLI refused is not an error here: it
/// becomes a failed command result with a protocol code.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// A line from the app-server is not JSON or fits no JSON-RPC message.
    #[error("malformed app-server message: {detail}")]
    Malformed {
        /// What did not fit.
        detail: String,
    },
    /// A line longer than [`crate::limits::LINE_BYTES_MAX`].
    #[error("app-server line of {bytes} bytes is over the limit")]
    LineTooLong {
        /// Its length.
        bytes: usize,
    },
    /// A response whose id names no request in flight (answered twice, or never asked).
    #[error("response to unknown request id {id}")]
    UnknownResponse {
        /// The id it carried.
        id: String,
    },
    /// [`crate::limits::REQUESTS_IN_FLIGHT_MAX`] requests are already outstanding.
    #[error("too many requests in flight")]
    InFlightFull,
    /// [`crate::limits::COMMANDS_WAITING_MAX`] commands are already waiting.
    #[error("too many commands waiting")]
    WaitingFull,
    /// [`crate::limits::THREADS_MAX`] threads are already hosted.
    #[error("too many threads")]
    ThreadsFull,
    /// A command this core does not serve for the conversation it names.
    #[error("no thread {thread} is managed here")]
    UnknownThread {
        /// The thread id (the conversation) the command named.
        thread: String,
    },
}

impl Error {
    /// The stable code: logs and tests match on it, never on the sentence.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Malformed { .. } => "MALFORMED",
            Error::LineTooLong { .. } => "LINE_TOO_LONG",
            Error::UnknownResponse { .. } => "UNKNOWN_RESPONSE",
            Error::InFlightFull => "IN_FLIGHT_FULL",
            Error::WaitingFull => "WAITING_FULL",
            Error::ThreadsFull => "THREADS_FULL",
            Error::UnknownThread { .. } => "UNKNOWN_THREAD",
        }
    }
}
