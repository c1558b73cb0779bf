//! The session rules and the engine conversions, without IO.

use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::model::{ConversationState, ErrorKind};
use engine::op::Operation;
use engine::{
    BindingReport, CommandKind, CommandOutcome, ExecErrorCode, ExecutorCommand, ExecutorInput, JournalEntry,
    JournalPhase, Observation, Timestamp,
};
use executor_protocol::*;
use std::borrow::Cow;
use std::sync::Arc;

fn hello(token: &str) -> String {
    format!(
        r#"{{"v":1,"type":"hello","token":"{token}","executorId":"chrome-1","protocol":1,"capabilities":{{"steering":true}},"concurrencyMax":4,"bindings":[],"journal":[{{"commandId":"cmd-3","phase":"submission-started"}}]}}"#
    )
}

fn error_code(step: &Step) -> Option<ProtocolErrorCode> {
    match step.replies.first() {
        Some(DaemonMessage::ProtocolError(e)) => Some(e.code),
        _ => None,
    }
}

#[test]
fn hello_with_the_right_token_registers_and_becomes_the_engines_hello() {
    let mut s = Session::new(SessionConfig::new("secret"));
    let step = s.on_text(&hello("secret"), 0);
    assert_eq!(step.registered, Some(ExecutorId::new("chrome-1")));
    assert!(!step.close);
    assert!(matches!(step.replies[..], [DaemonMessage::Welcome(_)]));
    let ExecutorInput::Hello { executor, steering, kinds, bindings, journal, turns_max, .. } = &step.inputs[0] else {
        panic!("expected a hello input, got {:?}", step.inputs);
    };
    assert_eq!(executor, &ExecutorId::new("chrome-1"));
    assert!(steering);
    assert_eq!(kinds, &[engine::ExecutorKind::Chatgpt], "a hello without kinds is a browser's");
    assert_eq!(turns_max, &None, "a browser's concurrencyMax is its own queue's, not a cap for the daemon");
    assert!(bindings.is_empty());
    assert_eq!(journal[0].phase, JournalPhase::SubmissionStarted);
    assert_eq!(journal[0].command, CommandId { attempt: AttemptId(3) });
    let heartbeat = s.on_text(r#"{"v":1,"type":"heartbeat"}"#, 1);
    assert!(heartbeat.inputs.is_empty() && heartbeat.replies.is_empty() && !heartbeat.close);
    assert_eq!(s.on_close(true), Some(ExecutorInput::Disconnected { executor: ExecutorId::new("chrome-1") }));
}

#[test]
fn a_wrong_token_closes_without_an_input() {
    let mut s = Session::new(SessionConfig::new("secret"));
    let step = s.on_text(&hello("guess"), 0);
    assert_eq!(error_code(&step), Some(ProtocolErrorCode::Unauthorized));
    assert!(step.close && step.inputs.is_empty());
    assert_eq!(s.on_close(true), None);
}

#[test]
fn the_first_message_must_be_hello() {
    let mut s = Session::new(SessionConfig::new("secret"));
    let step = s.on_text(r#"{"v":1,"type":"heartbeat"}"#, 0);
    assert_eq!(error_code(&step), Some(ProtocolErrorCode::HelloRequired));
    assert!(step.close);
    let mut s = Session::new(SessionConfig::new("secret"));
    let step = s.on_text("garbage", 0);
    assert_eq!(error_code(&step), Some(ProtocolErrorCode::HelloRequired));
    assert!(step.close);
}

#[test]
fn garbage_after_hello_is_reported_and_the_connection_stays() {
    let mut s = Session::new(SessionConfig::new("secret"));
    s.on_text(&hello("secret"), 0);
    for junk in ["garbage", "{}", r#"{"v":1,"type":"nope"}"#, r#"{"v":1,"type":"conversation.state","workerId":"x"}"#] {
        let step = s.on_text(junk, 1);
        assert_eq!(error_code(&step), Some(ProtocolErrorCode::Malformed), "{junk}");
        assert!(!step.close && step.inputs.is_empty());
    }
    let step = s.on_text(&hello("secret"), 2);
    assert_eq!(error_code(&step), Some(ProtocolErrorCode::DuplicateHello));
    let step = s.on_text(r#"{"v":2,"type":"heartbeat"}"#, 3);
    assert_eq!(error_code(&step), Some(ProtocolErrorCode::UnsupportedVersion));
    assert!(step.close);
}

#[test]
fn an_oversize_frame_closes() {
    let mut config = SessionConfig::new("secret");
    config.message_bytes_max = 64;
    let mut s = Session::new(config);
    let step = s.on_text(&"x".repeat(65), 0);
    assert_eq!(error_code(&step), Some(ProtocolErrorCode::TooLarge));
    assert!(step.close);
}

#[test]
fn the_rate_cap_drops_messages_over_the_burst_and_refills_with_time() {
    let mut config = SessionConfig::new("secret");
    config.messages_burst_max = 3;
    config.messages_per_second_max = 1;
    let mut s = Session::new(config);
    s.on_text(&hello("secret"), 0);
    s.on_text(r#"{"v":1,"type":"heartbeat"}"#, 0);
    s.on_text(r#"{"v":1,"type":"heartbeat"}"#, 0);
    let step = s.on_text(r#"{"v":1,"type":"heartbeat"}"#, 0);
    assert_eq!(error_code(&step), Some(ProtocolErrorCode::RateLimited));
    assert!(!step.close);
    let step = s.on_text(r#"{"v":1,"type":"heartbeat"}"#, 1_000);
    assert_eq!(error_code(&step), None);
}

#[test]
fn a_replaced_connection_reports_no_disconnect() {
    let mut s = Session::new(SessionConfig::new("secret"));
    s.on_text(&hello("secret"), 0);
    assert_eq!(s.on_close(false), None);
}

#[test]
fn states_results_and_bindings_become_engine_inputs() {
    let mut s = Session::new(SessionConfig::new("secret"));
    s.on_text(&hello("secret"), 0);
    let x = ExecutorId::new("chrome-1");
    let step = s.on_text(
        r#"{"v":1,"type":"conversation.state","workerId":"wrk-2","state":"error","errorKind":"delivery_timeout","seq":9}"#,
        1,
    );
    assert_eq!(
        step.inputs,
        vec![ExecutorInput::State {
            executor: x.clone(),
            worker: WorkerId(2),
            observation: Observation {
                state: ConversationState::Error(ErrorKind::DeliveryTimeout),
                seq: 9,
                block: None,
                until: None,
                detail: None,
                approval: None,
                retry: None,
            },
        }]
    );
    let step = s.on_text(
        r#"{"v":1,"type":"command.result","commandId":"cmd-4","outcome":{"status":"failed","code":"SOMETHING_NEW","detail":"d"}}"#,
        2,
    );
    assert_eq!(
        step.inputs,
        vec![ExecutorInput::Result {
            executor: x.clone(),
            command: CommandId { attempt: AttemptId(4) },
            outcome: CommandOutcome::Failed {
                code: ExecErrorCode::Other(Arc::from("SOMETHING_NEW")),
                detail: "d".into()
            },
        }]
    );
    let step =
        s.on_text(r#"{"v":1,"type":"binding","workerId":"wrk-2","conversationUrl":"https://c/1","open":false}"#, 3);
    assert_eq!(
        step.inputs,
        vec![ExecutorInput::Binding {
            executor: x,
            report: BindingReport {
                worker: WorkerId(2),
                conversation: Arc::from("https://c/1"),
                open: false,
                observation: None
            },
        }]
    );
}

#[test]
fn engine_types_round_trip_through_the_wire_types() {
    let command = ExecutorCommand {
        executor: ExecutorId::new("chrome-1"),
        id: CommandId { attempt: AttemptId(7) },
        idempotency_key: "wrk-1/exe-7".into(),
        worker: WorkerId(1),
        attempt: AttemptId(7),
        kind: CommandKind::Steer,
        conversation: Arc::from("https://c/1"),
        prompt: "keep going".into(),
        prompt_version: Cow::Borrowed("v3"),
        deadline: Timestamp(1_700_000_000_000),
        executor_kind: engine::ExecutorKind::Chatgpt,
        workspace: None,
        approval: None,
    };
    let text = encode(&DaemonMessage::Command(CommandWire::from(&command)));
    let DaemonMessage::Command(wire) = decode_daemon(&text, MESSAGE_BYTES_MAX).unwrap() else { panic!("{text}") };
    assert_eq!(wire.into_engine(command.executor.clone()), command);

    let states = [
        ConversationState::Unknown,
        ConversationState::Ready,
        ConversationState::Generating,
        ConversationState::Idle,
        ConversationState::Closed,
        ConversationState::Error(ErrorKind::DeliveryTimeout),
        ConversationState::Error(ErrorKind::ConversationFull),
        ConversationState::Error(ErrorKind::HostUiChanged),
        ConversationState::Error(ErrorKind::UsageLimit),
        ConversationState::Error(ErrorKind::LoginRequired),
        ConversationState::Error(ErrorKind::Generic),
    ];
    for state in states {
        let o = Observation {
            state,
            seq: 3,
            block: Some("b".into()),
            until: None,
            detail: None,
            approval: None,
            retry: None,
        };
        assert_eq!(Observation::from(ObservationWire::from(&o)), o);
        assert_eq!(StateWire::new(WorkerId(1), &o).observation(), o);
    }
    for phase in
        [JournalPhase::Received, JournalPhase::SubmissionStarted, JournalPhase::Submitted, JournalPhase::Completed]
    {
        let j = JournalEntry { command: CommandId { attempt: AttemptId(2) }, phase, state_seq: 4, conversation: None };
        assert_eq!(JournalEntry::from(JournalWire::from(&j)), j);
    }
    let outcomes = [
        CommandOutcome::Accepted,
        CommandOutcome::Submitted { state_seq: 5, conversation: Some(Arc::from("https://c/2")) },
        CommandOutcome::Failed { code: ExecErrorCode::AmbiguousSubmission, detail: "restart".into() },
        CommandOutcome::Failed { code: ExecErrorCode::Cancelled, detail: String::new() },
    ];
    for o in outcomes {
        assert_eq!(CommandOutcome::from(OutcomeWire::from(&o)), o);
    }
    let b = BindingReport {
        worker: WorkerId(1),
        conversation: Arc::from("https://c/1"),
        open: true,
        observation: Some(Observation {
            state: ConversationState::Idle,
            seq: 1,
            block: None,
            until: None,
            detail: None,
            approval: None,
            retry: None,
        }),
    };
    assert_eq!(BindingReport::from(BindingWire::from(&b)), b);
}

#[test]
fn a_bad_executor_id_or_protocol_in_hello_closes() {
    for (id, protocol, code) in [
        ("", 1, ProtocolErrorCode::InvalidExecutorId),
        ("has space", 1, ProtocolErrorCode::InvalidExecutorId),
        (&"x".repeat(129)[..], 1, ProtocolErrorCode::InvalidExecutorId),
        ("chrome-1", 2, ProtocolErrorCode::UnsupportedVersion),
    ] {
        let mut s = Session::new(SessionConfig::new("secret"));
        let text = format!(
            r#"{{"v":1,"type":"hello","token":"secret","executorId":"{id}","protocol":{protocol},"capabilities":{{"steering":false}},"concurrencyMax":1,"bindings":[],"journal":[]}}"#
        );
        let step = s.on_text(&text, 0);
        assert_eq!(error_code(&step), Some(code), "{id:?} {protocol}");
        assert!(step.close && step.inputs.is_empty() && step.registered.is_none());
        assert!(s.is_closed());
    }
}

#[test]
fn operator_actions_become_operations_or_invalid_argument() {
    let mut s = Session::new(SessionConfig::new("secret"));
    s.on_text(&hello("secret"), 0);
    let step = s.on_text(
        r#"{"v":1,"type":"operator.action","actionId":"a","action":"stop_run","runId":"run-2","text":"done"}"#,
        1,
    );
    assert_eq!(
        step.operations,
        vec![("a".to_string(), engine::op::Operation::RunCancel { run: engine::ids::RunId(2), reason: "done".into() })]
    );
    let step = s.on_text(r#"{"v":1,"type":"operator.action","actionId":"b","action":"pause_now"}"#, 2);
    assert!(step.operations.is_empty());
    match &step.replies[..] {
        [DaemonMessage::OperatorResult(r)] => {
            assert_eq!((r.action_id.as_str(), r.ok), ("b", false));
            assert_eq!(r.error.as_ref().map(|e| e.code.as_str()), Some("INVALID_ARGUMENT"));
        }
        other => panic!("{other:?}"),
    }
    let step =
        s.on_text(r#"{"v":1,"type":"operator.action","actionId":"c","action":"launch_rockets","workerId":"wrk-1"}"#, 3);
    assert_eq!(error_code(&step), Some(ProtocolErrorCode::Malformed));
}

#[test]
fn operator_queries_become_queries_or_invalid_argument() {
    let mut s = Session::new(SessionConfig::new("secret"));
    let before =
        s.on_text(r#"{"v":1,"type":"operator.query","queryId":"q","query":"worker_events","workerId":"wrk-1"}"#, 0);
    assert_eq!(error_code(&before), Some(ProtocolErrorCode::HelloRequired));
    let mut s = Session::new(SessionConfig::new("secret"));
    s.on_text(&hello("secret"), 0);
    let step = s.on_text(
        r#"{"v":1,"type":"operator.query","queryId":"q-1","query":"worker_attempts","workerId":"wrk-7","afterSequence":3,"limit":20}"#,
        1,
    );
    let attempts = Query::WorkerAttempts { worker: WorkerId(7), after_sequence: 3, limit: 20 };
    assert_eq!((step.queries, step.replies, step.inputs), (vec![("q-1".to_string(), attempts)], vec![], vec![]));
    let step =
        s.on_text(r#"{"v":1,"type":"operator.query","queryId":"q-2","query":"worker_attempts","workerId":"wrk-7"}"#, 2);
    let defaults = Query::WorkerAttempts { worker: WorkerId(7), after_sequence: 0, limit: 100 };
    assert_eq!(step.queries, vec![("q-2".to_string(), defaults)]);
    let step =
        s.on_text(r#"{"v":1,"type":"operator.query","queryId":"q-3","query":"worker_events","workerId":"wrk-7"}"#, 3);
    assert_eq!(step.queries, vec![("q-3".to_string(), Query::WorkerEvents { worker: WorkerId(7) })]);
    for (text, field) in [
        (
            r#"{"v":1,"type":"operator.query","queryId":"q-4","query":"worker_events","workerId":"worker-7"}"#,
            "workerId",
        ),
        (r#"{"v":1,"type":"operator.query","queryId":"q-4","query":"worker_attempts"}"#, "workerId"),
        (
            r#"{"v":1,"type":"operator.query","queryId":"q-4","query":"worker_events","workerId":"wrk-7","limit":5}"#,
            "limit",
        ),
    ] {
        let step = s.on_text(text, 4);
        assert!(step.queries.is_empty(), "{text}");
        match &step.replies[..] {
            [DaemonMessage::OperatorData(d)] => {
                assert_eq!((d.query_id.as_str(), d.ok, d.data.is_none()), ("q-4", false, true), "{text}");
                let error = d.error.as_ref().expect("an error");
                assert_eq!(error.code, "INVALID_ARGUMENT", "{text}");
                assert!(error.message.contains(field), "{text}: {}", error.message);
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    let unknown =
        s.on_text(r#"{"v":1,"type":"operator.query","queryId":"q-5","query":"all_secrets","workerId":"wrk-1"}"#, 5);
    assert_eq!(error_code(&unknown), Some(ProtocolErrorCode::Malformed));
    let long_id = format!(
        r#"{{"v":1,"type":"operator.query","queryId":"{}","query":"worker_events","workerId":"wrk-1"}}"#,
        "q".repeat(65)
    );
    let long = s.on_text(&long_id, 6);
    assert_eq!(error_code(&long), Some(ProtocolErrorCode::Malformed));
    assert!(!long.close && !s.is_closed(), "a refused query leaves the connection open");
}

/// A session after a hello that set `capabilities.operator` (or not).
fn operator_session(operator: bool) -> Session {
    let mut s = Session::new(SessionConfig::new("secret"));
    let text = hello("secret").replace(r#""steering":true"#, &format!(r#""steering":true,"operator":{operator}"#));
    assert!(s.on_text(&text, 0).registered.is_some());
    s
}

/// The one reply's error code and message, of an `operator.result` or `operator.data`.
fn refusal(step: &Step) -> (String, String) {
    let error = match &step.replies[..] {
        [DaemonMessage::OperatorResult(r)] if !r.ok => r.error.clone(),
        [DaemonMessage::OperatorData(d)] if !d.ok => d.error.clone(),
        other => panic!("one refusal expected: {other:?}"),
    };
    let error = error.expect("an error");
    (error.code, error.message)
}

const GRANT: &str = "grt-3f3f3f3f3f3f";

#[test]
fn oauth_actions_are_validated_and_only_for_operator_executors() {
    let mut s = operator_session(true);
    let action = |id: &str, rest: &str| format!(r#"{{"v":1,"type":"operator.action","actionId":"{id}",{rest}}}"#);
    // Codes are normalized (case, dash) before they reach the desk.
    let step = s.on_text(&action("a", r#""action":"oauth_approve","code":"k7qh2mpd""#), 1);
    let code = OAuthCode::parse("K7QH-2MPD").expect("a code");
    assert_eq!(code.as_str(), "K7QH-2MPD");
    assert_eq!(step.grant_actions, vec![("a".to_string(), GrantAction::Approve(code.clone()))]);
    assert!(step.operations.is_empty() && step.replies.is_empty());
    let step = s.on_text(&action("b", r#""action":"oauth_deny","code":"K7QH-2MPD""#), 2);
    assert_eq!(step.grant_actions, vec![("b".to_string(), GrantAction::Deny(code))]);
    let step = s.on_text(&action("c", &format!(r#""action":"oauth_revoke","grantId":"{GRANT}""#)), 3);
    let grant = GrantId::parse(GRANT).expect("a grant id");
    assert_eq!(step.grant_actions, vec![("c".to_string(), GrantAction::Revoke(grant))]);
    // Bad inputs: INVALID_ARGUMENT naming the field, never quoting the code.
    for (rest, field) in [
        (r#""action":"oauth_approve""#, "code"),
        (r#""action":"oauth_approve","code":"K7QH-2MP""#, "code"),
        (r#""action":"oauth_deny","code":"K7QH_2MPD""#, "code"),
        (r#""action":"oauth_approve","code":"K7QH-2MPD-X""#, "code"),
        (r#""action":"oauth_approve","code":"ÄÄQH-2MPD""#, "code"),
        (r#""action":"oauth_approve","code":"aÄÄÄb""#, "code"),
        (r#""action":"oauth_revoke""#, "grantId"),
        (r#""action":"oauth_revoke","grantId":"grt-xyz""#, "grantId"),
        (r#""action":"oauth_revoke","grantId":"cli_3f3f""#, "grantId"),
        (r#""action":"oauth_approve","code":"K7QH-2MPD","workerId":"wrk-1""#, "workerId"),
    ] {
        let step = s.on_text(&action("d", rest), 4);
        assert!(step.grant_actions.is_empty(), "{rest}");
        let (code, message) = refusal(&step);
        assert_eq!(code, "INVALID_ARGUMENT", "{rest}");
        assert!(message.contains(field), "{rest}: {message}");
        assert!(!message.contains("K7QH") && !message.contains("2MP"), "{rest}: the code is quoted: {message}");
    }
    // An executor without the operator UI may not decide.
    let mut plain = operator_session(false);
    let step = plain.on_text(&action("e", r#""action":"oauth_approve","code":"K7QH-2MPD""#), 1);
    assert!(step.grant_actions.is_empty());
    assert_eq!(refusal(&step).0, oauth_codes::OPERATOR_REQUIRED);
    // Its other operator actions stay as they were.
    let step = plain.on_text(&action("f", r#""action":"pause_now","workerId":"wrk-1""#), 2);
    assert_eq!(step.operations.len(), 1);
}

#[test]
fn run_start_and_worker_attach_bind_a_tab_only_for_operator_executors() {
    let action = |id: &str, rest: &str| format!(r#"{{"v":1,"type":"operator.action","actionId":"{id}",{rest}}}"#);
    let start = r#""action":"run_start","taskName":"Billing","rootConversationName":"Billing root","autoResume":false,"deadMan":"notify","conversationUrl":"https://chatgpt.com/c/abc""#;
    let mut s = operator_session(true);
    let step = s.on_text(&action("a", start), 1);
    let [
        (
            id,
            Operation::RunStart {
                task_name, root_conversation_name, context, default_policy, root_conversation, ..
            },
        ),
    ] = &step.operations[..]
    else {
        panic!("one run_start expected: {step:?}");
    };
    assert_eq!((id.as_str(), task_name.as_str(), root_conversation_name.as_str()), ("a", "Billing", "Billing root"));
    assert_eq!((context.as_str(), root_conversation.as_deref()), ("", Some("https://chatgpt.com/c/abc")));
    assert_eq!(default_policy.as_ref().and_then(|p| p.mode), Some(engine::policy::Mode::Manual));
    assert_eq!(default_policy.as_ref().and_then(|p| p.dead_man), Some(engine::deadman::DeadManMode::Notify));
    let attach = r#""action":"worker_attach","workerId":"wrk-3","conversationUrl":"https://chatgpt.com/c/def""#;
    let step = s.on_text(&action("b", attach), 2);
    assert!(
        matches!(&step.operations[..], [(_, Operation::WorkerAttach { conversation, .. })] if conversation == "https://chatgpt.com/c/def")
    );
    for (rest, field) in [
        (r#""action":"run_start","rootConversationName":"R","autoResume":true"#, "taskName"),
        (r#""action":"run_start","taskName":"T","autoResume":true"#, "rootConversationName"),
        (r#""action":"run_start","taskName":"T","rootConversationName":"R""#, "autoResume"),
        (
            r#""action":"run_start","taskName":"T","rootConversationName":"R","autoResume":true,"runId":"run-1""#,
            "runId",
        ),
        (r#""action":"worker_attach","workerId":"wrk-3""#, "conversationUrl"),
        (r#""action":"worker_attach","conversationUrl":"https://chatgpt.com/c/def""#, "workerId"),
    ] {
        let step = s.on_text(&action("c", rest), 3);
        assert!(step.operations.is_empty(), "{rest}");
        let (code, message) = refusal(&step);
        assert_eq!(code, "INVALID_ARGUMENT", "{rest}");
        assert!(message.contains(field), "{rest}: {message}");
    }
    // A mode that does not exist is a malformed frame, as an unknown action is.
    let odd = s.on_text(
        &action(
            "e",
            r#""action":"run_start","taskName":"T","rootConversationName":"R","autoResume":true,"deadMan":"often""#,
        ),
        4,
    );
    assert_eq!(error_code(&odd), Some(ProtocolErrorCode::Malformed));
    assert!(odd.operations.is_empty() && !odd.close);
    let mut plain = operator_session(false);
    for rest in [start, attach] {
        let step = plain.on_text(&action("d", rest), 1);
        assert!(step.operations.is_empty(), "{rest}");
        assert_eq!(refusal(&step).0, oauth_codes::OPERATOR_REQUIRED, "{rest}");
    }
}

#[test]
fn the_oauth_pending_query_takes_no_arguments_and_needs_an_operator_executor() {
    let mut s = operator_session(true);
    let step = s.on_text(r#"{"v":1,"type":"operator.query","queryId":"q-1","query":"oauth_pending"}"#, 1);
    assert_eq!(step.queries, vec![("q-1".to_string(), Query::OauthPending)]);
    let step =
        s.on_text(r#"{"v":1,"type":"operator.query","queryId":"q-2","query":"oauth_pending","workerId":"wrk-1"}"#, 2);
    assert_eq!(refusal(&step).0, "INVALID_ARGUMENT");
    let mut plain = operator_session(false);
    let step = plain.on_text(r#"{"v":1,"type":"operator.query","queryId":"q-3","query":"oauth_pending"}"#, 1);
    assert!(step.queries.is_empty());
    assert_eq!(refusal(&step).0, oauth_codes::OPERATOR_REQUIRED);
}

#[test]
fn the_oauth_answer_decodes_as_its_own_shape_and_holds_no_secret_field() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../docs/protocol/fixtures/daemon.operator.data.oauth.json"),
    )
    .expect("the fixture");
    let DaemonMessage::OperatorData(data) = decode_daemon(text.trim_end(), MESSAGE_BYTES_MAX).expect("decodes") else {
        panic!("operator.data")
    };
    let Some(OperatorData::OAuth(out)) = data.data else { panic!("the OAuth shape: {:?}", data.data) };
    assert!(out.enabled);
    assert_eq!((out.pending.len(), out.grants.len()), (1, 1));
    assert!(out.pending[0].self_registered);
    for forbidden in ["token", "sha256", "hash", "handle", "verifier", "secret"] {
        assert!(!text.to_lowercase().contains(forbidden), "the OAuth answer names {forbidden}");
    }
}

/// A CLI executor's `hello` with these `accounts` (JSON), running `codex` workers only.
fn cli_hello(accounts: &str) -> String {
    format!(
        r#"{{"v":1,"type":"hello","token":"secret","executorId":"build-1","protocol":1,"capabilities":{{"steering":true,"kinds":["codex"]}},"concurrencyMax":4,"bindings":[],"journal":[],"accounts":{accounts}}}"#
    )
}

#[test]
fn a_hellos_accounts_reach_the_engine_with_their_caps() {
    let mut s = Session::new(SessionConfig::new("secret"));
    let step = s.on_text(&cli_hello(r#"[{"kind":"codex","name":"team","turnsMax":6}]"#), 0);
    assert!(matches!(step.replies[..], [DaemonMessage::Welcome(_)]), "{:?}", step.replies);
    let ExecutorInput::Hello { accounts, turns_max, .. } = &step.inputs[0] else {
        panic!("expected a hello input, got {:?}", step.inputs);
    };
    assert_eq!(turns_max, &Some(4));
    let expected = engine::AccountCap { kind: engine::ExecutorKind::Codex, name: "team".into(), turns_max: 6 };
    assert_eq!(accounts, &[expected]);
    // Without the field: no account, and the hello is a browser's as before.
    let mut s = Session::new(SessionConfig::new("secret"));
    let step = s.on_text(&hello("secret"), 0);
    let ExecutorInput::Hello { accounts, .. } = &step.inputs[0] else { panic!("a hello") };
    assert!(accounts.is_empty());
}

#[test]
fn accounts_named_wrongly_close_the_connection_with_invalid_account_and_no_input() {
    let cases = [
        (r#"[{"kind":"claude","name":"team","turnsMax":6}]"#, "claude workers, which this executor does not run"),
        (r#"[{"kind":"chatgpt","name":"team","turnsMax":6}]"#, "chatgpt workers"),
        (r#"[{"kind":"codex","name":"a team","turnsMax":6}]"#, "printable ASCII"),
        (r#"[{"kind":"codex","name":"","turnsMax":6}]"#, "printable ASCII"),
        (r#"[{"kind":"codex","name":"team","turnsMax":0}]"#, "turnsMax 0 is not 1 to"),
        (
            r#"[{"kind":"codex","name":"a","turnsMax":1},{"kind":"codex","name":"b","turnsMax":1}]"#,
            "two accounts for codex workers",
        ),
    ];
    for (accounts, why) in cases {
        let mut s = Session::new(SessionConfig::new("secret"));
        let step = s.on_text(&cli_hello(accounts), 0);
        assert_eq!(error_code(&step), Some(ProtocolErrorCode::InvalidAccount), "{accounts}");
        let Some(DaemonMessage::ProtocolError(e)) = step.replies.first() else { panic!("an error") };
        assert!(e.detail.contains(why), "{accounts}: {}", e.detail);
        assert!(step.close && step.inputs.is_empty() && step.registered.is_none(), "{accounts}");
    }
}

#[test]
fn a_heartbeat_is_answered_only_when_the_hello_asked_for_it() {
    let asked = r#"{"v":1,"type":"hello","token":"secret","executorId":"chrome-1","protocol":1,"capabilities":{"steering":true,"heartbeatEcho":true},"concurrencyMax":4,"bindings":[],"journal":[]}"#;
    let mut s = Session::new(SessionConfig::new("secret"));
    assert!(matches!(s.on_text(asked, 0).replies[..], [DaemonMessage::Welcome(_)]));
    let step = s.on_text(r#"{"v":1,"type":"heartbeat"}"#, 1);
    assert_eq!(step.replies, [DaemonMessage::Heartbeat {}]);
    assert!(step.inputs.is_empty() && !step.close);
    assert_eq!(encode(&DaemonMessage::Heartbeat {}), r#"{"v":1,"type":"heartbeat"}"#);
    // A hello that did not ask (every executor before it, the CLI executor) gets no echo.
    let mut s = Session::new(SessionConfig::new("secret"));
    s.on_text(&hello("secret"), 0);
    let step = s.on_text(r#"{"v":1,"type":"heartbeat"}"#, 1);
    assert!(step.replies.is_empty() && step.inputs.is_empty() && !step.close);
}
