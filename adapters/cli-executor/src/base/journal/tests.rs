//! The journal's tests: records survive a reopen, compaction and bounds, doubtful lines.

use super::*;
use engine::ids::AttemptId;
use executor_protocol::StateName;
use std::os::unix::fs::PermissionsExt;

fn command(n: u64, kind: KindWire) -> CommandWire {
    CommandWire {
        command_id: CommandId { attempt: AttemptId(n) },
        kind,
        idempotency_key: format!("conversation.send:exe-{n}"),
        worker_id: WorkerId(1),
        attempt_id: AttemptId(n),
        conversation_url: "codex:thread/t1".to_string(),
        prompt: "go on".to_string(),
        prompt_version: "v1".to_string(),
        deadline: 9_999_999_999_999,
        executor_kind: Some(executor_protocol::ExecutorKindWire::Codex),
        workspace: None,
        approval: None,
    }
}

fn idle() -> ObservationWire {
    ObservationWire {
        state: StateName::Idle,
        error_kind: None,
        seq: 0,
        block: None,
        until_ms: None,
        detail: None,
        approval: None,
        retry: None,
    }
}

fn id(n: u64) -> CommandId {
    CommandId { attempt: AttemptId(n) }
}

#[test]
fn survives_a_reopen_with_phases_bindings_and_sequences() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    {
        let (mut j, doubts) = Journal::open(&state).expect("open");
        assert!(doubts.is_empty());
        j.receive(&command(1, KindWire::Send), Some("/w")).expect("receive");
        assert_eq!(j.publish(WorkerId(1), &idle()).expect("seq"), Some(1));
        assert_eq!(j.publish(WorkerId(1), &idle()).expect("seq"), None, "unchanged: not again");
        assert_eq!(j.submission_started(id(1), "t1").expect("started"), 1);
        j.bind(WorkerId(1), "t1", "/w", ExecutorKindWire::Codex).expect("bind");
        j.receive(&command(2, KindWire::Send), None).expect("receive");
    }
    let (j, doubts) = Journal::open(&state).expect("reopen");
    assert!(doubts.is_empty());
    assert_eq!(
        j.entry(id(1)).map(|e| (e.phase, e.state_seq, e.command.prompt.as_str())),
        Some((PhaseWire::SubmissionStarted, 1, ""))
    );
    assert_eq!(j.entry(id(2)).map(|e| e.command.prompt.as_str()), Some("go on"), "a received prompt is kept");
    assert_eq!(j.binding(WorkerId(1)).map(|b| b.thread.as_str()), Some("t1"));
    assert_eq!(j.seq(WorkerId(1)), 1);
    assert_eq!(j.observed(WorkerId(1)).map(|o| (o.state, o.seq)), Some((StateName::Idle, 1)));
    assert_eq!(j.nonces("t1"), vec!["conversation.send:exe-1".to_string()]);
    let mode = |p: &Path| fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!((mode(&state), mode(&state.join(JOURNAL_FILE_NAME))), (0o700, 0o600));
}

#[test]
fn a_binding_keeps_its_kind_and_one_written_before_kinds_is_codex() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (mut j, _) = Journal::open(dir.path()).expect("open");
        j.bind(WorkerId(1), "b172ea10", "/w", ExecutorKindWire::Claude).expect("bind");
    }
    let path = dir.path().join(JOURNAL_FILE_NAME);
    let mut f = OpenOptions::new().append(true).open(&path).expect("append");
    f.write_all(b"{\"t\":\"bind\",\"worker\":\"wrk-2\",\"bound\":{\"thread\":\"019a\",\"cwd\":\"/v\"}}\n")
        .expect("write");
    let (j, doubts) = Journal::open(dir.path()).expect("reopen");
    assert!(doubts.is_empty(), "{doubts:?}");
    let url = |w| j.binding(WorkerId(w)).map(Bound::conversation_url);
    assert_eq!(url(1).as_deref(), Some("claude:session/b172ea10"));
    assert_eq!(url(2).as_deref(), Some("codex:thread/019a"));
}

#[test]
fn failed_commands_stay_out_of_hello_and_creates_carry_their_url() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut j, _) = Journal::open(dir.path()).expect("open");
    j.receive(&command(1, KindWire::Create), None).expect("receive");
    let url = Some("codex:thread/t1".to_string());
    j.complete(id(1), &OutcomeWire::Submitted { state_seq: 0, conversation_url: url.clone() }).expect("done");
    j.receive(&command(2, KindWire::Steer), None).expect("receive");
    let failed = OutcomeWire::Failed { code: "STEERING_UNAVAILABLE".into(), detail: "ended".into() };
    j.complete(id(2), &failed).expect("done");
    j.receive(&command(3, KindWire::Inspect), None).expect("receive");
    let lines = j.hello_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(
        (lines[0].command_id, lines[0].phase, lines[0].conversation_url.clone()),
        (id(1), PhaseWire::Completed, url)
    );
}

#[test]
fn an_unreadable_line_is_ambiguous_never_resent_and_sequences_jump() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (mut j, _) = Journal::open(dir.path()).expect("open");
        j.receive(&command(1, KindWire::Send), None).expect("receive");
        j.publish(WorkerId(1), &idle()).expect("seq");
    }
    let path = dir.path().join(JOURNAL_FILE_NAME);
    let mut f = OpenOptions::new().append(true).open(&path).expect("append");
    f.write_all(b"{\"t\":\"cmd\",\"command\":{\"commandId\":\"cmd-1\",\"kind\":\"conv\n\xff\xfe garbage\n")
        .expect("write");
    let (j, doubts) = Journal::open(dir.path()).expect("a corrupt journal still opens");
    assert_eq!(doubts.iter().map(Error::code).collect::<Vec<_>>(), ["JOURNAL_CORRUPT", "JOURNAL_CORRUPT"]);
    let entry = j.entry(id(1)).expect("kept");
    assert_eq!(entry.phase, PhaseWire::Completed);
    assert!(matches!(&entry.outcome, Some(OutcomeWire::Failed { code, .. }) if code == "AMBIGUOUS_SUBMISSION"));
    assert_eq!(j.seq(WorkerId(1)), 1 + SEQ_SKIP_ON_DOUBT);
}

#[test]
fn bounded_dropping_the_oldest_finished_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut j, _) = Journal::open(dir.path()).expect("open");
    let done = OutcomeWire::Submitted { state_seq: 0, conversation_url: None };
    for n in 1..=JOURNAL_COMMANDS_MAX as u64 {
        j.receive(&command(n, KindWire::Send), None).expect("receive");
        if n > 1 {
            j.complete(id(n), &done).expect("done");
        }
    }
    j.receive(&command(5_000, KindWire::Send), None).expect("room is made");
    assert!(j.entry(id(1)).is_some(), "an unfinished command is never dropped");
    assert!(j.entry(id(2)).is_none(), "the oldest finished one is");
    assert!(j.entries().count() <= JOURNAL_COMMANDS_MAX);
}
