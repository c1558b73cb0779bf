//! A Codex session's own `CODEX_HOME`, as the executor prepares it before every spawn: the
//! `config.toml` (unattended, no goal loop, the orchestrator's MCP server required and its
//! tools run without an approval prompt) and the person's login, linked in.
//!
//! Every key was checked against the real codex-cli 0.169.0 on 2026-12-02
//! (`codex app-server --strict-config --print-startup-config` refuses an unknown key or
//! value; `tests/home.rs` runs it on this text with `CODEX_BIN`):
//! - `required = true`: a server that does not complete the MCP handshake makes
//!   `thread/start` and `thread/resume` fail (-32603 "required MCP servers failed to
//!   initialize"); the child stays up. Recorded: `mcp-down.jsonl`, `mcp-resume-down.jsonl`.
//! - `default_tools_approval_mode = "approve"`: without it, a tool the server does not mark
//!   read-only (`worker_complete`, `worker_progress`) fails at once under `approval_policy =
//!   "never"` with "MCP tool call requires approval, but approval policy is never" (seen
//!   2026-12-02); read-only tools ran either way. The values are `auto`, `prompt`, `writes`,
//!   `approve`.
//! - `[features] goals = false`: the `/goal` loop would start turns of its own; with it off
//!   the model is offered no goal tools and `thread/goal/get` answers -32600 "goals feature
//!   is disabled" (`mcp-ready.jsonl`).
//! - `[features] hooks = false` and `plugins = false` (issue 30): a `Stop` hook (whose
//!   `decision: "block"` makes Codex start another turn from its reason) or a plugin's
//!   hooks would add continuations the daemon does not know of; off here, none runs, even
//!   one planted in this very home. [`FEATURES_OFF`] are checked at start against the
//!   binary's own `codex features list` (`crate::codex::surface`): a feature that is gone
//!   or `removed` refuses Codex workers rather than run them unguarded (and
//!   `--strict-config` would refuse the key anyway).
//! - `[features] in_app_local_automation = false`: 0.169.0 carries thread automations
//!   (`automation_cron_scheduled`, `automation_heartbeat_scheduled`,
//!   `automation_heartbeat_run_now` in the binary's strings, read 2026-12-06), which start a
//!   thread's turn on a schedule; stable and on by default in `codex features list`. Nothing
//!   the daemon asked for may start a turn, so it is off and checked at start like the others
//!   (not seen acting offline: an automation needs the app's scheduler and a login).
//! - `cli_auth_credentials_store = "file"`: the login is read from `auth.json` in this home,
//!   never from a keyring entry, whose key 0.169.0 derives from the home's path (so a
//!   person's keyring login is never found here anyway).
//!
//! The login ([`crate::base::child::link_auth`], as the base's child prepares the home):
//! `auth.json` here is a symbolic link to the one file the person names (`--codex-auth
//! FILE`), never a copy. 0.169.0 refreshes a ChatGPT login by writing through the link
//! under a lock next to the file itself, and a session whose own refresh lost the race
//! reloads the file: two sessions linked to one file both went on after one refresh, while
//! with copies the second failed ("refresh token was already used") and the person's own
//! file kept the spent token (seen 2026-12-02; `tests/home.rs` replays it).

use crate::Error;
use crate::base::child::{ENV_PASS_DEFAULT, Spawn};
use crate::base::mcp::{MCP_SERVER_NAME, MCP_TOKEN_ENV, McpServer};
use crate::base::settings::Settings;
use crate::codex::Config;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The top of every session's `config.toml`: the unattended defaults (the core also sends
/// them with every `thread/start`), the login read from `auth.json` only, and no goal loop.
/// The orchestrator's MCP server follows when the executor has one ([`config_toml`]).
pub const CONFIG_TOML_BASE: &str = "# Written by the orchestrator's cli-executor: this session's own CODEX_HOME.\n\
approval_policy = \"never\"\n\
sandbox_mode = \"workspace-write\"\n\
cli_auth_credentials_store = \"file\"\n\
\n\
[features]\n\
goals = false\n\
hooks = false\n\
plugins = false\n\
in_app_local_automation = false\n";

