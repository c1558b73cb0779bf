//! Executor kinds on the wire: `capabilities.kinds` (absent = `["chatgpt"]`), and a
//! command's `executorKind` and `workspace`, present for CLI workers only.

use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::{CommandKind, ExecutorCommand, ExecutorInput, ExecutorKind, Timestamp, Workspace};
use executor_protocol::*;
use std::borrow::Cow;
use std::sync::Arc;

fn hello_with(capabilities: &str) -> String {
    format!(
        r#"{{"v":1,"type":"hello","token":"t","executorId":"cli-1","protocol":1,"capabilities":{capabilities},"concurrencyMax":4,"bindings":[],"journal":[]}}"#
    )
}

fn kinds_of_hello(capabilities: &str) -> Result<Vec<ExecutorKind>, Error> {
    match decode_executor(&hello_with(capabilities), MESSAGE_BYTES_MAX)?.into_input(&ExecutorId::new("x")) {
        Some(ExecutorInput::Hello { kinds, .. }) => Ok(kinds),
        other => panic!("a hello input, got {other:?}"),
    }
}

#[test]
fn a_hello_names_its_kinds_and_one_without_is_a_browser() {
    assert_eq!(kinds_of_hello(r#"{"steering":true}"#).expect("decodes"), vec![ExecutorKind::Chatgpt]);
    assert_eq!(
        kinds_of_hello(r#"{"steering":true,"kinds":["codex","claude"]}"#).expect("decodes"),
        vec![ExecutorKind::Codex, ExecutorKind::Claude]
    );
    assert_eq!(kinds_of_hello(r#"{"steering":false,"kinds":[]}"#).expect("decodes"), vec![], "runs no worker");
    let Err(Error::Malformed(why)) = kinds_of_hello(r#"{"steering":true,"kinds":["gemini"]}"#) else {
        panic!("an unknown kind is malformed");
    };
    assert!(why.contains("gemini"), "{why}");
}

fn command(kind: ExecutorKind, workspace: Option<Workspace>) -> ExecutorCommand {
    ExecutorCommand {
        executor: ExecutorId::new("cli-1"),
        id: CommandId { attempt: AttemptId(31) },
        idempotency_key: "conversation.create:exe-31".into(),
        worker: WorkerId(21),
        attempt: AttemptId(31),
        kind: CommandKind::Create,
        conversation: Arc::from(""),
        prompt: "go".into(),
        prompt_version: Cow::Borrowed("bootstrap-v1"),
        deadline: Timestamp(1_764_466_260_000),
        executor_kind: kind,
        workspace,
        approval: None,
    }
}

#[test]
fn a_cli_command_carries_its_kind_and_workspace_and_a_chatgpt_one_neither() {
    let ws = Workspace { directory: "/home/me/src/app".into(), branch: None };
    let cli = command(ExecutorKind::Codex, Some(ws));
    let text = encode(&DaemonMessage::Command(CommandWire::from(&cli)));
    assert!(
        text.ends_with(r#""executorKind":"codex","workspace":{"directory":"/home/me/src/app","branch":null}}"#),
        "{text}"
    );
    let DaemonMessage::Command(wire) = decode_daemon(&text, MESSAGE_BYTES_MAX).expect("decodes") else { panic!() };
    assert_eq!(wire.into_engine(cli.executor.clone()), cli);

    let web = command(ExecutorKind::Chatgpt, None);
    let text = encode(&DaemonMessage::Command(CommandWire::from(&web)));
    assert!(!text.contains("executorKind") && !text.contains("workspace"), "{text}");
    let DaemonMessage::Command(wire) = decode_daemon(&text, MESSAGE_BYTES_MAX).expect("decodes") else { panic!() };
    assert_eq!(wire.into_engine(web.executor.clone()), web);
}
