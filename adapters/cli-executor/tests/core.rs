//! The core's rules on small hand-written app-server lines (shapes taken from the 0.169.0
//! recordings): held sends, deadlines, unanswered prompts, cancels, server requests.

mod support;

use cli_executor::codex::{Codex, Config, Effect, Outcome};
use engine::effect::CommandKind::{Cancel, Close, Create, Inspect, Send, Steer};
use engine::model::ConversationState;
use engine::time::Timestamp;
use serde_json::{Value, json};
use support::{cmd, command, drain};

const T: &str = "thr-1";

/// A core past the handshake with thread `T` running turn `u1` (ours, attempt 1).
fn running() -> Codex {
    let mut core = Codex::new(Config::unattended("/work"));
    core.start(Timestamp(0)).expect("start");
    core.line(Timestamp(1), r#"{"id":1,"result":{}}"#).expect("initialize answered");
    core.command(Timestamp(2), command(Create, 1, "k1", "", "go", 100_000)).expect("create");
    core.line(Timestamp(3), &json!({"id": 2, "result": {"thread": {"id": T}}}).to_string()).expect("thread");
    core.line(Timestamp(4), &json!({"id": 3, "result": {"turn": {"id": "u1", "status": "inProgress"}}}).to_string())
        .expect("turn");
    core.line(
        Timestamp(5),
        &json!({"method": "turn/started", "params": {"threadId": T, "turn": {"id": "u1"}}}).to_string(),
    )
    .expect("started");
    drain(&mut core);
    core
}

fn completed(turn: &str) -> String {
    json!({"method": "turn/completed", "params": {"threadId": T, "turn": {"id": turn, "status": "completed", "items": [], "error": null}}}).to_string()
}

fn written(effects: &[Effect]) -> Vec<Value> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write(l) | Effect::Prompt { line: l, .. } => serde_json::from_str(l).ok(),
            _ => None,
        })
        .collect()
}

fn failed(effects: &[Effect]) -> Vec<(u64, &'static str)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Result { command, outcome: Outcome::Failed { code, .. } } => Some((command.attempt.0, *code)),
            _ => None,
        })
        .collect()
}

