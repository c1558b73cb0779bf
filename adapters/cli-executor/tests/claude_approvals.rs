//! The opt-in approval mode for Claude Code on hand-written stream-json lines (the
//! `control_request` `can_use_tool` shapes claude 2.1.332 wrote under
//! `--permission-prompt-tool stdio`, 2026-12-02): a request waits, is reported
//! `awaiting_approval` with its handle, an answer is written to the child exactly once,
//! and the turn's end or the child's exit makes the request gone.

mod claude_support;

use claude_support::{CREATE, SESSION, command, drain};
use cli_executor::claude::nonce::nonce_uuid;
use cli_executor::claude::tz::NoZones;
use cli_executor::claude::{Claude, Config, DECLINED, Effect, Outcome};
use engine::effect::{ApprovalAnswer, CommandKind::ApprovalAnswer as Answer, CommandKind::Create, ExecutorCommand};
use engine::model::{ApprovalDecision, ConversationState};
use engine::time::Timestamp;
use serde_json::{Value, json};

fn lifecycle(state: &str) -> String {
    json!({"type": "command_lifecycle", "command_uuid": nonce_uuid(CREATE), "state": state, "session_id": SESSION})
        .to_string()
}

/// A core (asking or not) whose create (attempt 1) is running its turn.
fn running(asks: bool) -> Claude {
    let mut core = Claude::new(Config { asks, ..Config::unattended() }, Box::new(NoZones));
    core.command(Timestamp(0), command(Create, 1, CREATE, "", "go", 100_000)).expect("create");
    core.line(Timestamp(1), &lifecycle("queued")).expect("queued");
    core.line(Timestamp(2), &lifecycle("started")).expect("started");
    drain(&mut core);
    core
}

/// The request 2.1.332 wrote for a `Bash` call asking to leave the sandbox.
fn bash_request(id: &str, command: &str) -> String {
    json!({"type": "control_request", "request_id": id, "request": {"subtype": "can_use_tool",
        "tool_name": "Bash", "display_name": "Bash",
        "input": {"command": command, "description": "touch outside", "dangerouslyDisableSandbox": true},
        "description": "touch outside", "decision_reason_type": "sandboxOverride", "tool_use_id": "toolu_mock_1"}})
    .to_string()
}

/// The request it wrote for a `Write` outside the working directory.
fn write_request(id: &str) -> String {
    json!({"type": "control_request", "request_id": id, "request": {"subtype": "can_use_tool",
        "tool_name": "Write", "display_name": "Write",
        "input": {"file_path": "/tmp/probe/outside.txt", "content": "hi"}, "description": "/tmp/probe/outside.txt",
        "decision_reason": "Path is outside allowed working directories", "decision_reason_type": "workingDir",
        "tool_use_id": "toolu_mock_3"}})
    .to_string()
}

fn answer(attempt: u64, approval: &str, decision: ApprovalDecision) -> ExecutorCommand {
    let mut c = command(Answer, attempt, "approval.answer:1", SESSION, "", 100_000);
    c.approval = Some(ApprovalAnswer { id: approval.into(), decision });
    c
}

fn written(effects: &[Effect]) -> Vec<Value> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write(line) => Some(serde_json::from_str(line).expect("a JSON line")),
            _ => None,
        })
        .collect()
}

fn asked(effects: &[Effect]) -> Option<executor_protocol::ApprovalWire> {
    effects.iter().find_map(|e| match e {
        Effect::Approval { report, approval, session, .. } if report.state == ConversationState::AwaitingApproval => {
            assert_eq!(session, SESSION);
            assert_eq!(report.detail.as_deref(), Some(&*approval.summary));
            Some(approval.clone())
        }
        _ => None,
    })
}

fn answered(effects: &[Effect]) -> Vec<(u64, Option<&'static str>)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Answered { command, outcome: Outcome::Submitted { .. } } => Some((command.attempt.0, None)),
            Effect::Answered { command, outcome: Outcome::Failed { code, .. } } => {
                Some((command.attempt.0, Some(*code)))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_request_waits_with_its_handle_and_an_approval_is_written_once_with_the_input() {
    let mut core = running(true);
    core.line(Timestamp(3), &bash_request("req-a", "touch /tmp/x\u{7}")).expect("a request");
    let effects = drain(&mut core);
    assert!(written(&effects).is_empty(), "nothing answered before the person: {effects:?}");
    let approval = asked(&effects).expect("reported awaiting_approval");
    assert_eq!(approval.id, "apr-1");
    assert_eq!(approval.kind, executor_protocol::ApprovalKindWire::Command);
    assert_eq!(approval.summary, "run touch /tmp/x (outside the sandbox)", "control characters removed");
    assert_eq!(core.approvals_waiting(), 1);

    core.command(Timestamp(4), answer(2, "apr-1", ApprovalDecision::Approve)).expect("the answer");
    let effects = drain(&mut core);
    let lines = written(&effects);
    assert_eq!(lines.len(), 1, "{effects:?}");
    assert_eq!(
        lines[0],
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "req-a",
            "response": {"behavior": "allow", "updatedInput": {"command": "touch /tmp/x\u{7}",
                "description": "touch outside", "dangerouslyDisableSandbox": true}}}})
    );
    assert_eq!(answered(&effects), [(2, None)]);
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::State { report, .. } if report.state == ConversationState::Generating))
    );

    core.command(Timestamp(5), answer(3, "apr-1", ApprovalDecision::Decline)).expect("a second answer");
    let effects = drain(&mut core);
    assert!(written(&effects).is_empty(), "a second answer writes nothing: {effects:?}");
    assert_eq!(answered(&effects), [(3, Some("APPROVAL_GONE"))]);
}

