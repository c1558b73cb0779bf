//! The command line's controls against a real daemon, as a person at a terminal uses them:
//! `run list|show|pause|resume|stop`, `worker answer` (the question and its choices) and
//! `worker release`, and every refusal said in one line, with status 1, naming the command
//! and the dashboard control to use, never an MCP tool (`run_cancel`, `overrideWait`...).

mod support;

use console::client::McpClient;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output};
use support::{Daemon, orchestrator_bin};

fn orchestrator(dir: &Path, args: &[&str]) -> Output {
    Command::new(orchestrator_bin())
        .args(args)
        .args(["--data-dir", dir.to_str().expect("utf-8 path")])
        .env_remove("ORCHESTRATOR_MCP_TOKEN")
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .output()
        .expect("run orchestrator")
}

/// A command that worked: its stdout.
fn said(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A refused command: its one stderr line, checked to name no MCP tool.
fn refused(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("orchestrator: "), "{stderr}");
    assert!(!caller_protocol::refusal::names_a_tool(&stderr), "a person cannot call an MCP tool: {stderr}");
    assert!(!stderr.contains('{'), "no raw JSON: {stderr}");
    stderr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_controlled_and_refused_in_a_person_s_words() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let daemon = Daemon::serve(&dir, &[]);
    let token = std::fs::read_to_string(dir.join("mcp-token")).expect("token");
    let mut c = McpClient::connect(&daemon.url, Some(token.trim())).await.expect("connect");
    let run = c
        .call_ok("run_create", json!({ "taskName": "Night run", "rootConversationName": "Night root" }))
        .await
        .expect("run");
    let (run_id, root) =
        (run["runId"].as_str().unwrap().to_string(), run["rootWorkerId"].as_str().unwrap().to_string());
    let mut lanes = Vec::new();
    for name in ["/root/waiter", "/root/asker"] {
        let spawn = json!({ "runId": run_id, "name": name, "taskSummary": name, "assignment": { "objective": "o" }, "start": false });
        lanes.push(c.call_ok("worker_spawn", spawn).await.expect("spawn")["workerId"].as_str().unwrap().to_string());
    }
    let (waiter, asker) = (lanes[0].clone(), lanes[1].clone());
    let dependency = json!({ "workerId": waiter, "dependency": { "workerId": asker }, "reason": "needs the dialect" });
    c.call_ok("worker_await_dependency", dependency).await.expect("wait for the asker");
    let ask = json!({ "workerId": asker, "reason": "owner's call", "question": "Which dialect?", "choices": ["excel", "rfc4180"] });
    c.call_ok("worker_await_human", ask).await.expect("ask");

    let dir2 = dir.clone();
    let run2 = run_id.clone();
    let (root2, waiter2, asker2) = (root.clone(), waiter.clone(), asker.clone());
    tokio::task::spawn_blocking(move || {
        let (dir, run_id, root, waiter, asker) = (dir2, run2, root2, waiter2, asker2);
        // The run, in one line, and with its workers.
        let list = said(&orchestrator(&dir, &["run", "list"]));
        assert!(list.contains(&format!("{run_id} active")) && list.contains("3 workers, 3 unfinished"), "{list}");
        let show = said(&orchestrator(&dir, &["run", "show", &run_id]));
        assert!(show.contains("needs you: Which dialect? (choices: excel | rfc4180)"), "{show}");

        // The root is not stopped alone: the refusal names the run's command and the button.
        let root_stop = refused(&orchestrator(&dir, &["worker", "stop", &root, "enough"]));
        assert!(root_stop.contains(&format!("`orchestrator run stop {run_id}`")), "{root_stop}");
        assert!(root_stop.contains("Stop run on the dashboard") && root_stop.contains("(ROOT_LIFECYCLE)"), "{root_stop}");
        // A worker waiting for another, or for an answer, says how to end the wait.
        let waiting = refused(&orchestrator(&dir, &["worker", "continue", &waiter]));
        assert!(waiting.contains(&format!("`orchestrator worker release {waiter}`")), "{waiting}");
        assert!(waiting.contains("Release on the dashboard"), "{waiting}");
        let asking = refused(&orchestrator(&dir, &["worker", "continue", &asker]));
        assert!(asking.contains(&format!("`orchestrator worker answer {asker}")), "{asking}");
        let nothing = refused(&orchestrator(&dir, &["worker", "release", &asker]));
        assert!(nothing.contains("nothing to release"), "{nothing}");
        let unknown = refused(&orchestrator(&dir, &["worker", "pause", "wrk-99"]));
        assert!(unknown.contains("no worker wrk-99") && unknown.contains("orchestrator status"), "{unknown}");

        // The question and its choices, then the answer.
        let question = said(&orchestrator(&dir, &["worker", "answer", &asker]));
        assert_eq!(
            question,
            format!(
                "{asker} asks: Which dialect?\n  choices: excel | rfc4180\nAnswer with: orchestrator worker answer {asker} \"excel\"\n"
            )
        );
        let answered = said(&orchestrator(&dir, &["worker", "answer", &asker, "rfc4180"]));
        assert!(answered.contains("has your answer"), "{answered}");

        // Release ends the dependency wait.
        let released = said(&orchestrator(&dir, &["worker", "release", &waiter, "the", "dialect", "is", "chosen"]));
        assert!(released.contains("no longer waits"), "{released}");

        // Pause all, resume all, stop: the dashboard's run controls by the same names.
        let paused = said(&orchestrator(&dir, &["run", "pause", &run_id]));
        assert!(paused.contains(&format!("orchestrator run resume {run_id}")), "{paused}");
        said(&orchestrator(&dir, &["run", "resume", &run_id]));
        let stopped = said(&orchestrator(&dir, &["run", "stop", &run_id]));
        assert!(stopped.contains("every unfinished worker is cancelled"), "{stopped}");
        let again = refused(&orchestrator(&dir, &["run", "stop", &run_id]));
        assert!(again.contains("(RUN_TERMINAL)"), "{again}");
        let missing = refused(&orchestrator(&dir, &["run", "show", "run-77"]));
        assert!(missing.contains("no run run-77") && missing.contains("orchestrator run list"), "{missing}");
    })
    .await
    .expect("the commands");

    let waiter_now = c.call_ok("worker_get", json!({ "workerId": waiter })).await.expect("get");
    assert_eq!(waiter_now["dependencyWait"], json!(null), "released: {waiter_now}");
    let asker_now = c.call_ok("worker_get", json!({ "workerId": asker })).await.expect("get");
    assert_eq!(asker_now["humanAnswer"], "rfc4180");
    let run_now = c.call_ok("run_get", json!({ "runId": run_id })).await.expect("run");
    assert_eq!(run_now["status"], "cancelled");
    assert_eq!(run_now["unfinished"], 0, "{run_now}");
}
