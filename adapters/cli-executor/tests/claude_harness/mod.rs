//! Test harness for Claude workers: the executor's settings for the stand-in
//! (`standin/claude_sim.py`, behind a small `claude` wrapper script, since the executor
//! passes only claude's own arguments) or for the real `claude` named by `CLAUDE_BIN`
//! (offline, against the loopback mock Messages API `mock/mock_messages.py`), and what the
//! session recorded: the prompts it took in, read from its transcript under its own
//! `CLAUDE_CONFIG_DIR` (the same file for the stand-in and the real CLI).
//!
//! `CLAUDE_BIN` unset: a test that needs the real binary prints one line saying it is
//! skipped, unless `ORCH_REAL_CLIS=required` (test.sh), where it fails.

#![allow(dead_code)] // Each test file uses part of the harness.

use crate::harness::{Dirs, WAIT_MS_MAX, python};
use cli_executor::base::settings::Settings;
use cli_executor::base::settings::{ClaudeSandbox, ClaudeSettings};
use engine::ids::WorkerId;
use executor_protocol::ExecutorKindWire;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which `claude` a test drives.
#[derive(Debug, Clone)]
pub enum Claude {
    /// The stand-in, with these flags of its own.
    Sim(Vec<String>),
    /// The real binary, offline against the mock Messages API on `port`.
    Real {
        /// `CLAUDE_BIN`.
        path: PathBuf,
        /// The mock's port (0 until a mock runs).
        port: u16,
    },
}

/// The stand-in script.
pub fn sim_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/standin/claude_sim.py")
}

/// The real binary, when `CLAUDE_BIN` names it. Without it: a panic under
/// `ORCH_REAL_CLIS=required`, else one line saying why the real binary is skipped.
pub fn real_claude(test: &str) -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_BIN") {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var("ORCH_REAL_CLIS").as_deref() == Ok("required") => {
            panic!("{test}: ORCH_REAL_CLIS=required but CLAUDE_BIN is not set (run tests/cli-agents/setup.sh)")
        }
        None => {
            eprintln!("{test}: the real claude is skipped: CLAUDE_BIN is not set");
            None
        }
    }
}

/// The binaries a test runs against: always the stand-in (with `sim_flags`), and the real
/// `claude` too when `CLAUDE_BIN` names it ([`real_claude`]).
pub fn claudes(test: &str, sim_flags: &[&str]) -> Vec<Claude> {
    let sim = Claude::Sim(sim_flags.iter().map(|s| s.to_string()).collect());
    match real_claude(test) {
        Some(path) => vec![sim, Claude::Real { path, port: 0 }],
        None => vec![sim],
    }
}

/// 2.1.332's settings schema entries for the keys the executor switches off, as comment
/// lines of a stand-in's script: the check at start reads them from the file it runs
/// (`claude::cli::check_settings`), as it reads them from the real binary.
pub fn schema_comment() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-2.1.332/settings-schema.txt");
    let schema = std::fs::read_to_string(path).expect("the recorded schema entries");
    schema.lines().map(|line| format!("# {line}\n")).collect()
}

/// A `claude` script in `dir` that runs the stand-in (the executor clears the child's
/// environment, so the interpreter is named by its full path), its schema in comments.
pub fn wrapper(dir: &Path) -> PathBuf {
    let path = dir.join("claude");
    let (python, sim, schema) = (python(), sim_script(), schema_comment());
    let script = format!("#!/bin/sh\n{schema}exec {} {} \"$@\"\n", python.display(), sim.display());
    std::fs::write(&path, script).expect("the wrapper");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("executable");
    path
}

/// The executor's settings for Claude workers only, driving `claude`.
pub fn settings(dirs: &Dirs, claude: &Claude) -> Settings {
    let (program, args, env_set) = match claude {
        Claude::Sim(flags) => (wrapper(dirs.root.path()), flags.clone(), Vec::new()),
        Claude::Real { path, port } => (path.clone(), Vec::new(), mock_env(*port)),
    };
    Settings {
        program: PathBuf::from("codex"),
        args: Vec::new(),
        env_set: Vec::new(),
        state_dir: dirs.state.clone(),
        workspace: Some(dirs.work.display().to_string()),
        mcp: None,
        claude: Some(ClaudeSettings { program, args, env_set, sandbox: ClaudeSandbox::Required }),
        kinds: vec![ExecutorKindWire::Claude],
        codex_auth: None,
        approvals: Default::default(),
    }
}

