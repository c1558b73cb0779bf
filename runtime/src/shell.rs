//! The shell: one task that owns the engine, feeds it inputs and time, commits its
//! batches and only then releases its commands and replies.

use crate::clock::Clock;
use crate::store::Store;
use engine::ids::{CallId, Cursor};
use engine::notify::{Notice, NoticeId, NoticeOutcome};
use engine::op::{EventsPage, Operation, Reply};
use engine::{Batch, Effect, Engine, EngineConfig, ExecutorCommand, ExecutorInput, Input, RecoveryError, Rejection};
use std::collections::BTreeMap;
use std::future::Future;
use tokio::sync::{mpsc, oneshot, watch};

/// Where executor commands go: the bridge in the daemon, the simulated network in the
/// simulator. Sending never blocks the engine; delivery is the sink's business (and an
/// undelivered command is reconciled by the executor's next `hello`).
pub trait ExecutorSink {
    /// Hands a command to the executor it names.
    fn send(&mut self, command: ExecutorCommand);
}

/// Where notifications go: an HTTP poster in the daemon, a model receiver in the
/// simulator. Sending never blocks the engine; the sink answers each notice later with
/// [`Handle::notified`] (delivered, failed, refused), and an answer that never comes is
/// counted as a failure by the engine after `NOTIFY_SEND_MS_MAX`.
pub trait NotifySink: Send {
    /// Starts posting one notice.
    fn send(&mut self, notice: Notice);
}

/// A callback that sees the engine and the batches of every commit (the simulator's
/// checkers).
pub type CommitObserver = Box<dyn FnMut(&Engine, &[Batch])>;

/// One request to the shell.
#[derive(Debug)]
pub enum Request {
    /// A caller operation and where to send its reply.
    Call {
        /// The operation.
        op: Operation,
        /// Receives the result once everything before it is durable.
        reply: oneshot::Sender<Result<Reply, Rejection>>,
    },
    /// An executor report, already decoded and authenticated.
    Executor(ExecutorInput),
    /// What a notification's post came to.
    Notified {
        /// The notification.
        id: NoticeId,
        /// Delivered, failed or refused.
        outcome: NoticeOutcome,
    },
}

/// The shell has stopped (shutdown, or a store failure); the request was not handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellGone;

impl std::fmt::Display for ShellGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the orchestrator engine has stopped")
    }
}

impl std::error::Error for ShellGone {}

/// Why the shell stopped with an error.
#[derive(Debug)]
pub enum ShellError<E> {
    /// The store failed: it is poisoned; the process must exit and recover on restart.
    Store(E),
    /// The stored records could not be turned back into an engine.
    Recovery(RecoveryError),
}

impl<E: std::fmt::Display> std::fmt::Display for ShellError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShellError::Store(e) => {
                write!(f, "store failure (state on disk is intact up to the last acknowledged write): {e}")
            }
            ShellError::Recovery(e) => write!(f, "cannot recover the engine from the store: {e}"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for ShellError<E> {}

/// The caller side of the shell. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Handle {
    requests: mpsc::Sender<Request>,
    durable: watch::Receiver<Cursor>,
}

impl Handle {
    /// Runs an operation; the reply arrives once everything it changed is durable.
    pub async fn call(&self, op: Operation) -> Result<Result<Reply, Rejection>, ShellGone> {
        let (reply, rx) = oneshot::channel();
        self.requests.send(Request::Call { op, reply }).await.map_err(|_| ShellGone)?;
        rx.await.map_err(|_| ShellGone)
    }

    /// Delivers an executor report.
    pub async fn executor(&self, input: ExecutorInput) -> Result<(), ShellGone> {
        self.requests.send(Request::Executor(input)).await.map_err(|_| ShellGone)
    }

    /// Reports what a notification's post came to.
    pub async fn notified(&self, id: NoticeId, outcome: NoticeOutcome) -> Result<(), ShellGone> {
        self.requests.send(Request::Notified { id, outcome }).await.map_err(|_| ShellGone)
    }

    /// The cursor of the last durable event; changes wake `events_wait` long polls.
    pub fn durable_cursor(&self) -> watch::Receiver<Cursor> {
        self.durable.clone()
    }
}

/// Knobs of the shell.
#[derive(Clone, Debug)]
pub struct ShellConfig {
    /// The engine's configuration.
    pub engine: EngineConfig,
    /// Requests buffered before callers wait (backpressure).
    pub requests_queued_max: usize,
    /// Inputs handled before one group commit.
    pub group_commit_inputs_max: usize,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig { engine: EngineConfig::default(), requests_queued_max: 4_096, group_commit_inputs_max: 256 }
    }
}

/// Owns the engine and performs its effects.
pub struct Shell<S: Store, C: Clock, X: ExecutorSink> {
    engine: Engine,
    store: S,
    clock: C,
    executors: X,
    config: ShellConfig,
    requests: mpsc::Receiver<Request>,
    durable: watch::Sender<Cursor>,
    /// Callers waiting for replies, by the call id given to the engine.
    waiting: BTreeMap<CallId, oneshot::Sender<Result<Reply, Rejection>>>,
    next_call: u64,
    /// Sees the engine and every durable batch right after each commit (the simulator's
    /// checkers; `None` in the daemon).
    observer: Option<CommitObserver>,
    /// Posts notifications (`None`: no `--notify`; any notice handed out is left to the
    /// engine's overdue rule, and the engine creates none without targets).
    notifier: Option<Box<dyn NotifySink>>,
}

