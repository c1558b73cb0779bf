//! The Claude Code binary as the executor runs it: where it is and what it is given
//! ([`ClaudeSettings`]: `--claude`, `--claude-arg`), the surface checked before any Claude
//! worker runs ([`check`]: the pinned version, and every flag of [`claude::FLAGS`] in its
//! `--help`), and the configuration every Claude child gets ([`config`]): settings read
//! from its own config home only, the orchestrator's MCP server (its token taken from the
//! child's environment), no tool that starts work by itself and nothing else of Claude
//! Code's own that starts a turn ([`CONTINUATIONS_OFF`]: hooks, auto-continue at a usage
//! limit, model-proposed goals, cross-session messages, Remote Control; [`BACKGROUND_TASKS_OFF`]:
//! background tasks), the permissions a worker
//! works with (edits inside its working directory, commands through `Bash`), and Claude
//! Code's sandbox around those commands ([`ClaudeSandbox`], `--claude-sandbox`: on unless
//! turned off, and then bubblewrap and socat must be found, [`check_sandbox`]). The check
//! at start also reads the binary's own settings schema for each key of
//! [`CONTINUATIONS_OFF`] ([`check_settings`]): a key the binary no longer knows fails closed.
//!
//! Each rule was seen with the real 2.1.332 on 2026-12-02 (`docs/cli-agents.md`).

use crate::Error;
use crate::base::child::{ENV_PASS_DEFAULT, Spawn};
use crate::base::limits::{CLAUDE_BINARY_BYTES_MAX, CLI_HELP_BYTES_MAX, CLI_SURFACE_TIMEOUT_MS, TRANSCRIPT_BYTES_MAX};
use crate::base::mcp::{MCP_SERVER_NAME, MCP_TOKEN_ENV, McpServer};
use crate::base::settings::{Approvals, ClaudeSandbox, ClaudeSettings};
use crate::claude::{self, Config};
use serde_json::json;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Claude Code version the core was recorded against and the executor runs
/// (`claude --version` prints `2.1.332 (Claude Code)`). Exact: stream-json's lifecycle
/// lines, the uuid deduplication and the session refusals the core relies on are
/// undocumented and have changed between versions, so another version is refused rather
/// than trusted.
pub const CLAUDE_VERSION: &str = "2.1.332";

/// Built-in tools that start work by themselves (a scheduled prompt, a wake-up, a
/// background watcher: listed by 2.1.332's `system/init`); denied, so only the daemon
/// starts turns.
pub const SELF_STARTING_TOOLS: [&str; 3] = ["CronCreate", "ScheduleWakeup", "Monitor"];

/// `--permission-mode` of a worker's session: `acceptEdits`. With `--permission-prompts
/// none` (nothing asks a person: what would prompt is denied), the model writes and edits
/// files inside the session's working directory, and a write or edit outside it is denied
/// ("Path is outside allowed working directories"), as are Bash commands naming a path
/// outside it that Claude Code checks (redirections, `ls`); seen with 2.1.332 on
/// 2026-12-02 (`docs/cli-agents.md`, "Sandbox and approval choices").
pub const PERMISSION_MODE: &str = "acceptEdits";

/// Built-in tools a worker may use without a prompt beyond `acceptEdits`: `Bash`, so the
/// model can run the workspace's commands (builds, tests). Claude Code does not confine a
/// command it allows to the working directory: its sandbox does ([`SANDBOX_SETTINGS`]).
pub const WORKSPACE_TOOLS: [&str; 1] = ["Bash"];

/// `--settings` of every child under [`ClaudeSandbox::Required`]: Claude Code's sandbox
/// (bubblewrap and socat on Linux) around every Bash command, the CLI exiting at start
/// when it cannot set it up (`failIfUnavailable`, rather than running commands
/// unsandboxed), sandboxed commands allowed without a prompt (`autoAllowBashIfSandboxed`)
/// and none let out of it (`allowUnsandboxedCommands: false`: the model's
/// `dangerouslyDisableSandbox` is ignored). The keys are 2.1.332's settings schema (its
/// descriptions in the binary). Seen with 2.1.332 on 2026-12-02 (`docs/cli-agents.md`,
/// "Sandbox and approval choices"): a command writes in the working directory, a write
/// elsewhere (`/tmp`, `$HOME`, the parent directory) fails "Read-only file system", the
/// command has no network, and the MCP server (Claude Code's own connection) still works.
pub const SANDBOX_SETTINGS: &str = r#"{"sandbox":{"enabled":true,"failIfUnavailable":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false}}"#;

