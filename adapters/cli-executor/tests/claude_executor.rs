//! Claude workers through the executor, without a daemon: command frames in as the daemon
//! sends them, reports out, against the stateful stand-in (`standin/claude_sim.py`) and,
//! when `CLAUDE_BIN` names it, the real `claude` 2.1.332 offline against the mock Messages
//! API. Each test prints the binaries it drives; the proof of what went in is each
//! session's own transcript under its `CLAUDE_CONFIG_DIR`.

mod claude_harness;
mod harness;

use claude_harness::{
    Claude, MockApi, WORKER, claudes, config_home, frame, landed, nonce, settings, state_of, taken_in,
};
use cli_executor::base::worker::Out;
use cli_executor::run::router::{Reply, Router};
use executor_protocol::{ErrorKindWire, KindWire, LandedWire, OutcomeWire, StateName};
use harness::{dirs, next_report as until, outcome, result_of, state};
use serde_json::Value;
use std::path::Path;

async fn no_reply(executor: &mut Router, text: &str) {
    assert_eq!(executor.daemon(text).await, Reply::Send(Vec::new()));
}

/// The real binary gets a mock Messages API of its own (kept alive by the returned value).
fn with_mock(claude: Claude, dir: &Path) -> (Claude, Option<MockApi>) {
    match claude {
        Claude::Real { path, .. } => {
            let mock = MockApi::start(dir, false);
            (Claude::Real { path, port: mock.port }, Some(mock))
        }
        sim => (sim, None),
    }
}

/// Creates the session with `prompt` and returns its conversation id.
async fn create(executor: &mut Router, reports: &mut tokio::sync::mpsc::Receiver<Out>, prompt: &str) -> String {
    create_as(executor, reports, 1, prompt).await
}

/// Creates the session with command `n` and returns its conversation id.
async fn create_as(
    executor: &mut Router,
    reports: &mut tokio::sync::mpsc::Receiver<Out>,
    n: u64,
    prompt: &str,
) -> String {
    no_reply(executor, &frame(n, KindWire::Create, "", prompt)).await;
    match outcome(until(reports, "the create's result", result_of(n)).await) {
        OutcomeWire::Submitted { conversation_url: Some(url), .. } => url,
        other => panic!("create: {other:?}"),
    }
}

