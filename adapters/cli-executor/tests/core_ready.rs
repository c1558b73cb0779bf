//! The readiness rules on small hand-written app-server lines (shapes from the 0.169.0
//! recordings `mcp-*.jsonl`, `goal-null-*.jsonl`): a failed or missing MCP status, a goal,
//! a resume refused for want of the server and resumed again by the next prompt, a goal that
//! appears mid-session. In each failure nothing of the prompt is written.

mod support;

use cli_executor::base::limits::MCP_READY_WAIT_MS;
use cli_executor::codex::{CODEX_GOAL, Codex, Config, Effect, MCP_UNREACHABLE, Outcome, Resume};
use engine::effect::CommandKind::{Create, Send};
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use serde_json::{Value, json};
use support::{WORKER, command, drain};

const T: &str = "thr-1";

fn line(core: &mut Codex, at: u64, value: Value) {
    core.line(Timestamp(at), &value.to_string()).expect("a line the core reads");
}

fn status(state: &str) -> Value {
    json!({"method": "mcpServer/startupStatus/updated",
           "params": {"threadId": T, "name": "orchestrator", "status": state, "error": null}})
}

/// A guarded core whose create got its `thread/start` answered at 3; the goal check (id 3)
/// is out, the create held.
fn created() -> (Codex, Vec<Effect>) {
    let mut core = Codex::new(Config::guarded("/w", Some("orchestrator")));
    core.start(Timestamp(0)).expect("start");
    line(&mut core, 1, json!({"id": 1, "result": {}}));
    core.command(Timestamp(2), command(Create, 1, "k1", "", "go", 1_000_000)).expect("create");
    drain(&mut core);
    line(&mut core, 3, json!({"id": 2, "result": {"thread": {"id": T}}}));
    let effects = drain(&mut core);
    (core, effects)
}

fn methods(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write(l) | Effect::Prompt { line: l, .. } => serde_json::from_str::<Value>(l).ok(),
            _ => None,
        })
        .filter_map(|w| w["method"].as_str().map(str::to_string))
        .collect()
}

fn failure(effects: &[Effect]) -> Option<(&'static str, String)> {
    effects.iter().find_map(|e| match e {
        Effect::Result { outcome: Outcome::Failed { code, detail }, .. } => Some((*code, detail.clone())),
        _ => None,
    })
}

fn error_state(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::State { report, .. } if report.state == ConversationState::Error(ErrorKind::HostUiChanged) => {
            report.detail.clone()
        }
        _ => None,
    })
}

#[test]
fn the_prompt_waits_for_ready_and_no_goal_in_either_order() {
    let (mut core, effects) = created();
    assert_eq!(methods(&effects), ["thread/goal/get"], "the goal check goes out, the prompt waits");
    line(&mut core, 4, json!({"id": 3, "result": {"goal": null}}));
    line(&mut core, 5, status("starting"));
    assert_eq!(methods(&drain(&mut core)), Vec::<String>::new(), "no prompt before ready");
    assert_eq!(core.next_deadline(), Some(Timestamp(3 + MCP_READY_WAIT_MS + 1)));
    line(&mut core, 6, status("ready"));
    assert_eq!(methods(&drain(&mut core)), ["turn/start"]);
}

#[test]
fn a_failed_status_or_none_in_time_fails_the_prompt_closed() {
    let (mut core, _) = created();
    line(&mut core, 4, json!({"id": 3, "error": {"code": -32600, "message": "goals feature is disabled"}}));
    line(
        &mut core,
        5,
        json!({"method": "mcpServer/startupStatus/updated",
        "params": {"threadId": T, "name": "orchestrator", "status": "failed", "error": "handshake failed"}}),
    );
    let effects = drain(&mut core);
    let (code, detail) = failure(&effects).expect("the create failed");
    assert_eq!(code, "HOST_UI_CHANGED");
    assert!(detail.starts_with(MCP_UNREACHABLE) && detail.contains("handshake failed"), "{detail}");
    assert!(error_state(&effects).is_some_and(|d| d.starts_with(MCP_UNREACHABLE)));
    assert_eq!(methods(&effects), Vec::<String>::new(), "nothing written for the prompt");

    let (mut core, _) = created();
    line(&mut core, 4, json!({"id": 3, "result": {"goal": null}}));
    core.tick(Timestamp(3 + MCP_READY_WAIT_MS));
    assert_eq!(failure(&drain(&mut core)), None, "not yet");
    core.tick(Timestamp(3 + MCP_READY_WAIT_MS + 1));
    let effects = drain(&mut core);
    let (code, detail) = failure(&effects).expect("no status in time");
    assert_eq!(code, "HOST_UI_CHANGED");
    assert!(detail.starts_with(MCP_UNREACHABLE) && detail.contains("no startup status"), "{detail}");
    assert_eq!(methods(&effects), Vec::<String>::new());
}

