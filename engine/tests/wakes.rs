//! Wake classes (event, idle, keepalive), the anti-spam floor, root steering and the
//! root's event wakes (spec 000 §10, 003 decisions 6-10).

mod support;
use support::{World, check};

/// An auto worker generating its first turn, with a steering-capable executor.
const STEERING: &str = "
    run auto
    executor e1 steering
    spawn a
    submit a
    gen a
";

/// A root bound to a managed conversation and generating its bootstrap turn.
const ROOT_RUNNING: &str = "
    run auto
    executor e1 steering
    attach root https://chatgpt.com/c/root
    bind root https://chatgpt.com/c/root
    idle root
    advance 3s
    submit root
    gen root
";

#[test]
fn keepalive_steers_a_checkpoint_while_generating() {
    check(
        &format!("{STEERING}\nadvance 19m\nadvance 2m\nsubmit a\nshow a"),
        "e1 create a#1 initial bootstrap/v2
         e1 steer a#2 checkpoint checkpoint/v1
         a: running #2 checkpoint generating auto=1",
    );
}

#[test]
fn keepalive_without_steering_waits_for_idle_and_coalesces() {
    let world = check(
        "run auto
         executor e1
         spawn a
         submit a
         gen a
         advance 21m
         show a
         idle a
         advance 3s",
        "e1 create a#1 initial bootstrap/v2
         a: running #1 initial generating intent[active_keepalive]
         e1 send a#2 checkpoint checkpoint/v1",
    );
    let a = world.engine.attempt(world.commands.last().expect("a command").attempt).expect("attempt");
    assert_eq!(a.wake.labels(), vec!["idle", "active_keepalive"]);
}

#[test]
fn keepalive_deadline_is_jittered_in_window_and_stable_across_restart() {
    // No inspection before the keepalive: the next deadline is the keepalive's.
    let mut world = World::with_config(|c| c.inspect_after_ms = 60 * 60_000);
    world.script(STEERING);
    let submitted = world.engine.attempts().next().and_then(|a| a.submitted_at).expect("submitted").0;
    let deadline = world.engine.next_deadline().expect("keepalive armed").0;
    let window = 20 * 60_000..=21 * 60_000;
    assert!(window.contains(&(deadline - submitted)), "keepalive {} ms after submission", deadline - submitted);
    world.crash();
    world.script("executor e1 steering");
    assert_eq!(world.engine.next_deadline().map(|t| t.0), Some(deadline));
}

#[test]
fn keepalive_jitter_differs_between_workers() {
    let mut world = World::new();
    world.script("run auto\nexecutor e1 steering");
    let names = ["a", "b", "c", "d", "e", "f"];
    for name in names {
        world.script(&format!("spawn {name}\nsubmit {name}\ngen {name}"));
    }
    let start = world.now;
    world.script("advance 22m");
    let offsets: std::collections::BTreeSet<u64> = world
        .engine
        .attempts()
        .filter(|a| a.reason == engine::model::AttemptReason::Checkpoint)
        .map(|a| a.scheduled_at.0 - start)
        .collect();
    assert!(offsets.iter().all(|o| (20 * 60_000..=21 * 60_000).contains(o)), "{offsets:?}");
    assert!(offsets.len() > 1, "all keepalives fired at the same offset: {offsets:?}");
}

#[test]
fn event_wake_while_generating_is_deferred_to_the_floor() {
    check(
        &format!("{ROOT_RUNNING}\nspawn a\nsubmit a\ngen a\na.progress step one\nshow root\nadvance 14m\nadvance 1m"),
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         root: running #1 initial generating intent[event:worker.progress]
         e1 steer root#2 auto_resume resume/v1",
    );
}

#[test]
fn idle_bypasses_the_floor_after_grace() {
    check(
        &format!("{ROOT_RUNNING}\nspawn a\nsubmit a\ngen a\na.progress step one\nadvance 1m\nidle root\nadvance 3s"),
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         e1 send root#2 auto_resume resume/v1",
    );
}

#[test]
fn idle_waits_for_the_floor_when_the_policy_forbids_the_bypass() {
    check(
        "run auto idle_bypass=false
         executor e1
         spawn a
         submit a
         gen a
         idle a
         advance 3s
         show a
         advance 15m",
        "e1 create a#1 initial bootstrap/v2
         a: awaiting_execution #1 initial idle intent[idle]
         e1 send a#2 auto_resume resume/v1",
    );
}

