//! Spec 001 C15.4 for a Claude Code worker, with the real binary: the real `claude`
//! (`CLAUDE_BIN`, 2.1.332) offline against the mock Messages API, whose scripted answers
//! are `tool_use` calls to `mcp__orchestrator__worker_progress`, `worker_complete` and
//! `worker_await_human`, so the real CLI calls the real daemon's MCP server (in process,
//! reached through `--mcp-config` with the token in `ORCHESTRATOR_MCP_TOKEN`). Several turns
//! with automatic resumes, progress recorded, `worker_complete`, then nothing more; a human
//! wait that holds resumes until it is resolved; a usage limit, with and without a reset
//! the CLI shows. (The executor killed mid-turn is `claude_daemon.rs`.) Without
//! `CLAUDE_BIN` each test prints one line and is skipped, unless `ORCH_REAL_CLIS=required`.

mod claude_harness;
mod harness;

use claude_harness::{Claude, MockApi, options, real_claude};
use engine::ExecutorKind;
use engine::ids::WorkerId;
use engine::model::{AttemptReason, ConversationState, Disposition, HoldReason, PauseReason};
use engine::op::Operation;
use harness::{Daemon, Dirs, GRACE_MS, conversation_in, crash, dirs, spawn_executor, start_run, submitted, until};
use std::time::Duration;

/// The root of a fresh daemon's first run: the mock's tool calls name it.
const ROOT: WorkerId = WorkerId(1);

/// A daemon, an executor running the real `claude`, and a mock scripted with `turns`.
async fn start(test: &str, turns: &[&str]) -> Option<(Daemon, Dirs, MockApi, tokio::task::JoinHandle<()>)> {
    let path = real_claude(test)?;
    eprintln!("{test}: the real claude {}", path.display());
    let d = Daemon::start().await;
    let dirs = dirs();
    let mock = MockApi::start(dirs.root.path(), true);
    mock.script(ROOT, turns);
    let task = spawn_executor(options(&d.url, &dirs, &Claude::Real { path, port: mock.port }));
    let root = start_run(&d, &dirs, ExecutorKind::Claude).await;
    assert_eq!(root, ROOT, "a fresh daemon's first root");
    Some((d, dirs, mock, task))
}

/// Waits until the worker's disposition is `wanted`.
async fn disposition(d: &Daemon, wanted: Disposition) -> engine::op::WorkerView {
    until(&format!("disposition {wanted:?}"), || async {
        let view = d.worker(ROOT).await;
        (view.disposition == wanted).then_some(view)
    })
    .await
}

/// Nothing more is submitted: still `n` attempts four idle graces after the turn's end,
/// when an Auto Resume would have been scheduled.
async fn nothing_more(d: &Daemon, n: usize) {
    tokio::time::sleep(Duration::from_millis(GRACE_MS * 4)).await;
    assert_eq!(d.attempts(ROOT).await.len(), n, "nothing more was submitted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c15_4_a_claude_worker_resumes_records_progress_completes_through_mcp_and_nothing_follows() {
    let test = "c15_4_a_claude_worker_resumes_records_progress_completes_through_mcp_and_nothing_follows";
    let Some((d, _dirs, mock, task)) = start(test, &["text", "progress", "complete"]).await else { return };
    let view = disposition(&d, Disposition::Completed).await;
    assert!(view.worker.progress.last_at.is_some(), "worker_progress was recorded");
    let attempts = submitted(&d, ROOT, 3).await;
    let reasons: Vec<AttemptReason> = attempts.iter().map(|a| a.reason).collect();
    assert_eq!(reasons, [AttemptReason::Initial, AttemptReason::AutoResume, AttemptReason::AutoResume]);
    conversation_in(&d, ROOT, ConversationState::Idle).await;
    let view = d.worker(ROOT).await;
    assert!(view.worker.intent.is_none(), "a continuation is pending: {:?}", view.worker.intent);
    nothing_more(&d, 3).await;
    assert_eq!(mock.actions(), ["text", "progress", "after_tool", "complete", "after_tool"]);
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_human_wait_holds_resumes_until_it_is_resolved() {
    let test = "a_human_wait_holds_resumes_until_it_is_resolved";
    let Some((d, _dirs, mock, task)) = start(test, &["await_human", "text"]).await else { return };
    disposition(&d, Disposition::AwaitingHuman).await;
    conversation_in(&d, ROOT, ConversationState::Idle).await;
    nothing_more(&d, 1).await;
    let answer = Operation::WorkerResolveHuman { worker: ROOT, answer: "the left one".into() };
    d.call(answer).await.expect("resolved");
    let attempts = submitted(&d, ROOT, 2).await;
    assert_ne!(attempts[1].reason, AttemptReason::Initial);
    let actions = until("the answer's turn at the model", || {
        let actions = mock.actions();
        std::future::ready((actions.len() >= 3).then_some(actions))
    })
    .await;
    assert_eq!(actions, ["await_human", "after_tool", "text"]);
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_limit_pauses_without_a_reset_and_holds_until_the_reset_the_cli_shows() {
    let test = "a_usage_limit_pauses_without_a_reset_and_holds_until_the_reset_the_cli_shows";
    // API-key auth: the 429's own message is all the CLI shows (no rate_limit_event).
    let Some((d, _dirs, _mock, task)) = start(test, &["limit"]).await else { return };
    let pause = until("the pause", || async { d.worker(ROOT).await.worker.pause }).await;
    assert_eq!(pause.reason, PauseReason::UsageLimit);
    nothing_more(&d, 1).await;
    crash(task).await;
    d.stop().await;

    // The same limit whose message names its reset: the CLI passes it on, and the worker
    // is held until then.
    let Some((d, _dirs, _mock, task)) = start(test, &["limit_lisbon"]).await else { return };
    let hold = until("the hold", || async { d.worker(ROOT).await.hold }).await;
    assert_eq!(hold.reason, HoldReason::UsageLimit);
    let until_ms = hold.until.expect("a reset time").0;
    let out = std::process::Command::new("date")
        .env("TZ", "Europe/Lisbon")
        .arg("-d")
        .arg(format!("@{}", until_ms / 1000))
        .arg("+%H:%M")
        .output()
        .expect("date");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "13:00", "the next 1pm in Lisbon");
    assert!(d.worker(ROOT).await.worker.pause.is_none(), "held, not paused");
    nothing_more(&d, 1).await;
    crash(task).await;
    d.stop().await;
}
