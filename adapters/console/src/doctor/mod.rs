//! `orchestrator doctor`: the installation checked in order (the daemon answers, the user
//! service that keeps it running (`orchestrator service install`), its data directory, that only its owner can read it, its store lock, the tokens and their
//! permissions, the connected executors named by kind and speaking this daemon's protocol,
//! for each worker kind in use a capable executor, the public address's OAuth metadata,
//! the configuration file and its notification URLs, what the daemon's notifications came to, pairing),
//! each failing check with what to do. Read-only: it changes nothing, and takes the store
//! lock only for an instant when no daemon answers.

mod config;
mod executors;
mod public;
mod service;

use crate::client::McpClient;
use address::token;
use address::{HEALTH_PATH, Health, LISTEN_DEFAULT, URL_FILE_NAME};
use config::{check_config, check_notifications, check_notify, check_pairing};
use executors::{check_executors, check_kinds, kinds_in_use};
use public::check_public;
use service::check_service;
use std::fmt::Write;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the daemon has to answer `/health` or a metadata request.
const HEALTH_ANSWER_MS_MAX: u64 = 5_000;
/// The largest metadata document doctor reads.
const METADATA_BYTES_MAX: usize = 64 * 1024;
/// The store's lock file, as `FjallStore` takes it.
const STORE_LOCK_PATH: [&str; 2] = ["store", "store.lock"];

/// What `doctor` checks.
#[derive(Clone, Debug)]
pub struct DoctorOptions {
    /// The daemon's data directory.
    pub data_dir: PathBuf,
    /// The MCP token given by flag or environment (a daemon started with `--mcp-token`).
    pub mcp_token: Option<String>,
    /// The executor token's file name in the data directory (the bridge's
    /// `TOKEN_FILE_NAME`, given by the composition root: this crate does not link the bridge).
    pub executor_token_file_name: &'static str,
    /// The configuration file to check (`--config`, or the default one; absent is no failure).
    pub config_file: PathBuf,
}

/// One check's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It holds; what was seen.
    Pass(String),
    /// It does not; what was seen and what to do.
    Fail {
        /// What is wrong.
        found: String,
        /// What the person should do.
        fix: String,
    },
    /// Not checked, and why (an earlier failure, or nothing to check).
    Skip(String),
}

/// A check by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// Short name ("daemon", "tokens", ...).
    pub name: &'static str,
    /// Its verdict.
    pub verdict: Verdict,
}

/// Every check, in order, and the text for a terminal.
#[derive(Clone, Debug)]
pub struct Report {
    /// The checks in the order they ran.
    pub checks: Vec<Check>,
}

impl Report {
    /// True when no check failed.
    pub fn healthy(&self) -> bool {
        !self.checks.iter().any(|c| matches!(c.verdict, Verdict::Fail { .. }))
    }

    /// The report as lines for a person.
    pub fn text(&self, data_dir: &Path) -> String {
        let mut out = format!("orchestrator doctor (data directory {})\n", data_dir.display());
        for check in &self.checks {
            let _ = match &check.verdict {
                Verdict::Pass(found) => writeln!(out, "  ok    {}: {found}", check.name),
                Verdict::Skip(why) => writeln!(out, "  skip  {}: {why}", check.name),
                Verdict::Fail { found, fix } => {
                    writeln!(out, "  FAIL  {}: {found}\n        what to do: {fix}", check.name)
                }
            };
        }
        let failed = self.checks.iter().filter(|c| matches!(c.verdict, Verdict::Fail { .. })).count();
        let _ = if failed == 0 {
            writeln!(out, "All checks passed.")
        } else {
            writeln!(out, "{} failed.", crate::words::count(failed as u64, "check"))
        };
        out
    }
}

/// What the daemon check learned, for the checks after it.
enum Reached {
    /// It answered.
    Answered(Box<Health>),
    /// Nothing answers at the URL.
    Silent,
    /// Something answered, but not as a daemon this doctor can read.
    Refused,
}

