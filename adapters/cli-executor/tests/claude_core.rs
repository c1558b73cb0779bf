//! The Claude core's rules on small hand-written stream-json lines (shapes taken from the
//! 2.1.332 recordings): garbled input, foreign turns, held sends, deadlines, crashes.

mod claude_support;

use claude_support::{CREATE, SESSION, command, core, drain};
use cli_executor::base::limits::{CLAUDE_ACK_TIMEOUT_MS, LINE_BYTES_MAX};
use cli_executor::claude::nonce::nonce_uuid;
use cli_executor::claude::{Claude, Effect, Outcome};
use engine::effect::CommandKind::{Cancel, Close, Create, Inspect, Send, Steer};
use engine::ids::{AttemptId, CommandId};
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use serde_json::json;

fn lifecycle(key: &str, state: &str) -> String {
    json!({"type": "command_lifecycle", "command_uuid": nonce_uuid(key), "state": state, "session_id": SESSION})
        .to_string()
}

fn result(uuids: &[&str], is_error: bool, text: &str) -> String {
    let uuids: Vec<String> = uuids.iter().map(|k| nonce_uuid(k)).collect();
    json!({"type": "result", "subtype": "success", "is_error": is_error, "result": text, "session_id": SESSION,
           "user_message_uuids": uuids, "result_index": 0, "queued_turn_count": 0})
    .to_string()
}

/// A core whose create (attempt 1) is running its turn.
fn running() -> Claude {
    let mut core = core();
    core.command(Timestamp(0), command(Create, 1, CREATE, "", "go", 100_000)).expect("create");
    core.line(Timestamp(1), &lifecycle(CREATE, "queued")).expect("queued");
    core.line(Timestamp(2), &lifecycle(CREATE, "started")).expect("started");
    core.line(Timestamp(3), &json!({"type": "system", "subtype": "init", "session_id": SESSION}).to_string())
        .expect("init");
    drain(&mut core);
    core
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

fn states(effects: &[Effect]) -> Vec<ConversationState> {
    effects
        .iter()
        .filter_map(|e| if let Effect::State { report, .. } = e { Some(report.state) } else { None })
        .collect()
}

fn writes(effects: &[Effect]) -> usize {
    effects.iter().filter(|e| matches!(e, Effect::Prompt { .. })).count()
}

#[test]
fn garbled_and_oversized_lines_are_typed_errors_and_change_nothing() {
    let mut core = running();
    let long = "x".repeat(LINE_BYTES_MAX + 1);
    for (line, code) in [
        ("not json", "MALFORMED"),
        ("[1, 2]", "MALFORMED"),
        (r#"{"no": "type"}"#, "MALFORMED"),
        (r#"{"type": 7}"#, "MALFORMED"),
        ("{\"type\": \"result\"", "MALFORMED"),
        (long.as_str(), "LINE_TOO_LONG"),
    ] {
        assert_eq!(core.line(Timestamp(5), line).map_err(|e| e.code()), Err(code), "{}", &line[..line.len().min(40)]);
    }
    // Odd but well-formed lines are ignored, not errors.
    for line in [
        r#"{"type": "stream_event"}"#,
        r#"{"type": "command_lifecycle"}"#,
        r#"{"type": "result", "user_message_uuids": 3}"#,
    ] {
        core.line(Timestamp(5), line).expect("tolerated");
    }
    let effects = drain(&mut core);
    // The last one was a result (of our turn): it ended.
    assert_eq!(states(&effects), [ConversationState::Idle]);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Foreign { .. })));
}

#[test]
fn a_send_during_a_turn_waits_for_its_result() {
    let mut core = running();
    core.command(Timestamp(10), command(Send, 2, "k2", SESSION, "next", 100_000)).expect("held");
    assert_eq!(writes(&drain(&mut core)), 0, "held: a line now would be a steer");
    core.command(Timestamp(11), command(Send, 3, "k3", SESSION, "more", 100_000)).expect("busy");
    assert_eq!(failed(&drain(&mut core)), [(3, "COMPOSER_BUSY")]);
    core.line(Timestamp(20), &result(&[CREATE], false, "done")).expect("result");
    let effects = drain(&mut core);
    assert_eq!(states(&effects), [ConversationState::Idle]);
    assert_eq!(writes(&effects), 1, "the held send goes in at idle");
    core.line(Timestamp(21), &lifecycle("k2", "queued")).expect("queued");
    assert!(matches!(
        &drain(&mut core)[..],
        [Effect::Result { outcome: Outcome::Submitted { duplicate: false, .. }, .. }]
    ));
}

