//! The real `orchestrator serve` process over HTTP: the token, Host/Origin validation,
//! bad input, long polls, status, shutdown, and kill -9 under MCP load.

mod support;

use console::client::McpClient;
use hyper::Method;
use serde_json::{Value, json};
use support::{Daemon, TOKEN};

async fn client(d: &Daemon) -> McpClient {
    McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect and initialize")
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } })
}

async fn create_run(c: &mut McpClient) -> (String, String) {
    let run = c
        .call_ok("run_create", json!({ "taskName": "Test", "rootConversationName": "Root", "context": "plan" }))
        .await
        .expect("run_create");
    (run["runId"].as_str().expect("runId").to_string(), run["rootWorkerId"].as_str().expect("root").to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_token_is_required_and_generated_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut d = Daemon::serve(&data, &[]);
    let token = std::fs::read_to_string(data.join("mcp-token")).expect("token file").trim().to_string();
    assert_eq!(token.len(), 64, "a generated token is 32 random bytes in hex");
    assert!(d.stdout.iter().any(|l| l == &token), "the generated token is printed once: {:?}", d.stdout);

    let mut none = McpClient::connect_raw(&d.url, None).await.expect("connect");
    let r = none.send(Method::POST, Some(&initialize()), &[], Some(1)).await.expect("send");
    assert_eq!(r.status.as_u16(), 401, "missing token");
    assert!(r.headers.get("www-authenticate").is_some());
    let mut wrong = McpClient::connect_raw(&d.url, Some("not-the-token-000000")).await.expect("connect");
    let r = wrong.send(Method::POST, Some(&initialize()), &[], Some(1)).await.expect("send");
    assert_eq!(r.status.as_u16(), 401, "wrong token");
    let mut right = McpClient::connect(&d.url, Some(&token)).await.expect("the right token works");
    right.call_ok("run_list", json!({})).await.expect("run_list");
    assert!(d.terminate().success(), "SIGTERM exits 0");

    let mut again = Daemon::serve(&data, &[]);
    assert!(!again.stdout.iter().any(|l| l == &token), "the token is printed only when generated");
    McpClient::connect(&again.url, Some(&token)).await.expect("the stored token still works");
    let _ = again.terminate();

    let mut given = Daemon::serve(&data, &["--mcp-token", TOKEN]);
    assert!(McpClient::connect(&given.url, Some(&token)).await.is_err(), "--mcp-token overrides the file");
    McpClient::connect(&given.url, Some(TOKEN)).await.expect("the flag's token works");
    let _ = given.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_and_origin_are_validated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Daemon::serve(&dir.path().join("data"), &["--mcp-token", TOKEN, "--allow-host", "tunnel.example"]);
    let mut c = McpClient::connect_raw(&d.url, Some(TOKEN)).await.expect("connect");
    let cases: [(&[(&str, &str)], u16); 6] = [
        (&[("host", "evil.example")], 403),
        (&[("host", "evil.example:7411")], 403),
        (&[("origin", "http://evil.example")], 403),
        (&[("origin", "null")], 403),
        (&[("origin", "http://localhost:3000")], 200),
        (&[("host", "tunnel.example")], 200),
    ];
    for (headers, expected) in cases {
        let mut c2 = McpClient::connect_raw(&d.url, Some(TOKEN)).await.expect("connect");
        let r = c2.send(Method::POST, Some(&initialize()), headers, Some(1)).await.expect("send");
        assert_eq!(r.status.as_u16(), expected, "{headers:?}");
    }
    // A body over the cap is refused from its declared length, before it is read.
    let _ = &mut c;
    let addr = d.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let mut raw = tokio::net::TcpStream::connect(&addr).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{{",
        5 << 20
    );
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    raw.write_all(head.as_bytes()).await.expect("write");
    let mut answer = vec![0u8; 64];
    let n = raw.read(&mut answer).await.expect("read");
    let answer = String::from_utf8_lossy(&answer[..n]).to_string();
    assert!(answer.starts_with("HTTP/1.1 413"), "the request body is capped: {answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_tool_error_naming_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Daemon::serve_with_token(&dir.path().join("data"));
    let mut c = client(&d).await;
    let (run, root) = create_run(&mut c).await;
    let refuse = |r: console::client::ToolResult| {
        assert!(r.is_error, "must be refused: {}", r.structured);
        (
            r.structured["code"].as_str().unwrap_or("").to_string(),
            r.structured["message"].as_str().unwrap_or("").to_string(),
        )
    };

    let (code, message) =
        refuse(c.call_tool("worker_progress", json!({ "workerId": 7, "summary": "s" })).await.unwrap());
    assert_eq!(code, "INVALID_ARGUMENT");
    assert!(message.starts_with("workerId:"), "{message}");
    let (code, message) = refuse(c.call_tool("worker_progress", json!({ "summary": "s" })).await.unwrap());
    assert_eq!(code, "INVALID_ARGUMENT");
    assert!(message.contains("workerId"), "{message}");
    let (_, message) =
        refuse(c.call_tool("worker_pause", json!({ "workerId": root, "afterTurn": true })).await.unwrap());
    assert!(message.contains("afterTurn"), "unknown fields are named: {message}");
    let (code, message) = refuse(c.call_tool("worker_get", json!({ "workerId": "worker-1" })).await.unwrap());
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("INVALID_ARGUMENT", "workerId: expected an id of the form wrk-<number>")
    );
    let (code, _) = refuse(c.call_tool("worker_get", json!({ "workerId": "wrk-999" })).await.unwrap());
    assert_eq!(code, "UNKNOWN_WORKER");
    let (code, _) = refuse(c.call_tool("run_get", json!({ "runId": "run-999" })).await.unwrap());
    assert_eq!(code, "UNKNOWN_RUN");
    let long = "x".repeat(5_000);
    let (code, message) =
        refuse(c.call_tool("worker_progress", json!({ "workerId": root, "summary": long })).await.unwrap());
    assert_eq!(code, "INVALID_ARGUMENT");
    assert!(message.starts_with("summary: must be at most 4096 bytes"), "{message}");
    let (code, message) = refuse(
        c.call_tool("run_create", json!({ "taskName": "t".repeat(300), "rootConversationName": "r" })).await.unwrap(),
    );
    assert_eq!(code, "INVALID_ARGUMENT");
    assert!(message.starts_with("taskName:"), "{message}");
    let (code, _) = refuse(
        c.call_tool("worker_continuation_set", json!({ "workerId": root, "policy": { "idleGraceMs": 99_999_999 } }))
            .await
            .unwrap(),
    );
    assert_eq!(code, "INVALID_POLICY");
    // A CLI worker needs its directory, absolute; an unknown executor kind names the field.
    let spawn = |extra: Value| {
        let mut args =
            json!({ "runId": run, "name": "/root/cli", "taskSummary": "s", "assignment": { "objective": "o" } });
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        args
    };
    let (code, message) = refuse(c.call_tool("worker_spawn", spawn(json!({ "executor": "codex" }))).await.unwrap());
    assert_eq!(code, "WORKSPACE_REQUIRED");
    assert!(message.contains("workspace.directory"), "{message}");
    let relative = json!({ "executor": "claude", "workspace": { "directory": "src/app" } });
    let (code, message) = refuse(c.call_tool("worker_spawn", spawn(relative)).await.unwrap());
    assert_eq!(code, "INVALID_ARGUMENT");
    assert!(message.contains("workspace.directory") && message.contains("absolute"), "{message}");
    let (code, message) = refuse(c.call_tool("worker_spawn", spawn(json!({ "executor": "gemini" }))).await.unwrap());
    assert_eq!(code, "INVALID_ARGUMENT");
    assert!(message.contains("executor"), "{message}");
    let cli = c
        .call_ok("worker_spawn", spawn(json!({ "executor": "codex", "workspace": { "directory": "/src/app" } })))
        .await
        .expect("a codex worker with a directory");
    assert_eq!((&cli["executor"], &cli["workspace"]["directory"]), (&json!("codex"), &json!("/src/app")));
    let listed = c.call_ok("worker_list", json!({ "runId": run })).await.expect("worker_list");
    let kinds: Vec<&str> =
        listed["workers"].as_array().unwrap().iter().map(|w| w["executor"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["chatgpt", "codex"], "/root and the CLI lane");
    let (code, _) = refuse(
        c.call_tool(
            "worker_attach",
            json!({ "workerId": cli["workerId"], "conversationUrl": "https://chatgpt.com/c/1" }),
        )
        .await
        .unwrap(),
    );
    assert_eq!(code, "INVALID_ARGUMENT");
    c.call_ok("worker_interrupt", json!({ "workerId": cli["workerId"], "reason": "done looking" }))
        .await
        .expect("stop it");
    let err = c.call_tool("no_such_tool", json!({})).await.expect_err("an unknown tool is a protocol error");
    assert!(err.to_string().contains("-32602"), "{err}");

    // Nothing half-applied: the run is unchanged and the daemon is fine.
    let got = c.call_ok("run_get", json!({ "runId": run })).await.expect("run_get");
    assert_eq!(got["taskName"], "Test");
    let w = c.call_ok("worker_complete", json!({ "workerId": root, "summary": "done" })).await.expect("complete");
    assert_eq!(w["disposition"], "completed");
    let (code, _) =
        refuse(c.call_tool("worker_progress", json!({ "workerId": root, "summary": "late" })).await.unwrap());
    assert_eq!(code, "WORKER_TERMINAL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_wait_wakes_on_commit_and_times_out_empty() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Daemon::serve_with_token(&dir.path().join("data"));
    let mut c = client(&d).await;
    let (run, root) = create_run(&mut c).await;
    let page = c.call_ok("events_wait", json!({ "cursor": 0 })).await.expect("events");
    let cursor = page["nextCursor"].as_u64().expect("cursor");
    assert_eq!(page["events"][0]["name"], "run.created");

    let started = std::time::Instant::now();
    let empty = c.call_ok("events_wait", json!({ "cursor": cursor, "timeoutMs": 300 })).await.expect("timeout");
    assert!(empty["events"].as_array().expect("events").is_empty());
    assert_eq!(empty["nextCursor"].as_u64(), Some(cursor));
    assert!(started.elapsed() >= std::time::Duration::from_millis(280));

    let url = d.url.clone();
    let root2 = root.clone();
    let writer = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let mut w = McpClient::connect(&url, Some(TOKEN)).await.expect("connect");
        w.call_ok("worker_progress", json!({ "workerId": root2, "summary": "woke you" })).await.expect("progress");
    });
    let started = std::time::Instant::now();
    let page = c
        .call_ok("events_wait", json!({ "cursor": cursor, "workerId": root, "runId": run, "timeoutMs": 20_000 }))
        .await
        .expect("wait");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "woken by the commit, not the timeout");
    let names: Vec<&str> = page["events"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"worker.progress"), "{names:?}");
    assert_eq!(page["events"][0]["data"]["summary"], "woke you");
    writer.await.expect("writer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_prints_runs_workers_and_attempts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut d = Daemon::serve(&data, &[]);
    let token = std::fs::read_to_string(data.join("mcp-token")).expect("token").trim().to_string();
    let mut c = McpClient::connect(&d.url, Some(&token)).await.expect("connect");
    let (run, _) = create_run(&mut c).await;
    c.call_ok(
        "worker_spawn",
        json!({ "runId": run, "name": "/root/api", "taskSummary": "API", "assignment": { "objective": "o" } }),
    )
    .await
    .expect("spawn");
    let workspace = json!({ "directory": "/src/app", "branch": "lane-cli" });
    c.call_ok(
        "worker_spawn",
        json!({ "runId": run, "name": "/root/cli", "taskSummary": "CLI", "assignment": { "objective": "o" },
                "executor": "codex", "workspace": workspace }),
    )
    .await
    .expect("spawn a codex worker");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(support::orchestrator_bin())
            .args(["status", "--data-dir", data.to_str().unwrap()])
            .env_remove("ORCHESTRATOR_MCP_TOKEN")
            .output()
            .expect("status")
    })
    .await
    .expect("join");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text} {}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("run-1") && text.contains("Test"), "{text}");
    assert!(text.contains("/root/api") && text.contains("Executor offline"), "{text}");
    assert!(text.contains("attempt #1") && text.contains("Initial"), "{text}");
    assert!(text.contains("codex session none yet in /src/app (branch lane-cli)"), "{text}");
    assert!(d.terminate().success());
}

