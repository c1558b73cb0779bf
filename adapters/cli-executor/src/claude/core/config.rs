//! How a Claude Code session's process starts: the arguments of `claude -p`, and the one
//! list of every flag they can carry ([`FLAGS`]), which the executor checks against the
//! binary's `--help` before it runs a Claude worker (`crate::claude::cli`).
//!
//! Seen with the real 2.1.332 on 2026-12-02 (`docs/cli-agents.md`, "Claude Code (2.1.332)
//! mapping"): `--setting-sources user` reads settings only from `$CLAUDE_CONFIG_DIR` (the
//! session's own config home), so a repository's `.claude/settings.json` hooks do not run;
//! `--mcp-config` expands `${ORCHESTRATOR_MCP_TOKEN}` in a header from the child's
//! environment (the token is never an argument); `--allowedTools=mcp__<server>` lets the
//! server's tools run without a prompt under `dontAsk`; `--disallowedTools=A,B` removes the
//! tools from `system/init`'s list. The `=` forms keep a variadic flag from swallowing the
//! next argument.

use super::effect::Launch;

/// The long name of every flag [`Config::args`] can pass (`-p` is `--print`): a binary
/// whose `--help` lacks one is not run.
pub const FLAGS: [&str; 16] = [
    "--print",
    "--input-format",
    "--output-format",
    "--verbose",
    "--replay-user-messages",
    "--permission-mode",
    "--permission-prompts",
    "--permission-prompt-tool",
    "--strict-mcp-config",
    "--setting-sources",
    "--settings",
    "--mcp-config",
    "--allowedTools",
    "--disallowedTools",
    "--session-id",
    "--resume",
];

/// How sessions are started. The shell fills it from its settings; [`Config::unattended`]
/// alone is what the recordings ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `--permission-mode`: `dontAsk` in the recordings (anything not allowed is denied, never
    /// asked); the shell runs workers in `acceptEdits` (`crate::claude::cli::PERMISSION_MODE`).
    pub permission_mode: String,
    /// `--setting-sources`: which settings files the CLI reads. `None` keeps the CLI's
    /// default (user, project and local: a repository's own hooks run); the shell passes
    /// `user`, which is the session's own config home.
    pub setting_sources: Option<String>,
    /// `--settings`: settings as JSON, beyond the files read. The shell passes Claude
    /// Code's sandbox settings here (`crate::claude::cli::SANDBOX_SETTINGS`) unless the
    /// operator turned the sandbox off.
    pub settings: Option<String>,
    /// `--mcp-config`: the MCP servers as JSON (with `--strict-mcp-config`, the only ones).
    pub mcp_config: Option<String>,
    /// The MCP server a worker completes through: its tools are allowed without a prompt
    /// (`--allowedTools=mcp__<name>`), and every `system/init` must list it as connected.
    pub required_mcp: Option<String>,
    /// `--disallowedTools`: built-in tools denied to the model (those that start work by
    /// themselves, so that only the daemon starts turns).
    pub disallowed_tools: Vec<String>,
    /// Built-in tools allowed without a prompt beyond what the permission mode lets through
    /// (`--allowedTools`, with the MCP server's): `Bash` for a worker that runs commands.
    pub allowed_tools: Vec<String>,
    /// `--approvals ask`: permission prompts go to the executor (`--permission-prompts
    /// host --permission-prompt-tool stdio`: a `control_request` line, answered on stdin)
    /// instead of being denied (`--permission-prompts none`). The flag is hidden from
    /// 2.1.332's `--help`, but its `--permission-prompts` text names it.
    pub asks: bool,
    /// More arguments, last (the operator's `--claude-arg`s: `--model`, `--allowedTools`).
    pub extra_args: Vec<String>,
}

impl Config {
    /// The unattended defaults the recordings ran: nothing asks a person, no MCP server
    /// but the ones given.
    pub fn unattended() -> Config {
        Config {
            permission_mode: "dontAsk".to_string(),
            setting_sources: None,
            settings: None,
            mcp_config: None,
            required_mcp: None,
            disallowed_tools: Vec::new(),
            allowed_tools: Vec::new(),
            asks: false,
            extra_args: Vec::new(),
        }
    }