/// Runs every check in order.
pub async fn run(options: &DoctorOptions) -> Report {
    let dir = &options.data_dir;
    let url_file = dir.join(URL_FILE_NAME);
    let recorded_url = std::fs::read_to_string(&url_file).ok().map(|s| s.trim().to_string());
    let mcp_url = recorded_url.clone().unwrap_or_else(|| format!("http://{LISTEN_DEFAULT}/mcp"));
    let token_file = dir.join(token::TOKEN_FILE_NAME);
    let token = options.mcp_token.clone().or_else(|| token::read(&token_file).ok().flatten());

    let mut checks = Vec::new();
    let (daemon, reached) = check_daemon(&mcp_url, token.as_deref(), recorded_url.is_some(), dir).await;
    checks.push(daemon);
    checks.push(check_service(dir));
    checks.push(check_data_dir(dir));
    checks.push(check_private(dir));
    checks.push(check_store_lock(dir, &reached));
    checks.push(check_tokens(dir, options.mcp_token.is_some(), options.executor_token_file_name));
    let (config_check, config) = check_config(&options.config_file);
    checks.push(config_check);
    checks.push(check_notify(config.as_ref()));
    checks.push(check_notifications(&reached));
    checks.push(check_pairing(dir, options.executor_token_file_name));
    checks.push(check_executors(&reached, &mcp_url));
    let in_use = match (&reached, token.as_deref()) {
        (Reached::Answered(_), Some(token)) => kinds_in_use(&mcp_url, token).await,
        _ => None,
    };
    checks.push(check_kinds(&reached, in_use.as_ref()));
    checks.push(check_public(&reached, &mcp_url).await);
    checks.push(Check {
        name: "ChatGPT app",
        verdict: Verdict::Skip(
            "the daemon cannot see the name you gave its app in ChatGPT: check that the extension's \
             app name setting is that name (docs/connect.md)"
                .into(),
        ),
    });
    Report { checks }
}

async fn check_daemon(mcp_url: &str, token: Option<&str>, recorded: bool, dir: &Path) -> (Check, Reached) {
    let name = "daemon";
    let start = format!("start it: orchestrator serve --data-dir {}", dir.display());
    let Some(token) = token else {
        let fix = format!(
            "{start} (it writes {}), or give the token it was started with: --mcp-token",
            dir.join(token::TOKEN_FILE_NAME).display()
        );
        return (fail(name, "no MCP token to ask it with", fix), Reached::Refused);
    };
    let health_url = mcp_url.strip_suffix("/mcp").map(|base| format!("{base}{HEALTH_PATH}"));
    let Some(health_url) = health_url else {
        return (fail(name, format!("{mcp_url} is not an /mcp address"), start), Reached::Refused);
    };
    let asked = tokio::time::timeout(Duration::from_millis(HEALTH_ANSWER_MS_MAX), ask_health(&health_url, token)).await;
    match asked {
        Ok(Ok(Asked::Health(health))) => {
            let found = format!("answers at {mcp_url} (version {})", health.version);
            (Check { name, verdict: Verdict::Pass(found) }, Reached::Answered(health))
        }
        Ok(Ok(Asked::Standby(leader))) => (
            fail(
                name,
                format!("the daemon at {mcp_url} is a standby: not the leader; the leader is {leader} (NOT_LEADER)"),
                format!("ask the leader: orchestrator doctor on its machine, or --url {leader} for other commands"),
            ),
            Reached::Refused,
        ),
        Ok(Ok(Asked::Status(401))) => (
            fail(
                name,
                format!("the daemon at {mcp_url} refuses the MCP token"),
                "it was started with another --mcp-token: give that one to doctor (--mcp-token or ORCHESTRATOR_MCP_TOKEN)",
            ),
            Reached::Refused,
        ),
        Ok(Ok(Asked::Status(status))) => (
            fail(
                name,
                format!("{health_url} answered HTTP {status}"),
                "another program may hold this address, or the daemon is older than this doctor: \
                 check `orchestrator --version` and what listens there",
            ),
            Reached::Refused,
        ),
        Ok(Err(_)) if recorded => (
            fail(
                name,
                format!("nothing answers at {mcp_url}, the address the last daemon recorded: it did not stop cleanly"),
                start,
            ),
            Reached::Silent,
        ),
        Ok(Err(_)) => (fail(name, format!("not running (nothing answers at {mcp_url})"), start), Reached::Silent),
        Err(_) => (
            fail(
                name,
                format!("{health_url} gave no answer within {HEALTH_ANSWER_MS_MAX} ms"),
                "the daemon may be overloaded or stuck: look at its log, or restart it",
            ),
            Reached::Refused,
        ),
    }
}

/// What `/health` said.
enum Asked {
    Health(Box<Health>),
    Status(u16),
    /// A standby: another daemon leads the Postgres database, at this URL.
    Standby(String),
}

async fn ask_health(url: &str, token: &str) -> anyhow::Result<Asked> {
    let mut client = McpClient::connect_raw(url, Some(token)).await?;
    let answer = client.send(hyper::Method::GET, None, &[], None).await?;
    if let Some(leader) = crate::client::not_leader(answer.status, &answer.text) {
        return Ok(Asked::Standby(leader));
    }
    if answer.status != hyper::StatusCode::OK {
        return Ok(Asked::Status(answer.status.as_u16()));
    }
    match serde_json::from_str(&answer.text) {
        Ok(health) => Ok(Asked::Health(Box::new(health))),
        Err(_) => Ok(Asked::Status(answer.status.as_u16())),
    }
}

