//! Fair edges under a flood (issue 30), against a real `orchestrator serve` process (bench
//! profile) on loopback: MCP tool-call latency on a kept connection, a new connection's
//! connect-and-call time, an executor's upgrade-and-hello time and `events_wait` wake-up
//! latency, first quiet, then while 450 lingering connections from 127.0.0.1 are held
//! (150 silent, 150 upgrades that never say `hello`, 150 with headers trickling in; each
//! reopened as soon as the daemon closes it). The flood runs in this process, on the same
//! two cores as the daemon.
//!
//! `cargo bench -p orchestrator --bench flood` (figures in docs/benchmarks.md).

#[path = "../tests/support/flood.rs"]
mod flood;

use console::client::McpClient;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use test_executor::{TestExecutor, hello};

const TOKEN: &str = "bench-token-0123456789abcdef";
const EXECUTOR_TOKEN: &str = "bench-executor-token-0123456789abcdef";
/// How long each call-latency measurement runs.
const PHASE: Duration = Duration::from_secs(5);
/// New connections, executor connections and wake-ups measured per phase.
const SAMPLES: usize = 100;
/// Slots of each kind of lingering connection.
const FLOOD_PER_KIND: usize = 150;

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    (at(0.50), at(0.99))
}

fn ms((p50, p99): (Duration, Duration)) -> String {
    format!("p50 {:.2} ms, p99 {:.2} ms", p50.as_secs_f64() * 1e3, p99.as_secs_f64() * 1e3)
}

/// One phase's figures, as p50/p99 pairs.
struct Figures {
    calls: usize,
    progress: (Duration, Duration),
    new_connection: (Duration, Duration),
    executor_connect: (Duration, Duration),
    wake: (Duration, Duration),
}

async fn measure(url: &str, ws_url: &str, worker: &str) -> Figures {
    let mut c = McpClient::connect(url, Some(TOKEN)).await.expect("connect");
    let mut samples = Vec::new();
    let end = Instant::now() + PHASE;
    while Instant::now() < end {
        let started = Instant::now();
        let summary = format!("step {}", samples.len());
        c.call_ok("worker_progress", json!({ "workerId": worker, "summary": summary })).await.expect("progress");
        samples.push(started.elapsed());
    }
    let calls = samples.len();
    let progress = percentiles(samples);

    let mut samples = Vec::new();
    for _ in 0..SAMPLES {
        let started = Instant::now();
        let mut fresh = McpClient::connect(url, Some(TOKEN)).await.expect("a new connection");
        fresh.call_ok("worker_get", json!({ "workerId": worker })).await.expect("worker_get");
        samples.push(started.elapsed());
    }
    let new_connection = percentiles(samples);

    let mut samples = Vec::new();
    for i in 0..SAMPLES {
        let started = Instant::now();
        let (x, _) = TestExecutor::hello(ws_url, hello(EXECUTOR_TOKEN, &format!("bench-{i}"))).await.expect("hello");
        samples.push(started.elapsed());
        x.close().await;
    }
    let executor_connect = percentiles(samples);

    // Wake-up: from the writer's acknowledged commit to the waiter's answer.
    let mut waiter = McpClient::connect(url, Some(TOKEN)).await.expect("connect");
    let mut cursor = 0;
    let mut samples = Vec::new();
    for round in 0..SAMPLES {
        loop {
            let page = waiter.call_ok("events_wait", json!({ "cursor": cursor, "limit": 1000 })).await.expect("events");
            cursor = page["nextCursor"].as_u64().expect("cursor");
            if page["events"].as_array().is_none_or(|e| e.is_empty()) {
                break;
            }
        }
        let head = cursor;
        let poll = async {
            let wait = json!({ "cursor": head, "workerId": worker, "timeoutMs": 10_000 });
            let page = waiter.call_ok("events_wait", wait).await.expect("wait");
            (Instant::now(), page)
        };
        let write = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let summary = format!("wake {round}");
            c.call_ok("worker_progress", json!({ "workerId": worker, "summary": summary })).await.expect("write");
            Instant::now()
        };
        let ((woke, page), acked) = tokio::join!(poll, write);
        assert!(!page["events"].as_array().expect("events").is_empty(), "woken by the commit");
        samples.push(woke.saturating_duration_since(acked));
        cursor = page["nextCursor"].as_u64().expect("cursor");
    }
    Figures { calls, progress, new_connection, executor_connect, wake: percentiles(samples) }
}

