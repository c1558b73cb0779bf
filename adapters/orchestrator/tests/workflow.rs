//! Spec 001 C15.4, the synthetic MCP workflow, against a daemon process whose executor is
//! simulated in-process (`examples/fake_executor.rs`; the executor bridge does not exist
//! yet): run_create, worker_spawn, worker_attach, initial attempt, idle, auto resume,
//! progress, idle, auto resume, worker_complete, idle, and no further resume.

mod support;

use console::client::McpClient;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Daemon, TOKEN};

/// Follows one worker's events with `events_wait`, keeping everything seen.
struct Follower {
    worker: String,
    cursor: u64,
    seen: Vec<Value>,
    /// Fetched but not yet looked at by `until`.
    queue: std::collections::VecDeque<Value>,
}

impl Follower {
    /// Waits (at most 20 s) for an event matching `pred`; returns it.
    async fn until(&mut self, c: &mut McpClient, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            while let Some(e) = self.queue.pop_front() {
                self.seen.push(e.clone());
                if pred(&e) {
                    return e;
                }
            }
            let page = c
                .call_ok("events_wait", json!({ "cursor": self.cursor, "workerId": self.worker, "timeoutMs": 2_000 }))
                .await
                .expect("events_wait");
            self.cursor = page["nextCursor"].as_u64().expect("cursor");
            self.queue.extend(page["events"].as_array().expect("events").iter().cloned());
            assert!(Instant::now() < deadline, "timed out waiting for {what}; seen: {}", names(&self.seen));
        }
    }
}

fn names(events: &[Value]) -> String {
    events.iter().map(|e| e["name"].as_str().unwrap_or("?").to_string()).collect::<Vec<_>>().join(" ")
}

fn scheduled(reason: &'static str, sequence: u64) -> impl Fn(&Value) -> bool {
    move |e| e["name"] == "execution.scheduled" && e["data"]["reason"] == reason && e["data"]["sequence"] == sequence
}

fn named(name: &'static str) -> impl Fn(&Value) -> bool {
    move |e| e["name"] == name
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synthetic_workflow_resumes_until_complete_and_then_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut d = Daemon::fake_executor(&dir.path().join("data"), 400);
    let mut c = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect");

    let run = c
        .call_ok(
            "run_create",
            json!({ "taskName": "Synthetic", "rootConversationName": "Synthetic root",
                    "defaultPolicy": { "mode": "auto", "idleGraceMs": 0 } }),
        )
        .await
        .expect("run_create");
    let run_id = run["runId"].as_str().unwrap().to_string();
    let lane = c
        .call_ok(
            "worker_spawn",
            json!({ "runId": run_id, "name": "/root/lane", "taskSummary": "Multi-turn job",
                    "assignment": { "objective": "Needs several turns" }, "start": false }),
        )
        .await
        .expect("worker_spawn");
    let worker = lane["workerId"].as_str().unwrap().to_string();
    assert_eq!(lane["policy"]["mode"], "auto");
    assert_eq!(lane["policySource"], "run_default");
    assert!(lane["currentAttempt"].is_null(), "start=false: nothing runs before attach");

    let mut f = Follower { worker: worker.clone(), cursor: 0, seen: Vec::new(), queue: Default::default() };
    c.call_ok("worker_attach", json!({ "workerId": worker, "conversationUrl": "https://chatgpt.example/c/lane" }))
        .await
        .expect("worker_attach");
    f.until(&mut c, "the initial attempt", scheduled("initial", 1)).await;
    f.until(&mut c, "submission", named("execution.submitted")).await;
    f.until(&mut c, "idle after the first turn", named("execution.idle")).await;
    f.until(&mut c, "the first auto resume", scheduled("auto_resume", 2)).await;
    f.until(&mut c, "generating", named("execution.generating")).await;
    c.call_ok("worker_progress", json!({ "workerId": worker, "summary": "half done", "commit": "abc123" }))
        .await
        .expect("worker_progress");
    f.until(&mut c, "idle after the second turn", named("execution.idle")).await;
    f.until(&mut c, "the second auto resume", scheduled("auto_resume", 3)).await;
    f.until(&mut c, "generating", named("execution.generating")).await;
    let done =
        c.call_ok("worker_complete", json!({ "workerId": worker, "summary": "all done" })).await.expect("complete");
    assert_eq!(done["disposition"], "completed");
    f.until(&mut c, "completion", named("worker.completed")).await;

    // The executor reports the last turn idle; nothing may follow it.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let after = c
        .call_ok("events_wait", json!({ "cursor": f.cursor, "workerId": worker, "timeoutMs": 500 }))
        .await
        .expect("events");
    let later: Vec<Value> = f.queue.iter().chain(after["events"].as_array().unwrap()).cloned().collect();
    assert!(
        !later.iter().any(|e| e["name"] == "execution.scheduled" || e["name"] == "execution.resume_scheduled"),
        "no resume after worker_complete: {}",
        names(&later)
    );
    let attempts = c.call_ok("worker_attempts", json!({ "workerId": worker })).await.expect("attempts");
    let reasons: Vec<&str> =
        attempts["attempts"].as_array().unwrap().iter().map(|a| a["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["initial", "auto_resume", "auto_resume"], "exactly three attempts");
    let w = c.call_ok("worker_get", json!({ "workerId": worker })).await.expect("worker_get");
    assert_eq!(w["disposition"], "completed");
    assert_eq!(w["autoResumes"], 2);
    assert!(w["pendingContinuation"].is_null());
    assert!(d.terminate().success(), "SIGTERM exits 0");
}
