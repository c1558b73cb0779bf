//! The loopback mock model (`adapters/cli-executor/tests/mock/mock_responses.py`) as a
//! process the daemon's tests start: its plan (rewritten to let a held turn go), its request
//! log, and the `-c` settings that point the real Codex at it.

use super::night::{WAIT_MAX, until};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The mock model process; killed when dropped.
pub struct MockModel {
    /// The process.
    child: Child,
    /// The port it serves on 127.0.0.1.
    pub port: u16,
    /// Its plan (JSON), read by the mock at every request.
    plan_file: PathBuf,
    /// Its request log (JSON Lines).
    requests_file: PathBuf,
}

impl MockModel {
    /// Starts the mock with `plan`, its files in `dir`; answers once it listens.
    pub fn start(dir: &Path, plan: &serde_json::Value) -> MockModel {
        let plan_file = dir.join("plan.json");
        let requests_file = dir.join("requests.jsonl");
        std::fs::write(&plan_file, plan.to_string()).expect("plan");
        let port = super::free_port();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli-executor/tests/mock/mock_responses.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg("--plan")
            .arg(&plan_file)
            .arg("--requests")
            .arg(&requests_file)
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs the mock model");
        let model = MockModel { child, port, plan_file, requests_file };
        until("the mock model listens", WAIT_MAX, || {
            std::net::TcpStream::connect(("127.0.0.1", port)).map(drop).map_err(|e| e.to_string())
        });
        model
    }

    /// Lets a turn held by a `wait` action go: adds `attempt` to the plan's `release` list
    /// (written whole, then renamed over the plan, so the mock never reads half of it).
    pub fn release(&self, attempt: u32) {
        let text = std::fs::read_to_string(&self.plan_file).expect("plan");
        let mut plan: serde_json::Value = serde_json::from_str(&text).expect("plan JSON");
        let list = plan.as_object_mut().expect("a plan object").entry("release").or_insert(serde_json::json!([]));
        list.as_array_mut().expect("release list").push(attempt.into());
        let next = self.plan_file.with_extension("next");
        std::fs::write(&next, plan.to_string()).expect("plan");
        std::fs::rename(&next, &self.plan_file).expect("plan");
    }

    /// Every model request's body, in order (Codex's retries included).
    pub fn requests(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(&self.requests_file).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The `executor-cli` arguments that point the real Codex at this mock: a provider
    /// without a key, Codex's own retries of a broken model stream (at most 6), and none
    /// inside one request.
    pub fn codex_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for c in [
            "model_provider=mock".to_string(),
            "model=mock-model".to_string(),
            "model_providers.mock.name=\"mock\"".to_string(),
            format!("model_providers.mock.base_url=\"http://127.0.0.1:{}/v1\"", self.port),
            "model_providers.mock.wire_api=\"responses\"".to_string(),
            "model_providers.mock.request_max_retries=0".to_string(),
            "model_providers.mock.stream_max_retries=6".to_string(),
        ] {
            args.push("--codex-arg=-c".to_string());
            args.push(format!("--codex-arg={c}"));
        }
        args
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The prompt of the turn a model request belongs to (its last user message).
pub fn turn_prompt(request: &serde_json::Value) -> String {
    let input = request["input"].as_array().cloned().unwrap_or_default();
    let last = input.iter().rev().find(|i| i["role"] == "user").cloned().unwrap_or_default();
    last["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect()
}
