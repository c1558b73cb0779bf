//! The first night on the command line alone (issue 29), driven as a person would, with the
//! real binaries as processes on a fresh `HOME`: `orchestrator serve`; `orchestrator
//! executor-cli` with the real Codex CLI (`CODEX_BIN`, 0.169.0) against the loopback mock
//! model, which is down for its first requests (Codex retries) and then works as a worker
//! over three turns; `orchestrator start`; `orchestrator status` showing the CLI retrying,
//! then the worker working and who carries it; the executor killed (SIGKILL) and the worker
//! shown offline, never Working; the executor started again and the worker resumed with
//! exactly one continuation; `orchestrator run stop`; `orchestrator status --all`.
//!
//! Each state is saved as a text screenshot (`support/night.rs`: `docs/screenshots/` with
//! `UPDATE_SCREENSHOTS=1`). It lives in the orchestrator's tests, not the CLI executor's,
//! because it drives the `orchestrator` binary itself (`CARGO_BIN_EXE_orchestrator`);
//! the mock model is the CLI executor's script, started as a process. No test knob: the
//! daemon's defaults (a 3 s idle grace) and Codex's own documented `-c` settings.
//!
//! Without `CODEX_BIN` it prints one line saying it is skipped and why; with
//! `ORCH_REAL_CLIS=required` it fails instead.

#[path = "../../cli-executor/tests/mock/requests.rs"]
mod mock_requests;
mod support;

use serde_json::json;
use std::time::{Duration, Instant};
use support::model::turn_prompt;
use support::night::{Night, WAIT_MAX, real_codex, until};

/// How many model requests fail first (HTTP 500), so Codex retries inside the first turn.
const MODEL_DOWN_REQUESTS: u64 = 5;

/// How soon a killed executor must read offline: its socket closes with the process, so
/// this is far inside the heartbeat (20 s) and the session's idle limit (60 s).
const OFFLINE_WITHIN: Duration = Duration::from_secs(5);

/// Words no screen of `status` or `start` may show a person: the implementation's names,
/// a code where a word belongs, a plural gone wrong.
const JARGON: [&str; 8] = [
    "fjall",
    "runtime shell",
    "bootstrap",
    "spacing floor",
    "DIR/",
    "worker_blocked",
    "1 workers",
    "awaiting_execution",
];

/// `orchestrator status` (with `args`) until `want` says yes; returns what it printed.
fn status_until(night: &Night, what: &str, args: &[&str], want: impl Fn(&str) -> bool) -> String {
    let mut command = vec!["status"];
    command.extend_from_slice(args);
    until(what, WAIT_MAX, || {
        let out = night.said(&command);
        if want(&out) { Ok(out) } else { Err(out) }
    })
}

/// A screen of `status`/`start` output: free of jargon and of MCP tool names.
fn plain_words(screen: &str) {
    for word in JARGON {
        assert!(!screen.contains(word), "{word:?} shown to a person:\n{screen}");
    }
    assert!(!caller_protocol::refusal::names_a_tool(screen), "an MCP tool named:\n{screen}");
}

/// The worker's line of a `status` screen (the one naming `/root`).
fn root_line(screen: &str) -> &str {
    screen.lines().find(|l| l.contains("/root")).unwrap_or_else(|| panic!("no /root line:\n{screen}"))
}

