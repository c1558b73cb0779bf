//! A usage limit that resets while the worker is held (issue 30, "No foreign
//! continuations"), with the real binaries offline against the loopback mock models: the
//! mock answers the first prompt with a 429 whose reset is a few seconds away, the worker
//! is held (not paused) until then, exactly one resume comes from the daemon after the
//! reset, and the CLI starts no turn of its own: the mock model's requests are counted per
//! prompt over a window well past the reset.
//!
//! - Codex 0.169.0 (`CODEX_BIN`): `limit:S` of `mock/mock_responses.py`, a 429
//!   `usage_limit_reached` whose primary window resets S seconds from now (the reset comes
//!   from Codex's `account/rateLimits/updated`).
//! - Claude Code 2.1.332 (`CLAUDE_BIN`, its `autoContinueAtUsageLimit` off in every child's
//!   `--settings`): `limit_epoch:S` of `mock/mock_messages.py`, a 429 with the message
//!   "Claude AI usage limit reached|<epoch>" (the CLI passes it on; the executor reads the
//!   reset from it) and `retry-after: 3600`, so the CLI's own retry of a 429 (it retries
//!   one whose `retry-after` is short, within the turn) does not come into it.
//!
//! Without `CODEX_BIN` / `CLAUDE_BIN` each test prints one line saying it is skipped,
//! unless `ORCH_REAL_CLIS=required` (test.sh), where it fails.

mod claude_harness;
mod harness;

use engine::ExecutorKind;
use engine::ids::WorkerId;
use engine::model::{AttemptReason, Disposition};
use engine::time::Timestamp;
use harness::{Daemon, GRACE_MS, crash, dirs, start_run, submitted, until};
use serde_json::{Value, json};
use std::time::Duration;

/// Seconds from the 429 to its reset: long enough for the hold to be seen, short for CI.
const RESET_S: u64 = 3;

/// Waits until `worker` is held by a usage limit with a reset, and returns the reset.
async fn held(d: &Daemon, worker: WorkerId) -> Timestamp {
    let until_ms = until("the limit's hold", || async { d.worker(worker).await.hold.and_then(|h| h.until) }).await;
    assert!(d.worker(worker).await.worker.pause.is_none(), "a limit with a reset holds, it does not pause");
    until_ms
}

/// Waits until `worker` completed, then lets a window pass that ends well past the reset
/// `until_ms` (three seconds past it, and at least four idle graces from now): any turn of
/// the CLI's own, or another resume, would have come by then.
async fn completed_then_quiet(d: &Daemon, worker: WorkerId, until_ms: Timestamp) {
    until("completed", || async { (d.worker(worker).await.disposition == Disposition::Completed).then_some(()) }).await;
    let quiet_until = (until_ms.0 + 3_000).max(harness::now_ms() + GRACE_MS * 4);
    tokio::time::sleep(Duration::from_millis(quiet_until.saturating_sub(harness::now_ms()))).await;
}

/// The daemon's attempts: exactly the first and one resume, scheduled after the reset.
async fn one_resume_after(d: &Daemon, worker: WorkerId, until_ms: Timestamp) {
    let attempts = submitted(d, worker, 2).await;
    assert_eq!(attempts.len(), 2, "the first prompt and one resume: {attempts:?}");
    assert_eq!(attempts[1].reason, AttemptReason::AutoResume);
    assert!(
        attempts[1].scheduled_at >= until_ms,
        "resumed at {} ms, before the reset at {} ms",
        attempts[1].scheduled_at.0,
        until_ms.0
    );
    assert!(d.worker(worker).await.worker.pause.is_none(), "no foreign turn, nothing paused");
}

