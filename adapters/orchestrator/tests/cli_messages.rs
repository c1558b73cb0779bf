//! The messages of issue 29's list that `cli_errors.rs` and `cli_controls.rs` did not pin,
//! against a real daemon: every `oauth` command of a daemon without `--public-url` (one
//! line, nothing on stdout), a mistyped flag or subcommand of every command (one line, the
//! help to read), `worker` and `run` errors (one line, no raw JSON, no MCP tool name), and
//! the words of `status` and `doctor` (a paused worker reads `Paused`, never `worker_blocked`;
//! `1 worker`, `1 check failed`; none of the implementation's names).

mod support;

use console::client::McpClient;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output};
use support::{Daemon, orchestrator_bin};

/// Words `status` and `doctor` never show a person.
const JARGON: [&str; 9] = [
    "fjall",
    "runtime shell",
    "bootstrap",
    "spacing floor",
    "DIR/",
    "worker_blocked",
    "1 workers",
    "check(s)",
    "awaiting_execution",
];

fn orchestrator(dir: &Path, args: &[&str]) -> Output {
    Command::new(orchestrator_bin())
        .args(args)
        .args(["--data-dir", dir.to_str().expect("utf-8 path")])
        .env("RUST_BACKTRACE", "full")
        .env_remove("ORCHESTRATOR_MCP_TOKEN")
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .output()
        .expect("run orchestrator")
}

/// A person's mistake: exit status 1, nothing on stdout, one `orchestrator: ...` line on
/// stderr with no raw JSON and no MCP tool name; the line.
fn mistake(args: &[&str], out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{args:?}: nothing printed before the error");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "{args:?}: one line, got:\n{stderr}");
    assert!(stderr.starts_with("orchestrator: "), "{stderr}");
    assert!(!stderr.contains('{') && !stderr.contains("backtrace"), "{args:?}: {stderr}");
    assert!(!caller_protocol::refusal::names_a_tool(&stderr), "{args:?} names an MCP tool: {stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn every_oauth_command_of_a_daemon_without_it_is_one_line_and_prints_nothing_else() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let _daemon = Daemon::serve(&dir, &[]);
    for args in
        [&["oauth", "list"][..], &["oauth", "approve", "abc"], &["oauth", "deny", "abc"], &["oauth", "revoke", "abc"]]
    {
        let line = mistake(args, &orchestrator(&dir, args));
        assert!(line.contains("runs without OAuth") && line.contains("restart it with --public-url"), "{line}");
    }
}

#[test]
fn a_mistyped_flag_or_subcommand_of_any_command_is_one_line_with_its_help() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    for (args, tip, help) in [
        (&["status", "--al"][..], "'--all'", "orchestrator status --help"),
        (&["start", "--executr", "codex", "x"], "'--executor'", "orchestrator start --help"),
        (&["executor-cli", "--kind", "codex"], "'--kinds'", "orchestrator executor-cli --help"),
        (&["run", "stp", "run-1"], "'stop'", "orchestrator run --help"),
        (&["worker", "pase", "wrk-1"], "'pause'", "orchestrator worker --help"),
        (&["doctor", "--bogus"], "'--bogus'", "orchestrator doctor --help"),
    ] {
        let line = mistake(args, &orchestrator(dir, args));
        assert!(line.contains(tip) && line.ends_with(&format!("(see `{help}`)")), "{args:?}: {line}");
    }
}

