//! Test harness for the executor process: the real daemon in process on loopback (as the
//! bridge's loopback tests start it), the executor's options pointing at a scripted
//! stand-in (`standin/codex_sim.py`) or at the real `codex` named by `CODEX_BIN`, the
//! stand-in's log of prompts taken in, and polling with deadlines (never sleep-and-hope).

#![allow(dead_code)] // Each test file uses part of the harness.

mod flow;
mod frames;
#[allow(unused_imports)] // Each test file uses part of the harness.
pub use flow::{conversation_in, crash, executor, spawn_executor, start_run, submitted};
#[allow(unused_imports)] // Each test file uses part of the harness.
pub use frames::{answer_frame, frame, next_report, outcome, result_of, state};

use cli_executor::base::settings::Settings;
use cli_executor::connection::Options;
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
    /// The daemon's data directory (its host book is there).
    pub fn data_dir(&self) -> PathBuf {
        self._dir.path().join("data")
    }

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
            history: Default::default(),
            store: Default::default(),
            notify: Vec::new(),
            notify_ca: None,
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
            (path.clone(), mock_provider_args(*port), vec![("MOCK_API_KEY".to_string(), "x".to_string())])
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
        kinds: vec![executor_protocol::ExecutorKindWire::Codex],
        codex_auth: None,
        approvals: Default::default(),
    }
}

/// `app-server` and the `-c` settings that send the real codex's model requests to the mock
/// model on `port` (its key in `MOCK_API_KEY`, no retries).
pub fn mock_provider_args(port: u16) -> Vec<String> {
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
        args.extend(["-c".to_string(), c]);
    }
    args
}

/// The executor's options against `daemon`, every child configured with its MCP server.
pub fn options(daemon_url: &str, dirs: &Dirs, binary: &Binary) -> Options {
    let mut settings = settings(dirs, binary);
    let url = cli_executor::base::mcp::url_from_daemon(daemon_url).expect("an MCP url");
    settings.mcp = Some(cli_executor::base::mcp::McpServer { url, token: MCP_TOKEN.to_string() });
    Options {
        urls: vec![daemon_url.to_string()],
        token_file: dirs.token.clone(),
        executor_id: "cli-test".to_string(),
        settings,
        kinds: Some(vec![executor_protocol::ExecutorKindWire::Codex]),
        daemon_ca: None,
        turns_max: cli_executor::base::limits::TURNS_MAX_DEFAULT,
        accounts: Vec::new(),
        mcp_relay: false,
    }
}

/// The idle grace of the daemon test runs: short, but long enough to see the idle first.
pub const GRACE_MS: u64 = 300;

/// The stand-in's log for `worker`: a JSON object per line.
fn standin_log(dirs: &Dirs, worker: WorkerId) -> String {
    let log = dirs.state.join("sessions").join(worker.to_string()).join("codex-home").join("standin-log.jsonl");
    std::fs::read_to_string(&log).unwrap_or_default()
}

/// The prompts the stand-in took in for `worker`, in order: `(method, nonce)`.
pub fn taken_in(dirs: &Dirs, worker: WorkerId) -> Vec<(String, String)> {
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_string();
    standin_log(dirs, worker)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a log line is JSON"))
        .map(|v| (text(&v, "method"), text(&v, "clientUserMessageId")))
        .collect()
}

/// The approval decisions the stand-in took in for `worker`, in order (a line still being
/// written is skipped: callers poll).
pub fn decisions(dirs: &Dirs, worker: WorkerId) -> Vec<String> {
    standin_log(dirs, worker)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|v| v["method"] == "approval")
        .map(|v| v["decision"].as_str().unwrap_or_default().to_string())
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
    journal_entry(dirs, key)["phase"].as_str().map(str::to_string)
}

