//! From an idle observation arriving on the socket to the resume command leaving the
//! daemon, minus the idle grace (here 0 ms), with `--workers N` workers bound on one
//! executor connection (issue 6; goal p99 under 5 ms with 100 workers).
//!
//! `cargo bench -p bridge --bench idle_resume -- [--workers 100] [--rounds 3]`

use engine::ids::WorkerId;
use engine::policy::{Mode, PolicyPatch};
use executor_protocol::{ExecutorMessage, StateName};
use std::time::{Duration, Instant};
use test_executor::{TestExecutor, hello};
use testkit::{Daemon, EXECUTOR_TOKEN, attached_root, binding_at};

#[path = "../tests/testkit/mod.rs"]
mod testkit;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]
fn main() {
    let workers = arg("--workers", 100);
    let rounds = arg("--rounds", 3);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let daemon = Daemon::start().await;
        let (mut x, _) = TestExecutor::hello(&daemon.url, hello(EXECUTOR_TOKEN, "bench-1")).await.expect("hello");

        // One run per worker (its root), auto with no idle grace, bound and delivered once.
        let mut roots: Vec<(WorkerId, u64)> = Vec::new();
        for i in 0..workers {
            let patch = PolicyPatch { mode: Some(Mode::Auto), idle_grace_ms: Some(0), ..PolicyPatch::default() };
            let url = format!("https://chatgpt.com/c/bench-{i}");
            let root = attached_root(&daemon.handle, &format!("bench {i}"), patch, &url).await;
            x.send(&ExecutorMessage::Binding(binding_at(root, &url, StateName::Idle, 1))).await.expect("binding");
            let c = x.command_within(Duration::from_secs(30)).await.expect("assignment");
            x.deliver(&c, 2).await.expect("delivered");
            roots.push((root, 2));
        }

        let mut latencies = Vec::new();
        for _ in 0..rounds {
            for (root, seq) in roots.iter_mut() {
                *seq += 1;
                let t = Instant::now();
                x.state(*root, StateName::Idle, *seq).await.expect("idle");
                let c = x.command_within(Duration::from_secs(30)).await.expect("resume");
                latencies.push(t.elapsed());
                assert_eq!(c.worker_id, *root);
                *seq += 1;
                x.deliver(&c, *seq).await.expect("delivered");
            }
        }
        latencies.sort();
        println!(
            "idle -> resume command, {workers} workers on one connection, {} samples, grace 0 ms: p50 {:?}  p90 {:?}  p99 {:?}  max {:?}",
            latencies.len(),
            percentile(&latencies, 0.50),
            percentile(&latencies, 0.90),
            percentile(&latencies, 0.99),
            latencies[latencies.len() - 1],
        );

        daemon.stop().await;
    });
}