#[test]
fn a_goal_or_an_answer_that_cannot_rule_one_out_fails_the_prompt_closed() {
    for answer in [
        json!({"id": 3, "result": {"goal": {"status": "active", "objective": "loop forever"}}}),
        json!({"id": 3, "error": {"code": -32601, "message": "method not found"}}),
    ] {
        let (mut core, _) = created();
        line(&mut core, 4, status("ready"));
        line(&mut core, 5, answer.clone());
        let effects = drain(&mut core);
        let (code, detail) = failure(&effects).unwrap_or_else(|| panic!("failed for {answer}"));
        assert_eq!(code, "HOST_UI_CHANGED");
        assert!(detail.starts_with(CODEX_GOAL), "{detail}");
        assert_eq!(methods(&effects), Vec::<String>::new());
    }
}

#[test]
fn a_goal_that_appears_later_closes_the_thread_to_prompts() {
    let (mut core, _) = created();
    line(&mut core, 4, status("ready"));
    line(&mut core, 5, json!({"id": 3, "result": {"goal": null}}));
    line(&mut core, 6, json!({"id": 4, "result": {"turn": {"id": "u1", "status": "inProgress"}}}));
    line(
        &mut core,
        7,
        json!({"method": "turn/completed", "params": {"threadId": T, "turn": {"id": "u1", "status": "completed", "items": []}}}),
    );
    drain(&mut core);
    line(
        &mut core,
        8,
        json!({"method": "thread/goal/updated", "params": {"threadId": T, "goal": {"status": "active"}}}),
    );
    assert!(error_state(&drain(&mut core)).is_some_and(|d| d.starts_with(CODEX_GOAL)));
    core.command(Timestamp(9), command(Send, 2, "k2", T, "next", 1_000_000)).expect("send");
    let effects = drain(&mut core);
    assert_eq!(failure(&effects).map(|(code, _)| code), Some("HOST_UI_CHANGED"));
    assert_eq!(methods(&effects), Vec::<String>::new());
}

#[test]
fn a_resume_refused_for_the_server_is_tried_again_by_the_next_prompt() {
    let resume = Resume { worker: WORKER, thread: T.to_string(), nonces: vec!["k1".to_string()], limit_until: None };
    let mut core = Codex::resuming(Config::guarded("/w", Some("orchestrator")), &[resume]).expect("core");
    core.start(Timestamp(0)).expect("start");
    line(&mut core, 1, json!({"id": 1, "result": {}}));
    let refused = "error resuming thread: Fatal error: Failed to initialize session: required MCP servers failed to initialize: orchestrator: handshaking with MCP server failed";
    line(&mut core, 2, json!({"id": 2, "error": {"code": -32603, "message": refused}}));
    assert!(error_state(&drain(&mut core)).is_some_and(|d| d.starts_with(MCP_UNREACHABLE)), "kept, in error");
    // The person resumes the worker; its next prompt resumes the thread first. Still down:
    // the prompt fails closed, definitely not sent.
    core.command(Timestamp(3), command(Send, 2, "k2", T, "next", 1_000_000)).expect("send");
    assert_eq!(methods(&drain(&mut core)), ["thread/resume"]);
    line(&mut core, 4, json!({"id": 3, "error": {"code": -32603, "message": refused}}));
    let effects = drain(&mut core);
    let (code, detail) = failure(&effects).expect("the send failed");
    assert_eq!(code, "HOST_UI_CHANGED");
    assert!(detail.starts_with(MCP_UNREACHABLE), "{detail}");
    assert_eq!(methods(&effects), Vec::<String>::new());
    // Up again: the next prompt goes in once the server is ready and no goal is set.
    core.command(Timestamp(5), command(Send, 3, "k3", T, "again", 1_000_000)).expect("send");
    assert_eq!(methods(&drain(&mut core)), ["thread/resume"]);
    line(&mut core, 6, status("starting"));
    line(&mut core, 7, status("ready"));
    line(&mut core, 8, json!({"id": 4, "result": {"thread": {"id": T}}}));
    assert_eq!(methods(&drain(&mut core)), ["thread/goal/get"]);
    line(&mut core, 9, json!({"id": 5, "result": {"goal": null}}));
    assert_eq!(methods(&drain(&mut core)), ["turn/start"]);
    line(&mut core, 10, json!({"id": 6, "result": {"turn": {"id": "u2", "status": "inProgress"}}}));
    assert!(matches!(
        &drain(&mut core)[..],
        [Effect::Result { outcome: Outcome::Submitted { turn, .. }, .. }] if turn == "u2"
    ));
}
