//! The executor's settings, as the command line gives them (`orchestrator executor-cli`):
//! how the children of each CLI start, where the state lives, the orchestrator's MCP
//! server, the kinds run and the approval mode. Plain data, read by both rooms and the
//! loop; what each CLI makes of them is its room's (`codex::home`, `claude::cli`).

use crate::base::mcp::McpServer;
use executor_protocol::ExecutorKindWire;
use std::path::PathBuf;

/// What every worker's child is started with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The Codex CLI (`codex`, or a stand-in in tests).
    pub program: PathBuf,
    /// Its arguments (`app-server`, then any `-c key=value`).
    pub args: Vec<String>,
    /// Variables set for a Codex child, beyond the allowlist.
    pub env_set: Vec<(String, String)>,
    /// The executor's state directory: journal, leases, session homes.
    pub state_dir: PathBuf,
    /// The working directory for a create whose command names none (`--workspace`).
    pub workspace: Option<String>,
    /// The orchestrator's MCP server, which every child is configured with (as required)
    /// and which must answer before a prompt goes in. `None` only in tests of the shell
    /// that run no turn needing it; `orchestrator executor-cli` always sets it.
    pub mcp: Option<McpServer>,
    /// How Claude Code children start; `None`: this executor runs no Claude worker.
    pub claude: Option<ClaudeSettings>,
    /// The kinds this executor runs, announced in `hello` (`capabilities.kinds`); a
    /// command of another kind is refused.
    pub kinds: Vec<ExecutorKindWire>,
    /// The person's Codex login (`--codex-auth`, checked by `codex::home::check_auth_file`),
    /// linked into every session's `CODEX_HOME`; `None`: the sessions have no login.
    pub codex_auth: Option<PathBuf>,
    /// `--approvals`: `never` (no prompts, the sandbox guards the work) or `ask` (a Codex
    /// approval request, or a Claude Code tool permission request, waits for a person's
    /// answer from the dashboard).
    pub approvals: Approvals,
}

/// How threads are asked for approval (`--approvals`); each core maps it to its CLI
/// (Codex's `approvalPolicy`: `Approvals::policy`, in the Codex room; Claude Code's permission
/// prompts: `claude::cli::config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Approvals {
    /// `approvalPolicy: never`: no prompts; the sandbox guards the work (the default).
    #[default]
    Never,
    /// `approvalPolicy: on-request` with the same sandbox: a request waits for a person.
    Ask,
}

/// How Claude Code children start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeSettings {
    /// The `claude` binary (`--claude`).
    pub program: PathBuf,
    /// Arguments added after the executor's own (`--claude-arg`: `--model`, `--allowedTools`).
    pub args: Vec<String>,
    /// Variables set for every child, beyond the allowlist (tests: the mock API's address).
    /// A `PATH` here is also where `claude::cli::check_sandbox` looks, since the children's
    /// CLI does.
    pub env_set: Vec<(String, String)>,
    /// Claude Code's sandbox on or off (`--claude-sandbox`).
    pub sandbox: ClaudeSandbox,
}

/// Whether Claude workers' commands run in Claude Code's sandbox (`--claude-sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClaudeSandbox {
    /// `claude::cli::SANDBOX_SETTINGS` on every child; the executor does not run Claude
    /// workers where bubblewrap or socat is missing (`claude::cli::check_sandbox`).
    #[default]
    Required,
    /// No sandbox: an allowed command runs with the executor user's rights (logged once as
    /// a warning at start).
    Off,
}

impl std::str::FromStr for ClaudeSandbox {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "required" => Ok(ClaudeSandbox::Required),
            "off" => Ok(ClaudeSandbox::Off),
            other => Err(format!("{other:?}: expected required or off")),
        }
    }
}

/// `--account KIND=NAME:MAX` (e.g. `codex=team:6`): this host's workers of KIND run under
/// the account NAME, which allows MAX turns at once across every host that names it.
/// The rest of the checks (a kind this executor runs, one per kind) are the daemon's
/// `accounts_problem`, run again at start.
pub fn parse_account(spec: &str) -> Result<executor_protocol::AccountWire, String> {
    let bad = || format!("{spec:?}: expected KIND=NAME:MAX, e.g. codex=team:6");
    let (kind, rest) = spec.split_once('=').ok_or_else(bad)?;
    let (name, max) = rest.rsplit_once(':').ok_or_else(bad)?;
    let kind = match kind {
        "codex" => executor_protocol::ExecutorKindWire::Codex,
        "claude" => executor_protocol::ExecutorKindWire::Claude,
        other => return Err(format!("{spec:?}: {other:?} is not a CLI kind (codex or claude)")),
    };
    let turns_max = max.parse::<u32>().map_err(|_| format!("{spec:?}: {max:?} is not a number of turns"))?;
    let account = executor_protocol::AccountWire { kind, name: name.to_string(), turns_max };
    let kinds = [engine::ExecutorKind::from(kind)];
    match executor_protocol::accounts_problem(std::slice::from_ref(&account), &kinds) {
        Some(problem) => Err(format!("{spec:?}: {problem}")),
        None => Ok(account),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_account;

    #[test]
    fn an_account_flag_is_kind_name_and_cap_or_a_clear_error() {
        let team = parse_account("codex=team:6").expect("valid");
        assert_eq!(
            (team.kind, team.name.as_str(), team.turns_max),
            (executor_protocol::ExecutorKindWire::Codex, "team", 6)
        );
        let colons = parse_account("claude=ops:eu:2").expect("the cap is after the last colon");
        assert_eq!(colons.name, "ops:eu");
        for (spec, why) in [
            ("codex", "expected KIND=NAME:MAX"),
            ("codex=team", "expected KIND=NAME:MAX"),
            ("chatgpt=team:2", "is not a CLI kind"),
            ("codex=team:many", "is not a number of turns"),
            ("codex=team:0", "turnsMax 0"),
            ("codex=a b:1", "printable ASCII"),
        ] {
            let error = parse_account(spec).expect_err(spec);
            assert!(error.contains(why), "{spec}: {error}");
        }
    }
}
