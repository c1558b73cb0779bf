//! Fair edges under a flood (issue 30), against a real `orchestrator serve` process (bench
//! profile) on loopback: MCP tool-call latency on a kept connection, a new connection's
//! connect-and-call time, an executor's upgrade-and-hello time and `events_wait` wake-up
//! latency, first quiet, then while 450 lingering connections from 127.0.0.1 are held
//! (150 silent, 150 upgrades that never say `hello`, 150 with headers trickling in; each
//! reopened as soon as the daemon closes it). The flood runs in this process, on the same
//! two cores as the daemon.
//!
//! `cargo bench -p orchestrator --bench flood [-- --per-kind N] [--connections-max N]`
//! (figures in docs/benchmarks.md): `--per-kind` sets the slots of each kind of lingering
//! connection (150 by default, 450 in all), `--connections-max` the daemon's cap (its
//! default when absent), so that a flood larger than every place can be measured too.

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
/// Slots of each kind of lingering connection, unless `--per-kind` says otherwise.
const FLOOD_PER_KIND_DEFAULT: usize = 150;
/// How often the executor connected before the flood heartbeats (a real one: every 20 s).
const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);

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
    /// New MCP or executor connections that failed and were tried again.
    retries: usize,
    calls: usize,
    progress: (Duration, Duration),
    new_connection: (Duration, Duration),
    executor_upgrade: (Duration, Duration),
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
    let mut retries = 0;
    for _ in 0..SAMPLES {
        let started = Instant::now();
        // A connection closed before its request was read (shed while the client had not
        // sent it yet) is counted and tried again; the sample includes the retries.
        loop {
            match McpClient::connect(url, Some(TOKEN)).await {
                Ok(mut fresh) => {
                    fresh.call_ok("worker_get", json!({ "workerId": worker })).await.expect("worker_get");
                    break;
                }
                Err(e) if retries < SAMPLES => {
                    retries += 1;
                    eprintln!("a new MCP connection failed, tried again: {e}");
                }
                Err(e) => panic!("new MCP connections keep failing: {e}"),
            }
        }
        samples.push(started.elapsed());
    }
    let new_connection = percentiles(samples);

    let mut samples = Vec::new();
    let mut upgrades = Vec::new();
    for i in 0..SAMPLES {
        let started = Instant::now();
        let x = loop {
            let attempt = async {
                let mut x = TestExecutor::connect(ws_url, Some("chrome-extension://testexecutor")).await?;
                let upgraded = started.elapsed();
                x.send(&executor_protocol::ExecutorMessage::Hello(hello(EXECUTOR_TOKEN, &format!("bench-{i}"))))
                    .await?;
                match x.recv().await? {
                    executor_protocol::DaemonMessage::Welcome(_) => Ok((x, upgraded)),
                    other => Err(test_executor::ClientError::Unexpected(Box::new(other))),
                }
            };
            match attempt.await {
                Ok((x, upgraded)) => {
                    upgrades.push(upgraded);
                    break x;
                }
                Err(e) if retries < SAMPLES => {
                    retries += 1;
                    eprintln!("an executor's upgrade and hello failed, tried again: {e}");
                }
                Err(e) => panic!("executor connections keep failing: {e}"),
            }
        };
        samples.push(started.elapsed());
        x.close().await;
    }
    let executor_connect = percentiles(samples);
    let executor_upgrade = percentiles(upgrades);

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
    Figures { calls, progress, new_connection, executor_upgrade, executor_connect, wake: percentiles(samples), retries }
}

