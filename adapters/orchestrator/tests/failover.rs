//! The failover of issue 32 (`docs/scale-out.md`) end to end, with real processes: a
//! PostgreSQL (`store_pg::test_server`), two `orchestrator serve` on it (A leads, B stands
//! by, the lease's timings shortened: `support::lease`), one `orchestrator executor-cli
//! --daemon A --daemon B` with the real Codex CLI (`CODEX_BIN`, 0.169.0) against the
//! loopback mock model, and MCP callers.
//!
//! A Codex worker started over MCP reports progress in turn 1; the model holds turn 2 in
//! flight (the plan's `wait`); MCP callers create runs on A as fast as A answers; A is lost
//! then: kill -9, or SIGSTOP (the executor, connected to A, must leave it once A sent
//! nothing for `DAEMON_SILENCE_MS_MAX`, and follow B while A is still stopped) and then
//! SIGCONT (A must be refused, `PG_FENCED`, or `PG_QUERY` when it stopped inside a commit
//! that the server rolled back, and exit). B must serve within
//! the time to live plus a poll plus slack, hold every run whose creation A acknowledged,
//! and welcome the executor, which follows it by itself.
//! Then the model lets turn 2 go, the turn's end reaches B, B asks for turn 3 (progress,
//! then `worker_complete`, through B) and the worker completes; the model's requests show
//! each turn started once and each prompt once in the conversation: no prompt went to
//! Codex twice across the failover.
//!
//! The executor is given no `--mcp-url`: with two daemons, its Codex child's MCP calls go
//! through the executor's loopback relay (`cli_executor::run::mcp_relay`) to whichever
//! daemon the executor follows, so turn 3's `worker_complete` reaches B after the
//! failover (with the child's URL naming A, the worker could never complete).
//!
//! Without `CODEX_BIN` it prints one line saying it is skipped and why; with
//! `ORCH_REAL_CLIS=required` it fails instead.

#[path = "../../cli-executor/tests/mock/requests.rs"]
mod mock_requests;
mod support;

use console::client::McpClient;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use store_pg::test_server::TestServer;
use support::lease::{POLL_MS, RENEW_MS, TTL_MS, exits_within, leader, serves_within, standby, takeover_within};
use support::model::{MockModel, turn_prompt};
use support::night::{WAIT_MAX, real_codex, until};
use support::{TOKEN, orchestrator_bin};

/// The executor token both daemons take (`--executor-token`).
const EXECUTOR_TOKEN: &str = "failover-executor-token-0123456789";

/// How many MCP callers create runs on the leader at once.
const CALLERS: usize = 4;

/// How many runs the callers must have had acknowledged before the leader is killed.
const ACKED_BEFORE_KILL: usize = 20;

/// How long one MCP call may take before the caller gives up, in ms.
const CALL_MS_MAX: u64 = 10_000;

/// The worker's task name (the mock finds the worker's id by it in `run_list`).
const TASK: &str = "Failover worker";

/// A child process killed when dropped (a failing test leaves nothing running).
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `orchestrator executor-cli` for Codex only, following `urls` in order (no `--mcp-url`:
/// its children use its MCP relay), its state and log under `dir`; answers once it is
/// connected.
fn executor(dir: &Path, codex: &Path, model: &MockModel, urls: &[String]) -> Process {
    let token_file = dir.join("executor-token");
    std::fs::write(&token_file, EXECUTOR_TOKEN).expect("token file");
    let (state, work) = (dir.join("executor-state"), dir.join("work"));
    std::fs::create_dir_all(&work).expect("workspace");
    let mut args: Vec<String> =
        ["executor-cli", "--kinds", "codex", "--mcp-token", TOKEN].iter().map(|s| s.to_string()).collect();
    for url in urls {
        args.extend(["--daemon".to_string(), url.clone()]);
    }
    for (flag, path) in [("--token-file", &token_file), ("--state-dir", &state), ("--workspace", &work)] {
        args.extend([flag.to_string(), path.display().to_string()]);
    }
    args.extend(["--codex".to_string(), codex.display().to_string()]);
    args.extend(model.codex_args());
    let log = std::fs::File::create(dir.join("executor.log")).expect("log");
    let child = Command::new(orchestrator_bin())
        .args(&args)
        .env("HOME", dir.join("home"))
        .env_remove("ORCHESTRATOR_MCP_TOKEN")
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start the executor");
    let child = Process(child);
    until("the executor connects", WAIT_MAX, || {
        let text = executor_log(dir);
        if text.contains("connected to the daemon") { Ok(()) } else { Err(text) }
    });
    child
}

/// The executor's log so far.
fn executor_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("executor.log")).unwrap_or_default()
}

/// `ws://HOST:PORT/executor` of the daemon whose MCP URL is `mcp_url`.
fn executor_url(mcp_url: &str) -> String {
    mcp_url.replace("http://", "ws://").replace("/mcp", "/executor")
}

