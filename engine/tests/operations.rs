//! Caller operations: Pause, Continue now and Stop stay distinct (spec 000 §15), human
//! and dependency waits, run controls, and typed rejections that leave state intact.

mod support;
use engine::RejectionCode;
use engine::ids::*;
use engine::model::*;
use engine::op::*;
use engine::policy::{Mode, PolicyPatch};
use support::{World, check};

const RUNNING: &str = "
    run auto
    executor e1
    spawn a
    submit a
    gen a
";

#[test]
fn pause_after_turn_then_continue_now_resumes_exactly_once() {
    check(
        &format!(
            "{RUNNING}
             a.pause_after
             show a
             idle a
             advance 1h
             show a
             a.continue_now
             submit a
             gen a
             idle a
             advance 1h
             show a"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: running #1 initial generating pause-after-turn
         a: paused #1 initial blocked intent[idle] paused:operator
         e1 send a#2 manual_resume resume/v1
         continue_now scheduled
         a: paused #2 manual_resume blocked intent[idle] paused:operator",
    );
}

#[test]
fn continue_now_while_generating_queues_one_post_turn_resume() {
    check(
        &format!("{RUNNING}\na.continue_now\na.continue_now\nshow a\nidle a\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         continue_now queued_after_turn
         continue_now already_pending
         a: running #1 initial generating intent[operator:continue_now]
         e1 send a#2 manual_resume resume/v1",
    );
}

#[test]
fn continue_now_never_duplicates_a_continuation_in_flight() {
    check(
        &format!("{RUNNING}\nidle a\nadvance 3s\na.continue_now\nsubmit a\nadvance 1m"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         continue_now already_pending",
    );
}

#[test]
fn continue_now_on_a_terminal_worker_is_refused() {
    check(
        &format!("{RUNNING}\na.complete done\na.continue_now"),
        "e1 create a#1 initial bootstrap/v2
         reject WORKER_TERMINAL",
    );
}

#[test]
fn continue_now_needs_the_human_wait_resolved_or_overridden() {
    check(
        &format!(
            "{RUNNING}\na.await_human pick a database\nidle a\na.continue_now\nadvance 1h\na.continue_now override"
        ),
        "e1 create a#1 initial bootstrap/v2
         reject WORKER_AWAITING_HUMAN
         e1 send a#2 manual_resume resume/v1
         continue_now scheduled",
    );
}

#[test]
fn continue_now_on_a_manual_worker_submits_one_manual_attempt() {
    check(
        "run manual
         executor e1
         spawn a
         submit a
         gen a
         idle a
         a.continue_now
         advance 3s
         submit a
         gen a
         idle a
         advance 1h",
        "e1 create a#1 initial bootstrap/v2
         continue_now scheduled
         e1 send a#2 manual_resume resume/v1",
    );
}

#[test]
fn human_block_scenario() {
    let world = check(
        &format!(
            "{RUNNING}
             a.await_human approve the schema change
             idle a
             advance 2h
             show a
             a.resolve approved
             show a"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_human #1 initial blocked intent[idle]
         e1 send a#2 manual_resume answer/v1
         a: running #2 manual_resume scheduled",
    );
    assert_eq!(world.worker("a").human_answer.as_deref(), Some("approved"));
}

#[test]
fn resolving_without_a_wait_is_refused() {
    check(
        &format!("{RUNNING}\na.resolve yes\na.release done"),
        "e1 create a#1 initial bootstrap/v2
         reject NOT_AWAITING_HUMAN
         reject NOT_AWAITING_DEPENDENCY",
    );
}

#[test]
fn pause_continue_and_stop_are_distinct() {
    let mut world = World::new();
    world.script(RUNNING);
    world.script("a.pause");
    assert_eq!(world.view("a").disposition, Disposition::Paused);
    assert_eq!(world.worker("a").lifecycle, Lifecycle::Active);
    world.script("a.resume");
    assert_eq!(world.view("a").disposition, Disposition::Running);
    world.script("a.interrupt stop it");
    assert_eq!(world.view("a").disposition, Disposition::Cancelled);
    let trace = world.script("a.resume\na.continue_now\nidle a\nadvance 1h");
    assert_eq!(trace, "reject WORKER_TERMINAL\nreject WORKER_TERMINAL");
}

#[test]
fn root_cannot_be_interrupted_only_its_run_stopped() {
    check(
        &format!("{RUNNING}\nroot.interrupt stop"),
        "e1 create a#1 initial bootstrap/v2
         reject ROOT_LIFECYCLE",
    );
}

#[test]
fn run_pause_all_then_resume_all() {
    check(
        "run auto
         executor e1
         spawn a
         spawn b
         submit a
         submit b
         gen a
         gen b
         RUN_PAUSE_ALL
         idle a
         idle b
         advance 1h
         show a
         RUN_RESUME_ALL
         show b",
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         a: paused #1 initial blocked intent[idle] paused:operator
         e1 send a#2 auto_resume resume/v1
         e1 send b#2 auto_resume resume/v1
         b: running #2 auto_resume scheduled",
    );
}

#[test]
fn stop_run_cancels_every_worker_and_their_continuations() {
    let mut world = World::new();
    world.script(&format!("{RUNNING}\nspawn b detached\nidle a"));
    let run = world.run.expect("run");
    world.call(Operation::RunCancel { run, reason: "operator stopped".into() }).expect("cancel");
    world.script("advance 2h");
    for name in ["root", "a", "b"] {
        assert_eq!(world.worker(name).lifecycle, Lifecycle::Cancelled, "{name}");
        assert!(world.worker(name).intent.is_none());
    }
    assert_eq!(world.prompts_for("a"), 1);
    let err = world.call(Operation::RunCancel { run, reason: "again".into() }).expect_err("already stopped");
    assert_eq!(err.code, RejectionCode::RunTerminal);
}

#[test]
fn run_default_policy_is_inherited_and_overrides_are_visible() {
    let mut world = World::new();
    world.script("run manual\nexecutor e1\nspawn a\nspawn b auto");
    assert_eq!(world.view("a").policy_source, PolicySource::Run);
    assert_eq!(world.view("b").policy_source, PolicySource::Worker);
    let run = world.run.expect("run");
    world
        .call(Operation::RunSetDefaultContinuation { run, patch: PolicyPatch::mode(engine::policy::Mode::Auto) })
        .expect("set default");
    assert_eq!(world.view("a").policy.mode, engine::policy::Mode::Auto);
    let names: Vec<&str> = world.engine.recent_events().map(|e| e.kind.name()).collect();
    assert!(names.contains(&"run.policy_changed"));
}

#[test]
fn invalid_policies_are_refused_with_the_field_named() {
    let mut world = World::new();
    world.script("run auto\nspawn a detached");
    let a = world.id("a");
    let patch = PolicyPatch { active_keepalive_min_ms: Some(30 * 60_000), ..PolicyPatch::default() };
    let before = world.store.clone();
    let err = world.call(Operation::WorkerContinuationSet { worker: a, patch, inherit: false }).expect_err("invalid");
    assert_eq!(err.code, RejectionCode::InvalidPolicy);
    assert!(err.message.contains("activeKeepaliveMinMs"), "{}", err.message);
    assert_eq!(world.store, before, "a rejected operation wrote records");
}

#[test]
fn spawn_rejections_name_the_problem() {
    let mut world = World::new();
    world.script("run auto\nspawn a detached");
    let run = world.run.expect("run");
    let spawn = |name: &str| {
        Operation::WorkerSpawn(Box::new(SpawnArgs {
            run,
            name: name.into(),
            display_name: None,
            task_summary: "x".into(),
            assignment: Assignment { objective: "y".into(), scope: String::new(), acceptance_criteria: vec![] },
            worktree: None,
            policy: None,
            start: false,
            executor: None,
            workspace: None,
        }))
    };
    let cases = [
        ("/root/a", RejectionCode::DuplicateWorkerName),
        ("/root/x/y", RejectionCode::ParentWorkerMissing),
        ("/root/Bad", RejectionCode::InvalidArgument),
        ("backend", RejectionCode::InvalidArgument),
    ];
    for (name, code) in cases {
        let before = world.store.clone();
        let err = world.call(spawn(name)).expect_err(name);
        assert_eq!(err.code, code, "{name}: {}", err.message);
        assert_eq!(world.store, before, "{name}: a rejected spawn wrote records");
    }
    let err = world.call(Operation::WorkerGet { worker: WorkerId(999) }).expect_err("unknown");
    assert_eq!(err.code, RejectionCode::UnknownWorker);
    let err = world.call(Operation::RunGet { run: RunId(999) }).expect_err("unknown");
    assert_eq!(err.code, RejectionCode::UnknownRun);
}

#[test]
fn oversize_and_blank_text_is_refused() {
    let mut world = World::new();
    world.script("run auto\nspawn a detached");
    let a = world.id("a");
    let big = "x".repeat(engine::limits::SUMMARY_BYTES_MAX + 1);
    let err = world.call(Operation::WorkerProgress { worker: a, summary: big, commit: None }).expect_err("oversize");
    assert_eq!(err.code, RejectionCode::InvalidArgument);
    assert!(err.message.starts_with("summary"), "{}", err.message);
    let err =
        world.call(Operation::WorkerProgress { worker: a, summary: "  ".into(), commit: None }).expect_err("blank");
    assert!(err.message.starts_with("summary"), "{}", err.message);
}

#[test]
fn lane_labels_follow_the_task_name() {
    let mut world = World::new();
    world.script("run auto\nspawn a detached\nspawn b detached");
    assert_eq!(world.worker("a").spec.lane_label, "Task Lane A");
    assert_eq!(world.worker("b").spec.display_name, "Task Lane B");
    let run = world.run.expect("run");
    world
        .call(Operation::RunUpdateContext {
            run,
            task_name: Some("Continuity".into()),
            root_conversation_name: Some("Orchestrator root".into()),
            context: None,
        })
        .expect("update");
    assert_eq!(world.worker("b").spec.display_name, "Continuity Lane B");
    assert_eq!(world.worker("root").spec.display_name, "Orchestrator root");
}

#[test]
fn events_page_by_cursor_and_filter() {
    let mut world = World::new();
    world.script(&format!("{RUNNING}\nspawn b detached\na.progress one\nb.progress two"));
    let a = world.id("a");
    let Ok(Reply::Events(page)) =
        world.call(Operation::EventsAfter { cursor: Cursor(0), run: None, worker: Some(a), limit: 1000 })
    else {
        panic!("events")
    };
    assert!(page.events.iter().all(|e| e.worker == Some(a)));
    assert!(page.events.iter().any(|e| e.kind.name() == "worker.progress"));
    let Ok(Reply::Events(rest)) =
        world.call(Operation::EventsAfter { cursor: page.next_cursor, run: None, worker: Some(a), limit: 1000 })
    else {
        panic!("events")
    };
    assert!(rest.events.is_empty());
    assert_eq!(page.next_cursor, world.engine.last_cursor());
}

#[test]
fn attempts_are_listed_in_sequence() {
    let mut world = World::new();
    world.script(&format!("{RUNNING}\nidle a\nadvance 3s\nsubmit a"));
    let a = world.id("a");
    let Ok(Reply::Attempts(list)) = world.call(Operation::WorkerAttempts { worker: a, after_sequence: 0, limit: 10 })
    else {
        panic!("attempts")
    };
    let seqs: Vec<u32> = list.iter().map(|x| x.sequence).collect();
    assert_eq!(seqs, vec![1, 2]);
    assert_eq!(list[1].reason, AttemptReason::AutoResume);
    assert_eq!(list[0].state, AttemptState::Completed);
}

#[test]
fn messages_reach_the_inbox() {
    let mut world = World::new();
    world.script(&format!("{RUNNING}\nspawn b detached\nb.message a the contract moved"));
    let inbox = world.view("a").inbox;
    assert_eq!(inbox.len(), 1);
    assert_eq!(&*inbox[0].body, "the contract moved");
}

/// "Start a run here" in a tab: `run_start` with the tab's conversation, or none for a new chat.
fn start_here(world: &mut World, conversation: Option<&str>, mode: Mode) -> Result<Reply, engine::Rejection> {
    let reply = world.call(Operation::RunStart {
        task_name: "Task".into(),
        root_conversation_name: "Root chat".into(),
        context: "Build it".into(),
        default_policy: Some(PolicyPatch::mode(mode)),
        root_conversation: conversation.map(Into::into),
        root_executor: Default::default(),
    });
    if let Ok(Reply::Run(v)) = &reply {
        world.run = Some(v.run.id);
        world.names.insert("root".into(), v.run.root);
    }
    reply
}

#[test]
fn run_start_binds_root_to_the_tab_and_types_its_bootstrap_once() {
    let mut world = World::new();
    world.script("executor e1");
    start_here(&mut world, Some("https://chatgpt.com/c/here"), Mode::Auto).expect("started");
    let root = world.worker("root");
    assert_eq!(root.binding.as_ref().map(|b| &*b.conversation), Some("https://chatgpt.com/c/here"));
    let trace = world.script("bind root https://chatgpt.com/c/here\nidle root\nadvance 3s\nadvance 1m");
    assert_eq!(trace, "e1 send root#1 initial root-bootstrap/v2");
    world.check_recovery();
}

#[test]
fn run_start_in_a_new_chat_creates_the_root_conversation() {
    let mut world = World::new();
    world.script("executor e1");
    start_here(&mut world, None, Mode::Manual).expect("started");
    world.script("advance 1s\nadvance 1m");
    // The create goes out within the call, before the test knows the root's name.
    let root = world.names["root"];
    assert_eq!(world.trace, vec![format!("e1 create {root}#1 initial root-bootstrap/v2")]);
    world.check_recovery();
}

#[test]
fn run_start_on_a_conversation_in_use_changes_nothing() {
    let mut world = check("run auto\nexecutor e1\nspawn a detached\nattach a https://chatgpt.com/c/taken", "");
    let runs_before = world.call(Operation::RunList { include_terminal: true });
    let refused = start_here(&mut world, Some("https://chatgpt.com/c/taken"), Mode::Auto).expect_err("refused");
    assert_eq!(refused.code, RejectionCode::ConversationInUse);
    assert_eq!(world.call(Operation::RunList { include_terminal: true }), runs_before);
    let bad = start_here(&mut world, Some("https://chatgpt.com/c/has space"), Mode::Auto).expect_err("refused");
    assert_eq!(bad.code, RejectionCode::InvalidArgument);
    assert_eq!(world.call(Operation::RunList { include_terminal: true }), runs_before);
}
