//! Nothing of Claude Code's own starts a turn in a worker's session (issue 30, item 4):
//! every child gets `claude::cli::CONTINUATIONS_OFF` in its one `--settings` (hooks,
//! auto-continue at a usage limit, model-proposed goals off). Proven with the real
//! `claude` 2.1.332 (`CLAUDE_BIN`) offline against the loopback mock Messages API: `Stop`
//! and `UserPromptSubmit` hooks planted in the person's real config home (`$HOME/.claude`),
//! in the workspace (`.claude/settings.json`, `.claude/settings.local.json`) and even in the
//! session's own config home do not run, and the model is asked once per prompt; the same
//! hook in a config home the CLI reads without those settings does run (the control). And
//! the pinned binary's settings schema still describes each switched-off setting (the
//! executor checks the same at start, `claude::cli::check_settings`). A plugin's hooks,
//! even a plugin passed with `--plugin-dir`, never run; a background command
//! (`run_in_background`) is refused (`CLAUDE_CODE_DISABLE_BACKGROUND_TASKS`), and with the
//! switch emptied its end starts a turn of the CLI's own, which is reported as foreign.
//!
//!
//! Codex 0.169.0 (`CODEX_BIN`), its session `config.toml` turning `hooks` (and `goals`,
//! `plugins`) off: `Stop` and `UserPromptSubmit` hooks (`hooks.json`) planted in the
//! person's `$HOME/.codex`, in the workspace's `.codex` and in the session's own
//! `CODEX_HOME` do not run in a worker's turn, and the model is asked once. The control:
//! the same `hooks.json` runs under `codex exec --dangerously-bypass-hook-trust` in a home
//! of its own, and does not once the executor's `config.toml` is written there (so it is
//! the switch, not hook trust, that keeps them out). A command Codex leaves running in the
//! background (`exec_command` returned "Process running with session ID ...") ends after
//! the turn without starting one.
//!
//! `CLAUDE_BIN` / `CODEX_BIN` unset: each test prints one line saying it is skipped, unless
//! `ORCH_REAL_CLIS=required` (test.sh), where it fails.

mod claude_harness;
mod harness;

use claude_harness::{Claude, MockApi, WORKER, config_home, frame, mock_env};
use cli_executor::claude::cli::CONTINUATIONS_OFF;
use cli_executor::run::router::{Reply, Router};
use executor_protocol::{KindWire, OutcomeWire, StateName};
use harness::{dirs, next_report as until, outcome, result_of, state};
use std::path::Path;

/// Settings holding a `Stop` and a `UserPromptSubmit` hook that append a line to `marker`.
fn hooks(marker: &Path, place: &str) -> String {
    let hook = format!("echo {place} >> {}", marker.display());
    let command = serde_json::json!([{"hooks": [{"type": "command", "command": hook}]}]);
    serde_json::json!({"hooks": {"Stop": command, "UserPromptSubmit": command}}).to_string()
}

