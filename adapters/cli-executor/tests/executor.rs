//! The executor without a daemon: command frames in as the daemon sends them, reports
//! out, against the stateful stand-in (`standin/codex_sim.py`): a repeated command id is
//! never submitted twice, a steer that finds its turn ended is "not steered", a child that
//! exits is replaced and its thread resumed (the prompt it died on settled from Codex's
//! record), and a child that keeps exiting ends in an error state that pauses the worker.
//! With `CODEX_BIN` set, the first test runs against the real binary too.

mod harness;

use cli_executor::base::worker::Out;
use cli_executor::run::router::{Reply, Router};
use engine::ids::WorkerId;
use executor_protocol::{KindWire, OutcomeWire, StateName};
use harness::{Binary, MockModel, binaries, dirs, next_report as until, outcome, result_of, settings, state, taken_in};

const WORKER: WorkerId = WorkerId(7);

fn frame(n: u64, kind: KindWire, conversation: &str, prompt: &str) -> String {
    harness::frame(WORKER, n, kind, conversation, prompt)
}

async fn no_reply(executor: &mut Router, text: &str) {
    assert_eq!(executor.daemon(text).await, Reply::Send(Vec::new()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_command_id_is_never_submitted_twice_and_a_late_steer_is_not_steered() {
    let hold_dir = tempfile::tempdir().expect("tempdir");
    let hold = hold_dir.path().join("hold");
    let hold_flag = hold.display().to_string();
    for binary in binaries("repeated command id", &["--end-before-steer", "--hold-file", &hold_flag]) {
        eprintln!("binary: {binary:?}");
        let dirs = dirs();
        let (binary, _mock) = match binary {
            Binary::Real { path, .. } => {
                let mock = MockModel::start(None);
                (Binary::Real { path, port: mock.port }, Some(mock))
            }
            sim => (sim, None),
        };
        let real = matches!(binary, Binary::Real { .. });
        let (mut executor, mut reports) = Router::open(settings(&dirs, &binary)).await.expect("opens");

        let create = frame(1, KindWire::Create, "", "first prompt");
        no_reply(&mut executor, &create).await;
        let url = match outcome(until(&mut reports, "the create's result", result_of(1)).await) {
            OutcomeWire::Submitted { conversation_url: Some(url), .. } => url,
            other => panic!("create: {other:?}"),
        };
        assert!(url.starts_with("codex:thread/"), "{url}");
        until(&mut reports, "the first turn's end", state(StateName::Idle)).await;

        // The same create again: its stored result, and nothing goes to Codex.
        match executor.daemon(&create).await {
            Reply::Send(frames) => {
                assert_eq!(frames.len(), 1, "{frames:?}");
                assert!(frames[0].contains("\"status\":\"submitted\"") && frames[0].contains(&url), "{}", frames[0]);
            }
            other => panic!("{other:?}"),
        }

        // A send, delivered twice while in progress and once after: submitted once. (The
        // second delivery may find the submission already answered: then it gets that
        // stored answer, as a repeat after it does.)
        let send = frame(2, KindWire::Send, &url, "second prompt");
        no_reply(&mut executor, &send).await;
        match executor.daemon(&send).await {
            Reply::Send(frames) if frames.is_empty() => {}
            Reply::Send(frames) => {
                assert_eq!(frames.len(), 1, "{frames:?}");
                assert!(frames[0].contains("\"status\":\"submitted\""), "{}", frames[0]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            outcome(until(&mut reports, "the send's result", result_of(2)).await),
            OutcomeWire::Submitted { .. }
        ));
        until(&mut reports, "the second turn's end", state(StateName::Idle)).await;
        assert!(matches!(executor.daemon(&send).await, Reply::Send(frames) if frames.len() == 1));

        // A steer after the turn ended: definitely not steered.
        no_reply(&mut executor, &frame(3, KindWire::Steer, &url, "a late steer")).await;
        match outcome(until(&mut reports, "the steer's result", result_of(3)).await) {
            OutcomeWire::Failed { code, .. } => assert_eq!(code, "STEERING_UNAVAILABLE"),
            other => panic!("steer: {other:?}"),
        }
        if !real {
            // The race the recording shows: the steer goes out into a running turn, which
            // ends just before Codex reads it (-32600 "no active turn to steer").
            std::fs::write(&hold, "").expect("hold");
            no_reply(&mut executor, &frame(4, KindWire::Send, &url, "fourth prompt")).await;
            until(&mut reports, "the fourth turn runs", state(StateName::Generating)).await;
            no_reply(&mut executor, &frame(5, KindWire::Steer, &url, "a racing steer")).await;
            match outcome(until(&mut reports, "the racing steer's result", result_of(5)).await) {
                OutcomeWire::Failed { code, detail } => {
                    assert_eq!(code, "STEERING_UNAVAILABLE");
                    assert!(detail.contains("no active turn to steer"), "refused by Codex, not locally: {detail}");
                }
                other => panic!("steer: {other:?}"),
            }
            std::fs::remove_file(&hold).expect("release");
            let taken = taken_in(&dirs, WORKER);
            let nonces: Vec<&str> = taken.iter().map(|(_, n)| n.as_str()).collect();
            let sent = ["conversation.create:exe-1", "conversation.send:exe-2", "conversation.send:exe-4"];
            assert_eq!(nonces, sent, "each once, no steer taken in");
        }
        drop(executor);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_exits_is_replaced_with_its_thread_resumed_and_one_that_keeps_exiting_ends_in_error() {
    eprintln!("binary: the stand-in {}", harness::sim_script().display());
    let dirs = dirs();
    let binary = Binary::Sim(vec!["--exit-on-turn-start".into(), "2".into()]);
    let (mut executor, mut reports) = Router::open(settings(&dirs, &binary)).await.expect("opens");
    no_reply(&mut executor, &frame(1, KindWire::Create, "", "first")).await;
    let url = match outcome(until(&mut reports, "the create's result", result_of(1)).await) {
        OutcomeWire::Submitted { conversation_url: Some(url), .. } => url,
        other => panic!("create: {other:?}"),
    };
    until(&mut reports, "idle", state(StateName::Idle)).await;
    // The child dies on the second prompt before taking it in: a new child resumes the
    // thread, whose record proves the prompt absent.
    no_reply(&mut executor, &frame(2, KindWire::Send, &url, "second")).await;
    match outcome(until(&mut reports, "the send's settlement", result_of(2)).await) {
        OutcomeWire::Failed { code, .. } => assert_eq!(code, "DEADLINE_EXCEEDED"),
        other => panic!("{other:?}"),
    }
    // The new child serves the next prompt on the same thread. The thread it read was idle
    // as last published, so no state went out again (`seq` is still 2: an idle republished
    // with a larger `seq` would read as another turn end).
    no_reply(&mut executor, &frame(3, KindWire::Send, &url, "third")).await;
    assert_eq!(
        outcome(until(&mut reports, "the third's result", result_of(3)).await),
        OutcomeWire::Submitted { state_seq: 2, conversation_url: None }
    );
    let nonces: Vec<String> = taken_in(&dirs, WORKER).into_iter().map(|(_, n)| n).collect();
    assert_eq!(nonces, ["conversation.create:exe-1", "conversation.send:exe-3"]);
    drop(executor);

    // The same state with a child that exits at once: restarted with backoff, then given up.
    let mut crashing = settings(&dirs, &binary);
    crashing.args = vec!["-c".into(), "import sys; sys.exit(4)".into()];
    let (_executor, mut reports) = Router::open(crashing).await.expect("opens");
    let error = until(&mut reports, "the error state", state(StateName::Error)).await;
    let Out::State(error) = error else { unreachable!("a state") };
    assert_eq!(error.error_kind, Some(executor_protocol::ErrorKindWire::HostUiChanged));
    let detail = error.detail.unwrap_or_default();
    assert!(detail.contains("exited 5 times in a row"), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_nobody_started_is_reported_as_foreign_turn_with_its_detail() {
    eprintln!("binary: the stand-in {}", harness::sim_script().display());
    let dirs = dirs();
    let binary = Binary::Sim(vec!["--foreign-after".into(), "1".into()]);
    let (mut executor, mut reports) = Router::open(settings(&dirs, &binary)).await.expect("opens");
    no_reply(&mut executor, &frame(1, KindWire::Create, "", "first")).await;
    assert!(matches!(
        outcome(until(&mut reports, "the create's result", result_of(1)).await),
        OutcomeWire::Submitted { .. }
    ));
    let error = until(&mut reports, "the foreign turn", state(StateName::Error)).await;
    let Out::State(error) = error else { unreachable!("a state") };
    assert_eq!(error.error_kind, Some(executor_protocol::ErrorKindWire::ForeignTurn));
    let detail = error.detail.unwrap_or_default();
    assert!(detail.contains("a turn the orchestrator did not start"), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_limits_reset_is_kept_across_an_executor_restart() {
    eprintln!("binary: the stand-in {}", harness::sim_script().display());
    let dirs = dirs();
    let binary = Binary::Sim(vec!["--limit-on".into(), "1".into(), "--limit-reset-s".into(), "3".into()]);
    let (mut executor, mut reports) = Router::open(settings(&dirs, &binary)).await.expect("opens");
    no_reply(&mut executor, &frame(1, KindWire::Create, "", "first")).await;
    assert!(matches!(
        outcome(until(&mut reports, "the create's result", result_of(1)).await),
        OutcomeWire::Submitted { .. }
    ));
    let Out::State(limit) = until(&mut reports, "the limit", state(StateName::Error)).await else {
        unreachable!("a state")
    };
    assert_eq!(limit.error_kind, Some(executor_protocol::ErrorKindWire::UsageLimit));
    let reset = limit.until_ms.expect("the reset of account/rateLimits/updated");
    drop(executor);

    // A new executor: the rate-limit notification is gone, and `thread/read` shows the limit
    // without a reset. The journaled reset holds: the hello says it, no state without it is
    // sent, and the thread is `idle` at the reset.
    let (executor, mut reports) = Router::open(settings(&dirs, &binary)).await.expect("reopens");
    let hello: serde_json::Value =
        serde_json::from_str(&executor.hello("t", &cli_executor::run::router::Intro::new("cli", 1, 16))).expect("json");
    assert_eq!(hello["bindings"][0]["observation"]["untilMs"], reset, "{hello}");
    let Out::State(next) = until(&mut reports, "the next state", |o| matches!(o, Out::State(_))).await else {
        unreachable!("a state")
    };
    assert_eq!(next.state, StateName::Idle, "the limit held to its reset: {next:?}");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis();
    assert!(now >= u128::from(reset), "idle at the reset, not before: {now} < {reset}");
}
