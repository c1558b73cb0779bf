//! `approval_answer` over the operator channel (issue 20, a CLI executor's `ask` mode): the
//! daemon refuses it (typed) when the worker is not held on that request, and otherwise
//! answers `ok` and sends the executor one `approval.answer` naming the request.

mod testkit;

use engine::ids::WorkerId;
use engine::policy::PolicyPatch;
use executor_protocol::{
    ApprovalDecisionWire, ApprovalKindWire, ApprovalWire, DaemonMessage, ExecutorMessage, KindWire, OperatorAction,
    OperatorActionWire, StateName, StateWire,
};
use std::time::Duration;
use test_executor::{TestExecutor, hello};
use testkit::{Daemon, EXECUTOR_TOKEN, attached_root, binding_at};

const CONVERSATION: &str = "https://chatgpt.com/c/approval-test";

fn answer(id: &str, worker: WorkerId, approval: Option<&str>) -> ExecutorMessage {
    ExecutorMessage::OperatorAction(OperatorActionWire {
        worker_id: Some(worker),
        approval_id: approval.map(str::to_string),
        decision: Some(ApprovalDecisionWire::Approve),
        ..OperatorActionWire::new(id, OperatorAction::ApprovalAnswer)
    })
}

/// The next operator result's error code (`None`: ok), skipping summaries.
async fn result(x: &mut TestExecutor) -> Option<String> {
    loop {
        match x.recv_within(Duration::from_secs(10)).await.expect("a result") {
            DaemonMessage::OperatorResult(r) => return r.error.map(|e| e.code),
            DaemonMessage::OperatorSummary(_) => {}
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_is_refused_unless_the_worker_waits_on_that_request_then_sent_once() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "cli-1")).await.expect("hello");
    let root = attached_root(&d.handle, "approval test", PolicyPatch::default(), CONVERSATION).await;
    x.send(&ExecutorMessage::Binding(binding_at(root, CONVERSATION, StateName::Idle, 1))).await.expect("binding");
    let first = x.command_within(Duration::from_secs(10)).await.expect("the assignment");
    x.deliver(&first, 2).await.expect("delivered");

    x.send(&answer("a-1", root, None)).await.expect("sent");
    assert_eq!(result(&mut x).await.as_deref(), Some("INVALID_ARGUMENT"), "approvalId is required");
    x.send(&answer("a-2", root, Some("apr-1"))).await.expect("sent");
    assert_eq!(result(&mut x).await.as_deref(), Some("NOT_AWAITING_APPROVAL"), "not held");

    let approval = ApprovalWire { id: "apr-1".into(), kind: ApprovalKindWire::Command, summary: "run make".into() };
    let asked = StateWire {
        worker_id: root,
        state: StateName::AwaitingApproval,
        error_kind: None,
        seq: 3,
        block: None,
        until_ms: None,
        detail: Some("run make".into()),
        approval: Some(approval),
        retry: None,
    };
    x.send(&ExecutorMessage::State(asked)).await.expect("awaiting approval");
    x.send(&answer("a-3", root, Some("apr-2"))).await.expect("sent");
    assert_eq!(result(&mut x).await.as_deref(), Some("NOT_AWAITING_APPROVAL"), "another request");
    x.send(&answer("a-4", root, Some("apr-1"))).await.expect("sent");
    let mut ok = false;
    let mut command = None;
    while !(ok && command.is_some()) {
        match x.recv_within(Duration::from_secs(10)).await.expect("a result and a command") {
            DaemonMessage::OperatorResult(r) => ok = r.ok,
            DaemonMessage::Command(c) => command = Some(c),
            DaemonMessage::OperatorSummary(_) => {}
            other => panic!("{other:?}"),
        }
    }
    let command = command.expect("the answer");
    assert_eq!(command.kind, KindWire::ApprovalAnswer);
    assert_eq!(command.command_id, first.command_id, "the open turn's command id");
    let sent = command.approval.expect("the request and decision");
    assert_eq!((sent.approval_id.as_str(), sent.decision), ("apr-1", ApprovalDecisionWire::Approve));
    x.send(&answer("a-5", root, Some("apr-1"))).await.expect("sent");
    assert_eq!(result(&mut x).await.as_deref(), Some("NOT_AWAITING_APPROVAL"), "answered already");
    d.stop().await;
}
