//! Test harness for the executor process: the real daemon in process on loopback (as the
//! bridge's loopback tests start it), the executor's options pointing at a scripted
//! stand-in (`standin/codex_sim.py`) or at the real `codex` named by `CODEX_BIN`, the
//! stand-in's log of prompts taken in, and polling with deadlines (never sleep-and-hope).

#![allow(dead_code)] // Each test file uses part of the harness.

use cli_executor::connection::Options;
use cli_executor::worker::Settings;
use engine::ids::WorkerId;
use engine::op::Operation;
use engine::{Rejection, Reply};
use orchestrator::serve::{ExecutorOptions, ServeOptions, serve_with_executors};
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The executor token the daemon accepts.
pub const EXECUTOR_TOKEN: &str = "executor-token-for-cli-tests-0123456789";

/// The MCP token the daemon accepts.
pub const MCP_TOKEN: &str = "mcp-token-for-cli-tests-0123456789";

/// How long any one wait may take before the test fails.
pub const WAIT_MS_MAX: u64 = 20_000;

/// A running daemon.
pub struct Daemon {
    /// `ws://127.0.0.1:PORT/executor`.
    pub url: String,
    /// The engine.
    pub handle: runtime::Handle,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), String>>,
    _dir: tempfile::TempDir,
}

impl Daemon {
    /// Starts a daemon on a fresh data directory and waits until it listens.
    pub async fn start() -> Daemon {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = ServeOptions {
            data_dir: dir.path().join("data"),
            listen: "127.0.0.1:0".parse().expect("addr"),
            token: Some(MCP_TOKEN.into()),
            allow_hosts: vec![],
            limits: Default::default(),
            oauth: None,
        };
        let executors = ExecutorOptions { token: Some(EXECUTOR_TOKEN.into()), ..ExecutorOptions::default() };
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, listening) = oneshot::channel();
        let serving = serve_with_executors(
            options,
            executors,
            async move {
                let _ = stopped.await;
            },
            move |l, h| {
                let _ = ready.send((l.executor_url.clone().expect("the bridge is mounted"), h.clone()));
            },
        );
        let task = tokio::spawn(async move { serving.await.map_err(|e| e.to_string()) });
        let (url, handle) = listening.await.expect("the daemon listens");
        Daemon { url, handle, stop: Some(stop), task, _dir: dir }
    }

    /// An engine operation.
    pub async fn call(&self, op: Operation) -> Result<Reply, Rejection> {
        self.handle.call(op).await.expect("the engine runs")
    }

    /// The worker as the engine sees it.
    pub async fn worker(&self, worker: WorkerId) -> engine::op::WorkerView {
        match self.call(Operation::WorkerGet { worker }).await {
            Ok(Reply::Worker(view)) => *view,
            other => panic!("worker_get: {other:?}"),
        }
    }

    /// The worker's attempts, oldest first.
    pub async fn attempts(&self, worker: WorkerId) -> Vec<engine::model::Attempt> {
        match self.call(Operation::WorkerAttempts { worker, after_sequence: 0, limit: 100 }).await {
            Ok(Reply::Attempts(attempts)) => attempts,
            other => panic!("worker_attempts: {other:?}"),
        }
    }

    /// Stops the daemon and waits for a clean stop.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.await.expect("the daemon task").expect("the daemon stops cleanly");
    }
}

/// Which `codex` the tests drive.
#[derive(Debug, Clone)]
pub enum Binary {
    /// `tests/standin/codex_sim.py` with these flags.
    Sim(Vec<String>),
    /// The real binary (`CODEX_BIN`), offline against the loopback mock model on this port.
    Real {
        /// The binary.
        path: PathBuf,
        /// The mock model's port.
        port: u16,
    },
}

/// The executor's directories for one test.
pub struct Dirs {
    /// Holds everything; removed at the end.
    pub root: tempfile::TempDir,
    /// The executor's state directory.
    pub state: PathBuf,
    /// The workers' working directory.
    pub work: PathBuf,
    /// The executor token file.
    pub token: PathBuf,
}

/// Fresh directories, the token file written.
pub fn dirs() -> Dirs {
    let root = tempfile::tempdir().expect("tempdir");
    let (state, work, token) =
        (root.path().join("state"), root.path().join("work"), root.path().join("executor-token"));
    std::fs::create_dir_all(&work).expect("work dir");
    std::fs::write(&token, format!("{EXECUTOR_TOKEN}\n")).expect("token file");
    Dirs { root, state, work, token }
}

