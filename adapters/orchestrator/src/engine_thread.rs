//! The engine on its own OS thread: the runtime shell over the store `--store` names
//! (fjall in the data directory by default, or a Postgres database), driven by a
//! current-thread tokio runtime and a `LocalSet` (the shell future is `!Send`), with the
//! history retention the engine is given.

use anyhow::Context;
use engine::{EngineConfig, ExecutorCommand};
use runtime::{ExecutorSink, Handle, NotifySink, Shell, ShellConfig, ShellError, Store, TokioClock};
use std::path::{Path, PathBuf};
use tokio::sync::{mpsc, oneshot};

/// Where the daemon keeps its durable state (`serve --store`, `ORCHESTRATOR_STORE`).
#[derive(Clone, Default, PartialEq, Eq)]
pub enum StoreChoice {
    /// The embedded fjall store in `DIR/store` (the default: one person, one machine).
    #[default]
    Fjall,
    /// A PostgreSQL database (`postgres://...`), every commit fenced by this daemon's
    /// epoch (`docs/scale-out.md`). The connection string may hold a password: it is never
    /// printed ([`StoreChoice::describe`]).
    Postgres(String),
}

impl StoreChoice {
    /// `fjall`, or a `postgres://` / `postgresql://` connection string.
    pub fn parse(text: &str) -> Result<StoreChoice, String> {
        let text = text.trim();
        if text == "fjall" {
            Ok(StoreChoice::Fjall)
        } else if store_pg::is_postgres_url(text) {
            Ok(StoreChoice::Postgres(text.to_string()))
        } else {
            Err("expected `fjall` or a connection string postgres://USER@HOST[:PORT]/DATABASE".into())
        }
    }

    /// What to print: `fjall`, or `postgres` without the connection string (it may hold a
    /// password).
    pub fn describe(&self) -> &'static str {
        match self {
            StoreChoice::Fjall => "fjall",
            StoreChoice::Postgres(_) => "postgres",
        }
    }
}

impl std::fmt::Debug for StoreChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// A store error's stable code, for the messages a failed start or a stop prints.
trait Coded {
    /// The code.
    fn code(&self) -> &'static str;
}

impl Coded for store::Error {
    fn code(&self) -> &'static str {
        store::Error::code(self)
    }
}

impl Coded for store_pg::Error {
    fn code(&self) -> &'static str {
        store_pg::Error::code(self)
    }
}

/// A shell's error with its store's code: `[STORE_IO] store failure ...`.
fn shell_error<E: Coded + std::fmt::Display>(error: ShellError<E>) -> String {
    match &error {
        ShellError::Store(e) => format!("[{}] {error}", e.code()),
        ShellError::Recovery(_) => error.to_string(),
    }
}

/// What the engine thread hands back once the shell runs, or why it could not start.
type Ready = oneshot::Sender<Result<Handle, String>>;

/// Recovers the engine from `store`, reports ready, and runs the shell until `stop`.
async fn run_shell<S, X>(
    store: S,
    config: ShellConfig,
    sink: X,
    notifier: Option<Box<dyn NotifySink>>,
    status: Option<std::sync::Arc<crate::notify::NotifyStatus>>,
    ready: Ready,
    stop: oneshot::Receiver<()>,
) -> Result<(), String>
where
    S: Store,
    S::Error: Coded,
    X: ExecutorSink,
{
    let (mut shell, handle) = match Shell::open(store, TokioClock::new(wall_clock_ms()), sink, config) {
        Ok(opened) => opened,
        Err(e) => {
            let _ = ready.send(Err(shell_error(e)));
            return Ok(());
        }
    };
    if let Some(notifier) = notifier {
        shell.notify_with(notifier);
    }
    if let Some(status) = status {
        status.count(shell.engine());
        shell.observe(Box::new(move |engine, batches| status.observe(engine, batches)));
    }
    let _ = ready.send(Ok(handle));
    shell
        .run(async move {
            let _ = stop.await;
        })
        .await
        .map_err(shell_error)
}

/// The executor sink until the executor bridge exists: commands are dropped (logged).
/// Nothing is lost: an executor that connects later reconciles in-flight commands
/// through its `hello`, and the engine re-sends what it never received.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoExecutors;

impl ExecutorSink for NoExecutors {
    fn send(&mut self, command: ExecutorCommand) {
        tracing::debug!(command = %command.id, executor = %command.executor, "no executor bridge; command held for reconciliation");
    }
}

/// A sink that hands commands to a channel, for an in-process executor.
#[derive(Clone, Debug)]
pub struct ChannelExecutors(pub mpsc::UnboundedSender<ExecutorCommand>);

impl ExecutorSink for ChannelExecutors {
    fn send(&mut self, command: ExecutorCommand) {
        let _ = self.0.send(command);
    }
}

