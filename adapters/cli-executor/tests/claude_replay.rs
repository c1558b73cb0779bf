//! The real `claude` 2.1.332, recorded offline against the loopback mock Messages API
//! (`fixtures/claude-2.1.332/README.md`), replayed through the Claude core: the data is
//! what the real CLI wrote, not what we think it writes.

mod claude_support;

use claude_support::{CREATE, SESSION, Step, WORKER, core, fixture_text, replay};
use cli_executor::Error;
use cli_executor::claude::nonce::nonce_uuid;
use cli_executor::claude::transcript::{Found, find};
use cli_executor::claude::{Effect, Landed, Launch, Outcome, Report};
use engine::effect::CommandKind::{Close, Create, Send, Steer};
use engine::model::{ConversationState, ErrorKind};

use ConversationState::{Closed, Generating, Idle};

fn states(effects: &[Effect]) -> Vec<&Report> {
    effects.iter().filter_map(|e| if let Effect::State { report, .. } = e { Some(report) } else { None }).collect()
}

fn kinds(effects: &[Effect]) -> Vec<ConversationState> {
    states(effects).iter().map(|r| r.state).collect()
}

fn results(effects: &[Effect]) -> Vec<(u64, &Outcome)> {
    effects
        .iter()
        .filter_map(
            |e| if let Effect::Result { command, outcome } = e { Some((command.attempt.0, outcome)) } else { None },
        )
        .collect()
}

fn submitted(key: &str, duplicate: bool) -> Outcome {
    Outcome::Submitted { session: SESSION.to_string(), nonce: nonce_uuid(key), duplicate }
}

fn no_foreign(effects: &[Effect]) {
    assert!(!effects.iter().any(|e| matches!(e, Effect::Foreign { .. })), "{effects:?}");
}

#[test]
fn two_turns_in_one_process_are_two_idles() {
    let script = vec![
        Step::Command(Create, 1, CREATE, "first prompt"),
        Step::Command(Send, 2, "conversation.send:exe-2", "second prompt"),
        Step::Command(Close, 3, "", ""),
    ];
    let seen = replay("two-turns", "a", core(), script);
    assert_eq!(seen.errors, Vec::<&str>::new());
    assert_eq!(
        results(&seen.effects),
        [(1, &submitted(CREATE, false)), (2, &submitted("conversation.send:exe-2", false))]
    );
    assert_eq!(kinds(&seen.effects), [Generating, Idle, Generating, Idle, Closed]);
    let blocks: Vec<&str> = states(&seen.effects).iter().filter_map(|r| r.block.as_deref()).collect();
    assert_eq!(blocks.len(), 2);
    assert!(blocks.iter().all(|b| b.starts_with("mock reply ")), "{blocks:?}");
    no_foreign(&seen.effects);
    assert!(
        matches!(seen.effects.last(), Some(Effect::Exited { code: Some(0), refusal: None, worker: WORKER, .. })),
        "{:?}",
        seen.effects.last()
    );
    // The first line of the process is our prompt: nothing is written before it.
    assert_eq!(seen.written[0]["uuid"], nonce_uuid(CREATE));
}

#[test]
fn a_steer_without_a_tool_boundary_is_queued_as_the_next_turn() {
    let script = vec![
        Step::Command(Create, 1, CREATE, "SLOW work"),
        Step::Command(Steer, 2, "conversation.steer:exe-2", "a steer"),
        Step::Command(Close, 3, "", ""),
    ];
    let seen = replay("mid-turn", "a", core(), script);
    assert_eq!(seen.errors, Vec::<&str>::new());
    assert_eq!(
        results(&seen.effects),
        [(1, &submitted(CREATE, false)), (2, &submitted("conversation.steer:exe-2", false))]
    );
    let landed: Vec<&Effect> = seen.effects.iter().filter(|e| matches!(e, Effect::Steered { .. })).collect();
    assert!(matches!(landed[..], [Effect::Steered { landed: Landed::NextTurn, .. }]), "{landed:?}");
    // Reported at the first turn's end, just before the idle that ends it (the engine must
    // see the landing first), and before the second turn starts.
    let at = seen.effects.iter().position(|e| matches!(e, Effect::Steered { .. })).expect("steered");
    let (before, after) = (kinds(&seen.effects[..at]), kinds(&seen.effects[at..]));
    assert_eq!(before, [Generating], "{:?}", seen.effects);
    assert_eq!(after.first(), Some(&Idle), "{:?}", seen.effects);
    assert_eq!(kinds(&seen.effects), [Generating, Idle, Generating, Idle, Closed]);
    no_foreign(&seen.effects);
}

#[test]
fn a_steer_during_a_tool_call_is_merged_into_the_running_turn() {
    let script = vec![
        Step::Command(Create, 1, CREATE, "TOOL please"),
        Step::Command(Steer, 2, "conversation.steer:exe-2", "a steer"),
        Step::Command(Close, 3, "", ""),
    ];
    let seen = replay("mid-turn-tool", "a", core(), script);
    assert_eq!(seen.errors, Vec::<&str>::new());
    let landed: Vec<&Effect> = seen.effects.iter().filter(|e| matches!(e, Effect::Steered { .. })).collect();
    assert!(matches!(landed[..], [Effect::Steered { landed: Landed::Merged, .. }]), "{landed:?}");
    assert_eq!(kinds(&seen.effects), [Generating, Idle, Closed], "one turn");
    let idle = states(&seen.effects)[1];
    assert!(idle.block.as_deref().is_some_and(|b| b.starts_with("tool done")), "{idle:?}");
    no_foreign(&seen.effects);
}

