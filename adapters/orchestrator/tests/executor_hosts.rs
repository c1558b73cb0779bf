//! `orchestrator executor add|list|remove` from the command line (docs/scale-out.md
//! "Executors on several hosts"): a token printed once and kept as its hash (0600), the
//! list with when each host was added, and every refusal one line with its code and
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
    refused(&executor(&data, &["add", "build-2"]), "HOST_EXISTS");
    refused(&executor(&data, &["add", "bad host"]), "HOST_INVALID");
    let out = executor(&data, &["remove", "build-2"]);
    assert!(out.status.success(), "{:?}", text(&out));
    refused(&executor(&data, &["remove", "build-2"]), "HOST_UNKNOWN");
    std::fs::write(data.join("executor-hosts"), "not json").expect("damage");
    refused(&executor(&data, &["list"]), "HOSTS_CORRUPT");
}
