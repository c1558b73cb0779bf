//! The Claude CLI's surface checked at executor start (`connection::choose_kinds`): a
//! binary whose `--version` is the pinned one and whose `--help` lists every flag the
//! executor passes runs Claude workers; one whose `--help` lacks a flag (the stand-in with
//! `--help-without`) is refused with one clear error when `--kinds claude` asks for it,
//! and left out of the announced kinds otherwise. With `CLAUDE_BIN` set, the real binary
//! passes the same check. Claude Code's sandbox (on by default) needs `bwrap` and `socat`
//! on the children's `PATH`: without them Claude workers are refused the same way, unless
//! `--claude-sandbox off`. A binary whose settings schema lacks a key the executor switches
//! off (`claude::cli::CONTINUATIONS_OFF`) is refused the same way; the real one has each.

mod claude_harness;
mod harness;

use claude_harness::{Claude, schema_comment, settings, sim_script};
use cli_executor::base::settings::ClaudeSandbox;
use cli_executor::connection::choose_kinds;
use executor_protocol::ExecutorKindWire;
use harness::{dirs, python};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A `claude` that is the stand-in with `flags` before anything the executor passes.
fn fake(dir: &Path, flags: &str) -> PathBuf {
    let path = dir.join("claude");
    let (python, sim, schema) = (python(), sim_script(), schema_comment());
    let script = format!("#!/bin/sh\n{schema}exec {} {} {flags} \"$@\"\n", python.display(), sim.display());
    std::fs::write(&path, script).expect("the fake");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("executable");
    path
}

#[tokio::test]
async fn a_claude_whose_help_lacks_a_flag_is_refused_when_asked_for_and_left_out_otherwise() {
    let dirs = dirs();
    let mut good = settings(&dirs, &Claude::Sim(Vec::new()));
    good.program = PathBuf::from("/nonexistent/codex");
    // The surface alone: the sandbox's programs are the next test's.
    good.claude.as_mut().expect("claude").sandbox = ClaudeSandbox::Off;
    let claude = Some([ExecutorKindWire::Claude].as_slice());
    assert_eq!(choose_kinds(claude, &mut good.clone()).await.map_err(|e| e.code()), Ok(vec![ExecutorKindWire::Claude]));

    let lacking = dirs.root.path().join("lacking");
    std::fs::create_dir_all(&lacking).expect("dir");
    let mut bad = good.clone();
    bad.claude.as_mut().expect("claude").program = fake(&lacking, "--help-without=--disallowedTools");
    let err = choose_kinds(claude, &mut bad.clone()).await.expect_err("refused");
    assert_eq!(err.code(), "CLAUDE_SURFACE");
    let line = err.to_string();
    assert!(line.ends_with("its --help does not list --disallowedTools") && !line.contains('\n'), "{line}");
    // Not asked for: left out; with no other kind usable, no kind at all is the error.
    assert_eq!(choose_kinds(None, &mut bad.clone()).await.map_err(|e| e.code()), Err("NO_KIND"));
    // The Codex stand-in passes its own surface check (its version and schema).
    let mut with_codex = bad.clone();
    with_codex.program = python();
    with_codex.args = vec![harness::sim_script().display().to_string()];
    assert_eq!(choose_kinds(None, &mut with_codex).await.map_err(|e| e.code()), Ok(vec![ExecutorKindWire::Codex]));

    let mut missing = good.clone();
    missing.claude.as_mut().expect("claude").program = PathBuf::from("/nonexistent/claude");
    assert_eq!(choose_kinds(claude, &mut missing).await.map_err(|e| e.code()), Err("CLAUDE_MISSING"));
    let chatgpt = Some([ExecutorKindWire::Chatgpt].as_slice());
    assert_eq!(choose_kinds(chatgpt, &mut good.clone()).await.map_err(|e| e.code()), Err("NO_KIND"));
}

#[tokio::test]
async fn a_claude_whose_settings_schema_lacks_a_switched_off_key_is_refused() {
    let dirs = dirs();
    let mut good = settings(&dirs, &Claude::Sim(Vec::new()));
    good.program = PathBuf::from("/nonexistent/codex");
    good.claude.as_mut().expect("claude").sandbox = ClaudeSandbox::Off;
    let claude = Some([ExecutorKindWire::Claude].as_slice());
    let lacking = dirs.root.path().join("lacking");
    std::fs::create_dir_all(&lacking).expect("dir");
    let program = fake(&lacking, "");
    let script = std::fs::read_to_string(&program).expect("the fake");
    let without: String =
        script.lines().filter(|l| !l.contains("autoContinueAtUsageLimit:")).map(|l| l.to_string() + "\n").collect();
    std::fs::write(&program, without).expect("a schema without the key");
    let mut bad = good.clone();
    bad.claude.as_mut().expect("claude").program = program;
    let err = choose_kinds(claude, &mut bad.clone()).await.expect_err("refused");
    assert_eq!(err.code(), "CLAUDE_SURFACE");
    let line = err.to_string();
    assert!(line.contains("its settings schema has no autoContinueAtUsageLimit") && !line.contains('\n'), "{line}");
    assert_eq!(choose_kinds(None, &mut bad).await.map_err(|e| e.code()), Err("NO_KIND"), "left out");
}

#[tokio::test]
async fn the_real_claude_passes_the_surface_check() {
    let Some(path) = claude_harness::real_claude("the_real_claude_passes_the_surface_check") else { return };
    eprintln!("binary: the real claude {}", path.display());
    let dirs = dirs();
    let mut real = settings(&dirs, &Claude::Real { path, port: 0 });
    let claude = Some([ExecutorKindWire::Claude].as_slice());
    assert_eq!(choose_kinds(claude, &mut real).await.map_err(|e| e.to_string()), Ok(vec![ExecutorKindWire::Claude]));
}

#[tokio::test]
async fn claude_workers_are_refused_without_bwrap_or_socat_unless_the_sandbox_is_off() {
    let dirs = dirs();
    let mut good = settings(&dirs, &Claude::Sim(Vec::new()));
    good.program = PathBuf::from("/nonexistent/codex");
    // The children's PATH (and so the sandbox's lookup) is a directory with socat only.
    let bin = dirs.root.path().join("bin-without-bwrap");
    std::fs::create_dir_all(&bin).expect("dir");
    std::fs::write(bin.join("socat"), "#!/bin/sh\n").expect("socat");
    std::fs::set_permissions(bin.join("socat"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let claude = good.claude.as_mut().expect("claude");
    assert_eq!(claude.sandbox, ClaudeSandbox::Required, "the sandbox is on by default");
    claude.env_set.push(("PATH".to_string(), bin.display().to_string()));
    let asked = Some([ExecutorKindWire::Claude].as_slice());
    let err = choose_kinds(asked, &mut good.clone()).await.expect_err("refused");
    assert_eq!(err.code(), "CLAUDE_SANDBOX_UNAVAILABLE");
    let line = err.to_string();
    assert!(line.contains("(missing: bwrap)") && line.contains("apt install bubblewrap socat"), "{line}");
    assert!(line.contains("--claude-sandbox off") && !line.contains('\n'), "{line}");
    // Not asked for: left out (and with no other kind, no kind at all).
    assert_eq!(choose_kinds(None, &mut good.clone()).await.map_err(|e| e.code()), Err("NO_KIND"));
    let mut off = good.clone();
    off.claude.as_mut().expect("claude").sandbox = ClaudeSandbox::Off;
    assert_eq!(choose_kinds(asked, &mut off).await.map_err(|e| e.code()), Ok(vec![ExecutorKindWire::Claude]));
}
