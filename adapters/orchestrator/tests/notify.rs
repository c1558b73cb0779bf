//! `--notify` end to end (issue 31, `docs/notifications.md`): the real daemon posts to a
//! loopback webhook receiver: each kind once with a valid signature; a receiver that is
//! down gets every notification once it is back, none twice; a daemon killed with
//! notifications pending delivers them after its restart, under the same ids.

mod support;

use console::client::McpClient;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Daemon, TOKEN};

/// How long a test waits for the daemon to post what it must.
const WAIT_MS: u64 = 30_000;

/// One post the receiver answered.
#[derive(Clone, Debug)]
struct Post {
    path: String,
    headers: BTreeMap<String, String>,
    body: String,
    /// Answered 200 (else 503: the receiver was "down").
    taken: bool,
}

/// A loopback webhook receiver on its own thread.
#[derive(Clone)]
struct Receiver {
    port: u16,
    posts: Arc<Mutex<Vec<Post>>>,
    down: Arc<Mutex<bool>>,
}

impl Receiver {
    fn start(down: bool) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let r = Receiver { port, posts: Arc::default(), down: Arc::new(Mutex::new(down)) };
        let me = r.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                me.serve(stream);
            }
        });
        r
    }

    fn serve(&self, stream: std::net::TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut headers = BTreeMap::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let length = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        let taken = !*self.down.lock().expect("lock");
        let status = if taken { "200 OK" } else { "503 Service Unavailable" };
        let mut stream = stream;
        let _ = write!(stream, "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        let body = String::from_utf8(body).expect("utf-8 body");
        self.posts.lock().expect("lock").push(Post { path, headers, body, taken });
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn set_down(&self, down: bool) {
        *self.down.lock().expect("lock") = down;
    }

    fn posts(&self) -> Vec<Post> {
        self.posts.lock().expect("lock").clone()
    }

    fn taken(&self) -> Vec<Post> {
        self.posts().into_iter().filter(|p| p.taken).collect()
    }

    /// Waits until `done` holds of the posts, or fails the test.
    fn wait(&self, what: &str, done: impl Fn(&[Post]) -> bool) -> Vec<Post> {
        let start = Instant::now();
        loop {
            let posts = self.posts();
            if done(&posts) {
                return posts;
            }
            assert!(start.elapsed() < Duration::from_millis(WAIT_MS), "{what}: {posts:#?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn id(p: &Post) -> String {
    p.headers.get("idempotency-key").cloned().unwrap_or_default()
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
    let receiver = Receiver::start(false);
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
    receiver.wait("three kinds to two targets", |p| p.len() >= 6);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("notify-secret")).expect("secret").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the secret is private");
    }
    let secret = secret(&data);
    let posts = receiver.posts();
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
    std::thread::sleep(Duration::from_millis(7_000));
    assert_eq!(receiver.posts().len(), 6, "none twice: {:#?}", receiver.posts());
    let ids: std::collections::BTreeSet<String> = posts.iter().map(id).collect();
    assert_eq!(ids.len(), 6, "one id per episode and target");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_was_down_gets_everything_once_it_is_back() {
    let receiver = Receiver::start(true);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let d = Daemon::serve(&data, &["--mcp-token", TOKEN, "--notify", &receiver.url("/hook")]);
    let mut c = client(&d).await;
    let (_, a) = run(&mut c, "A").await;
    ask(&mut c, &a).await;
    let (_, b) = run(&mut c, "B").await;
    ask(&mut c, &b).await;
    receiver.wait("both refused while down", |p| p.iter().filter(|p| !p.taken).count() >= 2);
    receiver.set_down(false);
    receiver.wait("both taken once back", |p| p.iter().filter(|p| p.taken).count() >= 2);
    std::thread::sleep(Duration::from_millis(7_000));
    let taken = receiver.taken();
    assert_eq!(taken.len(), 2, "none twice: {taken:#?}");
    assert_ne!(id(&taken[0]), id(&taken[1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_killed_with_notifications_pending_delivers_them_after_restart() {
    let receiver = Receiver::start(true);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let args = ["--mcp-token", TOKEN, "--notify", &receiver.url("/hook")];
    let mut d = Daemon::serve(&data, &args);
    let mut c = client(&d).await;
    let (_, a) = run(&mut c, "A").await;
    ask(&mut c, &a).await;
    let refused = receiver.wait("a refused post before the kill", |p| !p.is_empty());
    d.kill9();
    receiver.set_down(false);
    let _d = Daemon::serve(&data, &args);
    let taken = receiver.wait("delivered after the restart", |p| p.iter().any(|p| p.taken));
    std::thread::sleep(Duration::from_millis(7_000));
    let taken_now: Vec<Post> = receiver.taken();
    assert_eq!(taken_now.len(), 1, "once: {taken:#?}");
    assert_eq!(id(&taken_now[0]), id(&refused[0]), "the same notification, same id");
}