/// What the engine thread opens its store from.
enum Source {
    /// The fjall store in `DIR/store`.
    Fjall,
    /// A Postgres database, opened on the engine thread (taking the lease if it is free,
    /// and never renewing it: `serve` opens through `leader::lead` instead, which keeps it).
    Postgres(String),
    /// A Postgres store opened beforehand, its lease taken.
    Opened(Box<store_pg::PgStore>),
}

/// The running engine thread.
#[derive(Debug)]
pub struct EngineThread {
    /// How callers reach the engine.
    pub handle: Handle,
    /// Dropping or firing it stops the shell (after it finishes the work in hand).
    stop: Option<oneshot::Sender<()>>,
    /// The shell's outcome: `Err` after a store failure (or a panic, as a dropped sender).
    done: oneshot::Receiver<Result<(), String>>,
    /// The outcome once `done` answered (it answers once).
    outcome: Option<Result<(), String>>,
    /// The thread, joined on stop.
    thread: Option<std::thread::JoinHandle<()>>,
    /// The data directory, for messages.
    dir: PathBuf,
}

impl EngineThread {
    /// Opens the store (`store`: fjall in `data_dir`, or Postgres), recovers the engine
    /// (keeping `history` finished runs in view) and starts the shell.
    pub async fn start<X: ExecutorSink + Send + 'static>(
        data_dir: &Path,
        store: &StoreChoice,
        history: HistoryOptions,
        sink: X,
        notify: NotifyWiring,
    ) -> anyhow::Result<EngineThread> {
        EngineThread::start_timed(data_dir, store, history, sink, notify, TestTimers::default()).await
    }

    /// [`EngineThread::start`], with the test-only timers `timers` (none: the engine's own).
    pub async fn start_timed<X: ExecutorSink + Send + 'static>(
        data_dir: &Path,
        store: &StoreChoice,
        history: HistoryOptions,
        sink: X,
        notify: NotifyWiring,
        timers: TestTimers,
    ) -> anyhow::Result<EngineThread> {
        let source = match store {
            StoreChoice::Fjall => Source::Fjall,
            StoreChoice::Postgres(url) => Source::Postgres(url.clone()),
        };
        EngineThread::start_from(data_dir, source, history, sink, notify, timers).await
    }

    /// [`EngineThread::start_timed`] on a Postgres store already opened (its lease taken by
    /// `leader::lead`).
    pub(crate) async fn start_on_postgres<X: ExecutorSink + Send + 'static>(
        data_dir: &Path,
        store: store_pg::PgStore,
        history: HistoryOptions,
        sink: X,
        notify: NotifyWiring,
        timers: TestTimers,
    ) -> anyhow::Result<EngineThread> {
        EngineThread::start_from(data_dir, Source::Opened(Box::new(store)), history, sink, notify, timers).await
    }

    async fn start_from<X: ExecutorSink + Send + 'static>(
        data_dir: &Path,
        choice: Source,
        history: HistoryOptions,
        sink: X,
        notify: NotifyWiring,
        timers: TestTimers,
    ) -> anyhow::Result<EngineThread> {
        let dir = data_dir.to_path_buf();
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create data directory {}", dir.display()))?;
        let (ready_tx, ready_rx) = oneshot::channel::<Result<Handle, String>>();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = oneshot::channel::<Result<(), String>>();
        let store_dir = dir.join("store");
        let thread = std::thread::Builder::new()
            .name("engine".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("cannot start the engine runtime: {e}")));
                        return;
                    }
                };
                let local = tokio::task::LocalSet::new();
                let result = local.block_on(&rt, async move {
                    let mut engine = EngineConfig {
                        seed: seed(),
                        history_runs_max: history.runs_max,
                        history_kept_ms: history.kept_ms,
                        notify_targets: notify.targets,
                        ..EngineConfig::default()
                    };
                    timers.apply(&mut engine);
                    let config = ShellConfig { engine, ..ShellConfig::default() };
                    let (notifier, status) = (notify.sink, notify.status);
                    match choice {
                        Source::Opened(store) => {
                            run_shell(*store, config, sink, notifier, status, ready_tx, stop_rx).await
                        }
                        Source::Fjall => match store::FjallStore::open(&store_dir) {
                            Ok(store) => run_shell(store, config, sink, notifier, status, ready_tx, stop_rx).await,
                            Err(e) => {
                                let _ = ready_tx.send(Err(format!("cannot open the store [{}]: {e}", e.code())));
                                Ok(())
                            }
                        },
                        // Opening blocks this thread (connect, tables, the epoch): nothing
                        // else runs on it yet.
                        Source::Postgres(url) => match store_pg::PgStore::open(&url) {
                            Ok(store) => {
                                tracing::info!(
                                    target_db = store.target(),
                                    epoch = store.epoch(),
                                    "opened the Postgres store"
                                );
                                run_shell(store, config, sink, notifier, status, ready_tx, stop_rx).await
                            }
                            Err(e) => {
                                let _ =
                                    ready_tx.send(Err(format!("cannot open the Postgres store [{}]: {e}", e.code())));
                                Ok(())
                            }
                        },
                    }
                });
                let _ = done_tx.send(result);
            })
            .context("cannot start the engine thread")?;
        let handle = match ready_rx.await {
            Ok(Ok(handle)) => handle,
            Ok(Err(message)) => {
                let _ = thread.join();
                anyhow::bail!("{message} (data directory {})", dir.display());
            }
            Err(_) => {
                let _ = thread.join();
                anyhow::bail!("the engine thread died while starting (data directory {})", dir.display());
            }
        };
        Ok(EngineThread { handle, stop: Some(stop_tx), done: done_rx, outcome: None, thread: Some(thread), dir })
    }

    /// Completes when the shell stops by itself (a store failure, or a panic): the
    /// daemon must then exit non-zero. Cancel-safe.
    pub async fn stopped(&mut self) -> anyhow::Result<()> {
        if self.outcome.is_none() {
            let outcome = match (&mut self.done).await {
                Ok(result) => result,
                Err(_) => Err("the engine thread panicked; a restart recovers from the store".to_string()),
            };
            self.outcome = Some(outcome);
        }
        match self.outcome.clone().unwrap_or(Ok(())) {
            Ok(()) => Ok(()),
            Err(message) => anyhow::bail!("{message} (data directory {})", self.dir.display()),
        }
    }

    /// Stops the shell after the work in hand is committed and released, and joins it.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let result = self.stopped().await;
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
        result
    }
}