#[test]
fn cancel_and_deadline_of_a_held_send() {
    let mut core = running();
    core.command(Timestamp(10), command(Send, 2, "k2", SESSION, "next", 50)).expect("held");
    core.command(Timestamp(11), command(Cancel, 2, "", SESSION, "", 0)).expect("cancel");
    assert_eq!(failed(&drain(&mut core)), [(2, "CANCELLED")]);
    core.command(Timestamp(12), command(Send, 3, "k3", SESSION, "next", 50)).expect("held");
    assert_eq!(core.next_deadline(), Some(Timestamp(51)));
    core.tick(Timestamp(51));
    assert_eq!(failed(&drain(&mut core)), [(3, "DEADLINE_EXCEEDED")]);
}

#[test]
fn an_unacknowledged_line_is_ambiguous_never_resent() {
    let mut core = core();
    core.command(Timestamp(0), command(Create, 1, CREATE, "", "go", 100_000)).expect("create");
    drain(&mut core);
    assert_eq!(core.next_deadline(), Some(Timestamp(CLAUDE_ACK_TIMEOUT_MS)));
    core.tick(Timestamp(CLAUDE_ACK_TIMEOUT_MS - 1));
    assert!(drain(&mut core).is_empty());
    core.tick(Timestamp(CLAUDE_ACK_TIMEOUT_MS));
    let effects = drain(&mut core);
    assert_eq!(failed(&effects), [(1, "AMBIGUOUS_SUBMISSION")]);
    assert_eq!(writes(&effects), 0);
}

#[test]
fn a_crash_mid_turn_is_an_error_and_unacknowledged_lines_wait_for_the_transcript() {
    let mut core = running();
    core.command(Timestamp(10), command(Steer, 2, "k2", SESSION, "steer", 100_000)).expect("steer");
    drain(&mut core);
    core.exited(Timestamp(20), None, "");
    let effects = drain(&mut core);
    assert_eq!(failed(&effects), [], "settled by the shell from the transcript, not at once");
    let unacked: Vec<(u64, String)> =
        core.unacknowledged().into_iter().map(|(c, _, prompt)| (c.attempt.0, prompt)).collect();
    assert_eq!(unacked, [(2, "steer".to_string())]);
    assert_eq!(states(&effects), [ConversationState::Error(ErrorKind::Generic)]);
    assert!(matches!(effects.last(), Some(Effect::Exited { code: None, refusal: None, .. })));
    core.command(Timestamp(30), command(Send, 3, "k3", SESSION, "x", 100_000)).expect("send");
    core.command(Timestamp(30), command(Inspect, 3, "", SESSION, "", 100_000)).expect("inspect");
    let effects = drain(&mut core);
    // No child to write into (the shell respawns one first), but the session lives on
    // between children: inspect tells what it showed last, never `closed`.
    assert_eq!(failed(&effects), [(3, "CONVERSATION_CLOSED")]);
    assert_eq!(states(&effects), [ConversationState::Ready]);
}

#[test]
fn a_crashed_childs_lines_are_settled_by_the_transcript_and_an_absent_send_resent_once() {
    use cli_executor::claude::transcript::Found;
    let id = |n| CommandId { attempt: AttemptId(n) };
    let mut core = running();
    for (n, key) in [(2, "k2"), (3, "k3"), (4, "k4")] {
        core.command(Timestamp(10), command(Steer, n, key, SESSION, "go", 100_000)).expect("steer");
    }
    drain(&mut core);
    core.exited(Timestamp(20), None, "");
    drain(&mut core);
    core.settle(id(2), &Found::Sent { merged: false, finished: false });
    core.settle(id(3), &Found::CannotTell { why: "a line is torn" });
    core.settle(id(4), &Found::Absent);
    let effects = drain(&mut core);
    // A steer's turn ended with the crash: an absent steer is not sent into another one.
    assert_eq!(failed(&effects), [(3, "AMBIGUOUS_SUBMISSION"), (4, "DEADLINE_EXCEEDED")]);
    let submitted =
        |e: &Effect| matches!(e, Effect::Result { command, outcome: Outcome::Submitted { .. } } if *command == id(2));
    assert_eq!(effects.iter().filter(|e| submitted(e)).count(), 1, "{effects:?}");
    assert!(core.unacknowledged().is_empty());
    // A send the next child never read: written once more by the child after, never twice.
    core.respawn(Timestamp(30)).expect("respawn");
    core.command(Timestamp(31), command(Send, 5, "k5", SESSION, "go", 100_000)).expect("send");
    assert_eq!(writes(&drain(&mut core)), 1);
    core.exited(Timestamp(40), None, "");
    drain(&mut core);
    core.settle(id(5), &Found::Absent);
    assert!(drain(&mut core).is_empty(), "kept for the next child");
    core.respawn(Timestamp(50)).expect("respawn");
    assert_eq!(writes(&drain(&mut core)), 1, "written again");
    core.exited(Timestamp(60), None, "");
    drain(&mut core);
    core.settle(id(5), &Found::Absent);
    assert_eq!(failed(&drain(&mut core)), [(5, "DEADLINE_EXCEEDED")], "never written a third time");
    assert!(core.unacknowledged().is_empty());
}