/// The `Attempt N` of the prompt a Codex request answers: the last user message of its
/// conversation that names one.
fn attempt_of(request: &Value) -> Option<u32> {
    let items = request["input"].as_array()?;
    items.iter().rev().filter(|item| item["role"] == "user").find_map(|item| {
        let text: String =
            item["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect();
        text.split("Attempt ").nth(1).and_then(|rest| rest.split(' ').next()?.parse().ok())
    })
}

/// The Codex turn a request belongs to (`client_metadata.turn_id`, 0.169.0).
fn turn_of(request: &Value) -> &str {
    request["client_metadata"]["turn_id"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_a_limit_that_resets_while_held_brings_one_resume_from_the_daemon_and_no_turn_of_its_own() {
    let Some(path) = harness::real_codex("codex limit reset") else { return };
    let turns = json!({"1": [format!("limit:{RESET_S}")], "2": ["complete"]});
    let mock = harness::MockModel::start(Some(&json!({ "turns": turns })));
    let binary = harness::Binary::Real { path, port: mock.port };
    let (d, dirs) = (Daemon::start().await, dirs());
    let task = harness::executor(&d, &dirs, &binary);
    let root = start_run(&d, &dirs, ExecutorKind::Codex).await;
    let until_ms = held(&d, root).await;
    let at_hold = mock.requests().len();
    completed_then_quiet(&d, root, until_ms).await;
    one_resume_after(&d, root, until_ms).await;
    let requests = mock.requests();
    let asked: Vec<(Option<u32>, &str)> = requests.iter().map(|r| (attempt_of(r), turn_of(r))).collect();
    eprintln!("codex limit reset: the model's requests (prompt, turn) {asked:?}, {at_hold} before the hold");
    // Attempt 1: the 429 and Codex's one retry of it at once, in the daemon's turn, all
    // before the limit was reported; attempt 2: its tool call and the answer after the
    // tool's output, in the resume's turn. No request later, no third turn.
    let turns: std::collections::BTreeSet<&str> = asked.iter().map(|(_, turn)| *turn).collect();
    assert_eq!(turns.len(), 2, "two turns, both the daemon's: {asked:?}");
    let first: Vec<_> = asked.iter().filter(|(attempt, _)| *attempt == Some(1)).collect();
    assert!(first.iter().all(|(_, turn)| *turn == asked[0].1), "attempt 1 in one turn: {asked:?}");
    assert_eq!(first.len(), at_hold, "nothing asked for attempt 1 after the limit: {asked:?}");
    let second: Vec<_> = asked.iter().skip(at_hold).collect();
    assert!(second.iter().all(|(attempt, _)| *attempt == Some(2)), "{asked:?}");
    assert_eq!(second.len(), 2, "the resume's tool call and its answer: {asked:?}");
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_a_limit_that_resets_while_held_brings_one_resume_from_the_daemon_and_no_turn_of_its_own() {
    use claude_harness::{Claude, MockApi, nonce, options, taken_in};
    let Some(path) = claude_harness::real_claude("claude limit reset") else { return };
    let (d, dirs) = (Daemon::start().await, dirs());
    let mock = MockApi::start(dirs.root.path(), true);
    // The root of a fresh daemon's first run is wrk-1, the worker the mock's tool call names.
    let root = WorkerId(1);
    mock.script(root, &[&format!("limit_epoch:{RESET_S}"), "complete"]);
    let task = harness::spawn_executor(options(&d.url, &dirs, &Claude::Real { path, port: mock.port }));
    assert_eq!(start_run(&d, &dirs, ExecutorKind::Claude).await, root);
    let until_ms = held(&d, root).await;
    completed_then_quiet(&d, root, until_ms).await;
    one_resume_after(&d, root, until_ms).await;
    // The mock answers its N-th prompt with the script's N-th action (`text` once they run
    // out), so a request of the CLI's own would show as one more action.
    let actions = mock.actions();
    eprintln!("claude limit reset: the model was asked {actions:?}");
    assert_eq!(actions, [format!("limit_epoch:{RESET_S}").as_str(), "complete", "after_tool"]);
    let sent = ["conversation.create:exe-1", "conversation.send:exe-2"].map(nonce);
    assert_eq!(taken_in(&dirs, root), sent, "the session holds the daemon's two prompts, each once");
    crash(task).await;
    d.stop().await;
}
