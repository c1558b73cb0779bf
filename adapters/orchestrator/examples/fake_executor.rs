//! A test daemon: `orchestrator serve` with an in-process simulated executor instead of
//! the (not yet built) executor bridge. Test-only: it is an example, not part of the
//! production binary, which has no way to feed executor reports.
//!
//! The simulated executor plays a ChatGPT tab per worker: it says `hello`, reports a
//! conversation attached by `worker_attach` as open and idle, answers every
//! `conversation.create`/`send` as submitted, reports the turn generating and then, after
//! `--turn-ms`, idle; a `steer` is acknowledged; a `command.cancel` is honoured.
//!
//! `cargo run -p orchestrator --example fake_executor -- --data-dir DIR --listen ADDR --mcp-token TOKEN [--turn-ms N]`

use engine::ids::{Cursor, ExecutorId, WorkerId};
use engine::input::{BindingReport, CommandOutcome, ExecErrorCode, ExecutorInput, Observation};
use engine::model::ConversationState;
use engine::op::Operation;
use engine::{CommandKind, ExecutorCommand, Reply};
use orchestrator::ChannelExecutors;
use orchestrator::serve::{ServeOptions, serve, signals};
use runtime::Handle;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Per-worker observation sequence, as a real executor keeps per binding.
type Seqs = Arc<Mutex<HashMap<WorkerId, u64>>>;

fn next_seq(seqs: &Seqs, worker: WorkerId) -> u64 {
    let mut map = seqs.lock().expect("seqs");
    let s = map.entry(worker).or_insert(0);
    *s += 1;
    *s
}

fn current_seq(seqs: &Seqs, worker: WorkerId) -> u64 {
    *seqs.lock().expect("seqs").get(&worker).unwrap_or(&0)
}

async fn state(handle: &Handle, executor: &ExecutorId, seqs: &Seqs, worker: WorkerId, state: ConversationState) {
    let observation = Observation {
        state,
        seq: next_seq(seqs, worker),
        block: None,
        until: None,
        detail: None,
        approval: None,
        retry: None,
    };
    let _ = handle.executor(ExecutorInput::State { executor: executor.clone(), worker, observation }).await;
}

/// Reports conversations attached by `worker_attach` as open and idle.
async fn watch_attachments(handle: Handle, executor: ExecutorId, seqs: Seqs) {
    let mut durable = handle.durable_cursor();
    let mut cursor = Cursor(0);
    loop {
        durable.borrow_and_update();
        let op = Operation::EventsAfter { cursor, run: None, worker: None, limit: 1_000 };
        let Ok(Ok(Reply::Events(page))) = handle.call(op).await else { return };
        for e in &page.events {
            if let (engine::event::EventKind::WorkerAttached { conversation }, Some(worker)) = (&e.kind, e.worker) {
                let observation = Some(Observation {
                    state: ConversationState::Idle,
                    seq: next_seq(&seqs, worker),
                    block: None,
                    until: None,
                    detail: None,
                    approval: None,
                    retry: None,
                });
                let report = BindingReport { worker, conversation: conversation.clone(), open: true, observation };
                let _ = handle.executor(ExecutorInput::Binding { executor: executor.clone(), report }).await;
            }
        }
        cursor = page.next_cursor;
        if durable.wait_for(|c| *c > cursor).await.is_err() {
            return;
        }
    }
}