/// [`SANDBOX_SETTINGS`] for `--approvals ask`: the same sandbox, but a command may ask to
/// run outside it (`allowUnsandboxedCommands: true`): the model's `Bash` call with
/// `dangerouslyDisableSandbox` then comes to a person as a `can_use_tool` request
/// (`decision_reason_type: "sandboxOverride"`), as a Codex command asks to leave its
/// sandbox; sandboxed commands still run without asking. Seen with 2.1.332 on 2026-12-02
/// (`docs/cli-agents.md`, "Approvals").
pub const SANDBOX_SETTINGS_ASK: &str = r#"{"sandbox":{"enabled":true,"failIfUnavailable":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":true}}"#;

/// The settings every child gets in its `--settings`, whatever the sandbox, so that
/// nothing of Claude Code's own starts a turn (only the daemon does). The keys and their
/// meaning are 2.1.332's settings schema (its descriptions in the binary, read 2026-12-06;
/// `tests/no_foreign_turns.rs` checks the pinned binary still describes each):
/// - `disableAllHooks`: "Disable all hooks and statusLine execution: the hooks defined in
///   settings files and by installed plugins": a `Stop` hook (which can refuse the stop and
///   feed the model another prompt) or a plugin's hook in a settings file the CLI still
///   reads (the session's own config home) never runs;
/// - `autoContinueAtUsageLimit: false`: "When a claude.ai usage limit stops your session,
///   wait for the limit to reset and continue the task automatically" (on when absent,
///   since 2.1.234): off, a worker held by a limit is resumed by the daemon alone;
/// - `modelProposedGoals: "disabled"`: "turns the [session goal] tools off", so the model
///   cannot set a goal that keeps the session going (a typed `/goal` needs a prompt of the
///   daemon's, and "can't run while hooks are restricted (disableAllHooks ...)");
/// - `crossSessionInbound: "refuse"`: "Inbound cross-session peer messages (SendMessage
///   from your other sessions): ... 'refuse' opts this session out" (unset, a message from
///   another session in the same permission class is delivered and starts a turn);
/// - `remoteControlAtStartup: false`: "Start Remote Control bridge automatically each
///   session" off (a person's remote turns are not the daemon's).
///
/// 2.1.332 reads only the last `--settings` (see [`check_sandbox`]), so these travel with
/// the sandbox's in one object ([`settings_json`]).
pub const CONTINUATIONS_OFF: [(&str, &str); 5] = [
    ("disableAllHooks", "true"),
    ("autoContinueAtUsageLimit", "false"),
    ("modelProposedGoals", "\"disabled\""),
    ("crossSessionInbound", "\"refuse\""),
    ("remoteControlAtStartup", "false"),
];

/// The environment every child gets so that no background task starts a turn:
/// `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1`. Seen with 2.1.332 on 2026-12-06 (offline, the
/// mock model asking for `Bash` with `run_in_background: true`): a background command that
/// finishes after the turn ended makes the idle session start a turn of its own (the
/// model gets a `<task-notification>` prompt, a second `result` follows, no line of ours
/// in it); with the variable set the tool refuses the parameter ("An unexpected parameter
/// `run_in_background` was provided"), so no background task runs and no such turn comes.
/// The binary reads it as `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS||...` (any non-empty
/// value); it also turns off background agents.
pub const BACKGROUND_TASKS_OFF: (&str, &str) = ("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS", "1");