#[test]
fn commands_before_initialize_wait_for_it() {
    let mut core = Codex::new(Config::unattended("/w"));
    core.start(Timestamp(0)).expect("start");
    core.command(Timestamp(1), command(Create, 1, "k1", "", "go", 100)).expect("held");
    assert_eq!(written(&drain(&mut core)).len(), 1, "only initialize so far");
    core.line(Timestamp(2), r#"{"id":1,"result":{}}"#).expect("answered");
    let methods: Vec<Value> = written(&drain(&mut core)).iter().map(|w| w["method"].clone()).collect();
    assert_eq!(methods, [json!("initialized"), json!("thread/start")]);
    assert_eq!(core.next_deadline(), Some(Timestamp(2 + cli_executor::base::limits::REQUEST_TIMEOUT_MS)));
}

#[test]
fn a_send_during_a_turn_is_held_until_it_ends() {
    let mut core = running();
    core.command(Timestamp(10), command(Send, 2, "k2", T, "next", 100_000)).expect("send");
    assert!(written(&drain(&mut core)).is_empty(), "nothing typed while the turn runs");
    core.line(Timestamp(20), &completed("u1")).expect("completed");
    let effects = drain(&mut core);
    assert!(matches!(&effects[0], Effect::State { report, .. } if report.state == ConversationState::Idle));
    let w = written(&effects);
    assert_eq!(
        (w[0]["method"].as_str(), w[0]["params"]["clientUserMessageId"].as_str()),
        (Some("turn/start"), Some("k2"))
    );
}

#[test]
fn a_held_send_past_its_deadline_fails_and_a_second_one_is_refused() {
    let mut core = running();
    core.command(Timestamp(10), command(Send, 2, "k2", T, "next", 50)).expect("send");
    core.command(Timestamp(11), command(Send, 3, "k3", T, "more", 500)).expect("send");
    assert_eq!(failed(&drain(&mut core)), [(3, "COMPOSER_BUSY")]);
    assert_eq!(core.next_deadline(), Some(Timestamp(51)));
    core.tick(Timestamp(51));
    assert_eq!(failed(&drain(&mut core)), [(2, "DEADLINE_EXCEEDED")]);
    core.line(Timestamp(60), &completed("u1")).expect("completed");
    assert!(written(&drain(&mut core)).is_empty(), "the late send is gone");
}

#[test]
fn an_unanswered_prompt_is_ambiguous_never_resent() {
    let mut core = running();
    core.line(Timestamp(10), &completed("u1")).expect("completed");
    core.command(Timestamp(11), command(Send, 2, "k2", T, "next", 100_000)).expect("send");
    drain(&mut core);
    core.tick(Timestamp(11 + cli_executor::base::limits::REQUEST_TIMEOUT_MS));
    let effects = drain(&mut core);
    assert_eq!(failed(&effects), [(2, "AMBIGUOUS_SUBMISSION")]);
    assert!(written(&effects).is_empty());
}

#[test]
fn cancel_withdraws_only_a_held_send() {
    let mut core = running();
    core.command(Timestamp(10), command(Send, 2, "k2", T, "next", 100_000)).expect("send");
    core.command(Timestamp(11), command(Cancel, 2, "k2", T, "", 100_000)).expect("cancel");
    assert_eq!(failed(&drain(&mut core)), [(2, "CANCELLED")]);
    core.command(Timestamp(12), command(Cancel, 1, "k1", T, "", 100_000)).expect("cancel");
    assert!(drain(&mut core).is_empty(), "a submitted prompt cannot be withdrawn");
}

#[test]
fn steer_needs_a_turn_of_ours_and_close_releases_the_thread() {
    let mut core = running();
    core.command(Timestamp(10), command(Steer, 2, "k2", T, "nudge", 100_000)).expect("steer");
    let w = written(&drain(&mut core));
    assert_eq!((w[0]["method"].as_str(), w[0]["params"]["expectedTurnId"].as_str()), (Some("turn/steer"), Some("u1")));
    core.line(Timestamp(11), &completed("u1")).expect("completed");
    core.command(Timestamp(12), command(Steer, 3, "k3", T, "late", 100_000)).expect("steer");
    assert_eq!(failed(&drain(&mut core)), [(3, "STEERING_UNAVAILABLE")]);
    core.command(Timestamp(13), command(Close, 3, "", T, "", 100_000)).expect("close");
    assert_eq!(written(&drain(&mut core))[0]["method"], "thread/unsubscribe");
    core.command(Timestamp(14), command(Inspect, 3, "", T, "", 100_000)).expect("inspect");
    assert!(
        matches!(&drain(&mut core)[..], [Effect::State { report, .. }] if report.state == ConversationState::Closed)
    );
    core.command(Timestamp(15), command(Send, 4, "k4", T, "x", 100_000)).expect("send");
    assert_eq!(failed(&drain(&mut core)), [(4, "CONVERSATION_CLOSED")]);
}

#[test]
fn server_requests_are_answered_never_left_hanging() {
    let mut core = running();
    core.line(Timestamp(10), r#"{"id":"a1","method":"item/fileChange/requestApproval","params":{}}"#)
        .expect("approval");
    core.line(Timestamp(11), r#"{"id":9,"method":"item/tool/requestUserInput","params":{}}"#).expect("question");
    let w = written(&drain(&mut core));
    assert_eq!(w[0], json!({"jsonrpc": "2.0", "id": "a1", "result": {"decision": "decline"}}));
    assert_eq!(w[1]["error"]["code"], -32601);
}

#[test]
fn a_turn_waiting_on_approval_is_reported_and_a_foreign_message_flagged() {
    let mut core = running();
    let waiting = json!({"method": "thread/status/changed", "params": {"threadId": T, "status": {"type": "active", "activeFlags": ["waitingOnApproval"]}}});
    core.line(Timestamp(10), &waiting.to_string()).expect("status");
    let user = json!({"method": "item/started", "params": {"threadId": T, "turnId": "u1", "item": {"type": "userMessage", "clientId": "someone"}}});
    core.line(Timestamp(11), &user.to_string()).expect("item");
    let effects = drain(&mut core);
    assert!(matches!(&effects[0], Effect::State { report, .. } if report.state == ConversationState::AwaitingApproval));
    assert!(matches!(&effects[1], Effect::Foreign { turn, .. } if turn == "u1"));
    assert_eq!(cmd(1).attempt.0, 1);
}

#[test]
fn a_limit_with_a_reset_leaves_its_thread_idle_at_the_reset_never_before() {
    let mut core = running();
    let limits = json!({"method": "account/rateLimits/updated", "params": {"rateLimits": {
        "primary": {"usedPercent": 100.0, "windowDurationMins": 300, "resetsAt": 100}}}});
    core.line(Timestamp(10), &limits.to_string()).expect("limits");
    let failed = json!({"method": "turn/completed", "params": {"threadId": T, "turn": {"id": "u1", "status": "failed",
        "items": [], "error": {"message": "You've hit your usage limit.", "codexErrorInfo": "usageLimitExceeded"}}}});
    core.line(Timestamp(20), &failed.to_string()).expect("failed");
    let reported = drain(&mut core);
    assert!(matches!(&reported[..], [Effect::State { report, .. }]
        if report.state == ConversationState::Error(engine::model::ErrorKind::UsageLimit)
            && report.until == Some(Timestamp(100_000))));
    assert_eq!(core.next_deadline(), Some(Timestamp(100_000)));
    core.tick(Timestamp(99_999));
    assert!(drain(&mut core).is_empty(), "still limited");
    core.tick(Timestamp(100_000));
    assert!(matches!(&drain(&mut core)[..], [Effect::State { report, .. }] if report.state == ConversationState::Idle));
    assert_eq!(core.next_deadline(), None, "once");
}

#[test]
fn a_close_interrupts_its_running_turn_and_the_last_threads_close_asks_the_child_to_stop() {
    let mut core = running();
    // A second thread of the worker (its create answered by `thread/start` id 4).
    core.command(Timestamp(10), command(Create, 2, "k2", "", "more", 100_000)).expect("create");
    core.line(Timestamp(11), &json!({"id": 4, "result": {"thread": {"id": "thr-2"}}}).to_string()).expect("thread");
    drain(&mut core);

    // The older thread, mid-turn: interrupted, unsubscribed, closed; the child hosts thr-2.
    core.command(Timestamp(12), command(Close, 3, "", T, "", 100_000)).expect("close");
    let effects = drain(&mut core);
    let methods: Vec<Value> = written(&effects).iter().map(|w| w["method"].clone()).collect();
    assert_eq!(methods, [json!("turn/interrupt"), json!("thread/unsubscribe")]);
    assert!(effects.iter().any(|e| matches!(e, Effect::State { thread, report, .. }
        if thread == T && report.state == ConversationState::Closed)));
    assert!(!effects.contains(&Effect::Stop) && !core.stopped(), "{effects:?}");
    // Its turn's end is not reported: the thread is gone.
    core.line(Timestamp(13), &completed("u1")).expect("completed");
    assert!(drain(&mut core).is_empty());

    // The last thread, its first `turn/start` (id 5) still unanswered: the child stops
    // once the answer is in (the create's result must not be lost), after all else.
    core.command(Timestamp(14), command(Close, 4, "", "thr-2", "", 100_000)).expect("close");
    let effects = drain(&mut core);
    assert!(!effects.contains(&Effect::Stop) && !core.stopped(), "{effects:?}");
    core.line(Timestamp(15), &json!({"id": 5, "result": {"turn": {"id": "u2"}}}).to_string()).expect("turn");
    let effects = drain(&mut core);
    assert!(matches!(effects.first(), Some(Effect::Result { command, .. }) if command.attempt.0 == 2), "{effects:?}");
    assert_eq!(effects.last(), Some(&Effect::Stop), "{effects:?}");
    assert!(core.stopped());
    // A repeated close (or one of a thread never here) changes nothing.
    core.command(Timestamp(15), command(Close, 5, "", "thr-2", "", 100_000)).expect("close again");
    assert!(drain(&mut core).is_empty());
}

#[test]
fn a_create_that_comes_with_the_last_close_keeps_the_child() {
    let mut core = running();
    core.command(Timestamp(10), command(Close, 2, "", T, "", 100_000)).expect("close");
    core.command(Timestamp(11), command(Create, 3, "k3", "", "next", 100_000)).expect("create");
    let effects = drain(&mut core);
    assert!(!effects.contains(&Effect::Stop) && !core.stopped(), "{effects:?}");
    assert_eq!(written(&effects).last().map(|w| w["method"].clone()), Some(json!("thread/start")));
}

#[test]
fn a_turn_whose_model_connection_codex_retries_is_generating_with_the_reason_until_it_moves() {
    let mut core = running();
    let retrying = json!({"method": "error", "params": {"threadId": T, "turnId": "u1", "willRetry": true,
        "error": {"message": "stream disconnected before completion: error sending request", "codexErrorInfo": null}}});
    core.line(Timestamp(10), &retrying.to_string()).expect("error");
    let effects = drain(&mut core);
    let [Effect::State { report, .. }] = &effects[..] else { panic!("{effects:?}") };
    assert_eq!(report.state, ConversationState::Generating);
    let retry = report.retry.as_ref().expect("a retry");
    assert_eq!(&*retry.reason, "stream disconnected before completion: error sending request");
    // A final error (no willRetry) says nothing until the turn's end does.
    let final_error = json!({"method": "error", "params": {"threadId": T, "turnId": "u1", "willRetry": false,
        "error": {"message": "gave up"}}});
    core.line(Timestamp(11), &final_error.to_string()).expect("error");
    assert!(drain(&mut core).is_empty());
    // The turn moves again: generating, without a retry, once.
    let item =
        json!({"method": "item/started", "params": {"threadId": T, "turnId": "u1", "item": {"type": "reasoning"}}});
    core.line(Timestamp(12), &item.to_string()).expect("item");
    core.line(Timestamp(13), &item.to_string()).expect("item");
    let effects = drain(&mut core);
    assert!(
        matches!(&effects[..], [Effect::State { report, .. }] if report.state == ConversationState::Generating && report.retry.is_none()),
        "{effects:?}"
    );
}

#[test]
fn a_retry_outside_a_turn_is_not_reported() {
    let mut core = running();
    core.line(Timestamp(10), &completed("u1")).expect("completed");
    drain(&mut core);
    let retrying = json!({"method": "error", "params": {"threadId": T, "turnId": "u1", "willRetry": true,
        "error": {"message": "reconnecting"}}});
    core.line(Timestamp(11), &retrying.to_string()).expect("error");
    assert!(drain(&mut core).is_empty());
}