/// What the real binary needs to talk to the mock Messages API offline.
pub fn mock_env(port: u16) -> Vec<(String, String)> {
    [
        ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}")),
        ("ANTHROPIC_API_KEY", "x".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The mock Messages API, killed when dropped.
pub struct MockApi {
    /// Its port.
    pub port: u16,
    /// The script file (`--script`), when it runs one.
    pub script: Option<PathBuf>,
    /// Its request log (`--log`).
    pub log: PathBuf,
    child: std::process::Child,
}

impl MockApi {
    /// Starts `mock/mock_messages.py` on a free port; with `script`, its prompts' answers
    /// come from that file (written by [`MockApi::script`]).
    pub fn start(dir: &Path, scripted: bool) -> MockApi {
        MockApi::spawn(dir, scripted, None)
    }

    /// [`MockApi::start`] scripted, its `slow` answers held until `release` holds their
    /// number (`--release`: the k-th ends once the file says k or more).
    pub fn start_released(dir: &Path, release: &Path) -> MockApi {
        MockApi::spawn(dir, true, Some(release))
    }

    fn spawn(dir: &Path, scripted: bool, release: Option<&Path>) -> MockApi {
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
        let mock = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mock/mock_messages.py");
        let log = dir.join(format!("mock-{port}.log"));
        let script = scripted.then(|| dir.join(format!("mock-{port}.script.json")));
        let mut command = std::process::Command::new(python());
        command.arg(mock).arg(port.to_string()).arg("--log").arg(&log).stderr(std::process::Stdio::null());
        if let Some(script) = &script {
            std::fs::write(script, "{}").expect("an empty script");
            command.arg("--script").arg(script);
        }
        if let Some(release) = release {
            command.arg("--release").arg(release);
        }
        let child = command.spawn().expect("the mock starts");
        let deadline = Instant::now() + Duration::from_millis(WAIT_MS_MAX);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the mock did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        MockApi { port, script, log, child }
    }

    /// Writes the script: the worker whose tools it calls, and one action per prompt.
    pub fn script(&self, worker: WorkerId, turns: &[&str]) {
        let path = self.script.as_ref().expect("a scripted mock");
        let text = serde_json::json!({"workerId": worker.to_string(), "turns": turns}).to_string();
        std::fs::write(path, text).expect("the script");
    }

    /// Writes the script with actions of any form (`{"tool": NAME, "input": {...}}` too).
    pub fn script_actions(&self, worker: WorkerId, turns: &[Value]) {
        let path = self.script.as_ref().expect("a scripted mock");
        let text = serde_json::json!({"workerId": worker.to_string(), "turns": turns}).to_string();
        std::fs::write(path, text).expect("the script");
    }

    /// The actions the mock answered, in order (`after_tool` for a tool result's answer).
    pub fn actions(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|v| v["action"].as_str().unwrap_or("keyword").to_string())
            .collect()
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The session's config home (`CLAUDE_CONFIG_DIR`) of `worker`.
pub fn config_home(dirs: &Dirs, worker: WorkerId) -> PathBuf {
    dirs.state.join("sessions").join(worker.to_string()).join("claude-config")
}

/// The uuids of the prompts `worker`'s sessions took in, in order: the `user` entries and
/// absorbed lines of every transcript under its config home (each session's own record).
pub fn taken_in(dirs: &Dirs, worker: WorkerId) -> Vec<String> {
    landed(dirs, worker).into_iter().map(|(uuid, _)| uuid).collect()
}

/// Each prompt [`taken_in`] with where it landed: `true` when it was absorbed into a
/// running turn (a `queued_command` attachment), `false` when it ran as its own turn.
pub fn landed(dirs: &Dirs, worker: WorkerId) -> Vec<(String, bool)> {
    let projects = config_home(dirs, worker).join("projects");
    let mut uuids = Vec::new();
    let Ok(cwds) = std::fs::read_dir(projects) else { return uuids };
    let mut files: Vec<PathBuf> = cwds
        .filter_map(Result::ok)
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().filter_map(Result::ok).map(|f| f.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for entry in text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
            let prompt = entry["type"] == "user" && entry.get("promptSource").is_some();
            let absorbed = entry["type"] == "attachment" && entry["attachment"]["type"] == "queued_command";
            if prompt {
                uuids.push((entry["uuid"].as_str().unwrap_or_default().to_string(), false));
            } else if absorbed {
                uuids.push((entry["attachment"]["source_uuid"].as_str().unwrap_or_default().to_string(), true));
            }
        }
    }
    uuids
}

/// The nonce of the prompt with idempotency key `key` (what [`taken_in`] lists).
pub fn nonce(key: &str) -> String {
    cli_executor::claude::nonce::nonce_uuid(key)
}

/// The worker of the executor-level tests.
pub const WORKER: WorkerId = WorkerId(7);

/// A daemon command frame of `kind` for attempt `n` of [`WORKER`], a Claude worker.
pub fn frame(n: u64, kind: executor_protocol::KindWire, conversation: &str, prompt: &str) -> String {
    use executor_protocol::KindWire;
    let key = match kind {
        KindWire::Create => "conversation.create",
        KindWire::Steer => "conversation.steer",
        KindWire::Inspect => "conversation.inspect",
        KindWire::Close => "conversation.close",
        _ => "conversation.send",
    };
    let command = executor_protocol::CommandWire {
        command_id: engine::ids::CommandId { attempt: engine::ids::AttemptId(n) },
        kind,
        idempotency_key: format!("{key}:exe-{n}"),
        worker_id: WORKER,
        attempt_id: engine::ids::AttemptId(n),
        conversation_url: conversation.to_string(),
        prompt: prompt.to_string(),
        prompt_version: "test/v1".to_string(),
        deadline: u64::MAX / 2,
        executor_kind: Some(ExecutorKindWire::Claude),
        workspace: None,
        approval: None,
    };
    executor_protocol::encode(&executor_protocol::DaemonMessage::Command(command))
}

/// The state report.
pub fn state_of(out: cli_executor::base::worker::Out) -> executor_protocol::StateWire {
    match out {
        cli_executor::base::worker::Out::State(s) => s,
        other => panic!("not a state: {other:?}"),
    }
}

/// The executor's options against the daemon at `daemon_url`, running Claude workers only,
/// each child configured with the daemon's MCP server (and the probe run before it starts).
pub fn options(daemon_url: &str, dirs: &Dirs, claude: &Claude) -> cli_executor::connection::Options {
    let mut settings = settings(dirs, claude);
    let url = cli_executor::base::mcp::url_from_daemon(daemon_url).expect("an mcp url");
    settings.mcp = Some(cli_executor::base::mcp::McpServer { url, token: crate::harness::MCP_TOKEN.to_string() });
    cli_executor::connection::Options {
        urls: vec![daemon_url.to_string()],
        token_file: dirs.token.clone(),
        executor_id: "claude-test".to_string(),
        settings,
        kinds: Some(vec![ExecutorKindWire::Claude]),
        daemon_ca: None,
        turns_max: cli_executor::base::limits::TURNS_MAX_DEFAULT,
        accounts: Vec::new(),
        mcp_relay: false,
    }
}

/// How many lines the stand-in's sessions of `worker` read (taken in or not).
pub fn sim_lines(dirs: &Dirs, worker: WorkerId) -> u64 {
    let text = std::fs::read_to_string(config_home(dirs, worker).join("standin-state.json")).unwrap_or_default();
    serde_json::from_str::<Value>(&text).ok().and_then(|v| v["lines"].as_u64()).unwrap_or(0)
}