/// A finished run stays visible from the terminal (issue 29): `status` counts it and
/// points to `--all`, which prints how it ended and its workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_all_lists_finished_runs_with_how_they_ended() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut d = Daemon::serve(&data, &[]);
    let token = std::fs::read_to_string(data.join("mcp-token")).expect("token").trim().to_string();
    let mut c = McpClient::connect(&d.url, Some(&token)).await.expect("connect");
    let (run, _) = create_run(&mut c).await;
    c.call_ok("run_cancel", json!({ "runId": run, "reason": "enough for tonight" })).await.expect("cancel");
    let status = |all: bool| {
        let data = data.clone();
        tokio::task::spawn_blocking(move || {
            let mut command = std::process::Command::new(support::orchestrator_bin());
            command.args(["status", "--data-dir", data.to_str().unwrap()]).env_remove("ORCHESTRATOR_MCP_TOKEN");
            if all {
                command.arg("--all");
            }
            command.output().expect("status")
        })
    };
    let out = status(false).await.expect("join");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text} {}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("No unfinished runs"), "{text}");
    assert!(text.contains("1 finished run: `orchestrator status --all` lists them."), "{text}");
    assert!(!text.contains("enough for tonight"), "{text}");
    let out = status(true).await.expect("join");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text} {}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Finished (1, the most recent first):"), "{text}");
    assert!(text.contains("run-1 Test  (stopped, ended ") && text.contains(" ago, took "), "{text}");
    assert!(text.contains("how it ended: enough for tonight"), "{text}");
    assert!(text.contains("/root") && text.contains("stopped"), "{text}");
    assert!(d.terminate().success());
}

