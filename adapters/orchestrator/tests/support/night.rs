//! The processes of a first night on the command line, started as a person starts them on a
//! fresh `HOME` (no `--data-dir`: the default data directory under it): `orchestrator
//! serve`, `orchestrator executor-cli` with the real Codex CLI, the loopback mock model
//! ([`super::model::MockModel`]) Codex talks to, and the text
//! "screenshots" of each state (`docs/screenshots/first-night-cli-*.txt` with
//! `UPDATE_SCREENSHOTS=1`, else under `target/e2e-artifacts/`). Waits poll with a deadline.

use super::model::MockModel;
use super::orchestrator_bin;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long any one wait of the first night may take before the test fails.
pub const WAIT_MAX: Duration = Duration::from_secs(30);

/// Polls `check` every 50 ms until it returns `Some`, failing after `limit` with `what`
/// and the last thing `seen` said.
pub fn until<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match check() {
            Ok(value) => return value,
            Err(seen) if Instant::now() >= deadline => {
                panic!("timed out waiting ({limit:?}): {what}; last seen:\n{seen}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// The real `codex` named by `CODEX_BIN`. Without it: with `ORCH_REAL_CLIS=required` the
/// test fails; otherwise it prints one line saying it is skipped and why.
pub fn real_codex(test: &str) -> Option<PathBuf> {
    match std::env::var_os("CODEX_BIN") {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var("ORCH_REAL_CLIS").as_deref() == Ok("required") => {
            panic!("{test}: ORCH_REAL_CLIS=required but CODEX_BIN is not set (run tests/cli-agents/setup.sh)")
        }
        None => {
            eprintln!("{test}: skipped: CODEX_BIN is not set (tests/cli-agents/setup.sh installs the real codex)");
            None
        }
    }
}

/// A person's machine for one night: a fresh home, a workspace, and every process started.
pub struct Night {
    /// Holds the home, the workspace and the logs; removed at the end.
    pub root: tempfile::TempDir,
    /// `HOME` of every command.
    pub home: PathBuf,
    /// The worker's directory.
    pub work: PathBuf,
    /// The real codex.
    pub codex: PathBuf,
    /// The mock model Codex talks to.
    pub model: MockModel,
    /// The executor endpoint `serve` printed.
    pub executor_url: String,
    children: Vec<(&'static str, Child)>,
}

impl Night {
    /// A fresh home and workspace; the mock model started with `plan` (its JSON).
    pub fn new(codex: PathBuf, plan: &serde_json::Value) -> Night {
        let root = tempfile::tempdir().expect("tempdir");
        let (home, work) = (root.path().join("home"), root.path().join("work"));
        for dir in [&home, &work] {
            std::fs::create_dir_all(dir).expect("dir");
        }
        let model = MockModel::start(root.path(), plan);
        Night { root, home, work, codex, model, executor_url: String::new(), children: Vec::new() }
    }

    /// `orchestrator ARGS` as the person types it: their `HOME`, nothing else set.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(orchestrator_bin());
        command
            .args(args)
            .env("HOME", &self.home)
            .env_remove("XDG_DATA_HOME")
            .env_remove("ORCHESTRATOR_MCP_TOKEN")
            .env_remove("ORCHESTRATOR_DATA_DIR")
            .env_remove("RUST_LOG");
        command
    }

    /// `orchestrator ARGS`, run to its end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run orchestrator")
    }

    /// `orchestrator ARGS` that must work: its stdout.
    pub fn said(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(0), "orchestrator {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `orchestrator serve --listen 127.0.0.1:0`: what it printed up to its MCP endpoint.
    pub fn serve(&mut self) -> Vec<String> {
        let log = std::fs::File::create(self.root.path().join("serve.log")).expect("log");
        let mut child = self
            .command(&["serve", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start the daemon");
        let stdout = child.stdout.take().expect("stdout");
        self.children.push(("daemon", child));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut lines = Vec::new();
        let deadline = Instant::now() + WAIT_MAX;
        loop {
            let line = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
            let line = line.unwrap_or_else(|_| panic!("the daemon did not announce its endpoint: {lines:?}"));
            if let Some(url) = line.strip_prefix("orchestrator: executor endpoint ") {
                self.executor_url = url.to_string();
            }
            let done = line.starts_with("orchestrator: MCP endpoint ");
            lines.push(line);
            if done {
                std::thread::spawn(move || while rx.recv().is_ok() {});
                return lines;
            }
        }
    }

    /// The `executor-cli` command line: no `--daemon` (it finds the daemon of the home's data
    /// directory whatever its port); the real Codex, pointed at the mock model.
    pub fn executor_args(&self) -> Vec<String> {
        let mut args = vec![
            "executor-cli".to_string(),
            "--kinds".to_string(),
            "codex".to_string(),
            "--codex".to_string(),
            self.codex.display().to_string(),
            "--workspace".to_string(),
            self.work.display().to_string(),
        ];
        args.extend(self.model.codex_args());
        args
    }

    /// Starts `orchestrator executor-cli` (its log in `executor-N.log`) and waits until it is
    /// connected; returns its pid and its first log lines.
    pub fn executor(&mut self, n: u32) -> (u32, String) {
        let log_path = self.root.path().join(format!("executor-{n}.log"));
        let log = std::fs::File::create(&log_path).expect("log");
        let args = self.executor_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let child = self.command(&args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(log).spawn().expect("start");
        let pid = child.id();
        self.children.push(("executor", child));
        let log = until("the executor connects", WAIT_MAX, || {
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            if text.contains("connected to the daemon") { Ok(text) } else { Err(text) }
        });
        (pid, log)
    }

    /// SIGKILL to the executor `pid` (no goodbye on its socket).
    pub fn kill_executor(&mut self, pid: u32) {
        let (_, mut child) = self.take(pid);
        child.kill().expect("SIGKILL the executor");
        child.wait().expect("reap the executor");
    }

    fn take(&mut self, pid: u32) -> (&'static str, Child) {
        let at = self.children.iter().position(|(_, c)| c.id() == pid).expect("a child of this night");
        self.children.remove(at)
    }

    /// Every model request's body, in order (Codex's retries included).
    pub fn model_requests(&self) -> Vec<serde_json::Value> {
        self.model.requests()
    }

    /// The text with this night's own paths and ports replaced by stable stand-ins, and any
    /// token a start shows once replaced by a placeholder: what a screenshot keeps.
    pub fn plain(&self, text: &str) -> String {
        let mut text = text.replace(&self.codex.display().to_string(), "$CODEX_BIN");
        text = text
            .replace(&self.home.display().to_string(), "~")
            .replace(&self.root.path().display().to_string(), "/tmp/night");
        for port in [port_of(&self.executor_url), Some(self.model.port)].into_iter().flatten() {
            text = text.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:PORT");
        }
        text.lines().map(redact_token).collect::<Vec<_>>().join("\n") + "\n"
    }

    /// Saves a text screenshot `first-night-cli-<n>-<state>.txt`: under `docs/screenshots/`
    /// with `UPDATE_SCREENSHOTS=1`, else under `target/e2e-artifacts/`.
    pub fn screenshot(&self, name: &str, shown: &str) {
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dir = if std::env::var("UPDATE_SCREENSHOTS").as_deref() == Ok("1") {
            manifest.join("../../docs/screenshots")
        } else {
            std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| manifest.join("../../target"), PathBuf::from)
                .join("e2e-artifacts")
        };
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("first-night-cli-{name}.txt"));
        std::fs::write(&path, self.plain(shown)).expect("write the screenshot");
        eprintln!("screenshot {}", path.display());
    }

    /// The daemon's log so far.
    pub fn daemon_log(&self) -> String {
        std::fs::read_to_string(self.root.path().join("serve.log")).unwrap_or_default()
    }

    /// The home's data directory (the default one).
    pub fn data_dir(&self) -> PathBuf {
        self.home.join(".local/share/orchestrator")
    }

    /// Where the executor's logs are.
    pub fn dir(&self) -> &Path {
        self.root.path()
    }
}

impl Drop for Night {
    fn drop(&mut self) {
        // The daemon gets SIGKILL too: nothing of this night outlives the test.
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn port_of(url: &str) -> Option<u16> {
    url.split("127.0.0.1:").nth(1)?.split('/').next()?.parse().ok()
}

/// A line that is a whole token (64 hex characters, as `serve` shows a generated one), and
/// the pairing code a first start shows (a new one each start).
fn redact_token(line: &str) -> String {
    if line.len() == 64 && line.bytes().all(|b| b.is_ascii_hexdigit()) {
        "<the token, shown only this once>".to_string()
    } else if let Some(rest) = line.strip_prefix("orchestrator: pairing code ")
        && rest.len() > 9
    {
        format!("orchestrator: pairing code NNNN-NNNN{}", &rest[9..])
    } else {
        line.to_string()
    }
}
