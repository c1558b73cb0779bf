//! Test helpers: executor commands, and a replay of recorded app-server transcripts
//! through the core.
//!
//! A recording (`fixtures/codex-0.169.0/*.jsonl`) holds what a Python client sent and
//! what the real app-server answered. The replay drives the core with a script of
//! actions; whenever the recording shows the client sending, the core must have written a
//! request with the same method (its id is mapped to the recorded one); whatever the
//! recording shows the server sending is fed to the core, with the message's own
//! `emittedAtMs` as the time. A recorded send the core does not make (an action it
//! refuses locally, or a `Skip`) leaves the answer to it unmatched, so the core sees a
//! response to an id it never used.

#![allow(dead_code)] // Each test file uses part of the helpers.

use cli_executor::codex::{Codex, Config, Effect};
use engine::effect::{CommandKind, ExecutorCommand};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::time::Timestamp;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The worker every test command is for.
pub const WORKER: WorkerId = WorkerId(1);

/// A command of `kind` for attempt `attempt`, with `key` as its idempotency key (the nonce).
pub fn command(
    kind: CommandKind,
    attempt: u64,
    key: &str,
    thread: &str,
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
        conversation: Arc::from(thread),
        prompt: prompt.to_string(),
        prompt_version: Cow::Borrowed("test-1"),
        deadline: Timestamp(deadline),
        executor_kind: engine::ExecutorKind::Codex,
        workspace: Some(engine::Workspace { directory: "/work/app".into(), branch: None }),
        approval: None,
    }
}

/// The id of a command of attempt `attempt`.
pub fn cmd(attempt: u64) -> CommandId {
    CommandId { attempt: AttemptId(attempt) }
}

/// Drains every effect.
pub fn drain(core: &mut Codex) -> Vec<Effect> {
    std::iter::from_fn(|| core.poll_effect()).collect()
}

/// What a test script does when the recording shows the client sending.
pub enum Step {
    /// `Codex::start`.
    Start,
    /// A command of this kind, attempt, nonce and prompt, on the thread learned so far.
    Command(CommandKind, u64, &'static str, &'static str),
    /// `Codex::interrupt` of the thread.
    Interrupt,
    /// The recorded client sent something the core never sends.
    Skip,
}

/// What a replay saw.
pub struct Replayed {
    /// Every effect but `Write`, in order.
    pub effects: Vec<Effect>,
    /// The codes of errors `Codex::line` returned.
    pub errors: Vec<&'static str>,
    /// The lines the core wrote, in order.
    pub written: Vec<Value>,
}

/// The lines of a recorded fixture, header first.
pub fn fixture(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/fixtures/codex-0.169.0/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines().map(|line| serde_json::from_str(line).expect("a fixture line is JSON")).collect()
}

/// Replays fixture `name` through a fresh core following `script`.
pub fn replay(name: &str, script: Vec<Step>) -> Replayed {
    replay_core(name, Codex::new(Config::unattended("/work")), script)
}

/// Replays fixture `name` through `core` (a guarded or resuming one) following `script`.
pub fn replay_core(name: &str, mut core: Codex, script: Vec<Step>) -> Replayed {
    let lines = fixture(name);
    assert!(lines[0].get("header").is_some(), "{name} starts with its header");
    let mut script = script.into_iter();
    let mut out = Replayed { effects: Vec::new(), errors: Vec::new(), written: Vec::new() };
    let mut writes = std::collections::VecDeque::new();
    let mut ids: BTreeMap<u64, u64> = BTreeMap::new();
    let mut thread = String::new();
    let mut now = Timestamp(0);
    let collect =
        |core: &mut Codex, writes: &mut std::collections::VecDeque<Value>, out: &mut Replayed, thread: &mut String| {
            for effect in drain(core) {
                match effect {
                    Effect::Write(line) | Effect::Prompt { line, .. } => {
                        let value: Value = serde_json::from_str(&line).expect("the core writes JSON");
                        out.written.push(value.clone());
                        writes.push_back(value);
                    }
                    other => {
                        if let Effect::Result {
                            outcome: cli_executor::codex::Outcome::Submitted { thread: t, .. },
                            ..
                        } = &other
                        {
                            thread.clone_from(t);
                        }
                        out.effects.push(other);
                    }
                }
            }
        };
    for line in &lines[1..] {
        let msg = &line["msg"];
        if let Some(at) = msg.get("emittedAtMs").and_then(Value::as_u64) {
            now = Timestamp(at);
        }
        match line["dir"].as_str() {
            Some("recv") => {
                let mut msg = msg.clone();
                if msg.get("method").is_none() {
                    let recorded = msg["id"].as_u64().expect("a response id");
                    msg["id"] = ids.get(&recorded).copied().unwrap_or(1_000_000 + recorded).into();
                }
                if let Err(e) = core.line(now, &msg.to_string()) {
                    out.errors.push(e.code());
                }
                collect(&mut core, &mut writes, &mut out, &mut thread);
            }
            Some("send") => {
                if writes.is_empty() {
                    match script.next().unwrap_or_else(|| panic!("{name}: no step left for {msg}")) {
                        Step::Start => core.start(now).expect("start"),
                        Step::Command(kind, attempt, nonce, prompt) => {
                            let deadline = now.0 + 60_000;
                            core.command(now, command(kind, attempt, nonce, &thread, prompt, deadline))
                                .expect("command")
                        }
                        Step::Interrupt => core.interrupt(now, &thread).expect("interrupt"),
                        Step::Skip => {}
                    }
                    collect(&mut core, &mut writes, &mut out, &mut thread);
                }
                let Some(written) = writes.pop_front() else { continue };
                assert_eq!(
                    written["method"], msg["method"],
                    "{name}: the core wrote {written}, the recording sent {msg}"
                );
                for key in ["clientUserMessageId", "expectedTurnId", "turnId", "threadId"] {
                    if let Some(recorded) = msg["params"].get(key) {
                        assert_eq!(&written["params"][key], recorded, "{name}: {key} of {written}");
                    }
                }
                if let (Some(recorded), Some(ours)) = (msg["id"].as_u64(), written["id"].as_u64()) {
                    ids.insert(recorded, ours);
                }
            }
            other => panic!("{name}: a line with dir {other:?}"),
        }
    }
    assert!(writes.is_empty(), "{name}: the core wrote more than the recording sent: {writes:?}");
    assert!(script.next().is_none(), "{name}: steps left over");
    out
}