/// `orchestrator start` creates a run whose root is a CLI worker in the directory given,
/// with Auto Resume on, and asks for its first turn (an intent waits for a CLI executor).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_creates_a_cli_run_and_asks_for_its_first_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let work = dir.path().join("repo");
    std::fs::create_dir(&work).expect("workspace");
    let mut d = Daemon::serve(&data, &[]);
    let (data_arg, work_arg) = (data.to_str().unwrap().to_string(), work.to_str().unwrap().to_string());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(support::orchestrator_bin())
            .args(["start", "--data-dir", &data_arg, "--executor", "claude", "--workspace", &work_arg])
            .args(["--branch", "night", "Make the tests pass", "then stop"])
            .env_remove("ORCHESTRATOR_MCP_TOKEN")
            .output()
            .expect("start")
    })
    .await
    .expect("join");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text} {}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Started run-1") && text.contains("Claude Code worker"), "{text}");
    let token = std::fs::read_to_string(data.join("mcp-token")).expect("token").trim().to_string();
    let mut c = McpClient::connect(&d.url, Some(&token)).await.expect("connect");
    let run = c.call_ok("run_get", json!({ "runId": "run-1" })).await.expect("run");
    assert_eq!(
        run.pointer("/taskName").or(run.pointer("/run/taskName")),
        Some(&json!("Make the tests pass then stop"))
    );
    let root = c.call_ok("worker_get", json!({ "workerId": "wrk-1" })).await.expect("root");
    let w = root.get("worker").unwrap_or(&root);
    assert_eq!(w["executor"], "claude", "{w}");
    assert_eq!(w["workspace"]["directory"], work.canonicalize().unwrap().to_str().unwrap(), "{w}");
    assert_eq!(w["workspace"]["branch"], "night", "{w}");
    assert_eq!(w.pointer("/policy/mode"), Some(&json!("auto")), "{w}");
    let attempts = c.call_ok("worker_attempts", json!({ "workerId": "wrk-1" })).await.expect("attempts");
    let first = &attempts["attempts"][0];
    assert_eq!(first["reason"], "initial", "the first turn was asked for: {attempts}");
    assert!(d.terminate().success());
}

