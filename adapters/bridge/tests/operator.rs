//! The operator channel against the real daemon over loopback: actions performed as the
//! MCP tools' engine operations, queries answered with the MCP tools' data and shapes
//! (checked against the daemon's own MCP endpoint), and summaries with each worker's
//! recent continuity events.

use console::client::McpClient;
use engine::ids::WorkerId;
use engine::op::Operation;
use engine::policy::{Mode, PolicyPatch};
use engine::{Rejection, Reply};
use executor_protocol::{
    DaemonMessage, ExecutorMessage, OperatorData, OperatorDataWire, OperatorQueryName, OperatorQueryWire,
    OperatorSummaryWire, StateName, WorkerSummary,
};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use test_executor::{TestExecutor, hello};
use testkit::{Daemon, EXECUTOR_TOKEN, MCP_TOKEN, attached_root, binding_at};

mod testkit;

const CONVERSATION: &str = "https://chatgpt.com/c/operator-test";
const GRACE_MS: u64 = 300;

/// A run in auto mode with a short idle grace; its root attached to [`CONVERSATION`].
async fn auto_root(d: &Daemon) -> WorkerId {
    let patch = PolicyPatch { mode: Some(Mode::Auto), idle_grace_ms: Some(GRACE_MS), ..PolicyPatch::default() };
    attached_root(&d.handle, "operator test", patch, CONVERSATION).await
}

async fn call(d: &Daemon, op: Operation) -> Result<Reply, Rejection> {
    d.handle.call(op).await.expect("the engine runs")
}

/// Nothing arrives for `ms` (the connection stays open).
async fn quiet(x: &mut TestExecutor, ms: u64) {
    x.silent_for(Duration::from_millis(ms)).await.expect("silence");
}

/// The daemon's MCP endpoint: the same port as `/executor`.
async fn mcp(d: &Daemon) -> McpClient {
    let url = d.url.replace("ws://", "http://").replace("/executor", "/mcp");
    McpClient::connect(&url, Some(MCP_TOKEN)).await.expect("MCP connects")
}

/// Asks on `x` and checks the answer names the query.
async fn query(x: &mut TestExecutor, query: OperatorQueryWire) -> OperatorDataWire {
    let id = query.query_id.clone();
    let answer = x.query(query).await.expect("operator.data");
    assert_eq!(answer.query_id, id);
    answer
}

fn ask(id: &str, name: OperatorQueryName, worker: &str) -> OperatorQueryWire {
    OperatorQueryWire {
        query_id: id.into(),
        query: name,
        worker_id: Some(worker.into()),
        after_sequence: None,
        limit: None,
    }
}