/// The Python interpreter itself (not a shim: the child's environment is cleared).
pub fn python() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 on PATH");
    PathBuf::from(String::from_utf8(out.stdout).expect("utf-8").trim())
}

/// The stand-in script.
pub fn sim_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/standin/codex_sim.py")
}

/// How children start for `binary`.
pub fn settings(dirs: &Dirs, binary: &Binary) -> Settings {
    let (program, args, env_set) = match binary {
        Binary::Sim(flags) => {
            let mut args = vec![sim_script().display().to_string()];
            args.extend(flags.iter().cloned());
            (python(), args, Vec::new())
        }
        Binary::Real { path, port } => {
            let mut args = vec!["app-server".to_string()];
            for c in [
                "model_provider=mock".to_string(),
                "model=mock-model".to_string(),
                "model_providers.mock.name=\"mock\"".to_string(),
                format!("model_providers.mock.base_url=\"http://127.0.0.1:{port}/v1\""),
                "model_providers.mock.env_key=\"MOCK_API_KEY\"".to_string(),
                "model_providers.mock.wire_api=\"responses\"".to_string(),
                "model_providers.mock.request_max_retries=0".to_string(),
                "model_providers.mock.stream_max_retries=0".to_string(),
            ] {
                args.push("-c".to_string());
                args.push(c);
            }
            (path.clone(), args, vec![("MOCK_API_KEY".to_string(), "x".to_string())])
        }
    };
    Settings {
        program,
        args,
        env_set,
        state_dir: dirs.state.clone(),
        workspace: Some(dirs.work.display().to_string()),
        mcp: None,
        claude: None,
        kinds: vec![bridge::ExecutorKindWire::Codex],
    }
}

/// The executor's options against `daemon`.
pub fn options(daemon_url: &str, dirs: &Dirs, binary: &Binary) -> Options {
    Options {
        url: daemon_url.to_string(),
        token_file: dirs.token.clone(),
        executor_id: "cli-test".to_string(),
        settings: settings(dirs, binary),
        kinds: Some(vec![bridge::ExecutorKindWire::Codex]),
    }
}

/// The idle grace of the daemon test runs: short, but long enough to see the idle first.
pub const GRACE_MS: u64 = 300;

/// Starts a run whose root is a `kind` worker in `dirs.work` (only an executor of that
/// kind gets its commands) and opens a new conversation, in Auto Resume.
pub async fn start_run(d: &Daemon, dirs: &Dirs, kind: engine::ExecutorKind) -> WorkerId {
    use engine::policy::{Mode, PolicyPatch};
    let patch = PolicyPatch { mode: Some(Mode::Auto), idle_grace_ms: Some(GRACE_MS), ..PolicyPatch::default() };
    let op = Operation::RunStart {
        task_name: "cli test".into(),
        root_conversation_name: "root".into(),
        context: format!("drive a {kind} worker"),
        default_policy: Some(patch),
        root_conversation: None,
        root_executor: Box::new(engine::op::RootExecutor {
            executor: Some(kind),
            workspace: Some(engine::Workspace { directory: dirs.work.display().to_string(), branch: None }),
        }),
    };
    match d.call(op).await {
        Ok(Reply::Run(view)) => view.run.root,
        other => panic!("run_start: {other:?}"),
    }
}

/// Starts the executor as a task (aborting it is a crash: its children are killed, its
/// leases and journal stay).
pub fn spawn_executor(options: Options) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if let Err(e) = cli_executor::connection::run(options).await {
            panic!("the executor stopped: {e}");
        }
    })
}

/// Kills the executor task (its children die with it; leases and journal stay).
pub async fn crash(task: tokio::task::JoinHandle<()>) {
    task.abort();
    let _ = task.await;
}

/// Waits until attempt `n` of `worker` was submitted (and returns the attempts).
pub async fn submitted(d: &Daemon, worker: WorkerId, n: usize) -> Vec<engine::model::Attempt> {
    until(&format!("attempt {n} submitted"), || async {
        let attempts = d.attempts(worker).await;
        (attempts.len() >= n && attempts[n - 1].submitted_at.is_some()).then_some(attempts)
    })
    .await
}

