//! A person's mistakes on the command line: each is one clear line on stderr and a non-zero
//! exit, with no stack trace even when `RUST_BACKTRACE` asks for one.

mod support;

use std::process::{Command, Output};
use support::{Daemon, orchestrator_bin};

fn orchestrator(args: &[&str]) -> Output {
    Command::new(orchestrator_bin())
        .args(args)
        .env("RUST_BACKTRACE", "full")
        .env_remove("ORCHESTRATOR_MCP_TOKEN")
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .output()
        .expect("run orchestrator")
}

/// The stderr of a failed command, checked to be one `orchestrator: ...` line.
fn one_error_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line, got:\n{stderr}");
    assert!(lines[0].starts_with("orchestrator: "), "{stderr}");
    assert!(!stderr.contains("backtrace") && !stderr.contains("Error:"), "{stderr}");
    lines[0].to_string()
}

#[test]
fn a_short_token_is_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_str().expect("utf-8 path");
    let out = orchestrator(&["serve", "--data-dir", dir, "--listen", "127.0.0.1:0", "--mcp-token", "short"]);
    assert!(one_error_line(&out).contains("at least 16 characters"));
}

#[test]
fn a_locked_data_directory_is_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let _running = Daemon::serve(&dir, &[]);
    let out = orchestrator(&["serve", "--data-dir", dir.to_str().expect("utf-8 path"), "--listen", "127.0.0.1:0"]);
    let line = one_error_line(&out);
    assert!(line.contains("STORE_LOCKED") && line.contains("another process"), "{line}");
}

#[test]
fn a_bad_flag_value_names_the_flag() {
    let out = orchestrator(&["serve", "--listen", "nonsense"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: invalid value 'nonsense' for '--listen"), "{stderr}");
    assert!(!stderr.contains("backtrace"), "{stderr}");
}

#[test]
fn the_cli_executor_says_in_one_line_what_is_wrong() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_str().expect("utf-8 path");
    let out = orchestrator(&["executor-cli", "--data-dir", dir]);
    let line = one_error_line(&out);
    assert!(
        line.contains("no MCP token in") && line.contains("mcp-token"),
        "the children's MCP token comes first: {line}"
    );
    std::fs::write(tmp.path().join("mcp-token"), "mcp-token-0123456789abcdef\n").expect("mcp token");
    let out = orchestrator(&["executor-cli", "--data-dir", dir]);
    let line = one_error_line(&out);
    assert!(line.contains("cannot read the executor token from") && line.contains("executor-token"), "{line}");
    let token = tmp.path().join("executor-token");
    std::fs::write(&token, "executor-token-0123456789\n").expect("token");
    let out = orchestrator(&["executor-cli", "--data-dir", dir, "--kinds", "codex", "--codex", "/nonexistent/codex"]);
    let line = one_error_line(&out);
    assert!(line.contains("the codex binary /nonexistent/codex was not found"), "{line}");
    let out =
        orchestrator(&["executor-cli", "--data-dir", dir, "--kinds", "claude", "--claude", "/nonexistent/claude"]);
    let line = one_error_line(&out);
    assert!(line.contains("the claude binary /nonexistent/claude was not found"), "{line}");
    let none = ["executor-cli", "--data-dir", dir, "--codex", "/nonexistent/codex", "--claude", "/nonexistent/claude"];
    let line = one_error_line(&orchestrator(&none));
    assert!(line.contains("no command-line agent to run"), "{line}");
    let out = orchestrator(&["executor-cli", "--data-dir", dir, "--codex", "sh", "--executor-id", "two words"]);
    assert!(one_error_line(&out).contains("--executor-id"));
    // `sh` is no codex-cli 0.169.0: the surface check refuses it, naming what it ran.
    let out = orchestrator(&["executor-cli", "--data-dir", dir, "--kinds", "codex", "--codex", "sh"]);
    let line = one_error_line(&out);
    assert!(line.contains("does not offer what this executor relies on") && line.contains("sh --version"), "{line}");
}

#[test]
fn a_start_with_a_missing_workspace_or_a_wrong_kind_is_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_str().expect("utf-8 path");
    let missing = tmp.path().join("nope");
    let args = ["start", "--data-dir", dir, "--executor", "codex", "--workspace", missing.to_str().unwrap(), "x"];
    assert!(one_error_line(&orchestrator(&args)).contains("cannot be opened"));
    let args = ["start", "--data-dir", dir, "--executor", "chatgpt", "--workspace", dir, "x"];
    assert!(one_error_line(&orchestrator(&args)).contains("codex or claude"));
}