fn check_data_dir(dir: &Path) -> Check {
    let name = "data directory";
    match std::fs::read_dir(dir) {
        Ok(_) => Check { name, verdict: Verdict::Pass(format!("{} is readable", dir.display())) },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => fail(
            name,
            format!("{} does not exist", dir.display()),
            format!("the daemon creates it on its first start: orchestrator serve --data-dir {}", dir.display()),
        ),
        Err(e) => fail(
            name,
            format!("{} cannot be read: {e}", dir.display()),
            format!(
                "run doctor as the user the daemon runs as, or fix the owner: chown -R \"$USER\" {}",
                dir.display()
            ),
        ),
    }
}

/// The data directory `0700` and every file in it `0600` (`address::private`).
fn check_private(dir: &Path) -> Check {
    let name = "privacy";
    match address::private::exposed(dir) {
        Ok(loose) if loose.is_empty() => {
            Check { name, verdict: Verdict::Pass("only you can read the data directory (0700, files 0600)".into()) }
        }
        Ok(loose) => fail(
            name,
            format!(
                "{} entr{} in the data directory can be read by other users (e.g. {} is {:o})",
                loose.len(),
                if loose.len() == 1 { "y" } else { "ies" },
                loose[0].path.display(),
                loose[0].mode
            ),
            format!("the daemon fixes this at its next start, or now: chmod -R go-rwx {}", dir.display()),
        ),
        Err(e) => fail(name, format!("cannot look through {}: {e}", dir.display()), "check the directory's owner"),
    }
}

fn check_store_lock(dir: &Path, reached: &Reached) -> Check {
    let name = "store lock";
    let lock_path: PathBuf = STORE_LOCK_PATH.iter().fold(dir.to_path_buf(), |p, part| p.join(part));
    match reached {
        Reached::Answered(_) => {
            return Check { name, verdict: Verdict::Pass("held by the running daemon".into()) };
        }
        Reached::Refused => return Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) },
        Reached::Silent => {}
    }
    let Ok(file) = File::options().read(true).write(true).open(&lock_path) else {
        return Check { name, verdict: Verdict::Pass("no store yet (no daemon has started here)".into()) };
    };
    match file.try_lock() {
        // The operating system releases the lock of a process that died: a free lock is
        // the normal state of a stopped daemon. Dropping `file` releases it at once.
        Ok(()) => Check { name, verdict: Verdict::Pass("free (no process holds the store)".into()) },
        Err(TryLockError::WouldBlock) => fail(
            name,
            format!("another process holds {} but no daemon answers", lock_path.display()),
            format!(
                "an `orchestrator mcp-stdio` or a daemon on another address uses this directory: find it with \
                 `fuser {}` (or `lsof`) and stop it, or use its address",
                lock_path.display()
            ),
        ),
        Err(TryLockError::Error(e)) => fail(
            name,
            format!("cannot check {}: {e}", lock_path.display()),
            "check the file system and the directory's permissions",
        ),
    }
}

fn check_tokens(dir: &Path, mcp_given: bool, executor_token_file_name: &str) -> Check {
    let name = "tokens";
    let mut seen = Vec::new();
    for (file, what) in [(token::TOKEN_FILE_NAME, "MCP"), (executor_token_file_name, "executor")] {
        let path = dir.join(file);
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(_) if what == "MCP" && mcp_given => {
                seen.push("MCP token given by flag or environment".to_string());
                continue;
            }
            Err(_) => {
                return fail(
                    name,
                    format!("the {what} token file {} is missing", path.display()),
                    format!("the daemon writes it on its first start: orchestrator serve --data-dir {}", dir.display()),
                );
            }
        };
        if let Some(mode) = loose_mode(&meta) {
            return fail(
                name,
                format!("{} can be read by other users (mode {mode:o})", path.display()),
                format!("chmod 600 {}", path.display()),
            );
        }
        seen.push(format!("{} (0600)", path.display()));
    }
    Check { name, verdict: Verdict::Pass(seen.join(", ")) }
}

/// The file's permission bits when anyone but its owner may read or write it.
#[cfg(unix)]
fn loose_mode(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn loose_mode(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}

fn fail(name: &'static str, found: impl Into<String>, fix: impl Into<String>) -> Check {
    Check { name, verdict: Verdict::Fail { found: found.into(), fix: fix.into() } }
}
