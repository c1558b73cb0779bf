//! The executor driven without a daemon: command frames as the daemon sends them, and the
//! reports read back with a deadline.

use super::WAIT_MS_MAX;
use cli_executor::base::worker::Out;
use engine::ids::{AttemptId, CommandId, WorkerId};
use executor_protocol::{CommandWire, DaemonMessage, ExecutorKindWire, KindWire, OutcomeWire, StateName, encode};
use std::time::Duration;
use tokio::sync::mpsc;

/// The frame of command `n` (attempt `n`, key `conversation.<kind>:exe-<n>`) for `worker`.
pub fn frame(worker: WorkerId, n: u64, kind: KindWire, conversation: &str, prompt: &str) -> String {
    let key = match kind {
        KindWire::Create => "conversation.create",
        KindWire::Steer => "conversation.steer",
        _ => "conversation.send",
    };
    let command = CommandWire {
        command_id: CommandId { attempt: AttemptId(n) },
        kind,
        idempotency_key: format!("{key}:exe-{n}"),
        worker_id: worker,
        attempt_id: AttemptId(n),
        conversation_url: conversation.to_string(),
        prompt: prompt.to_string(),
        prompt_version: "test/v1".to_string(),
        deadline: u64::MAX / 2,
        executor_kind: Some(ExecutorKindWire::Codex),
        workspace: None,
        approval: None,
    };
    encode(&DaemonMessage::Command(command))
}

/// The command frame `text` of attempt `n` turned into the `approval.answer` of request
/// `id` (the idempotency key the engine gives one).
pub fn answer_frame(text: &str, n: u64, id: &str, decision: executor_protocol::ApprovalDecisionWire) -> String {
    let Ok(DaemonMessage::Command(mut command)) =
        executor_protocol::decode_daemon(text, executor_protocol::MESSAGE_BYTES_MAX)
    else {
        panic!("a command frame")
    };
    command.kind = KindWire::ApprovalAnswer;
    command.idempotency_key = format!("approval.answer:exe-{n}:{id}");
    command.approval = Some(executor_protocol::ApprovalAnswerWire { approval_id: id.to_string(), decision });
    encode(&DaemonMessage::Command(command))
}

/// Reads reports until one matches `pred`; returns it.
pub async fn next_report(reports: &mut mpsc::Receiver<Out>, what: &str, pred: impl Fn(&Out) -> bool) -> Out {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(WAIT_MS_MAX * 3);
    loop {
        let out = tokio::time::timeout_at(deadline, reports.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting: {what}"))
            .expect("the executor runs");
        if pred(&out) {
            return out;
        }
    }
}

/// The result of command `n`.
pub fn result_of(n: u64) -> impl Fn(&Out) -> bool {
    move |out| matches!(out, Out::Result(r) if r.command_id.attempt == AttemptId(n))
}

/// A state `wanted`.
pub fn state(wanted: StateName) -> impl Fn(&Out) -> bool {
    move |out| matches!(out, Out::State(s) if s.state == wanted)
}

/// The outcome of a result report.
pub fn outcome(out: Out) -> OutcomeWire {
    match out {
        Out::Result(r) => r.outcome,
        other => panic!("not a result: {other:?}"),
    }
}