/// Creates runs on `url` until a call fails (the leader died); answers the ids it was
/// acknowledged, counting them in `acked`.
async fn caller(url: String, n: usize, acked: Arc<AtomicUsize>) -> Vec<String> {
    let mut ids = Vec::new();
    let Ok(mut c) = McpClient::connect(&url, Some(TOKEN)).await else { return ids };
    for i in 0.. {
        let args = json!({ "taskName": format!("Load {n}.{i}"), "rootConversationName": "Root", "context": "load" });
        let call = tokio::time::timeout(Duration::from_millis(CALL_MS_MAX), c.call_ok("run_create", args));
        let Ok(Ok(run)) = call.await else { break };
        ids.push(run["runId"].as_str().expect("runId").to_string());
        acked.fetch_add(1, Ordering::SeqCst);
    }
    ids
}

/// The worker as `worker_get` shows it on `url`.
async fn worker(url: &str, id: &str) -> Value {
    let mut c = McpClient::connect(url, Some(TOKEN)).await.expect("connect");
    c.call_ok("worker_get", json!({ "workerId": id })).await.expect("worker_get")
}

/// How the leader is lost.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Loss {
    /// kill -9: its sockets close at once.
    Kill,
    /// SIGSTOP (a hung machine), then SIGCONT once B serves: it must be refused and exit.
    Stop,
}

#[test]
fn kill_9_of_the_leader_mid_turn_and_under_load_loses_nothing_and_sends_no_prompt_twice() {
    failover("failover (kill -9)", Loss::Kill);
}

#[test]
fn a_stopped_leader_resumed_after_the_takeover_is_refused_and_the_executor_follows_the_new_one() {
    failover("failover (SIGSTOP)", Loss::Stop);
}

