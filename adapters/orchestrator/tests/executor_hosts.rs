//! `orchestrator executor add|list|remove` from the command line (docs/scale-out.md
//! "Executors on several hosts"): a token printed once and kept as its hash (0600), the
//! list with when each host was added and whether it is connected now (the running
//! daemon's word; unknown when none runs), and every refusal one line with its code and
//! exit 1 (a host added twice, removed twice, a host id with a space).

mod support;

use std::process::{Command, Output};
use support::orchestrator_bin;

fn executor(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(orchestrator_bin())
        .arg("executor")
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .output()
        .expect("orchestrator runs")
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A refusal: exit 1, one stderr line carrying `code`.
fn refused(out: &Output, code: &str) {
    let (stdout, stderr) = text(out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(code), "{code}: {stderr}");
}

#[test]
fn hosts_are_added_listed_and_removed_and_each_mistake_is_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (stdout, stderr) = text(&executor(&data, &["list"]));
    assert!(stdout.contains("No host tokens") && stderr.is_empty(), "{stdout}{stderr}");

    let out = executor(&data, &["add", "build-2"]);
    let (stdout, stderr) = text(&out);
    eprintln!("orchestrator executor add build-2:\n{stdout}");
    assert!(out.status.success() && stderr.is_empty(), "{stdout}{stderr}");
    let token = stdout
        .split_whitespace()
        .find(|w| w.len() == 64 && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap_or_else(|| panic!("a token is printed: {stdout}"))
        .to_string();
    assert!(stdout.contains("--executor-id build-2") && stdout.contains("--executor-allow-remote"), "{stdout}");
    let book = std::fs::read_to_string(data.join("executor-hosts")).expect("the book");
    assert!(!book.contains(&token), "the token is not kept: {book}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(data.join("executor-hosts")).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let (stdout, _) = text(&executor(&data, &["list"]));
    assert!(stdout.starts_with("1 host token:") && stdout.contains("build-2  added 20"), "{stdout}");
    assert!(stdout.contains("connection unknown") && stdout.contains("Who is connected is unknown: "), "{stdout}");
    refused(&executor(&data, &["add", "build-2"]), "HOST_EXISTS");
    refused(&executor(&data, &["add", "bad host"]), "HOST_INVALID");
    let out = executor(&data, &["remove", "build-2"]);
    assert!(out.status.success(), "{:?}", text(&out));
    refused(&executor(&data, &["remove", "build-2"]), "HOST_UNKNOWN");
    std::fs::write(data.join("executor-hosts"), "not json").expect("damage");
    refused(&executor(&data, &["list"]), "HOSTS_CORRUPT");
}

/// The token `executor add` printed.
fn added(data: &std::path::Path, host: &str) -> String {
    let (stdout, stderr) = text(&executor(data, &["add", host]));
    let token = stdout.split_whitespace().find(|w| w.len() == 64 && w.bytes().all(|b| b.is_ascii_hexdigit()));
    token.unwrap_or_else(|| panic!("a token is printed: {stdout}{stderr}")).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_says_which_hosts_are_connected_now_and_who_else_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let daemon = support::Daemon::serve(&data, &[]);
    let build2 = added(&data, "build-2");
    added(&data, "build-3");
    let url = daemon.url.replace("http://", "ws://").replace("/mcp", "/executor");
    let mut hello = test_executor::hello(&build2, "build-2");
    hello.capabilities.kinds = Some(vec![executor_protocol::ExecutorKindWire::Codex]);
    let (_cli, _) = test_executor::TestExecutor::hello(&url, hello).await.expect("build-2 says hello");
    let shared = std::fs::read_to_string(data.join("executor-token")).expect("the shared token");
    let (_browser, _) =
        test_executor::TestExecutor::hello(&url, test_executor::hello(shared.trim(), "chrome-1")).await.expect("hello");
    let listed = {
        let data = data.clone();
        tokio::task::spawn_blocking(move || executor(&data, &["list"])).await.expect("list")
    };
    let (stdout, stderr) = text(&listed);
    eprintln!("orchestrator executor list:\n{stdout}");
    assert!(listed.status.success() && stderr.is_empty(), "{stdout}{stderr}");
    let line = |host: &str| stdout.lines().find(|l| l.trim_start().starts_with(host)).unwrap_or_default().to_string();
    assert!(line("build-2").ends_with("connected (Codex CLI)"), "{stdout}");
    assert!(line("build-3").ends_with("not connected"), "{stdout}");
    assert!(stdout.contains("Also connected, with the shared executor token: chrome-1 (browser)"), "{stdout}");
}
