//! The shell over the simulated store: replies only after durability, recovery from the
//! store, old events from the store, and a store failure stopping everything.

use engine::ids::*;
use engine::op::*;
use engine::policy::{Mode, PolicyPatch};
use engine::*;
use runtime::{Disk, ExecutorSink, Handle, MemStore, Shell, ShellConfig, TokioClock};
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Clone, Default)]
struct Recorder(Rc<RefCell<Vec<ExecutorCommand>>>);

impl ExecutorSink for Recorder {
    fn send(&mut self, command: ExecutorCommand) {
        self.0.borrow_mut().push(command);
    }
}

fn open(disk: &Rc<RefCell<Disk>>, config: ShellConfig) -> (Shell<MemStore, TokioClock, Recorder>, Handle, Recorder) {
    let recorder = Recorder::default();
    let (shell, handle) =
        Shell::open(MemStore::open(disk.clone()), TokioClock::new(1_700_000_000_000), recorder.clone(), config)
            .expect("open");
    (shell, handle, recorder)
}

async fn create_run(handle: &Handle) -> RunId {
    let reply = handle
        .call(Operation::RunCreate {
            task_name: "Shell".into(),
            root_conversation_name: "Root".into(),
            context: String::new(),
            default_policy: Some(PolicyPatch::mode(Mode::Auto)),
            root_executor: Default::default(),
        })
        .await
        .expect("shell alive")
        .expect("accepted");
    let Reply::Run(view) = reply else { panic!("run view") };
    view.run.id
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn replies_arrive_after_the_batch_is_durable_and_survive_restart() {
    let disk = Rc::new(RefCell::new(Disk::default()));
    let (shell, handle, _) = open(&disk, ShellConfig::default());
    let local = tokio::task::LocalSet::new();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = local.spawn_local(shell.run(async move {
        let _ = stop_rx.await;
    }));
    local
        .run_until(async {
            let run = create_run(&handle).await;
            assert!(disk.borrow().get(&RecordKey::Run(run)).is_some(), "the reply came before the run was durable");
            let _ = stop_tx.send(());
            task.await.expect("join").expect("clean shutdown");
        })
        .await;
    let (shell, handle, _) = open(&disk, ShellConfig::default());
    let local = tokio::task::LocalSet::new();
    local.spawn_local(shell.run(std::future::pending()));
    local
        .run_until(async {
            let reply = handle.call(Operation::RunList { include_terminal: true }).await.expect("alive").expect("ok");
            let Reply::Runs(runs) = reply else { panic!("runs") };
            assert_eq!(runs.len(), 1, "the run survived the restart");
        })
        .await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn timers_fire_on_virtual_time_and_commands_reach_the_sink() {
    let disk = Rc::new(RefCell::new(Disk::default()));
    let (shell, handle, recorder) = open(&disk, ShellConfig::default());
    let local = tokio::task::LocalSet::new();
    local.spawn_local(shell.run(std::future::pending()));
    local
        .run_until(async {
            let executor = ExecutorId::new("e1");
            handle
                .executor(ExecutorInput::Hello {
                    executor: executor.clone(),
                    steering: false,
                    kinds: vec![engine::ExecutorKind::Chatgpt],
                    bindings: vec![],
                    journal: vec![],
                    turns_max: None,
                    accounts: Vec::new(),
                })
                .await
                .expect("alive");
            let run = create_run(&handle).await;
            let spawned = handle
                .call(Operation::WorkerSpawn(Box::new(SpawnArgs {
                    run,
                    name: "/root/a".into(),
                    display_name: None,
                    task_summary: "t".into(),
                    assignment: model::Assignment {
                        objective: "o".into(),
                        scope: String::new(),
                        acceptance_criteria: vec![],
                    },
                    worktree: None,
                    policy: None,
                    start: true,
                    executor: None,
                    workspace: None,
                })))
                .await
                .expect("alive")
                .expect("spawned");
            let Reply::Worker(view) = spawned else { panic!("worker") };
            let worker = view.worker.id;
            let create = recorder.0.borrow().last().cloned().expect("a create command");
            assert_eq!(create.kind, CommandKind::Create);
            let url: std::sync::Arc<str> = "https://chatgpt.com/c/x".into();
            handle
                .executor(ExecutorInput::Result {
                    executor: executor.clone(),
                    command: create.id,
                    outcome: CommandOutcome::Submitted { state_seq: 0, conversation: Some(url) },
                })
                .await
                .expect("alive");
            for (seq, state) in [(1, model::ConversationState::Generating), (2, model::ConversationState::Idle)] {
                handle
                    .executor(ExecutorInput::State {
                        executor: executor.clone(),
                        worker,
                        observation: Observation {
                            state,
                            seq,
                            block: None,
                            until: None,
                            detail: None,
                            approval: None,
                            retry: None,
                        },
                    })
                    .await
                    .expect("alive");
            }
            // The idle grace (3 s) runs on virtual time; then the resume goes out.
            tokio::time::sleep(std::time::Duration::from_secs(4)).await;
            let last = recorder.0.borrow().last().cloned().expect("commands");
            assert_eq!(last.kind, CommandKind::Send, "an idle resume after the grace");
            assert_eq!(last.idempotency_key, "conversation.send:exe-2");
        })
        .await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn old_events_come_from_the_store() {
    let disk = Rc::new(RefCell::new(Disk::default()));
    let config = ShellConfig {
        engine: EngineConfig { events_retained_max: 4, ..EngineConfig::default() },
        ..ShellConfig::default()
    };
    let (shell, handle, _) = open(&disk, config);
    let local = tokio::task::LocalSet::new();
    local.spawn_local(shell.run(std::future::pending()));
    local
        .run_until(async {
            create_run(&handle).await;
            for i in 0..10 {
                let op = Operation::WorkerProgress { worker: WorkerId(1), summary: format!("p{i}"), commit: None };
                handle.call(op).await.expect("alive").expect("ok");
            }
            let op = Operation::EventsAfter { cursor: Cursor(0), run: None, worker: None, limit: 5 };
            let Reply::Events(page) = handle.call(op).await.expect("alive").expect("ok") else { panic!("events") };
            let cursors: Vec<u64> = page.events.iter().map(|e| e.cursor.0).collect();
            assert_eq!(cursors, vec![1, 2, 3, 4, 5]);
            assert_eq!(page.next_cursor, Cursor(5));
        })
        .await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_store_failure_stops_the_shell_and_callers_learn_it() {
    let disk = Rc::new(RefCell::new(Disk::default()));
    let (shell, handle, _) = open(&disk, ShellConfig::default());
    let local = tokio::task::LocalSet::new();
    let task = local.spawn_local(shell.run(std::future::pending()));
    local
        .run_until(async {
            create_run(&handle).await;
            disk.borrow_mut().fail_commits = 1;
            let op = Operation::WorkerProgress { worker: WorkerId(1), summary: "lost".into(), commit: None };
            assert_eq!(handle.call(op).await, Err(runtime::ShellGone), "no reply for an undurable mutation");
            assert!(matches!(task.await.expect("join"), Err(runtime::ShellError::Store(_))));
        })
        .await;
}