impl<S: Store, C: Clock, X: ExecutorSink> Shell<S, C, X> {
    /// Loads the store, recovers the engine and returns the shell and its handle.
    pub fn open(
        mut store: S,
        clock: C,
        executors: X,
        config: ShellConfig,
    ) -> Result<(Self, Handle), ShellError<S::Error>> {
        let records = store.load().map_err(ShellError::Store)?;
        let engine = Engine::recover(config.engine.clone(), records).map_err(ShellError::Recovery)?;
        let (tx, rx) = mpsc::channel(config.requests_queued_max);
        let (durable_tx, durable_rx) = watch::channel(engine.last_cursor());
        let shell = Shell {
            engine,
            store,
            clock,
            executors,
            config,
            requests: rx,
            durable: durable_tx,
            waiting: BTreeMap::new(),
            next_call: 1,
            observer: None,
            notifier: None,
        };
        Ok((shell, Handle { requests: tx, durable: durable_rx }))
    }

    /// The engine, for read-only inspection by the simulator's checkers.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Installs a callback that sees the engine and the batches of every commit, after
    /// they are durable and before their effects are released.
    pub fn observe(&mut self, observer: CommitObserver) {
        self.observer = Some(observer);
    }

    /// Installs the sink that posts notifications.
    pub fn notify_with(&mut self, notifier: Box<dyn NotifySink>) {
        self.notifier = Some(notifier);
    }

    /// Runs until `shutdown` completes or every handle is dropped, then finishes the
    /// work in hand (commit and release) and returns. A store failure stops at once.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) -> Result<(), ShellError<S::Error>> {
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let deadline = self.engine.next_deadline();
            let sleep = async {
                match deadline {
                    Some(at) => self.clock.sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let first = tokio::select! {
                biased;
                () = &mut shutdown => break,
                request = self.requests.recv() => match request {
                    Some(request) => Some(request),
                    None => break,
                },
                () = sleep => None,
            };
            if let Some(request) = first {
                self.accept(request);
            }
            let mut handled = 1;
            while handled < self.config.group_commit_inputs_max {
                match self.requests.try_recv() {
                    Ok(request) => self.accept(request),
                    Err(_) => break,
                }
                handled += 1;
            }
            self.tick_due();
            self.flush()?;
        }
        self.flush()
    }

    /// Feeds every due deadline.
    fn tick_due(&mut self) {
        while self.engine.next_deadline().is_some_and(|at| at <= self.clock.now()) {
            self.engine.handle(self.clock.now(), Input::Tick);
        }
    }

    /// Hands one request to the engine.
    fn accept(&mut self, request: Request) {
        let now = self.clock.now();
        match request {
            Request::Call { op, reply } => {
                if let Some(page) = self.older_events(&op) {
                    let _ = reply.send(page);
                    return;
                }
                let call = CallId(self.next_call);
                self.next_call += 1;
                self.waiting.insert(call, reply);
                self.engine.handle(now, Input::Call { call, op });
            }
            Request::Executor(input) => self.engine.handle(now, Input::Executor(input)),
            Request::Notified { id, outcome } => self.engine.handle(now, Input::Notified { id, outcome }),
        }
    }

    /// Serves `events_after` for cursors older than the engine's retained window from
    /// the store (the engine keeps only recent events in memory).
    fn older_events(&self, op: &Operation) -> Option<Result<Reply, Rejection>> {
        let Operation::EventsAfter { cursor, run, worker, limit } = op else { return None };
        let retained_from = self.engine.recent_events().next().map(|e| e.cursor)?;
        if cursor.0 + 1 >= retained_from.0 || *limit == 0 {
            return None;
        }
        let scanned = self.store.events_after(*cursor, (*limit).min(engine::limits::EVENTS_PAGE_COUNT_MAX)).ok()?;
        let next_cursor = scanned.last().map_or(*cursor, |e| e.cursor);
        let events = scanned
            .into_iter()
            .filter(|e| run.is_none_or(|r| r == e.run) && worker.is_none_or(|w| Some(w) == e.worker))
            .collect();
        let retained_after = Cursor(retained_from.0 - 1);
        Some(Ok(Reply::Events(EventsPage { events, next_cursor, retained_after })))
    }

    /// Commits every pending batch in one durable write, then releases commands and
    /// replies in order.
    fn flush(&mut self) -> Result<(), ShellError<S::Error>> {
        let mut batches = Vec::new();
        let mut release = Vec::new();
        while let Some(effect) = self.engine.poll_effect() {
            match effect {
                Effect::Persist(batch) => batches.push(batch),
                other => release.push(other),
            }
        }
        if !batches.is_empty() {
            self.store.commit(&batches).map_err(ShellError::Store)?;
            let _ = self.durable.send(self.engine.last_cursor());
            if let Some(observer) = &mut self.observer {
                observer(&self.engine, &batches);
            }
        }
        for effect in release {
            match effect {
                Effect::Command(command) => self.executors.send(command),
                Effect::Notify(notice) => {
                    if let Some(notifier) = &mut self.notifier {
                        notifier.send(notice);
                    }
                }
                Effect::Reply { call, result } => {
                    if let Some(reply) = self.waiting.remove(&call) {
                        let _ = reply.send(result);
                    }
                }
                Effect::Persist(_) => unreachable!("batches were separated above"),
            }
        }
        Ok(())
    }
}