#[allow(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]
fn report(name: &str, f: &Figures) {
    println!("{name}:");
    let rate = f.calls as f64 / PHASE.as_secs_f64();
    println!("  worker_progress, kept connection: {} ({} calls, {rate:.0}/s)", ms(f.progress), f.calls);
    println!("  new MCP connection + worker_get:  {}", ms(f.new_connection));
    println!("  executor upgrade + hello:         {}", ms(f.executor_connect));
    println!("  events_wait wake after the ack:   {}", ms(f.wake));
}

#[allow(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]
fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_orchestrator");
    let mut child = Command::new(bin)
        .args(["serve", "--data-dir", dir.path().join("data").to_str().expect("utf-8"), "--listen", "127.0.0.1:0"])
        .args(["--mcp-token", TOKEN, "--executor-token", EXECUTOR_TOKEN, "--log-level", "warn"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
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
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let ws_url = format!("ws://{addr}/executor");

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async {
        let mut c = McpClient::connect(&url, Some(TOKEN)).await.expect("connect");
        let run = c.call_ok("run_create", json!({ "taskName": "Flood bench", "rootConversationName": "Root" })).await;
        let worker = run.expect("run")["rootWorkerId"].as_str().expect("root").to_string();
        let (mut standing, _) =
            TestExecutor::hello(&ws_url, hello(EXECUTOR_TOKEN, "standing")).await.expect("an executor before");
        println!(
            "orchestrator fair-edges benchmark (loopback; {}s of calls, {SAMPLES} connections and wake-ups per phase)",
            PHASE.as_secs()
        );
        let quiet = measure(&url, &ws_url, &worker).await;
        report("quiet", &quiet);

        let flood = flood::Flood::start(&addr, FLOOD_PER_KIND);
        while flood.opened() < (3 * FLOOD_PER_KIND) as u64 + 100 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let started = Instant::now();
        let flooded = measure(&url, &ws_url, &worker).await;
        let took = started.elapsed().as_secs_f64();
        report(&format!("under the flood of {} lingering connections", 3 * FLOOD_PER_KIND), &flooded);
        let counts = &flood.counts;
        let closed = counts.closed_quiet.load(Ordering::Relaxed) + counts.closed_upgrades.load(Ordering::Relaxed);
        println!(
            "  the flood: {} connections opened ({} upgraded), {closed} closed by the daemon ({:.0}/s), {} refused",
            flood.opened(),
            counts.upgraded.load(Ordering::Relaxed),
            closed as f64 / took,
            counts.refused.load(Ordering::Relaxed)
        );
        drop(flood);
        standing.send(&executor_protocol::ExecutorMessage::Heartbeat {}).await.expect("still connected");
        match standing.recv_within(Duration::from_millis(200)).await {
            Ok(_) | Err(test_executor::ClientError::Timeout(_)) => {
                println!("  the executor connected before the flood stayed connected")
            }
            Err(e) => panic!("the executor connected before the flood was closed: {e}"),
        }
        let ratio = |a: (Duration, Duration), b: (Duration, Duration)| b.1.as_secs_f64() / a.1.as_secs_f64();
        println!(
            "p99 ratio flood/quiet: worker_progress {:.1}x, new connection {:.1}x, executor {:.1}x, wake {:.1}x",
            ratio(quiet.progress, flooded.progress),
            ratio(quiet.new_connection, flooded.new_connection),
            ratio(quiet.executor_connect, flooded.executor_connect),
            ratio(quiet.wake, flooded.wake)
        );
    });
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    let status = child.wait().expect("wait");
    assert!(status.success(), "the daemon exits 0 on SIGTERM");
}
