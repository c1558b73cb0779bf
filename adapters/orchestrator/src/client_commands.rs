//! The commands that act on a running daemon for a person (`worker …`, `run …`, `oauth …`):
//! each flag set turned into the console's request, performed, and its answer printed.
//! Every failure is an error for `main` to print as one line.

use crate::flags::{AddressFlags, OauthCommand, RunCommand, WorkerCommand};
use crate::print_out;
use address::token;
use address::{URL_FILE_NAME, default_data_dir};
use anyhow::Context;
use console::reach::Target;

/// The daemon the flags name: its URLs (a standby followed to the leader), or its data
/// directory (or the default one).
fn target(daemon: AddressFlags) -> anyhow::Result<Target> {
    Target::new(daemon.data_dir, daemon.url, daemon.mcp_token)
}

/// `orchestrator pair`: a fresh one-time code from the running daemon, printed with its
/// lifetime and where to type it.
pub(crate) fn pair_command(
    data_dir: Option<std::path::PathBuf>,
    url: Vec<String>,
    mcp_token: Option<String>,
) -> anyhow::Result<()> {
    let target = Target::new(data_dir, url, mcp_token)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let target = runtime.block_on(target.leader())?;
    let issued = runtime.block_on(console::pair::issue(&target))?;
    let executor_url = match console::client::parse_url(&target.url) {
        Ok((authority, _)) => format!("ws://{authority}/executor"),
        Err(_) => cli_executor::connection::DAEMON_URL_DEFAULT.to_string(),
    };
    print_out(&console::pair::issued_text(&issued, &executor_url));
    Ok(())
}

/// `executor-cli --pair CODE`: the code exchanged at `daemon` for the executor token, saved
/// (0600) as `token_file`, and the MCP token as `mcp_token_file` when the command line gave
/// none. Neither token is printed.
pub(crate) fn pair_executor(
    daemon: &str,
    code: &str,
    host: &str,
    token_file: &std::path::Path,
    mcp_token_file: Option<&std::path::PathBuf>,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let answer = runtime
        .block_on(console::pair::exchange(daemon, code, Some(host)))
        .map_err(|e| anyhow::anyhow!("cannot pair with {daemon}: {e}"))?;
    save_secret(token_file, &answer.executor_token)?;
    if let (Some(path), Some(mcp)) = (mcp_token_file, &answer.mcp_token) {
        save_secret(path, mcp)?;
    }
    tracing::info!(daemon, version = answer.version, file = %token_file.display(), "paired: the executor token is saved");
    Ok(())
}

