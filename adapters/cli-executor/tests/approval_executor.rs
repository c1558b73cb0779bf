//! The approval mode (`--approvals ask`) through the executor's task, against the stand-in
//! (`standin/codex_sim.py`, whose threads ask once per turn when their policy is not
//! `never`): the request is published `awaiting_approval` with its handle, the answer is
//! written to the child exactly once (a repeat fails `APPROVAL_GONE`), and the turn goes on.

mod harness;

use cli_executor::base::settings::Approvals;
use cli_executor::base::worker::Out;
use cli_executor::run::router::{Reply, Router};
use engine::ids::WorkerId;
use executor_protocol::{ApprovalDecisionWire, KindWire, OutcomeWire, StateName};
use harness::{Binary, dirs, next_report as until, outcome, result_of, settings, state};

const WORKER: WorkerId = WorkerId(7);

/// The `approval.answer` frame of attempt `n` for request `id`.
fn answer(n: u64, conversation: &str, id: &str, decision: ApprovalDecisionWire) -> String {
    harness::answer_frame(&harness::frame(WORKER, n, KindWire::Send, conversation, ""), n, id, decision)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waits_for_its_answer_which_goes_to_the_child_once() {
    let dirs = dirs();
    let mut settings = settings(&dirs, &Binary::Sim(Vec::new()));
    settings.approvals = Approvals::Ask;
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");

    assert_eq!(executor.daemon(&harness::frame(WORKER, 1, KindWire::Create, "", "go")).await, Reply::Send(Vec::new()));
    let url = match outcome(until(&mut reports, "the create's result", result_of(1)).await) {
        OutcomeWire::Submitted { conversation_url: Some(url), .. } => url,
        other => panic!("create: {other:?}"),
    };
    let asked = until(&mut reports, "the request", |o| matches!(o, Out::State(s) if s.approval.is_some())).await;
    let Out::State(asked) = asked else { unreachable!() };
    assert_eq!(asked.state, StateName::AwaitingApproval);
    let approval = asked.approval.expect("the request");
    assert_eq!((approval.id.as_str(), approval.kind), ("apr-1", executor_protocol::ApprovalKindWire::Command));
    assert!(approval.summary.starts_with("run make deploy (in "), "{}", approval.summary);
    assert!(harness::decisions(&dirs, WORKER).is_empty(), "nothing answered before a person does");
    // The status that follows the request (`waitingOnApproval`) does not republish the
    // state without it: the state `hello` would republish keeps the request.
    let hello = executor.hello("t", &cli_executor::run::router::Intro::new("cli-test", 1, 16));
    assert!(hello.contains("\"approval\":{\"id\":\"apr-1\""), "{hello}");

    let approve = answer(1, &url, "apr-1", ApprovalDecisionWire::Approve);
    assert_eq!(executor.daemon(&approve).await, Reply::Send(Vec::new()));
    assert!(matches!(
        outcome(until(&mut reports, "the answer's result", result_of(1)).await),
        OutcomeWire::Submitted { conversation_url: None, .. }
    ));
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    assert_eq!(harness::decisions(&dirs, WORKER), ["accept"]);

    // The same answer again: gone, and nothing more reaches the child.
    assert_eq!(executor.daemon(&approve).await, Reply::Send(Vec::new()));
    match outcome(until(&mut reports, "the repeat's result", result_of(1)).await) {
        OutcomeWire::Failed { code, .. } => assert_eq!(code, "APPROVAL_GONE"),
        other => panic!("repeat: {other:?}"),
    }
    assert_eq!(harness::decisions(&dirs, WORKER), ["accept"], "written once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_child_numbers_its_requests_on_so_no_handle_names_two_requests() {
    let dirs = dirs();
    let mut settings = settings(&dirs, &Binary::Sim(vec!["--exit-on-turn-start".into(), "2".into()]));
    settings.approvals = Approvals::Ask;
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");
    let asked = |o: &Out| matches!(o, Out::State(s) if s.approval.is_some());
    let handle = |o: Out| match o {
        Out::State(s) => s.approval.expect("the request").id,
        other => panic!("{other:?}"),
    };

    assert_eq!(executor.daemon(&harness::frame(WORKER, 1, KindWire::Create, "", "go")).await, Reply::Send(Vec::new()));
    let url = match outcome(until(&mut reports, "the create's result", result_of(1)).await) {
        OutcomeWire::Submitted { conversation_url: Some(url), .. } => url,
        other => panic!("create: {other:?}"),
    };
    assert_eq!(handle(until(&mut reports, "the first request", asked).await), "apr-1");
    assert_eq!(
        executor.daemon(&answer(1, &url, "apr-1", ApprovalDecisionWire::Approve)).await,
        Reply::Send(Vec::new())
    );
    until(&mut reports, "the first turn's end", state(StateName::Idle)).await;

    // The child dies on the next turn/start before taking it in: the prompt is "not
    // submitted", and the daemon's next attempt goes to a new child, whose turn asks under
    // a new handle.
    assert_eq!(
        executor.daemon(&harness::frame(WORKER, 2, KindWire::Send, &url, "more")).await,
        Reply::Send(Vec::new())
    );
    match outcome(until(&mut reports, "the lost prompt's result", result_of(2)).await) {
        OutcomeWire::Failed { code, .. } => assert_eq!(code, "DEADLINE_EXCEEDED"),
        other => panic!("the lost prompt: {other:?}"),
    }
    assert_eq!(
        executor.daemon(&harness::frame(WORKER, 3, KindWire::Send, &url, "more")).await,
        Reply::Send(Vec::new())
    );
    assert_eq!(handle(until(&mut reports, "the new child's request", asked).await), "apr-2");
    assert_eq!(harness::decisions(&dirs, WORKER), ["accept"]);
}
