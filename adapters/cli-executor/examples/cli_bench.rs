//! The CLI executor's benchmark (`docs/benchmarks.md`), with the real codex (`CODEX_BIN`)
//! offline against the loopback mock model (`tests/mock/mock_responses.py`):
//!
//! ```sh
//! CODEX_BIN=tests/cli-agents/node_modules/.bin/codex \
//!   cargo run --release -p cli-executor --example cli_bench -- gap 200
//! CODEX_BIN=... cargo run --release -p cli-executor --example cli_bench -- idle 8 20
//! ```
//!
//! `gap TURNS`: one Codex worker in Auto Resume whose every turn reports progress and ends;
//! each codex child runs behind `tests/mock/stdio_tap.py`, which stamps every
//! `turn/completed` codex writes and every `turn/start` it is sent. The gap of a turn is
//! from its `turn/completed` to the next `turn/start`, minus the idle grace: the executor
//! reporting `idle`, the daemon's decision and command, the journal's fsync and the write.
//!
//! `idle SESSIONS SECONDS`: SESSIONS workers (Manual mode: one turn each, then idle; no tap), and
//! the executor's own RSS (`/proc/self/status`) and CPU (`/proc/self/stat`) over SECONDS,
//! per idle session, against the same process with no session; the codex children's RSS
//! beside it.
//!
//! The daemon runs in a child process (this example, `daemon ...`), so the executor's
//! figures are its own.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

// The tests' harness: the daemon in process, the mock model, the codex settings.
#[path = "../tests/harness/mod.rs"]
mod harness;

use cli_executor::base::mcp::{McpServer, url_from_daemon};
use cli_executor::base::settings::Settings;
use cli_executor::connection::{Options, run};
use engine::op::Operation;
use engine::policy::{Mode, PolicyPatch};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use harness::{EXECUTOR_TOKEN, MCP_TOKEN, MockModel, mock_provider_args, python};
/// The idle grace of the `gap` runs.
const GRACE_MS: u64 = 200;
/// How long any one wait of the benchmark may take.
const WAIT_S_MAX: u64 = 600;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    match args.first().map(String::as_str) {
        Some("daemon") => daemon(&args[1..]),
        Some("gap") => gap(number(1, 200)),
        Some("idle") => idle(number(1, 8), number(2, 20)),
        _ => eprintln!("usage: cli_bench gap [TURNS] | idle [SESSIONS] [SECONDS]"),
    }
}

/// `daemon RUNS GRACE_MS auto|manual WORKDIR READY GO`: serves, writes its executor URL to
/// READY, and once GO exists starts RUNS runs with a Codex root in WORKDIR.
fn daemon(args: &[String]) {
    let [runs, grace, mode, work, ready, go] = args else { panic!("daemon: six arguments") };
    let (runs, grace): (u64, u64) = (runs.parse().expect("RUNS"), grace.parse().expect("GRACE_MS"));
    let mode = if mode == "auto" { Mode::Auto } else { Mode::Manual };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let daemon = harness::Daemon::start().await;
        std::fs::write(ready, &daemon.url).expect("ready file");
        while !Path::new(go).exists() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for n in 0..runs {
            let patch = PolicyPatch { mode: Some(mode), idle_grace_ms: Some(grace), ..PolicyPatch::default() };
            let op = Operation::RunStart {
                task_name: format!("bench {n}"),
                root_conversation_name: "root".into(),
                context: "the cli executor benchmark".into(),
                default_policy: Some(patch),
                root_conversation: None,
                root_executor: Box::new(engine::op::RootExecutor {
                    executor: Some(engine::ExecutorKind::Codex),
                    workspace: Some(engine::Workspace { directory: work.clone(), branch: None }),
                }),
            };
            daemon.call(op).await.expect("run_start");
        }
        std::future::pending::<()>().await;
    });
}

/// The pieces of one benchmark run, stopped on drop.
struct Bench {
    dir: tempfile::TempDir,
    mock: MockModel,
    daemon: Child,
    url: String,
}