/// Writes a secret to `path` with mode 0600 (a temporary file beside it, then a rename), its
/// directory made first (0700).
fn save_secret(path: &std::path::Path, secret: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let temp = path.with_extension("pairing");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let write = || -> std::io::Result<()> {
        let mut file = options.open(&temp)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        file.write_all(format!("{secret}\n").as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    };
    write().with_context(|| format!("cannot save the token to {}", path.display()))
}

/// Runs a `worker` command against the running daemon.
pub(crate) fn worker_command(command: WorkerCommand) -> anyhow::Result<()> {
    use console::control::Action;
    let (worker, action, daemon) = match command {
        WorkerCommand::Pause { worker, after_current_turn: false, daemon } => (worker, Action::Pause, daemon),
        WorkerCommand::Pause { worker, after_current_turn: true, daemon } => (worker, Action::PauseAfterTurn, daemon),
        WorkerCommand::Resume { worker, daemon } => (worker, Action::Resume, daemon),
        WorkerCommand::Continue { worker, daemon } => (worker, Action::Continue, daemon),
        WorkerCommand::Stop { worker, reason, daemon } => (worker, Action::Stop(reason.join(" ")), daemon),
        WorkerCommand::Answer { worker, answer, daemon } if answer.is_empty() => (worker, Action::Ask, daemon),
        WorkerCommand::Answer { worker, answer, daemon } => (worker, Action::Answer(answer.join(" ")), daemon),
        WorkerCommand::Release { worker, note, daemon } => (worker, Action::Release(note.join(" ")), daemon),
    };
    let target = target(daemon)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    print_out(&runtime.block_on(console::control::perform(&target, &worker, action))?);
    Ok(())
}

/// Runs a `run` command against the running daemon.
pub(crate) fn run_command(command: RunCommand) -> anyhow::Result<()> {
    use console::run::{RunAction, STOP_REASON_DEFAULT};
    let (action, daemon) = match command {
        RunCommand::List { daemon } => (RunAction::List, daemon),
        RunCommand::Show { run, daemon } => (RunAction::Show(run), daemon),
        RunCommand::Pause { run, daemon } => (RunAction::Pause(run), daemon),
        RunCommand::Resume { run, daemon } => (RunAction::Resume(run), daemon),
        RunCommand::Stop { run, reason, daemon } => {
            let reason = if reason.is_empty() { STOP_REASON_DEFAULT.to_string() } else { reason.join(" ") };
            (RunAction::Stop { run, reason }, daemon)
        }
    };
    let target = target(daemon)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    print_out(&runtime.block_on(console::run::perform(&target, action))?);
    Ok(())
}

/// Runs an `oauth` command against the running daemon's admin API; `list` and `revoke`
/// fall back to the grants file (under its lock) when no daemon answers, unless the daemon
/// keeps its grants in the database (then a leader must run).
pub(crate) fn oauth_command(command: OauthCommand) -> anyhow::Result<()> {
    use axum::http::Method;
    use serde_json::json;
    let (daemon, method, verb, body) = match command {
        OauthCommand::Pending { daemon } => (daemon, Method::GET, "pending", None),
        OauthCommand::Approve { code, daemon } => (daemon, Method::POST, "approve", Some(json!({ "code": code }))),
        OauthCommand::Deny { code, daemon } => (daemon, Method::POST, "deny", Some(json!({ "code": code }))),
        OauthCommand::List { daemon } => (daemon, Method::GET, "grants", None),
        OauthCommand::Revoke { grant_id, all, daemon } => {
            let body = if all { json!({ "all": true }) } else { json!({ "grantId": grant_id }) };
            (daemon, Method::POST, "revoke", Some(body))
        }
    };
    let dir = daemon.data_dir.unwrap_or_else(default_data_dir);
    let token = match daemon.mcp_token {
        Some(t) => t,
        None => token::read(&dir.join(token::TOKEN_FILE_NAME))?.with_context(|| {
            format!(
                "no MCP token in {}: is it the daemon's data directory? Start the daemon there once \
                     (`orchestrator serve --data-dir {}`), or give --mcp-token",
                dir.display(),
                dir.display()
            )
        })?,
    };
    let url = std::fs::read_to_string(dir.join(URL_FILE_NAME)).map(|s| s.trim().to_string()).ok();
    let addr = url.as_deref().and_then(|u| console::client::parse_url(u).ok()).map(|(a, _)| a);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let answer = addr
        .as_ref()
        .map(|addr| runtime.block_on(console::oauth_admin::call(addr, &token, method, verb, body.clone())));
    let offline = matches!(answer, None | Some(Err(console::oauth_admin::AdminCallError::Unreachable { .. })));
    if offline {
        // No daemon: only the durable commands make sense, on the file, under its lock.
        let value = match (verb, &body) {
            ("grants", _) => oauth::offline_list(&dir).map_err(coded)?,
            ("revoke", Some(b)) => {
                let id = b.get("grantId").and_then(|v| v.as_str());
                match oauth::offline_revoke(&dir, id).map_err(coded)? {
                    Ok(n) => json!({ "revoked": n, "note": "the daemon is not running: revoked in the grants file" }),
                    Err(why) => anyhow::bail!("{why}"),
                }
            }
            _ => anyhow::bail!(
                "no daemon answers for {}: start it with `orchestrator serve --public-url URL --data-dir {}` (only \
                 `oauth list` and `oauth revoke` work without it)",
                dir.display(),
                dir.display()
            ),
        };
        print_out(&format!("{}\n", serde_json::to_string_pretty(&value)?));
        return Ok(());
    }
    let (status, value) = answer.expect("online").map_err(|e| anyhow::anyhow!("{e} ({})", e.code()))?;
    if let Some(refusal) = admin_refusal(status, &value) {
        anyhow::bail!("{refusal}");
    }
    print_out(&format!("{}\n", serde_json::to_string_pretty(&value)?));
    Ok(())
}

/// An OAuth error with its stable code, for one line (`OAUTH_GRANTS_ELSEWHERE`: the state is
/// in the database, a leader must run).
fn coded(error: oauth::OAuthError) -> anyhow::Error {
    anyhow::anyhow!("{error} ({})", error.code())
}

/// What a refused admin call tells the person, in one line: a daemon without OAuth (an
/// empty 404: it was started without --public-url), or the admin API's own refusal. `None`
/// for an answer to print.
pub(crate) fn admin_refusal(status: u16, answer: &serde_json::Value) -> Option<String> {
    let text = |k: &str| answer.get(k).and_then(|v| v.as_str()).filter(|t| !t.is_empty());
    if status == 404 && answer.get("error").is_none_or(|e| e == "not_found") && text("error_description").is_none() {
        return Some(
            "the daemon runs without OAuth: restart it with --public-url (docs/connect.md) to approve connections"
                .to_string(),
        );
    }
    if (200..300).contains(&status) {
        return None;
    }
    let why = text("error_description").or(text("error")).or(text("text")).unwrap_or("no reason given");
    let code = text("error").map(|c| format!("{c}, ")).unwrap_or_default();
    Some(format!("the daemon refused: {why} ({code}HTTP {status})"))
}

#[cfg(test)]
mod tests {
    use super::admin_refusal;
    use serde_json::json;

    #[test]
    fn a_daemon_without_oauth_is_said_in_one_line_without_its_empty_answer() {
        let said = admin_refusal(404, &json!({ "text": "" })).expect("a refusal");
        assert!(said.contains("--public-url") && !said.contains('{'), "{said}");
        let refused =
            admin_refusal(404, &json!({ "error": "not_found", "error_description": "no request shows this code" }));
        assert_eq!(refused.as_deref(), Some("the daemon refused: no request shows this code (not_found, HTTP 404)"));
        assert_eq!(admin_refusal(200, &json!({ "pending": [] })), None);
    }
}