#[test]
fn a_first_night_on_the_command_line() {
    let test = "first night (command line)";
    let Some(codex) = real_codex(test) else { return };
    let began = Instant::now();
    let plan = json!({
        "fail": { "count": MODEL_DOWN_REQUESTS, "status": 500 },
        "turns": { "1": ["progress"], "2": ["hold"], "3": ["progress", "hold"] },
    });
    let mut night = Night::new(codex, &plan);

    // 1. The daemon, on a fresh home: it says where it keeps its tokens and where it listens.
    let served = night.serve().join("\n");
    assert!(
        served.contains("generated the MCP bearer token") && served.contains("executor endpoint ws://"),
        "{served}"
    );
    night.screenshot("1-serve", &format!("$ orchestrator serve --listen 127.0.0.1:0\n{served}"));
    for file in ["mcp-token", "executor-token"] {
        let token = std::fs::read_to_string(night.data_dir().join(file)).expect("the token it wrote");
        assert!(served.contains(token.trim()), "{file} shown once at the first start");
        assert!(!night.plain(&served).contains(token.trim()), "{file} kept out of the screenshot");
    }

    // 2. The executor with the real Codex; it finds the daemon by itself (the port is not
    // the default one).
    let (first, log) = night.executor(1);
    assert!(log.contains(&night.executor_url), "connected where serve listens:\n{log}");
    let typed = format!("$ orchestrator {}", night.executor_args().join(" "));
    night.screenshot("2-executor", &format!("{typed}\n{log}"));

    // 3. A Codex run: the run id and the command that stops it.
    let work = night.work.display().to_string();
    let started = night.said(&["start", "--executor", "codex", "--workspace", &work, "Write the CSV importer"]);
    assert!(started.starts_with("Started run-1 \"Write the CSV importer\""), "{started}");
    assert!(started.contains("Stop it with: orchestrator run stop run-1"), "{started}");
    assert!(started.contains("A CLI executor running codex is connected: its first turn goes in now."), "{started}");
    plain_words(&started);
    night.screenshot(
        "3-start",
        &format!("$ orchestrator start --executor codex --workspace {work} \"Write the CSV importer\"\n{started}"),
    );

    // 4. The model is down: Codex retries, and status says so with Codex's reason.
    let retrying = status_until(&night, "the CLI retrying", &[], |s| s.contains("CLI retrying: "));
    assert!(root_line(&retrying).contains("Working"), "retrying inside a running turn:\n{retrying}");
    assert!(retrying.contains("(since ") && retrying.contains("paused after 10 min"), "{retrying}");
    plain_words(&retrying);
    night.screenshot("4-retrying", &format!("$ orchestrator status\n{retrying}"));

    // 5. The model is back: turn 1 reported progress, turn 2 runs (the model holds it),
    // carried by the executor.
    let working = status_until(&night, "turn 2 running, carried", &[], |s| {
        s.contains("attempt #2 exe-2: Auto resume, Generating") && s.contains("carried by Codex CLI")
    });
    until("the model holds turn 2", WAIT_MAX, || {
        let held = night.model_requests().iter().any(|r| turn_prompt(r).contains("Attempt 2"));
        if held { Ok(()) } else { Err(format!("{} requests", night.model_requests().len())) }
    });
    assert!(root_line(&working).contains("Working"), "{working}");
    assert!(!working.contains("CLI retrying"), "the retry is over:\n{working}");
    plain_words(&working);
    night.screenshot("5-working", &format!("$ orchestrator status\n{working}"));

    // 6. The executor is killed: the worker reads offline, never Working, at once.
    let killed_at = Instant::now();
    night.kill_executor(first);
    let offline = status_until(&night, "the executor offline", &[], |s| s.contains("executor offline since "));
    let took = killed_at.elapsed();
    assert!(took < OFFLINE_WITHIN, "offline shown after {took:?}");
    eprintln!("{test}: offline shown {} ms after the SIGKILL", took.as_millis());
    assert!(root_line(&offline).contains("Executor offline"), "{offline}");
    assert!(!offline.contains("Working") && !offline.contains("carried by"), "{offline}");
    assert!(offline.contains("Auto resume, Generating (when last seen)"), "{offline}");
    plain_words(&offline);
    night.screenshot("6-offline", &format!("$ kill -9 <executor pid>\n$ orchestrator status\n{offline}"));

    // 7. The executor again: the killed turn is booked as ended and exactly one
    // continuation (attempt 3) goes in; the model saw each prompt once.
    let (_second, _) = night.executor(2);
    let resumed = status_until(&night, "turn 3 running, carried", &[], |s| {
        s.contains("attempt #3 exe-3: Auto resume, Generating") && s.contains("carried by Codex CLI")
    });
    until("the model holds turn 3", WAIT_MAX, || {
        let held = night.model_requests().iter().filter(|r| turn_prompt(r).contains("Attempt 3")).count() >= 2;
        if held { Ok(()) } else { Err(format!("{} requests", night.model_requests().len())) }
    });
    assert!(root_line(&resumed).contains("Working"), "{resumed}");
    assert_eq!(
        mock_requests::prompts_in_last_request(&night.model_requests()),
        [(1, 1), (2, 1), (3, 1)],
        "each turn once"
    );
    let retried = MODEL_DOWN_REQUESTS as usize + 1;
    assert_eq!(
        mock_requests::turns_started(&night.model_requests()),
        [(1, retried), (2, 1), (3, 1)],
        "each turn started once (the first one again at each of Codex's retries)"
    );
    plain_words(&resumed);
    night.screenshot(
        "7-resumed",
        &format!("$ orchestrator executor-cli ... (as before)\n$ orchestrator status\n{resumed}"),
    );

    // 8. The person stops the run.
    let stopped = night.said(&["run", "stop", "run-1"]);
    assert!(stopped.contains("every unfinished worker is cancelled"), "{stopped}");
    plain_words(&stopped);
    night.screenshot("8-stop", &format!("$ orchestrator run stop run-1\n{stopped}"));

    // 9. It is among the finished runs, with its outcome and its three attempts.
    let none = night.said(&["status"]);
    assert!(none.contains("No unfinished runs") && none.contains("1 finished run:"), "{none}");
    let all = status_until(&night, "the run finished", &["--all"], |s| s.contains("Finished (1,"));
    assert!(all.contains("run-1 Write the CSV importer  (stopped, ended "), "{all}");
    assert!(all.contains("1 worker, 3 attempts)"), "exactly one continuation after the restart:\n{all}");
    plain_words(&all);
    night.screenshot("9-finished", &format!("$ orchestrator status\n{none}$ orchestrator status --all\n{all}"));

    // The model's requests per turn: turn 1 the failed ones, then `run_list`, the progress
    // call and the answer; turn 2 the one held open when the executor was killed, never
    // asked again; turn 3 the progress call and the one held open when the run stopped.
    let requests = night.model_requests();
    let model_requests = requests.len();
    let of_turn = |n: u32| requests.iter().filter(|r| turn_prompt(r).contains(&format!("Attempt {n} "))).count();
    let turns: Vec<usize> = (1..=4).map(of_turn).collect();
    assert_eq!(turns, [MODEL_DOWN_REQUESTS as usize + 3, 1, 2, 0], "model requests per turn");
    assert!(!night.daemon_log().contains("panicked"), "{}", night.daemon_log());
    eprintln!("{test}: {model_requests} model requests, {} ms", began.elapsed().as_millis());
}