/// A worker with two attempts: its assignment delivered, a progress report, the turn
/// idle, and the auto resume that follows delivered and generating. Ask on `x`: its
/// queries are answered after the states it sent before them.
async fn two_attempts(d: &Daemon, x: &mut TestExecutor) -> WorkerId {
    let root = auto_root(d).await;
    x.send(&ExecutorMessage::Binding(binding_at(root, CONVERSATION, StateName::Idle, 1))).await.expect("binding");
    let first = x.command_within(Duration::from_secs(10)).await.expect("the assignment");
    x.deliver(&first, 2).await.expect("delivered");
    let progress =
        Operation::WorkerProgress { worker: root, summary: "The parser handles quotes".into(), commit: None };
    call(d, progress).await.expect("worker_progress");
    x.state(root, StateName::Idle, 3).await.expect("idle");
    let resume = x.command_within(Duration::from_secs(10)).await.expect("the auto resume");
    x.deliver(&resume, 4).await.expect("delivered");
    root
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_attempts_is_the_mcp_tools_output_with_a_timeline() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = two_attempts(&d, &mut x).await;
    let answer = query(&mut x, ask("q-1", OperatorQueryName::WorkerAttempts, &root.to_string())).await;
    let Some(OperatorData::Attempts(attempts)) = answer.data.clone() else { panic!("attempts: {answer:?}") };
    let by_mcp = mcp(&d).await.call_ok("worker_attempts", json!({ "workerId": root.to_string() })).await.expect("MCP");
    assert_eq!(serde_json::to_value(&attempts).expect("json"), by_mcp, "the same data in the same shape");
    // What a timeline needs: start, end once ended, reason, state and outcome.
    let [done, running] = &attempts.attempts[..] else { panic!("two attempts: {attempts:?}") };
    assert_eq!((done.reason.as_str(), running.reason.as_str()), ("initial", "auto_resume"));
    let ended = done.ended_at_ms.expect("the first attempt ended when the resume took over");
    assert!(done.scheduled_at_ms <= done.idle_at_ms.expect("its turn went idle") && done.idle_at_ms <= Some(ended));
    assert_eq!((done.state.as_str(), done.outcome.as_deref()), ("completed", Some("turn_ended")));
    assert_eq!((running.state.as_str(), running.outcome.as_deref(), running.ended_at_ms), ("generating", None, None));
    assert_eq!(Some(ended), running.submitted_at_ms, "closed when the resume was submitted: {done:?} {running:?}");
    // Paging as the MCP tool pages.
    let mut page = ask("q-2", OperatorQueryName::WorkerAttempts, &root.to_string());
    page.after_sequence = Some(1);
    let answer = query(&mut x, page).await;
    let Some(OperatorData::Attempts(after)) = answer.data else { panic!("attempts: {answer:?}") };
    assert_eq!(after.attempts, vec![running.clone()]);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_events_are_the_continuity_events_as_events_wait_returns_them() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = two_attempts(&d, &mut x).await;
    let answer = query(&mut x, ask("q-1", OperatorQueryName::WorkerEvents, &root.to_string())).await;
    let Some(OperatorData::Events(events)) = answer.data else { panic!("events: {answer:?}") };
    let names: Vec<&str> = events.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["execution.scheduled", "worker.progress", "execution.scheduled"], "{events:?}");
    let progress = &events.events[1];
    assert_eq!(progress.data["summary"], "The parser handles quotes", "a progress mark says what was done");
    let all = json!({ "workerId": root.to_string(), "limit": 1000 });
    let by_mcp = mcp(&d).await.call_ok("events_wait", all).await.expect("MCP");
    let by_mcp: Vec<Value> = by_mcp["events"].as_array().expect("events").clone();
    assert!(by_mcp.len() > events.events.len(), "events_wait also has the per-turn events");
    for e in &events.events {
        let same = by_mcp.iter().find(|m| m["cursor"] == e.cursor).expect("every item is an events_wait item");
        assert_eq!(&serde_json::to_value(e).expect("json"), same);
    }
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_events_keeps_the_newest_fifty_oldest_first() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let patch = PolicyPatch::mode(Mode::Manual);
    let root = attached_root(&d.handle, "operator test", patch, CONVERSATION).await;
    for i in 1..=60 {
        let op = Operation::WorkerProgress { worker: root, summary: format!("step {i}"), commit: None };
        call(&d, op).await.expect("worker_progress");
    }
    let answer = query(&mut x, ask("q-1", OperatorQueryName::WorkerEvents, &root.to_string())).await;
    let Some(OperatorData::Events(events)) = answer.data else { panic!("events: {answer:?}") };
    let summaries: Vec<&str> = events.events.iter().map(|e| e.data["summary"].as_str().expect("a summary")).collect();
    let expected: Vec<String> = (11..=60).map(|i| format!("step {i}")).collect();
    assert_eq!(summaries, expected);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_are_refused_as_the_mcp_tools_refuse_them() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let mut m = mcp(&d).await;
    for worker in ["wrk-999", "worker-1", ""] {
        let by_mcp = m.call_tool("worker_attempts", json!({ "workerId": worker })).await.expect("MCP");
        assert!(by_mcp.is_error, "{worker}: {by_mcp:?}");
        for name in [OperatorQueryName::WorkerAttempts, OperatorQueryName::WorkerEvents] {
            let answer = query(&mut x, ask("q", name, worker)).await;
            assert!(!answer.ok && answer.data.is_none(), "{answer:?}");
            let error = serde_json::to_value(answer.error.expect("an error")).expect("json");
            assert_eq!(error, by_mcp.structured, "{worker} {name:?}");
        }
    }
    let mut no_worker = ask("q-5", OperatorQueryName::WorkerAttempts, "wrk-1");
    no_worker.worker_id = None;
    let answer = query(&mut x, no_worker).await;
    assert_eq!(answer.error.expect("an error").code, "INVALID_ARGUMENT");
    let mut paged = ask("q-6", OperatorQueryName::WorkerEvents, "wrk-1");
    paged.limit = Some(10);
    let answer = query(&mut x, paged).await;
    assert_eq!(answer.error.expect("an error").code, "INVALID_ARGUMENT");
    let mut too_many = ask("q-7", OperatorQueryName::WorkerAttempts, "wrk-1");
    too_many.limit = Some(5_000);
    let by_mcp = m.call_tool("worker_attempts", json!({ "workerId": "wrk-1", "limit": 5_000 })).await.expect("MCP");
    let answer = query(&mut x, too_many).await;
    assert_eq!(serde_json::to_value(answer.error.expect("an error")).expect("json"), by_mcp.structured);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_actions_are_engine_operations_with_typed_rejections() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = auto_root(&d).await;
    x.send(&ExecutorMessage::Binding(binding_at(root, CONVERSATION, StateName::Idle, 1))).await.expect("binding");
    let first = x.command_within(Duration::from_secs(10)).await.expect("the assignment");
    x.deliver(&first, 2).await.expect("delivered");
    let action = |id: &str, action, worker| {
        ExecutorMessage::OperatorAction(executor_protocol::OperatorActionWire {
            worker_id: worker,
            ..executor_protocol::OperatorActionWire::new(id, action)
        })
    };
    x.send(&action("a-1", executor_protocol::OperatorAction::PauseAfterTurn, Some(root))).await.expect("pause");
    match x.recv().await.expect("a result") {
        DaemonMessage::OperatorResult(r) => assert_eq!((r.action_id.as_str(), r.ok, r.error), ("a-1", true, None)),
        other => panic!("{other:?}"),
    }
    x.state(root, StateName::Idle, 3).await.expect("idle");
    quiet(&mut x, GRACE_MS * 3).await;
    let Ok(Reply::Worker(view)) = call(&d, Operation::WorkerGet { worker: root }).await else { panic!("get") };
    assert_eq!(view.disposition, engine::model::Disposition::Paused, "the action paused the worker");

    x.send(&action("a-2", executor_protocol::OperatorAction::Resume, Some(WorkerId(999)))).await.expect("resume");
    match x.recv().await.expect("a result") {
        DaemonMessage::OperatorResult(r) => {
            assert_eq!((r.action_id.as_str(), r.ok), ("a-2", false));
            assert_eq!(r.error.expect("an error").code, "UNKNOWN_WORKER");
        }
        other => panic!("{other:?}"),
    }
    x.send(&action("a-3", executor_protocol::OperatorAction::ContinueNow, None)).await.expect("continue");
    match x.recv().await.expect("a result") {
        DaemonMessage::OperatorResult(r) => assert_eq!(r.error.expect("an error").code, "INVALID_ARGUMENT"),
        other => panic!("{other:?}"),
    }
    x.send(&action("a-4", executor_protocol::OperatorAction::ContinueAnyway, Some(root)))
        .await
        .expect("continue anyway");
    let mut got_result = false;
    let mut got_command = false;
    for _ in 0..2 {
        match x.recv().await.expect("a result and a command") {
            DaemonMessage::OperatorResult(r) => got_result = r.ok,
            DaemonMessage::Command(c) => got_command = c.worker_id == root && c.command_id != first.command_id,
            other => panic!("{other:?}"),
        }
    }
    assert!(got_result && got_command, "continue anyway sends exactly one attempt");
    d.stop().await;
}

