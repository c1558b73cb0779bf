//! The end-of-response block is one signal; durable state stays authoritative
//! (spec 000 §27.3, 001 C18.3).

mod support;
use engine::block::BlockStatus;
use engine::model::*;
use support::check;

const RUNNING: &str = "
    run auto
    executor e1
    spawn a
    submit a
    gen a
";

#[test]
fn working_block_lets_policy_resume() {
    let world = check(
        &format!(
            "{RUNNING}\nidle a block=status: working\\nsummary: parser done\\ncurrent: scheduler\\nnext: floor\nadvance 3s"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1",
    );
    assert_eq!(world.block_status("a"), Some(BlockStatus::Working));
}

#[test]
fn complete_block_never_fabricates_completion() {
    let world = check(
        &format!(
            "{RUNNING}\nidle a block=status: complete\\nsummary: all done\\ncurrent: nothing\\nnext:\nadvance 3s\nshow a"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume completion-reconcile/v1
         a: running #2 auto_resume scheduled",
    );
    assert_eq!(world.worker("a").lifecycle, Lifecycle::Active);
}

#[test]
fn complete_block_after_worker_complete_adds_nothing() {
    check(
        &format!(
            "{RUNNING}\na.complete done\nidle a block=status: complete\\nsummary: done\\ncurrent: -\\nnext:\nadvance 1h"
        ),
        "e1 create a#1 initial bootstrap/v2",
    );
}

#[test]
fn blocked_block_suppresses_resumes_until_resolved() {
    let world = check(
        &format!(
            "{RUNNING}
             idle a block=status: blocked\\nsummary: need staging credentials\\ncurrent: waiting\\nnext: which account?
             advance 2h
             show a
             a.resolve use the sandbox account"
        ),
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_human #1 initial blocked intent[idle]
         e1 send a#2 manual_resume answer/v1",
    );
    let _ = world;
}

#[test]
fn blocked_block_is_surfaced_as_needs_you_with_its_question() {
    let mut world = support::World::new();
    world.script(RUNNING);
    world.script(
        "idle a block=status: blocked\\nsummary: need staging credentials\\ncurrent: waiting\\nnext: which account?",
    );
    let human = world.worker("a").human.clone().expect("a human wait");
    assert_eq!(human.source, WaitSource::Block);
    assert_eq!(&*human.reason, "need staging credentials");
    assert_eq!(&*human.question, "which account?");
}

#[test]
fn malformed_block_fails_safe_to_durable_state() {
    let world = check(
        &format!("{RUNNING}\nidle a block=status: finished\\nsummary: x\\ncurrent: y\\nnext: z\nadvance 3s"),
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1",
    );
    let invalid: Vec<_> = world.engine.recent_events().filter(|e| e.kind.name() == "block.invalid").collect();
    assert_eq!(invalid.len(), 1);
    assert_eq!(world.block_status("a"), None);
}
