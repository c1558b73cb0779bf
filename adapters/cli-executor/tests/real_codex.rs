//! The real codex-cli (`CODEX_BIN`, 0.169.0) end to end and offline: the daemon in process
//! with its MCP server, the executor, real `codex app-server` children configured as the
//! executor configures them (the orchestrator's server required), and the loopback mock
//! model (`tests/mock/mock_responses.py`) scripted as a worker: its answers are function
//! calls to the orchestrator's MCP tools (`run_list` to find the worker's id from the
//! prompt, then `worker_progress`, `worker_complete`, `worker_await_human`), so the real
//! Codex calls our real daemon. Each test is bounded by the harness's waits.
//!
//! Without `CODEX_BIN` each test prints one line saying it is skipped and why; with
//! `ORCH_REAL_CLIS=required` (test.sh) it fails instead.

mod harness;
#[path = "mock/requests.rs"]
mod mock_requests;

use engine::ids::WorkerId;
use engine::model::{AttemptOutcome, AttemptReason, ConversationState, Disposition, Lifecycle};
use engine::op::Operation;
use harness::{
    Binary, Daemon, Dirs, GRACE_MS, MockModel, conversation_in, crash, dirs, executor, start_run, submitted, until,
};
use serde_json::{Value, json};

/// The daemon, the directories, the mock model scripted with `turns` and the real binary,
/// or `None` when the test is skipped.
async fn setup(test: &str, turns: Value) -> Option<(Daemon, Dirs, MockModel, Binary)> {
    let path = harness::real_codex(test)?;
    let mock = MockModel::start(Some(&json!({ "turns": turns })));
    let binary = Binary::Real { path, port: mock.port };
    Some((Daemon::start().await, dirs(), mock, binary))
}

/// Waits until the worker completed and its last turn ended.
async fn completed(d: &Daemon, worker: WorkerId) {
    until("completed and idle", || async {
        let view = d.worker(worker).await;
        let idle = view.worker.binding.as_ref().is_some_and(|b| b.state == ConversationState::Idle);
        (view.worker.lifecycle == Lifecycle::Completed && idle).then_some(())
    })
    .await;
}

