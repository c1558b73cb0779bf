//! Commands and state messages per second one daemon sustains over loopback WebSockets:
//! `--connections C` test executors, each holding `--workers W` auto workers (idle grace
//! 0 ms, stall guard off) in a closed loop for `--seconds S`. Every cycle of a worker is
//! one `conversation.state` idle in, one resume `command` out, its `command.result`
//! submitted and a `conversation.state` generating in; each connection keeps all of its
//! workers' cycles going at once. A connection is rate-capped at 1,000 messages a second
//! (bursts of 2,000), so the load is spread over several; any `protocol.error` (such as
//! `RATE_LIMITED`) aborts the run rather than skewing it.
//!
//! `cargo bench -p bridge --bench throughput -- [--connections 8] [--workers 50] [--seconds 10]`

use engine::ids::WorkerId;
use engine::policy::{Mode, PolicyPatch};
use executor_protocol::{DaemonMessage, ExecutorMessage, StateName};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use test_executor::{ClientError, TestExecutor, hello};
use testkit::{Daemon, EXECUTOR_TOKEN, attached_root, binding_at};

#[path = "../tests/testkit/mod.rs"]
mod testkit;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// What one connection did within the measured window.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Commands received.
    commands: u64,
    /// `conversation.state` messages sent.
    states: u64,
    /// `command.result` messages sent.
    results: u64,
}

/// Auto, no idle grace, the stall guard off (a closed loop makes no durable progress).
fn policy() -> PolicyPatch {
    PolicyPatch {
        mode: Some(Mode::Auto),
        idle_grace_ms: Some(0),
        stall_warning_after_no_progress_attempts: Some(None),
        stall_pause_after_no_progress_attempts: Some(None),
        stall_warning_after_no_progress_ms: Some(None),
        stall_pause_after_no_progress_ms: Some(None),
        ..PolicyPatch::default()
    }
}

/// One executor holding `workers` bound, delivered workers that are generating; returns
/// the connection and each worker's last state sequence.
async fn prepare(daemon: &Daemon, connection: usize, workers: usize) -> (TestExecutor, BTreeMap<WorkerId, u64>) {
    let name = format!("bench-{connection}");
    let (mut x, _) = TestExecutor::hello(&daemon.url, hello(EXECUTOR_TOKEN, &name)).await.expect("hello");
    let mut seqs = BTreeMap::new();
    for i in 0..workers {
        let url = format!("https://chatgpt.com/c/{name}-{i}");
        let root = attached_root(&daemon.handle, &format!("{name} {i}"), policy(), &url).await;
        x.send(&ExecutorMessage::Binding(binding_at(root, &url, StateName::Idle, 1))).await.expect("binding");
        let c = x.command_within(Duration::from_secs(30)).await.expect("assignment");
        x.deliver(&c, 2).await.expect("delivered");
        seqs.insert(root, 2);
    }
    (x, seqs)
}

/// Runs every worker's cycle until `until`: idle in, command out, submitted and
/// generating in, and idle again.
async fn drive(mut x: TestExecutor, mut seqs: BTreeMap<WorkerId, u64>, until: Instant) -> Counts {
    let mut counts = Counts::default();
    for (worker, seq) in seqs.iter_mut() {
        *seq += 1;
        x.state(*worker, StateName::Idle, *seq).await.expect("idle");
        counts.states += 1;
    }
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let c = match x.recv_within(left).await {
            Ok(DaemonMessage::Command(c)) => c,
            Err(ClientError::Timeout(_)) => break,
            other => panic!("the daemon answered with {other:?}; lower the load per connection"),
        };
        if Instant::now() >= until {
            break;
        }
        counts.commands += 1;
        let seq = seqs.get_mut(&c.worker_id).expect("a command for one of this connection's workers");
        x.deliver(&c, *seq + 1).await.expect("delivered");
        x.state(c.worker_id, StateName::Idle, *seq + 2).await.expect("idle");
        *seq += 2;
        counts.results += 1;
        counts.states += 2;
    }
    x.close().await;
    counts
}

#[allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]
fn main() {
    let connections = arg("--connections", 8);
    let workers = arg("--workers", 50);
    let seconds = arg("--seconds", 10) as u64;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let daemon = Daemon::start().await;
        let mut prepared = Vec::with_capacity(connections);
        for connection in 0..connections {
            prepared.push(prepare(&daemon, connection, workers).await);
        }
        let started = Instant::now();
        let until = started + Duration::from_secs(seconds);
        let tasks: Vec<_> = prepared.into_iter().map(|(x, seqs)| tokio::spawn(drive(x, seqs, until))).collect();
        let mut total = Counts::default();
        let mut slowest = u64::MAX;
        for task in tasks {
            let c = task.await.expect("a connection task");
            total.commands += c.commands;
            total.states += c.states;
            total.results += c.results;
            slowest = slowest.min(c.commands);
        }
        let secs = started.elapsed().as_secs_f64();
        let per_second = |n: u64| n as f64 / secs;
        println!(
            "{connections} connections x {workers} workers, {secs:.1} s: {:.0} commands/s, {:.0} state messages/s, \
             {:.0} executor messages/s in (states + results), {:.0} messages/s both ways; \
             {:.0} messages/s in per connection, the quietest connection got {} commands",
            per_second(total.commands),
            per_second(total.states),
            per_second(total.states + total.results),
            per_second(total.states + total.results + total.commands),
            per_second(total.states + total.results) / connections as f64,
            slowest,
        );
        daemon.stop().await;
    });
}