impl Drop for Bench {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

impl Bench {
    /// The mock model with `plan` and the daemon (`runs` runs in `mode` once GO is written).
    fn start(plan: Value, runs: u64, mode: &str) -> Bench {
        let dir = tempfile::tempdir().expect("tempdir");
        let (work, state) = (dir.path().join("work"), dir.path().join("state"));
        std::fs::create_dir_all(&work).expect("work");
        std::fs::create_dir_all(&state).expect("state");
        std::fs::write(dir.path().join("executor-token"), EXECUTOR_TOKEN).expect("token");
        let mock = MockModel::start(Some(&plan));
        let ready = dir.path().join("ready");
        let daemon = Command::new(std::env::current_exe().expect("this example"))
            .args(["daemon", &runs.to_string(), &GRACE_MS.to_string(), mode])
            .arg(&work)
            .arg(&ready)
            .arg(dir.path().join("go"))
            .stderr(Stdio::null())
            .spawn()
            .expect("the daemon starts");
        let url = wait("the daemon listens", || std::fs::read_to_string(&ready).ok().filter(|u| !u.is_empty()));
        Bench { dir, mock, daemon, url }
    }

    /// The executor's options: the real codex behind the tap (when `tap`), the mock model.
    fn options(&self, tap: bool) -> Options {
        let codex = PathBuf::from(std::env::var_os("CODEX_BIN").expect("CODEX_BIN names the real codex"));
        let mut args = mock_provider_args(self.mock.port);
        let program = if tap {
            let mut tapped =
                vec![manifest("tests/mock/stdio_tap.py").display().to_string(), self.tap_log().display().to_string()];
            tapped.push(codex.display().to_string());
            tapped.append(&mut args);
            args = tapped;
            python()
        } else {
            codex
        };
        let settings = Settings {
            program,
            args,
            env_set: vec![("MOCK_API_KEY".into(), "x".into())],
            state_dir: self.dir.path().join("state"),
            workspace: None,
            mcp: Some(McpServer { url: url_from_daemon(&self.url).expect("mcp url"), token: MCP_TOKEN.into() }),
            codex_auth: None,
            approvals: Default::default(),
            claude: None,
            kinds: vec![executor_protocol::ExecutorKindWire::Codex],
        };
        Options {
            urls: vec![self.url.clone()],
            token_file: self.dir.path().join("executor-token"),
            executor_id: "cli-bench".into(),
            settings,
            kinds: Some(vec![executor_protocol::ExecutorKindWire::Codex]),
            daemon_ca: None,
            turns_max: cli_executor::base::limits::TURNS_MAX_DEFAULT,
            accounts: Vec::new(),
            mcp_relay: false,
        }
    }

    fn tap_log(&self) -> PathBuf {
        self.dir.path().join("tap.jsonl")
    }

    /// The tap's stamps: `(nanoseconds, "out" for turn/completed | "in" for turn/start)`.
    fn stamps(&self) -> Vec<(u64, String)> {
        let text = std::fs::read_to_string(self.tap_log()).unwrap_or_default();
        let mut stamps: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| Some((v["t_ns"].as_u64()?, v["dir"].as_str()?.to_string())))
            .collect();
        stamps.sort();
        stamps
    }

    fn go(&self) {
        std::fs::write(self.dir.path().join("go"), "").expect("go");
    }
}

fn gap(turns: u64) {
    let bench = Bench::start(json!({"otherwise": ["progress"]}), 1, "auto");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let options = bench.options(true);
    let executor = runtime.spawn(run(options));
    bench.go();
    let count = |dir: &str| bench.stamps().iter().filter(|(_, d)| d == dir).count() as u64;
    wait("the turns", || (count("in") > turns).then_some(()));
    let attempts = runtime.block_on(attempts(&bench.url));
    executor.abort();
    let stamps = bench.stamps();
    let starts: Vec<f64> = stamps.iter().filter(|(_, d)| d == "in").map(|(t, _)| *t as f64 / 1e6).collect();
    let ends: Vec<f64> = stamps.iter().filter(|(_, d)| d == "out").map(|(t, _)| *t as f64 / 1e6).collect();
    // Turn i ends (`ends[i]`), the daemon books attempt i idle (`idleAtMs`), schedules
    // attempt i+1 after the grace (`scheduledAtMs`), and its `turn/start` is written
    // (`starts[i + 1]`): each prompt here starts one turn.
    let (mut gap, mut report, mut decide, mut command) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..(turns as usize).min(ends.len()).min(starts.len().saturating_sub(1)) {
        gap.push(starts[i + 1] - ends[i] - GRACE_MS as f64);
        let (Some(idle), Some(next)) = (attempts.get(i).and_then(|a| a.0), attempts.get(i + 1).map(|a| a.1)) else {
            continue;
        };
        report.push(idle - ends[i]);
        decide.push(next - idle - GRACE_MS as f64);
        command.push(starts[i + 1] - next);
    }
    println!("turn gap over {} turns, minus the {GRACE_MS} ms idle grace (ms):", gap.len());
    line("turn/completed read by the tap -> next turn/start written to it", &mut gap);
    line("  turn/completed -> the daemon books the idle (executor, socket)", &mut report);
    line("  the idle + grace -> the daemon schedules the next attempt", &mut decide);
    line("  scheduled -> turn/start written (commit, command, executor journal)", &mut command);
    println!("load average at the end: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
}

/// One line of percentiles (the daemon's stamps are whole milliseconds).
fn line(what: &str, values: &mut [f64]) {
    if values.is_empty() {
        return;
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() as f64 * q).ceil() as usize).clamp(1, values.len()) - 1];
    println!(
        "{what}: p50 {:.1}  p90 {:.1}  p99 {:.1}  max {:.1}  min {:.1}",
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        at(0.0)
    );
}

