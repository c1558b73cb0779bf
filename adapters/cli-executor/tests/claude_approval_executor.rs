//! The approval mode (`--approvals ask`) for Claude workers through the executor's task:
//! against the stand-in (`standin/claude_sim.py`, whose turns with `ASK` in the prompt ask
//! for a `Bash` call under `--permission-prompt-tool stdio`) and, when `CLAUDE_BIN` names
//! it, the real `claude` 2.1.332 offline against the mock Messages API, its model asking to
//! run a command outside the sandbox. The request is published `awaiting_approval` with its
//! handle, the answer reaches the child exactly once (a repeat fails `APPROVAL_GONE`), an
//! approved command runs and a declined one does not.

mod claude_harness;
mod harness;

use claude_harness::{Claude, MockApi, WORKER, config_home, frame, settings};
use cli_executor::base::settings::Approvals;
use cli_executor::base::worker::Out;
use cli_executor::run::router::{Reply, Router};
use executor_protocol::{ApprovalDecisionWire, ApprovalWire, KindWire, OutcomeWire, StateName};
use harness::{dirs, next_report as until, outcome, result_of, state};
use serde_json::{Value, json};
use tokio::sync::mpsc::Receiver;

/// The `approval.answer` frame of attempt `n` for request `id`.
fn answer(n: u64, conversation: &str, id: &str, decision: ApprovalDecisionWire) -> String {
    harness::answer_frame(&frame(n, KindWire::Send, conversation, ""), n, id, decision)
}

async fn no_reply(executor: &mut Router, text: &str) {
    assert_eq!(executor.daemon(text).await, Reply::Send(Vec::new()));
}

/// The next published request.
async fn asked(reports: &mut Receiver<Out>) -> ApprovalWire {
    let Out::State(asked) = until(reports, "the request", |o| matches!(o, Out::State(s) if s.approval.is_some())).await
    else {
        unreachable!()
    };
    assert_eq!(asked.state, StateName::AwaitingApproval);
    asked.approval.expect("the request")
}

/// Sends `text` (attempt `n`; a create when `url` is empty) and returns the conversation.
async fn prompt(executor: &mut Router, reports: &mut Receiver<Out>, n: u64, url: &str, text: &str) -> String {
    let kind = if url.is_empty() { KindWire::Create } else { KindWire::Send };
    no_reply(executor, &frame(n, kind, url, text)).await;
    match outcome(until(reports, "the prompt's result", result_of(n)).await) {
        OutcomeWire::Submitted { conversation_url: Some(created), .. } => created,
        OutcomeWire::Submitted { conversation_url: None, .. } => url.to_string(),
        other => panic!("{text}: {other:?}"),
    }
}

/// Answers `id` with attempt `n` and returns the outcome's failure code, if any.
async fn decide(
    executor: &mut Router,
    reports: &mut Receiver<Out>,
    n: u64,
    url: &str,
    id: &str,
    decision: ApprovalDecisionWire,
) -> Option<String> {
    no_reply(executor, &answer(n, url, id, decision)).await;
    match outcome(until(reports, "the answer's result", result_of(n)).await) {
        OutcomeWire::Submitted { conversation_url: None, .. } => None,
        OutcomeWire::Failed { code, .. } => Some(code),
        other => panic!("{other:?}"),
    }
}

