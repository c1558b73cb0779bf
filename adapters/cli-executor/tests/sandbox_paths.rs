//! The real CLIs run a sandboxed shell command wherever the executor's state directory is
//! (issue 30, item 3): one of 100 bytes (a session's own `<session>/tmp` would be too long
//! for Claude Code's sandbox sockets, so the child gets a short private `TMPDIR` under
//! `/tmp/orc-<uid>`), one under the system temp dir (where Codex 0.169.0 would refuse to
//! install its sandbox helper if `CODEX_HOME` were under its temp dir), and, for Claude,
//! one whose `<session>/tmp` is exactly `TMPDIR_BYTES_MAX` bytes (kept in the session).
//! Each test makes the real binary run one command through its own sandbox, against the
//! loopback mock model (Codex: `RUN[...]` in the prompt; Claude: a scripted `Bash` call under
//! `--claude-sandbox required`), and checks its effects: a file written in the workspace,
//! the `TMPDIR` the command saw, and a write outside the workspace refused by the sandbox.
//!
//! `CODEX_BIN` / `CLAUDE_BIN` unset: each test prints one line saying it is skipped, unless
//! `ORCH_REAL_CLIS=required` (test.sh), where it fails.

mod claude_harness;
mod harness;

use cli_executor::base::limits::TMPDIR_BYTES_MAX;
use cli_executor::base::tmpdir::{self, SHORT_TMP_ROOT, TmpDir};
use cli_executor::base::worker::Out;
use cli_executor::run::router::{Reply, Router};
use engine::ids::WorkerId;
use executor_protocol::{KindWire, OutcomeWire, StateName};
use harness::{Binary, Dirs, EXECUTOR_TOKEN, MockModel, next_report as until, outcome, result_of, state};
use std::path::{Path, PathBuf};

/// The worker of these tests (its session is `wrk-7`).
const WORKER: WorkerId = WorkerId(7);

/// Where the state directory goes.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// Outside the system temp dir, exactly 100 bytes long.
    Long,
    /// Under the system temp dir (`std::env::temp_dir()`), short.
    UnderTemp,
    /// Outside the system temp dir, its `sessions/wrk-7/tmp` exactly [`TMPDIR_BYTES_MAX`] bytes.
    AtTheLimit,
}

/// Where the escape probe writes: a directory outside the system temp dir (which both CLIs'
/// sandboxes let a command write to), so that a refused write proves the sandbox. The build's
/// own temp dir when the checkout is not under `/tmp`, else `/var/tmp` (a clone in `/tmp`).
fn escape_root(target_tmp: &Path) -> PathBuf {
    let temp = std::env::temp_dir();
    let writable_by_sandboxes = |p: &Path| p.starts_with("/tmp") || p.starts_with(&temp);
    if !writable_by_sandboxes(target_tmp) {
        return target_tmp.to_path_buf();
    }
    let var_tmp = Path::new("/var/tmp");
    assert!(
        var_tmp.is_dir() && !writable_by_sandboxes(var_tmp),
        "no directory outside the temp dir for the escape probe"
    );
    var_tmp.to_path_buf()
}

/// Fresh directories with the state directory at `place`, and a directory outside both
/// the workspace and the system temp dir for the escape probe.
fn dirs_at(place: Place) -> (Dirs, tempfile::TempDir) {
    let target_tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let outside = tempfile::tempdir_in(escape_root(target_tmp)).expect("a directory outside /tmp");
    let root = match place {
        Place::UnderTemp => tempfile::tempdir().expect("tempdir"),
        Place::Long | Place::AtTheLimit => tempfile::tempdir_in(target_tmp).expect("tempdir"),
    };
    let base = root.path().join("s");
    let bytes = match place {
        Place::Long => 100,
        Place::UnderTemp => base.as_os_str().len(),
        Place::AtTheLimit => TMPDIR_BYTES_MAX - "/sessions/wrk-7/tmp".len(),
    };
    let pad = bytes.checked_sub(base.as_os_str().len()).expect("the temporary root is short enough");
    let state = PathBuf::from(format!("{}{}", base.display(), "x".repeat(pad)));
    assert_eq!(state.as_os_str().len(), bytes, "{state:?}");
    let work = root.path().join("work");
    let token = root.path().join("executor-token");
    std::fs::create_dir_all(&work).expect("work dir");
    std::fs::write(&token, format!("{EXECUTOR_TOKEN}\n")).expect("token file");
    (Dirs { root, state, work, token }, outside)
}

/// The `TMPDIR` the executor gives `WORKER`'s children.
fn expected_tmp(dirs: &Dirs) -> TmpDir {
    let uid = rustix::process::geteuid().as_raw();
    tmpdir::choose(&dirs.state.join("sessions").join(WORKER.to_string()), Path::new(SHORT_TMP_ROOT), uid)
}

/// The shell command each CLI runs: a file written in the workspace, the `TMPDIR` it saw,
/// and a write outside the workspace (and outside `/tmp`), which the sandbox refuses.
fn command(escape: &Path) -> String {
    format!(
        "echo ran > ran.txt; echo \"$TMPDIR\" > tmpdir.txt; echo out > {} || echo refused > refused.txt",
        escape.display()
    )
}

