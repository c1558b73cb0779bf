//! MCP benchmark against a real `orchestrator serve` process (bench profile) on loopback:
//! tool-call latency p50/p99 for `worker_progress` (durable: fsynced group commit) and
//! `worker_get` with 1 and 32 concurrent clients, `events_wait` wake-up latency after a
//! commit, and the daemon's resident memory idle and with 1,000 workers.
//!
//! `cargo bench -p orchestrator --bench mcp` (figures in docs/benchmarks.md).

use console::client::McpClient;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "bench-token-0123456789abcdef";
/// How long each latency measurement runs.
const PHASE: Duration = Duration::from_secs(5);

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1_000.0)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn latency(url: &str, tool: &'static str, workers: &[String], clients: usize) -> (usize, Duration, Duration) {
    let mut tasks = Vec::new();
    for i in 0..clients {
        let url = url.to_string();
        let worker = workers[i % workers.len()].clone();
        tasks.push(tokio::spawn(async move {
            let mut c = McpClient::connect(&url, Some(TOKEN)).await.expect("connect");
            let mut samples = Vec::new();
            let end = Instant::now() + PHASE;
            let mut n = 0u64;
            while Instant::now() < end {
                n += 1;
                let args = match tool {
                    "worker_progress" => json!({ "workerId": worker, "summary": format!("step {n}") }),
                    _ => json!({ "workerId": worker }),
                };
                let started = Instant::now();
                let r = c.call_tool(tool, args).await.expect("call");
                samples.push(started.elapsed());
                assert!(!r.is_error, "{tool}: {}", r.structured);
            }
            samples
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("client"));
    }
    all.sort();
    (all.len(), percentile(&all, 0.50), percentile(&all, 0.99))
}

/// Wake-up latency of a long-polling `events_wait` after a commit, as p50/p99 pairs.
struct Wake {
    /// From the writer sending its `worker_progress` to the waiter's answer: an upper bound
    /// (the commit happens after the send).
    after_send: (Duration, Duration),
    /// From the writer's acknowledgement to the waiter's answer: a lower bound (the commit
    /// happens before the acknowledgement); 0 when the waiter was first.
    after_ack: (Duration, Duration),
    /// The writer's own call, p50.
    call_p50: Duration,
}

async fn wake_latency(url: &str, worker: &str, rounds: usize) -> Wake {
    let mut waiter = McpClient::connect(url, Some(TOKEN)).await.expect("connect");
    let mut writer = McpClient::connect(url, Some(TOKEN)).await.expect("connect");
    let mut cursor = 0u64;
    let mut samples = Vec::new();
    for round in 0..rounds {
        // Catch up with the end of the log, then long-poll past it.
        loop {
            let page = waiter.call_ok("events_wait", json!({ "cursor": cursor, "limit": 1000 })).await.expect("events");
            cursor = page["nextCursor"].as_u64().expect("cursor");
            if page["events"].as_array().is_none_or(|e| e.is_empty()) {
                break;
            }
        }
        let head = cursor;
        let poll = async {
            let page = waiter
                .call_ok("events_wait", json!({ "cursor": head, "workerId": worker, "timeoutMs": 10_000 }))
                .await
                .expect("wait");
            (Instant::now(), page)
        };
        let write = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let sent = Instant::now();
            writer
                .call_ok("worker_progress", json!({ "workerId": worker, "summary": format!("wake {round}") }))
                .await
                .expect("progress");
            (sent, Instant::now())
        };
        let ((woke, page), (sent, acked)) = tokio::join!(poll, write);
        assert!(!page["events"].as_array().expect("events").is_empty(), "woken by the commit");
        samples.push((
            woke.saturating_duration_since(sent),
            acked.saturating_duration_since(sent),
            woke.saturating_duration_since(acked),
        ));
        cursor = page["nextCursor"].as_u64().expect("cursor");
    }
    let sorted = |pick: fn(&(Duration, Duration, Duration)) -> Duration| {
        let mut v: Vec<Duration> = samples.iter().map(pick).collect();
        v.sort();
        v
    };
    let (after_send, call, after_ack) = (sorted(|s| s.0), sorted(|s| s.1), sorted(|s| s.2));
    Wake {
        after_send: (percentile(&after_send, 0.5), percentile(&after_send, 0.99)),
        after_ack: (percentile(&after_ack, 0.5), percentile(&after_ack, 0.99)),
        call_p50: percentile(&call, 0.5),
    }
}

#[allow(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]
fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_orchestrator");
    let mut child = Command::new(bin)
        .args(["serve", "--data-dir", dir.path().join("data").to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .args(["--mcp-token", TOKEN, "--log-level", "warn"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("daemon");
    let pid = child.id();
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let url = loop {
        let line = lines.next().expect("daemon output").expect("line");
        if let Some(url) = line.strip_prefix("orchestrator: MCP endpoint ") {
            break url.to_string();
        }
    };
    std::thread::sleep(Duration::from_millis(500));
    let idle_kib = rss_kib(pid);

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async {
        let mut c = McpClient::connect(&url, Some(TOKEN)).await.expect("connect");
        let run = c
            .call_ok("run_create", json!({ "taskName": "Bench", "rootConversationName": "Root" }))
            .await
            .expect("run");
        let run_id = run["runId"].as_str().unwrap().to_string();
        let mut workers = Vec::new();
        for i in 0..32 {
            let w = c
                .call_ok(
                    "worker_spawn",
                    json!({ "runId": run_id, "name": format!("/root/w{i}"), "taskSummary": "bench",
                            "assignment": { "objective": "benchmark" }, "start": false }),
                )
                .await
                .expect("spawn");
            workers.push(w["workerId"].as_str().unwrap().to_string());
        }
        println!("orchestrator MCP benchmark ({}s per measurement, loopback HTTP, one connection per client)", PHASE.as_secs());
        for tool in ["worker_progress", "worker_get"] {
            for clients in [1, 32] {
                let (n, p50, p99) = latency(&url, tool, &workers, clients).await;
                let rate = n as f64 / PHASE.as_secs_f64();
                println!("{tool:<16} {clients:>2} client(s): p50 {} p99 {} ({n} calls, {rate:.0}/s)", ms(p50), ms(p99));
            }
        }
        let wake = wake_latency(&url, &workers[0], 200).await;
        println!(
            "events_wait wake-up: from the writer's send (upper bound) p50 {} p99 {}; from the writer's acknowledgement (lower bound) p50 {} p99 {}; the writer's own worker_progress p50 {}",
            ms(wake.after_send.0),
            ms(wake.after_send.1),
            ms(wake.after_ack.0),
            ms(wake.after_ack.1),
            ms(wake.call_p50)
        );
        // 1,000 workers: the run holds at most 1,000 including /root.
        let second = c
            .call_ok("run_create", json!({ "taskName": "Bench 1000", "rootConversationName": "Root" }))
            .await
            .expect("run");
        let second = second["runId"].as_str().unwrap().to_string();
        for i in 0..999 {
            c.call_ok(
                "worker_spawn",
                json!({ "runId": second, "name": format!("/root/lane-{i}"), "taskSummary": "one of a thousand",
                        "assignment": { "objective": "sit idle for the memory measurement" }, "start": false }),
            )
            .await
            .expect("spawn");
        }
        let v: Value = c.call_ok("run_get", json!({ "runId": second })).await.expect("run_get");
        assert_eq!(v["workers"], 1000);
    });
    std::thread::sleep(Duration::from_millis(500));
    let loaded_kib = rss_kib(pid);
    println!(
        "daemon RSS: idle {:.1} MiB; with 1,000 more workers (plus the 33 above) {:.1} MiB",
        idle_kib as f64 / 1024.0,
        loaded_kib as f64 / 1024.0
    );
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    let status = child.wait().expect("wait");
    assert!(status.success(), "the daemon exits 0 on SIGTERM");
}
