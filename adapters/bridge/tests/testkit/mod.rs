//! The real daemon for the loopback tests and the bridge benchmarks: `serve_with_executors`
//! on the fjall store in a temporary directory, in process, on a loopback port, with
//! fixed tokens; and the runs they drive through it. (Shared as a module: the bridge's
//! library cannot depend on the daemon crate, which depends on it.)

use engine::Reply;
use engine::ids::WorkerId;
use engine::op::Operation;
use engine::policy::PolicyPatch;
use executor_protocol::{BindingWire, ObservationWire, StateName};
use orchestrator::serve::{ExecutorOptions, ServeOptions, serve_with_executors};
use tokio::sync::oneshot;

/// The executor token the daemon accepts.
pub const EXECUTOR_TOKEN: &str = "executor-token-for-tests-0123456789";
/// The MCP bearer token.
pub const MCP_TOKEN: &str = "mcp-token-for-tests-0123456789";

/// A running daemon; [`Daemon::stop`] stops it and checks that it stopped cleanly.
pub struct Daemon {
    /// The executor endpoint, `ws://127.0.0.1:PORT/executor` (`/mcp` is on the same port).
    pub url: String,
    /// The engine, as the MCP tools reach it.
    pub handle: runtime::Handle,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), String>>,
    _dir: tempfile::TempDir,
}

impl Daemon {
    /// The daemon's data directory (its host book is there).
    #[allow(dead_code, reason = "tests/hosts.rs reads it; the benches sharing this file do not")]
    pub fn data_dir(&self) -> std::path::PathBuf {
        self._dir.path().join("data")
    }

    /// Starts a daemon on a fresh data directory and waits until it listens.
    pub async fn start() -> Daemon {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = ServeOptions {
            data_dir: dir.path().join("data"),
            listen: "127.0.0.1:0".parse().expect("addr"),
            token: Some(MCP_TOKEN.into()),
            allow_hosts: vec![],
            limits: Default::default(),
            oauth: None,
            history: Default::default(),
            store: Default::default(),
            notify: Vec::new(),
            notify_ca: None,
        };
        let executors = ExecutorOptions { token: Some(EXECUTOR_TOKEN.into()), ..ExecutorOptions::default() };
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, listening) = oneshot::channel();
        let serving = serve_with_executors(
            options,
            executors,
            async move {
                let _ = stopped.await;
            },
            move |l, h| {
                let _ = ready.send((l.executor_url.clone().expect("the bridge is mounted"), h.clone()));
            },
        );
        let task = tokio::spawn(async move { serving.await.map_err(|e| e.to_string()) });
        let (url, handle) = listening.await.expect("the daemon listens");
        Daemon { url, handle, stop: Some(stop), task, _dir: dir }
    }

    /// Stops the daemon and waits for a clean stop.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.await.expect("the daemon task").expect("the daemon stops cleanly");
    }
}

/// Creates a run whose default policy is `patch` (through `run_create`, as an agent would)
/// and attaches its `/root` to `conversation`; returns the root.
pub async fn attached_root(
    handle: &runtime::Handle,
    task_name: &str,
    patch: PolicyPatch,
    conversation: &str,
) -> WorkerId {
    let op = Operation::RunCreate {
        task_name: task_name.into(),
        root_conversation_name: "root".into(),
        context: "drive the executor bridge".into(),
        default_policy: Some(patch),
        root_executor: Default::default(),
    };
    let Ok(Ok(Reply::Run(view))) = handle.call(op).await else { panic!("run_create") };
    let root = view.run.root;
    let attach = Operation::WorkerAttach { worker: root, conversation: conversation.into() };
    handle.call(attach).await.expect("the engine runs").expect("worker_attach");
    root
}

/// An open binding of `worker` to `conversation`, observed in `state` at `seq`.
pub fn binding_at(worker: WorkerId, conversation: &str, state: StateName, seq: u64) -> BindingWire {
    BindingWire {
        worker_id: worker,
        conversation_url: conversation.into(),
        open: true,
        observation: Some(ObservationWire {
            state,
            error_kind: None,
            seq,
            block: None,
            until_ms: None,
            detail: None,
            approval: None,
            retry: None,
        }),
    }
}
