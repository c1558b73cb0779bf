//! The opt-in approval mode on hand-written app-server lines (the request shapes of the
//! 0.169.0 schema, `codex app-server generate-json-schema`): a request waits, is reported
//! `awaiting_approval` with its handle, and an answer is written to the child exactly once.

mod support;

use cli_executor::codex::{Approvals, Codex, Config, Effect, Outcome};
use engine::effect::{ApprovalAnswer, CommandKind::ApprovalAnswer as Answer, CommandKind::Create};
use engine::model::{ApprovalDecision, ConversationState};
use engine::time::Timestamp;
use serde_json::{Value, json};
use support::{command, drain};

const T: &str = "thr-1";

/// A core in `policy` past the handshake with thread `T` running turn `u1`.
fn running(policy: Approvals) -> Codex {
    let config = Config { approval_policy: policy.policy().to_string(), ..Config::unattended("/work") };
    let mut core = Codex::new(config);
    core.start(Timestamp(0)).expect("start");
    core.line(Timestamp(1), r#"{"id":1,"result":{}}"#).expect("initialize answered");
    core.command(Timestamp(2), command(Create, 1, "k1", "", "go", 100_000)).expect("create");
    let start = drain(&mut core);
    let asked = start.iter().find_map(|e| match e {
        Effect::Write(l) if l.contains("thread/start") => serde_json::from_str::<Value>(l).ok(),
        _ => None,
    });
    assert_eq!(asked.expect("thread/start")["params"]["approvalPolicy"], json!(policy.policy()));
    core.line(Timestamp(3), &json!({"id": 2, "result": {"thread": {"id": T}}}).to_string()).expect("thread");
    core.line(Timestamp(4), &json!({"id": 3, "result": {"turn": {"id": "u1", "status": "inProgress"}}}).to_string())
        .expect("turn");
    let started = json!({"method": "turn/started", "params": {"threadId": T, "turn": {"id": "u1"}}});
    core.line(Timestamp(5), &started.to_string()).expect("started");
    drain(&mut core);
    core
}

fn request(id: &str, command: &str) -> String {
    json!({"id": id, "method": "item/commandExecution/requestApproval", "params": {"threadId": T, "turnId": "u1",
        "itemId": "i1", "startedAtMs": 1, "command": command, "cwd": "/work"}})
    .to_string()
}

fn answer(attempt: u64, approval: &str, decision: ApprovalDecision) -> engine::effect::ExecutorCommand {
    let mut c = command(Answer, attempt, "approval.answer:1", T, "", 100_000);
    c.approval = Some(ApprovalAnswer { id: approval.into(), decision });
    c
}

fn written(effects: &[Effect]) -> Vec<Value> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write(l) => serde_json::from_str(l).ok(),
            _ => None,
        })
        .collect()
}

fn asked(effects: &[Effect]) -> Option<executor_protocol::ApprovalWire> {
    effects.iter().find_map(|e| match e {
        Effect::Approval { report, approval, .. } if report.state == ConversationState::AwaitingApproval => {
            Some(approval.clone())
        }
        _ => None,
    })
}

fn answered(effects: &[Effect]) -> Vec<Outcome> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Answered { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn in_ask_mode_a_request_waits_and_its_answer_is_written_exactly_once() {
    let mut core = running(Approvals::Ask);
    core.line(Timestamp(10), &request("s7", "rm -rf build\u{7}")).expect("request");
    let effects = drain(&mut core);
    assert!(written(&effects).is_empty(), "nothing answered before a person does: {effects:?}");
    let approval = asked(&effects).expect("reported awaiting_approval");
    assert_eq!(approval.id, "apr-1");
    assert_eq!(approval.kind, executor_protocol::ApprovalKindWire::Command);
    assert_eq!(approval.summary, "run rm -rf build (in /work)", "control characters removed");

    core.command(Timestamp(11), answer(1, "apr-1", ApprovalDecision::Approve)).expect("answer");
    let effects = drain(&mut core);
    assert_eq!(written(&effects), [json!({"jsonrpc": "2.0", "id": "s7", "result": {"decision": "accept"}})]);
    assert!(matches!(&answered(&effects)[..], [Outcome::Submitted { thread, turn }] if thread == T && turn == "u1"));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::State { report, .. } if report.state == ConversationState::Generating))
    );

    core.command(Timestamp(12), answer(1, "apr-1", ApprovalDecision::Decline)).expect("again");
    let effects = drain(&mut core);
    assert!(written(&effects).is_empty(), "a second answer writes nothing");
    assert!(matches!(&answered(&effects)[..], [Outcome::Failed { code: "APPROVAL_GONE", .. }]));
}

