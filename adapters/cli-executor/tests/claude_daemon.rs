//! Claude workers through the executor process against the real daemon (in process, on
//! loopback, its MCP server probed before every child), driving the stand-in
//! (`standin/claude_sim.py`) and, when `CLAUDE_BIN` names it, the real `claude` offline
//! against the scripted mock Messages API: a run whose root is a Claude worker gets a
//! session; turns end idle; the next prompt goes in only when the daemon decides (Auto
//! Resume); the executor killed mid-turn, or mid-submission, and restarted sends no prompt
//! twice, and the daemon books each attempt as what really happened; a turn nobody sent
//! pauses the worker as `foreign_turn`.

mod claude_harness;
mod harness;

use claude_harness::{Claude, MockApi, nonce, options, sim_lines, taken_in};
use engine::ExecutorKind;
use engine::model::{AttemptOutcome, AttemptReason, BindingStatus, ConversationState};
use harness::{
    Daemon, GRACE_MS, conversation_in, crash, dirs, journal_phase, spawn_executor, start_run, submitted, until,
};

/// Releases held turns one by one: the stand-in's (`--release-file`) and the real
/// binary's, whose turns are the mock's `slow` answers (`--release`). A turn k ends only
/// once the file says k, so the next turn is held from its start, however late the test
/// gets to look (a hold file turned off and on again let a turn that started in between
/// run through under load, and the mock's fixed six-second `slow` could end before the
/// crash it was held for).
struct Release(std::path::PathBuf);

