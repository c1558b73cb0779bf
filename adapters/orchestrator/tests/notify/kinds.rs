//! How `tests/notify.rs` makes the real daemon meet each situation a person is notified
//! of, through its real inputs: MCP tool calls (`run_create`, `worker_spawn`,
//! `worker_await_human`, `worker_complete`, `run_cancel`, `worker_pause`) and a test
//! executor on `/executor` that takes a lane's command and reports what its page shows
//! (an approval card, a usage limit with its reset time, a log-in check, a turn that
//! ends without progress, a turn that never moves), plus a lane of a kind no executor
//! runs. The daemon runs with the hidden test timers `--executor-absent-ms` and
//! `--dead-man-after-ms`.

use console::client::McpClient;
use executor_protocol::{CommandWire, DaemonMessage, ErrorKindWire, ExecutorMessage, StateName, StateWire};
use serde_json::{Value, json};
use std::time::Duration;
use test_executor::{TestExecutor, hello};

/// How long the test executor waits for a command, ms.
const COMMAND_WAIT_MS: u64 = 30_000;

/// An auto-mode policy for a run's lanes, with `extra` fields.
pub fn auto(extra: Value) -> Value {
    let mut policy = json!({ "mode": "auto" });
    policy.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
    policy
}

/// `run_create` with a default policy: the run id.
pub async fn run_with(c: &mut McpClient, name: &str, policy: Value) -> String {
    let args = json!({ "taskName": name, "rootConversationName": "Root", "context": "plan", "defaultPolicy": policy });
    let run = c.call_ok("run_create", args).await.expect("run_create");
    run["runId"].as_str().expect("runId").to_string()
}

/// `worker_spawn` of a lane `/root/NAME` (`extra`: executor, workspace): its worker id.
pub async fn lane(c: &mut McpClient, run: &str, name: &str, extra: Value) -> String {
    let mut args = json!({ "runId": run, "name": format!("/root/{name}"), "taskSummary": name,
        "assignment": { "objective": "o" } });
    args.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
    let spawned = c.call_ok("worker_spawn", args).await.expect("worker_spawn");
    spawned["workerId"].as_str().expect("workerId").to_string()
}

/// A test executor (of the ChatGPT kind, as the browser extension), said hello as `id`.
pub async fn executor(mcp_url: &str, token: &str, id: &str) -> TestExecutor {
    let url = mcp_url.replace("http://", "ws://").replace("/mcp", "/executor");
    TestExecutor::hello(&url, hello(token, id)).await.expect("hello").0
}

/// The next command for `worker`; commands for other workers are left unanswered.
pub async fn command_for(x: &mut TestExecutor, worker: &str) -> CommandWire {
    loop {
        match x.recv_within(Duration::from_millis(COMMAND_WAIT_MS)).await {
            Ok(DaemonMessage::Command(c)) if c.worker_id.to_string() == worker => return c,
            Ok(_) => continue,
            Err(e) => panic!("no command for {worker}: {e}"),
        }
    }
}

/// What a lane's page shows, at `seq`.
pub async fn page(x: &mut TestExecutor, command: &CommandWire, seq: u64, shows: Shows) {
    let (state, error_kind, until_ms, detail) = match shows {
        Shows::Approval(app) => (StateName::AwaitingApproval, None, None, Some(app)),
        Shows::Error(kind, until_ms, detail) => (StateName::Error, Some(kind), until_ms, Some(detail)),
        Shows::Idle => (StateName::Idle, None, None, None),
    };
    let state = StateWire {
        worker_id: command.worker_id,
        state,
        error_kind,
        seq,
        block: None,
        until_ms,
        detail: detail.map(String::from),
        approval: None,
        retry: None,
    };
    x.send(&ExecutorMessage::State(state)).await.expect("state");
}

/// A page's state for [`page`].
pub enum Shows {
    /// A tool-approval card for this app.
    Approval(&'static str),
    /// An error card of this kind, with the page's reset time and words.
    Error(ErrorKindWire, Option<u64>, &'static str),
    /// The turn ended (no end-of-response block: no progress).
    Idle,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