#[test]
fn a_material_correction_to_an_idle_lane_is_not_held_by_the_floor_either() {
    // Spec 000 §10.4 / 003 decision 10: material corrective steering bypasses the floor,
    // even where a policy keeps idle continuations behind it.
    check(
        "run auto idle_bypass=false
         executor e1
         spawn a
         submit a
         gen a
         idle a
         advance 3s
         advance 15m
         submit a
         gen a
         idle a
         advance 1m
         a.steer correct_direction stop editing outside your scope
         advance 3s",
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 auto_resume resume/v1
         e1 send a#3 corrective corrective/v1",
    );
}

#[test]
fn material_correction_bypasses_the_floor_and_identical_ones_coalesce() {
    check(
        &format!(
            "{STEERING}\nadvance 1m\na.steer correct_direction stop editing outside your scope\nsubmit a
             a.steer correct_direction stop editing outside your scope
             a.steer continue_as_planned keep going\nadvance 14m\nadvance 1m"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 steer a#2 corrective corrective/v1
         steer coalesced
         e1 steer a#3 corrective corrective/v1",
    );
}

#[test]
fn identical_pending_corrections_coalesce_into_one_delivery() {
    let world = check(
        "run auto
         executor e1
         spawn a
         submit a
         gen a
         a.steer correct_direction use the shared contract
         a.steer correct_direction use the shared contract
         idle a
         advance 3s",
        "e1 create a#1 initial bootstrap/v2
         steer coalesced
         e1 send a#2 corrective corrective/v1",
    );
    assert_eq!(world.prompts_for("a"), 2);
}

#[test]
fn continue_as_planned_can_never_be_material() {
    check(
        &format!("{STEERING}\na.steer continue_as_planned material=true fine"),
        "e1 create a#1 initial bootstrap/v2
         reject INVALID_ARGUMENT",
    );
}

#[test]
fn message_to_a_generating_worker_waits_for_the_floor() {
    check(
        &format!(
            "{STEERING}\nspawn b\nsubmit b\ngen b\nadvance 1m\nb.message a the API moved\nadvance 13m\nshow a\nadvance 1m"
        ),
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         a: running #1 initial generating intent[event:message]
         e1 steer a#2 checkpoint checkpoint/v1",
    );
}

#[test]
fn dependency_is_released_by_the_awaited_worker_completing() {
    check(
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
         show b
         a.complete done
         show b",
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         b: awaiting_dependency #1 initial blocked intent[idle]
         e1 send b#2 auto_resume resume/v1
         b: running #2 auto_resume scheduled",
    );
}

#[test]
fn external_dependency_needs_an_explicit_release() {
    check(
        "run auto
         executor e1
         spawn a
         submit a
         gen a
         a.await_dep
         idle a
         advance 1h
         a.release CI is green",
        "e1 create a#1 initial bootstrap/v2
         e1 send a#2 manual_resume resume/v1",
    );
}

#[test]
fn root_with_two_lanes_is_resumed_by_their_reports_and_stops_after_completing() {
    let world = check(
        &format!(
            "{ROOT_RUNNING}
             spawn a
             spawn b
             submit a
             submit b
             gen a
             gen b
             idle root
             advance 3s
             submit root
             gen root
             a.progress halfway
             a.complete done
             b.complete done
             idle root
             advance 3s
             submit root
             gen root
             root.complete all lanes landed
             idle root
             advance 2h"
        ),
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         e1 send root#2 auto_resume resume/v1
         e1 send root#3 auto_resume resume/v1",
    );
    let run = world.engine.run(world.run.expect("run")).expect("run");
    assert_eq!(run.status, engine::model::RunStatus::Completed);
}

#[test]
fn root_cannot_complete_before_its_lanes() {
    check(
        &format!("{ROOT_RUNNING}\nspawn a\nroot.complete too early"),
        "e1 send root#1 initial root-bootstrap/v2
         e1 create a#1 initial bootstrap/v2
         reject RUN_HAS_UNFINISHED_WORKERS",
    );
}

#[test]
fn orphaned_root_is_recovered_into_a_fresh_conversation_without_restarting_the_run() {
    let world = check(
        "run auto
         executor e1
         spawn a
         spawn b
         submit a
         submit b
         a.complete handoff: landed the domain
         b.progress blocked on the scheduler contract
         show root
         root.continue_now
         submit root",
        "e1 create a#1 initial bootstrap/v2
         e1 create b#1 initial bootstrap/v2
         root: awaiting_execution intent[event:worker.progress,event:worker.terminal]
         e1 create root#1 recovery recovery/v2
         continue_now recovering",
    );
    let root = world.worker("root");
    assert!(root.binding.as_ref().is_some_and(|b| b.conversation.starts_with("https://chatgpt.com/c/")));
    assert_eq!(world.engine.run(world.run.expect("run")).expect("run").status, engine::model::RunStatus::Active);
    assert_eq!(world.worker("a").lifecycle, engine::model::Lifecycle::Completed);
}
