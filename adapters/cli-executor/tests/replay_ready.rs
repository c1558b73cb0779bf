//! A thread's first prompt waits for the orchestrator's MCP server and the goal check,
//! replayed over the real codex-cli 0.169.0 recordings of 2026-12-02
//! (`fixtures/codex-0.169.0/mcp-*.jsonl`, `goal-null-*.jsonl`): the server ready before
//! the `thread/start` answer, down at `thread/start` and at `thread/resume`, and goals left on.

mod support;

use cli_executor::codex::{Codex, Config, Effect, MCP_UNREACHABLE, Outcome, Resume};
use engine::effect::CommandKind::Create;
use engine::model::{ConversationState, ErrorKind};
use support::{Step, WORKER, fixture, replay_core};

const SERVER: &str = "orchestrator";

fn guarded() -> Codex {
    Codex::new(Config::guarded("/work", Some(SERVER)))
}

/// A core for a new child that resumes the thread the recording resumes.
fn resuming(name: &str) -> Codex {
    let thread = fixture(name)
        .iter()
        .find(|l| l["msg"]["method"] == "thread/resume")
        .and_then(|l| l["msg"]["params"]["threadId"].as_str().map(str::to_string))
        .expect("the recording resumes a thread");
    let resume = Resume { worker: WORKER, thread, nonces: vec!["nonce-1".to_string()], limit_until: None };
    Codex::resuming(Config::guarded("/work", Some(SERVER)), &[resume]).expect("a resuming core")
}

fn results(effects: &[Effect]) -> Vec<&Outcome> {
    effects.iter().filter_map(|e| if let Effect::Result { outcome, .. } = e { Some(outcome) } else { None }).collect()
}

fn states(effects: &[Effect]) -> Vec<(ConversationState, Option<&str>)> {
    effects
        .iter()
        .filter_map(|e| {
            if let Effect::State { report, .. } = e { Some((report.state, report.detail.as_deref())) } else { None }
        })
        .collect()
}

#[test]
fn the_first_prompt_goes_in_once_the_server_is_ready_and_goals_are_off() {
    let seen = replay_core(
        "mcp-ready",
        guarded(),
        vec![Step::Start, Step::Command(Create, 1, "nonce-tool", "CALL run_list {}")],
    );
    assert_eq!(seen.errors, Vec::<&str>::new());
    // The status came before the thread/start answer; the goal check went out before the
    // turn, and its refusal (goals are off in the session's config) clears the way.
    let methods: Vec<&str> = seen.written.iter().filter_map(|w| w["method"].as_str()).collect();
    assert_eq!(methods, ["initialize", "initialized", "thread/start", "thread/goal/get", "turn/start"]);
    assert!(matches!(results(&seen.effects)[..], [Outcome::Submitted { .. }]), "{:?}", seen.effects);
    let states: Vec<ConversationState> = states(&seen.effects).iter().map(|(s, _)| *s).collect();
    assert_eq!(states, [ConversationState::Generating, ConversationState::Idle]);
}

#[test]
fn a_thread_start_refused_for_the_required_server_fails_the_create_closed() {
    let seen =
        replay_core("mcp-down", guarded(), vec![Step::Start, Step::Command(Create, 1, "nonce-1", "first"), Step::Skip]);
    // The recorder's own thread/read of a thread that does not exist is answered to no one.
    assert_eq!(seen.errors, ["UNKNOWN_RESPONSE"]);
    match results(&seen.effects)[..] {
        [Outcome::Failed { code, detail }] => {
            assert_eq!(*code, "HOST_UI_CHANGED");
            assert!(detail.starts_with(MCP_UNREACHABLE), "{detail}");
            assert!(detail.contains("required MCP servers failed to initialize"), "{detail}");
        }
        ref other => panic!("{other:?}"),
    }
    let methods: Vec<&str> = seen.written.iter().filter_map(|w| w["method"].as_str()).collect();
    assert!(!methods.contains(&"turn/start"), "nothing was written for the prompt: {methods:?}");
}

#[test]
fn a_resume_refused_for_the_required_server_keeps_the_thread_and_reports_it_in_error() {
    let seen = replay_core("mcp-resume-down", resuming("mcp-resume-down"), vec![Step::Start]);
    assert_eq!(seen.errors, Vec::<&str>::new());
    match states(&seen.effects)[..] {
        [(ConversationState::Error(ErrorKind::HostUiChanged), Some(detail))] => {
            assert!(detail.starts_with(MCP_UNREACHABLE), "{detail}")
        }
        ref other => panic!("not closed, but in error: {other:?}"),
    }
}

#[test]
fn a_resumed_thread_takes_its_goal_check_and_no_goal_means_open() {
    let seen = replay_core("goal-null-resume", resuming("goal-null-resume"), vec![Step::Start]);
    assert_eq!(seen.errors, Vec::<&str>::new());
    let methods: Vec<&str> = seen.written.iter().filter_map(|w| w["method"].as_str()).collect();
    assert_eq!(methods, ["initialize", "initialized", "thread/resume", "thread/goal/get"]);
    assert_eq!(states(&seen.effects), [], "nothing to report: the thread is open");
    let started = replay_core(
        "goal-null-start",
        guarded(),
        vec![Step::Start, Step::Command(Create, 1, "nonce-1", "first prompt")],
    );
    assert_eq!(started.errors, Vec::<&str>::new());
    assert!(matches!(results(&started.effects)[..], [Outcome::Submitted { .. }]), "{:?}", started.effects);
}
