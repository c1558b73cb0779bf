//! The daemon on the Postgres store (issue 32, `docs/scale-out.md`), against a real
//! PostgreSQL started by the test (`store_pg::test_server`): a run created through MCP
//! survives kill -9 and is found by a daemon started again on the same database (from
//! another data directory: the state is in the database, not here); an unreachable database
//! is a clear start error.
//!
//! One leader per database: a second daemon is a standby that answers 503 `NOT_LEADER`
//! naming the leader while the leader keeps serving; after kill -9 of the leader it takes
//! over within the lease's time to live plus one poll and finds the leader's run; a leader
//! stopped (SIGSTOP) past its time to live is taken over, and when resumed is refused
//! (`PG_FENCED`), exits, and wrote nothing after the takeover; a restarted leader with the
//! same data directory takes its lease back at once; a leader cut off from the database
//! past its time to live stops (`PG_LEASE_LOST`), and so does one partitioned from it with
//! a commit in flight, without waiting for the database to answer it. The lease's timings are shortened by
//! hidden test flags ([`TTL_MS`], [`RENEW_MS`], [`POLL_MS`]).

mod support;

use console::client::McpClient;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};
use store_pg::test_server::TestServer;
use support::forward::Forward;
use support::lease::{
    POLL_MS, RENEW_MS, TAKEOVER_SLACK_MS, TTL_MS, exits_within, leader, serves_within, standby, takeover_within,
};
use support::{TOKEN, orchestrator_bin};

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

    let mut first = leader(tmp.path(), "first", &url, &[]);
    let mut c = McpClient::connect(&first.url, Some(TOKEN)).await.expect("connect");
    let run = c
        .call_ok("run_create", json!({ "taskName": "On Postgres", "rootConversationName": "Root", "context": "plan" }))
        .await
        .expect("run_create");
    let run_id = run["runId"].as_str().expect("runId").to_string();
    first.kill9();
    assert!(!tmp.path().join("first").join("store").exists(), "nothing of the state is in the data directory");

    // Another data directory, as on another machine: the run comes back from the database.
    let second = leader(tmp.path(), "second", &url, &[]);
    let mut c = McpClient::connect(&second.url, Some(TOKEN)).await.expect("connect");
    assert_eq!(run_ids(&mut c).await, vec![run_id.clone()], "the run is found after kill -9");
    let got = c.call_ok("run_get", json!({ "runId": run_id })).await.expect("run_get");
    assert_eq!(got["taskName"], "On Postgres", "{got}");
    assert!(second.stderr().contains("opened the Postgres store"), "{}", second.stderr());
    let epoch = server.rows(&url, "SELECT epoch FROM orchestrator_lease");
    assert_eq!(epoch[0][0].as_deref(), Some("2"), "each start took an epoch");
    // `store verify` checks the database while the daemon leads, and takes no epoch.
    let out = orchestrator(tmp.path(), &["store", "verify", "--store", &url]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("orchestrator store verify --store postgres://...:\n{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.ends_with("intact\n") && stdout.contains("lease: epoch 2, held by"), "{stdout}");
    assert!(!stdout.contains("postgres://"), "the connection string is never printed: {stdout}");
    let epoch = server.rows(&url, "SELECT epoch FROM orchestrator_lease");
    assert_eq!(epoch[0][0].as_deref(), Some("2"), "verify took no epoch");
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

/// One HTTP/1.1 request to the daemon at `mcp_url`'s address: the status and the body.
fn http(mcp_url: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let authority = mcp_url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = std::net::TcpStream::connect(authority).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// The standby's answer at `path`, parsed: asserts 503 and `NOT_LEADER` naming `leader`.
fn assert_not_leader(standby_url: &str, method: &str, path: &str, leader: &str) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string();
    let (status, text) = http(standby_url, method, path, &body);
    assert_eq!(status, 503, "{method} {path}: {text}");
    let answer: Value = serde_json::from_str(&text).expect("a JSON body");
    assert_eq!(answer["code"], "NOT_LEADER", "{answer}");
    assert_eq!(answer["leader"], leader, "{answer}");
    assert_eq!(answer["message"], format!("not the leader; the leader is {leader}"), "{answer}");
    answer
}

/// `orchestrator ARGS` with no configuration file: its output.
fn orchestrator(root: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(orchestrator_bin())
        .args(args)
        .env_remove("ORCHESTRATOR_CONFIG")
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .env_remove("ORCHESTRATOR_MCP_TOKEN")
        .env("XDG_CONFIG_HOME", root.join("no-config"))
        .output()
        .expect("run orchestrator")
}

/// Creates a run named `name` through MCP.
async fn create_run(c: &mut McpClient, name: &str) -> String {
    let args = json!({ "taskName": name, "rootConversationName": "Root", "context": "plan" });
    let run = c.call_ok("run_create", args).await.expect("run_create");
    run["runId"].as_str().expect("runId").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_daemon_is_a_standby_and_takes_over_within_the_lease_after_kill_9() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = leader(tmp.path(), "a", &url, &[]);
    let mut c = McpClient::connect(&a.url, Some(TOKEN)).await.expect("connect");
    let run_id = create_run(&mut c, "Before the failover").await;

    let b = standby(tmp.path(), "b", &url, &[]);
    for (method, path) in [("POST", "/mcp"), ("GET", "/executor"), ("GET", "/anything")] {
        assert_not_leader(&b.url, method, path, &a.url);
    }
    let health = assert_not_leader(&b.url, "GET", "/health", &a.url);
    assert_eq!(health["status"], "standby", "{health}");
    // `doctor` against the standby: one line naming the leader.
    let out = orchestrator(tmp.path(), &["doctor", "--mcp-token", TOKEN, "--data-dir", &b.dir.display().to_string()]);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("orchestrator doctor against the standby:\n{text}");
    assert_eq!(out.status.code(), Some(1), "doctor: {text}");
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("standby")).collect();
    assert_eq!(lines.len(), 1, "doctor: one line says it: {text}");
    assert!(lines[0].contains(&format!("the leader is {}", a.url)) && lines[0].contains("NOT_LEADER"), "{text}");
    assert!(text.contains("1 check failed"), "nothing else fails: {text}");
    // `status` follows the standby to the leader, from B's data directory or B's URL, and
    // passes a URL where nothing answers: the leader's runs, and nothing said about it.
    let dead = format!("http://127.0.0.1:{}/mcp", support::free_port());
    let b_dir = b.dir.display().to_string();
    for args in [
        vec!["status", "--mcp-token", TOKEN, "--data-dir", &b_dir],
        vec!["status", "--mcp-token", TOKEN, "--url", &b.url],
        vec!["status", "--mcp-token", TOKEN, "--url", &dead, "--url", &a.url],
        vec!["status", "--mcp-token", TOKEN, "--url", &dead, "--url", &b.url],
        vec!["run", "list", "--mcp-token", TOKEN, "--url", &dead, "--url", &b.url],
        vec!["run", "show", &run_id, "--mcp-token", TOKEN, "--url", &b.url],
    ] {
        let out = orchestrator(tmp.path(), &args);
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}{stderr}");
        assert!(stdout.contains("Before the failover"), "{args:?}: the leader's run: {stdout}");
        assert!(stderr.is_empty() && !stdout.contains("NOT_LEADER"), "{args:?}: nothing extra: {stdout}{stderr}");
    }
    // `pair` follows too, and names the leader's executor endpoint.
    let out = orchestrator(tmp.path(), &["pair", "--mcp-token", TOKEN, "--url", &b.url]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "pair: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    let leader_executor = a.url.replace("http://", "ws://").replace("/mcp", "/executor");
    assert!(stdout.contains(&format!("--daemon {leader_executor}")), "pair names the leader: {stdout}");
    // No leader among the URLs: one line naming what each said.
    let other = format!("http://127.0.0.1:{}/mcp", support::free_port());
    let out = orchestrator(tmp.path(), &["status", "--mcp-token", TOKEN, "--url", &dead, "--url", &other]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("orchestrator status with no leader among the URLs:\n{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("NO_LEADER") && stderr.contains(&dead) && stderr.contains(&other), "{stderr}");
    // The leader keeps serving, and B stays a standby past several times to live.
    for i in 0..3 {
        create_run(&mut c, &format!("While B waits {i}")).await;
        tokio::time::sleep(Duration::from_millis(TTL_MS)).await;
    }
    assert_not_leader(&b.url, "POST", "/mcp", &a.url);
    assert!(b.child.id() > 0 && b.stderr().contains("standby"), "{}", b.stderr());

    a.kill9();
    let killed = Instant::now();
    let serving = serves_within(&b.url, takeover_within()).await;
    let failover = serving - killed;
    eprintln!(
        "failover: {} ms from kill -9 to the standby serving (TTL {TTL_MS} ms, renew {RENEW_MS} ms, poll {POLL_MS} ms)",
        failover.as_millis()
    );
    assert!(
        failover >= Duration::from_millis(TTL_MS - RENEW_MS),
        "the standby waited for the lease to lapse: {failover:?}"
    );
    let mut c = McpClient::connect(&b.url, Some(TOKEN)).await.expect("connect");
    assert!(run_ids(&mut c).await.contains(&run_id), "the leader's run is found");
    let stderr = b.stderr();
    let promoted = stderr.lines().find(|l| l.contains("promoted")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(promoted.contains("old_epoch=1") && promoted.contains("new_epoch=2"), "{promoted}");
}

/// `GET /health` of the daemon at `mcp_url`: its status and body; `(0, "")` when nothing
/// answers (a daemon between standing by and serving).
fn health(mcp_url: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let authority = mcp_url.trim_start_matches("http://").trim_end_matches("/mcp");
    let Ok(mut stream) = std::net::TcpStream::connect(authority) else { return (0, String::new()) };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let request = format!(
        "GET /health HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return (0, String::new());
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// Which of `candidates` serves first after the leader died: its index (the others are
/// asked too, each time round, so a second one serving is seen).
async fn first_to_serve(candidates: &[&str], max: Duration) -> usize {
    let deadline = Instant::now() + max;
    loop {
        let mut serving = Vec::new();
        for (i, url) in candidates.iter().enumerate() {
            if health(url).0 == 200 {
                serving.push(i);
            }
        }
        assert!(serving.len() <= 1, "two daemons serve at once: {serving:?} of {candidates:?}");
        if let Some(i) = serving.first() {
            return *i;
        }
        assert!(Instant::now() < deadline, "no standby served within {max:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the standby at `url` names `leader` (its poll reads the lease row), at most
/// `max`.
async fn names_leader_within(url: &str, leader: &str, max: Duration) {
    let deadline = Instant::now() + max;
    loop {
        let (status, text) = health(url);
        let answer: Value = serde_json::from_str(&text).unwrap_or_default();
        if status == 503 && answer["leader"] == leader {
            return;
        }
        assert!(Instant::now() < deadline, "{url} does not name the leader {leader} within {max:?}: {status} {text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_standbys_race_for_a_dead_leader_and_exactly_one_serves_each_time() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = leader(tmp.path(), "a", &url, &[]);
    let mut c = McpClient::connect(&a.url, Some(TOKEN)).await.expect("connect");
    let first = create_run(&mut c, "Before the race").await;
    let mut standbys = vec![standby(tmp.path(), "b", &url, &[]), standby(tmp.path(), "c", &url, &[])];
    for s in &standbys {
        assert_not_leader(&s.url, "GET", "/executor", &a.url);
    }

    // Round 1: A dies; B and C both see the lease lapse; exactly one takes it.
    a.kill9();
    let urls: Vec<String> = standbys.iter().map(|s| s.url.clone()).collect();
    let won = first_to_serve(&[&urls[0], &urls[1]], takeover_within()).await;
    let mut winner = standbys.remove(won);
    let mut loser = standbys.remove(0);
    // The other stays a standby, several times to live later, and names the winner.
    names_leader_within(&loser.url, &winner.url, takeover_within()).await;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(TTL_MS)).await;
        assert_not_leader(&loser.url, "POST", "/mcp", &winner.url);
    }
    assert!(!loser.stderr().contains("promoted"), "the loser never took the lease: {}", loser.stderr());
    let mut c = McpClient::connect(&winner.url, Some(TOKEN)).await.expect("connect");
    assert!(run_ids(&mut c).await.contains(&first), "the run A acknowledged is on the winner");
    let second = create_run(&mut c, "After the race").await;
    let promoted = winner.stderr().lines().find(|l| l.contains("promoted")).map(String::from).unwrap_or_default();
    assert!(promoted.contains("new_epoch=2"), "{promoted}");

    // Round 2: the winner dies too; the one left takes over, with both runs.
    winner.kill9();
    serves_within(&loser.url, takeover_within()).await;
    let mut c = McpClient::connect(&loser.url, Some(TOKEN)).await.expect("connect");
    let ids = run_ids(&mut c).await;
    assert!(ids.contains(&first) && ids.contains(&second), "{ids:?}");
    let promoted = loser.stderr().lines().find(|l| l.contains("promoted")).map(String::from).unwrap_or_default();
    assert!(promoted.contains("new_epoch=3"), "{promoted}");
    loser.kill9();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_leader_is_taken_over_and_when_resumed_is_refused_and_exits() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = leader(tmp.path(), "a", &url, &[]);
    let mut ca = McpClient::connect(&a.url, Some(TOKEN)).await.expect("connect");
    create_run(&mut ca, "Before the stop").await;
    let b = standby(tmp.path(), "b", &url, &[]);
    assert_not_leader(&b.url, "POST", "/mcp", &a.url);

    let pid = a.child.id().to_string();
    assert!(Command::new("kill").args(["-STOP", &pid]).status().expect("kill").success());
    serves_within(&b.url, takeover_within()).await;
    let mut cb = McpClient::connect(&b.url, Some(TOKEN)).await.expect("connect");
    create_run(&mut cb, "By the new leader").await;

    assert!(Command::new("kill").args(["-CONT", &pid]).status().expect("kill").success());
    let args = json!({ "taskName": "After the takeover", "rootConversationName": "Root", "context": "plan" });
    let refused = ca.call_tool("run_create", args).await;
    assert!(refused.as_ref().map_or(true, |r| r.is_error), "the old leader acknowledges nothing: {refused:?}");
    let status = exits_within(&mut a, Duration::from_secs(20));
    assert!(!status.success(), "the old leader exits non-zero");
    let stderr = a.stderr();
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.contains("PG_FENCED") && last.contains("epoch 1") && last.contains("epoch 2"), "{stderr}");

    let names: Vec<String> = {
        let runs: Value = cb.call_ok("run_list", json!({ "includeTerminal": true })).await.expect("run_list");
        runs["runs"].as_array().expect("runs").iter().map(|r| r["taskName"].as_str().unwrap_or("").into()).collect()
    };
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(!names.iter().any(|n| n == "After the takeover"), "{names:?}");
    // What the database holds, read by a daemon that recovers it afresh: B restarted.
    drop(cb);
    let mut b = b;
    assert!(b.terminate().success(), "B stops cleanly: {}", b.stderr());
    let again = leader(tmp.path(), "b", &url, &[]);
    let mut c = McpClient::connect(&again.url, Some(TOKEN)).await.expect("connect");
    let runs: Value = c.call_ok("run_list", json!({ "includeTerminal": true })).await.expect("run_list");
    let mut recovered: Vec<&str> =
        runs["runs"].as_array().expect("runs").iter().filter_map(|r| r["taskName"].as_str()).collect();
    recovered.sort_unstable();
    assert_eq!(
        recovered,
        vec!["Before the stop", "By the new leader"],
        "nothing of the old leader's after the takeover"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_leader_takes_its_lease_back_at_once() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = leader(tmp.path(), "a", &url, &[]);
    let id = std::fs::read_to_string(tmp.path().join("a").join("daemon-id")).expect("daemon-id");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tmp.path().join("a").join("daemon-id")).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the daemon id is private");
    }
    let b = standby(tmp.path(), "b", &url, &[]);
    a.kill9();
    let killed = Instant::now();
    let a = leader(tmp.path(), "a", &url, &[]);
    serves_within(&a.url, Duration::from_millis(TTL_MS)).await;
    assert!(
        killed.elapsed() < Duration::from_millis(TTL_MS),
        "at once, not after the lease lapsed: {:?}",
        killed.elapsed()
    );
    assert_eq!(std::fs::read_to_string(tmp.path().join("a").join("daemon-id")).expect("id"), id, "the same id");
    let epoch = server.rows(&url, "SELECT epoch FROM orchestrator_lease");
    assert_eq!(epoch[0][0].as_deref(), Some("2"), "with a new epoch");
    // B is still a standby, and names the leader as it serves now.
    let deadline = Instant::now() + Duration::from_millis(TTL_MS);
    loop {
        let (_, text) = http(&b.url, "POST", "/mcp", "{}");
        if text.contains(&a.url) {
            break;
        }
        assert!(Instant::now() < deadline, "B names the restarted leader: {text}");
        tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
    }
    assert_not_leader(&b.url, "POST", "/mcp", &a.url);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_cut_off_from_the_database_past_the_lease_stops_serving() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = leader(tmp.path(), "a", &url, &[]);
    let mut c = McpClient::connect(&a.url, Some(TOKEN)).await.expect("connect");
    create_run(&mut c, "Before the outage").await;
    server.stop_immediately();
    let stopped = Instant::now();
    let status = exits_within(&mut a, Duration::from_millis(TTL_MS + TAKEOVER_SLACK_MS));
    assert!(!status.success(), "it exits non-zero");
    assert!(stopped.elapsed() >= Duration::from_millis(TTL_MS - RENEW_MS), "not before the lease could lapse");
    let stderr = a.stderr();
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("orchestrator: ") && last.contains("[PG_LEASE_LOST]"), "{stderr}");
}

/// The database out of reach rather than down (a partition: packets go unanswered, nothing
/// is refused) while a commit is in flight: the leader exits once its lease lapses, within
/// its bounds (the time to live, one more read of the lease bounded by it, then at most
/// `LOST_LEASE_STOP_MS_MAX` for requests and again for the engine), not when the database
/// would answer the commit (`REQUEST_TIMEOUT_MS_DEFAULT`, 60 s). The commit is never
/// acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_partitioned_from_the_database_with_a_commit_in_flight_exits_within_its_bounds() {
    /// `LOST_LEASE_STOP_MS_MAX` in `serve.rs`.
    const LOST_LEASE_STOP_MS: u64 = 2_000;
    let server = TestServer::start();
    let direct = server.fresh_database();
    let mut path = Forward::bind();
    path.start(vec![([127, 0, 0, 1], server.port()).into()]);
    let url = direct.replace(&format!(":{}/", server.port()), &format!(":{}/", path.addr.port()));
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = leader(tmp.path(), "a", &url, &[]);
    let mut c = McpClient::connect(&a.url, Some(TOKEN)).await.expect("connect");
    create_run(&mut c, "Before the partition").await;
    path.freeze();
    let cut = Instant::now();
    let in_flight = tokio::spawn(async move {
        let args = json!({ "taskName": "During the partition", "rootConversationName": "Root", "context": "plan" });
        c.call_ok("run_create", args).await
    });
    // The time to live, the last read of the lease (at most as long), the requests and the
    // engine (`LOST_LEASE_STOP_MS` each), the runtime's shutdown (1 s), and twice the slack
    // of a loaded machine: 15 s, against more than 60 s when it waits for the commit.
    let bound = Duration::from_millis(2 * TTL_MS + 2 * LOST_LEASE_STOP_MS + 1_000 + 2 * TAKEOVER_SLACK_MS);
    let status = exits_within(&mut a, bound);
    assert!(!status.success(), "it exits non-zero");
    assert!(cut.elapsed() >= Duration::from_millis(TTL_MS - RENEW_MS), "not before the lease could lapse");
    let stderr = a.stderr();
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("orchestrator: ") && last.contains("[PG_LEASE_LOST]"), "{stderr}");
    let answered = in_flight.await.expect("the caller's task");
    assert!(answered.is_err(), "the run created during the partition is never acknowledged: {answered:?}");
}