/// The next summary that satisfies `wanted`, within 10 s (summaries are pushed on every
/// durable change, so intermediate ones are skipped).
async fn summary_until(x: &mut TestExecutor, wanted: impl Fn(&WorkerSummary) -> bool) -> OperatorSummaryWire {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match x.recv_within(left).await {
            Ok(DaemonMessage::OperatorSummary(s)) => {
                let w = &s.runs[0].workers[0];
                assert!(w.recent_events.len() <= executor_protocol::continuity::SUMMARY_EVENTS_MAX, "{w:?}");
                assert!(w.recent_events.windows(2).all(|p| p[0].at_ms <= p[1].at_ms), "oldest first: {w:?}");
                if wanted(w) {
                    return s;
                }
                last = Some(s);
            }
            Ok(other) => panic!("expected a summary, got {other:?}"),
            Err(e) => panic!("no matching summary ({e}); the last one: {last:?}"),
        }
    }
}

/// Waits until the engine took in what `x` sent, and checks the current turn runs.
async fn settled(x: &mut TestExecutor, worker: WorkerId) {
    let answer = query(x, OperatorQueryWire::about("settle", OperatorQueryName::WorkerAttempts, worker)).await;
    let Some(OperatorData::Attempts(a)) = answer.data else { panic!("attempts: {answer:?}") };
    assert_eq!(a.attempts.last().map(|a| a.state.as_str()), Some("generating"), "{a:?}");
}

