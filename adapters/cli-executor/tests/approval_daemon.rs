//! The approval mode end to end, against the real daemon (in process) and the stand-in
//! (`standin/codex_sim.py` asks once per turn when its thread's policy is not `never`):
//! the request holds the worker with its handle in the worker's `hold`, the operator's
//! answer is refused for another request, reaches the child exactly once, and cannot be
//! sent twice.

mod harness;

use cli_executor::base::settings::Approvals;
use engine::model::{ApprovalDecision, ConversationState, HoldReason};
use engine::op::Operation;
use engine::reject::RejectionCode;
use harness::{Binary, Daemon, conversation_in, crash, decisions, dirs, until};

fn answer(worker: engine::ids::WorkerId, approval: &str, decision: ApprovalDecision) -> Operation {
    Operation::WorkerApprovalAnswer { worker, approval: approval.to_string(), decision }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_holds_the_worker_until_the_operator_answers_once() {
    let d = Daemon::start().await;
    let dirs = dirs();
    let mut options = harness::options(&d.url, &dirs, &Binary::Sim(Vec::new()));
    options.settings.approvals = Approvals::Ask;
    let task = harness::spawn_executor(options);
    let root = harness::start_run(&d, &dirs, engine::ExecutorKind::Codex).await;

    conversation_in(&d, root, ConversationState::AwaitingApproval).await;
    let hold = until("the request in the worker's hold", || async {
        d.worker(root).await.hold.filter(|h| h.approval.is_some())
    })
    .await;
    assert_eq!(hold.reason, HoldReason::AwaitingApproval);
    let approval = hold.approval.expect("the request");
    assert_eq!(&*approval.id, "apr-1");
    assert!(approval.summary.starts_with("run make deploy (in "), "{}", approval.summary);

    let wrong = d.call(answer(root, "apr-9", ApprovalDecision::Approve)).await;
    assert_eq!(wrong.err().map(|r| r.code), Some(RejectionCode::NotAwaitingApproval), "another request");
    assert!(decisions(&dirs, root).is_empty(), "nothing reaches the child before a person answers");

    d.call(answer(root, "apr-1", ApprovalDecision::Decline)).await.expect("the answer is taken");
    let again = d.call(answer(root, "apr-1", ApprovalDecision::Approve)).await;
    assert_eq!(again.err().map(|r| r.code), Some(RejectionCode::NotAwaitingApproval), "answered already");
    until("the decision reaches the child", || async { (decisions(&dirs, root) == ["decline"]).then_some(()) }).await;
    // The turn goes on and ends; the daemon's next turn asks anew (apr-2), never apr-1 again.
    let next = until("the next turn's request", || async {
        d.worker(root).await.hold.and_then(|h| h.approval).filter(|a| &*a.id != "apr-1")
    })
    .await;
    assert_eq!(&*next.id, "apr-2");
    assert_eq!(decisions(&dirs, root), ["decline"], "written once");

    crash(task).await;
    d.stop().await;
}
