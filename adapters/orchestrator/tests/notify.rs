//! `--notify` end to end (issue 31, `docs/notifications.md`): the real daemon posts to a
//! loopback webhook receiver: each kind once with a valid signature; a receiver that is
//! down gets every notification once it is back, none twice; a daemon killed with
//! notifications pending delivers them after its restart, under the same ids; over
//! https with `--notify-ca`, and never in clear to a receiver whose certificate is not
//! trusted.

#[path = "notify/kinds.rs"]
mod kinds;
#[path = "notify/receiver.rs"]
mod receiver;
mod support;

use console::client::McpClient;
use executor_protocol::ErrorKindWire;
use kinds::{Shows, auto, command_for, executor, lane, now_ms, page, run_with};
use receiver::{Cert, Post, Receiver, Seen};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use support::{Daemon, TOKEN};

/// How long a test waits for the daemon's records to say what they must, ms.
const STATUS_WAIT_MS: u64 = 30_000;

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

/// Whether a JSON post of `kind` concerning `whom` (a worker or a run) was taken.
fn has(seen: &Seen, kind: &str, whom: &str) -> bool {
    seen.taken().iter().filter_map(json_of).any(|v| v["kind"] == kind && (v["worker"] == whom || v["run"] == whom))
}

fn json_of(p: &Post) -> Option<Value> {
    (p.path == "/json").then(|| serde_json::from_str(&p.body).expect("json body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_is_posted_once_signed_in_its_form() {
    let receiver = Receiver::start(false).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (json_url, text_url) = (receiver.url("/json"), format!("text:{}", receiver.url("/text")));
    let timers = ["--executor-absent-ms", "1000", "--dead-man-after-ms", "3000"];
    let mut args = vec!["--mcp-token", TOKEN, "--notify", &json_url, "--notify", &text_url];
    args.extend(timers);
    let d = Daemon::serve(&data, &args);
    let mut c = client(&d).await;
    let token = std::fs::read_to_string(data.join("executor-token")).expect("executor token").trim().to_string();

    // executor_offline: a Codex lane that must run, and no Codex executor.
    let offline_run = run_with(&mut c, "Offline", auto(json!({}))).await;
    let offline =
        lane(&mut c, &offline_run, "cli", json!({ "executor": "codex", "workspace": { "directory": "/src/app" } }))
            .await;
    // human_question, run_finished, run_failed: the MCP tools.
    let (_, asking) = run(&mut c, "Asking").await;
    ask(&mut c, &asking).await;
    let (finished, finishing) = run(&mut c, "Finishing").await;
    c.call_ok("worker_complete", json!({ "workerId": finishing, "summary": "all done" })).await.expect("complete");
    let (stopped, _) = run(&mut c, "Stopping").await;
    c.call_ok("run_cancel", json!({ "runId": stopped, "reason": "enough" })).await.expect("cancel");

    // usage_limit: the page names its reset time; the whole account (chrome-1) is held.
    let mut x1 = executor(&d.url, &token, "chrome-1").await;
    let limited_run = run_with(&mut c, "Limited", auto(json!({}))).await;
    let limited = lane(&mut c, &limited_run, "a", json!({})).await;
    let command = command_for(&mut x1, &limited).await;
    x1.deliver(&command, 2).await.expect("deliver");
    let until = now_ms() + 30 * 60_000;
    page(&mut x1, &command, 3, Shows::Error(ErrorKindWire::UsageLimit, Some(until), "You've hit your limit")).await;
    receiver.wait("usage_limit", |s| has(s, "usage_limit", &limited)).await;

    // The rest on a second browser, whose account is free.
    let mut x2 = executor(&d.url, &token, "chrome-2").await;
    // login_or_challenge: the page asks to log in.
    let checking_run = run_with(&mut c, "Checking", auto(json!({}))).await;
    let checking = lane(&mut c, &checking_run, "a", json!({})).await;
    let command = command_for(&mut x2, &checking).await;
    x2.deliver(&command, 2).await.expect("deliver");
    page(&mut x2, &command, 3, Shows::Error(ErrorKindWire::LoginRequired, None, "Log in to continue")).await;
    receiver.wait("login_or_challenge", |s| has(s, "login_or_challenge", &checking)).await;
    // approval_card: a tool-approval card waits in the conversation.
    let approving_run = run_with(&mut c, "Approving", auto(json!({}))).await;
    let approving = lane(&mut c, &approving_run, "a", json!({})).await;
    let command = command_for(&mut x2, &approving).await;
    x2.deliver(&command, 2).await.expect("deliver");
    page(&mut x2, &command, 3, Shows::Approval("GitHub")).await;
    receiver.wait("approval_card", |s| has(s, "approval_card", &approving)).await;
    // stall: turns end without progress until the guard (one attempt) pauses the lane.
    let stall = json!({ "idleGraceMs": 0, "stallWarningAfterNoProgressAttempts": null, "stallPauseAfterNoProgressAttempts": 1 });
    let stalling_run = run_with(&mut c, "Stalling", auto(stall)).await;
    let stalling = lane(&mut c, &stalling_run, "a", json!({})).await;
    let mut seq = 0;
    loop {
        tokio::select! {
            _ = receiver.wait("stall", |s| has(s, "stall", &stalling)) => break,
            command = command_for(&mut x2, &stalling) => {
                x2.deliver(&command, seq + 2).await.expect("deliver");
                page(&mut x2, &command, seq + 3, Shows::Idle).await;
                seq += 3;
            }
        }
    }
    // dead_man: a watched run whose one turn never moves; paused once it fired (a watched
    // run that stays stopped fires once per window).
    let quiet_run = run_with(&mut c, "Quiet", auto(json!({ "deadMan": "notify" }))).await;
    let quiet = lane(&mut c, &quiet_run, "a", json!({})).await;
    let command = command_for(&mut x2, &quiet).await;
    x2.deliver(&command, 2).await.expect("deliver");
    receiver.wait("dead_man", |s| has(s, "dead_man", &quiet_run)).await;
    c.call_ok("worker_pause", json!({ "workerId": quiet })).await.expect("pause");
    receiver.wait("executor_offline", |s| has(s, "executor_offline", &offline)).await;
    let all = receiver.wait("each kind to both targets", |s| s.taken().len() >= 18).await;

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("notify-secret")).expect("secret").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the secret is private");
    }
    let secret = secret(&data);
    let mut by_kind: BTreeMap<String, Value> = BTreeMap::new();
    for p in &all.posts {
        let signature = p.headers.get("x-orchestrator-signature").expect("signed");
        assert_eq!(signature, &orchestrator::notify::hmac::signature(&secret, p.body.as_bytes()), "{p:?}");
        assert_eq!(p.headers.get("x-orchestrator-notification"), Some(&id(p)));
        if let Some(v) = json_of(p) {
            assert_eq!(v["id"].as_str(), Some(id(p).as_str()));
            let kind = v["kind"].as_str().expect("kind").to_string();
            assert!(by_kind.insert(kind, v.clone()).is_none(), "one episode of each kind: {:#?}", all.posts);
        } else {
            assert_eq!(p.headers.get("content-type").map(String::as_str), Some("text/plain; charset=utf-8"));
            assert!(!p.body.contains('\n') && p.headers.contains_key("title"), "one line, titled: {p:?}");
        }
    }
    let kinds: Vec<&str> = by_kind.keys().map(String::as_str).collect();
    assert_eq!(
        kinds,
        [
            "approval_card",
            "dead_man",
            "executor_offline",
            "human_question",
            "login_or_challenge",
            "run_failed",
            "run_finished",
            "stall",
            "usage_limit"
        ]
    );
    // What each carries (docs/notifications.md, "What is sent").
    let k = |kind: &str| &by_kind[kind];
    assert_eq!(
        (&k("human_question")["worker"], &k("human_question")["text"]),
        (&json!(asking), &json!("Which database? Choices: postgres / sqlite"))
    );
    assert!(k("approval_card")["title"].as_str().expect("title").ends_with("waits for you to answer an approval card"));
    assert_eq!(
        (&k("usage_limit")["worker"], &k("usage_limit")["until"]),
        (&json!(limited), &json!(until)),
        "with its reset time"
    );
    assert!(k("login_or_challenge")["title"].as_str().expect("title").ends_with("is paused: account_check"));
    assert_eq!(k("stall")["worker"], json!(stalling));
    assert!(k("stall")["text"].as_str().expect("text").ends_with("min without progress"), "{}", k("stall"));
    assert_eq!((&k("dead_man")["run"], &k("dead_man")["title"]), (&json!(quiet_run), &json!("Quiet stopped moving")));
    assert!(k("dead_man")["text"].as_str().expect("text").starts_with("nothing moved for"));
    assert_eq!(k("executor_offline")["worker"], json!(offline));
    assert!(k("executor_offline")["title"].as_str().expect("title").ends_with("no codex executor connected"));
    assert_eq!(
        (&k("run_finished")["run"], &k("run_finished")["title"]),
        (&json!(finished), &json!("Finishing completed"))
    );
    assert_eq!((&k("run_failed")["run"], &k("run_failed")["title"]), (&json!(stopped), &json!("Stopping was stopped")));
    // The text form of each episode says the same, under its own id.
    for v in by_kind.values() {
        let episode = v["id"].as_str().and_then(|id| id.rsplit_once('-')).expect("ntf-EPISODE-TARGET").0;
        let text_id = format!("{episode}-1");
        let p = all.posts.iter().find(|p| id(p) == text_id).expect("the text form");
        assert_eq!(p.headers.get("title").map(String::as_str), v["title"].as_str(), "{p:?}");
        assert!(p.body.starts_with(v["title"].as_str().expect("title")), "{p:?}");
    }
    // The daemon's own records: every notice delivered, none pending (so none will be
    // posted again); only then is the receiver's count final.
    booked(&d, "18 delivered, none pending", |v| v.delivered == 18 && v.pending == 0 && v.abandoned == 0).await;
    assert_eq!(receiver.seen().posts.len(), 18, "none twice: {:#?}", receiver.seen());
    let said = doctor_line(&data);
    assert!(said.starts_with("  ok    notifications: 18 delivered, 0 pending, 0 abandoned (2 targets)"), "{said}");
    let ids: std::collections::BTreeSet<String> = all.posts.iter().map(id).collect();
    assert_eq!(ids.len(), 18, "one id per episode and target");
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
    booked(&d, "both delivered, none pending", |v| v.delivered == 2 && v.pending == 0).await;
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
    let d = Daemon::serve(&data, &args);
    let taken = receiver.wait("delivered after the restart", |s| !s.taken().is_empty()).await;
    booked(&d, "delivered, none pending", |v| v.delivered == 1 && v.pending == 0).await;
    let taken_now: Vec<Post> = receiver.seen().taken();
    assert_eq!(taken_now.len(), 1, "once: {taken:#?}");
    assert_eq!(id(&taken_now[0]), id(&refused[0]), "the same notification, same id");
}