/// Checks the command's effects in `dirs.work`: it ran, saw a `TMPDIR` in the child's own
/// `tmp`, and its write to `escape` was refused.
fn ran_sandboxed(dirs: &Dirs, escape: &Path, tmp: &TmpDir, what: &str) {
    let read = |name: &str| std::fs::read_to_string(dirs.work.join(name)).ok();
    assert_eq!(read("ran.txt").as_deref(), Some("ran\n"), "{what}: the command ran in the workspace");
    let seen = read("tmpdir.txt").unwrap_or_default();
    assert!(Path::new(seen.trim()).starts_with(&tmp.path), "{what}: the command's TMPDIR {seen:?} is in {tmp:?}");
    assert!(!escape.exists(), "{what}: the sandbox refused a write outside the workspace");
    assert_eq!(read("refused.txt").as_deref(), Some("refused\n"), "{what}: the write failed inside the command");
}

async fn no_reply(executor: &mut Router, text: &str) {
    assert_eq!(executor.daemon(text).await, Reply::Send(Vec::new()));
}

/// Creates `WORKER`'s conversation with `prompt` and waits for its turn's end.
async fn one_turn(executor: &mut Router, reports: &mut tokio::sync::mpsc::Receiver<Out>, frame: &str) {
    no_reply(executor, frame).await;
    match outcome(until(reports, "the create's result", result_of(1)).await) {
        OutcomeWire::Submitted { conversation_url: Some(_), .. } => {}
        other => panic!("create: {other:?}"),
    }
    until(reports, "the turn's end", state(StateName::Idle)).await;
}

/// The real codex runs `RUN[command]` in its sandbox with the state directory at `place`.
async fn codex_runs_a_sandboxed_command(test: &str, place: Place) {
    let Some(path) = harness::real_codex(test) else { return };
    let (dirs, outside) = dirs_at(place);
    let tmp = expected_tmp(&dirs);
    let mock = MockModel::start(None);
    let binary = Binary::Real { path, port: mock.port };
    let (mut executor, mut reports) = Router::open(harness::settings(&dirs, &binary)).await.expect("opens");
    let escape = outside.path().join("escaped.txt");
    let prompt = format!("RUN[{}]", command(&escape));
    one_turn(&mut executor, &mut reports, &harness::frame(WORKER, 1, KindWire::Create, "", &prompt)).await;
    let outputs: Vec<String> = mock
        .requests()
        .iter()
        .flat_map(|r| r["input"].as_array().cloned().unwrap_or_default())
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| item["output"].to_string())
        .collect();
    eprintln!("{test}: the command's output as codex gave it to the model: {outputs:?}");
    assert!(!outputs.is_empty(), "the model got the command's output");
    ran_sandboxed(&dirs, &escape, &tmp, test);
    let home = dirs.state.join("sessions").join(WORKER.to_string()).join("codex-home");
    assert!(tmp.path.is_dir() && !home.starts_with(&tmp.path), "{tmp:?} is the child's own, beside {home:?}");
    drop(executor);
}

/// The real claude runs a `Bash` command in its sandbox (`--claude-sandbox required`) with
/// the state directory at `place`.
async fn claude_runs_a_sandboxed_command(test: &str, place: Place) {
    let Some(path) = claude_harness::real_claude(test) else { return };
    let (dirs, outside) = dirs_at(place);
    let tmp = expected_tmp(&dirs);
    let mock = claude_harness::MockApi::start(dirs.root.path(), true);
    let escape = outside.path().join("escaped.txt");
    let bash =
        serde_json::json!({"tool": "Bash", "input": {"command": command(&escape), "description": "run a command"}});
    mock.script_actions(WORKER, &[bash]);
    let claude = claude_harness::Claude::Real { path, port: mock.port };
    let (mut executor, mut reports) = Router::open(claude_harness::settings(&dirs, &claude)).await.expect("opens");
    let frame = claude_harness::frame(1, KindWire::Create, "", "run a command");
    one_turn(&mut executor, &mut reports, &frame).await;
    let log = std::fs::read_to_string(&mock.log).unwrap_or_default();
    eprintln!("{test}: the mock's log: {log}");
    assert!(!log.contains("failed to initialize"), "the sandbox started: {log}");
    ran_sandboxed(&dirs, &escape, &tmp, test);
    assert!(tmp.path.is_dir(), "{tmp:?} is the child's own");
    drop(executor);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_runs_a_sandboxed_command_with_a_100_byte_state_dir() {
    codex_runs_a_sandboxed_command("codex, a 100-byte state dir", Place::Long).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_runs_a_sandboxed_command_with_its_state_dir_under_the_system_temp_dir() {
    codex_runs_a_sandboxed_command("codex, a state dir under the temp dir", Place::UnderTemp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_runs_a_sandboxed_command_with_a_100_byte_state_dir() {
    claude_runs_a_sandboxed_command("claude, a 100-byte state dir", Place::Long).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_runs_a_sandboxed_command_with_its_state_dir_under_the_system_temp_dir() {
    claude_runs_a_sandboxed_command("claude, a state dir under the temp dir", Place::UnderTemp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_runs_a_sandboxed_command_with_its_sessions_tmp_at_exactly_the_limit() {
    claude_runs_a_sandboxed_command("claude, <session>/tmp at the limit", Place::AtTheLimit).await;
}

#[test]
fn the_places_get_the_tmpdirs_the_tests_expect() {
    let (long, _o1) = dirs_at(Place::Long);
    assert!(expected_tmp(&long).root.is_some(), "a 100-byte state dir gets a short TMPDIR");
    let (under, _o2) = dirs_at(Place::UnderTemp);
    assert!(under.state.starts_with(std::env::temp_dir()));
    assert_eq!(expected_tmp(&under).root, None, "a short state dir keeps its own");
    let (limit, _o3) = dirs_at(Place::AtTheLimit);
    let tmp = expected_tmp(&limit);
    assert_eq!((tmp.root, tmp.path.as_os_str().len()), (None, TMPDIR_BYTES_MAX));
}