/// The last journal record of the command with idempotency key `key` (`null`: none).
pub fn journal_entry(dirs: &Dirs, key: &str) -> Value {
    let text = std::fs::read_to_string(dirs.state.join("journal.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .rfind(|v| v["t"] == "cmd" && v["command"]["idempotencyKey"] == key)
        .unwrap_or(Value::Null)
}

/// The loopback mock model (`tests/mock/mock_responses.py`), killed on drop.
pub struct MockModel {
    /// Its port.
    pub port: u16,
    child: std::process::Child,
    /// Every request body it got (JSON Lines).
    requests: PathBuf,
    _dir: tempfile::TempDir,
}

impl MockModel {
    /// Starts the mock with `plan` (the scripted worker, `None`: the text triggers only).
    pub fn start(plan: Option<&Value>) -> MockModel {
        MockModel::spawn(plan, false)
    }

    /// Starts the mock as a ChatGPT backend too: it refreshes logins (rotating refresh
    /// tokens) and answers only the latest access token (`--auth`).
    pub fn with_login() -> MockModel {
        MockModel::spawn(None, true)
    }

    /// Writes a ChatGPT login whose tokens expired (`--write-auth`), mode 0600.
    pub fn write_login(path: &std::path::Path) {
        let status = std::process::Command::new(python())
            .arg(mock_script())
            .arg("--write-auth")
            .arg(path)
            .status()
            .expect("the mock runs");
        assert!(status.success(), "--write-auth");
    }

    /// The refresh requests it got: `(refresh token, HTTP status)`, in order.
    pub fn refreshes(&self) -> Vec<(String, u64)> {
        let text = std::fs::read_to_string(self._dir.path().join("refreshes.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("a logged refresh is JSON"))
            .map(|v| (v["refreshToken"].as_str().unwrap_or_default().to_string(), v["status"].as_u64().unwrap_or(0)))
            .collect()
    }

    fn spawn(plan: Option<&Value>, login: bool) -> MockModel {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
        let requests = dir.path().join("requests.jsonl");
        let mut command = std::process::Command::new(python());
        command.arg(mock_script()).arg(port.to_string()).arg("--requests").arg(&requests);
        if login {
            command.arg("--auth").arg("--refreshes").arg(dir.path().join("refreshes.jsonl"));
        }
        if let Some(plan) = plan {
            let file = dir.path().join("plan.json");
            std::fs::write(&file, plan.to_string()).expect("plan");
            command.arg("--plan").arg(file);
        }
        let child = command.stderr(std::process::Stdio::null()).spawn().expect("the mock model starts");
        let deadline = Instant::now() + Duration::from_millis(WAIT_MS_MAX);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the mock model did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        MockModel { port, child, requests, _dir: dir }
    }

    /// Every request body so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.requests).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).expect("a logged request is JSON")).collect()
    }
}

fn mock_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mock/mock_responses.py")
}

impl Drop for MockModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The real `codex` named by `CODEX_BIN`. Without it: with `ORCH_REAL_CLIS=required` the
/// test fails; otherwise it prints one line saying it is skipped and why, and gets `None`.
pub fn real_codex(test: &str) -> Option<PathBuf> {
    match std::env::var_os("CODEX_BIN") {
        Some(path) => {
            eprintln!("{test}: the real codex {}", PathBuf::from(&path).display());
            Some(PathBuf::from(path))
        }
        None if std::env::var("ORCH_REAL_CLIS").as_deref() == Ok("required") => {
            panic!("{test}: ORCH_REAL_CLIS=required but CODEX_BIN is not set (run tests/cli-agents/setup.sh)")
        }
        None => {
            eprintln!("{test}: skipped: CODEX_BIN is not set (tests/cli-agents/setup.sh installs the real codex)");
            None
        }
    }
}

/// The binaries to run a test against: always the stand-in (with `sim_flags`); the real
/// `codex` too when `CODEX_BIN` names it ([`real_codex`]).
pub fn binaries(test: &str, sim_flags: &[&str]) -> Vec<Binary> {
    let sim = Binary::Sim(sim_flags.iter().map(|s| s.to_string()).collect());
    eprintln!("{test}: the stand-in {}", sim_script().display());
    match real_codex(test) {
        Some(path) => vec![sim, Binary::Real { path, port: 0 }],
        None => vec![sim],
    }
}

/// Unix milliseconds now, the engine's clock in these runs.
pub fn now_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970");
    u64::try_from(since.as_millis()).expect("in range")
}