/// The whole failover, the leader lost as `loss` says (the module's comment).
fn failover(test: &str, loss: Loss) {
    let Some(codex) = real_codex(test) else { return };
    let began = Instant::now();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");
    let turns = json!({ "1": ["progress"], "2": ["wait"], "3": ["progress", "complete"] });
    let model = MockModel::start(tmp.path(), &json!({ "turns": turns }));

    // 1. A leads, B stands by; the executor is given both, its children its MCP relay.
    let extra = ["--executor-token", EXECUTOR_TOKEN];
    let mut a = leader(tmp.path(), "a", &url, &extra);
    let b = standby(tmp.path(), "b", &url, &extra);
    let urls = [executor_url(&a.url), executor_url(&b.url)];
    let exec = executor(tmp.path(), &codex, &model, &urls);
    let log = executor_log(tmp.path());
    assert!(log.contains(&urls[0]), "connected to A: {log}");
    assert!(log.contains("the children's MCP calls go through this relay"), "the relay serves the children: {log}");

    // 2. A Codex worker over MCP, resumed by itself after each turn.
    let work = tmp.path().join("work").display().to_string();
    let root = rt.block_on(async {
        let mut c = McpClient::connect(&a.url, Some(TOKEN)).await.expect("connect");
        let created = c
            .call_ok(
                "run_create",
                json!({ "taskName": TASK, "rootConversationName": "Codex", "context": "work",
                    "defaultPolicy": { "mode": "auto" }, "executor": "codex", "workspace": { "directory": work } }),
            )
            .await
            .expect("run_create");
        let root = created["rootWorkerId"].as_str().expect("rootWorkerId").to_string();
        c.call_ok("worker_continue_now", json!({ "workerId": root })).await.expect("worker_continue_now");
        root
    });

    // 3. Turn 2 is in flight (the model holds it), and MCP callers load A.
    until("the model holds turn 2", WAIT_MAX, || {
        let held = model.requests().iter().any(|r| turn_prompt(r).contains("Attempt 2 "));
        if held { Ok(()) } else { Err(format!("{} requests", model.requests().len())) }
    });
    let acked = Arc::new(AtomicUsize::new(0));
    let callers: Vec<_> = (0..CALLERS).map(|n| rt.spawn(caller(a.url.clone(), n, acked.clone()))).collect();
    until("the callers are acknowledged", WAIT_MAX, || {
        let n = acked.load(Ordering::SeqCst);
        if n >= ACKED_BEFORE_KILL { Ok(()) } else { Err(format!("{n} acknowledged")) }
    });

    // 4. A is lost, the callers still calling; B serves within the lease's bound (for a
    // stopped leader, plus the time the server takes to end its session if it stopped
    // inside a commit, which holds the lease row: `IDLE_IN_TRANSACTION_MS_MAX`).
    let pid = a.child.id().to_string();
    let bound = match loss {
        Loss::Kill => {
            a.kill9();
            takeover_within()
        }
        Loss::Stop => {
            assert!(Command::new("kill").args(["-STOP", &pid]).status().expect("kill").success());
            takeover_within() + Duration::from_millis(store_pg::IDLE_IN_TRANSACTION_MS_MAX)
        }
    };
    let lost = Instant::now();
    let serving = rt.block_on(serves_within(&b.url, bound));
    let failover = serving - lost;
    eprintln!(
        "{test}: {} ms from the leader lost to the standby serving (TTL {TTL_MS} ms, renew {RENEW_MS} ms, poll {POLL_MS} ms)",
        failover.as_millis()
    );
    assert!(failover >= Duration::from_millis(TTL_MS - RENEW_MS), "B waited for the lease: {failover:?}");

    // 5. The executor follows B by itself (a stopped A is left once it sent nothing, not
    // even a pong, for `DAEMON_SILENCE_MS_MAX`).
    until("the executor connects to B", WAIT_MAX, || {
        let log = executor_log(tmp.path());
        let to_b = log.lines().any(|l| l.contains("connected to the daemon") && l.contains(&urls[1]));
        if to_b { Ok(()) } else { Err(log) }
    });
    let reconnected = lost.elapsed();

    // 6. Every acknowledged run is on B (a caller stuck on a stopped A gives up after
    // `CALL_MS_MAX`: not acknowledged).
    let ids: Vec<String> = rt.block_on(async {
        let mut all = Vec::new();
        for task in callers {
            all.extend(task.await.expect("a caller"));
        }
        all
    });
    assert!(ids.len() >= ACKED_BEFORE_KILL, "{} acknowledged", ids.len());
    rt.block_on(async {
        let mut c = McpClient::connect(&b.url, Some(TOKEN)).await.expect("connect");
        for id in &ids {
            let got = c.call_ok("run_get", json!({ "runId": id })).await;
            assert!(got.is_ok(), "the acknowledged {id} is on B: {got:?}");
        }
    });
    eprintln!("{test}: {} runs acknowledged by A under load, all of them on B", ids.len());

    // 7. The stopped leader, resumed only now: a write sent to it is not acknowledged (its
    // commit is refused by the epoch), and it exits. Then the model lets turn 2 go.
    if loss == Loss::Stop {
        assert!(Command::new("kill").args(["-CONT", &pid]).status().expect("kill").success());
        let refused = rt.block_on(async {
            let mut c = McpClient::connect(&a.url, Some(TOKEN)).await?;
            let args = json!({ "taskName": "After the takeover", "rootConversationName": "Root", "context": "late" });
            c.call_tool("run_create", args).await
        });
        assert!(refused.as_ref().map_or(true, |r| r.is_error), "the old leader acknowledges nothing: {refused:?}");
        let status = exits_within(&mut a, WAIT_MAX);
        assert!(!status.success(), "the old leader exits non-zero");
        // Refused by the epoch, or, when A stopped inside a commit, by the server, which
        // ended that session (`IDLE_IN_TRANSACTION_MS_MAX`) and rolled the commit back.
        let stderr = a.stderr();
        let last = stderr.lines().last().unwrap_or_default();
        let fenced = last.contains("PG_FENCED") && last.contains("epoch 1") && last.contains("epoch 2");
        let rolled_back = last.contains("PG_QUERY") && last.contains("idle-in-transaction timeout");
        assert!(fenced || rolled_back, "{stderr}");
    }
    model.release(2);

    // 8. B asks for turn 3; the worker reports progress and completes, through B.
    let done = until("the worker completes on B", WAIT_MAX, || {
        let view = rt.block_on(worker(&b.url, &root));
        if view["disposition"] == "completed" { Ok(view) } else { Err(view.to_string()) }
    });
    assert_eq!(done["autoResumes"], 2, "{done}");
    let attempts = rt.block_on(async {
        let mut c = McpClient::connect(&b.url, Some(TOKEN)).await.expect("connect");
        c.call_ok("worker_attempts", json!({ "workerId": root })).await.expect("worker_attempts")
    });
    let reasons: Vec<&str> =
        attempts["attempts"].as_array().expect("attempts").iter().filter_map(|a| a["reason"].as_str()).collect();
    assert_eq!(reasons, ["initial", "auto_resume", "auto_resume"], "three attempts: {attempts}");

    // 9. No prompt went to Codex twice.
    let requests = model.requests();
    assert_eq!(mock_requests::turns_started(&requests), [(1, 1), (2, 1), (3, 1)], "each turn started once");
    assert_eq!(mock_requests::prompts_in_last_request(&requests), [(1, 1), (2, 1), (3, 1)], "each prompt once");
    let log = executor_log(tmp.path());
    let connections = log.lines().filter(|l| l.contains("connected to the daemon")).count();
    assert_eq!(connections, 2, "to A, then to B, and never left a daemon that answered: {log}");
    for log in [b.stderr(), log] {
        assert!(!log.contains("panicked"), "{log}");
    }
    drop(exec);
    eprintln!(
        "{test}: executor on B {} ms after the leader was lost; {} model requests; {} ms in all",
        reconnected.as_millis(),
        requests.len(),
        began.elapsed().as_millis()
    );
}
