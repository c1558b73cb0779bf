//! Executor kinds and a CLI worker's workspace in the caller surface: `worker_spawn`'s
//! `executor` and `workspace` arguments, and the `workspace` a worker view shows.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An executor kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorKindArg {
    /// A ChatGPT conversation in a browser tab, driven by the extension.
    Chatgpt,
    /// A Codex CLI thread, driven by the CLI executor.
    Codex,
    /// A Claude Code session, driven by the CLI executor.
    Claude,
}

impl From<ExecutorKindArg> for engine::ExecutorKind {
    fn from(k: ExecutorKindArg) -> engine::ExecutorKind {
        match k {
            ExecutorKindArg::Chatgpt => engine::ExecutorKind::Chatgpt,
            ExecutorKindArg::Codex => engine::ExecutorKind::Codex,
            ExecutorKindArg::Claude => engine::ExecutorKind::Claude,
        }
    }
}

/// A CLI worker's workspace.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceArgs {
    /// Absolute path of the directory the worker's session runs in (up to 4096 bytes, no
    /// control characters), e.g. `/home/me/src/app`.
    pub directory: String,
    /// The branch the worker works on, for provenance (up to 255 bytes, no whitespace).
    #[serde(default)]
    pub branch: Option<String>,
}

impl From<WorkspaceArgs> for engine::Workspace {
    fn from(w: WorkspaceArgs) -> engine::Workspace {
        engine::Workspace { directory: w.directory, branch: w.branch }
    }
}

/// A CLI worker's workspace in a worker view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceOut {
    /// Absolute path of the directory its session runs in.
    pub directory: String,
    /// Its branch, when it has one.
    pub branch: Option<String>,
}

impl From<&engine::Workspace> for WorkspaceOut {
    fn from(w: &engine::Workspace) -> WorkspaceOut {
        WorkspaceOut { directory: w.directory.clone(), branch: w.branch.clone() }
    }
}
