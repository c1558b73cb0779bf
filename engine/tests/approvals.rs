//! The operator's answer to a CLI approval request (issue 20, `--approvals ask`): valid only
//! while the worker is held `awaiting_approval` on that very request; sent to the executor
//! once as `approval.answer`; never twice, and not for a request republished after it.

mod support;
use engine::effect::CommandKind;
use engine::model::{ApprovalDecision, ConversationState, HoldReason, PendingApproval};
use engine::op::Operation;
use engine::{ExecutorInput, Input, Observation};
use std::sync::Arc;
use support::World;

/// A Codex worker `c` generating its first turn on a CLI executor.
fn generating() -> World {
    let mut world = World::new();
    world.script(
        "run auto
         executor cli-1 steering kinds=codex
         spawn c codex dir=/src/c
         submit c
         gen c",
    );
    world
}

/// `c`'s session waits on approval request `id`.
fn asks(world: &mut World, id: &str) {
    let worker = world.id("c");
    let seq = world.next_seq(worker);
    let approval = PendingApproval { id: id.into(), kind: "command".into(), summary: "run make (in /src/c)".into() };
    let observation = Observation {
        state: ConversationState::AwaitingApproval,
        seq,
        block: None,
        until: None,
        detail: Some(Arc::clone(&approval.summary)),
        approval: Some(approval),
        retry: None,
    };
    let executor = engine::ids::ExecutorId::new("cli-1");
    world.input(Input::Executor(ExecutorInput::State { executor, worker, observation }));
}

fn answer(world: &mut World, id: &str) -> Result<(), String> {
    let op = Operation::WorkerApprovalAnswer {
        worker: world.id("c"),
        approval: id.to_string(),
        decision: ApprovalDecision::Approve,
    };
    world.call(op).map(|_| ()).map_err(|r| r.code.as_str().to_string())
}

fn answers(world: &World) -> Vec<(String, String)> {
    world
        .commands
        .iter()
        .filter(|c| c.kind == CommandKind::ApprovalAnswer)
        .map(|c| {
            let a = c.approval.as_ref().expect("an answer names its request");
            (a.id.to_string(), c.idempotency_key.clone())
        })
        .collect()
}

#[test]
fn an_answer_goes_to_the_executor_once_and_only_for_the_request_held() {
    let mut world = generating();
    assert_eq!(answer(&mut world, "apr-1"), Err("NOT_AWAITING_APPROVAL".into()), "not held");
    asks(&mut world, "apr-1");
    let held = world.engine.worker(world.id("c")).and_then(|w| w.binding.as_ref()).map(|b| b.state);
    assert_eq!(held, Some(ConversationState::AwaitingApproval));
    assert_eq!(answer(&mut world, "apr-2"), Err("NOT_AWAITING_APPROVAL".into()), "another request");
    assert!(answers(&world).is_empty());
    assert_eq!(answer(&mut world, "apr-1"), Ok(()));
    let sent = answers(&world);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, "apr-1");
    assert!(sent[0].1.starts_with("approval.answer:") && sent[0].1.ends_with(":apr-1"), "{}", sent[0].1);
    assert_eq!(answer(&mut world, "apr-1"), Err("NOT_AWAITING_APPROVAL".into()), "answered already");
    // The executor republishes the same request before its answer lands: still answered.
    asks(&mut world, "apr-1");
    assert_eq!(answer(&mut world, "apr-1"), Err("NOT_AWAITING_APPROVAL".into()), "republished");
    assert_eq!(answers(&world).len(), 1, "sent at most once");
    // Codex goes on: the hold lifts; a later request is answerable in its turn.
    world.observe("c", ConversationState::Generating, None);
    let lifted = world
        .engine
        .recent_events()
        .any(|e| matches!(e.kind, engine::event::EventKind::WorkerHoldLifted { reason: HoldReason::AwaitingApproval }));
    assert!(lifted, "the hold lifted");
    asks(&mut world, "apr-2");
    assert_eq!(answer(&mut world, "apr-2"), Ok(()));
    assert_eq!(answers(&world).len(), 2);
}

#[test]
fn a_card_without_a_request_cannot_be_answered_from_the_dashboard() {
    let mut world = generating();
    world.observe("c", ConversationState::AwaitingApproval, None);
    assert_eq!(answer(&mut world, "apr-1"), Err("NOT_AWAITING_APPROVAL".into()));
    assert!(answers(&world).is_empty());
}

#[test]
fn an_answer_lost_with_the_connection_can_be_given_again_once_the_executor_says_hello() {
    let mut world = generating();
    asks(&mut world, "apr-1");
    assert_eq!(answer(&mut world, "apr-1"), Ok(()));
    // The executor reconnects still holding the request: the answer never reached it.
    let worker = world.id("c");
    let conversation = world.engine.worker(worker).and_then(|w| w.binding.as_ref()).map(|b| b.conversation.clone());
    let seq = world.next_seq(worker);
    let approval = PendingApproval { id: "apr-1".into(), kind: "command".into(), summary: "run make".into() };
    let observation = Observation {
        state: ConversationState::AwaitingApproval,
        seq,
        block: None,
        until: None,
        detail: None,
        approval: Some(approval),
        retry: None,
    };
    let binding = engine::BindingReport {
        worker,
        conversation: conversation.expect("bound"),
        open: true,
        observation: Some(observation),
    };
    world.input(Input::Executor(ExecutorInput::Hello {
        executor: engine::ids::ExecutorId::new("cli-1"),
        steering: true,
        kinds: vec![engine::ExecutorKind::Codex],
        bindings: vec![binding],
        journal: Vec::new(),
        turns_max: None,
        accounts: Vec::new(),
    }));
    assert_eq!(answer(&mut world, "apr-1"), Ok(()), "answerable again after hello");
    assert_eq!(answers(&world).len(), 2);
}

#[test]
fn a_new_child_numbering_its_requests_again_is_answerable_under_a_reused_handle() {
    let mut world = generating();
    asks(&mut world, "apr-1");
    assert_eq!(answer(&mut world, "apr-1"), Ok(()));
    // The answer landed (the executor reports the turn going on), then the child crashed
    // and its successor's first request is `apr-1` again: a new request, not a late one.
    world.observe("c", ConversationState::Generating, None);
    asks(&mut world, "apr-1");
    assert_eq!(answer(&mut world, "apr-1"), Ok(()), "the new request is answerable");
    assert_eq!(answers(&world).len(), 2);
    assert_eq!(answer(&mut world, "apr-1"), Err("NOT_AWAITING_APPROVAL".into()), "and answered once");
}

#[test]
fn a_new_request_reported_while_another_was_held_replaces_it() {
    let mut world = generating();
    asks(&mut world, "apr-1");
    // The request went with its child, and the next child asks at once: no other state
    // came between, but the handle differs, so it is not a duplicate report.
    asks(&mut world, "apr-2");
    assert_eq!(answer(&mut world, "apr-1"), Err("NOT_AWAITING_APPROVAL".into()), "the gone request");
    assert_eq!(answer(&mut world, "apr-2"), Ok(()));
    assert_eq!(answers(&world).iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["apr-2"]);
}