#[test]
fn a_429_is_a_usage_limit_without_a_time_and_the_process_lives_on() {
    let script = vec![
        Step::Command(Create, 1, CREATE, "LIMIT please"),
        Step::Command(Send, 2, "conversation.send:exe-2", "after the limit"),
        Step::Command(Close, 3, "", ""),
    ];
    let seen = replay("usage-limit", "a", core(), script);
    assert_eq!(seen.errors, Vec::<&str>::new());
    let limit = ConversationState::Error(ErrorKind::UsageLimit);
    assert_eq!(kinds(&seen.effects), [Generating, limit, Generating, limit, Closed]);
    let report = states(&seen.effects)[1];
    assert_eq!(report.until, None, "API-key auth sends no reset: the worker pauses");
    assert!(report.detail.as_deref().is_some_and(|d| d.starts_with("API Error: Request rejected (429)")), "{report:?}");
    assert!(matches!(seen.effects.last(), Some(Effect::Exited { code: Some(1), refusal: None, .. })));
}

#[test]
fn a_500_after_ten_retries_is_a_generic_error_and_each_retry_is_reported() {
    let script = vec![Step::Command(Create, 1, CREATE, "FAIL500 please"), Step::Command(Close, 2, "", "")];
    let seen = replay("server-error", "a", core(), script);
    assert_eq!(seen.errors, Vec::<&str>::new());
    // The turn starts, retries ten times, and its error message (an `assistant` line) ends
    // the retrying: still generating, without a retry.
    let mut expected = vec![Generating; 12];
    expected.extend([ConversationState::Error(ErrorKind::Generic), Closed]);
    assert_eq!(kinds(&seen.effects), expected);
    // `system/api_retry` 1 to 10: still generating, with what the CLI said and which retry.
    let retries: Vec<_> = states(&seen.effects).iter().filter_map(|r| r.retry.clone()).collect();
    assert_eq!(retries.len(), 10, "{retries:?}");
    assert_eq!(&*retries[0].reason, "server_error (HTTP 500)");
    assert_eq!(retries.iter().map(|r| r.attempt).collect::<Vec<_>>(), (1..=10).map(Some).collect::<Vec<_>>());
    assert_eq!(states(&seen.effects)[11].retry, None, "the turn moved again");
    let report = states(&seen.effects)[12];
    assert_eq!(report.retry, None, "the turn's end is no retry");
    assert!(report.detail.as_deref().is_some_and(|d| d.contains("500")), "{report:?}");
}

#[test]
fn a_retried_create_is_refused_as_session_in_use_and_resumed() {
    let first = replay(
        "duplicate-session",
        "a",
        core(),
        vec![Step::Command(Create, 1, CREATE, "first prompt"), Step::Command(Close, 2, "", "")],
    );
    assert_eq!(results(&first.effects), [(1, &submitted(CREATE, false))]);
    // Another executor (or this one after a crash) retries the same create: same key,
    // same session id, same first line. The CLI refuses it at once, while the first lives
    // and again after it exited.
    for proc in ["b", "c"] {
        // (The recorder closed stdin after the child had exited on its own: `Skip`.)
        let script = vec![Step::Command(Create, 1, CREATE, "first prompt"), Step::Skip];
        let mut seen = replay("duplicate-session", proc, core(), script);
        let refusal = Error::SessionInUse { session: SESSION.to_string() };
        assert_eq!(refusal.code(), "SESSION_IN_USE");
        assert_eq!(
            seen.effects,
            [Effect::Exited { worker: WORKER, session: SESSION.to_string(), code: Some(1), refusal: Some(refusal) }],
            "{proc}: no result yet: the line was never read"
        );
        // The remedy: resume the session and write the line again (the CLI runs a uuid once).
        seen.core.respawn(engine::time::Timestamp(10_000)).expect("respawn");
        let asked = claude_support::drain(&mut seen.core);
        assert!(
            matches!(&asked[0], Effect::Spawn { launch: Launch::Resume, args, .. } if args.ends_with(&["--resume".to_string(), SESSION.to_string()])),
            "{asked:?}"
        );
        assert!(matches!(&asked[1], Effect::Prompt { line, .. } if line.contains(&nonce_uuid(CREATE))), "{asked:?}");
    }
}

