//! Test helpers for the Claude core: commands, and a replay of the real `claude` 2.1.332
//! recordings (`fixtures/claude-2.1.332/*.jsonl`, written by `mock/record_claude.py`).
//!
//! A recording holds, per process (`proc`), its spawn, every line written to its stdin,
//! every stdout line with the time since the scenario started, its stdin's close and its
//! exit. The replay drives one core through one process's lines: at a `spawn`, a `send`
//! or a `close` the core has not produced yet, the script's next step runs; the core must
//! then have asked for the same spawn (same arguments), written the same line (same
//! `uuid` and text) or closed stdin. Every recorded stdout line is fed to the core with
//! its `at_ms` as the time; the exit goes to `Claude::exited` with the recorded stderr.

#![allow(dead_code)] // Each test file uses part of the helpers.

use cli_executor::claude::tz::NoZones;
use cli_executor::claude::{Claude, Config, Effect};
use engine::effect::{CommandKind, ExecutorCommand};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::time::Timestamp;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

/// The worker every test command is for.
pub const WORKER: WorkerId = WorkerId(1);

/// The session the recordings ran: `session_uuid("conversation.create:exe-1")`.
pub const SESSION: &str = "b172ea10-babc-8b1e-a409-9ba79326cd1f";

/// The create's key, as the recordings used it.
pub const CREATE: &str = "conversation.create:exe-1";

/// A command of `kind` for attempt `attempt`, with `key` as its idempotency key.
pub fn command(
    kind: CommandKind,
    attempt: u64,
    key: &str,
    session: &str,
    prompt: &str,
    deadline: u64,
) -> ExecutorCommand {
    ExecutorCommand {
        executor: ExecutorId::new("cli-test"),
        id: CommandId { attempt: AttemptId(attempt) },
        idempotency_key: key.to_string(),
        worker: WORKER,
        attempt: AttemptId(attempt),
        kind,
        conversation: Arc::from(session),
        prompt: prompt.to_string(),
        prompt_version: Cow::Borrowed("test-1"),
        deadline: Timestamp(deadline),
        executor_kind: engine::ExecutorKind::Claude,
        workspace: Some(engine::Workspace { directory: "/work/app".into(), branch: None }),
        approval: None,
    }
}

/// A fresh core with the unattended config and no zones.
pub fn core() -> Claude {
    Claude::new(Config::unattended(), Box::new(NoZones))
}

/// Drains every effect.
pub fn drain(core: &mut Claude) -> Vec<Effect> {
    std::iter::from_fn(|| core.poll_effect()).collect()
}

/// What a script does when the recording shows the executor acting.
pub enum Step {
    /// A command of this kind, attempt, key and prompt, on the session.
    Command(CommandKind, u64, &'static str, &'static str),
    /// `Claude::respawn`.
    Respawn,
    /// The recorded executor wrote a line the core never writes (someone else's).
    Skip,
}

/// What a replay saw.
pub struct Replayed {
    /// Every effect but `Spawn`, `Write` and `CloseStdin`, in order.
    pub effects: Vec<Effect>,
    /// The codes of errors `Claude::line` returned.
    pub errors: Vec<&'static str>,
    /// The lines the core wrote, in order.
    pub written: Vec<Value>,
    /// The core, to look at or drive further.
    pub core: Claude,
}

/// The lines of a recorded fixture, header first.
pub fn fixture(name: &str) -> Vec<Value> {
    fixture_text(name).lines().map(|line| serde_json::from_str(line).expect("a fixture line is JSON")).collect()
}

/// A fixture file's text.
pub fn fixture_text(name: &str) -> String {
    let path = format!("{}/tests/fixtures/claude-2.1.332/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

enum Asked {
    Spawn(Vec<String>),
    Write(Value),
    Close,
}

/// Replays process `proc` of fixture `name` through `core`, following `script`.
pub fn replay(name: &str, proc: &str, mut core: Claude, script: Vec<Step>) -> Replayed {
    let lines = fixture(name);
    assert!(lines[0].get("header").is_some(), "{name} starts with its header");
    let mut script = script.into_iter();
    let mut out = Replayed { effects: Vec::new(), errors: Vec::new(), written: Vec::new(), core: core_placeholder() };
    let mut asked: VecDeque<Asked> = VecDeque::new();
    let mut now = Timestamp(0);
    let collect = |core: &mut Claude, asked: &mut VecDeque<Asked>, out: &mut Replayed| {
        for effect in drain(core) {
            match effect {
                Effect::Spawn { args, .. } => asked.push_back(Asked::Spawn(args)),
                Effect::Prompt { line, .. } => {
                    let value: Value = serde_json::from_str(&line).expect("the core writes JSON");
                    out.written.push(value.clone());
                    asked.push_back(Asked::Write(value));
                }
                Effect::CloseStdin => asked.push_back(Asked::Close),
                other => out.effects.push(other),
            }
        }
    };
    for line in lines[1..].iter().filter(|l| l["proc"] == proc) {
        if let Some(at) = line.get("at_ms").and_then(Value::as_u64) {
            now = Timestamp(at);
        }
        let dir = line["dir"].as_str().unwrap_or_default();
        if matches!(dir, "spawn" | "send" | "close") && asked.is_empty() {
            match script.next().unwrap_or_else(|| panic!("{name}/{proc}: no step left for {line}")) {
                Step::Skip => continue,
                Step::Command(kind, attempt, key, prompt) => {
                    let session = core.session().unwrap_or_default().to_string();
                    core.command(now, command(kind, attempt, key, &session, prompt, now.0 + 60_000)).expect("command");
                }
                Step::Respawn => core.respawn(now).expect("respawn"),
            }
            collect(&mut core, &mut asked, &mut out);
        }
        match dir {
            "spawn" => match asked.pop_front() {
                Some(Asked::Spawn(args)) => {
                    let recorded: Vec<String> = serde_json::from_value(line["args"].clone()).expect("args");
                    assert_eq!(args, recorded[..args.len()], "{name}/{proc}: spawn arguments");
                }
                _ => panic!("{name}/{proc}: the recording spawned, the core did not"),
            },
            "send" => match asked.pop_front() {
                Some(Asked::Write(written)) => {
                    assert_eq!(written["uuid"], line["msg"]["uuid"], "{name}/{proc}: the nonce");
                    assert_eq!(written["message"], line["msg"]["message"], "{name}/{proc}: the message");
                }
                _ => panic!("{name}/{proc}: the recording wrote {}, the core did not", line["msg"]),
            },
            "close" => assert!(matches!(asked.pop_front(), Some(Asked::Close)), "{name}/{proc}: close"),
            "recv" => {
                if let Err(e) = core.line(now, &line["msg"].to_string()) {
                    out.errors.push(e.code());
                }
                collect(&mut core, &mut asked, &mut out);
            }
            "exit" => {
                let code = line["code"].as_i64().map(|c| c as i32);
                core.exited(now, code, line["stderr"].as_str().unwrap_or_default());
                collect(&mut core, &mut asked, &mut out);
            }
            other => panic!("{name}: a line with dir {other:?}"),
        }
    }
    assert!(asked.is_empty(), "{name}/{proc}: the core asked for more than the recording did");
    assert!(script.next().is_none(), "{name}/{proc}: steps left over");
    out.core = core;
    out
}

fn core_placeholder() -> Claude {
    core()
}
