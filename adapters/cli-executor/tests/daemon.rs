//! The executor process against the real daemon (in process, on loopback), driving the
//! scripted stand-in `standin/codex_sim.py`: a run started for a new conversation gets a
//! Codex thread; turns run and end idle; the next prompt goes in only when the daemon
//! decides (Auto Resume); the executor killed mid-turn, or mid-submission, and restarted
//! sends no prompt twice, and the daemon books each attempt as what really happened.
//! (The real `codex` is driven by `executor.rs` when `CODEX_BIN` is set.)

mod harness;

use engine::ids::WorkerId;
use engine::model::{AttemptOutcome, AttemptReason, BindingStatus, ConversationState};
use harness::{
    Binary, Daemon, Dirs, GRACE_MS, conversation_in, crash, dirs, journal_phase, submitted, taken_in, until,
};
use std::path::PathBuf;

fn nonces(dirs: &Dirs, worker: WorkerId) -> Vec<String> {
    taken_in(dirs, worker).into_iter().map(|(_, nonce)| nonce).collect()
}

fn hold_file(dirs: &Dirs) -> PathBuf {
    dirs.root.path().join("hold")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_worker_resumes_only_when_the_daemon_decides_and_an_executor_crash_mid_turn_sends_nothing_twice() {
    eprintln!("binary: the stand-in {}", harness::sim_script().display());
    let d = Daemon::start().await;
    let dirs = dirs();
    let hold = hold_file(&dirs);
    std::fs::write(&hold, "").expect("hold");
    let binary = Binary::Sim(vec!["--hold-file".into(), hold.display().to_string()]);
    let task = harness::executor(&d, &dirs, &binary);
    let root = harness::start_run(&d, &dirs, engine::ExecutorKind::Codex).await;

    // create: a thread is started and bound; its first turn runs (held by the stand-in).
    submitted(&d, root, 1).await;
    conversation_in(&d, root, ConversationState::Generating).await;
    let view = d.worker(root).await;
    let binding = view.worker.binding.clone().expect("bound");
    assert!(binding.conversation.starts_with("codex:thread/"), "{}", binding.conversation);
    assert_eq!(binding.status, BindingStatus::Verified);
    assert_eq!(nonces(&dirs, root), ["conversation.create:exe-1"]);

    // The turn ends: idle, an observation. Nothing more goes in before the daemon decides.
    std::fs::remove_file(&hold).expect("release");
    conversation_in(&d, root, ConversationState::Idle).await;
    std::fs::write(&hold, "").expect("hold the next turn");
    assert_eq!(nonces(&dirs, root).len(), 1, "nothing sent at the idle itself");
    let attempts = submitted(&d, root, 2).await;
    assert_eq!(attempts[1].reason, AttemptReason::AutoResume);
    assert_eq!(attempts[0].outcome, Some(AttemptOutcome::TurnEnded));
    let scheduled = attempts[1].scheduled_at.0;
    let idle = attempts[0].idle_at.expect("the first turn's end").0;
    assert!(scheduled >= idle + GRACE_MS, "resumed {} ms after the idle, before the grace", scheduled - idle);
    conversation_in(&d, root, ConversationState::Generating).await;
    assert_eq!(nonces(&dirs, root), ["conversation.create:exe-1", "conversation.send:exe-2"]);

    // The executor dies mid-turn (its child with it) and starts again on the same state.
    crash(task).await;
    let task = harness::executor(&d, &dirs, &binary);
    // The new child finds the turn interrupted: the turn ended, and the daemon, not the
    // executor, sends the next prompt.
    let attempts = submitted(&d, root, 3).await;
    assert_eq!(attempts[1].outcome, Some(AttemptOutcome::TurnEnded), "attempt 2 booked as a turn that ran");
    assert_eq!(attempts[2].reason, AttemptReason::AutoResume);
    let sent = nonces(&dirs, root);
    assert_eq!(
        sent,
        ["conversation.create:exe-1", "conversation.send:exe-2", "conversation.send:exe-3"],
        "each nonce once"
    );
    assert!(d.worker(root).await.worker.pause.is_none());
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_submission_is_settled_from_codexs_record_sent_or_provably_not() {
    eprintln!("binary: the stand-in {}", harness::sim_script().display());
    for (flag, went_in) in [("--stall-turn-start", true), ("--drop-turn-start", false)] {
        let d = Daemon::start().await;
        let dirs = dirs();
        let binary = Binary::Sim(vec![flag.into(), "2".into()]);
        let task = harness::executor(&d, &dirs, &binary);
        let root = harness::start_run(&d, &dirs, engine::ExecutorKind::Codex).await;
        submitted(&d, root, 1).await;
        // The second prompt's turn/start is never answered: the journal says
        // submission-started. The stand-in took it in (stall) or not (drop).
        // The stand-in got the line (it counted it; when stalling, it took the prompt in).
        until("the second turn/start", || async {
            let started = journal_phase(&dirs, "conversation.send:exe-2").as_deref() == Some("submission-started");
            let got = harness::turn_starts(&dirs, root) >= 2;
            let taken = nonces(&dirs, root).iter().any(|n| n == "conversation.send:exe-2");
            (started && got && taken == went_in).then_some(())
        })
        .await;
        crash(task).await;
        let task = harness::executor(&d, &dirs, &binary);
        if went_in {
            // thread/read shows the nonce: submitted, never resent; its turn ended with the crash.
            let attempts = submitted(&d, root, 3).await;
            assert_eq!(attempts[1].outcome, Some(AttemptOutcome::TurnEnded), "{flag}: {:?}", attempts[1]);
            let sent = nonces(&dirs, root);
            assert_eq!(sent.iter().filter(|n| *n == "conversation.send:exe-2").count(), 1, "{flag}: {sent:?}");
        } else {
            // No message carries the nonce: definitely not submitted, so the daemon may send
            // again (after its own backoff); nothing is ambiguous, the worker is not paused.
            let attempts = until("attempt 2 settled", || async {
                let attempts = d.attempts(root).await;
                (attempts.len() >= 2 && attempts[1].outcome.is_some()).then_some(attempts)
            })
            .await;
            assert_eq!(attempts[1].outcome, Some(AttemptOutcome::NotDelivered), "{flag}: {:?}", attempts[1]);
            assert_eq!(attempts[1].error_code.as_deref(), Some("DEADLINE_EXCEEDED"));
            assert!(d.worker(root).await.worker.pause.is_none(), "{flag}: not paused");
            assert!(!nonces(&dirs, root).iter().any(|n| n == "conversation.send:exe-2"));
        }
        crash(task).await;
        d.stop().await;
    }
}