#[test]
fn a_decline_is_written_as_decline_and_a_wrong_handle_is_gone() {
    let mut core = running(Approvals::Ask);
    core.line(Timestamp(10), &request("s8", "curl example.com")).expect("request");
    drain(&mut core);
    core.command(Timestamp(11), answer(1, "apr-9", ApprovalDecision::Approve)).expect("wrong");
    let effects = drain(&mut core);
    assert!(written(&effects).is_empty());
    assert!(matches!(&answered(&effects)[..], [Outcome::Failed { code: "APPROVAL_GONE", .. }]));
    core.command(Timestamp(12), answer(1, "apr-1", ApprovalDecision::Decline)).expect("decline");
    assert_eq!(written(&drain(&mut core)), [json!({"jsonrpc": "2.0", "id": "s8", "result": {"decision": "decline"}})]);
}

#[test]
fn a_request_is_gone_once_its_turn_ends_or_codex_resolves_it() {
    let mut core = running(Approvals::Ask);
    core.line(Timestamp(10), &request("s1", "make")).expect("request");
    drain(&mut core);
    let resolved = json!({"method": "serverRequest/resolved", "params": {"threadId": T, "requestId": "s1"}});
    core.line(Timestamp(11), &resolved.to_string()).expect("resolved");
    core.line(Timestamp(12), &request("s2", "make install")).expect("second");
    let effects = drain(&mut core);
    assert_eq!(asked(&effects).map(|a| a.id), Some("apr-2".to_string()), "handles are never reused");
    let done = json!({"method": "turn/completed", "params": {"threadId": T, "turn": {"id": "u1", "status": "interrupted", "items": [], "error": null}}});
    core.line(Timestamp(13), &done.to_string()).expect("ended");
    drain(&mut core);
    for handle in ["apr-1", "apr-2"] {
        core.command(Timestamp(14), answer(1, handle, ApprovalDecision::Approve)).expect("late");
        let effects = drain(&mut core);
        assert!(written(&effects).is_empty(), "{handle}: nothing written to a settled request");
        assert!(matches!(&answered(&effects)[..], [Outcome::Failed { code: "APPROVAL_GONE", .. }]), "{handle}");
    }
}

#[test]
fn in_never_mode_a_request_is_declined_at_once() {
    let mut core = running(Approvals::Never);
    core.line(Timestamp(10), &request("s3", "ls")).expect("request");
    let effects = drain(&mut core);
    assert_eq!(written(&effects), [json!({"jsonrpc": "2.0", "id": "s3", "result": {"decision": "decline"}})]);
    assert!(asked(&effects).is_none());
}

#[test]
fn a_new_child_numbers_its_handles_on_from_the_earlier_childrens() {
    // The worker's earlier children gave `apr-1` to `apr-3`: the new one's first request
    // is `apr-4`, never a handle answered before.
    let mut earlier = running(Approvals::Ask);
    earlier.line(Timestamp(10), &request("s1", "make")).expect("request");
    assert_eq!(asked(&drain(&mut earlier)).expect("asked").id, "apr-1");
    assert_eq!(earlier.approvals_given(), 1);
    let mut core = running(Approvals::Ask);
    core.approvals_from(3);
    core.line(Timestamp(10), &request("s1", "make")).expect("request");
    assert_eq!(asked(&drain(&mut core)).expect("asked").id, "apr-4");
    assert_eq!(core.approvals_given(), 4);
}
