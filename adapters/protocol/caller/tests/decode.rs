//! Tool arguments decode strictly and name the offending field; replies keep stable names.

use caller_protocol::*;
use engine::Operation;
use engine::ids::{RunId, WorkerId};
use engine::model::DependencyCondition;
use engine::policy::Mode;
use serde_json::json;

fn err<T: serde::de::DeserializeOwned + std::fmt::Debug>(v: serde_json::Value) -> ErrorOut {
    decode::<T>(v).expect_err("must not decode")
}

#[test]
fn wrong_types_name_the_field() {
    let e = err::<WorkerSpawnArgs>(json!({
        "runId": "run-1", "name": "/root/a", "taskSummary": "t",
        "assignment": { "objective": 5 }
    }));
    assert_eq!(e.code, "INVALID_ARGUMENT");
    assert!(e.message.starts_with("assignment.objective:"), "{}", e.message);

    let e = err::<WorkerPauseArgs>(json!({ "workerId": "wrk-1", "afterCurrentTurn": "yes" }));
    assert!(e.message.starts_with("afterCurrentTurn:"), "{}", e.message);
}

#[test]
fn missing_and_unknown_fields_are_named() {
    let e = err::<WorkerProgressArgs>(json!({ "summary": "x" }));
    assert!(e.message.contains("workerId"), "{}", e.message);
    let e = err::<WorkerProgressArgs>(json!({ "workerId": "wrk-1", "summary": "x", "sumary": "typo" }));
    assert!(e.message.contains("sumary"), "{}", e.message);
    let e = err::<RunListArgs>(json!([1, 2]));
    assert_eq!(e.code, "INVALID_ARGUMENT");
}

#[test]
fn absent_arguments_are_an_empty_object() {
    let a: RunListArgs = decode(serde_json::Value::Null).expect("defaults");
    assert!(!a.include_terminal);
}

#[test]
fn malformed_ids_name_the_field_without_echoing_the_value() {
    let a: WorkerIdArgs = decode(json!({ "workerId": "run-1" })).expect("decodes");
    let e = a.operation(WorkerVerb::Get).expect_err("wrong prefix");
    assert_eq!(e.message, "workerId: expected an id of the form wrk-<number>");
    let huge = "x".repeat(100_000);
    let a: MessageSendArgs = decode(json!({ "from": huge, "to": "wrk-1", "body": "b" })).expect("decodes");
    let e = a.to_operation().expect_err("bad sender");
    assert!(e.message.starts_with("from:") && e.message.len() < 600, "{}", e.message.len());
    let e = err::<WorkerIdArgs>(json!({ "workerId": huge.len() }));
    assert!(e.message.len() < 600);
    let e = err::<RunIdArgs>(json!({ "runId": [huge] }));
    assert!(e.message.len() < 600, "error messages are bounded");
}

#[test]
fn arguments_convert_into_operations() {
    let a: WorkerSpawnArgs = decode(json!({
        "runId": "run-3", "name": "/root/api", "taskSummary": "Build the API",
        "assignment": { "objective": "o", "acceptanceCriteria": ["tests pass"] },
        "policy": { "mode": "auto", "idleGraceMs": 0, "stallPauseAfterNoProgressMs": null },
        "start": false
    }))
    .expect("decodes");
    let Operation::WorkerSpawn(spawn) = a.to_operation().expect("converts") else { panic!("spawn") };
    assert_eq!(spawn.run, RunId(3));
    assert!(!spawn.start);
    let policy = spawn.policy.expect("policy");
    assert_eq!(policy.mode, Some(Mode::Auto));
    assert_eq!(policy.idle_grace_ms, Some(0));
    assert_eq!(policy.stall_pause_after_no_progress_ms, Some(None), "null disables");
    assert_eq!(policy.stall_warning_after_no_progress_ms, None, "absent keeps");

    let a: WorkerAwaitDependencyArgs =
        decode(json!({ "workerId": "wrk-2", "dependency": { "workerId": "wrk-3" }, "reason": "needs API" }))
            .expect("decodes");
    let Operation::WorkerAwaitDependency { condition, .. } = a.to_operation().expect("converts") else {
        panic!("dependency")
    };
    assert_eq!(condition, DependencyCondition::WorkerCompleted(WorkerId(3)));
    let a: WorkerAwaitDependencyArgs =
        decode(json!({ "workerId": "wrk-2", "dependency": {}, "reason": "r" })).expect("decodes");
    assert!(a.to_operation().expect_err("neither").message.starts_with("dependency:"));

    let a: EventsWaitArgs = decode(json!({ "cursor": 7, "workerId": "wrk-1" })).expect("decodes");
    assert_eq!(a.limit, PAGE_LIMIT_DEFAULT);
    assert!(matches!(a.to_operation(), Ok(Operation::EventsAfter { worker: Some(WorkerId(1)), .. })));
}

#[test]
fn steering_outcomes_use_the_engine_names() {
    for name in engine::model::SteeringOutcome::ALL.map(|o| o.as_str()) {
        let a: WorkerSteerArgs =
            decode(json!({ "workerId": "wrk-2", "outcome": name, "message": "m" })).expect("every outcome decodes");
        let Operation::WorkerSteer { outcome, .. } = a.to_operation().expect("converts") else { panic!() };
        assert_eq!(outcome.as_str(), name);
    }
}

#[test]
fn errors_keep_engine_codes() {
    for code in engine::RejectionCode::ALL {
        let e = ErrorOut::from(engine::Rejection::new(code, "m"));
        assert_eq!(e.code, code.as_str());
    }
}
