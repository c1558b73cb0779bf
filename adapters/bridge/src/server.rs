//! The daemon side over axum: the `/executor` WebSocket endpoint, the registry of live
//! connections and [`BridgeSink`], the engine's executor sink that routes each command
//! to the connection of the executor it names.

use crate::encode;
use crate::protocol::{
    CommandWire, DaemonMessage, OperatorResultWire, OperatorSummaryWire, ProtocolError, ProtocolErrorCode, RunSummary,
};
use crate::session::{Session, SessionConfig};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use engine::ExecutorCommand;
use engine::ids::ExecutorId;
use engine::op::Operation;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Commands buffered for one connection before it is considered stuck and closed (the
/// executor's next `hello` reconciles whatever was in flight).
pub const OUTGOING_QUEUED_MAX: usize = 1_024;
/// A connection that sends nothing for this long is closed (a silent power loss).
pub const IDLE_MS_MAX: u64 = 60_000;

/// Origins allowed by default: browser extensions only.
pub const ORIGIN_PREFIXES_DEFAULT: [&str; 2] = ["chrome-extension://", "moz-extension://"];

/// How the endpoint is guarded.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    /// Limits and the token.
    pub session: SessionConfig,
    /// Accept peers that are not on loopback.
    pub allow_remote: bool,
    /// Accepted `Origin` prefixes (requests without an `Origin` are accepted).
    pub origin_prefixes: Vec<String>,
    /// Close connections silent for this long.
    pub idle_ms_max: u64,
}

impl BridgeConfig {
    /// Defaults: loopback only, extension origins only, default limits.
    pub fn new(token: impl Into<String>) -> BridgeConfig {
        BridgeConfig {
            session: SessionConfig::new(token),
            allow_remote: false,
            origin_prefixes: ORIGIN_PREFIXES_DEFAULT.iter().map(|s| s.to_string()).collect(),
            idle_ms_max: IDLE_MS_MAX,
        }
    }

    /// Whether a connection from `peer` is accepted: loopback only unless `allow_remote`
    /// (an unknown peer is refused).
    pub fn peer_allowed(&self, peer: Option<SocketAddr>) -> bool {
        self.allow_remote || peer.is_some_and(|p| p.ip().is_loopback() || is_mapped_loopback(p.ip()))
    }

    /// Whether an upgrade with this `Origin` header is accepted: none (not a browser
    /// page), or one starting with an allowed prefix (an extension).
    pub fn origin_allowed(&self, origin: Option<&str>) -> bool {
        origin.is_none_or(|o| self.origin_prefixes.iter().any(|p| o.starts_with(p.as_str())))
    }
}

/// `::ffff:127.0.0.1` from a dual-stack socket.
fn is_mapped_loopback(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        std::net::IpAddr::V4(_) => false,
    }
}

/// What goes to a connection's writer.
#[derive(Debug)]
enum Outgoing {
    /// A text frame.
    Text(String),
    /// Another connection took over this executor id: say so and close.
    Replaced,
}

/// One live connection in the registry.
#[derive(Debug)]
struct Live {
    /// Distinguishes a connection from the one that replaced it.
    conn: u64,
    /// The connection's writer.
    tx: mpsc::Sender<Outgoing>,
}

/// The live connections by executor id. Shared by the sink and the connections.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    live: Arc<Mutex<BTreeMap<ExecutorId, Live>>>,
    next_conn: Arc<AtomicU64>,
}