/// The features every session turns off (`[features] NAME = false` in [`CONFIG_TOML_BASE`]):
/// each can start a turn the daemon did not ask for (the `/goal` loop, a `Stop` hook, a
/// plugin's hooks, a scheduled thread automation). 0.169.0's `codex features list` names
/// each, stage `stable`, on by default (seen 2026-12-06).
pub const FEATURES_OFF: [&str; 4] = ["goals", "hooks", "plugins", "in_app_local_automation"];

/// A Codex child, as the base's [`Spawn`] describes one.
impl Spawn {
    /// `codex app-server` for `session` in `cwd`, with the default allowlist and config,
    /// and a `TMPDIR` of its own ([`crate::base::tmpdir`]): never a prefix of its
    /// `CODEX_HOME`, so 0.169.0 installs its sandbox helper even when the data directory is
    /// under `/tmp`.
    pub fn codex(session: &str, cwd: &Path, data_dir: &Path) -> Spawn {
        Spawn {
            session: session.to_string(),
            program: PathBuf::from("codex"),
            args: vec!["app-server".to_string()],
            cwd: cwd.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            env_pass: ENV_PASS_DEFAULT.iter().map(|s| s.to_string()).collect(),
            env_set: Vec::new(),
            config_toml: CONFIG_TOML_BASE.to_string(),
            home_var: "CODEX_HOME",
            home_dir: "codex-home",
            private_tmp: true,
            auth_link: None,
        }
    }
}

/// The session's `config.toml`: [`CONFIG_TOML_BASE`], then the orchestrator's MCP server
/// when there is one: required, its token read from [`MCP_TOKEN_ENV`] (the token itself is
/// never written here), its tools run without an approval prompt.
pub fn config_toml(mcp: Option<&McpServer>) -> Result<String, Error> {
    let mut text = CONFIG_TOML_BASE.to_string();
    if let Some(server) = mcp {
        let url = toml_string(&server.url)
            .ok_or_else(|| Error::BadOption { detail: format!("--mcp-url {:?}: not a usable URL", server.url) })?;
        text.push_str(&format!(
            "\n[mcp_servers.{MCP_SERVER_NAME}]\nurl = {url}\nbearer_token_env_var = \"{MCP_TOKEN_ENV}\"\nrequired = true\ndefault_tools_approval_mode = \"approve\"\n"
        ));
    }
    Ok(text)
}

/// How a worker's `codex app-server` child starts under `settings` in `cwd`: the settings'
/// program, arguments and variables, the MCP token in [`MCP_TOKEN_ENV`], the session's
/// [`config_toml`] and login link.
pub fn codex_spawn(settings: &Settings, session: &str, cwd: &Path) -> Result<Spawn, Error> {
    let mut spec = Spawn::codex(session, cwd, &settings.state_dir);
    spec.program.clone_from(&settings.program);
    spec.args.clone_from(&settings.args);
    spec.env_set.clone_from(&settings.env_set);
    if let Some(server) = &settings.mcp {
        spec.env_set.extend(server.env());
    }
    spec.config_toml = config_toml(settings.mcp.as_ref())?;
    spec.auth_link.clone_from(&settings.codex_auth);
    Ok(spec)
}

/// The core's configuration for a worker in `cwd`: unattended, no prompt before the
/// orchestrator's MCP server is ready (when there is one) and `thread/goal/get` shows no goal.
pub fn codex_config(settings: &Settings, cwd: &str) -> Config {
    let guarded = Config::guarded(cwd, settings.mcp.as_ref().map(|_| MCP_SERVER_NAME));
    Config { approval_policy: settings.approvals.policy().to_string(), ..guarded }
}