#[test]
fn steer_only_into_our_running_turn() {
    let mut core = running();
    core.line(Timestamp(5), &result(&[CREATE], false, "done")).expect("result");
    core.command(Timestamp(6), command(Steer, 2, "k2", SESSION, "late", 100_000)).expect("steer");
    core.command(Timestamp(6), command(Steer, 3, "k3", "another-session", "x", 100_000)).expect("steer");
    assert_eq!(failed(&drain(&mut core)), [(2, "STEERING_UNAVAILABLE"), (3, "CONVERSATION_CLOSED")]);
}

#[test]
fn a_turn_nobody_queued_and_a_stranger_in_a_result_are_foreign() {
    let mut core = running();
    core.line(Timestamp(5), &result(&[CREATE], false, "done")).expect("result");
    drain(&mut core);
    // A Stop hook or a scheduled wake-up: output with no line of ours started.
    core.line(Timestamp(6), &json!({"type": "system", "subtype": "init", "session_id": SESSION}).to_string())
        .expect("init");
    core.line(Timestamp(7), &json!({"type": "assistant", "message": {"content": []}}).to_string()).expect("assistant");
    core.line(Timestamp(8), &result(&["someone-else"], false, "theirs")).expect("result");
    let effects = drain(&mut core);
    let foreign = effects.iter().filter(|e| matches!(e, Effect::Foreign { .. })).count();
    assert_eq!(foreign, 1, "once per turn: {effects:?}");
    assert_eq!(states(&effects), [ConversationState::Generating, ConversationState::Idle]);
    // A lifecycle for a uuid we never sent.
    core.line(Timestamp(9), &lifecycle("someone-else", "started")).expect("started");
    assert!(drain(&mut core).iter().any(|e| matches!(e, Effect::Foreign { uuid: Some(_), .. })));
}

#[test]
fn another_session_id_in_init_fails_closed() {
    let mut core = running();
    core.line(Timestamp(5), &json!({"type": "system", "subtype": "init", "session_id": "not-ours"}).to_string())
        .expect("init");
    assert_eq!(states(&drain(&mut core)), [ConversationState::Error(ErrorKind::HostUiChanged)]);
}

#[test]
fn close_fails_a_held_send_and_closes_stdin() {
    let mut core = running();
    core.command(Timestamp(10), command(Send, 2, "k2", SESSION, "next", 100_000)).expect("held");
    core.command(Timestamp(11), command(Close, 3, "", SESSION, "", 100_000)).expect("close");
    let effects = drain(&mut core);
    assert_eq!(failed(&effects), [(2, "CONVERSATION_CLOSED")]);
    assert!(effects.contains(&Effect::CloseStdin));
    core.line(Timestamp(12), &result(&[CREATE], false, "done")).expect("result");
    core.exited(Timestamp(13), Some(0), "");
    assert_eq!(states(&drain(&mut core)), [ConversationState::Idle, ConversationState::Closed]);
}

#[test]
fn a_second_create_on_one_core_is_refused() {
    let mut core = running();
    core.command(Timestamp(10), command(Create, 2, "other", "", "go", 100_000)).expect("create");
    assert_eq!(failed(&drain(&mut core)), [(2, "COMPOSER_BUSY")]);
}

