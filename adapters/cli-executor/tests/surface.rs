//! The surface check at executor start (`cli_executor::codex::surface`, `src/codex/surface.txt`): the
//! real codex-cli 0.169.0 (`CODEX_BIN`) meets every line; a stand-in whose schema lacks a
//! method, or that names another version, is refused with one line naming what moved, and
//! the executor then refuses to start at all.

mod harness;

use cli_executor::codex::surface::{CODEX_VERSION, check};
use cli_executor::connection::run;
use harness::{Binary, Daemon, dirs, options, python, real_codex, sim_script};

#[tokio::test]
async fn the_real_codex_meets_every_line_of_the_surface() {
    let Some(codex) = real_codex("surface") else { return };
    let scratch = tempfile::tempdir().expect("tempdir");
    check(&codex, &[], scratch.path()).await.expect("the pinned codex has the surface");
}

#[tokio::test]
async fn a_stand_in_missing_a_method_or_at_another_version_is_refused_naming_it() {
    eprintln!("binary: the stand-in {}", sim_script().display());
    let scratch = tempfile::tempdir().expect("tempdir");
    let script = sim_script().display().to_string();
    check(&python(), std::slice::from_ref(&script), scratch.path()).await.expect("the full stand-in passes");

    let lacking = [script.clone(), "--schema-lacks".into(), "request turn/steer".into()];
    let err = check(&python(), &lacking, scratch.path()).await.expect_err("turn/steer is missing");
    assert_eq!(err.code(), "CODEX_SURFACE");
    let line = err.to_string();
    assert!(line.contains("lacks: request turn/steer threadId expectedTurnId"), "{line}");
    assert!(!line.contains('\n'), "one line: {line}");

    let removed = [script.clone(), "--features-removed".into(), "hooks".into()];
    let err = check(&python(), &removed, scratch.path()).await.expect_err("hooks removed");
    assert_eq!(err.code(), "CODEX_SURFACE");
    assert!(err.to_string().contains("no longer offers hooks"), "{err}");

    let newer = [script, "--sim-version".into(), "0.170.0".into()];
    let err = check(&python(), &newer, scratch.path()).await.expect_err("another version");
    assert!(err.to_string().contains("0.170.0") && err.to_string().contains(CODEX_VERSION), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_refuses_to_start_on_a_moved_surface() {
    let d = Daemon::start().await;
    let dirs = dirs();
    let binary = Binary::Sim(vec!["--schema-lacks".into(), "notification mcpServer/startupStatus/updated".into()]);
    let err = run(options(&d.url, &dirs, &binary)).await.expect_err("refused before connecting");
    assert_eq!(err.code(), "CODEX_SURFACE");
    assert!(err.to_string().contains("notification mcpServer/startupStatus/updated"), "{err}");
    d.stop().await;
}