/// Milliseconds since the Unix epoch, read once to anchor the engine's clock.
fn wall_clock_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The keepalive-jitter seed of a fresh data directory (a recovered one keeps its own).
fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return wall_clock_ms();
    }
    u64::from_le_bytes(bytes)
}

/// Notifications (`--notify`): the targets the engine creates notices for, and the sink
/// that posts them. The default: none.
#[derive(Default)]
pub struct NotifyWiring {
    /// The targets, in flag order (checked by `notify::check_targets`).
    pub targets: Vec<std::sync::Arc<str>>,
    /// Hands the engine's `Notify` effects to the poster.
    pub sink: Option<Box<dyn NotifySink>>,
    /// Counts the outbox's notices after each commit that changed one (`/health`).
    pub status: Option<std::sync::Arc<crate::notify::NotifyStatus>>,
}

/// Test only (hidden `serve` flags): engine timers shortened so that a test of the real
/// daemon sees in seconds what takes minutes (`tests/notify.rs`). `None`: the engine's own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestTimers {
    /// `--executor-absent-ms`: instead of `EXECUTOR_ABSENT_MS_MAX` (5 min).
    pub executor_absent_ms: Option<u64>,
    /// `--dead-man-after-ms`: the dead-man threshold of a run that turns the layer on
    /// without its own, instead of `DEADMAN_AFTER_MS_DEFAULT` (45 min).
    pub dead_man_after_ms: Option<u64>,
    /// `--lease-ttl-ms`: how long the Postgres lease lasts without renewal, instead of
    /// `store_pg::LEASE_TTL_MS_DEFAULT` (10 s).
    pub lease_ttl_ms: Option<u64>,
    /// `--lease-renew-ms`: how often the leader renews it, instead of
    /// `store_pg::LEASE_RENEW_MS_DEFAULT` (2 s).
    pub lease_renew_ms: Option<u64>,
    /// `--lease-poll-ms`: how often a standby reads it, instead of
    /// `store_pg::LEASE_POLL_MS_DEFAULT` (1 s).
    pub lease_poll_ms: Option<u64>,
}

impl TestTimers {
    fn apply(self, config: &mut EngineConfig) {
        if let Some(ms) = self.executor_absent_ms {
            config.executor_absent_ms = ms;
        }
        if let Some(ms) = self.dead_man_after_ms {
            config.dead_man.after_ms = Some(ms);
        }
    }
}

/// The history's retention (`--history-runs`, `--history-days`): finished runs past
/// either bound leave the dashboard's Finished, `status --all` and `run_list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryOptions {
    /// Finished runs shown at most.
    pub runs_max: usize,
    /// How long after it ended a finished run is shown, in milliseconds.
    pub kept_ms: u64,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            runs_max: engine::limits::HISTORY_RUNS_COUNT_DEFAULT,
            kept_ms: engine::limits::HISTORY_KEPT_MS_DEFAULT,
        }
    }
}
