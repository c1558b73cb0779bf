//! `--notify` end to end (issue 31, `docs/notifications.md`): the real daemon posts to a
//! loopback webhook receiver: each kind once with a valid signature; a receiver that is
//! down gets every notification once it is back, none twice; a daemon killed with
//! notifications pending delivers them after its restart, under the same ids; over
//! https with `--notify-ca`, and never in clear to a receiver whose certificate is not
//! trusted.

#[path = "notify/receiver.rs"]
mod receiver;
mod support;

use console::client::McpClient;
use receiver::{Cert, Post, Receiver};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use support::{Daemon, TOKEN};

/// How long a test waits for the daemon's log to say what it must, ms.
const LOG_WAIT_MS: u64 = 30_000;

fn id(p: &Post) -> String {
    p.id()
}

fn secret(data: &Path) -> Vec<u8> {
    std::fs::read_to_string(data.join("notify-secret")).expect("secret").trim().as_bytes().to_vec()
}

async fn client(d: &Daemon) -> McpClient {
    McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect and initialize")
}

async fn run(c: &mut McpClient, name: &str) -> (String, String) {
    let run = c
        .call_ok("run_create", json!({ "taskName": name, "rootConversationName": "Root", "context": "plan" }))
        .await
        .expect("run_create");
    (run["runId"].as_str().expect("runId").to_string(), run["rootWorkerId"].as_str().expect("root").to_string())
}

