//! Errors as callers see them: a stable code and a sentence to act on.

use engine::Rejection;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Codes the adapters add to the engine's (`engine::RejectionCode::as_str`).
pub mod codes {
    /// The arguments are not valid JSON for the tool, or a field does not parse.
    pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
    /// The engine has stopped (shutting down or after a store failure); retry later.
    pub const ENGINE_UNAVAILABLE: &str = "ENGINE_UNAVAILABLE";
    /// A bug in the server; the daemon stays up and the call had no effect it knows of.
    pub const INTERNAL: &str = "INTERNAL";
}

/// Longest message an error carries: decoding errors may quote the offending value,
/// which can be as large as the request body.
const MESSAGE_BYTES_MAX: usize = 512;

/// A refused or failed call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorOut {
    /// Stable code, e.g. `WORKER_TERMINAL`, `UNKNOWN_WORKER`, `INVALID_ARGUMENT`.
    pub code: String,
    /// What went wrong and what to do about it; names the offending field when there is one.
    pub message: String,
}

impl ErrorOut {
    /// An error with a code and a message (cut to a bounded length).
    pub fn new(code: &str, message: &str) -> ErrorOut {
        ErrorOut { code: code.to_string(), message: cut(message) }
    }

    /// `INVALID_ARGUMENT` naming the field.
    pub fn invalid(field: &str, problem: &str) -> ErrorOut {
        ErrorOut::new(codes::INVALID_ARGUMENT, &format!("{field}: {problem}"))
    }

    /// The engine stopped before answering.
    pub fn unavailable() -> ErrorOut {
        ErrorOut::new(
            codes::ENGINE_UNAVAILABLE,
            "the orchestrator engine has stopped (shutdown or store failure); the call may not have taken effect",
        )
    }

    /// A server bug.
    pub fn internal(message: &str) -> ErrorOut {
        ErrorOut::new(codes::INTERNAL, message)
    }
}

impl From<Rejection> for ErrorOut {
    fn from(r: Rejection) -> ErrorOut {
        ErrorOut::new(r.code.as_str(), &r.message)
    }
}

impl std::fmt::Display for ErrorOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

fn cut(message: &str) -> String {
    if message.len() <= MESSAGE_BYTES_MAX {
        return message.to_string();
    }
    let mut end = MESSAGE_BYTES_MAX;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &message[..end])
}

/// Decodes tool arguments, naming the field that does not fit (`assignment.objective:
/// invalid type: integer, expected a string`). A missing argument object counts as `{}`.
pub fn decode<T: DeserializeOwned>(arguments: serde_json::Value) -> Result<T, ErrorOut> {
    let arguments = match arguments {
        serde_json::Value::Null => serde_json::Value::Object(serde_json::Map::new()),
        other => other,
    };
    serde_path_to_error::deserialize(arguments).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            // Missing and unknown fields are reported by serde at the top level and
            // already name the field.
            ErrorOut::new(codes::INVALID_ARGUMENT, &inner)
        } else {
            ErrorOut::invalid(&path, &inner)
        }
    })
}