#[test]
fn worker_and_run_errors_name_the_command_to_use_never_json_or_a_tool() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let _daemon = Daemon::serve(&dir, &[]);
    for args in [
        &["worker", "pause", "wrk-9"][..],
        &["worker", "resume", "wrk-9"],
        &["worker", "continue", "wrk-9"],
        &["worker", "stop", "wrk-9", "enough"],
        &["worker", "answer", "wrk-9"],
        &["worker", "answer", "wrk-9", "yes"],
        &["worker", "release", "wrk-9"],
    ] {
        let line = mistake(args, &orchestrator(&dir, args));
        assert!(line.contains("no worker wrk-9") && line.contains("`orchestrator status`"), "{args:?}: {line}");
    }
    for args in [
        &["run", "show", "run-9"][..],
        &["run", "pause", "run-9"],
        &["run", "resume", "run-9"],
        &["run", "stop", "run-9"],
    ] {
        let line = mistake(args, &orchestrator(&dir, args));
        assert!(line.contains("no run run-9") && line.contains("`orchestrator run list`"), "{args:?}: {line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_doctor_speak_a_person_s_words() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let daemon = Daemon::serve(&dir, &[]);
    let token = std::fs::read_to_string(dir.join("mcp-token")).expect("token");
    let mut c = McpClient::connect(&daemon.url, Some(token.trim())).await.expect("connect");
    // No executor and no worker yet: doctor fails one check, and counts it in words.
    let dir1 = dir.clone();
    let first = tokio::task::spawn_blocking(move || orchestrator(&dir1, &["doctor"])).await.expect("doctor");
    assert_eq!(first.status.code(), Some(1), "{first:?}");
    let first = String::from_utf8_lossy(&first.stdout).into_owned();
    assert!(first.trim_end().ends_with("\n1 check failed."), "{first}");
    let run = c.call_ok("run_create", json!({ "taskName": "Night", "rootConversationName": "Night root" })).await;
    let root = run.expect("run")["rootWorkerId"].as_str().expect("root").to_string();
    // A first turn asked for (no executor takes it), then the pause.
    c.call_ok("worker_continue_now", json!({ "workerId": root })).await.expect("continue");
    c.call_ok("worker_pause", json!({ "workerId": root })).await.expect("pause");

    let (dir2, first2) = (dir.clone(), first.clone());
    tokio::task::spawn_blocking(move || {
        let status = orchestrator(&dir2, &["status"]);
        assert_eq!(status.status.code(), Some(0), "{status:?}");
        let status = String::from_utf8_lossy(&status.stdout).into_owned();
        let root_line = status.lines().find(|l| l.contains("/root")).unwrap_or_else(|| panic!("{status}"));
        assert!(root_line.contains(" Paused ") && root_line.ends_with(" paused: by you"), "{status}");
        assert!(status.contains("attempt #1 exe-1: Initial, "), "{status}");
        assert!(!status.contains("blocked ("), "{status}");
        assert!(status.contains("; 1 worker, 1 unfinished)"), "{status}");
        let list = orchestrator(&dir2, &["run", "list"]);
        let list = String::from_utf8_lossy(&list.stdout).into_owned();
        assert!(list.contains("1 worker, 1 unfinished"), "{list}");
        // A worker nothing can run: a second check fails.
        let doctor = orchestrator(&dir2, &["doctor"]);
        assert_eq!(doctor.status.code(), Some(1), "{doctor:?}");
        let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
        assert!(doctor.trim_end().ends_with("\n2 checks failed."), "{doctor}");
        for (screen, text) in [("status", &status), ("run list", &list), ("doctor", &doctor), ("doctor", &first2)] {
            for word in JARGON {
                assert!(!text.contains(word), "{screen} shows {word:?}:\n{text}");
            }
            assert!(!caller_protocol::refusal::names_a_tool(text), "{screen} names an MCP tool:\n{text}");
        }
    })
    .await
    .expect("the commands");
}

/// `start` says what happens to the first turn: it goes in now, or, when the account the
/// CLI executor runs its Codex workers under has no free slot, that it waits and for what
/// (the same line `status` prints). A test executor says `hello` as a CLI executor with
/// `--account codex=team:1` and holds the first run's command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_says_when_the_first_turn_waits_for_a_free_slot_on_its_account() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let daemon = Daemon::serve(&dir, &[]);
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).expect("workspace");
    let executor_url = daemon.url.replace("http://", "ws://").replace("/mcp", "/executor");
    let token = std::fs::read_to_string(dir.join("executor-token")).expect("executor token").trim().to_string();
    let mut hello = test_executor::hello(&token, "build-1");
    hello.capabilities.kinds = Some(vec![executor_protocol::ExecutorKindWire::Codex]);
    hello.accounts = Some(vec![executor_protocol::AccountWire {
        kind: executor_protocol::ExecutorKindWire::Codex,
        name: "team".into(),
        turns_max: 1,
    }]);
    let (_executor, _) = test_executor::TestExecutor::hello(&executor_url, hello).await.expect("hello");
    let start = |objective: &'static str| {
        let (dir, work) = (dir.clone(), work.display().to_string());
        tokio::task::spawn_blocking(move || {
            let out = orchestrator(&dir, &["start", "--executor", "codex", "--workspace", &work, objective]);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
    };
    let first = start("First").await.expect("start");
    assert!(first.contains("A CLI executor running codex is connected: its first turn goes in now."), "{first}");
    let second = start("Second").await.expect("start");
    assert!(
        second.contains(
            "A CLI executor running codex is connected, but its first turn waits: waiting for a free slot on the \
             Codex account team: 1 of 1 turns running under it."
        ),
        "{second}"
    );
}