async fn ask(c: &mut McpClient, worker: &str) {
    let args = json!({ "workerId": worker, "reason": "two fit", "question": "Which database?", "choices": ["postgres", "sqlite"] });
    c.call_ok("worker_await_human", args).await.expect("await human");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_is_posted_once_signed_in_its_form() {
    let receiver = Receiver::start(false).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (json_url, text_url) = (receiver.url("/json"), format!("text:{}", receiver.url("/text")));
    let d = Daemon::serve(&data, &["--mcp-token", TOKEN, "--notify", &json_url, "--notify", &text_url]);
    let mut c = client(&d).await;
    let (_, asking) = run(&mut c, "Asking").await;
    ask(&mut c, &asking).await;
    let (_, finishing) = run(&mut c, "Finishing").await;
    c.call_ok("worker_complete", json!({ "workerId": finishing, "summary": "all done" })).await.expect("complete");
    let (stopped, _) = run(&mut c, "Stopping").await;
    c.call_ok("run_cancel", json!({ "runId": stopped, "reason": "enough" })).await.expect("cancel");
    receiver.wait("three kinds to two targets", |s| s.posts.len() >= 6).await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("notify-secret")).expect("secret").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the secret is private");
    }
    let secret = secret(&data);
    let posts = receiver.seen().posts;
    let mut kinds = Vec::new();
    for p in &posts {
        let signature = p.headers.get("x-orchestrator-signature").expect("signed");
        assert_eq!(signature, &orchestrator::notify::hmac::signature(&secret, p.body.as_bytes()), "{p:?}");
        assert_eq!(p.headers.get("x-orchestrator-notification"), Some(&id(p)));
        if p.path == "/json" {
            let v: Value = serde_json::from_str(&p.body).expect("json body");
            assert_eq!(v["id"].as_str(), Some(id(p).as_str()));
            kinds.push(v["kind"].as_str().expect("kind").to_string());
            if v["kind"] == "human_question" {
                assert_eq!(v["text"], "Which database? Choices: postgres / sqlite");
            }
        } else {
            assert_eq!(p.headers.get("content-type").map(String::as_str), Some("text/plain; charset=utf-8"));
            assert!(!p.body.contains('\n'), "one line: {}", p.body);
        }
    }
    kinds.sort();
    assert_eq!(kinds, ["human_question", "run_failed", "run_finished"]);
    // Nothing more comes: each was acknowledged once.
    tokio::time::sleep(Duration::from_millis(7_000)).await;
    assert_eq!(receiver.seen().posts.len(), 6, "none twice: {:#?}", receiver.seen());
    let ids: std::collections::BTreeSet<String> = posts.iter().map(id).collect();
    assert_eq!(ids.len(), 6, "one id per episode and target");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_was_down_gets_everything_once_it_is_back() {
    let receiver = Receiver::start(true).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let d = Daemon::serve(&data, &["--mcp-token", TOKEN, "--notify", &receiver.url("/hook")]);
    let mut c = client(&d).await;
    let (_, a) = run(&mut c, "A").await;
    ask(&mut c, &a).await;
    let (_, b) = run(&mut c, "B").await;
    ask(&mut c, &b).await;
    receiver.wait("both refused while down", |s| s.posts.iter().filter(|p| !p.taken).count() >= 2).await;
    receiver.set_down(false);
    receiver.wait("both taken once back", |s| s.taken().len() >= 2).await;
    tokio::time::sleep(Duration::from_millis(7_000)).await;
    let taken = receiver.seen().taken();
    assert_eq!(taken.len(), 2, "none twice: {taken:#?}");
    assert_ne!(id(&taken[0]), id(&taken[1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_killed_with_notifications_pending_delivers_them_after_restart() {
    let receiver = Receiver::start(true).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let args = ["--mcp-token", TOKEN, "--notify", &receiver.url("/hook")];
    let mut d = Daemon::serve(&data, &args);
    let mut c = client(&d).await;
    let (_, a) = run(&mut c, "A").await;
    ask(&mut c, &a).await;
    let refused = receiver.wait("a refused post before the kill", |s| !s.posts.is_empty()).await.posts;
    d.kill9();
    receiver.set_down(false);
    let _d = Daemon::serve(&data, &args);
    let taken = receiver.wait("delivered after the restart", |s| !s.taken().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(7_000)).await;
    let taken_now: Vec<Post> = receiver.seen().taken();
    assert_eq!(taken_now.len(), 1, "once: {taken:#?}");
    assert_eq!(id(&taken_now[0]), id(&refused[0]), "the same notification, same id");
}

/// Waits until the daemon's log holds `text`, reading it again as it grows; fails the
/// test after [`LOG_WAIT_MS`].
async fn logged(d: &Daemon, text: &str) -> String {
    let start = Instant::now();
    loop {
        let log = d.stderr();
        if log.contains(text) {
            return log;
        }
        assert!(start.elapsed() < Duration::from_millis(LOG_WAIT_MS), "the log never said {text:?}:\n{log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_posts_go_over_tls_to_a_receiver_the_given_ca_vouches_for() {
    let cert = Cert::make();
    let receiver = Receiver::start_tls(&cert).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (json_url, text_url) = (receiver.url("/json"), format!("text:{}", receiver.url("/text")));
    let ca = cert.cert.to_str().expect("utf-8 path");
    let args = ["--mcp-token", TOKEN, "--notify", &json_url, "--notify", &text_url, "--notify-ca", ca];
    let d = Daemon::serve(&data, &args);
    let mut c = client(&d).await;
    let (_, asking) = run(&mut c, "Asking").await;
    ask(&mut c, &asking).await;
    let seen = receiver.wait("one question to two https targets", |s| s.posts.len() >= 2).await;
    assert!(seen.handshake_failures.is_empty(), "{seen:#?}");
    let secret = secret(&data);
    for p in &seen.posts {
        let signature = p.headers.get("x-orchestrator-signature").expect("signed");
        assert_eq!(signature, &orchestrator::notify::hmac::signature(&secret, p.body.as_bytes()), "{p:?}");
        assert_eq!(p.headers.get("host"), Some(&format!("localhost:{}", receiver.port())), "by name: {p:?}");
        assert!(p.body.contains("Which database?"), "{p:?}");
    }
    let text = seen.posts.iter().find(|p| p.path == "/text").expect("the text form");
    assert_eq!(text.headers.get("title").map(String::as_str), Some("Root asks you"), "{text:?}");
    let json = seen.posts.iter().find(|p| p.path == "/json").expect("the json form");
    let v: Value = serde_json::from_str(&json.body).expect("json body");
    assert_eq!(v["kind"], "human_question");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_whose_certificate_is_not_trusted_gets_nothing_in_clear() {
    let cert = Cert::make();
    let receiver = Receiver::start_tls(&cert).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let d = Daemon::serve(&data, &["--mcp-token", TOKEN, "--notify", &receiver.url("/hook")]);
    let mut c = client(&d).await;
    let (_, asking) = run(&mut c, "Asking").await;
    ask(&mut c, &asking).await;
    let seen = receiver.wait("the daemon's refused handshake", |s| !s.handshake_failures.is_empty()).await;
    // The daemon closed the handshake with an alert (not a plain-text request the TLS
    // server could not read), and no request reached the receiver.
    assert!(seen.handshake_failures[0].contains("alert"), "{seen:#?}");
    assert!(seen.posts.is_empty(), "{seen:#?}");
    let log = logged(&d, "certificate is not trusted").await;
    assert!(log.contains("--notify-ca FILE"), "the log says what to do:\n{log}");
}

#[test]
fn a_bad_notify_ca_stops_the_start_with_its_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, "no certificate here\n").expect("write");
    let out = std::process::Command::new(support::orchestrator_bin())
        .args(["serve", "--data-dir"])
        .arg(dir.path().join("data"))
        .args(["--listen", "127.0.0.1:0", "--mcp-token", TOKEN, "--notify", "https://localhost:9/x", "--notify-ca"])
        .arg(&ca)
        .env("XDG_CONFIG_HOME", dir.path().join("no-config"))
        .env_remove("ORCHESTRATOR_CONFIG")
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("NOTIFY_CA: --notify-ca") && stderr.contains("no -----BEGIN CERTIFICATE-----"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
}