/// The orchestrator's tools as Codex offered them to the model (recorded 2026-12-02: one
/// `namespace` tool `mcp__orchestrator` holding a function per MCP tool).
fn offered_tools(mock: &MockModel) -> Vec<String> {
    let requests = mock.requests();
    let tools = requests.first().and_then(|r| r["tools"].as_array()).expect("tools");
    let namespace = tools.iter().find(|t| t["type"] == "namespace" && t["name"] == "mcp__orchestrator");
    let functions = namespace.and_then(|n| n["tools"].as_array()).expect("the orchestrator's namespace");
    functions.iter().filter_map(|f| f["name"].as_str().map(str::to_string)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c15_4_a_codex_worker_resumes_reports_progress_completes_and_nothing_more_is_sent() {
    let turns = json!({"1": ["progress"], "2": ["progress"], "3": ["complete"]});
    let Some((d, dirs, mock, binary)) = setup("c15.4 workflow", turns).await else { return };
    let task = executor(&d, &dirs, &binary);
    let root = start_run(&d, &dirs, engine::ExecutorKind::Codex).await;
    completed(&d, root).await;

    let attempts = d.attempts(root).await;
    let reasons: Vec<AttemptReason> = attempts.iter().map(|a| a.reason).collect();
    assert_eq!(reasons, [AttemptReason::Initial, AttemptReason::AutoResume, AttemptReason::AutoResume]);
    for pair in attempts.windows(2) {
        let idle = pair[0].idle_at.expect("the turn ended").0;
        assert!(pair[1].scheduled_at.0 >= idle + GRACE_MS, "resumed before the idle grace: {pair:?}");
        assert_eq!(pair[0].outcome, Some(AttemptOutcome::TurnEnded));
    }
    let view = d.worker(root).await;
    assert!(view.worker.progress.last_at.is_some(), "worker_progress reached the daemon");
    assert!(view.worker.intent.is_none() && view.worker.in_flight.is_none(), "nothing more is on its way");
    assert_eq!(mock_requests::prompts_in_last_request(&mock.requests()), [(1, 1), (2, 1), (3, 1)], "each turn once");
    let tools = offered_tools(&mock);
    for tool in ["run_list", "worker_progress", "worker_complete", "worker_await_human"] {
        assert!(tools.iter().any(|t| t == tool), "{tool} offered: {tools:?}");
    }
    // Nothing after the completion: the daemon booked three attempts, the model saw three.
    assert_eq!(d.attempts(root).await.len(), 3);
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executor_killed_mid_turn_restarts_without_a_duplicate_turn() {
    let turns = json!({"1": [], "2": ["hold"], "3": ["complete"]});
    let Some((d, dirs, mock, binary)) = setup("killed mid-turn", turns).await else { return };
    let task = executor(&d, &dirs, &binary);
    let root = start_run(&d, &dirs, engine::ExecutorKind::Codex).await;
    submitted(&d, root, 2).await;
    conversation_in(&d, root, ConversationState::Generating).await;
    until("the model holds turn 2", || async { (mock.requests().len() >= 3).then_some(()) }).await;
    crash(task).await;

    let task = executor(&d, &dirs, &binary);
    completed(&d, root).await;
    let attempts = d.attempts(root).await;
    assert_eq!(attempts.len(), 3, "{attempts:?}");
    assert_eq!(attempts[1].outcome, Some(AttemptOutcome::TurnEnded), "the killed turn is booked as ended");
    assert_eq!(attempts[2].reason, AttemptReason::AutoResume);
    assert_eq!(
        mock_requests::prompts_in_last_request(&mock.requests()),
        [(1, 1), (2, 1), (3, 1)],
        "no prompt went in twice"
    );
    assert_eq!(mock_requests::turns_started(&mock.requests()), [(1, 1), (2, 1), (3, 1)], "each turn started once");
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_limit_holds_the_worker_until_its_reset_then_it_resumes_by_itself() {
    let turns = json!({"1": ["limit:4"], "2": ["complete"]});
    let Some((d, dirs, _mock, binary)) = setup("usage limit with a reset", turns).await else { return };
    let task = executor(&d, &dirs, &binary);
    let root = start_run(&d, &dirs, engine::ExecutorKind::Codex).await;
    let until_ms = until("the limit's hold", || async { d.worker(root).await.hold.and_then(|h| h.until) }).await;
    assert!(d.worker(root).await.worker.pause.is_none(), "a limit with a reset holds, it does not pause");
    completed(&d, root).await;
    let attempts = d.attempts(root).await;
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    assert!(
        attempts[1].scheduled_at >= until_ms,
        "resumed at {} ms, before the reset at {} ms",
        attempts[1].scheduled_at.0,
        until_ms.0
    );
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_limit_without_a_reset_pauses_the_worker() {
    let Some((d, dirs, _mock, binary)) = setup("usage limit without a reset", json!({"1": ["limit"]})).await else {
        return;
    };
    let task = executor(&d, &dirs, &binary);
    let root = start_run(&d, &dirs, engine::ExecutorKind::Codex).await;
    let pause = until("paused", || async { d.worker(root).await.worker.pause }).await;
    eprintln!("paused: {pause:?}");
    // The limit ended the turn: its wake is kept for the person's resume, and nothing goes
    // in meanwhile (several idle graces later, still the one attempt).
    conversation_in(&d, root, ConversationState::Error(engine::model::ErrorKind::UsageLimit)).await;
    tokio::time::sleep(std::time::Duration::from_millis(GRACE_MS * 4)).await;
    assert!(d.worker(root).await.worker.pause.is_some(), "still paused");
    assert_eq!(d.attempts(root).await.len(), 1, "nothing sent while paused");
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_await_human_holds_resumes_until_a_person_answers() {
    let turns = json!({"1": ["await_human"], "2": ["complete"]});
    let Some((d, dirs, _mock, binary)) = setup("await human", turns).await else { return };
    let task = executor(&d, &dirs, &binary);
    let root = start_run(&d, &dirs, engine::ExecutorKind::Codex).await;
    until("waiting for a person after an ended turn", || async {
        let view = d.worker(root).await;
        let idle = view.worker.binding.as_ref().is_some_and(|b| b.state == ConversationState::Idle);
        (view.worker.human.is_some() && idle).then_some(())
    })
    .await;
    assert_eq!(d.worker(root).await.disposition, Disposition::AwaitingHuman);
    assert_eq!(d.attempts(root).await.len(), 1, "no continuation while a person is asked");

    let answered_at = harness::now_ms();
    let answer = Operation::WorkerResolveHuman { worker: root, answer: "PostgreSQL".into() };
    d.call(answer).await.expect("resolved");
    completed(&d, root).await;
    let attempts = d.attempts(root).await;
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    assert!(attempts[1].scheduled_at.0 >= answered_at, "resumed only after the answer");
    crash(task).await;
    d.stop().await;
}
