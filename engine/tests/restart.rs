//! Daemon and executor restarts at every boundary of spec 000 §26.2: each converges
//! without a duplicate prompt (the world panics if an idempotency key is submitted twice)
//! and without losing worker state.

mod support;
use support::check;

const RUNNING: &str = "
    run auto
    executor e1
    spawn a
    submit a
    gen a
";

#[test]
fn b1_idle_event_before_resume_scheduling() {
    // The idle report never became durable: the republished state brings it back.
    check(
        &format!("{RUNNING}\ncrash\nhello e1 bind=a:idle\nadvance 3s\nadvance 1m"),
        "e1 create a#1 initial bootstrap/v2
         crash
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn b1_idle_event_recorded_then_crash() {
    check(
        &format!("{RUNNING}\nidle a\ncrash\nhello e1 bind=a:idle\nadvance 3s\nadvance 1m"),
        "e1 create a#1 initial bootstrap/v2
         crash
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn b2_resume_scheduled_before_executor_enqueue() {
    check(
        &format!("{RUNNING}\nidle a\ndisconnect e1\nadvance 3s\ncrash\nhello e1 bind=a:idle\nsubmit a\nadvance 1m"),
        "e1 create a#1 initial bootstrap/v2
         crash
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn b2_command_emitted_but_never_received_is_resent_with_the_same_key() {
    let world = check(
        &format!("{RUNNING}\nidle a\nadvance 3s\ncrash\nhello e1 bind=a:idle\nsubmit a\nadvance 1m"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         crash
         e1 send a#2 auto_resume resume/v1",
    );
    let keys: Vec<&str> = world.commands.iter().skip(1).map(|c| c.idempotency_key.as_str()).collect();
    assert_eq!(keys, vec!["conversation.send:exe-2", "conversation.send:exe-2"]);
}

#[test]
fn b3_executor_enqueue_before_ack_is_not_resent() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\ncrash\nhello e1 journal=a:received bind=a:idle\nsubmit a\nadvance 1m"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         crash",
    );
}

#[test]
fn b4_submission_started_then_the_executor_reports_ambiguity() {
    // The extension restarted mid-submission and cannot prove delivery either way.
    check(
        &format!(
            "{RUNNING}\nidle a\nadvance 3s\ncrash\nhello e1 journal=a:started bind=a:idle\nfail a AMBIGUOUS_SUBMISSION\nadvance 1h\nshow a"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         crash
         a: paused #2 auto_resume failed paused:ambiguous_submission",
    );
}

#[test]
fn b4_submission_started_and_then_silence_fails_closed_at_the_deadline() {
    check(
        &format!(
            "{RUNNING}\nidle a\nadvance 3s\ncrash\nhello e1 journal=a:started bind=a:idle\nadvance 2m\nshow a\nadvance 31s\nshow a"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         crash
         a: running #2 auto_resume scheduled
         a: paused #2 auto_resume failed paused:ambiguous_submission",
    );
}

#[test]
fn b4_submission_in_progress_during_reconnect_completes_normally() {
    check(
        &format!(
            "{RUNNING}\nidle a\nadvance 3s\ndisconnect e1\nhello e1 journal=a:started bind=a:idle\nsubmit a\ngen a\nidle a\nadvance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 send a#3 auto_resume resume/v1",
    );
}

#[test]
fn b5_submitted_before_command_result_is_reconciled_without_resend() {
    check(
        &format!(
            "{RUNNING}\nidle a\nadvance 3s\ncrash\nhello e1 journal=a:submitted bind=a:generating\nshow a\nidle a\nadvance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         crash
         a: running #2 auto_resume generating auto=1
         e1 send a#3 auto_resume resume/v1",
    );
}

#[test]
fn b5_completed_journal_entry_counts_as_submitted() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\ncrash\nhello e1 journal=a:completed bind=a:idle\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         crash
         e1 send a#3 auto_resume resume/v1",
    );
}

#[test]
fn b6_command_result_before_generating_observation() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\nsubmit a\ncrash\nhello e1 bind=a:generating\nidle a\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         crash
         e1 send a#3 auto_resume resume/v1",
    );
}

#[test]
fn b7_generating_before_idle_observation() {
    check(
        &format!("{RUNNING}\ncrash\nhello e1 bind=a:generating\nidle a\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         crash
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn b8_idle_during_grace() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 1s\ncrash\nhello e1 bind=a:idle\nadvance 1s\nshow a\nadvance 1s"),
        "e1 create a#1 initial bootstrap/v2
         crash
         a: awaiting_execution #1 initial idle intent[idle]
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn b9_stall_pause_survives_restart() {
    check(
        "run auto warn_attempts=1 pause_attempts=1 no_time_stall
         executor e1
         spawn a
         submit a
         gen a
         idle a
         advance 3s
         submit a
         gen a
         idle a
         advance 3s
         show a
         crash
         hello e1 bind=a:idle
         advance 1h
         show a",
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         a: paused #2 auto_resume blocked intent[idle] paused:stall stall:paused auto=1
         crash
         a: paused #2 auto_resume blocked intent[idle] paused:stall stall:paused auto=1",
    );
}

#[test]
fn executor_restart_mid_generation_keeps_the_eventual_idle() {
    check(
        &format!("{RUNNING}\ndisconnect e1\nhello e1 bind=a:generating\nidle a\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn executor_restart_after_submission_reconciles_without_resend() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\ndisconnect e1\nhello e1 journal=a:submitted bind=a:idle\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 send a#3 auto_resume resume/v1",
    );
}

#[test]
fn pending_keepalive_intent_is_rebuilt_after_restart() {
    check(
        "run auto
         executor e1
         spawn a
         submit a
         gen a
         advance 21m
         crash
         hello e1 bind=a:generating
         show a
         idle a
         advance 3s",
        "e1 create a#1 initial bootstrap/v2
         crash
         a: running #1 initial generating intent[active_keepalive]
         e1 send a#2 checkpoint checkpoint/v1",
    );
}

#[test]
fn floor_deferral_survives_restart() {
    check(
        "run auto
         executor e1 steering
         attach root https://chatgpt.com/c/root
         bind root https://chatgpt.com/c/root
         idle root
         advance 3s
         submit root
         gen root
         spawn a
         a.progress one
         advance 5m
         crash
         hello e1 steering bind=root:generating
         advance 9m
         show root
         advance 1m",
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         crash
         root: running #1 initial generating intent[event:worker.progress]
         e1 steer root#2 auto_resume resume/v1",
    );
}

#[test]
fn a_republished_pre_submission_state_is_not_a_turn_end() {
    use engine::ids::{CommandId, ExecutorId};
    use engine::model::ConversationState;
    use engine::{BindingReport, ExecutorInput, Input, JournalEntry, JournalPhase, Observation};
    let mut world = support::World::new();
    world.script(&format!("{RUNNING}\nidle a\nadvance 3s"));
    let id = world.id("a");
    let attempt = world.worker("a").in_flight.expect("the resume is in flight");
    let seq = world.seqs[&id];
    let conversation = world.worker("a").binding.as_ref().expect("bound").conversation.clone();
    world.crash();
    // The executor submitted at state seq `seq` and has seen nothing since: it republishes
    // that same idle observation.
    let hello = ExecutorInput::Hello {
        executor: ExecutorId::new("e1"),
        steering: false,
        kinds: vec![engine::ExecutorKind::Chatgpt],
        bindings: vec![BindingReport {
            worker: id,
            conversation,
            open: true,
            observation: Some(Observation {
                state: ConversationState::Idle,
                seq,
                block: None,
                until: None,
                detail: None,
                approval: None,
                retry: None,
            }),
        }],
        journal: vec![JournalEntry {
            command: CommandId { attempt },
            phase: JournalPhase::Submitted,
            state_seq: seq,
            conversation: None,
        }],
        turns_max: None,
        accounts: Vec::new(),
    };
    world.input(Input::Executor(hello));
    world.advance(60_000);
    assert_eq!(world.prompts_for("a"), 2, "the submitted turn has not ended: no new resume");
    world.script("gen a\nidle a\nadvance 3s");
    assert_eq!(world.prompts_for("a"), 3, "once the turn really ends, exactly one resume");
}