fn said(w: &WorkerSummary, text: &str) -> bool {
    w.recent_events.last().is_some_and(|e| e.text == text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_executors_get_summaries_with_recent_events_when_they_change() {
    let d = Daemon::start().await;
    let root = auto_root(&d).await;
    let mut h = hello(EXECUTOR_TOKEN, "popup-1");
    h.capabilities.operator = true;
    let (mut popup, _) = TestExecutor::hello(&d.url, h).await.expect("hello");
    let first = summary_until(&mut popup, |_| true).await;
    assert_eq!(first.runs.len(), 1);
    let w = &first.runs[0].workers[0];
    assert_eq!((w.worker_id.clone(), w.name.as_str(), w.auto_resume), (root.to_string(), "/root", true));
    assert!(!w.pause_after_turn);
    // The executor holding the conversation is another connection: it gets commands, no summaries.
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-2")).await.expect("hello");
    x.send(&ExecutorMessage::Binding(binding_at(root, CONVERSATION, StateName::Idle, 1))).await.expect("binding");
    let assignment = x.command_within(Duration::from_secs(10)).await.expect("the assignment");
    let w = summary_until(&mut popup, |w| said(w, "Assignment sent (attempt 1)")).await;
    assert_eq!(w.runs[0].workers[0].recent_events[0].kind, "execution.scheduled");
    x.deliver(&assignment, 2).await.expect("delivered");
    x.state(root, StateName::Idle, 3).await.expect("idle");
    let resume = x.command_within(Duration::from_secs(10)).await.expect("the auto resume");
    summary_until(&mut popup, |w| said(w, "Auto resume sent (attempt 2)")).await;
    x.deliver(&resume, 4).await.expect("delivered");
    settled(&mut x, root).await;
    call(&d, Operation::WorkerPause { worker: root, after_current_turn: true }).await.expect("pause");
    summary_until(&mut popup, |w| w.pause_after_turn && said(w, "Pauses after the current turn")).await;
    x.state(root, StateName::Idle, 5).await.expect("idle");
    let paused = summary_until(&mut popup, |w| w.disposition == "paused" && said(w, "Paused")).await;
    let texts: Vec<&str> = paused.runs[0].workers[0].recent_events.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(
        texts,
        ["Assignment sent (attempt 1)", "Auto resume sent (attempt 2)", "Pauses after the current turn", "Paused"]
    );
    quiet(&mut x, GRACE_MS * 3).await;
    d.stop().await;
}

/// The next message that is not an `operator.summary` push, within 10 s.
async fn next_reply(x: &mut TestExecutor) -> DaemonMessage {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match x.recv_within(left).await.expect("a message") {
            DaemonMessage::OperatorSummary(_) => continue,
            other => return other,
        }
    }
}

/// "Start a run here" from an operator executor: the result names the new run and root.
async fn start_here(
    x: &mut TestExecutor,
    id: &str,
    conversation: Option<&str>,
) -> executor_protocol::OperatorResultWire {
    let action = executor_protocol::OperatorActionWire {
        task_name: Some("Billing export".into()),
        root_conversation_name: Some("Billing root".into()),
        context: Some("Add a CSV export.".into()),
        auto_resume: Some(true),
        conversation_url: conversation.map(Into::into),
        ..executor_protocol::OperatorActionWire::new(id, executor_protocol::OperatorAction::RunStart)
    };
    x.send(&ExecutorMessage::OperatorAction(action)).await.expect("run_start");
    match next_reply(x).await {
        DaemonMessage::OperatorResult(r) => r,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_start_binds_root_to_the_tab_and_its_bootstrap_goes_there_once() {
    let d = Daemon::start().await;
    let mut greeting = hello(EXECUTOR_TOKEN, "chrome-1");
    greeting.capabilities.operator = true;
    let (mut x, _) = TestExecutor::hello(&d.url, greeting).await.expect("hello");

    // A tab on a conversation: /root is attached to it; the tab reports it, the bootstrap follows.
    let result = start_here(&mut x, "s-1", Some(CONVERSATION)).await;
    assert!(result.ok, "{result:?}");
    let (run, root) = (result.run_id.expect("the run"), result.worker_id.expect("the root"));
    let Ok(Reply::Run(view)) = call(&d, Operation::RunGet { run }).await else { panic!("the run exists") };
    assert_eq!((view.run.root, &*view.run.task_name), (root, "Billing export"));
    x.send(&ExecutorMessage::Binding(binding_at(root, CONVERSATION, StateName::Idle, 1))).await.expect("binding");
    let DaemonMessage::Command(first) = next_reply(&mut x).await else { panic!("the bootstrap") };
    assert_eq!((first.worker_id, first.conversation_url.as_str()), (root, CONVERSATION));
    assert_eq!(first.prompt_version, "root-bootstrap/v2");
    assert!(first.prompt.contains("worker_spawn"), "{}", first.prompt);

    // The same conversation again: refused, and no second run.
    let again = start_here(&mut x, "s-2", Some(CONVERSATION)).await;
    assert_eq!(again.error.map(|e| e.code), Some("CONVERSATION_IN_USE".to_string()));
    let Ok(Reply::Runs(runs)) = call(&d, Operation::RunList { include_terminal: true }).await else { panic!("runs") };
    assert_eq!(runs.len(), 1);

    // A new chat: the root's first turn creates its conversation.
    let fresh = start_here(&mut x, "s-3", None).await;
    let root = fresh.worker_id.expect("the second root");
    let DaemonMessage::Command(create) = next_reply(&mut x).await else { panic!("the create") };
    assert_eq!((create.worker_id, create.kind), (root, executor_protocol::KindWire::Create));
    assert_eq!(create.prompt_version, "root-bootstrap/v2");
}

/// The `operator.result` of `id`, skipping the summaries pushed meanwhile.
async fn result_of(x: &mut TestExecutor, id: &str) -> executor_protocol::OperatorResultWire {
    loop {
        match x.recv_within(Duration::from_secs(10)).await.expect("a message") {
            DaemonMessage::OperatorResult(r) if r.action_id == id => return r,
            DaemonMessage::OperatorSummary(_) => {}
            other => panic!("expected the result of {id}, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_worded_for_the_person_and_release_ends_a_dependency_wait() {
    let d = Daemon::start().await;
    let root = auto_root(&d).await;
    let mut h = hello(EXECUTOR_TOKEN, "dashboard-1");
    h.capabilities.operator = true;
    let (mut x, _) = TestExecutor::hello(&d.url, h).await.expect("hello");
    let mut c = mcp(&d).await;
    let run = call(&d, Operation::WorkerGet { worker: root }).await.map(|r| match r {
        Reply::Worker(view) => view.worker.spec.run.to_string(),
        _ => panic!("a worker"),
    });
    let run = run.expect("the root's run");
    let mut lanes = Vec::new();
    for name in ["/root/waiter", "/root/builder"] {
        let spawn = json!({ "runId": run, "name": name, "taskSummary": name, "assignment": { "objective": "o" }, "start": false });
        lanes
            .push(c.call_ok("worker_spawn", spawn).await.expect("spawn")["workerId"].as_str().expect("id").to_string());
    }
    let wait = json!({ "workerId": lanes[0], "dependency": { "workerId": lanes[1] }, "reason": "needs the build" });
    c.call_ok("worker_await_dependency", wait).await.expect("wait");
    // The summary names whom the waiter waits for (once the wait is in it).
    let waits_for = loop {
        match x.recv_within(Duration::from_secs(10)).await.expect("a summary naming the wait") {
            DaemonMessage::OperatorSummary(s) => {
                let waiter = s.runs.iter().flat_map(|r| &r.workers).find(|w| w.worker_id == lanes[0]);
                if let Some(w) = waiter.filter(|w| w.disposition == "awaiting_dependency") {
                    break w.waits_for.clone();
                }
            }
            other => panic!("expected a summary, got {other:?}"),
        }
    };
    assert_eq!(waits_for.as_deref(), Some(lanes[1].as_str()), "the summary names whom it waits for");

    let act = |id: &str, action, worker: &str| {
        ExecutorMessage::OperatorAction(executor_protocol::OperatorActionWire {
            worker_id: Some(worker.parse().expect("a worker id")),
            text: Some("from the dashboard".into()),
            ..executor_protocol::OperatorActionWire::new(id, action)
        })
    };
    // Stop worker on /root: the refusal names Stop run and its command, not run_cancel.
    x.send(&act("a-1", executor_protocol::OperatorAction::StopWorker, &root.to_string())).await.expect("stop");
    let error = result_of(&mut x, "a-1").await.error.expect("refused");
    assert_eq!(error.code, "ROOT_LIFECYCLE", "{}", error.message);
    assert!(error.message.contains("Stop run") && error.message.contains(&format!("orchestrator run stop {run}")));
    assert!(!caller_protocol::refusal::names_a_tool(&error.message), "{}", error.message);
    // Continue now on the waiting lane: the refusal names Release.
    x.send(&act("a-2", executor_protocol::OperatorAction::ContinueNow, &lanes[0])).await.expect("continue");
    let error = result_of(&mut x, "a-2").await.error.expect("refused");
    assert_eq!(error.code, "WORKER_AWAITING_DEPENDENCY");
    assert!(error.message.contains("Release on the dashboard"), "{}", error.message);
    assert!(!caller_protocol::refusal::names_a_tool(&error.message), "{}", error.message);
    // Release ends the wait.
    x.send(&act("a-3", executor_protocol::OperatorAction::ReleaseDependency, &lanes[0])).await.expect("release");
    assert!(result_of(&mut x, "a-3").await.ok, "released");
    let view = c.call_ok("worker_get", json!({ "workerId": lanes[0] })).await.expect("get");
    assert_eq!(view["dependencyWait"], Value::Null, "{view}");
    d.stop().await;
}

/// A run that ends leaves `runs` for `finished` (issue 29): the dashboard's Finished shows
/// how it ended and its workers' outcomes and times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_run_moves_to_finished_with_how_it_ended() {
    let d = Daemon::start().await;
    let root = auto_root(&d).await;
    let mut h = hello(EXECUTOR_TOKEN, "popup-1");
    h.capabilities.operator = true;
    let (mut popup, _) = TestExecutor::hello(&d.url, h).await.expect("hello");
    let first = summary_until(&mut popup, |_| true).await;
    assert!(first.finished.is_empty(), "nothing finished yet");
    let run = first.runs[0].run_id.parse().expect("run id");
    call(&d, Operation::RunCancel { run, reason: "enough for tonight".into() }).await.expect("stopped");
    let deadline = Instant::now() + Duration::from_secs(10);
    let summary = loop {
        match popup.recv_within(deadline.saturating_duration_since(Instant::now())).await {
            Ok(DaemonMessage::OperatorSummary(s)) if s.runs.is_empty() => break s,
            Ok(DaemonMessage::OperatorSummary(_)) => {}
            other => panic!("expected the summary without the run: {other:?}"),
        }
    };
    let [finished] = &summary.finished[..] else { panic!("one finished run: {summary:?}") };
    assert_eq!((finished.status.as_str(), finished.outcome.as_deref()), ("cancelled", Some("enough for tonight")));
    assert!(finished.ended_at_ms.is_some_and(|end| end >= finished.created_at_ms && finished.created_at_ms > 0));
    let w = &finished.workers[0];
    assert_eq!((w.worker_id.clone(), w.disposition.as_str()), (root.to_string(), "cancelled"));
    assert_eq!(w.outcome.as_deref(), Some("enough for tonight"));
    assert!(w.ended_at_ms.is_some());
    d.stop().await;
}
