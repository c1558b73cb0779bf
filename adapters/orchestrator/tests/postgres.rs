//! The daemon on the Postgres store (issue 32, `docs/scale-out.md`), against a real
//! PostgreSQL started by the test (`store_pg::test_server`): a run created through MCP
//! survives kill -9 and is found by a daemon started again on the same database (from
//! another data directory: the state is in the database, not here); a second daemon on the
//! same database fences off the first, whose next write is refused (`PG_FENCED`) and which
//! exits; an unreachable database is a clear start error.

mod support;

use console::client::McpClient;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};
use store_pg::test_server::TestServer;
use support::{Daemon, TOKEN, orchestrator_bin};

/// `serve --store URL` on a fresh data directory under `root`.
fn serve_on_postgres(root: &std::path::Path, name: &str, url: &str) -> Daemon {
    Daemon::serve(&root.join(name), &["--mcp-token", TOKEN, "--store", url])
}

/// The runs `run_list` shows, by id.
async fn run_ids(c: &mut McpClient) -> Vec<String> {
    let runs: Value = c.call_ok("run_list", json!({ "includeTerminal": true })).await.expect("run_list");
    runs["runs"].as_array().expect("runs").iter().map(|r| r["runId"].as_str().expect("runId").to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_survives_kill_9_and_a_new_machine_on_postgres() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");

    let mut first = serve_on_postgres(tmp.path(), "first", &url);
    let mut c = McpClient::connect(&first.url, Some(TOKEN)).await.expect("connect");
    let run = c
        .call_ok("run_create", json!({ "taskName": "On Postgres", "rootConversationName": "Root", "context": "plan" }))
        .await
        .expect("run_create");
    let run_id = run["runId"].as_str().expect("runId").to_string();
    first.kill9();
    assert!(!tmp.path().join("first").join("store").exists(), "nothing of the state is in the data directory");

    // Another data directory, as on another machine: the run comes back from the database.
    let second = serve_on_postgres(tmp.path(), "second", &url);
    let mut c = McpClient::connect(&second.url, Some(TOKEN)).await.expect("connect");
    assert_eq!(run_ids(&mut c).await, vec![run_id.clone()], "the run is found after kill -9");
    let got = c.call_ok("run_get", json!({ "runId": run_id })).await.expect("run_get");
    assert_eq!(got["taskName"], "On Postgres", "{got}");
    assert!(second.stderr().contains("opened the Postgres store"), "{}", second.stderr());
    let epoch = server.rows(&url, "SELECT epoch FROM orchestrator_lease");
    assert_eq!(epoch[0][0].as_deref(), Some("2"), "each start took an epoch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_daemon_fences_off_the_first_which_exits() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");

    let mut old = serve_on_postgres(tmp.path(), "old", &url);
    let mut c_old = McpClient::connect(&old.url, Some(TOKEN)).await.expect("connect");
    let args = json!({ "taskName": "Before", "rootConversationName": "Root", "context": "plan" });
    c_old.call_ok("run_create", args).await.expect("the first daemon writes while it leads");

    let new = serve_on_postgres(tmp.path(), "new", &url);
    let args = json!({ "taskName": "Refused", "rootConversationName": "Root", "context": "plan" });
    let refused = c_old.call_tool("run_create", args).await;
    assert!(refused.as_ref().map_or(true, |r| r.is_error), "the fenced daemon acknowledges nothing: {refused:?}");
    // The fenced daemon stops by itself and says why.
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = old.child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "the fenced daemon did not exit within 20 s");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success(), "a fenced daemon exits non-zero");
    let stderr = old.stderr();
    assert!(stderr.contains("PG_FENCED"), "the reason is named: {stderr}");

    let mut c_new = McpClient::connect(&new.url, Some(TOKEN)).await.expect("connect");
    let runs: Value = c_new.call_ok("run_list", json!({ "includeTerminal": true })).await.expect("run_list");
    let names: Vec<&str> =
        runs["runs"].as_array().expect("runs").iter().filter_map(|r| r["taskName"].as_str()).collect();
    assert_eq!(names, vec!["Before"], "the refused write is nowhere");
    c_new
        .call_ok("run_create", json!({ "taskName": "After", "rootConversationName": "Root", "context": "plan" }))
        .await
        .expect("the new daemon writes");
}

#[test]
fn an_unreachable_database_is_a_clear_start_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // Nothing listens on a port that was free a moment ago (closed again at once).
    let port = support::free_port();
    let url = format!("postgres://orchestrator:secret-password@127.0.0.1:{port}/orchestrator");
    let out = Command::new(orchestrator_bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--mcp-token", TOKEN, "--data-dir"])
        .arg(tmp.path().join("data"))
        .env_remove("ORCHESTRATOR_CONFIG")
        .env("XDG_CONFIG_HOME", tmp.path().join("no-config"))
        .env("ORCHESTRATOR_STORE", &url)
        .output()
        .expect("run orchestrator");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().last().unwrap_or_default();
    assert!(line.starts_with("orchestrator: ") && line.contains("[PG_CONNECT]"), "{stderr}");
    assert!(line.contains(&format!("orchestrator@127.0.0.1:{port}/orchestrator")), "the database is named: {line}");
    assert!(!stderr.contains("secret-password"), "never the password: {stderr}");

    let out = Command::new(orchestrator_bin())
        .args(["serve", "--store", "mysql://db/x", "--data-dir"])
        .arg(tmp.path().join("data"))
        .env_remove("ORCHESTRATOR_STORE")
        .output()
        .expect("run orchestrator");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("postgres://"), "{out:?}");
}