/// `orchestrator worker ...` controls one worker through the daemon: pause, resume, stop;
/// a refused action (an unknown worker) is an error, not a success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_commands_pause_resume_and_stop_a_worker() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut d = Daemon::serve(&data, &[]);
    let token = std::fs::read_to_string(data.join("mcp-token")).expect("token").trim().to_string();
    let mut c = McpClient::connect(&d.url, Some(&token)).await.expect("connect");
    let (run, _) = create_run(&mut c).await;
    let spawned = c
        .call_ok(
            "worker_spawn",
            json!({ "runId": run, "name": "/root/api", "taskSummary": "API", "assignment": { "objective": "o" } }),
        )
        .await
        .expect("spawn");
    let worker = spawned.pointer("/worker/workerId").or(spawned.pointer("/workerId")).and_then(|v| v.as_str());
    let worker = worker.expect("worker id").to_string();
    let data_arg = data.to_str().unwrap().to_string();
    let cli = move |args: Vec<String>| {
        let data_arg = data_arg.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                std::process::Command::new(support::orchestrator_bin())
                    .arg("worker")
                    .args(&args)
                    .args(["--data-dir", &data_arg])
                    .env_remove("ORCHESTRATOR_MCP_TOKEN")
                    .output()
                    .expect("worker command")
            })
            .await
            .expect("join")
        }
    };
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let out = cli(args(&["pause", &worker])).await;
    assert!(out.status.success(), "{out:?}");
    let view = c.call_ok("worker_get", json!({ "workerId": worker })).await.expect("get");
    assert_eq!(view.pointer("/pause/reason"), Some(&json!("operator")), "{view}");
    let out = cli(args(&["resume", &worker])).await;
    assert!(out.status.success(), "{out:?}");
    let view = c.call_ok("worker_get", json!({ "workerId": worker })).await.expect("get");
    assert_eq!(view.pointer("/pause"), Some(&json!(null)), "{view}");
    let out = cli(args(&["stop", &worker, "not", "needed"])).await;
    assert!(out.status.success(), "{out:?}");
    let view = c.call_ok("worker_get", json!({ "workerId": worker })).await.expect("get");
    assert_eq!(view.pointer("/lifecycle"), Some(&json!("cancelled")), "{view}");
    let out = cli(args(&["pause", "wrk-999"])).await;
    assert_eq!(out.status.code(), Some(1), "an unknown worker is refused: {out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrk-999"), "{out:?}");
    assert!(d.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_data_directory_fails_with_a_clear_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let _first = Daemon::serve_with_token(&data);
    let out = std::process::Command::new(support::orchestrator_bin())
        .args(["serve", "--data-dir", data.to_str().unwrap(), "--listen", "127.0.0.1:0", "--mcp-token", TOKEN])
        .output()
        .expect("second daemon");
    assert!(!out.status.success(), "a second daemon on the same data directory must not start");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("store") && err.contains(data.to_str().unwrap()), "{err}");
}