#[test]
fn a_steer_acknowledged_after_the_turn_ended_is_the_next_turn() {
    use cli_executor::claude::Landed;
    let mut core = running();
    core.command(Timestamp(10), command(Steer, 2, "k2", SESSION, "steer", 100_000)).expect("steer");
    core.line(Timestamp(11), &result(&[CREATE], false, "done")).expect("result");
    core.line(Timestamp(12), &lifecycle("k2", "queued")).expect("queued");
    core.line(Timestamp(13), &lifecycle("k2", "started")).expect("started");
    let effects = drain(&mut core);
    let landed: Vec<&Effect> = effects.iter().filter(|e| matches!(e, Effect::Steered { .. })).collect();
    assert!(matches!(landed[..], [Effect::Steered { landed: Landed::NextTurn, .. }]), "{effects:?}");
    assert_eq!(states(&effects), [ConversationState::Idle, ConversationState::Generating]);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Foreign { .. })));
}

fn init(servers: serde_json::Value) -> String {
    json!({"type": "system", "subtype": "init", "session_id": SESSION, "mcp_servers": servers}).to_string()
}

#[test]
fn an_init_without_the_required_mcp_server_connected_is_mcp_unreachable() {
    use cli_executor::claude::Config;
    use cli_executor::claude::tz::NoZones;
    let config = Config { required_mcp: Some("orchestrator".to_string()), ..Config::unattended() };
    let mut core = Claude::new(config, Box::new(NoZones));
    core.command(Timestamp(0), command(Create, 1, CREATE, "", "go", 100_000)).expect("create");
    core.line(Timestamp(1), &lifecycle(CREATE, "queued")).expect("queued");
    core.line(Timestamp(2), &lifecycle(CREATE, "started")).expect("started");
    drain(&mut core);
    // Recorded 2026-12-02: a server that answered is "connected", one that did not "failed".
    let connected = json!([{"name": "orchestrator", "status": "connected", "source": "dynamic"}]);
    core.line(Timestamp(3), &init(connected)).expect("init");
    assert!(states(&drain(&mut core)).is_empty(), "connected: nothing to say");
    for (servers, why) in [
        (json!([{"name": "orchestrator", "status": "failed", "source": "dynamic"}]), "is failed"),
        (json!([{"name": "other", "status": "connected"}]), "is not listed"),
    ] {
        core.line(Timestamp(4), &init(servers)).expect("init");
        let effects = drain(&mut core);
        let reports: Vec<_> = effects
            .iter()
            .filter_map(|e| if let Effect::State { report, .. } = e { Some(report.clone()) } else { None })
            .collect();
        assert_eq!(reports.len(), 1, "{effects:?}");
        assert_eq!(reports[0].state, ConversationState::Error(ErrorKind::HostUiChanged));
        let detail = reports[0].detail.clone().unwrap_or_default();
        assert!(detail.starts_with("MCP_UNREACHABLE:") && detail.contains(why), "{detail}");
    }
}

#[test]
fn a_child_refused_before_it_started_fails_its_lines_definitely_and_a_new_session_is_forgotten() {
    let mut core = core();
    core.command(Timestamp(0), command(Create, 1, CREATE, "", "go", 100_000)).expect("create");
    // The shell takes the spawn and refuses it: the prompt queued behind it is never written.
    let asked = core.poll_effect();
    assert!(matches!(asked, Some(Effect::Spawn { .. })), "{asked:?}");
    core.not_started("HOST_UI_CHANGED", "MCP_UNREACHABLE: no answer");
    let effects = drain(&mut core);
    assert_eq!(failed(&effects), [(1, "HOST_UI_CHANGED")]);
    assert_eq!(writes(&effects), 0);
    assert_eq!((core.session(), core.has_child(), core.next_deadline()), (None, false, None));
    // A later create starts a session of its own.
    core.command(Timestamp(5), command(Create, 2, "conversation.create:exe-2", "", "go", 100_000)).expect("create");
    assert!(matches!(core.poll_effect(), Some(Effect::Spawn { .. })));

    // A resumed session refused the same way keeps its session for the next try.
    let mut core = running();
    core.line(Timestamp(10), &result(&[CREATE], false, "done")).expect("result");
    core.exited(Timestamp(11), Some(0), "");
    drain(&mut core);
    core.respawn(Timestamp(12)).expect("respawn");
    drain(&mut core);
    core.not_started("HOST_UI_CHANGED", "MCP_UNREACHABLE: no answer");
    assert_eq!((core.session(), core.has_child(), core.is_closed()), (Some(SESSION), false, false));
}