/// What the daemon says its notifications came to (`GET /health`, as `doctor` reads it).
async fn notifications(d: &Daemon) -> address::NotificationsView {
    let url = d.url.replace("/mcp", address::HEALTH_PATH);
    let mut client = McpClient::connect_raw(&url, Some(TOKEN)).await.expect("connect");
    let answer = client.send(hyper::Method::GET, None, &[], None).await.expect("GET /health");
    let health: address::Health = serde_json::from_str(&answer.text).expect("health");
    health.notifications.expect("started with --notify")
}

/// `orchestrator doctor`'s line about the notifications of the daemon in `data`.
fn doctor_line(data: &Path) -> String {
    let out = std::process::Command::new(support::orchestrator_bin())
        .args(["doctor", "--mcp-token", TOKEN, "--data-dir"])
        .arg(data)
        .env_remove("ORCHESTRATOR_CONFIG")
        .env("XDG_CONFIG_HOME", data.with_extension("no-config"))
        .output()
        .expect("run doctor");
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = report.lines().position(|l| l.contains(" notifications: ")).unwrap_or_else(|| panic!("{report}"));
    report.lines().skip(line).take(2).collect::<Vec<_>>().join("\n")
}

/// Waits until the daemon's own records say `done` (every notice settled, say), reading
/// `/health` again until they do; fails the test after [`STATUS_WAIT_MS`].
async fn booked(d: &Daemon, what: &str, done: impl Fn(&address::NotificationsView) -> bool) {
    let start = Instant::now();
    loop {
        let view = notifications(d).await;
        if done(&view) {
            return;
        }
        assert!(start.elapsed() < Duration::from_millis(STATUS_WAIT_MS), "{what}: {view:?}");
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
    // The daemon's status (`/health`, what `doctor` prints) books it as pending, with why;
    // its log said so first.
    booked(&d, "the untrusted certificate booked", |v| {
        v.last_failure.as_ref().is_some_and(|f| f.detail.contains("certificate is not trusted"))
    })
    .await;
    let view = notifications(&d).await;
    assert!(view.pending >= 1 && view.delivered == 0, "{view:?}");
    let said = doctor_line(&data);
    assert!(said.contains("FAIL  notifications: 0 delivered, ") && said.contains("--notify-ca FILE"), "{said}");
    let log = d.stderr();
    assert!(
        log.contains("certificate is not trusted") && log.contains("--notify-ca FILE"),
        "the log says what to do:\n{log}"
    );
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

/// `orchestrator notify test` against `d`: its stdout and whether it exited 0.
async fn notify_test(d: &Daemon) -> (String, bool) {
    let url = d.url.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(support::orchestrator_bin())
            .args(["notify", "test", "--url", &url, "--mcp-token", TOKEN])
            .output()
            .expect("orchestrator notify test runs")
    })
    .await
    .expect("joined");
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_test_posts_once_to_each_target_signed_and_says_which_took_it() {
    let receiver = Receiver::start(false).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    // The second target's port is closed: the test says so, and exits 1.
    let closed = format!("text:http://127.0.0.1:{}/topic", support::free_port());
    let d = Daemon::serve(&data, &["--mcp-token", TOKEN, "--notify", &receiver.url("/json"), "--notify", &closed]);
    let (said, ok) = notify_test(&d).await;
    assert!(!ok, "one target did not take it: {said}");
    assert!(said.contains(&format!("  delivered  http://127.0.0.1:{}/…\n", receiver.port())), "{said}");
    assert!(said.contains("  FAILED     text:http://127.0.0.1:") && said.contains("1 of 2 targets"), "{said}");
    assert!(!said.contains("/topic") && !said.contains("/json"), "paths (a webhook's secret) are not printed: {said}");
    let seen = receiver.wait("the test post", |s| !s.taken().is_empty()).await;
    let post = &seen.taken()[0];
    let body = json_of(post).expect("json");
    assert_eq!((body["kind"].as_str(), body["run"].is_null()), (Some("test"), true), "{body}");
    let signature = post.headers.get("x-orchestrator-signature").expect("signed");
    assert_eq!(signature, &orchestrator::notify::hmac::signature(&secret(&data), post.body.as_bytes()));
    // Not an episode: nothing is booked, and a second test has a fresh id.
    booked(&d, "no notice booked by a test", |v| v.delivered == 0 && v.pending == 0).await;
    let first = post.id();
    let (_, _) = notify_test(&d).await;
    let seen = receiver.wait("the second test post", |s| s.taken().len() >= 2).await;
    assert_ne!(seen.taken()[1].id(), first, "a fresh id per test");
    // A daemon without targets says so.
    let bare = Daemon::serve(&dir.path().join("bare"), &["--mcp-token", TOKEN]);
    let (said, ok) = notify_test(&bare).await;
    assert!(!ok && said.contains("no notification target"), "{said}");
}
