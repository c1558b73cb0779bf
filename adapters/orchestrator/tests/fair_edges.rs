//! Fair edges (issue 30) on the real `orchestrator serve` process: while about 450
//! lingering connections from 127.0.0.1 are held (silent TCP, upgrades that never say
//! `hello`, headers that trickle in), authenticated MCP calls succeed on kept and on new
//! connections, an executor that says `hello` gets in and stays connected, an earlier one
//! stays too, and a long poll wakes. The test asserts service, never timing (the latencies
//! are `docs/benchmarks.md`'s, from `cargo bench -p orchestrator --bench flood`); every
//! wait has an upper bound.

mod support;

use console::client::McpClient;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use support::flood::Flood;
use support::{Daemon, TOKEN};
use test_executor::{ClientError, TestExecutor, hello};

/// The executor token the daemon accepts.
const EXECUTOR_TOKEN: &str = "executor-token-for-fair-edges-0123456789";
/// Slots of each kind of lingering connection: 450 in all, from one address.
const FLOOD_PER_KIND: usize = 150;
/// Upper bound on any wait: only a lockout fails the test, not a slow machine.
const WAIT_MS_MAX: u64 = 30_000;

/// A runtime shut down without waiting when dropped (also inside the test's own runtime,
/// where a plain drop would panic).
struct Background(Option<tokio::runtime::Runtime>);

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// The executor heartbeats a few times and is answered or left alone, never closed.
async fn stays_connected(x: &mut TestExecutor, name: &str) {
    for round in 0..5 {
        x.send(&executor_protocol::ExecutorMessage::Heartbeat {})
            .await
            .unwrap_or_else(|e| panic!("{name}: heartbeat {round} not sent: {e}"));
        match x.recv_within(Duration::from_millis(200)).await {
            Ok(_) | Err(ClientError::Timeout(_)) => {}
            Err(e) => panic!("{name}: closed during the flood (round {round}): {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_lingering_connections_locks_out_no_mcp_client_executor_or_long_poll() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Timeouts far beyond the test, so that a silent or slow-header connection closes
    // only when the pending pool sheds it.
    let d = Daemon::serve(
        &dir.path().join("data"),
        &[
            "--mcp-token",
            TOKEN,
            "--executor-token",
            EXECUTOR_TOKEN,
            "--header-read-timeout-ms",
            "600000",
            "--idle-timeout-ms",
            "600000",
            // Fewer places than the flood has connections (450), so that the daemon must
            // shed lingering connections all along (each slot reconnects at once) and new
            // connections arrive while every place is taken: the hard case. With the
            // default 512 places this flood is held at rest.
            "--connections-max",
            "300",
        ],
    );
    let addr = d.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let ws_url = format!("ws://{addr}/executor");
    let bound = Duration::from_millis(WAIT_MS_MAX);

    // Before the flood: an executor, a client with a worker, a long-poll client at the head.
    let (mut early, _) = TestExecutor::hello(&ws_url, hello(EXECUTOR_TOKEN, "chrome-early")).await.expect("hello");
    let mut client = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect");
    let run = client.call_ok("run_create", json!({ "taskName": "Flood", "rootConversationName": "Root" })).await;
    let worker = run.expect("run")["rootWorkerId"].as_str().expect("root").to_string();
    let mut waiter = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect the waiter");
    let mut head = 0;
    loop {
        let page = waiter.call_ok("events_wait", json!({ "cursor": head, "limit": 1000 })).await.expect("events");
        head = page["nextCursor"].as_u64().expect("cursor");
        if page["events"].as_array().is_none_or(|e| e.is_empty()) {
            break;
        }
    }

    // The flood: 450 lingering connections, more than the 300 places, so the daemon sheds
    // some all along (each slot reconnects at once). With the timeouts above,
    // a silent or slow-header connection that closed was shed.
    // The flood runs on its own runtime, as an attacker is another process: the test's
    // clients never queue behind the flood's tasks.
    let flood_rt = Background(Some(
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt"),
    ));
    let flood = {
        let _inside = flood_rt.0.as_ref().expect("runtime").enter();
        Flood::start(&addr, FLOOD_PER_KIND)
    };
    let started = Instant::now();
    let shed = || flood.counts.closed_quiet.load(Ordering::Relaxed);
    while flood.opened() < (3 * FLOOD_PER_KIND) as u64 + 100 || shed() < 100 {
        assert!(started.elapsed() < bound, "the flood did not build up: {:?}", flood.counts);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let poll = tokio::spawn(async move {
        let page = waiter.call_ok("events_wait", json!({ "cursor": head, "timeoutMs": 20_000 })).await;
        page.expect("the long poll is answered")
    });
    let service = async {
        for i in 0..50 {
            let summary = format!("during the flood {i}");
            client.call_ok("worker_progress", json!({ "workerId": worker, "summary": summary })).await.expect("kept");
        }
        for i in 0..10 {
            let mut fresh = McpClient::connect(&d.url, Some(TOKEN))
                .await
                .unwrap_or_else(|e| panic!("new MCP connection {i} during the flood: {e}"));
            fresh.call_ok("run_list", json!({})).await.expect("a call on a new connection");
        }
        let (mut late, _) = TestExecutor::hello(&ws_url, hello(EXECUTOR_TOKEN, "chrome-late"))
            .await
            .expect("an executor's upgrade and hello during the flood");
        stays_connected(&mut late, "the executor connected during the flood").await;
        stays_connected(&mut early, "the executor connected before the flood").await;
    };
    tokio::time::timeout(bound, service).await.expect("served during the flood");
    let page = tokio::time::timeout(bound, poll).await.expect("the long poll returned").expect("poll task");
    let events = page["events"].as_array().expect("events");
    assert!(events.iter().any(|e| e["name"] == "worker.progress"), "the long poll woke with the progress: {page}");

    // It was a flood all along: lingering connections were shed, none refused.
    let counts = &flood.counts;
    assert!(counts.upgraded.load(Ordering::Relaxed) > 0, "the upgrades got in: {counts:?}");
    assert_eq!(counts.refused.load(Ordering::Relaxed), 0, "a lingering connection is shed, never refused");
    eprintln!("flood: {counts:?} in {:?}", started.elapsed());
    drop(flood);
    drop(flood_rt);
    let log = d.stderr();
    assert!(!log.contains(TOKEN) && !log.contains(EXECUTOR_TOKEN), "no token in the log");
}