#[test]
fn a_prompt_that_could_not_be_journaled_fails_definitely() {
    let mut core = core();
    core.command(Timestamp(0), command(Create, 1, CREATE, "", "go", 100_000)).expect("create");
    assert_eq!(writes(&drain(&mut core)), 1, "a prompt, for the shell's gate");
    core.unsent(engine::ids::CommandId { attempt: engine::ids::AttemptId(1) }, "the journal is full");
    assert_eq!(failed(&drain(&mut core)), [(1, "HOST_UI_CHANGED")]);
    assert_eq!(core.next_deadline(), None, "nothing waits for an acknowledgment");
}

#[test]
fn a_resume_of_a_session_with_no_transcript_closes_it_and_a_close_is_closed() {
    // Seen 2026-12-02: `--resume <unknown>` answers a result of no turn, then exits 1 with
    // "No conversation found with session ID: <id>".
    let mut core = core();
    core.adopt(claude_support::WORKER, SESSION, &[]);
    core.respawn(Timestamp(0)).expect("respawn");
    core.command(Timestamp(1), command(Send, 2, "k2", SESSION, "next", 100_000)).expect("send");
    drain(&mut core);
    let none = json!({"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": 0,
                      "result": null, "session_id": SESSION,
                      "errors": [format!("No conversation found with session ID: {SESSION}")]});
    core.line(Timestamp(2), &none.to_string()).expect("result");
    assert!(drain(&mut core).is_empty(), "not a turn, not foreign");
    core.exited(Timestamp(3), Some(1), &format!("No conversation found with session ID: {SESSION}\n"));
    let effects = drain(&mut core);
    assert_eq!(failed(&effects), [(2, "CONVERSATION_CLOSED")]);
    assert_eq!(states(&effects), [ConversationState::Closed]);
    assert!(matches!(effects.last(), Some(Effect::Exited { refusal: Some(e), .. }) if e.code() == "SESSION_NOT_FOUND"));
    assert!(core.is_closed());

    let mut core = running();
    core.line(Timestamp(10), &result(&[CREATE], false, "done")).expect("result");
    core.command(Timestamp(11), command(Close, 3, "", SESSION, "", 0)).expect("close");
    assert!(drain(&mut core).contains(&Effect::CloseStdin));
    core.exited(Timestamp(12), Some(0), "");
    assert_eq!(states(&drain(&mut core)), [ConversationState::Closed]);
    assert!(core.is_closed());
}

#[test]
fn a_close_mid_turn_stops_the_child_and_its_exit_is_closed_not_an_error() {
    let mut core = running();
    core.command(Timestamp(10), command(Close, 2, "", SESSION, "", 100_000)).expect("close");
    let effects = drain(&mut core);
    assert_eq!(effects, [Effect::CloseStdin, Effect::Stop], "the turn is not waited for");
    core.exited(Timestamp(11), None, "");
    let effects = drain(&mut core);
    assert_eq!(states(&effects), [ConversationState::Closed]);
    assert!(core.is_closed() && !core.has_child());
    core.command(Timestamp(12), command(Close, 3, "", SESSION, "", 100_000)).expect("close again");
    assert!(drain(&mut core).is_empty(), "a repeated close changes nothing");
    core.command(Timestamp(13), command(Send, 4, "k4", SESSION, "more", 100_000)).expect("send");
    assert_eq!(failed(&drain(&mut core)), [(4, "CONVERSATION_CLOSED")]);
}

#[test]
fn an_idle_close_lets_the_child_end_and_a_close_between_children_closes_at_once() {
    let mut core = running();
    core.line(Timestamp(4), &result(&[CREATE], false, "done")).expect("result");
    drain(&mut core);
    core.command(Timestamp(10), command(Close, 2, "", SESSION, "", 100_000)).expect("close");
    assert_eq!(drain(&mut core), [Effect::CloseStdin], "idle: it ends at end of input");

    let mut core = running();
    core.exited(Timestamp(10), Some(1), "crash");
    drain(&mut core);
    assert!(!core.is_closed(), "a crash leaves the session to resume");
    core.command(Timestamp(11), command(Close, 2, "", SESSION, "", 100_000)).expect("close");
    assert_eq!(states(&drain(&mut core)), [ConversationState::Closed]);
    assert!(core.is_closed(), "never resumed");
}
