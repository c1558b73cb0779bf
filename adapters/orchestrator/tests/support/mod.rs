//! Starting real daemon processes on free loopback ports with temporary data directories.

#![allow(dead_code)]

pub mod flood;
pub mod forward;
pub mod lease;
pub mod model;
pub mod night;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The token the tests pass with `--mcp-token`.
pub const TOKEN: &str = "test-token-0123456789abcdef";

/// The production binary.
pub fn orchestrator_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_orchestrator"))
}

/// The test daemon with the simulated executor (`examples/fake_executor.rs`), built by
/// `cargo test` next to the binary.
pub fn fake_executor_bin() -> PathBuf {
    let bin = orchestrator_bin();
    let path = bin.parent().expect("target dir").join("examples").join("fake_executor");
    assert!(path.exists(), "{} is missing: run `cargo build -p orchestrator --examples`", path.display());
    path
}

/// A loopback port that was free a moment ago (for a `--public-url` naming it).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// A running daemon process.
pub struct Daemon {
    /// The process.
    pub child: Child,
    /// Its MCP endpoint.
    pub url: String,
    /// What it printed on stdout before the endpoint line, and that line.
    pub stdout: Vec<String>,
    /// Its data directory.
    pub dir: PathBuf,
    /// Where its stderr goes.
    pub log: PathBuf,
}

impl Daemon {
    /// `orchestrator serve --data-dir DIR --listen 127.0.0.1:0 ARGS...`.
    pub fn serve(dir: &Path, args: &[&str]) -> Daemon {
        Daemon::spawn(&orchestrator_bin(), &["serve"], dir, args)
    }

    /// `orchestrator serve --mcp-token TOKEN` on a free port.
    pub fn serve_with_token(dir: &Path) -> Daemon {
        Daemon::serve(dir, &["--mcp-token", TOKEN])
    }

    /// The fake-executor daemon.
    pub fn fake_executor(dir: &Path, turn_ms: u64) -> Daemon {
        let turn = turn_ms.to_string();
        Daemon::spawn(&fake_executor_bin(), &[], dir, &["--mcp-token", TOKEN, "--turn-ms", &turn])
    }

    fn spawn(bin: &Path, sub: &[&str], dir: &Path, args: &[&str]) -> Daemon {
        Daemon::spawn_on(bin, sub, dir, "127.0.0.1:0", args)
    }

    /// `orchestrator serve --data-dir DIR --listen LISTEN ARGS...` (a fixed port, for a
    /// `--public-url` that names it).
    pub fn serve_on(dir: &Path, listen: &str, args: &[&str]) -> Daemon {
        Daemon::spawn_on(&orchestrator_bin(), &["serve"], dir, listen, args)
    }

    fn spawn_on(bin: &Path, sub: &[&str], dir: &Path, listen: &str, args: &[&str]) -> Daemon {
        let log = dir.with_extension(format!("log-{}", std::process::id()));
        let stderr = std::fs::File::create(&log).expect("log file");
        let mut child = Command::new(bin)
            .args(sub)
            .args(["--data-dir", dir.to_str().expect("utf-8 path"), "--listen", listen])
            .args(args)
            .env_remove("ORCHESTRATOR_MCP_TOKEN")
            .env_remove("ORCHESTRATOR_DATA_DIR")
            // The store is the one the test names (`--store`), never the environment's.
            .env_remove("ORCHESTRATOR_STORE")
            // No configuration file of the person running the tests (`docs/operator.md` "First run").
            .env_remove("ORCHESTRATOR_CONFIG")
            .env("XDG_CONFIG_HOME", dir.with_extension("no-config"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start the daemon");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let url = line.strip_prefix("orchestrator: MCP endpoint ").map(String::from);
                    lines.push(line);
                    if let Some(url) = url {
                        // Keep draining stdout so the daemon never blocks on a full pipe.
                        std::thread::spawn(move || while rx.recv().is_ok() {});
                        return Daemon { child, url, stdout: lines, dir: dir.to_path_buf(), log };
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let log = std::fs::read_to_string(&log).unwrap_or_default();
                    panic!("the daemon did not announce its endpoint; stdout: {lines:?}\nstderr:\n{log}");
                }
            }
        }
    }

    /// `orchestrator serve ARGS` expected to wait as a standby: answers once it recorded its
    /// URL in `DIR/mcp-url` (a standby prints its endpoint line only once it leads).
    pub fn serve_standby(dir: &Path, args: &[&str]) -> Daemon {
        Daemon::serve_standby_on(dir, "127.0.0.1:0", args)
    }

    /// The same on `listen` (a fixed port, when its URL file names a `--public-url`).
    pub fn serve_standby_on(dir: &Path, listen: &str, args: &[&str]) -> Daemon {
        let log = dir.with_extension(format!("log-{}", std::process::id()));
        let stderr = std::fs::File::create(&log).expect("log file");
        let mut child = Command::new(orchestrator_bin())
            .args(["serve", "--data-dir", dir.to_str().expect("utf-8 path"), "--listen", listen])
            .args(args)
            .env_remove("ORCHESTRATOR_MCP_TOKEN")
            .env_remove("ORCHESTRATOR_DATA_DIR")
            .env_remove("ORCHESTRATOR_STORE")
            .env_remove("ORCHESTRATOR_CONFIG")
            .env("XDG_CONFIG_HOME", dir.with_extension("no-config"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start the daemon");
        let stdout = child.stdout.take().expect("stdout");
        // Keep draining stdout so the daemon never blocks on a full pipe.
        std::thread::spawn(move || for _ in BufReader::new(stdout).lines() {});
        let deadline = Instant::now() + Duration::from_secs(30);
        let url_file = dir.join("mcp-url");
        let url = loop {
            if let Ok(text) = std::fs::read_to_string(&url_file)
                && text.ends_with('\n')
            {
                break text.trim().to_string();
            }
            if Instant::now() > deadline || child.try_wait().ok().flatten().is_some() {
                let _ = child.kill();
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                panic!("the standby did not record its URL within 30 s; stderr:\n{log}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Daemon { child, url, stdout: Vec::new(), dir: dir.to_path_buf(), log }
    }

    /// SIGKILL, no chance to flush anything.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then wait (at most 20 s) for the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the daemon did not stop within 20 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The daemon's stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}