/// The stand-in's log of the answers it read.
fn responses(dirs: &harness::Dirs) -> Vec<Value> {
    let text = std::fs::read_to_string(config_home(dirs, WORKER).join("standin-approvals.jsonl")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).expect("json")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waits_for_its_answer_which_reaches_the_stand_in_once_and_a_decline_runs_nothing() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let dirs = dirs();
    let mut settings = settings(&dirs, &Claude::Sim(Vec::new()));
    settings.approvals = Approvals::Ask;
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");

    let url = prompt(&mut executor, &mut reports, 1, "", "ASK first").await;
    let approval = asked(&mut reports).await;
    assert_eq!((approval.id.as_str(), approval.kind), ("apr-1", executor_protocol::ApprovalKindWire::Command));
    assert_eq!(approval.summary, "run touch outside.txt (outside the sandbox)");
    assert!(responses(&dirs).is_empty(), "nothing answered before a person does");
    let hello = executor.hello("t", &cli_executor::run::router::Intro::new("cli-test", 1, 16));
    assert!(hello.contains("\"approval\":{\"id\":\"apr-1\""), "kept for a reconnect: {hello}");

    assert_eq!(decide(&mut executor, &mut reports, 1, &url, "apr-1", ApprovalDecisionWire::Approve).await, None);
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    // The same answer again: gone, and nothing more reaches the child.
    let repeat = decide(&mut executor, &mut reports, 1, &url, "apr-1", ApprovalDecisionWire::Decline).await;
    assert_eq!(repeat.as_deref(), Some("APPROVAL_GONE"));

    prompt(&mut executor, &mut reports, 2, &url, "ASK again").await;
    let approval = asked(&mut reports).await;
    assert_eq!(approval.id, "apr-2");
    assert_eq!(decide(&mut executor, &mut reports, 2, &url, "apr-2", ApprovalDecisionWire::Decline).await, None);
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;

    let seen: Vec<(Value, Value, Value)> =
        responses(&dirs).into_iter().map(|r| (r["behavior"].clone(), r["known"].clone(), r["ran"].clone())).collect();
    assert_eq!(
        seen,
        [(json!("allow"), json!(true), json!(true)), (json!("deny"), json!(true), json!(false))],
        "each answer written once; the declined tool did not run"
    );
    let args = std::fs::read_to_string(config_home(&dirs, WORKER).join("standin-args.json")).expect("args");
    assert!(
        args.contains("\"--permission-prompts\", \"host\"") && args.contains("\"--permission-prompt-tool\", \"stdio\""),
        "{args}"
    );
    drop(executor);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_real_claude_an_approved_command_outside_the_sandbox_runs_and_a_declined_one_does_not() {
    let test = "with_the_real_claude_an_approved_command_outside_the_sandbox_runs_and_a_declined_one_does_not";
    let Some(path) = claude_harness::real_claude(test) else { return };
    eprintln!("binary: the real claude {}", path.display());
    let dirs = dirs();
    let mock = MockApi::start(dirs.root.path(), true);
    let approved = dirs.root.path().join("approved-outside.txt");
    let declined = dirs.root.path().join("declined-outside.txt");
    let inside = dirs.work.join("written-inside.txt");
    let outside = |file: &std::path::Path| {
        json!({"tool": "Bash", "input": {"command": format!("touch {}", file.display()),
            "description": "touch a file outside", "dangerouslyDisableSandbox": true}})
    };
    let write = json!({"tool": "Write", "input": {"file_path": inside, "content": "hi\n"}});
    mock.script_actions(WORKER, &[outside(&approved), outside(&declined), write]);
    let mut settings = settings(&dirs, &Claude::Real { path, port: mock.port });
    settings.approvals = Approvals::Ask;
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");

    let url = prompt(&mut executor, &mut reports, 1, "", "touch a file outside").await;
    let approval = asked(&mut reports).await;
    assert_eq!((approval.id.as_str(), approval.kind), ("apr-1", executor_protocol::ApprovalKindWire::Command));
    assert_eq!(approval.summary, format!("run touch {} (outside the sandbox)", approved.display()));
    assert!(!approved.exists(), "nothing ran before the answer");
    assert_eq!(decide(&mut executor, &mut reports, 1, &url, "apr-1", ApprovalDecisionWire::Approve).await, None);
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    assert!(approved.exists(), "the approved command ran outside the sandbox");
    let repeat = decide(&mut executor, &mut reports, 1, &url, "apr-1", ApprovalDecisionWire::Approve).await;
    assert_eq!(repeat.as_deref(), Some("APPROVAL_GONE"));

    prompt(&mut executor, &mut reports, 2, &url, "touch another file outside").await;
    assert_eq!(asked(&mut reports).await.id, "apr-2");
    assert_eq!(decide(&mut executor, &mut reports, 2, &url, "apr-2", ApprovalDecisionWire::Decline).await, None);
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    assert!(!declined.exists(), "the declined command did not run");
    let log = std::fs::read_to_string(&mock.log).expect("the mock's log");
    assert!(log.contains("the person declined this"), "the model was told: {log}");

    // An edit inside the workspace still runs without asking.
    prompt(&mut executor, &mut reports, 3, &url, "write a file inside").await;
    let end = until(&mut reports, "the turn's end", |o| {
        state(StateName::Idle)(o) || matches!(o, Out::State(s) if s.approval.is_some())
    })
    .await;
    assert!(matches!(&end, Out::State(s) if s.state == StateName::Idle), "asked for an edit inside: {end:?}");
    assert_eq!(std::fs::read_to_string(&inside).ok().as_deref(), Some("hi\n"));
    drop(executor);
}
