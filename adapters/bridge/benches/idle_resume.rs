//! From an idle observation arriving on the socket to the resume command leaving the
//! daemon, minus the idle grace (here 0 ms), with `--workers N` workers bound on one
//! executor connection (issue 6; goal p99 under 5 ms with 100 workers).
//!
//! `cargo bench -p bridge --bench idle_resume -- [--workers 100] [--rounds 3]`

use bridge::client::{TestExecutor, hello};
use bridge::{BindingWire, ExecutorMessage, ObservationWire, OutcomeWire, StateName};
use engine::Reply;
use engine::ids::WorkerId;
use engine::op::Operation;
use engine::policy::{Mode, PolicyPatch};
use orchestrator::serve::{ExecutorOptions, ServeOptions, serve_with_executors};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

const TOKEN: &str = "executor-token-for-the-benchmark-0123";

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
        let dir = tempfile::tempdir().expect("tempdir");
        let options = ServeOptions {
            data_dir: dir.path().join("data"),
            listen: "127.0.0.1:0".parse().expect("addr"),
            token: Some("mcp-token-for-the-benchmark-0123".into()),
            allow_hosts: vec![],
        };
        let executors = ExecutorOptions { token: Some(TOKEN.into()), ..ExecutorOptions::default() };
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, listening) = oneshot::channel();
        let serving = serve_with_executors(
            options,
            executors,
            async move {
                let _ = stopped.await;
            },
            move |l, h| {
                let _ = ready.send((l.executor_url.clone().expect("bridge"), h.clone()));
            },
        );
        let task = tokio::spawn(async move { serving.await.map_err(|e| e.to_string()) });
        let (url, handle) = listening.await.expect("listening");
        let (mut x, _) = TestExecutor::hello(&url, hello(TOKEN, "bench-1")).await.expect("hello");

        // One run per worker (its root), auto with no idle grace, bound and delivered once.
        let mut roots: Vec<(WorkerId, u64)> = Vec::new();
        for i in 0..workers {
            let patch = PolicyPatch { mode: Some(Mode::Auto), idle_grace_ms: Some(0), ..PolicyPatch::default() };
            let op = Operation::RunCreate {
                task_name: format!("bench {i}"),
                root_conversation_name: "root".into(),
                context: "benchmark".into(),
                default_policy: Some(patch),
            };
            let Ok(Ok(Reply::Run(view))) = handle.call(op).await else { panic!("run_create") };
            let root = view.run.root;
            let url = format!("https://chatgpt.com/c/bench-{i}");
            handle.call(Operation::WorkerAttach { worker: root, conversation: url.clone() }).await.expect("attach").expect("attach");
            let observation = Some(ObservationWire { state: StateName::Idle, error_kind: None, seq: 1, block: None });
            let binding = BindingWire { worker_id: root, conversation_url: url, open: true, observation };
            x.send(&ExecutorMessage::Binding(binding)).await.expect("binding");
            let c = x.command_within(Duration::from_secs(30)).await.expect("assignment");
            x.result(c.command_id, OutcomeWire::Submitted { state_seq: 1, conversation_url: None }).await.expect("result");
            x.state(root, StateName::Generating, 2).await.expect("generating");
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
                x.result(c.command_id, OutcomeWire::Submitted { state_seq: *seq - 1, conversation_url: None })
                    .await
                    .expect("result");
                x.state(*root, StateName::Generating, *seq).await.expect("generating");
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

        let _ = stop.send(());
        let _ = task.await;
    });
}