#[allow(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]
/// The 1, 5 and 15 minute load averages (other work on the same cores moves the figures).
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// Keeps `x` connected as a real executor does (a heartbeat every
/// [`HEARTBEAT_EVERY`], reading what comes) until told to stop; `Err` if the daemon closed
/// it meanwhile.
fn keep_connected(
    mut x: TestExecutor,
) -> (tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<Result<(), String>>) {
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        loop {
            x.send(&executor_protocol::ExecutorMessage::Heartbeat {}).await.map_err(|e| e.to_string())?;
            let next = Instant::now() + HEARTBEAT_EVERY;
            loop {
                let left = next.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                tokio::select! {
                    _ = &mut stopped => return Ok(()),
                    got = x.recv_within(left) => match got {
                        Ok(_) | Err(test_executor::ClientError::Timeout(_)) => {}
                        Err(e) => return Err(e.to_string()),
                    },
                }
            }
        }
    });
    (stop, task)
}

#[allow(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]
fn report(name: &str, f: &Figures) {
    println!("{name}:");
    let rate = f.calls as f64 / PHASE.as_secs_f64();
    println!("  worker_progress, kept connection: {} ({} calls, {rate:.0}/s)", ms(f.progress), f.calls);
    println!("  new MCP connection + worker_get:  {}", ms(f.new_connection));
    println!("  executor upgrade (101):           {}", ms(f.executor_upgrade));
    println!("  executor upgrade + hello:         {}", ms(f.executor_connect));
    println!("  events_wait wake after the ack:   {}", ms(f.wake));
    println!("  new connections that failed and were tried again: {}", f.retries);
}

#[allow(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]
fn main() {
    // `cargo bench` passes `--bench` to the target; only the two options are read.
    let args: Vec<String> = std::env::args().collect();
    let option = |name: &str| {
        let at = args.iter().position(|a| a == name)?;
        let value = args.get(at + 1).unwrap_or_else(|| panic!("{name} needs a number"));
        Some(value.parse::<usize>().unwrap_or_else(|_| panic!("{name} needs a number, not {value:?}")))
    };
    let per_kind = option("--per-kind").unwrap_or(FLOOD_PER_KIND_DEFAULT);
    let connections_max = option("--connections-max").map(|n| n.to_string());
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_orchestrator");
    let mut child = Command::new(bin)
        .args(["serve", "--data-dir", dir.path().join("data").to_str().expect("utf-8"), "--listen", "127.0.0.1:0"])
        .args(["--mcp-token", TOKEN, "--executor-token", EXECUTOR_TOKEN, "--log-level", "warn"])
        .args(connections_max.iter().flat_map(|n| ["--connections-max", n.as_str()]))
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
    let flood_rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("flood runtime");
    rt.block_on(async {
        let mut c = McpClient::connect(&url, Some(TOKEN)).await.expect("connect");
        let run = c.call_ok("run_create", json!({ "taskName": "Flood bench", "rootConversationName": "Root" })).await;
        let worker = run.expect("run")["rootWorkerId"].as_str().expect("root").to_string();
        let (standing, _) =
            TestExecutor::hello(&ws_url, hello(EXECUTOR_TOKEN, "standing")).await.expect("an executor before");
        let (stop_keeping, kept) = keep_connected(standing);
        println!(
            "orchestrator fair-edges benchmark (loopback; {}s of calls, {SAMPLES} connections and wake-ups per phase; \
             --connections-max {})",
            PHASE.as_secs(),
            connections_max.as_deref().unwrap_or("default")
        );
        println!("load average before: {}", load_average());
        let quiet = measure(&url, &ws_url, &worker).await;
        report("quiet", &quiet);

        // The flood on its own runtime (an attacker is another process): the measuring
        // client's tasks never queue behind the flood's.
        let flood = {
            let _inside = flood_rt.enter();
            flood::Flood::start(&addr, per_kind)
        };
        while flood.opened() < (3 * per_kind) as u64 + 100 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let started = Instant::now();
        let flooded = measure(&url, &ws_url, &worker).await;
        let took = started.elapsed().as_secs_f64();
        report(&format!("under the flood of {} lingering connections", 3 * per_kind), &flooded);
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
        println!("  load average after the flood: {}", load_average());
        let _ = stop_keeping.send(());
        match kept.await.expect("the keeper") {
            Ok(()) => println!("  the executor connected before the flood stayed connected"),
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
