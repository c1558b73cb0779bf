//! Daemons sharing one PostgreSQL database with the lease's timings shortened by the hidden
//! test flags (`--lease-ttl-ms`, `--lease-renew-ms`, `--lease-poll-ms`), and the waits the
//! leader/standby tests share: until a daemon serves MCP, until a process exits.

use super::{Daemon, TOKEN};
use console::client::McpClient;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// The lease's time to live in these tests, in ms (`--lease-ttl-ms`).
pub const TTL_MS: u64 = 2_000;
/// How often the leader renews it, in ms (`--lease-renew-ms`).
pub const RENEW_MS: u64 = 300;
/// How often a standby reads it, in ms (`--lease-poll-ms`).
pub const POLL_MS: u64 = 200;
/// What a takeover may add to the time to live and the poll, in ms: taking the epoch,
/// recovering from the database, and starting to serve, on a loaded two-core machine.
pub const TAKEOVER_SLACK_MS: u64 = 3_000;

/// The longest a standby may take to serve after the leader died: [`TTL_MS`] +
/// [`POLL_MS`] + [`TAKEOVER_SLACK_MS`].
pub fn takeover_within() -> Duration {
    Duration::from_millis(TTL_MS + POLL_MS + TAKEOVER_SLACK_MS)
}

/// The flags of a daemon on the database at `url` with the short lease timings (and the
/// MCP token [`TOKEN`]).
pub fn lease_args(url: &str) -> Vec<&str> {
    let times: &'static [&'static str] =
        &["--lease-ttl-ms", "2000", "--lease-renew-ms", "300", "--lease-poll-ms", "200"];
    let mut args = vec!["--mcp-token", TOKEN, "--store", url];
    args.extend_from_slice(times);
    args
}

/// `serve` with [`lease_args`] and `extra`, in `root/name`, as a leader.
pub fn leader(root: &Path, name: &str, url: &str, extra: &[&str]) -> Daemon {
    let mut args = lease_args(url);
    args.extend_from_slice(extra);
    Daemon::serve(&root.join(name), &args)
}

/// The same, expected to wait as a standby.
pub fn standby(root: &Path, name: &str, url: &str, extra: &[&str]) -> Daemon {
    let mut args = lease_args(url);
    args.extend_from_slice(extra);
    Daemon::serve_standby(&root.join(name), &args)
}

/// Waits until the daemon at `url` answers MCP, at most `max`; answers when it did.
pub async fn serves_within(url: &str, max: Duration) -> Instant {
    let deadline = Instant::now() + max;
    loop {
        if let Ok(mut c) = McpClient::connect(url, Some(TOKEN)).await
            && c.call_ok("run_list", json!({})).await.is_ok()
        {
            return Instant::now();
        }
        assert!(Instant::now() < deadline, "{url} did not serve within {max:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits for the process to exit, at most `max`.
pub fn exits_within(daemon: &mut Daemon, max: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + max;
    loop {
        if let Some(status) = daemon.child.try_wait().expect("wait") {
            return status;
        }
        assert!(Instant::now() < deadline, "the daemon did not exit within {max:?}: {}", daemon.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}
