//! `orchestrator doctor` against a real daemon process: what it says and its exit status on
//! a broken installation (nothing running, a daemon that died, loose token permissions, an
//! extension speaking another protocol version, no browser) and on a healthy one.

mod support;

use executor_protocol::{ExecutorMessage, PROTOCOL_VERSION};
use std::path::Path;
use std::process::Command;
use support::{Daemon, orchestrator_bin};
use test_executor::{TestExecutor, hello};

/// Runs `orchestrator doctor --data-dir DIR`: (exit code, stdout).
fn doctor(dir: &Path) -> (i32, String) {
    let out = Command::new(orchestrator_bin())
        .args(["doctor", "--data-dir", dir.to_str().expect("utf-8 path")])
        .env_remove("ORCHESTRATOR_MCP_TOKEN")
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .env_remove("ORCHESTRATOR_CONFIG")
        .env("XDG_CONFIG_HOME", dir.with_extension("no-config"))
        .output()
        .expect("run doctor");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn line<'a>(report: &'a str, start: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line {start:?} in:\n{report}"))
}

fn executor_token(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("executor-token")).expect("executor token").trim().to_string()
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn nothing_installed_yet() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let (code, report) = doctor(&dir);
    assert_eq!(code, 1, "{report}");
    assert!(line(&report, "FAIL  daemon:").contains("no MCP token"), "{report}");
    assert!(report.contains("orchestrator serve --data-dir"), "{report}");
    assert!(line(&report, "FAIL  data directory:").contains("does not exist"), "{report}");
    assert!(line(&report, "skip  executors:").contains("failed first"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_broken_to_healthy_and_a_daemon_that_died() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let mut daemon = Daemon::serve(&dir, &[]);
    let executor_url = daemon.url.replace("http://", "ws://").replace("/mcp", "/executor");

    // Running, but no browser connected.
    let (code, report) = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || doctor(&dir)
    })
    .await
    .expect("doctor");
    assert_eq!(code, 1, "{report}");
    assert!(line(&report, "ok    daemon:").contains(&daemon.url), "{report}");
    assert!(line(&report, "ok    store lock:").contains("running daemon"), "{report}");
    assert!(line(&report, "ok    tokens:").contains("0600"), "{report}");
    let browser = line(&report, "FAIL  executors:");
    assert!(browser.contains("no executor is connected"), "{report}");
    assert!(report.contains(&executor_url), "the fix names the executor address: {report}");

    // An extension that speaks another protocol version is refused, and doctor says so.
    let mut old = hello(&executor_token(&dir), "old-extension");
    old.protocol = PROTOCOL_VERSION + 1;
    let mut refused =
        TestExecutor::connect(&executor_url, Some("chrome-extension://testexecutor")).await.expect("connect");
    refused.send(&ExecutorMessage::Hello(old)).await.expect("send hello");
    let _ = refused.recv().await;
    let report = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || doctor(&dir).1
    })
    .await
    .expect("doctor");
    let browser = line(&report, "FAIL  executors:");
    assert!(browser.contains(&format!("protocol v{}", PROTOCOL_VERSION + 1)), "{report}");
    assert!(browser.contains(&format!("speaks v{PROTOCOL_VERSION}")), "{report}");

    // A token file others can read fails, with the chmod to run.
    #[cfg(unix)]
    {
        chmod(&dir.join("mcp-token"), 0o644);
        let (code, report) = tokio::task::spawn_blocking({
            let dir = dir.clone();
            move || doctor(&dir)
        })
        .await
        .expect("doctor");
        assert_eq!(code, 1, "{report}");
        assert!(line(&report, "FAIL  tokens:").contains("mode 644"), "{report}");
        assert!(report.contains(&format!("chmod 600 {}", dir.join("mcp-token").display())), "{report}");
        chmod(&dir.join("mcp-token"), 0o600);
    }

    // A browser connected: every check passes.
    let (_browser, _) =
        TestExecutor::hello(&executor_url, hello(&executor_token(&dir), "chrome-laptop")).await.expect("hello");
    let (code, report) = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || doctor(&dir)
    })
    .await
    .expect("doctor");
    assert_eq!(code, 0, "{report}");
    assert!(line(&report, "ok    executors:").contains("browser chrome-laptop"), "{report}");
    assert!(report.contains("All checks passed."), "{report}");

    // Killed: the address it recorded answers no more, and its lock was released.
    daemon.kill9();
    let (code, report) = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || doctor(&dir)
    })
    .await
    .expect("doctor");
    assert_eq!(code, 1, "{report}");
    assert!(line(&report, "FAIL  daemon:").contains("did not stop cleanly"), "{report}");
    assert!(line(&report, "ok    store lock:").contains("free"), "{report}");
}

/// The data directory is private: a loose one is fixed at start with a warning, and doctor
/// fails on a file others can read, naming the fix.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loose_data_directory_is_made_private_at_start_and_checked_by_doctor() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    std::fs::create_dir_all(dir.join("notes")).expect("dirs");
    std::fs::write(dir.join("notes/run.txt"), "the run's text").expect("file");
    chmod(&dir, 0o755);
    chmod(&dir.join("notes"), 0o755);
    chmod(&dir.join("notes/run.txt"), 0o644);
    let daemon = Daemon::serve(&dir, &[]);
    assert!(daemon.stderr().contains("was readable by other users: made 3 entries private"), "{}", daemon.stderr());
    assert_eq!((mode(&dir), mode(&dir.join("notes")), mode(&dir.join("notes/run.txt"))), (0o700, 0o700, 0o600));
    // The store's files, made after the check, are private too.
    let store = dir.join("store");
    for entry in std::fs::read_dir(&store).expect("store") {
        let path = entry.expect("entry").path();
        assert_eq!(mode(&path) & 0o077, 0, "{} is {:o}", path.display(), mode(&path));
    }
    let report = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || doctor(&dir).1
    })
    .await
    .expect("doctor");
    assert!(line(&report, "ok    privacy:").contains("only you"), "{report}");
    chmod(&store.join("commits.mark"), 0o644);
    let (code, report) = tokio::task::spawn_blocking(move || doctor(&dir)).await.expect("doctor");
    assert_eq!(code, 1, "{report}");
    assert!(line(&report, "FAIL  privacy:").contains("commits.mark is 644"), "{report}");
    assert!(report.contains("chmod -R go-rwx"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_address_has_its_metadata_checked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let _daemon = Daemon::serve(&dir, &["--public-url", "https://orch.example.com/team"]);
    let report = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || doctor(&dir).1
    })
    .await
    .expect("doctor");
    let public = line(&report, "ok    public address:");
    assert!(public.contains("https://orch.example.com/team/mcp serves consistent OAuth metadata"), "{report}");
    assert!(
        public.contains("curl -sf https://orch.example.com/.well-known/oauth-protected-resource/team/mcp"),
        "{report}"
    );

    let plain = tmp.path().join("plain");
    let _daemon = Daemon::serve(&plain, &[]);
    let report = tokio::task::spawn_blocking(move || doctor(&plain).1).await.expect("doctor");
    assert!(line(&report, "skip  public address:").contains("Secure MCP Tunnel"), "{report}");
}