fn standin_args(dirs: &harness::Dirs) -> Value {
    let text = std::fs::read_to_string(config_home(dirs, WORKER).join("standin-args.json")).expect("the args");
    serde_json::from_str(&text).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_created_isolated_served_once_per_command_and_a_late_steer_is_not_steered() {
    for claude in claudes("claude_executor", &[]) {
        eprintln!("binary: {claude:?}");
        let dirs = dirs();
        let (claude, _mock) = with_mock(claude, dirs.root.path());
        let real = matches!(claude, Claude::Real { .. });
        let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");

        let url = create(&mut executor, &mut reports, "first prompt").await;
        assert!(url.starts_with("claude:session/"), "{url}");
        let binding = until(&mut reports, "the binding", |o| matches!(o, Out::Binding(_))).await;
        assert!(matches!(&binding, Out::Binding(b) if b.conversation_url == url), "{binding:?}");
        until(&mut reports, "the first turn's end", state(StateName::Idle)).await;

        // The same create again: its stored result, and nothing goes to the CLI.
        match executor.daemon(&frame(1, KindWire::Create, "", "first prompt")).await {
            Reply::Send(frames) => {
                assert_eq!(frames.len(), 1, "{frames:?}");
                assert!(frames[0].contains("\"status\":\"submitted\"") && frames[0].contains(&url), "{}", frames[0]);
            }
            other => panic!("{other:?}"),
        }
        // A send delivered twice (the second may meet its stored answer): taken in once.
        let send = frame(2, KindWire::Send, &url, "second prompt");
        no_reply(&mut executor, &send).await;
        assert!(matches!(executor.daemon(&send).await, Reply::Send(frames) if frames.len() <= 1));
        assert!(matches!(
            outcome(until(&mut reports, "the send's result", result_of(2)).await),
            OutcomeWire::Submitted { conversation_url: None, .. }
        ));
        until(&mut reports, "the second turn's end", state(StateName::Idle)).await;
        // A steer after the turn ended: definitely not steered.
        no_reply(&mut executor, &frame(3, KindWire::Steer, &url, "a late steer")).await;
        match outcome(until(&mut reports, "the steer's result", result_of(3)).await) {
            OutcomeWire::Failed { code, .. } => assert_eq!(code, "STEERING_UNAVAILABLE"),
            other => panic!("steer: {other:?}"),
        }
        assert_eq!(taken_in(&dirs, WORKER), [nonce("conversation.create:exe-1"), nonce("conversation.send:exe-2")]);

        // Isolation: the session's own config home and TMPDIR, the flags that keep a
        // repository's settings and self-starting tools out.
        let session_dir = dirs.state.join("sessions").join(WORKER.to_string());
        if real {
            let sockets = session_dir.join("tmp").join("cc-socks");
            assert!(sockets.is_dir(), "the CLI's messaging socket went under the private TMPDIR: {sockets:?}");
        } else {
            let args = standin_args(&dirs);
            let argv: Vec<&str> = args["argv"].as_array().expect("argv").iter().filter_map(Value::as_str).collect();
            for flag in ["--setting-sources=user", "--disallowedTools=CronCreate,ScheduleWakeup,Monitor"] {
                assert!(argv.contains(&flag), "{flag} in {argv:?}");
            }
            assert_eq!(args["tmpdir"], session_dir.join("tmp").display().to_string());
            assert_eq!(args["cwd"], dirs.work.display().to_string());
            assert_eq!(args["pgid"], args["pid"], "the leader of its own process group");
            let allowed = [
                "PATH",
                "HOME",
                "USER",
                "LOGNAME",
                "LANG",
                "LC_ALL",
                "LC_CTYPE",
                "TZ",
                "TMPDIR",
                "ANTHROPIC_API_KEY",
                "CLAUDE_CODE_OAUTH_TOKEN",
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_BASE_URL",
                "DISABLE_AUTOUPDATER",
                "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS",
                "CLAUDE_CONFIG_DIR",
                // Set by the stand-in's `sh` wrapper itself.
                "PWD",
                "SHLVL",
                "_",
            ];
            for name in args["env"].as_array().expect("env").iter().filter_map(Value::as_str) {
                assert!(allowed.contains(&name), "{name} reached the child");
            }
        }
        drop(executor);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steer_during_a_turn_is_submitted_and_runs_as_the_next_turn_or_merged_at_a_tool_boundary() {
    let hold = tempfile::tempdir().expect("tempdir");
    let hold_file = hold.path().join("hold").display().to_string();
    for (merge, claude) in claudes("claude_executor", &["--hold-file", &hold_file])
        .into_iter()
        .map(|c| (false, c))
        .chain([(true, Claude::Sim(vec!["--hold-file".into(), hold_file.clone(), "--merge-steer".into()]))])
    {
        eprintln!("binary: {claude:?}, merge: {merge}");
        let dirs = dirs();
        let (claude, _mock) = with_mock(claude, dirs.root.path());
        let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
        std::fs::write(hold.path().join("hold"), "").expect("hold");
        // The mock holds a prompt with SLOW for seconds; the stand-in holds while the file exists.
        let url = create(&mut executor, &mut reports, "SLOW work").await;
        until(&mut reports, "the turn runs", state(StateName::Generating)).await;
        no_reply(&mut executor, &frame(2, KindWire::Steer, &url, "a steer")).await;
        assert!(matches!(
            outcome(until(&mut reports, "the steer's result", result_of(2)).await),
            OutcomeWire::Submitted { .. }
        ));
        std::fs::remove_file(hold.path().join("hold")).expect("release");
        let steer = nonce("conversation.steer:exe-2");
        let create_nonce = nonce("conversation.create:exe-1");
        let seen = harness::until("the steer in the transcript", || {
            let seen = landed(&dirs, WORKER);
            std::future::ready(seen.iter().any(|(u, _)| *u == steer).then_some(seen.clone()))
        })
        .await;
        let want = if merge { "merged into the running turn" } else { "run as the next turn" };
        assert_eq!(seen, [(create_nonce, false), (steer, merge)], "the steer was {want}");
        // `steer.landed`, before the idle that ends the turn it reports on.
        let landed_or_idle = |o: &Out| matches!(o, Out::Landed(_)) || state(StateName::Idle)(o);
        let Out::Landed(landing) = until(&mut reports, "where the steer landed", landed_or_idle).await else {
            panic!("the idle came before the steer's landing");
        };
        assert_eq!((landing.worker_id, landing.command_id.attempt), (WORKER, engine::ids::AttemptId(2)));
        let idle = state_of(until(&mut reports, "idle after it", state(StateName::Idle)).await);
        if merge {
            assert_eq!(landing.landed, LandedWire::Merged);
            assert!(landing.seq < idle.seq, "merged names the turn's own state: {landing:?} {idle:?}");
        } else {
            assert_eq!(landing.landed, LandedWire::NextTurn);
            assert_eq!(landing.seq, idle.seq, "names the idle that ends the missed turn");
        }
        let journaled = harness::journal_entry(&dirs, "conversation.steer:exe-2");
        assert_eq!(journaled["landed"]["seq"], landing.seq, "journaled: {journaled}");
        drop(executor);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_crashes_mid_turn_is_resumed_and_one_that_keeps_exiting_ends_in_error() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let dirs = dirs();
    let claude = Claude::Sim(vec!["--exit-on-line".into(), "2".into()]);
    let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
    let url = create(&mut executor, &mut reports, "first").await;
    until(&mut reports, "idle", state(StateName::Idle)).await;
    // The second prompt is taken in and its turn starts, then the child dies: the turn is
    // over (an error), the prompt was submitted, and a new child resumes the session.
    no_reply(&mut executor, &frame(2, KindWire::Send, &url, "second")).await;
    assert!(matches!(outcome(until(&mut reports, "the send", result_of(2)).await), OutcomeWire::Submitted { .. }));
    let error = state_of(until(&mut reports, "the crash", state(StateName::Error)).await);
    assert_eq!(error.error_kind, Some(ErrorKindWire::Generic));
    until(&mut reports, "idle in the new child", state(StateName::Idle)).await;
    no_reply(&mut executor, &frame(3, KindWire::Send, &url, "third")).await;
    assert!(matches!(outcome(until(&mut reports, "the third", result_of(3)).await), OutcomeWire::Submitted { .. }));
    until(&mut reports, "idle", state(StateName::Idle)).await;
    let keys = ["conversation.create:exe-1", "conversation.send:exe-2", "conversation.send:exe-3"];
    assert_eq!(taken_in(&dirs, WORKER), keys.map(nonce), "each once");
    let args = standin_args(&dirs);
    assert!(args["argv"].as_array().expect("argv").iter().any(|a| a == "--resume"), "the last child resumed: {args}");
    drop(executor);

    // A claude that exits at once: restarted with backoff, then given up (an error state).
    let crashing = dirs.root.path().join("crashing");
    std::fs::create_dir_all(&crashing).expect("dir");
    let program = crashing.join("claude");
    std::fs::write(&program, "#!/bin/sh\nexit 4\n").expect("script");
    std::fs::set_permissions(&program, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("mode");
    let mut broken = settings(&dirs, &claude);
    broken.claude.as_mut().expect("claude").program = program;
    let (_executor, mut reports) = Router::open(broken).await.expect("opens");
    let error = state_of(until(&mut reports, "the error state", state(StateName::Error)).await);
    assert_eq!(error.error_kind, Some(ErrorKindWire::HostUiChanged));
    let detail = error.detail.unwrap_or_default();
    assert!(detail.contains("Claude child exited 5 times in a row"), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_ignores_sigterm_and_forks_is_ended_as_a_group() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let dirs = dirs();
    let claude = Claude::Sim(vec!["--ignore-term".into()]);
    let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
    create(&mut executor, &mut reports, "first").await;
    until(&mut reports, "idle", state(StateName::Idle)).await;
    let leader = standin_args(&dirs)["pid"].as_i64().expect("pid") as i32;
    let pid_file = config_home(&dirs, WORKER).join("standin-grandchild.pid");
    let grandchild: i32 = std::fs::read_to_string(pid_file).expect("grandchild").trim().parse().expect("pid");
    assert!(Path::new(&format!("/proc/{grandchild}")).exists(), "the grandchild runs");
    // A new conversation for the worker ends the old session's child: SIGTERM is ignored by
    // both, so the group is killed after the grace.
    no_reply(&mut executor, &frame(4, KindWire::Create, "", "a new session")).await;
    until(&mut reports, "the new create", result_of(4)).await;
    for pid in [leader, grandchild] {
        let gone = cli_executor::base::group::members(leader).is_empty();
        assert!(gone, "group {leader} still has members");
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
        assert!(!alive, "{pid} outlived the stop");
    }
    drop(executor);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_id_already_in_use_is_resumed_and_the_prompt_taken_in_once() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let dirs = dirs();
    let claude = Claude::Sim(vec!["--session-in-use".into()]);
    let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
    create(&mut executor, &mut reports, "first").await;
    until(&mut reports, "idle", state(StateName::Idle)).await;
    assert_eq!(taken_in(&dirs, WORKER), [nonce("conversation.create:exe-1")]);
    let argv = standin_args(&dirs)["argv"].clone();
    assert!(argv.as_array().expect("argv").iter().any(|a| a == "--resume"), "resumed: {argv}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_nobody_sent_is_foreign_and_reported_as_an_error_the_worker_pauses_on() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let dirs = dirs();
    let claude = Claude::Sim(vec!["--foreign-after".into(), "1".into()]);
    let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
    create(&mut executor, &mut reports, "first").await;
    let error = state_of(until(&mut reports, "the foreign turn", state(StateName::Error)).await);
    assert_eq!(error.error_kind, Some(ErrorKindWire::ForeignTurn));
    let detail = error.detail.unwrap_or_default();
    assert!(detail.contains("a turn the orchestrator did not start"), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_limits_with_the_recorded_texts_pause_or_hold_until_the_named_reset() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let lisbon = "You've hit your limit \u{b7} resets 1pm (Europe/Lisbon)";
    for text in [None, Some(lisbon)] {
        let dirs = dirs();
        let mut flags = vec!["--limit-on".to_string(), "1".to_string()];
        if let Some(text) = text {
            flags.extend(["--limit-text".to_string(), text.to_string()]);
        }
        let (mut executor, mut reports) = Router::open(settings(&dirs, &Claude::Sim(flags))).await.expect("opens");
        create(&mut executor, &mut reports, "first").await;
        let error = state_of(until(&mut reports, "the limit", state(StateName::Error)).await);
        assert_eq!(error.error_kind, Some(ErrorKindWire::UsageLimit));
        match text {
            None => assert_eq!(error.until_ms, None, "API-key auth names no reset: the worker pauses"),
            Some(_) => {
                let until = error.until_ms.expect("a reset time");
                assert_eq!(lisbon_clock(until), "13:00", "the next 1pm in Lisbon");
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock");
                let ahead = until.saturating_sub(now.as_millis() as u64);
                assert!(ahead > 0 && ahead <= 24 * 3_600_000, "within a day: {ahead} ms");
            }
        }
        drop(executor);
    }
}

/// The wall-clock time of `ms` in Europe/Lisbon, by the system's `date` (not our reader).
fn lisbon_clock(ms: u64) -> String {
    let out = std::process::Command::new("date")
        .env("TZ", "Europe/Lisbon")
        .arg("-d")
        .arg(format!("@{}", ms / 1000))
        .arg("+%H:%M")
        .output()
        .expect("date");
    String::from_utf8(out.stdout).expect("utf-8").trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_mcp_server_no_child_starts_and_the_create_fails_definitely() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let dirs = dirs();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let mut settings = settings(&dirs, &Claude::Sim(Vec::new()));
    settings.mcp = Some(cli_executor::base::mcp::McpServer {
        url: format!("http://127.0.0.1:{closed}/mcp"),
        token: "a-token-0123456789abcdef".into(),
    });
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");
    no_reply(&mut executor, &frame(1, KindWire::Create, "", "first")).await;
    match outcome(until(&mut reports, "the create's result", result_of(1)).await) {
        OutcomeWire::Failed { code, detail } => {
            assert_eq!(code, "HOST_UI_CHANGED");
            assert!(detail.starts_with("MCP_UNREACHABLE:"), "{detail}");
            assert!(!detail.contains("a-token"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!config_home(&dirs, WORKER).join("standin-args.json").exists(), "no child was started");
    assert_eq!(harness::journal_phase(&dirs, "conversation.create:exe-1").as_deref(), Some("completed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repositorys_own_stop_hook_does_not_run_in_a_worker_session() {
    let Some(path) = claude_harness::real_claude("a_repositorys_own_stop_hook_does_not_run_in_a_worker_session") else {
        return;
    };
    eprintln!("binary: the real claude {}", path.display());
    let dirs = dirs();
    let marker = dirs.root.path().join("stop-hook-ran");
    let hooks = dirs.work.join(".claude");
    std::fs::create_dir_all(&hooks).expect(".claude");
    let hook = format!("echo ran >> {}", marker.display());
    let settings_json = serde_json::json!({"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": hook}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": hook}]}],
    }});
    std::fs::write(hooks.join("settings.json"), settings_json.to_string()).expect("settings");
    let mock = MockApi::start(dirs.root.path(), false);
    let claude = Claude::Real { path, port: mock.port };
    let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
    create(&mut executor, &mut reports, "first prompt").await;
    until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    assert_eq!(taken_in(&dirs, WORKER), [nonce("conversation.create:exe-1")], "the turn ran");
    assert!(!marker.exists(), "the repository's hooks ran: {}", std::fs::read_to_string(&marker).unwrap_or_default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_landing_journaled_before_the_state_it_names_is_said_again_after_a_restart() {
    use cli_executor::base::journal::{Journal, Landing};
    let dirs = dirs();
    let steer =
        match executor_protocol::decode_daemon(&frame(2, KindWire::Steer, "claude:session/s-1", "a steer"), 1 << 20) {
            Ok(executor_protocol::DaemonMessage::Command(command)) => command,
            other => panic!("{other:?}"),
        };
    {
        // The executor journaled where the steer landed, then died before the idle.
        let (mut journal, _) = Journal::open(&dirs.state).expect("journal");
        let work = dirs.work.display().to_string();
        journal.bind(WORKER, "s-1", &work, executor_protocol::ExecutorKindWire::Claude).expect("bind");
        let generating = executor_protocol::ObservationWire {
            state: StateName::Generating,
            error_kind: None,
            seq: 0,
            block: None,
            until_ms: None,
            detail: None,
            approval: None,
            retry: None,
        };
        assert_eq!(journal.publish(WORKER, &generating).expect("publish"), Some(1));
        journal.receive(&steer, None).expect("receive");
        journal.submission_started(steer.command_id, "s-1").expect("started");
        let submitted = OutcomeWire::Submitted { state_seq: 1, conversation_url: None };
        journal.complete(steer.command_id, &submitted).expect("complete");
        let landing = Landing { landed: LandedWire::NextTurn, seq: 2 };
        journal.landed(steer.command_id, landing).expect("landed");
    }
    // No Claude here: the task resumes nothing and publishes nothing.
    let mut settings = settings(&dirs, &Claude::Sim(Vec::new()));
    settings.claude = None;
    let (executor, _reports) = Router::open(settings).await.expect("opens");
    let frames = executor.landings();
    assert_eq!(frames.len(), 1, "{frames:?}");
    let sent: Value = serde_json::from_str(&frames[0]).expect("json");
    assert_eq!(sent["type"], "steer.landed", "{sent}");
    assert_eq!((sent["landed"].as_str(), sent["seq"].as_u64()), (Some("next_turn"), Some(2)), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_childs_unacknowledged_line_is_settled_from_the_transcript_or_resent_once() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    // Taken in (its turn started in the transcript) before the crash: submitted, not resent.
    // Never read before the crash: proven absent, written once more into the resumed child.
    for (flag, lines) in [("--exit-before-ack", 2), ("--exit-before-read", 3)] {
        let dirs = dirs();
        let claude = Claude::Sim(vec![flag.into(), "2".into()]);
        let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
        let url = create(&mut executor, &mut reports, "first").await;
        until(&mut reports, "idle", state(StateName::Idle)).await;
        no_reply(&mut executor, &frame(2, KindWire::Send, &url, "second")).await;
        match outcome(until(&mut reports, "the send's settlement", result_of(2)).await) {
            OutcomeWire::Submitted { conversation_url: None, .. } => {}
            other => panic!("{flag}: {other:?}"),
        }
        until(&mut reports, "idle in the resumed child", state(StateName::Idle)).await;
        let keys = ["conversation.create:exe-1", "conversation.send:exe-2"];
        assert_eq!(taken_in(&dirs, WORKER), keys.map(nonce), "{flag}: each taken in once");
        assert_eq!(claude_harness::sim_lines(&dirs, WORKER), lines, "{flag}: lines the CLI read");
        drop(executor);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_edits_and_runs_commands_in_its_workspace_and_cannot_write_outside_it() {
    let test = "a_worker_edits_and_runs_commands_in_its_workspace_and_cannot_write_outside_it";
    let Some(path) = claude_harness::real_claude(test) else { return };
    eprintln!("binary: the real claude {}", path.display());
    let dirs = dirs();
    let mock = MockApi::start(dirs.root.path(), true);
    let inside = dirs.work.join("written-by-the-model.txt");
    let outside = dirs.root.path().join("outside-the-workspace.txt");
    let command = "python3 -c \"open('ran-by-the-model.txt', 'w').write('ran')\"";
    // An allowed command writing outside: Claude Code's sandbox (on by default) refuses it.
    let escaped = dirs.root.path().join("written-by-a-command.txt");
    let escape = format!("python3 -c \"open('{}', 'w').write('out')\"", escaped.display());
    let write = |path: &Path| serde_json::json!({"tool": "Write", "input": {"file_path": path, "content": "hi\n"}});
    let bash = |command: &str| serde_json::json!({"tool": "Bash", "input": {"command": command, "description": "run a command"}});
    mock.script_actions(WORKER, &[write(&inside), write(&outside), bash(command), bash(&escape)]);
    let claude = Claude::Real { path, port: mock.port };
    let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
    let url = create(&mut executor, &mut reports, "write a file in the workspace").await;
    until(&mut reports, "the first turn's end", state(StateName::Idle)).await;
    assert_eq!(std::fs::read_to_string(&inside).ok().as_deref(), Some("hi\n"), "an edit in the workspace lands");
    for (n, prompt) in
        [(2, "write a file outside the workspace"), (3, "run a command"), (4, "run a command writing outside")]
    {
        no_reply(&mut executor, &frame(n, KindWire::Send, &url, prompt)).await;
        assert!(matches!(outcome(until(&mut reports, prompt, result_of(n)).await), OutcomeWire::Submitted { .. }));
        until(&mut reports, "the turn's end", state(StateName::Idle)).await;
    }
    assert!(!outside.exists(), "a write outside the workspace was refused");
    let ran = std::fs::read_to_string(dirs.work.join("ran-by-the-model.txt")).ok();
    assert_eq!(ran.as_deref(), Some("ran"), "a command ran in the workspace");
    // What Claude Code told the model of the outside write (the mock's log of tool results).
    let log = std::fs::read_to_string(&mock.log).expect("the mock's log");
    assert!(log.contains("outside allowed working directories"), "{log}");
    assert!(!escaped.exists(), "a command's write outside the workspace was refused");
    assert!(log.contains("Read-only file system"), "the sandbox refused it: {log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_whose_child_crashed_before_reading_it_fails_definitely_and_binds_nothing() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let dirs = dirs();
    let claude = Claude::Sim(vec!["--exit-before-read".into(), "1".into()]);
    let (mut executor, mut reports) = Router::open(settings(&dirs, &claude)).await.expect("opens");
    no_reply(&mut executor, &frame(1, KindWire::Create, "", "first")).await;
    match outcome(until(&mut reports, "the create's settlement", result_of(1)).await) {
        OutcomeWire::Failed { code, .. } => assert_eq!(code, "DEADLINE_EXCEEDED"),
        other => panic!("{other:?}"),
    }
    let hello: Value =
        serde_json::from_str(&executor.hello("t", &cli_executor::run::router::Intro::new("cli", 1, 16))).expect("json");
    assert_eq!(hello["bindings"], serde_json::json!([]), "no session was started: {hello}");
    // The daemon's next create starts a session of its own.
    let url = create_as(&mut executor, &mut reports, 2, "again").await;
    until(&mut reports, "its turn's end", state(StateName::Idle)).await;
    assert!(url.starts_with("claude:session/"), "{url}");
    assert_eq!(taken_in(&dirs, WORKER), [nonce("conversation.create:exe-2")]);
}
