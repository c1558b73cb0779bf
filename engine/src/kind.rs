//! Executor kinds: which kind of executor runs a worker (a ChatGPT tab or a command-line
//! agent), the workspace a CLI worker works in, and the conversation id form of each kind.
//!
//! A worker's kind is set at spawn and never changes; it decides which connected
//! executors may carry its commands (only one whose `hello` lists the kind) and which
//! conversation ids it may be bound to (`https://chatgpt.com/...` for ChatGPT,
//! `codex:thread/<threadId>` and `claude:session/<sessionId>` for the CLIs).

use crate::limits::{CLI_SESSION_ID_BYTES_MAX, WORKSPACE_BRANCH_BYTES_MAX, WORKSPACE_DIRECTORY_BYTES_MAX};
use crate::reject::{Rejection, RejectionCode};
use serde::{Deserialize, Serialize};

/// Which kind of executor runs a worker. Appended variants keep the stored encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ExecutorKind {
    /// A ChatGPT conversation in a browser tab, driven by the extension (the default:
    /// every worker stored before kinds existed is one).
    #[default]
    Chatgpt,
    /// A Codex CLI thread (`codex app-server`), driven by the CLI executor.
    Codex,
    /// A Claude Code session (`claude -p`), driven by the CLI executor.
    Claude,
}

impl ExecutorKind {
    /// Every kind, for parsing, documentation and tests.
    pub const ALL: [ExecutorKind; 3] = [ExecutorKind::Chatgpt, ExecutorKind::Codex, ExecutorKind::Claude];

    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutorKind::Chatgpt => "chatgpt",
            ExecutorKind::Codex => "codex",
            ExecutorKind::Claude => "claude",
        }
    }

    /// Parses a wire name.
    pub fn parse(s: &str) -> Option<ExecutorKind> {
        ExecutorKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether the kind is a command-line agent, which works in a directory of its own.
    pub fn is_cli(self) -> bool {
        !matches!(self, ExecutorKind::Chatgpt)
    }

    /// The prefix of this kind's conversation ids (`None` for ChatGPT, whose
    /// conversations are page URLs).
    pub fn conversation_prefix(self) -> Option<&'static str> {
        match self {
            ExecutorKind::Chatgpt => None,
            ExecutorKind::Codex => Some("codex:thread/"),
            ExecutorKind::Claude => Some("claude:session/"),
        }
    }

    /// The conversation id of a CLI session (`codex:thread/<id>`), `None` for ChatGPT.
    pub fn conversation_id(self, session: &str) -> Option<String> {
        self.conversation_prefix().map(|p| format!("{p}{session}"))
    }
}

impl std::fmt::Display for ExecutorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a CLI worker works: part of its provenance, set at spawn, sent with each of its
/// commands so the executor starts the session there.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workspace {
    /// The working directory, an absolute path (the executor's host decides whether it
    /// exists; the engine only checks its form).
    pub directory: String,
    /// The branch the worker is meant to work on, when it has one (provenance: shown to
    /// people and printed in the prompt, never checked out by the engine).
    pub branch: Option<String>,
}

impl Workspace {
    /// Checks the workspace's form: `workspace.directory` absolute, one line, no NUL or
    /// control characters, at most [`WORKSPACE_DIRECTORY_BYTES_MAX`] bytes; the branch
    /// non-blank, without whitespace or control characters, at most
    /// [`WORKSPACE_BRANCH_BYTES_MAX`] bytes.
    pub fn validate(&self) -> Result<(), Rejection> {
        let dir = &self.directory;
        let field = "workspace.directory";
        if dir.is_empty() {
            return Err(Rejection::invalid(field, "must not be empty"));
        }
        if dir.len() > WORKSPACE_DIRECTORY_BYTES_MAX {
            return Err(Rejection::invalid(
                field,
                &format!("must be at most {WORKSPACE_DIRECTORY_BYTES_MAX} bytes, got {}", dir.len()),
            ));
        }
        if dir.chars().any(char::is_control) {
            return Err(Rejection::invalid(field, "must not contain NUL or other control characters"));
        }
        if !dir.starts_with('/') {
            return Err(Rejection::invalid(field, &format!("must be an absolute path (starting with /), got {dir:?}")));
        }
        if let Some(branch) = &self.branch {
            let field = "workspace.branch";
            if branch.is_empty() || branch.len() > WORKSPACE_BRANCH_BYTES_MAX {
                return Err(Rejection::invalid(
                    field,
                    &format!("must be 1 to {WORKSPACE_BRANCH_BYTES_MAX} bytes, got {}", branch.len()),
                ));
            }
            if branch.chars().any(|c| c.is_control() || c.is_whitespace()) {
                return Err(Rejection::invalid(field, "must not contain whitespace or control characters"));
            }
        }
        Ok(())
    }
}

/// The executor kind and workspace a new worker gets: what the spawn names, else what
/// its parent has (the kind, and the parent's workspace directory for a CLI lane of a CLI
/// parent; the branch is the lane's own and never inherited). A CLI worker without a
/// directory is refused (`WORKSPACE_REQUIRED`), and so is a workspace on a ChatGPT worker.
pub(crate) fn for_spawn(
    named_kind: Option<ExecutorKind>,
    named_workspace: Option<Workspace>,
    parent: (ExecutorKind, Option<&Workspace>),
) -> Result<(ExecutorKind, Option<Workspace>), Rejection> {
    let kind = named_kind.unwrap_or(parent.0);
    if !kind.is_cli() {
        if named_workspace.is_some() {
            return Err(Rejection::invalid(
                "workspace",
                "only codex and claude workers have a workspace; a chatgpt worker works in its conversation",
            ));
        }
        return Ok((kind, None));
    }
    let inherited = || parent.1.map(|w| Workspace { directory: w.directory.clone(), branch: None });
    let Some(workspace) = named_workspace.or_else(inherited) else {
        return Err(Rejection::new(
            RejectionCode::WorkspaceRequired,
            &format!(
                "a {kind} worker needs workspace.directory, the absolute path of the directory it works in \
                 (a lane of a {kind} parent inherits the parent's directory)"
            ),
        ));
    };
    workspace.validate()?;
    Ok((kind, Some(workspace)))
}