#[test]
fn a_decline_denies_with_a_message_and_a_file_change_is_named_by_its_path() {
    let mut core = running(true);
    core.line(Timestamp(3), &write_request("req-w")).expect("a request");
    let approval = asked(&drain(&mut core)).expect("reported");
    assert_eq!(approval.kind, executor_protocol::ApprovalKindWire::FileChange);
    assert_eq!(approval.summary, "write /tmp/probe/outside.txt");
    core.command(Timestamp(4), answer(2, "apr-1", ApprovalDecision::Decline)).expect("the answer");
    let effects = drain(&mut core);
    let lines = written(&effects);
    assert_eq!(
        lines,
        [json!({"type": "control_response", "response": {"subtype": "success", "request_id": "req-w",
            "response": {"behavior": "deny", "message": DECLINED}}})]
    );
    assert_eq!(answered(&effects), [(2, None)]);
}

#[test]
fn another_handle_or_session_is_gone_and_the_request_still_waits() {
    let mut core = running(true);
    core.line(Timestamp(3), &bash_request("req-a", "ls /")).expect("a request");
    drain(&mut core);
    core.command(Timestamp(4), answer(2, "apr-9", ApprovalDecision::Approve)).expect("another handle");
    let mut other = answer(3, "apr-1", ApprovalDecision::Approve);
    other.conversation = "another-session".into();
    core.command(Timestamp(4), other).expect("another session");
    let effects = drain(&mut core);
    assert!(written(&effects).is_empty(), "{effects:?}");
    assert_eq!(answered(&effects), [(2, Some("APPROVAL_GONE")), (3, Some("APPROVAL_GONE"))]);
    assert_eq!(core.approvals_waiting(), 1, "the real request is left intact");
}

#[test]
fn the_turns_result_or_the_childs_exit_makes_a_request_gone() {
    let mut core = running(true);
    core.line(Timestamp(3), &bash_request("req-a", "ls /")).expect("a request");
    let result = json!({"type": "result", "subtype": "success", "is_error": false, "result": "done",
        "session_id": SESSION, "user_message_uuids": [nonce_uuid(CREATE)]});
    core.line(Timestamp(4), &result.to_string()).expect("the result");
    drain(&mut core);
    assert_eq!(core.approvals_waiting(), 0);
    core.command(Timestamp(5), answer(2, "apr-1", ApprovalDecision::Approve)).expect("a late answer");
    let effects = drain(&mut core);
    assert!(written(&effects).is_empty());
    assert_eq!(answered(&effects), [(2, Some("APPROVAL_GONE"))]);

    let mut core = running(true);
    core.line(Timestamp(3), &bash_request("req-b", "ls /")).expect("a request");
    drain(&mut core);
    core.exited(Timestamp(4), Some(1), "crashed");
    drain(&mut core);
    core.command(Timestamp(5), answer(2, "apr-1", ApprovalDecision::Approve)).expect("an answer after the exit");
    let effects = drain(&mut core);
    assert!(written(&effects).is_empty());
    assert_eq!(answered(&effects), [(2, Some("APPROVAL_GONE"))]);
}

#[test]
fn unattended_a_request_is_denied_at_once_and_another_subtype_is_answered_with_an_error() {
    let mut core = running(false);
    core.line(Timestamp(3), &bash_request("req-a", "ls /")).expect("a request");
    let effects = drain(&mut core);
    assert!(asked(&effects).is_none(), "nobody is asked: {effects:?}");
    assert_eq!(written(&effects)[0]["response"]["response"]["behavior"], json!("deny"));
    assert_eq!(written(&effects)[0]["response"]["request_id"], json!("req-a"));

    let other = json!({"type": "control_request", "request_id": "req-h", "request": {"subtype": "hook_callback"}});
    core.line(Timestamp(4), &other.to_string()).expect("another request");
    let lines = written(&drain(&mut core));
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["response"]["subtype"], json!("error"));
    assert_eq!(lines[0]["response"]["request_id"], json!("req-h"));
}

#[test]
fn at_most_the_bound_waits_and_the_next_is_denied() {
    let mut core = running(true);
    let max = cli_executor::base::limits::APPROVALS_MAX;
    for n in 0..=max {
        core.line(Timestamp(3), &bash_request(&format!("req-{n}"), "ls /")).expect("a request");
    }
    let effects = drain(&mut core);
    assert_eq!(core.approvals_waiting(), max);
    let lines = written(&effects);
    assert_eq!(lines.len(), 1, "only the one past the bound is answered");
    assert_eq!(lines[0]["response"]["request_id"], json!(format!("req-{max}")));
    assert_eq!(lines[0]["response"]["response"]["behavior"], json!("deny"));
}
