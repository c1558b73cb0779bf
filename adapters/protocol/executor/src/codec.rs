//! Text frames to messages and back. Every message is a JSON object whose first field is
//! `"v"`; the version is checked before the rest is looked at, so a future version is
//! reported as such rather than as malformed. A version is a number: a `v` that is not
//! one (`"1"`, `[1]`, `{}`, `true`, `null`) claims no version at all, so the message is
//! `MALFORMED` (which keeps the connection), not `UNSUPPORTED_VERSION` (which ends it:
//! the peer speaks another protocol). `docs/protocol/fixtures/rules/version.json` pins it.

use crate::message::{DaemonMessage, ExecutorMessage, PROTOCOL_VERSION, ProtocolErrorCode};
use serde::{Deserialize, Serialize};

/// The largest text frame either side accepts, in bytes (a `hello` with a long journal
/// fits many times over; prompts are capped far below this by the engine).
pub const MESSAGE_BYTES_MAX: usize = 1 << 20;

/// Why a frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Longer than the cap.
    #[error("message of {bytes} bytes exceeds the cap of {max} bytes")]
    TooLarge {
        /// The frame's size.
        bytes: usize,
        /// The cap.
        max: usize,
    },
    /// `v` is a number, but not a version this side speaks.
    #[error("unsupported protocol version {found} (this daemon speaks v{PROTOCOL_VERSION})")]
    UnsupportedVersion {
        /// The `v` found, as written.
        found: String,
    },
    /// Not JSON, no `v` or a `v` that is not a number, or JSON that fits no message of
    /// this version.
    #[error("malformed message: {0}")]
    Malformed(String),
}

impl Error {
    /// The `protocol.error` code for this error.
    pub fn code(&self) -> ProtocolErrorCode {
        match self {
            Error::TooLarge { .. } => ProtocolErrorCode::TooLarge,
            Error::UnsupportedVersion { .. } => ProtocolErrorCode::UnsupportedVersion,
            Error::Malformed(_) => ProtocolErrorCode::Malformed,
        }
    }
}

/// The version probe: only `v` is read.
#[derive(Deserialize)]
struct Probe {
    v: Option<serde_json::Value>,
}

fn decode<T: serde::de::DeserializeOwned>(text: &str, bytes_max: usize) -> Result<T, Error> {
    if text.len() > bytes_max {
        return Err(Error::TooLarge { bytes: text.len(), max: bytes_max });
    }
    let probe: Probe = serde_json::from_str(text).map_err(|e| Error::Malformed(e.to_string()))?;
    match probe.v {
        None | Some(serde_json::Value::Null) => return Err(Error::Malformed("missing field `v`".into())),
        // `1.0` is the number 1 too (as JavaScript reads it).
        Some(serde_json::Value::Number(n)) if n.as_f64() == Some(f64::from(PROTOCOL_VERSION)) => {}
        Some(serde_json::Value::Number(n)) => return Err(Error::UnsupportedVersion { found: n.to_string() }),
        Some(other) => {
            let kind = match other {
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::Object(_) => "an object",
                _ => "a boolean",
            };
            return Err(Error::Malformed(format!("`v` must be a number (the protocol version), not {kind}")));
        }
    }
    serde_json::from_str(text).map_err(|e| Error::Malformed(e.to_string()))
}

/// Decodes a message from an executor, refusing frames over `bytes_max`.
pub fn decode_executor(text: &str, bytes_max: usize) -> Result<ExecutorMessage, Error> {
    decode(text, bytes_max)
}

/// Decodes a message from the daemon (the executor's side), refusing frames over `bytes_max`.
pub fn decode_daemon(text: &str, bytes_max: usize) -> Result<DaemonMessage, Error> {
    decode(text, bytes_max)
}

/// Encodes a message as one compact JSON object beginning with `"v":1`.
pub fn encode<T: Serialize>(message: &T) -> String {
    // Both message enums serialize as objects (internally tagged); an object always
    // starts with `{`, so `v` is spliced in front of the tag.
    let body = serde_json::to_string(message).unwrap_or_else(|e| panic!("protocol messages always serialize: {e}"));
    assert!(body.starts_with("{\"type\":"), "a protocol message serializes as a tagged object");
    format!("{{\"v\":{PROTOCOL_VERSION},{}", &body[1..])
}