/// The one `--settings` object of a child: [`CONTINUATIONS_OFF`], plus the sandbox's
/// (`sandbox`, one of [`SANDBOX_SETTINGS`] and [`SANDBOX_SETTINGS_ASK`]) when it is on.
pub fn settings_json(sandbox: Option<&str>) -> String {
    let mut object = serde_json::Map::new();
    for (key, value) in CONTINUATIONS_OFF {
        object.insert(key.to_string(), serde_json::from_str(value).unwrap_or(serde_json::Value::Null));
    }
    if let Some(serde_json::Value::Object(sandbox)) = sandbox.and_then(|text| serde_json::from_str(text).ok()) {
        object.extend(sandbox);
    }
    serde_json::Value::Object(object).to_string()
}

/// The programs Claude Code's sandbox needs on Linux, looked for on the children's `PATH`.
pub const SANDBOX_PROGRAMS: [&str; 2] = ["bwrap", "socat"];

/// `--setting-sources`: only `user` settings, which are the session's own
/// `CLAUDE_CONFIG_DIR/settings.json` (none is written): a repository's
/// `.claude/settings.json` and `.claude/settings.local.json` (hooks, plugins) are not read.
pub const SETTING_SOURCES: &str = "user";

/// Variables a Claude child also gets from the executor when set: the headless logins
/// Claude Code takes from the environment (code.claude.com/docs/en/env-vars:
/// `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`; `claude setup-token` prints a
/// `CLAUDE_CODE_OAUTH_TOKEN`) and an API endpoint. The session's config home has no login
/// of its own, and a user's credentials file is never copied into it.
pub const CLAUDE_ENV_PASS: [&str; 4] =
    ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"];

/// A Claude Code child, as the base's [`Spawn`] describes one.
impl Spawn {
    /// `claude` for `session` in `cwd` (its arguments come with each spawn), with its own
    /// `CLAUDE_CONFIG_DIR` and `TMPDIR`, the logins of [`CLAUDE_ENV_PASS`], the
    /// auto-updater off (`DISABLE_AUTOUPDATER`: the version checked at start must stay the
    /// one that runs) and background tasks off ([`BACKGROUND_TASKS_OFF`]).
    pub fn claude(session: &str, cwd: &Path, data_dir: &Path) -> Spawn {
        let pass = ENV_PASS_DEFAULT.iter().chain(CLAUDE_ENV_PASS.iter());
        Spawn {
            session: session.to_string(),
            program: PathBuf::from("claude"),
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            env_pass: pass.map(|s| s.to_string()).collect(),
            env_set: [("DISABLE_AUTOUPDATER", "1"), BACKGROUND_TASKS_OFF]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            config_toml: String::new(),
            home_var: "CLAUDE_CONFIG_DIR",
            home_dir: "claude-config",
            private_tmp: true,
            auth_link: None,
        }
    }
}

/// No `--claude-arg` may be a `--settings` ([`Error::ClaudeSettingsReplaced`]), sandbox on
/// or off: 2.1.332 reads only the last one (seen 2026-12-02: a second
/// `--settings={"env":{...}}` after the sandbox's let a command write outside the
/// workspace), so it would turn the sandbox and [`CONTINUATIONS_OFF`] off unseen. Under
/// [`ClaudeSandbox::Required`], every program of [`SANDBOX_PROGRAMS`] must also be found
/// on the `PATH` the children get (`env_set`'s, else the executor's), or
/// [`Error::ClaudeSandboxUnavailable`]: without them 2.1.332 exits at start ("sandbox
/// required but unavailable"), so every Claude worker would fail.
pub fn check_sandbox(settings: &ClaudeSettings) -> Result<(), Error> {
    if let Some(arg) = settings.args.iter().find(|a| *a == "--settings" || a.starts_with("--settings=")) {
        return Err(Error::ClaudeSettingsReplaced { arg: arg.split('=').next().unwrap_or(arg).to_string() });
    }
    if settings.sandbox == ClaudeSandbox::Off {
        return Ok(());
    }
    let path = match settings.env_set.iter().rev().find(|(k, _)| k == "PATH") {
        Some((_, value)) => Some(std::ffi::OsString::from(value)),
        None => std::env::var_os("PATH"),
    };
    let dirs: Vec<PathBuf> = path.as_deref().map(|p| std::env::split_paths(p).collect()).unwrap_or_default();
    let missing: Vec<&str> =
        SANDBOX_PROGRAMS.iter().copied().filter(|program| !dirs.iter().any(|d| executable(&d.join(program)))).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::ClaudeSandboxUnavailable { missing: missing.join(", ") })
}