impl Release {
    /// Lets the first `turns` turns end.
    fn allow(&self, turns: u32) {
        std::fs::write(&self.0, turns.to_string()).expect("release");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_worker_resumes_only_when_the_daemon_decides_and_an_executor_crash_mid_turn_sends_nothing_twice() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let release = Release(scratch.path().join("release"));
    let release_flag = release.0.display().to_string();
    for claude in claude_harness::claudes("claude_daemon", &["--release-file", &release_flag]) {
        eprintln!("binary: {claude:?}");
        let d = Daemon::start().await;
        let dirs = dirs();
        release.allow(0);
        let (claude, mock) = match claude {
            Claude::Real { path, .. } => {
                let mock = MockApi::start_released(dirs.root.path(), &release.0);
                mock.script(engine::ids::WorkerId(1), &["slow", "slow", "slow"]);
                (Claude::Real { path, port: mock.port }, Some(mock))
            }
            sim => (sim, None),
        };
        let task = spawn_executor(options(&d.url, &dirs, &claude));
        let root = start_run(&d, &dirs, ExecutorKind::Claude).await;

        // create: a session is started and bound; its first turn runs (held).
        submitted(&d, root, 1).await;
        conversation_in(&d, root, ConversationState::Generating).await;
        let binding = d.worker(root).await.worker.binding.clone().expect("bound");
        assert!(binding.conversation.starts_with("claude:session/"), "{}", binding.conversation);
        assert_eq!(binding.status, BindingStatus::Verified);

        // The turn ends: idle, an observation. The next prompt comes from Auto Resume, and
        // its turn is held.
        release.allow(1);
        conversation_in(&d, root, ConversationState::Idle).await;
        let attempts = submitted(&d, root, 2).await;
        assert_eq!(attempts[1].reason, AttemptReason::AutoResume);
        assert_eq!(attempts[0].outcome, Some(AttemptOutcome::TurnEnded));
        let idle = attempts[0].idle_at.expect("the first turn's end").0;
        let scheduled = attempts[1].scheduled_at.0;
        assert!(scheduled >= idle + GRACE_MS, "resumed {} ms after the idle, before the grace", scheduled - idle);
        conversation_in(&d, root, ConversationState::Generating).await;
        let first_two = ["conversation.create:exe-1", "conversation.send:exe-2"].map(nonce);
        let seen = until("the second prompt in the transcript", || {
            let seen = taken_in(&dirs, root);
            std::future::ready((seen.len() >= 2).then_some(seen))
        })
        .await;
        assert_eq!(seen, first_two);
        if let Some(mock) = &mock {
            // The second turn is at the model (the CLI asked it) before the crash cuts it.
            until("the second turn at the model", || std::future::ready((mock.actions().len() >= 2).then_some(())))
                .await;
        }

        // The executor dies mid-turn (its child with it) and starts again on the same state:
        // the session is resumed, the cut turn is over, and the daemon sends the next prompt.
        // The third turn is held too, so no fourth prompt follows while the test looks.
        crash(task).await;
        let task = spawn_executor(options(&d.url, &dirs, &claude));
        let attempts = submitted(&d, root, 3).await;
        assert_eq!(attempts[1].outcome, Some(AttemptOutcome::TurnEnded), "attempt 2 booked as a turn that ran");
        assert_eq!(attempts[2].reason, AttemptReason::AutoResume);
        let keys = ["conversation.create:exe-1", "conversation.send:exe-2", "conversation.send:exe-3"];
        until("the third prompt in the transcript", || {
            std::future::ready((taken_in(&dirs, root).len() >= 3).then_some(()))
        })
        .await;
        assert_eq!(taken_in(&dirs, root), keys.map(nonce), "each nonce once");
        assert!(d.worker(root).await.worker.pause.is_none());
        if let Some(mock) = &mock {
            // The model was asked once per prompt: the first two, and the third (held) once
            // its request is in; the cut second turn was not asked again.
            let actions = mock.actions();
            assert!((2..=3).contains(&actions.len()) && actions.iter().all(|a| a == "slow"), "{actions:?}");
        }
        crash(task).await;
        d.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_submission_is_settled_from_the_transcript_sent_or_provably_not() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    for (flag, went_in) in [("--stall-line", true), ("--drop-line", false)] {
        let d = Daemon::start().await;
        let dirs = dirs();
        let claude = Claude::Sim(vec![flag.into(), "2".into()]);
        let task = spawn_executor(options(&d.url, &dirs, &claude));
        let root = start_run(&d, &dirs, ExecutorKind::Claude).await;
        submitted(&d, root, 1).await;
        // The second prompt's line is written (journaled submission-started first) and
        // read; the stand-in takes it in without a word (stall) or drops it.
        let second = nonce("conversation.send:exe-2");
        until("the second line read", || {
            let started = journal_phase(&dirs, "conversation.send:exe-2").as_deref() == Some("submission-started");
            let read = sim_lines(&dirs, root) >= 2;
            let taken = taken_in(&dirs, root).contains(&second);
            std::future::ready((started && read && taken == went_in).then_some(()))
        })
        .await;
        crash(task).await;
        let task = spawn_executor(options(&d.url, &dirs, &claude));
        if went_in {
            // The transcript holds the nonce: submitted, never resent; its turn was cut.
            let attempts = submitted(&d, root, 3).await;
            assert_eq!(attempts[1].outcome, Some(AttemptOutcome::TurnEnded), "{flag}: {:?}", attempts[1]);
            let sent = taken_in(&dirs, root);
            assert_eq!(sent.iter().filter(|n| **n == second).count(), 1, "{flag}: {sent:?}");
        } else {
            // No trace of the nonce: definitely not submitted; the daemon may send again.
            let attempts = until("attempt 2 settled", || async {
                let attempts = d.attempts(root).await;
                (attempts.len() >= 2 && attempts[1].outcome.is_some()).then_some(attempts)
            })
            .await;
            assert_eq!(attempts[1].outcome, Some(AttemptOutcome::NotDelivered), "{flag}: {:?}", attempts[1]);
            assert_eq!(attempts[1].error_code.as_deref(), Some("DEADLINE_EXCEEDED"));
            assert!(d.worker(root).await.worker.pause.is_none(), "{flag}: not paused");
            assert!(!taken_in(&dirs, root).contains(&second));
        }
        crash(task).await;
        d.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_the_session_lists_as_failed_pauses_the_worker() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let d = Daemon::start().await;
    let dirs = dirs();
    let claude = Claude::Sim(vec!["--mcp-status".into(), "failed".into()]);
    let task = spawn_executor(options(&d.url, &dirs, &claude));
    let root = start_run(&d, &dirs, ExecutorKind::Claude).await;
    let pause = until("the pause", || async { d.worker(root).await.worker.pause }).await;
    assert_eq!(pause.reason, engine::model::PauseReason::HostUiChanged);
    crash(task).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_nobody_sent_pauses_the_worker_as_a_foreign_turn() {
    eprintln!("binary: the stand-in {}", claude_harness::sim_script().display());
    let d = Daemon::start().await;
    let dirs = dirs();
    let claude = Claude::Sim(vec!["--foreign-after".into(), "1".into()]);
    let task = spawn_executor(options(&d.url, &dirs, &claude));
    let root = start_run(&d, &dirs, ExecutorKind::Claude).await;
    let pause = until("the pause", || async { d.worker(root).await.worker.pause }).await;
    assert_eq!(pause.reason, engine::model::PauseReason::ForeignTurn);
    crash(task).await;
    d.stop().await;
}
