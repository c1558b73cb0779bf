//! The real `codex app-server` 0.169.0, recorded offline against the loopback mock model
//! (`fixtures/codex-0.169.0/README.md`), replayed through the core: the data is what the
//! real CLI sent, not what we think it sends.

mod support;

use cli_executor::codex::record::TurnStatus;
use cli_executor::codex::{Effect, Outcome, Report};
use engine::effect::CommandKind::{Create, Inspect, Send, Steer};
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use support::{Step, WORKER, replay};

fn states(effects: &[Effect]) -> Vec<&Report> {
    effects.iter().filter_map(|e| if let Effect::State { report, .. } = e { Some(report) } else { None }).collect()
}

fn results(effects: &[Effect]) -> Vec<(u64, &Outcome)> {
    effects
        .iter()
        .filter_map(
            |e| if let Effect::Result { command, outcome } = e { Some((command.attempt.0, outcome)) } else { None },
        )
        .collect()
}

fn turn_of(outcome: &Outcome) -> &str {
    match outcome {
        Outcome::Submitted { turn, .. } => turn,
        Outcome::Failed { code, .. } => panic!("failed {code}"),
    }
}

#[test]
fn two_turns_are_two_idles_and_thread_read_finds_both_nonces() {
    let script = vec![
        Step::Start,
        Step::Command(Create, 1, "nonce-1", "first prompt"),
        Step::Command(Send, 2, "nonce-2", "second prompt"),
        Step::Command(Inspect, 2, "", ""),
    ];
    let seen = replay("two-turns", script);
    assert_eq!(seen.errors, Vec::<&str>::new());
    let results = results(&seen.effects);
    assert_eq!(results.len(), 2, "{results:?}");
    let (first, second) = (turn_of(results[0].1), turn_of(results[1].1));
    assert_ne!(first, second);
    let states: Vec<(ConversationState, Option<&str>)> =
        states(&seen.effects).iter().map(|r| (r.state, r.block.as_deref())).collect();
    use ConversationState::{Generating, Idle};
    assert_eq!(
        states,
        [
            (Generating, None),
            (Idle, Some("mock reply 1")),
            (Generating, None),
            (Idle, Some("mock reply 2")),
            (Idle, Some("mock reply 2"))
        ]
    );
    let record = seen
        .effects
        .iter()
        .find_map(|e| {
            if let Effect::Thread { record, worker } = e {
                assert_eq!(*worker, WORKER);
                Some(record)
            } else {
                None
            }
        })
        .expect("thread/read answered");
    let one = record.find("nonce-1").expect("nonce-1 is stored");
    let two = record.find("nonce-2").expect("nonce-2 is stored");
    assert_eq!((one.turn.as_str(), one.status), (first, Some(TurnStatus::Completed)));
    assert_eq!((two.turn.as_str(), two.status), (second, Some(TurnStatus::Completed)));
    assert_eq!(record.find("nonce-3"), None, "an absent nonce is the only proof a resend is safe");
    assert!(!seen.effects.iter().any(|e| matches!(e, Effect::Foreign { .. })));
    // The core's first lines are the handshake, in order.
    let methods: Vec<&str> = seen.written.iter().map(|w| w["method"].as_str().unwrap_or("")).collect();
    assert_eq!(methods, ["initialize", "initialized", "thread/start", "turn/start", "turn/start", "thread/read"]);
}

#[test]
fn a_turn_started_by_someone_else_is_foreign() {
    // The same recording, but the core never sent the second turn/start: the second turn
    // belongs to someone else, and so does the answer to that request.
    let script = vec![
        Step::Start,
        Step::Command(Create, 1, "nonce-1", "first prompt"),
        Step::Skip,
        Step::Command(Inspect, 1, "", ""),
    ];
    let seen = replay("two-turns", script);
    assert_eq!(seen.errors, ["UNKNOWN_RESPONSE"]);
    let foreign: Vec<&String> = seen
        .effects
        .iter()
        .filter_map(|e| if let Effect::Foreign { turn, .. } = e { Some(turn) } else { None })
        .collect();
    assert_eq!(foreign.len(), 2, "flagged live at turn/started and again by thread/read: {foreign:?}");
    assert_eq!(foreign[0], foreign[1]);
    // Flagged at `turn/started` already (before its `generating`), not only when the
    // user message without our nonce shows up.
    let at = seen.effects.iter().position(|e| matches!(e, Effect::Foreign { .. })).expect("foreign");
    assert!(
        matches!(&seen.effects[at + 1], Effect::State { report, .. } if report.state == ConversationState::Generating)
    );
    assert_eq!(results(&seen.effects).len(), 1);
}