/// Whether `path` is an executable file.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The core's configuration for a Claude worker's sessions. With `approvals` `ask`,
/// permission prompts come to the executor ([`Config::asks`]), the sandbox lets a command
/// ask to leave it ([`SANDBOX_SETTINGS_ASK`]), and `Bash` is not allowed beforehand: a
/// sandboxed command runs without asking (`autoAllowBashIfSandboxed`), any other asks.
pub fn config(settings: &ClaudeSettings, mcp: Option<&McpServer>, approvals: Approvals) -> Config {
    let asks = approvals == Approvals::Ask;
    let sandbox = if asks { SANDBOX_SETTINGS_ASK } else { SANDBOX_SETTINGS };
    let allowed = if asks { &[][..] } else { &WORKSPACE_TOOLS[..] };
    Config {
        setting_sources: Some(SETTING_SOURCES.to_string()),
        settings: Some(settings_json((settings.sandbox == ClaudeSandbox::Required).then_some(sandbox))),
        mcp_config: mcp.map(|server| mcp_config(&server.url)),
        required_mcp: mcp.map(|_| MCP_SERVER_NAME.to_string()),
        disallowed_tools: SELF_STARTING_TOOLS.iter().map(|t| t.to_string()).collect(),
        allowed_tools: allowed.iter().map(|t| t.to_string()).collect(),
        permission_mode: PERMISSION_MODE.to_string(),
        asks,
        extra_args: settings.args.clone(),
    }
}

/// `--mcp-config`'s JSON: the orchestrator's server over HTTP, with the bearer token as
/// `${ORCHESTRATOR_MCP_TOKEN}`, which 2.1.332 expands from the child's environment (the
/// mock server saw `Authorization: Bearer <the variable's value>`): no token in an argument
/// or a file.
pub fn mcp_config(url: &str) -> String {
    let authorization = format!("Bearer ${{{MCP_TOKEN_ENV}}}");
    json!({"mcpServers": {MCP_SERVER_NAME: {"type": "http", "url": url, "headers": {"Authorization": authorization}}}})
        .to_string()
}

/// Checks the binary's surface: `--version` names [`CLAUDE_VERSION`], `--help` lists
/// every flag of [`claude::FLAGS`] and its settings schema every key of
/// [`CONTINUATIONS_OFF`] ([`check_settings`]). Run with an environment cleared down to `PATH` and
/// `HOME`, and a config home under `scratch` (neither command writes one).
pub async fn check(program: &Path, scratch: &Path) -> Result<(), Error> {
    let surface = |detail: String| Error::ClaudeSurface { program: program.display().to_string(), detail };
    let version = run(program, "--version", scratch).await.map_err(surface)?;
    let help = run(program, "--help", scratch).await.map_err(surface)?;
    check_surface(&version, &help).map_err(surface)?;
    check_settings(program).await
}

/// How far past a key's schema entry (`key:()=>`) its `.describe(` may start (2.1.332: at
/// most 55 bytes).
const DESCRIBE_WITHIN: usize = 600;

/// Checks that the binary at `program` still describes each setting of
/// [`CONTINUATIONS_OFF`] in its settings schema, so that setting it still switches
/// something off: 2.1.332 ignores a key its schema does not know (seen 2026-12-06: `claude
/// doctor` names a mistyped `disableAllHooks` or `autoContinueAtUsageLimit`, says nothing
/// of an unknown key, and `modelProposedGoals` is `.catch`-ed, so only the schema itself
/// tells). The schema is the binary's own zod text, an entry per key:
/// `disableAllHooks:()=>M().optional().describe("Disable all hooks ...")`
/// (`tests/fixtures/claude-2.1.332/settings-schema.txt`). Read in chunks from the file
/// `program` resolves to (0.2 s for 2.1.332's 402 MB when cached); a wrapper script
/// holds no schema and fails closed too ([`Error::ClaudeSurface`], naming the key and the
/// fix).
pub async fn check_settings(program: &Path) -> Result<(), Error> {
    let path = program.to_path_buf();
    let keys: Vec<&'static str> = CONTINUATIONS_OFF.iter().map(|(key, _)| *key).collect();
    let lacking = tokio::task::spawn_blocking(move || schema_lacks(&path, &keys))
        .await
        .map_err(|e| e.to_string())
        .and_then(|found| found);
    let detail = match lacking {
        Ok(lacking) if lacking.is_empty() => return Ok(()),
        Ok(lacking) => format!(
            "its settings schema has no {} (each child sets it so that only the daemon starts turns; install @anthropic-ai/claude-code@{CLAUDE_VERSION} and pass --claude the binary itself, not a wrapper)",
            lacking.join(", ")
        ),
        Err(why) => format!("its settings schema cannot be read: {why}"),
    };
    Err(Error::ClaudeSurface { program: program.display().to_string(), detail })
}