/// `text` as a TOML basic string; `None` if it holds a control character.
fn toml_string(text: &str) -> Option<String> {
    if text.chars().any(char::is_control) {
        return None;
    }
    Some(format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"")))
}

/// The login file the person names, checked before any session uses it: an absolute path
/// to a regular file (after links) owned by this user that no one else may read or write
/// (mode `0600` or stricter, as Codex itself writes it). Its contents are never read here.
pub fn check_auth_file(path: &Path) -> Result<PathBuf, Error> {
    let bad = |detail: &str| Error::BadOption { detail: format!("--codex-auth {}: {detail}", path.display()) };
    let file = std::fs::canonicalize(path).map_err(|e| bad(&e.to_string()))?;
    let meta = std::fs::metadata(&file).map_err(|e| bad(&e.to_string()))?;
    if !meta.is_file() {
        return Err(bad("not a regular file"));
    }
    if meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(bad("owned by another user"));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(bad("group or others may access it (chmod 600 it, as `codex login` does)"));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::child::{AUTH_FILE_NAME, link_auth};

    #[test]
    fn the_config_names_the_server_and_the_token_variable_never_the_token() {
        let server = McpServer { url: "http://127.0.0.1:7411/mcp".into(), token: "s3cret-token-value".into() };
        let text = config_toml(Some(&server)).expect("config");
        assert!(text.starts_with(CONFIG_TOML_BASE), "{text}");
        assert!(text.contains("[mcp_servers.orchestrator]\nurl = \"http://127.0.0.1:7411/mcp\"\n"), "{text}");
        assert!(text.contains("bearer_token_env_var = \"ORCHESTRATOR_MCP_TOKEN\"\nrequired = true\n"), "{text}");
        assert!(text.contains("default_tools_approval_mode = \"approve\"\n"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
        assert_eq!(config_toml(None).expect("config"), CONFIG_TOML_BASE);
        let quoted = McpServer { url: "http://h/\"x\\".into(), token: "t".into() };
        assert!(config_toml(Some(&quoted)).expect("config").contains("url = \"http://h/\\\"x\\\\\"\n"));
        let control = McpServer { url: "http://h/\nrequired = false".into(), token: "t".into() };
        assert_eq!(config_toml(Some(&control)).map_err(|e| e.code()), Err("BAD_OPTION"));
    }

    #[test]
    fn every_feature_turned_off_is_in_the_base_config() {
        let features = CONFIG_TOML_BASE.split("[features]\n").nth(1).expect("a [features] table");
        for name in FEATURES_OFF {
            assert!(features.lines().any(|l| l == format!("{name} = false")), "{name}: {features}");
        }
        assert_eq!(features.lines().count(), FEATURES_OFF.len(), "{features}");
    }

    #[test]
    fn an_auth_file_must_be_private_and_its_link_replaces_only_links() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("auth.json");
        assert_eq!(check_auth_file(&file).map_err(|e| e.code()), Err("BAD_OPTION"), "missing");
        std::fs::write(&file, "{}").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = check_auth_file(&file).expect_err("readable by others");
        assert!(err.to_string().contains("chmod 600"), "{err}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let target = check_auth_file(&file).expect("a private file");
        assert!(target.is_absolute());
        assert_eq!(check_auth_file(dir.path()).map_err(|e| e.code()), Err("BAD_OPTION"), "a directory");

        let home = dir.path().join("home");
        std::fs::create_dir(&home).expect("home");
        link_auth(&home, Some(&target)).expect("link");
        link_auth(&home, Some(&target)).expect("link again (replaced)");
        let link = home.join(AUTH_FILE_NAME);
        assert_eq!(std::fs::read_link(&link).expect("a link"), target);
        link_auth(&home, None).expect("unlink");
        assert!(std::fs::symlink_metadata(&link).is_err(), "the link is gone");
        std::fs::write(&link, "{}").expect("a file codex wrote");
        link_auth(&home, None).expect("left alone");
        assert!(link.is_file(), "a regular file is never removed");
    }
}