#[test]
fn a_usage_limit_is_an_error_state_with_the_structured_reset() {
    let script = vec![Step::Start, Step::Command(Create, 1, "nonce-limit", "LIMIT please"), Step::Skip];
    let seen = replay("usage-limit", script);
    // The recorder's account/rateLimits/read (refused: no account) is not the core's.
    assert_eq!(seen.errors, ["UNKNOWN_RESPONSE"]);
    let states = states(&seen.effects);
    let last = states.last().expect("a state");
    assert_eq!(last.state, ConversationState::Error(ErrorKind::UsageLimit));
    assert_eq!(last.until, Some(Timestamp(1_796_212_800_000)), "primary window's resetsAt, in ms");
    assert!(last.detail.as_deref().is_some_and(|d| d.contains("usage limit")), "{last:?}");
    assert!(
        matches!(results(&seen.effects)[..], [(1, Outcome::Submitted { .. })]),
        "the prompt went in before the limit"
    );
}

#[test]
fn a_steer_joins_the_running_turn_and_a_late_one_is_refused() {
    let script = vec![
        Step::Start,
        Step::Command(Create, 1, "nonce-slow", "SLOW work"),
        Step::Command(Steer, 2, "nonce-steer", "a steer"),
        Step::Command(Steer, 3, "nonce-late", "too late"),
        Step::Command(Inspect, 3, "", ""),
    ];
    let seen = replay("steer", script);
    // The late steer is refused by the core itself (no turn runs); the recorded client's
    // was refused by the app-server with -32600, an answer the core never asked for.
    assert_eq!(seen.errors, ["UNKNOWN_RESPONSE"]);
    let results = results(&seen.effects);
    assert_eq!(results[0].0, 1);
    assert_eq!(results[1].0, 2);
    assert_eq!(turn_of(results[0].1), turn_of(results[1].1), "the steer went into the running turn");
    assert!(matches!(results[2], (3, Outcome::Failed { code: "STEERING_UNAVAILABLE", .. })), "{results:?}");
    let record = seen
        .effects
        .iter()
        .find_map(|e| if let Effect::Thread { record, .. } = e { Some(record) } else { None })
        .expect("read");
    assert_eq!(record.turns.len(), 1);
    assert_eq!(record.find("nonce-steer").map(|f| f.turn), record.find("nonce-slow").map(|f| f.turn));
    assert_eq!(record.find("nonce-late"), None);
    assert!(!seen.effects.iter().any(|e| matches!(e, Effect::Foreign { .. })));
}

#[test]
fn an_interrupted_turn_is_an_idle_observation() {
    let script = vec![
        Step::Start,
        Step::Command(Create, 1, "nonce-slow", "SLOW work"),
        Step::Interrupt,
        Step::Command(Inspect, 1, "", ""),
    ];
    let seen = replay("interrupt", script);
    assert_eq!(seen.errors, Vec::<&str>::new());
    let states: Vec<ConversationState> = states(&seen.effects).iter().map(|r| r.state).collect();
    assert_eq!(states, [ConversationState::Generating, ConversationState::Idle, ConversationState::Idle]);
    let record = seen
        .effects
        .iter()
        .find_map(|e| if let Effect::Thread { record, .. } = e { Some(record) } else { None })
        .expect("read");
    assert_eq!(record.find("nonce-slow").and_then(|f| f.status), Some(TurnStatus::Interrupted));
}

#[test]
fn every_method_sent_in_the_recordings_is_in_the_surface_list() {
    let listed: Vec<&str> = cli_executor::codex::surface::SURFACE
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert!(listed.len() >= 17, "{listed:?}");
    let recordings = [
        "two-turns",
        "usage-limit",
        "steer",
        "interrupt",
        "mcp-ready",
        "mcp-down",
        "mcp-resume-down",
        "goal-null-start",
        "goal-null-resume",
    ];
    for name in recordings {
        for line in support::fixture(name).iter().skip(1) {
            let (dir, method) = (line["dir"].as_str(), line["msg"]["method"].as_str());
            let recorder_only = method == Some("account/rateLimits/read");
            if let (Some("send"), Some(method), false) = (dir, method, recorder_only) {
                assert!(listed.contains(&method), "{name}: {method} is not in surface.txt");
            }
        }
    }
}
