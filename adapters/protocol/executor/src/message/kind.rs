//! The executor kinds on the wire: `capabilities.kinds` of a `hello`, and a command's
//! `executorKind` and `workspace` (present only for CLI workers, so that every ChatGPT
//! command keeps its bytes).

use engine::{ExecutorKind, Workspace};
use serde::{Deserialize, Serialize};

/// An executor kind on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecutorKindWire {
    /// A ChatGPT tab driven by the browser extension.
    #[serde(rename = "chatgpt")]
    Chatgpt,
    /// A Codex CLI thread.
    #[serde(rename = "codex")]
    Codex,
    /// A Claude Code session.
    #[serde(rename = "claude")]
    Claude,
}

impl From<ExecutorKind> for ExecutorKindWire {
    fn from(k: ExecutorKind) -> ExecutorKindWire {
        match k {
            ExecutorKind::Chatgpt => ExecutorKindWire::Chatgpt,
            ExecutorKind::Codex => ExecutorKindWire::Codex,
            ExecutorKind::Claude => ExecutorKindWire::Claude,
        }
    }
}

impl From<ExecutorKindWire> for ExecutorKind {
    fn from(k: ExecutorKindWire) -> ExecutorKind {
        match k {
            ExecutorKindWire::Chatgpt => ExecutorKind::Chatgpt,
            ExecutorKindWire::Codex => ExecutorKind::Codex,
            ExecutorKindWire::Claude => ExecutorKind::Claude,
        }
    }
}

/// The kinds of a `hello` that names none (`capabilities.kinds` absent): the browser
/// extension, which runs ChatGPT workers only.
pub fn default_kinds() -> Vec<ExecutorKind> {
    vec![ExecutorKind::Chatgpt]
}

/// The engine's kinds for `capabilities.kinds` (absent: [`default_kinds`]).
pub fn kinds_of(wire: Option<&[ExecutorKindWire]>) -> Vec<ExecutorKind> {
    wire.map(|ks| ks.iter().map(|k| ExecutorKind::from(*k)).collect()).unwrap_or_else(default_kinds)
}

/// A CLI worker's workspace: `{"directory": "/abs/path", "branch": "name" | null}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceWire {
    /// The absolute working directory the session runs in.
    pub directory: String,
    /// The worker's branch, when it has one (always written, `null` when absent).
    pub branch: Option<String>,
}

impl From<&Workspace> for WorkspaceWire {
    fn from(w: &Workspace) -> WorkspaceWire {
        WorkspaceWire { directory: w.directory.clone(), branch: w.branch.clone() }
    }
}

impl From<WorkspaceWire> for Workspace {
    fn from(w: WorkspaceWire) -> Workspace {
        Workspace { directory: w.directory, branch: w.branch }
    }
}