#[test]
fn after_resume_the_session_id_is_kept_and_an_old_nonce_is_not_run_again() {
    let first = replay(
        "resume",
        "a",
        core(),
        vec![Step::Command(Create, 1, CREATE, "first prompt"), Step::Command(Close, 2, "", "")],
    );
    assert_eq!(results(&first.effects), [(1, &submitted(CREATE, false))]);
    // The executor restarted: the journal names the session and its nonces.
    let mut restarted = core();
    restarted.adopt(WORKER, SESSION, &[nonce_uuid(CREATE)]);
    let seen = replay(
        "resume",
        "b",
        restarted,
        vec![
            Step::Respawn,
            Step::Command(Send, 1, CREATE, "first prompt"),
            Step::Command(Send, 3, "conversation.send:exe-2", "after resume"),
            Step::Command(Close, 4, "", ""),
        ],
    );
    assert_eq!(seen.errors, Vec::<&str>::new());
    assert_eq!(
        results(&seen.effects),
        [(1, &submitted(CREATE, true)), (3, &submitted("conversation.send:exe-2", false))],
        "the resent create prompt was already in the session"
    );
    // `init` named the same session (a different id would be an error state).
    assert_eq!(kinds(&seen.effects), [Generating, Idle, Closed]);
    no_foreign(&seen.effects);
}

#[test]
fn a_resent_nonce_in_the_same_process_is_a_duplicate() {
    let seen = replay(
        "duplicate-uuid",
        "a",
        core(),
        vec![
            Step::Command(Create, 1, CREATE, "first prompt"),
            Step::Command(Send, 1, CREATE, "first prompt"),
            Step::Command(Close, 2, "", ""),
        ],
    );
    assert_eq!(results(&seen.effects), [(1, &submitted(CREATE, false)), (1, &submitted(CREATE, true))]);
    assert_eq!(kinds(&seen.effects), [Generating, Idle, Closed], "no second turn");
}

#[test]
fn a_prompt_the_core_did_not_write_is_a_foreign_turn() {
    // The same recording, but the core never sent the second prompt: someone else did.
    let seen = replay(
        "two-turns",
        "a",
        core(),
        vec![Step::Command(Create, 1, CREATE, "first prompt"), Step::Skip, Step::Command(Close, 3, "", "")],
    );
    assert_eq!(seen.errors, Vec::<&str>::new());
    let foreign: Vec<&Option<String>> = seen
        .effects
        .iter()
        .filter_map(|e| if let Effect::Foreign { uuid, .. } = e { Some(uuid) } else { None })
        .collect();
    let theirs = Some(nonce_uuid("conversation.send:exe-2"));
    assert_eq!(foreign, [&theirs], "flagged once, at its `queued`");
    assert_eq!(results(&seen.effects).len(), 1);
    assert_eq!(kinds(&seen.effects), [Generating, Idle, Generating, Idle, Closed]);
}

#[test]
fn the_transcript_says_sent_finished_merged_absent() {
    let two = fixture_text("two-turns.transcript");
    assert_eq!(find(&two, &nonce_uuid(CREATE), "first prompt"), Found::Sent { merged: false, finished: true });
    let second = nonce_uuid("conversation.send:exe-2");
    assert_eq!(find(&two, &second, "second prompt"), Found::Sent { merged: false, finished: true });
    assert_eq!(find(&two, &nonce_uuid("conversation.send:exe-3"), "third"), Found::Absent);
    let tool = fixture_text("mid-turn-tool.transcript");
    let steer = nonce_uuid("conversation.steer:exe-2");
    assert_eq!(find(&tool, &steer, "a steer"), Found::Sent { merged: true, finished: true });
    let queued = fixture_text("mid-turn.transcript");
    assert_eq!(find(&queued, &steer, "a steer"), Found::Sent { merged: false, finished: true });
}

#[test]
fn a_transcript_cut_short_after_a_crash() {
    let two = fixture_text("two-turns.transcript");
    let lines: Vec<&str> = two.lines().collect();
    let second = nonce_uuid("conversation.send:exe-2");
    let user = lines.iter().position(|l| l.contains(&format!("\"uuid\": \"{second}\""))).expect("the user entry");
    let upto = |n: usize| lines[..n].iter().map(|l| format!("{l}\n")).collect::<String>();
    // Written, but no answer yet: sent, turn not finished.
    assert_eq!(find(&upto(user + 1), &second, "second prompt"), Found::Sent { merged: false, finished: false });
    // Enqueued (text only) and not dequeued: it may run on resume.
    let enqueue = lines[..user].iter().rposition(|l| l.contains("\"enqueue\"")).expect("its enqueue");
    assert!(matches!(find(&upto(enqueue + 1), &second, "second prompt"), Found::CannotTell { .. }));
    // Dequeued but the user entry torn in half: cannot tell.
    let torn = format!("{}{}", upto(user), &lines[user][..lines[user].len() / 2]);
    assert!(matches!(find(&torn, &second, "second prompt"), Found::CannotTell { .. }));
    // The same prompt text sent earlier and finished does not make a new one unprovable.
    assert_eq!(find(&upto(user - 1), &nonce_uuid("conversation.send:exe-9"), "first prompt"), Found::Absent);
    // A prompt whose text the journal no longer keeps: any prompt still enqueued may be it.
    assert!(matches!(find(&upto(user - 1), &nonce_uuid("conversation.send:exe-9"), ""), Found::CannotTell { .. }));
    assert_eq!(find(&two, &nonce_uuid("conversation.send:exe-9"), ""), Found::Absent, "nothing left enqueued");
}