    /// The arguments for `session`, new or resumed.
    pub fn args(&self, session: &str, launch: Launch) -> Vec<String> {
        let mut args: Vec<String> = [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--replay-user-messages",
            "--permission-mode",
            &self.permission_mode,
            "--permission-prompts",
            if self.asks { "host" } else { "none" },
            "--strict-mcp-config",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        if self.asks {
            args.extend(["--permission-prompt-tool".to_string(), "stdio".to_string()]);
        }
        if let Some(sources) = &self.setting_sources {
            args.push(format!("--setting-sources={sources}"));
        }
        if let Some(json) = &self.settings {
            args.push(format!("--settings={json}"));
        }
        if let Some(json) = &self.mcp_config {
            args.push(format!("--mcp-config={json}"));
        }
        let allowed: Vec<String> =
            self.required_mcp.iter().map(|server| format!("mcp__{server}")).chain(self.allowed_tools.clone()).collect();
        if !allowed.is_empty() {
            args.push(format!("--allowedTools={}", allowed.join(",")));
        }
        if !self.disallowed_tools.is_empty() {
            args.push(format!("--disallowedTools={}", self.disallowed_tools.join(",")));
        }
        let flag = match launch {
            Launch::New => "--session-id",
            Launch::Resume => "--resume",
        };
        args.extend([flag.to_string(), session.to_string()]);
        args.extend(self.extra_args.iter().cloned());
        args
    }
}

/// The flags of `args` by their long names (`-p` as `--print`, `--flag=value` as `--flag`).
pub fn flags_of(args: &[String]) -> Vec<&str> {
    args.iter()
        .filter(|a| a.starts_with('-'))
        .map(|a| if a == "-p" { "--print" } else { a.split('=').next().unwrap_or(a) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Config {
        Config {
            permission_mode: "dontAsk".to_string(),
            setting_sources: Some("user".to_string()),
            settings: Some("{\"sandbox\":{}}".to_string()),
            mcp_config: Some("{\"mcpServers\":{}}".to_string()),
            required_mcp: Some("orchestrator".to_string()),
            disallowed_tools: vec!["CronCreate".to_string(), "Monitor".to_string()],
            allowed_tools: Vec::new(),
            asks: false,
            extra_args: Vec::new(),
        }
    }

    #[test]
    fn every_flag_the_arguments_carry_is_in_the_checked_list() {
        for (launch, asks) in [(Launch::New, false), (Launch::Resume, false), (Launch::New, true)] {
            let args = Config { asks, ..full() }.args("s-1", launch);
            for flag in flags_of(&args) {
                assert!(FLAGS.contains(&flag), "{flag} is passed but not checked against --help");
            }
        }
        let asking = Config { asks: true, ..full() };
        let both: Vec<String> =
            [full().args("s", Launch::New), full().args("s", Launch::Resume), asking.args("s", Launch::New)].concat();
        let used = flags_of(&both);
        for flag in FLAGS {
            assert!(used.contains(&flag), "{flag} is checked but never passed");
        }
    }

    #[test]
    fn the_unattended_arguments_are_the_recorded_ones_and_the_rest_goes_before_the_session() {
        let recorded = "-p --input-format stream-json --output-format stream-json --verbose \
                        --replay-user-messages --permission-mode dontAsk --permission-prompts none \
                        --strict-mcp-config --session-id s-1";
        assert_eq!(Config::unattended().args("s-1", Launch::New).join(" "), recorded);
        let mut config = full();
        config.extra_args = vec!["--model".to_string(), "sonnet".to_string()];
        let args = config.args("s-1", Launch::Resume);
        let tail: Vec<&str> = args.iter().rev().take(4).rev().map(String::as_str).collect();
        assert_eq!(tail, ["--resume", "s-1", "--model", "sonnet"]);
        assert!(args.contains(&"--allowedTools=mcp__orchestrator".to_string()), "{args:?}");
        assert!(args.contains(&"--disallowedTools=CronCreate,Monitor".to_string()), "{args:?}");
        assert!(args.contains(&"--setting-sources=user".to_string()), "{args:?}");
        assert!(args.contains(&"--settings={\"sandbox\":{}}".to_string()), "{args:?}");
    }

    #[test]
    fn asking_sends_permission_prompts_to_the_executor_over_stdio() {
        let args = Config { asks: true, ..full() }.args("s-1", Launch::New).join(" ");
        assert!(args.contains("--permission-prompts host --strict-mcp-config"), "{args}");
        assert!(args.contains("--strict-mcp-config --permission-prompt-tool stdio"), "{args}");
        let unattended = full().args("s-1", Launch::New).join(" ");
        assert!(
            unattended.contains("--permission-prompts none") && !unattended.contains("prompt-tool"),
            "{unattended}"
        );
    }
}