/// Performs commands like a well-behaved tab whose turns take `turn`.
async fn perform(
    handle: Handle,
    executor: ExecutorId,
    seqs: Seqs,
    mut commands: mpsc::UnboundedReceiver<ExecutorCommand>,
    turn: Duration,
) {
    while let Some(c) = commands.recv().await {
        let result = |outcome| ExecutorInput::Result { executor: executor.clone(), command: c.id, outcome };
        match c.kind {
            CommandKind::Cancel => {
                let outcome = CommandOutcome::Failed { code: ExecErrorCode::Cancelled, detail: "withdrawn".into() };
                let _ = handle.executor(result(outcome)).await;
            }
            // Its states are never lost and it holds no other conversation.
            CommandKind::Inspect | CommandKind::Close | CommandKind::ApprovalAnswer => {}
            CommandKind::Steer => {
                let outcome = CommandOutcome::Submitted { state_seq: current_seq(&seqs, c.worker), conversation: None };
                let _ = handle.executor(result(outcome)).await;
            }
            CommandKind::Create | CommandKind::Send => {
                let outcome = if c.kind == CommandKind::Create {
                    seqs.lock().expect("seqs").insert(c.worker, 0);
                    let url = format!("https://chatgpt.example/c/fake-{}", c.attempt.0);
                    CommandOutcome::Submitted { state_seq: 0, conversation: Some(url.into()) }
                } else {
                    CommandOutcome::Submitted { state_seq: current_seq(&seqs, c.worker), conversation: None }
                };
                let _ = handle.executor(result(outcome)).await;
                let (handle, executor, seqs, worker) = (handle.clone(), executor.clone(), seqs.clone(), c.worker);
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    state(&handle, &executor, &seqs, worker, ConversationState::Generating).await;
                    tokio::time::sleep(turn).await;
                    state(&handle, &executor, &seqs, worker, ConversationState::Idle).await;
                });
            }
        }
    }
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let data_dir = arg(&args, "--data-dir").ok_or_else(|| anyhow::anyhow!("--data-dir DIR is required"))?;
    let listen = arg(&args, "--listen").unwrap_or_else(|| "127.0.0.1:0".into()).parse()?;
    let token = arg(&args, "--mcp-token");
    let turn = Duration::from_millis(arg(&args, "--turn-ms").map(|s| s.parse()).transpose()?.unwrap_or(300));
    orchestrator::logs::init(&arg(&args, "--log-level").unwrap_or("warn".into()))?;
    // `--public-url URL` turns OAuth on, as for `orchestrator serve`; `--oauth-access-ttl-ms`
    // shortens the access token's life (to see a client refresh).
    let mut ttls = oauth::Ttls::default();
    if let Some(ms) = arg(&args, "--oauth-access-ttl-ms") {
        ttls.access_ms = ms.parse()?;
    }
    let oauth = arg(&args, "--public-url").map(|public_url| oauth::OAuthOptions {
        public_url,
        redirect_allow: Vec::new(),
        ttls,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let (tx, rx) = mpsc::unbounded_channel();
        let options = ServeOptions {
            data_dir: data_dir.into(),
            listen,
            token,
            allow_hosts: vec![],
            limits: Default::default(),
            oauth,
            history: Default::default(),
            store: Default::default(),
            notify: Vec::new(),
            notify_ca: None,
        };
        let mut commands = Some(rx);
        serve(options, ChannelExecutors(tx), signals(), |listening, handle| {
            announce(&listening.url);
            let executor = ExecutorId::new("fake-1");
            let seqs: Seqs = Arc::default();
            let rx = commands.take().expect("called once");
            let handle = handle.clone();
            tokio::spawn(async move {
                let hello = ExecutorInput::Hello {
                    executor: executor.clone(),
                    steering: false,
                    kinds: vec![engine::ExecutorKind::Chatgpt],
                    bindings: vec![],
                    journal: vec![],
                    turns_max: None,
                    accounts: Vec::new(),
                };
                let _ = handle.executor(hello).await;
                tokio::spawn(watch_attachments(handle.clone(), executor.clone(), seqs.clone()));
                perform(handle, executor, seqs, rx, turn).await;
            });
        })
        .await
    })
}

#[allow(clippy::print_stdout, reason = "the test harness reads the endpoint from stdout")]
fn announce(url: &str) {
    use std::io::Write;
    println!("orchestrator: MCP endpoint {url}");
    let _ = std::io::stdout().flush();
}
