//! A person's mistakes on the command line: each is one clear line on stderr and exit
//! status 1 (usage errors included), with no stack trace even when `RUST_BACKTRACE` asks
//! for one, saying what happened and what to do.

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
    let line = one_error_line(&orchestrator(&["serve", "--listen", "nonsense"]));
    assert!(line.starts_with("orchestrator: invalid value 'nonsense' for '--listen"), "{line}");
    assert!(line.ends_with("(see `orchestrator serve --help`)"), "{line}");
}

#[test]
fn a_mistyped_flag_or_a_missing_argument_is_one_line_with_the_help_to_read() {
    let line = one_error_line(&orchestrator(&["serve", "--lisen", "127.0.0.1:1"]));
    assert!(line.contains("unexpected argument '--lisen'") && line.contains("'--listen'"), "the tip: {line}");
    let line = one_error_line(&orchestrator(&["worker", "stop"]));
    assert!(line.contains("<WORKER>") && line.ends_with("(see `orchestrator worker stop --help`)"), "{line}");
    let help = orchestrator(&["run", "--help"]);
    assert_eq!(help.status.code(), Some(0), "--help is no mistake");
    assert!(String::from_utf8_lossy(&help.stdout).contains("stop"), "{help:?}");
}

#[test]
fn a_port_in_use_says_who_may_hold_it_and_writes_no_token_nobody_saw() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let first = Daemon::serve(&tmp.path().join("first"), &[]);
    let listen = first.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let dir = tmp.path().join("second");
    let out = orchestrator(&["serve", "--data-dir", dir.to_str().expect("utf-8 path"), "--listen", &listen]);
    let line = one_error_line(&out);
    assert!(line.contains("another orchestrator daemon or another program already listens there"), "{line}");
    assert!(line.contains("--listen 127.0.0.1:PORT") && line.contains("ss -ltnp"), "{line}");
    for token in ["mcp-token", "executor-token"] {
        assert!(!dir.join(token).exists(), "{token} written by a start that failed");
    }
    // The next start, on a free port, shows the tokens it writes.
    let second = Daemon::serve(&dir, &[]);
    assert!(second.stdout.iter().any(|l| l.contains("generated the MCP bearer token")), "{:?}", second.stdout);
    assert!(second.stdout.iter().any(|l| l.contains("generated the executor token")), "{:?}", second.stdout);
}

#[test]
fn a_data_directory_with_no_or_another_token_is_blamed_not_the_daemon() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let running = Daemon::serve(&tmp.path().join("data"), &[]);
    // A mistyped directory holds no token; one of another daemon holds a token this one refuses.
    let typo = tmp.path().join("dta");
    std::fs::create_dir_all(&typo).expect("typo dir");
    std::fs::write(typo.join("mcp-url"), format!("{}\n", running.url)).expect("url");
    let line = one_error_line(&orchestrator(&["status", "--data-dir", typo.to_str().expect("utf-8 path")]));
    assert!(line.contains("holds no MCP token") && line.contains("--data-dir"), "{line}");
    assert!(!line.contains("is `orchestrator serve` running"), "{line}");
    std::fs::write(typo.join("mcp-token"), "another-token-0123456789\n").expect("token");
    let line = one_error_line(&orchestrator(&["status", "--data-dir", typo.to_str().expect("utf-8 path")]));
    assert!(line.contains("refuses the MCP token in") && line.contains("another data directory"), "{line}");
    let nobody = tmp.path().join("nobody");
    let line = one_error_line(&orchestrator(&["run", "list", "--data-dir", nobody.to_str().expect("utf-8 path")]));
    assert!(line.contains("start the daemon with `orchestrator serve --data-dir"), "{line}");
}

#[test]
fn oauth_on_a_daemon_without_it_is_one_line_and_prints_nothing_else() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let _running = Daemon::serve(&dir, &[]);
    let out = orchestrator(&["oauth", "pending", "--data-dir", dir.to_str().expect("utf-8 path")]);
    assert!(one_error_line(&out).contains("restart it with --public-url"), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "no empty answer printed before the error");
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

#[test]
fn oauth_with_a_data_directory_holding_no_token_says_which_and_what_to_do() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_str().expect("utf-8 path");
    let line = one_error_line(&orchestrator(&["oauth", "pending", "--data-dir", dir]));
    assert!(line.contains(&format!("no MCP token in {dir}")), "{line}");
    assert!(line.contains(&format!("`orchestrator serve --data-dir {dir}`")) && line.contains("--mcp-token"), "{line}");
}