impl Registry {
    /// The executors connected now (after their `hello`).
    pub fn connected(&self) -> Vec<ExecutorId> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<ExecutorId, Live>> {
        // A panic while holding this lock cannot leave the map half-updated (every
        // update is one insert or remove), so a poisoned lock is still usable.
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `conn` for `executor`; an older connection is told it was replaced.
    fn register(&self, executor: ExecutorId, conn: u64, tx: mpsc::Sender<Outgoing>) {
        if let Some(old) = self.lock().insert(executor.clone(), Live { conn, tx }) {
            tracing::info!(%executor, "a new connection replaces the executor's previous one");
            let _ = old.tx.try_send(Outgoing::Replaced);
        }
    }

    /// Removes `conn`'s registration; false when another connection holds the id now.
    fn unregister(&self, executor: &ExecutorId, conn: u64) -> bool {
        let mut live = self.lock();
        match live.get(executor) {
            Some(l) if l.conn == conn => {
                live.remove(executor);
                true
            }
            _ => false,
        }
    }
}

/// The engine's executor sink in the daemon: each command goes to the connection of the
/// executor it names, or is dropped when that executor is not connected (the engine
/// re-sends it after the executor's next `hello`).
#[derive(Clone, Debug, Default)]
pub struct BridgeSink {
    registry: Registry,
}

impl BridgeSink {
    /// A sink over `registry`.
    pub fn new(registry: Registry) -> BridgeSink {
        BridgeSink { registry }
    }
}

impl runtime::ExecutorSink for BridgeSink {
    fn send(&mut self, command: ExecutorCommand) {
        let text = encode(&DaemonMessage::Command(CommandWire::from(&command)));
        let mut live = self.registry.lock();
        let Some(l) = live.get(&command.executor) else {
            tracing::debug!(command = %command.id, executor = %command.executor, "executor not connected; the engine re-sends after its hello");
            return;
        };
        if let Err(e) = l.tx.try_send(Outgoing::Text(text)) {
            // A full queue means the executor stopped reading: drop the connection, so
            // that its next hello reconciles instead of commands silently going missing.
            tracing::warn!(executor = %command.executor, error = %e, "executor connection stuck; closing it");
            live.remove(&command.executor);
        }
    }
}

/// The endpoint's state.
#[derive(Clone, Debug)]
pub struct Bridge {
    config: Arc<BridgeConfig>,
    registry: Registry,
    handle: runtime::Handle,
    /// Turns true when the daemon stops: connections close with "going away" so that
    /// executors reconnect to the next daemon at once.
    stopping: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Bridge {
    /// An endpoint feeding `handle`, registering connections in `registry` (the one the
    /// engine's [`BridgeSink`] reads).
    pub fn new(config: BridgeConfig, registry: Registry, handle: runtime::Handle) -> Bridge {
        Bridge { config: Arc::new(config), registry, handle, stopping: None }
    }

    /// Closes every connection when `stopping` turns true.
    pub fn with_stopping(mut self, stopping: tokio::sync::watch::Receiver<bool>) -> Bridge {
        self.stopping = Some(stopping);
        self
    }

    /// The `/executor` route. Serve it with `into_make_service_with_connect_info::<SocketAddr>()`
    /// so that the peer check sees the peer's address (without it, only `allow_remote`
    /// endpoints accept connections).
    pub fn router(self) -> axum::Router {
        axum::Router::new().route("/executor", axum::routing::get(upgrade)).with_state(self)
    }
}

async fn upgrade(
    State(bridge): State<Bridge>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let peer = peer.map(|axum::Extension(ConnectInfo(addr))| addr);
    if !bridge.config.peer_allowed(peer) {
        tracing::warn!(?peer, "executor connection refused: not a loopback peer");
        return (StatusCode::FORBIDDEN, "executor connections are accepted from loopback only\n").into_response();
    }
    let origin = headers.get(header::ORIGIN).map(|o| o.to_str().unwrap_or(""));
    if !bridge.config.origin_allowed(origin) {
        tracing::warn!(?origin, "executor connection refused: origin not allowed");
        return (StatusCode::FORBIDDEN, "this origin may not connect to the executor endpoint\n").into_response();
    }
    // The transport's own cap is above the session's, so that a frame slightly over the
    // cap still gets a `TOO_LARGE` answer before the close.
    let transport_max = bridge.config.session.message_bytes_max.saturating_mul(4);
    ws.max_message_size(transport_max)
        .max_frame_size(transport_max)
        .on_upgrade(move |socket| connection(socket, bridge, peer))
}

/// One connection: frames in through the session into the engine, commands and replies out.
async fn connection(mut socket: WebSocket, bridge: Bridge, peer: Option<SocketAddr>) {
    let conn = bridge.registry.next_conn.fetch_add(1, Ordering::Relaxed);
    let (tx, mut rx) = mpsc::channel::<Outgoing>(OUTGOING_QUEUED_MAX);
    let mut tx = Some(tx);
    let mut summaries: Option<tokio::task::JoinHandle<()>> = None;
    let mut session = Session::new(bridge.config.session.clone());
    let started = Instant::now();
    let mut stopping = bridge.stopping.clone();
    let idle = Duration::from_millis(bridge.config.idle_ms_max);
    tracing::debug!(conn, ?peer, "executor connected");
    loop {
        let frame = tokio::select! {
            biased;
            () = stopped(&mut stopping) => {
                let going = CloseFrame { code: 1001, reason: "the daemon is stopping".into() };
                let _ = socket.send(Message::Close(Some(going))).await;
                break;
            }
            out = rx.recv() => {
                match out {
                    Some(Outgoing::Text(text)) => {
                        if socket.send(Message::Text(text.into())).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Some(Outgoing::Replaced) => {
                        let replaced = DaemonMessage::ProtocolError(ProtocolError {
                            code: ProtocolErrorCode::Replaced,
                            detail: "another connection said hello with this executor id".into(),
                        });
                        let _ = socket.send(Message::Text(encode(&replaced).into())).await;
                        break;
                    }
                    // Dropped from the registry (stuck, or replaced): close. (Before the
                    // hello this connection holds the sender, so `rx` cannot end.)
                    None => break,
                }
            }
            frame = tokio::time::timeout(idle, socket.recv()) => frame,
        };
        let text = match frame {
            Err(_) => {
                tracing::info!(conn, executor = ?session.executor(), "executor silent too long; closing");
                break;
            }
            Ok(None) | Ok(Some(Err(_))) | Ok(Some(Ok(Message::Close(_)))) => break,
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            Ok(Some(Ok(Message::Text(text)))) => text,
            // Binary frames are not part of the protocol: decoded as the malformed
            // text they are (closing before a hello, reported after one).
            Ok(Some(Ok(Message::Binary(_)))) => "<binary frame>".into(),
        };
        let step = session.on_text(text.as_str(), started.elapsed().as_millis() as u64);
        if let Some(executor) = &step.registered {
            // Registered before the hello reaches the engine, so the commands the engine
            // sends in answer find this connection. The registry holds the only strong
            // sender: when the sink drops a stuck connection, `rx` ends and so does this loop.
            if let Some(tx) = tx.take() {
                if session.wants_summaries() {
                    summaries = Some(tokio::spawn(push_summaries(bridge.handle.clone(), tx.downgrade())));
                }
                bridge.registry.register(executor.clone(), conn, tx);
            }
        }
        let mut engine_gone = false;
        for input in step.inputs {
            if bridge.handle.executor(input).await.is_err() {
                engine_gone = true;
                break;
            }
        }
        for (action_id, op) in step.operations {
            if engine_gone {
                break;
            }
            let name = op.tool_name();
            let result = match bridge.handle.call(op).await {
                Ok(Ok(_)) => OperatorResultWire { action_id, ok: true, error: None },
                Ok(Err(rejection)) => OperatorResultWire { action_id, ok: false, error: Some(rejection.into()) },
                Err(_) => {
                    engine_gone = true;
                    let error = wire::ErrorOut::new(wire::codes::ENGINE_UNAVAILABLE, "the engine has stopped");
                    OperatorResultWire { action_id, ok: false, error: Some(error) }
                }
            };
            tracing::info!(conn, executor = ?session.executor(), operation = name, ok = result.ok, "operator action");
            let text = encode(&DaemonMessage::OperatorResult(result));
            if socket.send(Message::Text(text.into())).await.is_err() {
                engine_gone = true;
            }
        }
        for reply in &step.replies {
            if let DaemonMessage::ProtocolError(e) = reply {
                let excerpt: String = text.chars().take(120).collect();
                tracing::warn!(conn, ?peer, executor = ?session.executor(), code = ?e.code, detail = %e.detail, excerpt, "executor protocol error");
            }
            if socket.send(Message::Text(encode(reply).into())).await.is_err() {
                engine_gone = true;
            }
        }
        if step.close || engine_gone {
            let _ = socket.send(Message::Close(Some(CloseFrame { code: 1008, reason: "protocol error".into() }))).await;
            break;
        }
    }
    if let Some(task) = summaries {
        task.abort();
    }
    let still_current = session.executor().is_some_and(|e| bridge.registry.unregister(e, conn));
    if let Some(input) = session.on_close(still_current) {
        let _ = bridge.handle.executor(input).await;
    }
    tracing::debug!(conn, "executor connection ended");
}

/// Completes once `stopping` is true (never without a receiver, or once its sender is gone
/// without having said so).
async fn stopped(stopping: &mut Option<tokio::sync::watch::Receiver<bool>>) {
    match stopping {
        Some(rx) => {
            if rx.wait_for(|s| *s).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending::<()>().await,
    }
}

/// Waits this long after a durable change before recomputing the summary, so that a
/// burst of commits costs one summary.
pub const SUMMARY_DEBOUNCE_MS: u64 = 100;

/// Pushes `operator.summary` to one connection: now, then after every durable change
/// that alters it. Ends with the connection or the engine.
async fn push_summaries(handle: runtime::Handle, tx: mpsc::WeakSender<Outgoing>) {
    let mut durable = handle.durable_cursor();
    let mut last: Option<OperatorSummaryWire> = None;
    loop {
        durable.borrow_and_update();
        let Some(summary) = summary(&handle).await else { return };
        if last.as_ref() != Some(&summary) {
            let Some(tx) = tx.upgrade() else { return };
            let text = encode(&DaemonMessage::OperatorSummary(summary.clone()));
            if tx.send(Outgoing::Text(text)).await.is_err() {
                return;
            }
            last = Some(summary);
        }
        if durable.changed().await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(SUMMARY_DEBOUNCE_MS)).await;
    }
}

/// Every unfinished run with its workers, through the same read operations (and JSON
/// shapes) as the MCP tools. `None` when the engine is gone.
async fn summary(handle: &runtime::Handle) -> Option<OperatorSummaryWire> {
    use wire::FromReply;
    let Ok(Ok(reply)) = handle.call(Operation::RunList { include_terminal: false }).await else { return None };
    let runs = wire::RunListOut::from_reply(reply).ok()?.runs;
    let mut out = Vec::with_capacity(runs.len());
    for run in &runs {
        let id = run.run_id.parse().ok()?;
        let Ok(Ok(reply)) = handle.call(Operation::WorkerList { run: id, include_terminal: true }).await else {
            return None;
        };
        let workers = wire::WorkerListOut::from_reply(reply).ok()?.workers;
        out.push(RunSummary::new(run, &workers));
    }
    Some(OperatorSummaryWire { runs: out })
}

/// The executor token file in the data directory.
pub const TOKEN_FILE_NAME: &str = "executor-token";

/// Where the executor token came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// Given by flag or environment.
    Given,
    /// Read from the file.
    File(std::path::PathBuf),
    /// Generated now and written to the file.
    Generated(std::path::PathBuf),
}

/// Why the executor token could not be had.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Too short, or not printable ASCII.
    #[error("the executor token must be at least 16 printable ASCII characters without spaces")]
    Invalid,
    /// The file could not be read or written.
    #[error("executor token file {path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The OS random source failed.
    #[error("the OS random source failed: {0}")]
    Random(String),
}

fn valid_token(token: &str) -> bool {
    token.len() >= 16 && token.bytes().all(|b| b.is_ascii_graphic())
}

/// The given token, else `DIR/executor-token`, else a fresh one (32 random bytes, hex)
/// written there with mode 0600.
pub fn resolve_token(given: Option<&str>, data_dir: &std::path::Path) -> Result<(String, TokenSource), TokenError> {
    if let Some(token) = given {
        return if valid_token(token) { Ok((token.to_string(), TokenSource::Given)) } else { Err(TokenError::Invalid) };
    }
    let path = data_dir.join(TOKEN_FILE_NAME);
    let io = |source| TokenError::Io { path: path.clone(), source };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let token = text.trim().to_string();
            if !valid_token(&token) {
                return Err(TokenError::Invalid);
            }
            Ok((token, TokenSource::File(path)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
            let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            use std::io::Write;
            let mut file = options.open(&path).map_err(io)?;
            file.write_all(format!("{token}\n").as_bytes()).map_err(io)?;
            file.sync_all().map_err(io)?;
            Ok((token, TokenSource::Generated(path)))
        }
        Err(e) => Err(io(e)),
    }
}
