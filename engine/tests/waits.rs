//! How waits end (issue 29): a worker waited for that fails or is stopped wakes its
//! waiter once with the outcome; a `blocked` block that names a lane waits for the lane,
//! never for a person; a person's answer and its choices, and which waited-for worker
//! ended, how and why, are in the prompt that resumes the worker; a wait older than these rules, read back from a store, is settled at once.

mod support;
use engine::model::*;
use engine::op::*;
use engine::*;
use support::{World, check};

/// A root at work with one lane, both in their first turns.
const ROOT_AND_LANE: &str = "
    run auto
    executor e1
    attach root https://chatgpt.com/c/root
    bind root https://chatgpt.com/c/root
    idle root
    advance 3s
    submit root
    gen root
    spawn a
    submit a
    gen a
";

fn ended_events(world: &World, name: &str) -> Vec<String> {
    let id = world.id(name);
    world
        .engine
        .recent_events()
        .filter(|e| e.worker == Some(id) && e.kind.name() == "worker.dependency_ended")
        .map(|e| format!("{:?}", e.kind))
        .collect()
}

#[test]
fn a_lane_stopped_while_the_root_waits_for_it_wakes_the_root_once() {
    let world = check(
        &format!(
            "{ROOT_AND_LANE}
             root.await_dep a
             idle root
             advance 1h
             show root
             a.interrupt not needed any more
             show root
             advance 3s
             submit root
             gen root
             idle root
             advance 1h"
        ),
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         root: awaiting_dependency #1 initial blocked intent[idle]
         e1 send root#2 auto_resume dependency-ended/v1
         root: running #2 auto_resume scheduled
         e1 send root#3 auto_resume resume/v1",
    );
    // The continuation says which lane ended, how and why: the root need not ask.
    let sent = world
        .commands
        .iter()
        .find(|c| c.worker == world.id("root") && c.prompt_version == "dependency-ended/v1")
        .expect("the wake-up");
    for line in ["/root/a", "was stopped; it will not complete", "Its reason: not needed any more"] {
        assert!(sent.prompt.contains(line), "{line} in {}", sent.prompt);
    }
    let root = world.worker("root");
    assert!(root.dependency.is_none(), "the wait is released");
    let ended = ended_events(&world, "root");
    assert_eq!(ended.len(), 1, "one durable event: {ended:?}");
    assert!(ended[0].contains("Cancelled"), "{ended:?}");
    let woken = world
        .engine
        .attempts()
        .filter(|a| a.worker == world.id("root") && a.wake.labels().contains(&"event:dependency_ended"));
    assert_eq!(woken.count(), 1, "the root is woken once by the lane's end");
}

#[test]
fn a_lane_that_fails_while_another_waits_releases_it_with_the_outcome() {
    let world = check(
        "run auto
         executor e1
         spawn a
         spawn b
         submit a
         submit b
         gen a
         gen b
         b.await_dep a
         idle b
         advance 1m
         a.fail the schema cannot be migrated
         show b
         advance 3s",
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         e1 send b#2 auto_resume dependency-ended/v1
         b: running #2 auto_resume scheduled",
    );
    let ended = ended_events(&world, "b");
    assert_eq!(ended.len(), 1);
    assert!(ended[0].contains("Failed"), "{ended:?}");
    let sent = world.commands.iter().rev().find(|c| c.worker == world.id("b")).expect("b's wake-up").clone();
    for line in ["/root/a", "failed; it will not complete", "Its reason: the schema cannot be migrated"] {
        assert!(sent.prompt.contains(line), "{line} in {}", sent.prompt);
    }
    // A re-send after a daemon restart renders the same text (the attempt keeps it).
    let mut world = world;
    world.script("crash\nexecutor e1");
    let again = world.commands.iter().rev().find(|c| c.worker == world.id("b")).expect("re-sent");
    assert_eq!(again.prompt, sent.prompt);
}

#[test]
fn a_worker_waited_for_names_its_waiters_until_the_wait_ends() {
    // What a Stop's confirmation needs: who waits for the lane it would stop.
    let mut world = World::new();
    world.script(&format!("{ROOT_AND_LANE}\nroot.await_dep a"));
    assert_eq!(world.view("a").waited_on_by, [world.id("root")]);
    assert!(world.view("root").waited_on_by.is_empty());
    world.script("a.complete done");
    assert!(world.view("a").waited_on_by.is_empty(), "the wait is over");
}

#[test]
fn stopping_a_run_settles_nothing_twice() {
    // Every worker ends at once: the root's wait goes with the root, and nobody is woken.
    let mut world = World::new();
    world.script(&format!("{ROOT_AND_LANE}\nroot.await_dep a\nidle root"));
    let run = world.run.expect("run");
    world.call(Operation::RunCancel { run, reason: "stop".into() }).expect("cancelled");
    assert!(ended_events(&world, "root").is_empty());
    assert_eq!(world.worker("root").lifecycle, Lifecycle::Cancelled);
}