/// Every acknowledged tool call's effect survives kill -9: 8 clients write progress,
/// messages and runs as fast as they can; the daemon is killed mid-stream; after a
/// restart every acknowledged write is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_under_load_loses_no_acknowledged_call() {
    const RUNS_PER_CLIENT_MAX: usize = 100;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut d = Daemon::serve_with_token(&data);
    let mut c = client(&d).await;
    let (run, root) = create_run(&mut c).await;
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, String)>::new()));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (url, root, run, acked) = (d.url.clone(), root.clone(), run.clone(), acked.clone());
        tasks.push(tokio::spawn(async move {
            let Ok(mut c) = McpClient::connect(&url, Some(TOKEN)).await else { return };
            for n in 0.. {
                // At most RUNS_PER_CLIENT_MAX runs each, so that every run fits in one
                // `run_list` page (engine::limits::LIST_PAGE_COUNT_MAX, 1,000): a fast machine
                // made more, and the runs past the page read as lost.
                let make_run = n % 3 == 2 && n / 3 < RUNS_PER_CLIENT_MAX;
                let (tool, args, key) = match make_run {
                    false => {
                        let s = format!("c{i}-p{n}");
                        ("worker_progress", json!({ "workerId": root, "summary": s }), s)
                    }
                    true => {
                        let s = format!("c{i}-r{n}");
                        ("run_create", json!({ "taskName": s, "rootConversationName": "r" }), s)
                    }
                };
                let _ = &run;
                match c.call_tool(tool, args).await {
                    Ok(r) if !r.is_error => acked.lock().unwrap().push((tool.to_string(), key)),
                    _ => return,
                }
            }
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    d.kill9();
    for t in tasks {
        let _ = t.await;
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() > 50, "the load ran ({} acknowledged calls)", acked.len());

    let d = Daemon::serve_with_token(&data);
    let mut c = client(&d).await;
    let mut progress = std::collections::BTreeSet::new();
    let mut cursor = 0;
    loop {
        let page = c.call_ok("events_wait", json!({ "cursor": cursor, "limit": 1000 })).await.expect("events");
        let events = page["events"].as_array().unwrap().clone();
        for e in &events {
            if e["name"] == "worker.progress" {
                progress.insert(e["data"]["summary"].as_str().unwrap().to_string());
            }
        }
        let next = page["nextCursor"].as_u64().unwrap();
        if events.is_empty() || next == cursor {
            break;
        }
        cursor = next;
    }
    let runs = c.call_ok("run_list", json!({ "includeTerminal": true })).await.expect("runs");
    let names: std::collections::BTreeSet<String> =
        runs["runs"].as_array().unwrap().iter().map(|r| r["taskName"].as_str().unwrap().to_string()).collect();
    assert!(names.len() < 1_000, "every run in one run_list page ({} runs)", names.len());
    for (tool, key) in &acked {
        match tool.as_str() {
            "worker_progress" => assert!(progress.contains(key), "acknowledged progress {key} lost"),
            _ => assert!(names.contains(key), "acknowledged run {key} lost"),
        }
    }
}