/// The keys of `keys` for which the file at `path` has no schema entry: `key:()=>` with
/// `.describe(` within [`DESCRIBE_WITHIN`] bytes and before the next entry's `:()=>`. Read in 8 MiB chunks, each searched with
/// the previous one's tail, at most [`CLAUDE_BINARY_BYTES_MAX`] bytes.
pub fn schema_lacks(path: &Path, keys: &[&str]) -> Result<Vec<String>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let size = file.metadata().map_err(|e| format!("{}: {e}", path.display()))?.len();
    if size > CLAUDE_BINARY_BYTES_MAX {
        return Err(format!("{} is {size} bytes, over {CLAUDE_BINARY_BYTES_MAX}", path.display()));
    }
    let entries: Vec<Vec<u8>> = keys.iter().map(|key| format!("{key}:()=>").into_bytes()).collect();
    let finders: Vec<memchr::memmem::Finder<'_>> = entries.iter().map(memchr::memmem::Finder::new).collect();
    let describe = memchr::memmem::Finder::new(b".describe(");
    let next_entry = memchr::memmem::Finder::new(b":()=>");
    let keep = entries.iter().map(Vec::len).max().unwrap_or(0) + DESCRIBE_WITHIN;
    let mut found = vec![false; keys.len()];
    let mut buffer: Vec<u8> = Vec::new();
    let mut reader = file.take(size);
    let mut chunk = vec![0u8; 8 * 1024 * 1024];
    loop {
        let read = reader.read(&mut chunk).map_err(|e| format!("{}: {e}", path.display()))?;
        buffer.extend_from_slice(&chunk[..read]);
        for (at, finder) in finders.iter().enumerate() {
            found[at] = found[at]
                || finder.find_iter(&buffer).any(|hit| {
                    let start = hit + entries[at].len();
                    let window = &buffer[start..(start + DESCRIBE_WITHIN).min(buffer.len())];
                    let own = next_entry.find(window).map_or(window, |next| &window[..next]);
                    describe.find(own).is_some()
                });
        }
        if read == 0 || found.iter().all(|f| *f) {
            break;
        }
        let cut = buffer.len().saturating_sub(keep);
        buffer.drain(..cut);
    }
    Ok(keys.iter().zip(found).filter(|(_, f)| !f).map(|(key, _)| key.to_string()).collect())
}

/// The pure part of [`check`]: what `--version` and `--help` printed.
pub fn check_surface(version: &str, help: &str) -> Result<(), String> {
    let printed = version.split_whitespace().next().unwrap_or_default();
    if printed != CLAUDE_VERSION {
        return Err(format!(
            "it is version {:?}, the executor runs {CLAUDE_VERSION} only (npm install @anthropic-ai/claude-code@{CLAUDE_VERSION})",
            version.trim()
        ));
    }
    let missing: Vec<&str> = claude::FLAGS.iter().copied().filter(|flag| !lists(help, flag)).collect();
    if !missing.is_empty() {
        return Err(format!("its --help does not list {}", missing.join(", ")));
    }
    Ok(())
}

/// Whether `help` lists `flag` as a whole word (`--resume` is not `--resume-x`).
fn lists(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        let before = help[..at].chars().next_back();
        let after = help[at + flag.len()..].chars().next();
        before.is_none_or(|c| c.is_whitespace() || c == ',')
            && after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    })
}