/// Waits until the worker's conversation shows `state`.
pub async fn conversation_in(d: &Daemon, worker: WorkerId, state: engine::model::ConversationState) {
    until(&format!("conversation {state:?}"), || async {
        let view = d.worker(worker).await;
        view.worker.binding.as_ref().is_some_and(|b| b.state == state).then_some(())
    })
    .await;
}

/// The prompts the stand-in took in for `worker`, in order: `(method, nonce)`.
pub fn taken_in(dirs: &Dirs, worker: WorkerId) -> Vec<(String, String)> {
    let log = dirs.state.join("sessions").join(worker.to_string()).join("codex-home").join("standin-log.jsonl");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    text.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("a log line is JSON");
            (
                v["method"].as_str().unwrap_or_default().to_string(),
                v["clientUserMessageId"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Polls `check` (async) every 10 ms until it returns `Some`, failing after [`WAIT_MS_MAX`].
pub async fn until<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_millis(WAIT_MS_MAX);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// How many `turn/start`s the stand-in's session for `worker` has seen.
pub fn turn_starts(dirs: &Dirs, worker: WorkerId) -> u64 {
    let state = dirs.state.join("sessions").join(worker.to_string()).join("codex-home").join("standin-state.json");
    let text = std::fs::read_to_string(state).unwrap_or_default();
    serde_json::from_str::<Value>(&text).ok().and_then(|v| v["turnStarts"].as_u64()).unwrap_or(0)
}

/// The phase of the newest journal record of the command with idempotency key `key`.
pub fn journal_phase(dirs: &Dirs, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(dirs.state.join("journal.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .rfind(|v| v["t"] == "cmd" && v["command"]["idempotencyKey"] == key)
        .and_then(|v| v["phase"].as_str().map(str::to_string))
}

/// Starts the loopback mock model (`tests/mock/mock_responses.py`) and returns its port
/// and process (killed on drop by the caller).
pub fn mock_model() -> (u16, std::process::Child) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mock/mock_responses.py");
    let child = std::process::Command::new(python())
        .arg(script)
        .arg(port.to_string())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the mock model starts");
    let deadline = Instant::now() + Duration::from_millis(WAIT_MS_MAX);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the mock model did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    (port, child)
}

/// The binaries to run a test against: always the stand-in (with `sim_flags`); the real
/// `codex` too when `CODEX_BIN` names it. Prints which, and why the real one is skipped.
pub fn binaries(sim_flags: &[&str]) -> Vec<Binary> {
    let sim = Binary::Sim(sim_flags.iter().map(|s| s.to_string()).collect());
    match std::env::var_os("CODEX_BIN") {
        Some(path) => {
            eprintln!(
                "binaries: the stand-in {} and the real codex {}",
                sim_script().display(),
                PathBuf::from(&path).display()
            );
            vec![sim, Binary::Real { path: PathBuf::from(path), port: 0 }]
        }
        None => {
            eprintln!(
                "binaries: the stand-in {} only; the real codex is skipped: CODEX_BIN is not set",
                sim_script().display()
            );
            vec![sim]
        }
    }
}

/// Reads an executor's reports until one matches `pred`; returns it (failing after a
/// deadline).
pub async fn until_report(
    reports: &mut tokio::sync::mpsc::Receiver<cli_executor::worker::Out>,
    what: &str,
    pred: impl Fn(&cli_executor::worker::Out) -> bool,
) -> cli_executor::worker::Out {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(WAIT_MS_MAX * 3);
    loop {
        let out = tokio::time::timeout_at(deadline, reports.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting: {what}"))
            .expect("the executor runs");
        if pred(&out) {
            return out;
        }
    }
}

/// Matches the result of attempt `n`.
pub fn result_of(n: u64) -> impl Fn(&cli_executor::worker::Out) -> bool {
    move |out| matches!(out, cli_executor::worker::Out::Result(r) if r.command_id.attempt == engine::ids::AttemptId(n))
}

/// Matches a state `wanted`.
pub fn state(wanted: bridge::StateName) -> impl Fn(&cli_executor::worker::Out) -> bool {
    move |out| matches!(out, cli_executor::worker::Out::State(s) if s.state == wanted)
}

/// The outcome of a result report.
pub fn outcome(out: cli_executor::worker::Out) -> bridge::OutcomeWire {
    match out {
        cli_executor::worker::Out::Result(r) => r.outcome,
        other => panic!("not a result: {other:?}"),
    }
}