/// Each attempt of `wrk-1` as the daemon booked it: (idle at, scheduled at), in ms.
async fn attempts(daemon_url: &str) -> Vec<(Option<f64>, f64)> {
    let url = url_from_daemon(daemon_url).expect("mcp url");
    let mut client = console::client::McpClient::connect(&url, Some(MCP_TOKEN)).await.expect("mcp");
    let out = client.call_ok("worker_attempts", json!({"workerId": "wrk-1", "limit": 1000})).await.expect("attempts");
    let list = out["attempts"].as_array().cloned().unwrap_or_default();
    list.iter().map(|a| (a["idleAtMs"].as_f64(), a["scheduledAtMs"].as_f64().unwrap_or_default())).collect()
}

fn idle(sessions: u64, seconds: u64) {
    let bench = Bench::start(json!({"otherwise": []}), sessions, "manual");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let executor = runtime.spawn(run(bench.options(false)));
    std::thread::sleep(Duration::from_secs(3));
    let (rss_none, _) = own_usage();
    bench.go();
    // Each session's one turn asks the model twice (`run_list`, then its answer).
    let asked = || bench.mock.requests().len() as u64 >= 2 * sessions;
    wait("every session's first turn", || asked().then_some(()));
    std::thread::sleep(Duration::from_secs(2));
    let (rss_before, cpu_before) = own_usage();
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(seconds));
    let (rss_after, cpu_after) = own_usage();
    let elapsed = started.elapsed().as_secs_f64();
    let children = children_rss_kib(&bench.dir.path().join("state"));
    executor.abort();
    let ticks = clock_ticks();
    let cpu_pct = (cpu_after - cpu_before) as f64 / ticks / elapsed * 100.0;
    println!("idle sessions {sessions} over {elapsed:.1} s (one codex app-server child each)");
    println!(
        "executor RSS: {rss_none} KiB with none, {rss_after} KiB with {sessions} ({:.0} KiB per session; {rss_before} KiB at the window's start)",
        (rss_after as f64 - rss_none as f64) / sessions as f64
    );
    println!("executor CPU: {cpu_pct:.3} % of a core in all ({:.4} % per idle session)", cpu_pct / sessions as f64);
    println!("codex children RSS: {children} KiB in all ({} KiB per session)", children / sessions.max(1));
    println!("load average at the end: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
}

/// This process's RSS (KiB) and CPU time (clock ticks, user + system).
fn own_usage() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS");
    let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
    let fields: Vec<&str> = stat.rsplit_once(')').expect("comm").1.split_whitespace().collect();
    let cpu = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    (rss, cpu)
}

/// The RSS (KiB) of every process in the children's groups (from their lease files).
fn children_rss_kib(state: &Path) -> u64 {
    let groups: Vec<i64> = std::fs::read_dir(state.join("leases"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|t| t.lines().find_map(|l| l.strip_prefix("pgid=")?.trim().parse().ok()))
        .collect();
    let mut total = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let pgrp: i64 = rest.split_whitespace().nth(2).and_then(|p| p.parse().ok()).unwrap_or(0);
        if groups.contains(&pgrp)
            && let Ok(status) = std::fs::read_to_string(entry.path().join("status"))
        {
            total += status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}

fn clock_ticks() -> f64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().expect("getconf");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(100.0)
}

fn manifest(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Polls `check` every 50 ms until it gives a value, for at most [`WAIT_S_MAX`].
fn wait<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(WAIT_S_MAX);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