/// `program flag`'s stdout, within [`CLI_SURFACE_TIMEOUT_MS`].
async fn run(program: &Path, flag: &str, scratch: &Path) -> Result<String, String> {
    let mut command = tokio::process::Command::new(program);
    command.arg(flag).env_clear().kill_on_drop(true).stdin(std::process::Stdio::null());
    for name in ["PATH", "HOME"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command.env("CLAUDE_CONFIG_DIR", scratch);
    let output = tokio::time::timeout(Duration::from_millis(CLI_SURFACE_TIMEOUT_MS), command.output())
        .await
        .map_err(|_| format!("{flag} did not answer within {CLI_SURFACE_TIMEOUT_MS} ms"))?
        .map_err(|e| format!("{flag}: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("{flag} failed ({}): {}", output.status, stderr.lines().last().unwrap_or_default()));
    }
    let stdout = &output.stdout[..output.stdout.len().min(CLI_HELP_BYTES_MAX)];
    Ok(String::from_utf8_lossy(stdout).into_owned())
}

/// The session's transcript, `<home>/projects/<encoded cwd>/<session>.jsonl` (found by
/// its name under `projects/`, so the CLI's encoding of the directory need not be
/// guessed). A config home with no such file holds no line of the session: the empty
/// text. A missing home, an unreadable or oversized file: an error (nothing can be told).
pub fn read_transcript(home: &Path, session: &str) -> Result<String, String> {
    if !home.is_dir() {
        return Err(format!("no config home {}", home.display()));
    }
    let projects = home.join("projects");
    let dirs = match std::fs::read_dir(&projects) {
        Ok(dirs) => dirs,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(format!("{}: {e}", projects.display())),
    };
    let name = format!("{session}.jsonl");
    let found = dirs.filter_map(Result::ok).map(|d| d.path().join(&name)).find(|p| p.is_file());
    let Some(path) = found else { return Ok(String::new()) };
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(TRANSCRIPT_BYTES_MAX + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > TRANSCRIPT_BYTES_MAX {
        return Err(format!("{} is over {TRANSCRIPT_BYTES_MAX} bytes", path.display()));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded_help() -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-2.1.332/help.txt");
        std::fs::read_to_string(path).expect("the recorded --help")
    }

    #[test]
    fn the_recorded_surface_passes_and_another_version_or_a_missing_flag_does_not() {
        let help = recorded_help();
        assert_eq!(check_surface("2.1.332 (Claude Code)\n", &help), Ok(()));
        let other = check_surface("2.1.333 (Claude Code)\n", &help).expect_err("another version");
        assert!(other.contains("2.1.333") && other.contains("2.1.332 only"), "{other}");
        let without = help.replace("--setting-sources", "--settings-sources-gone");
        let missing = check_surface("2.1.332 (Claude Code)", &without).expect_err("a flag is gone");
        assert_eq!(missing, "its --help does not list --setting-sources");
    }

    #[test]
    fn a_settings_schema_lacking_a_switched_off_key_fails_closed() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-2.1.332/settings-schema.txt");
        let recorded = std::fs::read_to_string(path).expect("the recorded schema entries");
        let keys: Vec<&str> = CONTINUATIONS_OFF.iter().map(|(key, _)| *key).collect();
        let dir = tempfile::tempdir().expect("tempdir");
        let binary = dir.path().join("claude");
        // The entries far apart, across the 8 MiB chunks' edges, as in the 402 MB binary.
        let mut bytes = vec![0u8; 8 * 1024 * 1024 - 20];
        for line in recorded.lines() {
            bytes.extend_from_slice(line.as_bytes());
            bytes.extend(std::iter::repeat_n(b'x', 5 * 1024 * 1024));
        }
        std::fs::write(&binary, &bytes).expect("the fake binary");
        assert_eq!(schema_lacks(&binary, &keys), Ok(Vec::new()));
        // An entry renamed, or left without its description: that key is named.
        let renamed = recorded.replace("autoContinueAtUsageLimit:", "autoContinueAtLimit:");
        std::fs::write(&binary, &renamed).expect("renamed");
        assert_eq!(schema_lacks(&binary, &keys), Ok(vec!["autoContinueAtUsageLimit".to_string()]));
        let undescribed = recorded.replace("M().optional().describe(\"Disable", "M().optional()(\"Disable");
        std::fs::write(&binary, &undescribed).expect("undescribed");
        assert_eq!(schema_lacks(&binary, &keys), Ok(vec!["disableAllHooks".to_string()]));
        // Through the async check: one line, the surface's error, the key and the fix.
        std::fs::write(&binary, &renamed).expect("renamed");
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let err = runtime.block_on(check_settings(&binary)).expect_err("fails closed");
        let line = err.to_string();
        assert_eq!(err.code(), "CLAUDE_SURFACE");
        assert!(line.contains("settings schema has no autoContinueAtUsageLimit") && !line.contains('\n'), "{line}");
        assert!(line.contains("@anthropic-ai/claude-code@2.1.332"), "{line}");
        let gone = runtime.block_on(check_settings(&dir.path().join("nothing"))).expect_err("no file");
        assert!(gone.to_string().contains("cannot be read"), "{gone}");
    }

    #[test]
    fn a_flag_is_listed_only_as_a_whole_word() {
        assert!(lists("  -r, --resume [value]  Resume", "--resume"));
        assert!(lists("  --allowedTools, --allowed-tools <tools...>", "--allowedTools"));
        assert!(!lists("  --resume-session <id>", "--resume"));
        assert!(!lists("  --no-verbose", "--verbose"));
    }

    #[test]
    fn the_mcp_config_names_the_token_variable_never_the_token() {
        let text = mcp_config("http://127.0.0.1:7411/mcp");
        let value: serde_json::Value = serde_json::from_str(&text).expect("json");
        let server = &value["mcpServers"]["orchestrator"];
        assert_eq!(server["type"], "http");
        assert_eq!(server["url"], "http://127.0.0.1:7411/mcp");
        assert_eq!(server["headers"]["Authorization"], "Bearer ${ORCHESTRATOR_MCP_TOKEN}");
        let settings = ClaudeSettings {
            program: PathBuf::from("claude"),
            args: vec!["--model".into()],
            env_set: vec![],
            sandbox: ClaudeSandbox::default(),
        };
        let mcp = McpServer { url: "http://127.0.0.1:7411/mcp".into(), token: "s3cret".into() };
        let args = config(&settings, Some(&mcp), Approvals::Never).args("s-1", claude::Launch::New);
        assert!(!args.iter().any(|a| a.contains("s3cret")), "{args:?}");
        assert!(args.contains(&"--disallowedTools=CronCreate,ScheduleWakeup,Monitor".to_string()), "{args:?}");
        assert!(args.contains(&"--allowedTools=mcp__orchestrator,Bash".to_string()), "{args:?}");
        let mode = args.iter().position(|a| a == "--permission-mode").map(|at| args[at + 1].as_str());
        assert_eq!(mode, Some("acceptEdits"), "{args:?}");
        assert_eq!(args.last().map(String::as_str), Some("--model"));
    }

    #[test]
    fn the_sandbox_settings_are_passed_by_default_and_not_when_off() {
        let mut settings = ClaudeSettings {
            program: PathBuf::from("claude"),
            args: vec![],
            env_set: vec![],
            sandbox: Default::default(),
        };
        let passed = |args: &[String]| -> Vec<serde_json::Value> {
            let given = args.iter().filter_map(|a| a.strip_prefix("--settings="));
            given.map(|text| serde_json::from_str(text).expect("json")).collect()
        };
        let continuations_off = |value: &serde_json::Value| {
            assert_eq!(value["disableAllHooks"], json!(true), "{value}");
            assert_eq!(value["autoContinueAtUsageLimit"], json!(false), "{value}");
            assert_eq!(value["modelProposedGoals"], json!("disabled"), "{value}");
            assert_eq!(value["crossSessionInbound"], json!("refuse"), "{value}");
            assert_eq!(value["remoteControlAtStartup"], json!(false), "{value}");
        };
        let args = config(&settings, None, Approvals::Never).args("s-1", claude::Launch::New);
        let value = passed(&args);
        assert_eq!(value.len(), 1, "one --settings: {args:?}");
        let sandbox: serde_json::Value = serde_json::from_str(SANDBOX_SETTINGS).expect("json");
        assert_eq!(value[0]["sandbox"], sandbox["sandbox"]);
        continuations_off(&value[0]);
        let sandbox = &value[0]["sandbox"];
        assert_eq!(
            [&sandbox["enabled"], &sandbox["failIfUnavailable"], &sandbox["autoAllowBashIfSandboxed"]],
            [&json!(true), &json!(true), &json!(true)]
        );
        assert_eq!(sandbox["allowUnsandboxedCommands"], json!(false));
        let asks = passed(&config(&settings, None, Approvals::Ask).args("s-1", claude::Launch::New));
        assert_eq!(asks[0]["sandbox"]["allowUnsandboxedCommands"], json!(true));
        continuations_off(&asks[0]);
        settings.sandbox = ClaudeSandbox::Off;
        let args = config(&settings, None, Approvals::Never).args("s-1", claude::Launch::Resume);
        let value = passed(&args);
        assert_eq!(value.len(), 1, "the continuations stay off without the sandbox: {args:?}");
        assert!(value[0].get("sandbox").is_none(), "{args:?}");
        continuations_off(&value[0]);
        assert_eq!("off".parse(), Ok(ClaudeSandbox::Off));
        assert_eq!("required".parse(), Ok(ClaudeSandbox::Required));
        assert!("on".parse::<ClaudeSandbox>().is_err());
    }

    #[test]
    fn the_sandbox_check_looks_for_bwrap_and_socat_on_the_childrens_path() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let path = dir.display().to_string();
        let mut settings = ClaudeSettings {
            program: PathBuf::from("claude"),
            args: vec![],
            env_set: vec![("PATH".to_string(), path)],
            sandbox: ClaudeSandbox::Required,
        };
        let err = check_sandbox(&settings).expect_err("neither is there");
        assert_eq!((err.code(), err.to_string().contains("bwrap, socat")), ("CLAUDE_SANDBOX_UNAVAILABLE", true));
        std::fs::write(dir.join("bwrap"), "#!/bin/sh\n").expect("bwrap");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join("bwrap"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let err = check_sandbox(&settings).expect_err("socat is not there");
        assert!(err.to_string().contains("missing: socat"), "{err}");
        std::fs::write(dir.join("socat"), "#!/bin/sh\n").expect("socat");
        std::fs::set_permissions(dir.join("socat"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(check_sandbox(&settings).map_err(|e| e.code()), Ok(()));
        settings.args = vec!["--model".into(), "--settings={\"env\":{}}".into()];
        let err = check_sandbox(&settings).expect_err("a --settings would replace the sandbox's");
        assert_eq!(err.code(), "CLAUDE_SETTINGS_REPLACED");
        assert!(err.to_string().starts_with("--claude-arg --settings: "), "{err}");
        settings.sandbox = ClaudeSandbox::Off;
        assert_eq!(check_sandbox(&settings).map_err(|e| e.code()), Err("CLAUDE_SETTINGS_REPLACED"), "off too");
        settings.args = vec!["--model".into()];
        assert_eq!(check_sandbox(&settings).map_err(|e| e.code()), Ok(()));
    }

    #[test]
    fn a_transcript_is_found_by_its_session_under_any_project_and_its_absence_is_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("claude-config");
        assert!(read_transcript(&home, "s-1").is_err(), "no config home: nothing can be told");
        std::fs::create_dir_all(&home).expect("home");
        assert_eq!(read_transcript(&home, "s-1"), Ok(String::new()), "no session ran here yet");
        let project = home.join("projects").join("-work-app");
        std::fs::create_dir_all(&project).expect("project");
        std::fs::write(project.join("s-2.jsonl"), "other\n").expect("another session");
        assert_eq!(read_transcript(&home, "s-1"), Ok(String::new()));
        std::fs::write(project.join("s-1.jsonl"), "{\"type\":\"user\"}\n").expect("the session");
        assert_eq!(read_transcript(&home, "s-1"), Ok("{\"type\":\"user\"}\n".to_string()));
    }
}