#[test]
fn a_blocked_block_while_waiting_for_a_lane_is_that_wait_not_needs_you() {
    check(
        &format!(
            "{ROOT_AND_LANE}
             root.await_dep a
             idle root block=status: blocked\\nsummary: waiting for the lane\\ncurrent: waiting\\nnext: keep going
             advance 1h
             show root
             a.complete done
             show root"
        ),
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         root: awaiting_dependency #1 initial blocked intent[idle]
         e1 send root#2 auto_resume resume/v1
         root: running #2 auto_resume scheduled",
    );
}

#[test]
fn a_blocked_block_naming_a_lane_waits_for_that_lane() {
    for next in ["wait for /root/a to land the schema.", "wait for wrk-2", "wait for Task Lane A to finish"] {
        let world = check(
            &format!(
                "{ROOT_AND_LANE}
                 idle root block=status: blocked\\nsummary: the API needs the schema\\ncurrent: waiting\\nnext: {next}
                 advance 1h
                 show root
                 a.complete schema landed
                 advance 3s"
            ),
            "e1 send root#1 initial root-bootstrap/v2
             e1 create a#1 initial bootstrap/v2
             root: awaiting_dependency #1 initial blocked intent[idle]
             e1 send root#2 auto_resume resume/v1",
        );
        let _ = world;
    }
}

#[test]
fn a_blocked_block_that_asks_a_question_about_a_lane_asks_a_person() {
    let world = check(
        &format!(
            "{ROOT_AND_LANE}
             idle root block=status: blocked\\nsummary: a schema change\\ncurrent: waiting\\nnext: may /root/a drop the legacy column?
             advance 1h
             show root"
        ),
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         root: awaiting_human #1 initial blocked intent[idle]",
    );
    let human = world.worker("root").human.clone().expect("a question for a person");
    assert_eq!(&*human.question, "may /root/a drop the legacy column?");
}

#[test]
fn a_blocked_block_naming_no_unfinished_lane_asks_a_person() {
    let world = check(
        &format!(
            "{ROOT_AND_LANE}
             a.complete done
             idle root block=status: blocked\\nsummary: need a decision\\ncurrent: waiting\\nnext: /root/a is done; tell me the region to deploy to
             advance 1h
             show root"
        ),
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         root: awaiting_human #1 initial blocked intent[idle,event:worker.terminal]",
    );
    let human = world.worker("root").human.clone().expect("a question for a person");
    assert_eq!(human.source, WaitSource::Block);
    assert_eq!(&*human.question, "/root/a is done; tell me the region to deploy to");
}

#[test]
fn the_answer_and_its_choices_are_in_the_prompt_that_resumes_the_worker() {
    let mut world = World::new();
    world.script("run auto\nexecutor e1\nspawn a\nsubmit a\ngen a");
    let a = world.id("a");
    let ask = Operation::WorkerAwaitHuman {
        worker: a,
        reason: "two databases fit".into(),
        question: "Which database?".into(),
        choices: vec!["sqlite".into(), "postgres".into()],
    };
    world.call(ask).expect("asked");
    world.script("idle a\nadvance 1h\na.resolve postgres, on port 5433\nadvance 3s");
    let sent =
        world.commands.iter().rev().find(|c| c.worker == a && c.kind == CommandKind::Send).expect("a send").clone();
    assert_eq!(sent.prompt_version, "answer/v1");
    for line in ["Question: Which database?", "Choices offered: sqlite | postgres", "Answer: postgres, on port 5433"] {
        assert!(sent.prompt.contains(line), "{line} in {}", sent.prompt);
    }
    // A re-send after a daemon restart renders the same text (the attempt keeps it).
    world.script("crash\nexecutor e1");
    let again = world.commands.iter().rev().find(|c| c.worker == a && c.kind == CommandKind::Send).expect("re-sent");
    assert_eq!(again.prompt, sent.prompt);
    assert_eq!(world.worker("a").human_answer.as_deref(), Some("postgres, on port 5433"));
}

#[test]
fn a_wait_on_a_finished_worker_read_back_from_a_store_is_settled_at_once() {
    let mut world = World::new();
    world.script(&format!("{ROOT_AND_LANE}\na.interrupt not needed\nidle root\nadvance 3s\nsubmit root\ngen root"));
    // A store written before the rule: the root still waits for the stopped lane.
    let (root, lane) = (world.id("root"), world.id("a"));
    let Some(Record::Worker(mut w)) = world.store.get(&RecordKey::Worker(root)).cloned() else { panic!("root record") };
    w.dependency = Some(std::sync::Arc::new(DependencyWait {
        condition: DependencyCondition::WorkerCompleted(lane),
        reason: "waiting".into(),
        requested_at: Timestamp(world.now),
    }));
    world.store.insert(RecordKey::Worker(root), Record::Worker(w));
    let trace = world.script("crash\nshow root\nadvance 1s\nshow root");
    assert_eq!(
        trace,
        "crash
root: awaiting_dependency #2 auto_resume generating auto=1
root: awaiting_execution #2 auto_resume generating intent[event:dependency_ended] auto=1"
    );
    assert_eq!(ended_events(&world, "root").len(), 1, "settled once");
    world.script("advance 1h");
    assert_eq!(ended_events(&world, "root").len(), 1, "and only once");
}