/// The conversation id a worker of `kind` may be bound to: a ChatGPT worker any one-line
/// URL except a CLI session id; a CLI worker exactly `<prefix><session>` with a session id
/// of 1 to [`CLI_SESSION_ID_BYTES_MAX`] bytes of `[A-Za-z0-9_.-]`. (Length and whitespace
/// are checked before, by the generic conversation check.)
pub(crate) fn conversation_for(kind: ExecutorKind, conversation: &str) -> Result<(), Rejection> {
    let field = "conversationUrl";
    match kind.conversation_prefix() {
        None => {
            let cli = ExecutorKind::ALL.into_iter().filter_map(ExecutorKind::conversation_prefix);
            if let Some(prefix) = cli.into_iter().find(|p| conversation.starts_with(p)) {
                return Err(Rejection::invalid(
                    field,
                    &format!(
                        "{prefix}... is a command-line session; a chatgpt worker takes a ChatGPT conversation URL"
                    ),
                ));
            }
            Ok(())
        }
        Some(prefix) => {
            let session = conversation.strip_prefix(prefix).ok_or_else(|| {
                Rejection::invalid(
                    field,
                    &format!("a {kind} worker's conversation is {prefix}<id>, got {conversation:?}"),
                )
            })?;
            let ok = !session.is_empty()
                && session.len() <= CLI_SESSION_ID_BYTES_MAX
                && session.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
            if !ok {
                return Err(Rejection::invalid(
                    field,
                    &format!(
                        "the session id after {prefix} must be 1 to {CLI_SESSION_ID_BYTES_MAX} of A-Z, a-z, 0-9, '_', '.' or '-'"
                    ),
                ));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(directory: &str) -> Workspace {
        Workspace { directory: directory.into(), branch: None }
    }

    #[test]
    fn names_round_trip() {
        for k in ExecutorKind::ALL {
            assert_eq!(ExecutorKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(ExecutorKind::parse("gpt"), None);
        assert_eq!(ExecutorKind::default(), ExecutorKind::Chatgpt);
    }

    #[test]
    fn a_cli_worker_needs_a_directory_and_a_lane_inherits_its_parents() {
        let codex = ExecutorKind::Codex;
        let refused = for_spawn(Some(codex), None, (ExecutorKind::Chatgpt, None)).expect_err("refused");
        assert_eq!(refused.code, RejectionCode::WorkspaceRequired);
        let parent = Workspace { directory: "/src/app".into(), branch: Some("main".into()) };
        let (kind, got) = for_spawn(None, None, (codex, Some(&parent))).expect("inherited");
        assert_eq!((kind, got), (codex, Some(ws("/src/app"))), "the kind and directory, not the branch");
        let (kind, got) = for_spawn(None, None, (ExecutorKind::Chatgpt, None)).expect("default");
        assert_eq!((kind, got), (ExecutorKind::Chatgpt, None));
        let refused = for_spawn(Some(ExecutorKind::Chatgpt), Some(ws("/x")), (codex, None)).expect_err("refused");
        assert_eq!(refused.code, RejectionCode::InvalidArgument);
    }

    #[test]
    fn workspace_forms() {
        assert!(ws("/home/me/repo").validate().is_ok());
        for bad in ["", "relative/path", "./x", "/a\0b", "/a\nb"] {
            let e = ws(bad).validate().expect_err(bad);
            assert_eq!(e.code, RejectionCode::InvalidArgument, "{bad:?}");
            assert!(e.message.starts_with("workspace.directory"), "{}", e.message);
        }
        let long = format!("/{}", "a".repeat(WORKSPACE_DIRECTORY_BYTES_MAX));
        assert!(ws(&long).validate().is_err());
        let branch = |b: &str| Workspace { directory: "/r".into(), branch: Some(b.into()) }.validate();
        assert!(branch("feature/x").is_ok());
        assert!(branch("").is_err() && branch("has space").is_err());
        assert!(branch(&"b".repeat(WORKSPACE_BRANCH_BYTES_MAX + 1)).is_err());
    }

    #[test]
    fn conversation_forms_follow_the_kind() {
        assert!(conversation_for(ExecutorKind::Chatgpt, "https://chatgpt.com/c/6a1f").is_ok());
        assert!(conversation_for(ExecutorKind::Chatgpt, "codex:thread/t1").is_err());
        assert!(conversation_for(ExecutorKind::Codex, "codex:thread/019a-b_c.d").is_ok());
        assert!(conversation_for(ExecutorKind::Claude, "claude:session/5e1d").is_ok());
        for (kind, bad) in [
            (ExecutorKind::Codex, "https://chatgpt.com/c/6a1f"),
            (ExecutorKind::Codex, "claude:session/x"),
            (ExecutorKind::Codex, "codex:thread/"),
            (ExecutorKind::Codex, "codex:thread/a/b"),
            (ExecutorKind::Claude, "claude:session/x?y"),
        ] {
            let e = conversation_for(kind, bad).expect_err(bad);
            assert_eq!(e.code, RejectionCode::InvalidArgument);
        }
        assert_eq!(ExecutorKind::Codex.conversation_id("t1").as_deref(), Some("codex:thread/t1"));
        assert_eq!(ExecutorKind::Chatgpt.conversation_id("t1"), None);
    }
}
