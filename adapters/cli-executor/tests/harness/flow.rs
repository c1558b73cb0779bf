//! A daemon run driven through the executor: a CLI `/root` started, the executor started
//! and crashed as a task, and waits on what the engine booked.

use super::{Binary, Daemon, Dirs, GRACE_MS, options, until};
use cli_executor::connection::Options;
use cli_executor::connection::run;
use engine::Reply;
use engine::ids::WorkerId;
use engine::model::{Attempt, ConversationState};
use engine::op::Operation;
use engine::policy::{Mode, PolicyPatch};

/// Starts a run whose root is a `kind` worker in `dirs.work` (only an executor of that
/// kind gets its commands) and opens a new conversation, in Auto Resume with an idle grace
/// of [`GRACE_MS`].
pub async fn start_run(d: &Daemon, dirs: &Dirs, kind: engine::ExecutorKind) -> WorkerId {
    let patch = PolicyPatch { mode: Some(Mode::Auto), idle_grace_ms: Some(GRACE_MS), ..PolicyPatch::default() };
    let op = Operation::RunStart {
        task_name: "cli test".into(),
        root_conversation_name: "root".into(),
        context: format!("drive a {kind} worker"),
        default_policy: Some(patch),
        root_conversation: None,
        root_executor: Box::new(engine::op::RootExecutor {
            executor: Some(kind),
            workspace: Some(engine::Workspace { directory: dirs.work.display().to_string(), branch: None }),
        }),
    };
    match d.call(op).await {
        Ok(Reply::Run(view)) => view.run.root,
        other => panic!("run_start: {other:?}"),
    }
}

/// Starts the executor as a task (aborting it is a crash: its children are killed, its
/// leases and journal stay).
pub fn executor(d: &Daemon, dirs: &Dirs, binary: &Binary) -> tokio::task::JoinHandle<()> {
    spawn_executor(options(&d.url, dirs, binary))
}

/// Starts an executor with these options as a task (aborting it is a crash).
pub fn spawn_executor(options: Options) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if let Err(e) = run(options).await {
            panic!("the executor stopped: {e}");
        }
    })
}

/// Kills the executor task (its children with it) and waits until it is gone.
pub async fn crash(task: tokio::task::JoinHandle<()>) {
    task.abort();
    let _ = task.await;
}

/// Waits until attempt `n` of `worker` was submitted (and returns the attempts).
pub async fn submitted(d: &Daemon, worker: WorkerId, n: usize) -> Vec<Attempt> {
    until(&format!("attempt {n} submitted"), || async {
        let attempts = d.attempts(worker).await;
        (attempts.len() >= n && attempts[n - 1].submitted_at.is_some()).then_some(attempts)
    })
    .await
}

/// Waits until the worker's conversation shows `state`.
pub async fn conversation_in(d: &Daemon, worker: WorkerId, state: ConversationState) {
    until(&format!("conversation {state:?}"), || async {
        let view = d.worker(worker).await;
        view.worker.binding.as_ref().is_some_and(|b| b.state == state).then_some(())
    })
    .await;
}