#[test]
fn the_pinned_claude_still_describes_each_setting_that_keeps_it_from_starting_turns() {
    let Some(path) = claude_harness::real_claude("the pinned claude's settings schema") else { return };
    let binary = std::fs::canonicalize(&path).expect("the binary");
    // The check the executor runs at start: each key's entry, `key:()=>...describe("...")`.
    let keys: Vec<&str> = CONTINUATIONS_OFF.iter().map(|(key, _)| *key).collect();
    assert_eq!(cli_executor::claude::cli::schema_lacks(&binary, &keys), Ok(Vec::new()));
    let bytes = std::fs::read(&binary).expect("readable");
    let entry = |key: &str| -> String {
        let at = memchr::memmem::find(&bytes, format!("{key}:()=>").as_bytes()).expect("the entry");
        String::from_utf8_lossy(&bytes[at..(at + 600).min(bytes.len())]).into_owned()
    };
    for key in &keys {
        eprintln!("{key}: {}", entry(key).chars().take(300).collect::<String>());
    }
    // The values the executor passes are the ones the descriptions name.
    let goals = entry("modelProposedGoals");
    assert!(goals.contains("'disabled' turns the tools off"), "{goals}");
    let inbound = entry("crossSessionInbound");
    assert!(inbound.contains("'refuse' opts this session out"), "{inbound}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_planted_in_the_users_home_the_workspace_and_the_session_home_never_run() {
    let test = "hooks planted anywhere never run";
    let Some(path) = claude_harness::real_claude(test) else { return };
    eprintln!("binary: the real claude {}", path.display());
    let dirs = dirs();
    let marker = dirs.root.path().join("a-hook-ran");
    // The person's real config home: `$HOME/.claude/settings.json` (the child's HOME).
    let home = dirs.root.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).expect("~/.claude");
    std::fs::write(home.join(".claude/settings.json"), hooks(&marker, "home")).expect("home settings");
    // The workspace's.
    std::fs::create_dir_all(dirs.work.join(".claude")).expect(".claude");
    std::fs::write(dirs.work.join(".claude/settings.json"), hooks(&marker, "project")).expect("project");
    std::fs::write(dirs.work.join(".claude/settings.local.json"), hooks(&marker, "local")).expect("local");
    // The session's own config home, which `--setting-sources user` does read.
    let session_home = config_home(&dirs, WORKER);
    std::fs::create_dir_all(&session_home).expect("session home");
    std::fs::write(session_home.join("settings.json"), hooks(&marker, "session")).expect("session settings");

    let mock = MockApi::start(dirs.root.path(), false);
    let claude = Claude::Real { path: path.clone(), port: mock.port };
    let mut settings = claude_harness::settings(&dirs, &claude);
    let claude_settings = settings.claude.as_mut().expect("claude");
    claude_settings.env_set.push(("HOME".to_string(), home.display().to_string()));
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");
    assert_eq!(executor.daemon(&frame(1, KindWire::Create, "", "first prompt")).await, Reply::Send(Vec::new()));
    let url = match outcome(until(&mut reports, "the create's result", result_of(1)).await) {
        OutcomeWire::Submitted { conversation_url: Some(url), .. } => url,
        other => panic!("create: {other:?}"),
    };
    until(&mut reports, "the first turn's end", state(StateName::Idle)).await;
    assert_eq!(executor.daemon(&frame(2, KindWire::Send, &url, "second prompt")).await, Reply::Send(Vec::new()));
    assert!(matches!(
        outcome(until(&mut reports, "the send's result", result_of(2)).await),
        OutcomeWire::Submitted { .. }
    ));
    until(&mut reports, "the second turn's end", state(StateName::Idle)).await;
    drop(executor);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(ran, "", "hooks ran in a worker's session: {ran}");
    let asked = mock.actions();
    eprintln!("{test}: the model was asked {} times: {asked:?}", asked.len());
    assert_eq!(asked.len(), 2, "once per prompt, no turn of the CLI's own: {asked:?}");

    // The control: the same session settings, read by the same binary without the
    // executor's `--settings`, do run their hooks.
    let control_home = dirs.root.path().join("control-config");
    std::fs::create_dir_all(&control_home).expect("control home");
    std::fs::write(control_home.join("settings.json"), hooks(&marker, "control")).expect("control settings");
    let mut command = std::process::Command::new(&path);
    command.env_clear().current_dir(&dirs.work).envs(mock_env(mock.port));
    command.env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("HOME", &home);
    command.env("CLAUDE_CONFIG_DIR", &control_home).env("DISABLE_AUTOUPDATER", "1");
    command.args(["-p", "control prompt", "--setting-sources=user"]);
    let out = command.stdin(std::process::Stdio::null()).output().expect("claude runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(ran.contains("control"), "the control's hooks ran: {ran:?}");
}

/// Runs `codex exec` in `work` with `home` as its `CODEX_HOME`, hooks trusted without a
/// review, against the mock model on `port`.
fn codex_exec(codex: &Path, home: &Path, work: &Path, port: u16) {
    let mut command = std::process::Command::new(codex);
    command.env_clear().current_dir(work).env("CODEX_HOME", home).env("MOCK_API_KEY", "x");
    command.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    command.args(["exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]);
    command.args(harness::mock_provider_args(port).into_iter().skip(1)).arg("control prompt");
    let out = command.stdin(std::process::Stdio::null()).output().expect("codex runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_hooks_planted_in_the_users_home_the_workspace_and_the_session_home_never_run() {
    let test = "codex hooks planted anywhere never run";
    let Some(path) = harness::real_codex(test) else { return };
    let dirs = dirs();
    let marker = dirs.root.path().join("a-hook-ran");
    let home = dirs.root.path().join("home");
    let session_home = dirs.state.join("sessions").join(WORKER.to_string()).join("codex-home");
    for (dir, place) in
        [(home.join(".codex"), "home"), (dirs.work.join(".codex"), "project"), (session_home, "session")]
    {
        std::fs::create_dir_all(&dir).expect("a config dir");
        std::fs::write(dir.join("hooks.json"), hooks(&marker, place)).expect("hooks.json");
    }
    let mock = harness::MockModel::start(None);
    let binary = harness::Binary::Real { path: path.clone(), port: mock.port };
    let mut settings = harness::settings(&dirs, &binary);
    settings.env_set.push(("HOME".to_string(), home.display().to_string()));
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");
    let create = harness::frame(WORKER, 1, KindWire::Create, "", "first prompt");
    assert_eq!(executor.daemon(&create).await, Reply::Send(Vec::new()));
    assert!(matches!(
        outcome(until(&mut reports, "the create's result", result_of(1)).await),
        OutcomeWire::Submitted { conversation_url: Some(_), .. }
    ));
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    drop(executor);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(ran, "", "hooks ran in a worker's session: {ran}");
    assert_eq!(mock.requests().len(), 1, "the model was asked once, no turn of the CLI's own");

    // The control: the same hooks run in a home of their own with hook trust bypassed...
    let control = dirs.root.path().join("control-home");
    std::fs::create_dir_all(&control).expect("control home");
    std::fs::write(control.join("hooks.json"), hooks(&marker, "control")).expect("hooks.json");
    codex_exec(&path, &control, &dirs.work, mock.port);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(ran.contains("control"), "the control's hooks ran: {ran:?}");
    // ... and not once the executor's config is there, trust bypassed or not.
    std::fs::remove_file(&marker).expect("reset");
    std::fs::write(control.join("config.toml"), cli_executor::codex::home::CONFIG_TOML_BASE).expect("config");
    codex_exec(&path, &control, &dirs.work, mock.port);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(ran, "", "hooks ran under the executor's config: {ran}");
}

/// Runs one create through a fresh executor on the real `claude` whose first turn asks for
/// a background `Bash` command (`sleep 1`, then a line into `marker`, in the workspace: the
/// sandbox lets a command write there only), with `env` added to
/// the child's; returns the reports receiver (after the turn's idle), the mock and the
/// executor.
async fn background_turn(
    dirs: &harness::Dirs,
    path: &Path,
    marker: &Path,
    env: &[(&str, &str)],
) -> (Router, tokio::sync::mpsc::Receiver<cli_executor::base::worker::Out>, MockApi) {
    let mock = MockApi::start(dirs.root.path(), true);
    let command = format!("sleep 1; echo done >> {}", marker.display());
    let call = serde_json::json!({"tool": "Bash", "input": {"command": command, "run_in_background": true}});
    mock.script_actions(WORKER, &[call]);
    let claude = Claude::Real { path: path.to_path_buf(), port: mock.port };
    let mut settings = claude_harness::settings(dirs, &claude);
    let claude_settings = settings.claude.as_mut().expect("claude");
    claude_settings.env_set.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");
    assert_eq!(executor.daemon(&frame(1, KindWire::Create, "", "first prompt")).await, Reply::Send(Vec::new()));
    assert!(matches!(
        outcome(until(&mut reports, "the create's result", result_of(1)).await),
        OutcomeWire::Submitted { .. }
    ));
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    (executor, reports, mock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_command_cannot_start_a_turn_and_one_that_does_is_reported_foreign() {
    let test = "background tasks start no turn";
    let Some(path) = claude_harness::real_claude(test) else { return };
    // The executor's children: `run_in_background` refused, the command never runs, and
    // no turn follows within a window well past the command's second.
    let dirs = dirs();
    let marker = dirs.work.join("background-ran");
    let (executor, mut reports, mock) = background_turn(&dirs, &path, &marker, &[]).await;
    let log = std::fs::read_to_string(&mock.log).unwrap_or_default();
    assert!(log.contains("unexpected parameter `run_in_background`"), "the tool refused it: {log}");
    let window = tokio::time::Instant::now() + std::time::Duration::from_millis(3_000);
    while let Ok(Some(out)) = tokio::time::timeout_at(window, reports.recv()).await {
        assert!(!state(StateName::Error)(&out) && !state(StateName::Generating)(&out), "a turn came: {out:?}");
    }
    drop(executor);
    assert_eq!(mock.actions(), ["keyword", "after_tool"], "the model was asked for the one prompt only");
    assert!(!marker.exists(), "the background command did not run");

    // The switch emptied (2.1.332 reads any non-empty value): the command runs in the
    // background, its end starts a turn of the CLI's own, and the executor reports it as
    // foreign (the daemon pauses the worker on it).
    let dirs = harness::dirs();
    let marker = dirs.work.join("background-ran");
    let off = [(cli_executor::claude::cli::BACKGROUND_TASKS_OFF.0, "")];
    let (executor, mut reports, mock) = background_turn(&dirs, &path, &marker, &off).await;
    let error = claude_harness::state_of(until(&mut reports, "the foreign turn", state(StateName::Error)).await);
    assert_eq!(error.error_kind, Some(executor_protocol::ErrorKindWire::ForeignTurn), "{error:?}");
    assert!(marker.exists(), "the background command ran");
    // The report comes with the turn's first line, before its request reaches the model.
    let asked = harness::until("the CLI's own turn at the model", || {
        let asked = mock.actions();
        std::future::ready((asked.len() >= 3).then_some(asked))
    })
    .await;
    drop(executor);
    assert_eq!(asked, ["keyword", "after_tool", "text"], "the prompt, the tool's result, the CLI's own turn");
    let log = std::fs::read_to_string(&mock.log).unwrap_or_default();
    assert!(log.contains("task-notification"), "the CLI's own turn tells the model the task ended: {log}");
}

/// A plugin `stopper` in `dir`: its `hooks/hooks.json` has a `Stop` and a
/// `UserPromptSubmit` hook that append `plugin` to `marker`.
fn plugin(dir: &Path, marker: &Path) -> std::path::PathBuf {
    let root = dir.join("stopper");
    std::fs::create_dir_all(root.join(".claude-plugin")).expect("plugin dir");
    std::fs::create_dir_all(root.join("hooks")).expect("hooks dir");
    let manifest = serde_json::json!({"name": "stopper", "version": "0.0.1", "description": "keeps going"});
    std::fs::write(root.join(".claude-plugin/plugin.json"), manifest.to_string()).expect("plugin.json");
    std::fs::write(root.join("hooks/hooks.json"), hooks(marker, "plugin")).expect("hooks.json");
    root
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugins_hooks_never_run_in_a_worker_session_even_a_plugin_the_operator_passes() {
    let test = "a plugin's hooks never run";
    let Some(path) = claude_harness::real_claude(test) else { return };
    let dirs = dirs();
    let marker = dirs.root.path().join("a-plugin-hook-ran");
    let stopper = plugin(dirs.root.path(), &marker);
    // The plugin enabled from a directory marketplace in the person's home, the workspace
    // and the session's own config home, and passed to every child by the operator.
    let marketplace = dirs.root.path().join("marketplace");
    std::fs::create_dir_all(marketplace.join(".claude-plugin")).expect("marketplace");
    let listing = serde_json::json!({"name": "local", "owner": {"name": "x"},
        "plugins": [{"name": "stopper", "source": stopper.display().to_string()}]});
    std::fs::write(marketplace.join(".claude-plugin/marketplace.json"), listing.to_string()).expect("listing");
    let enabled = serde_json::json!({"enabledPlugins": {"stopper@local": true}, "extraKnownMarketplaces":
        {"local": {"source": {"source": "directory", "path": marketplace.display().to_string()}}}});
    let home = dirs.root.path().join("home");
    let session_home = config_home(&dirs, WORKER);
    for dir in [home.join(".claude"), dirs.work.join(".claude"), session_home] {
        std::fs::create_dir_all(&dir).expect("a config dir");
        std::fs::write(dir.join("settings.json"), enabled.to_string()).expect("settings");
    }
    let mock = MockApi::start(dirs.root.path(), false);
    let claude = Claude::Real { path: path.clone(), port: mock.port };
    let mut settings = claude_harness::settings(&dirs, &claude);
    let claude_settings = settings.claude.as_mut().expect("claude");
    claude_settings.env_set.push(("HOME".to_string(), home.display().to_string()));
    claude_settings.args.push(format!("--plugin-dir={}", stopper.display()));
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");
    assert_eq!(executor.daemon(&frame(1, KindWire::Create, "", "first prompt")).await, Reply::Send(Vec::new()));
    assert!(matches!(
        outcome(until(&mut reports, "the create's result", result_of(1)).await),
        OutcomeWire::Submitted { .. }
    ));
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    drop(executor);
    assert_eq!(std::fs::read_to_string(&marker).unwrap_or_default(), "", "a plugin's hook ran in a worker");
    assert_eq!(mock.actions().len(), 1, "the model was asked once: {:?}", mock.actions());

    // The control: the same binary and plugin without the executor's settings runs them.
    let control_home = dirs.root.path().join("control-config");
    std::fs::create_dir_all(&control_home).expect("control home");
    let mut command = std::process::Command::new(&path);
    command.env_clear().current_dir(&dirs.work).envs(mock_env(mock.port));
    command.env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("HOME", &home);
    command.env("CLAUDE_CONFIG_DIR", &control_home).env("DISABLE_AUTOUPDATER", "1");
    command.args(["-p", "control prompt", "--setting-sources=user"]).arg(format!("--plugin-dir={}", stopper.display()));
    let out = command.stdin(std::process::Stdio::null()).output().expect("claude runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(ran.contains("plugin"), "the control's plugin hooks ran: {ran:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_command_left_running_in_the_background_starts_no_turn_when_it_ends() {
    let test = "codex background command starts no turn";
    let Some(path) = harness::real_codex(test) else { return };
    let dirs = dirs();
    // In the workspace: the sandbox lets a command write there.
    let marker = dirs.work.join("background-ran");
    let mock = harness::MockModel::start(None);
    let binary = harness::Binary::Real { path, port: mock.port };
    let (mut executor, mut reports) = Router::open(harness::settings(&dirs, &binary)).await.expect("opens");
    let prompt = format!("RUNBG[sleep 1; echo done > {}]", marker.display());
    let create = harness::frame(WORKER, 1, KindWire::Create, "", &prompt);
    assert_eq!(executor.daemon(&create).await, Reply::Send(Vec::new()));
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    // The command ends after the turn; within a window well past its second, no turn.
    let window = tokio::time::Instant::now() + std::time::Duration::from_millis(4_000);
    while let Ok(Some(out)) = tokio::time::timeout_at(window, reports.recv()).await {
        assert!(!state(StateName::Error)(&out) && !state(StateName::Generating)(&out), "a turn came: {out:?}");
    }
    drop(executor);
    eprintln!("{test}: the command ran: {}; the model was asked {} times", marker.exists(), mock.requests().len());
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the call and the answer after its output, nothing more");
    let output: String = requests[1]["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| item["output"].to_string())
        .collect();
    assert!(output.contains("Process running with session ID"), "the command went on in the background: {output}");
    assert!(marker.exists(), "the command ran to its end");
}
