//! The scenario parser's tests: the verbs parse into knobs, actions and expectations, and
//! bad input is refused with its line and a message, never a panic.

use super::*;

fn error(text: &str) -> ParseError {
    parse("t.scn", text).expect_err("the scenario is refused")
}

#[test]
fn attach_and_closes_parse() {
    let s = parse("t.scn", "# re-attach\nworkers 2\nat 20m attach lane1\nexpect closes >= 1\n").expect("parses");
    assert!(matches!(s.knobs.script[..], [Action { at_ms: 1_200_000, lane: 1, what: ActionKind::Attach }]));
    assert!(matches!(s.expectations[..], [Expectation::ClosesAtLeast(1)]));
}

#[test]
fn a_bad_attach_is_refused_with_its_line() {
    let e = error("workers 2\nat 20m attach root");
    assert_eq!((e.line, e.message.as_str()), (2, "attach takes a lane, not root: `at 20m attach root`"));
    let e = error("at 20m attach lane0 now");
    assert_eq!(
        (e.line, e.message.as_str()),
        (1, "attach takes no arguments after the lane: `at 20m attach lane0 now`")
    );
    assert_eq!(error("at 20m attach").message, "expected laneN or root: `at 20m attach`");
    assert_eq!(error("at soon attach lane0").message, "expected a time: `at soon attach lane0`");
    assert_eq!(error("workers 1\nat 20m attach lane3").message, "an action names a lane beyond `workers`");
    assert_eq!(error("expect closes >= many").message, "expected a number: `expect closes >= many`");
}

#[test]
fn stop_root_awaits_and_woken_parse() {
    let text = "workers 2\nroot on\nat 20m root-awaits lane0\nat 5m root-awaits lane1\nat 30m stop lane0\n\
                expect woken root cancelled = 1\n";
    let s = parse("t.scn", text).expect("parses");
    assert!(matches!(s.knobs.script[..], [Action { at_ms: 1_800_000, lane: 0, what: ActionKind::Stop }]));
    assert_eq!(s.knobs.agents.root_waits, [(300_000, WorkerId(3)), (1_200_000, WorkerId(2))]);
    assert!(matches!(
        s.expectations[..],
        [Expectation::Woken { lane: usize::MAX, outcome: Lifecycle::Cancelled, count: 1 }]
    ));
}

#[test]
fn a_bad_stop_root_awaits_or_woken_is_refused_with_its_line() {
    let e = error("workers 2\nat 20m stop root");
    assert_eq!(
        (e.line, e.message.as_str()),
        (2, "stop takes a lane, not root (a run is stopped as a whole): `at 20m stop root`")
    );
    assert_eq!(
        error("at 20m stop lane0 now").message,
        "stop takes no arguments after the lane: `at 20m stop lane0 now`"
    );
    assert_eq!(error("at 20m stop").message, "expected laneN or root: `at 20m stop`");
    assert_eq!(error("workers 1\nat 20m stop lane1").message, "an action names a lane beyond `workers`");
    assert_eq!(
        error("root on\nat 1m root-awaits root").message,
        "root cannot wait for itself: `at 1m root-awaits root`"
    );
    assert_eq!(error("root on\nat 1m root-awaits").message, "expected laneN: `at 1m root-awaits`");
    assert_eq!(
        error("root on\nat 1m root-awaits lane0 lane1").message,
        "root-awaits takes no arguments after the lane: `at 1m root-awaits lane0 lane1`"
    );
    assert_eq!(error("root on\nat 1m root-awaits lane7").message, "an action names a lane beyond `workers`");
    let e = error("workers 1\nat 1m root-awaits lane0\n");
    assert_eq!((e.line, e.message.as_str()), (2, "root-awaits needs `root on` (a coordinating agent that can wait)"));
    assert_eq!(
        error("expect woken root stopped = 1").message,
        "expected cancelled or failed: `expect woken root stopped = 1`"
    );
    assert_eq!(error("expect woken root cancelled >= 1").message, "expected =: `expect woken root cancelled >= 1`");
    assert_eq!(
        error("expect woken root cancelled = once").message,
        "expected a number: `expect woken root cancelled = once`"
    );
    assert_eq!(
        error("expect woken root cancelled = 1 2").message,
        "expected nothing after the count: `expect woken root cancelled = 1 2`"
    );
    assert_eq!(
        error("expect woken lanex cancelled = 1").message,
        "expected laneN or root: `expect woken lanex cancelled = 1`"
    );
}
