//! The daemon side over axum: the `/executor` WebSocket endpoint and one connection's
//! loop.
//!
//! - `registry.rs`: [`Registry`] of live connections and [`BridgeSink`], the engine's
//!   executor sink that routes each command to the connection of the executor it names.
//! - `operator.rs`: the operator channel against the engine (actions, queries, the
//!   `operator.summary` push).
//! - `token.rs`: the executor token ([`resolve_token`], `DIR/executor-token`, written by
//!   [`save_token`] once the daemon listens).
//! - `hosts.rs`: the per-host tokens ([`HostBook`], `DIR/executor-hosts`).

mod hosts;
mod operator;
mod registry;
mod token;

pub use hosts::{HOSTS_FILE_NAME, HOSTS_MAX, HostBook, HostEntry, HostsError, valid_host};
pub use operator::SUMMARY_DEBOUNCE_MS;
pub use registry::{BridgeSink, REFUSED_HELLOS_MAX, RefusedHello, Registry};
pub use token::{TOKEN_FILE_NAME, TokenError, TokenSource, resolve_token, save_token};

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use executor_protocol::encode;
use executor_protocol::{DaemonMessage, GrantDesk, ProtocolError, ProtocolErrorCode};
use executor_protocol::{HELLO_MS_MAX, IDLE_MS_MAX, Session, SessionConfig};
use registry::Outgoing;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Commands buffered for one connection before it is considered stuck and closed (the
/// executor's next `hello` reconciles whatever was in flight).
pub const OUTGOING_QUEUED_MAX: usize = 1_024;
/// Protocol errors on one connection after the first of each code are counted and
/// logged as one line per this interval.
pub const ERROR_LOG_INTERVAL_MS: u64 = 10_000;
/// How often a connection on a per-host token checks that the host is still in the book,
/// at most (at its frames: a heartbeat every 20 s at the latest).
pub const HOST_RECHECK_MS: u64 = 1_000;
/// Characters of an offending frame quoted in its log line.
const EXCERPT_CHARS_MAX: usize = 120;

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
    /// Close connections that have not said `hello` this long after the upgrade.
    pub hello_ms_max: u64,
}

impl BridgeConfig {
    /// Defaults: loopback only, extension origins only, default limits.
    pub fn new(token: impl Into<String>) -> BridgeConfig {
        BridgeConfig {
            session: SessionConfig::new(token),
            allow_remote: false,
            origin_prefixes: ORIGIN_PREFIXES_DEFAULT.iter().map(|s| s.to_string()).collect(),
            idle_ms_max: IDLE_MS_MAX,
            hello_ms_max: HELLO_MS_MAX,
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

/// The endpoint's state.
#[derive(Clone, Debug)]
pub struct Bridge {
    config: Arc<BridgeConfig>,
    registry: Registry,
    handle: runtime::Handle,
    /// Turns true when the daemon stops: connections close with "going away" so that
    /// executors reconnect to the next daemon at once.
    stopping: Option<tokio::sync::watch::Receiver<bool>>,
    /// Refused upgrades, logged at most once per interval.
    refusals: Arc<Throttle>,
    /// The authorization server's operator side, when OAuth is on.
    grants: Option<Arc<dyn GrantDesk>>,
}

/// At most one log line per [`ERROR_LOG_INTERVAL_MS`] for a repeated event, with the
/// count of the occurrences that were not logged.
#[derive(Debug, Default)]
struct Throttle {
    /// When a line was last written, and how many occurrences went unlogged since.
    state: std::sync::Mutex<(Option<Instant>, u64)>,
}

impl Throttle {
    /// `Some(unlogged since the last line)` when this occurrence gets a line.
    fn admit(&self) -> Option<u64> {
        let now = Instant::now();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match state.0 {
            Some(at) if now.duration_since(at) < Duration::from_millis(ERROR_LOG_INTERVAL_MS) => {
                state.1 += 1;
                None
            }
            _ => {
                let unlogged = state.1;
                *state = (Some(now), 0);
                Some(unlogged)
            }
        }
    }
}

impl Bridge {
    /// An endpoint feeding `handle`, registering connections in `registry` (the one the
    /// engine's [`BridgeSink`] reads).
    pub fn new(config: BridgeConfig, registry: Registry, handle: runtime::Handle) -> Bridge {
        Bridge { config: Arc::new(config), registry, handle, stopping: None, refusals: Arc::default(), grants: None }
    }

    /// Serves the OAuth actions and query of the operator channel from `desk`.
    pub fn with_grants(mut self, desk: Arc<dyn GrantDesk>) -> Bridge {
        self.grants = Some(desk);
        self
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
    standing: Option<axum::Extension<edge::Standing>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let peer = peer.map(|axum::Extension(ConnectInfo(addr))| addr);
    let standing = standing.map(|axum::Extension(s)| s);
    if !bridge.config.peer_allowed(peer) {
        if let Some(unlogged) = bridge.refusals.admit() {
            tracing::warn!(
                ?peer,
                unlogged,
                "executor connection refused: not a loopback peer (one line per 10 s; `unlogged` refusals since the last)"
            );
        }
        return (StatusCode::FORBIDDEN, "executor connections are accepted from loopback only\n").into_response();
    }
    let origin = headers.get(header::ORIGIN).map(|o| o.to_str().unwrap_or(""));
    if !bridge.config.origin_allowed(origin) {
        if let Some(unlogged) = bridge.refusals.admit() {
            tracing::warn!(
                ?origin,
                unlogged,
                "executor connection refused: origin not allowed (one line per 10 s; `unlogged` refusals since the last)"
            );
        }
        return (StatusCode::FORBIDDEN, "this origin may not connect to the executor endpoint\n").into_response();
    }
    // The transport's own cap is above the session's, so that a frame slightly over the
    // cap still gets a `TOO_LARGE` answer before the close.
    let transport_max = bridge.config.session.message_bytes_max.saturating_mul(4);
    ws.max_message_size(transport_max)
        .max_frame_size(transport_max)
        .on_upgrade(move |socket| connection(socket, bridge, peer, standing))
}

/// One connection: frames in through the session into the engine, commands and replies out.
/// Its accepted `hello` establishes it at the edge (`standing`): until then it is a pending
/// connection the edge may shed for a newer one.
async fn connection(mut socket: WebSocket, bridge: Bridge, peer: Option<SocketAddr>, standing: Option<edge::Standing>) {
    let conn = bridge.registry.next_conn();
    let (tx, mut rx) = mpsc::channel::<Outgoing>(OUTGOING_QUEUED_MAX);
    let mut tx = Some(tx);
    let mut summaries: Option<tokio::task::JoinHandle<()>> = None;
    let mut session = Session::new(bridge.config.session.clone());
    let started = Instant::now();
    let mut stopping = bridge.stopping.clone();
    let idle = Duration::from_millis(bridge.config.idle_ms_max);
    let hello_by = tokio::time::Instant::now() + Duration::from_millis(bridge.config.hello_ms_max);
    let mut errors = ErrorLog::default();
    let mut checked_at = Instant::now();
    tracing::debug!(conn, ?peer, "executor connected");
    loop {
        // Before the hello, the hello deadline; after it, the silence limit.
        let wait = if session.executor().is_some() {
            idle
        } else {
            hello_by.saturating_duration_since(tokio::time::Instant::now()).min(idle)
        };
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
            () = tokio::time::sleep_until(errors.window.map_or_else(tokio::time::Instant::now, |(_, end)| end)), if errors.window.is_some() => {
                errors.flush(conn, session.executor());
                continue;
            }
            frame = tokio::time::timeout(wait, socket.recv()) => frame,
        };
        let text = match frame {
            Err(_) => {
                match session.executor() {
                    Some(executor) => tracing::info!(conn, %executor, "executor silent too long; closing"),
                    None => tracing::debug!(conn, ?peer, "no hello in time; closing"),
                }
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
        if let Some(protocol) = step.refused_protocol {
            let at_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
            bridge.registry.note_refused(RefusedHello { protocol, at_ms });
        }
        if let Some(executor) = &step.registered {
            if let Some(standing) = &standing {
                standing.establish();
            }
            // Registered before the hello reaches the engine, so the commands the engine
            // sends in answer find this connection. The registry holds the only strong
            // sender: when the sink drops a stuck connection, `rx` ends and so does this loop.
            if let Some(tx) = tx.take() {
                if session.wants_summaries() {
                    summaries = Some(tokio::spawn(operator::push_summaries(bridge.handle.clone(), tx.downgrade())));
                }
                let kinds = step
                    .inputs
                    .iter()
                    .find_map(|i| match i {
                        engine::ExecutorInput::Hello { kinds, .. } => Some(kinds.clone()),
                        _ => None,
                    })
                    .unwrap_or_default();
                if let Err(newer) = bridge.registry.register(executor.clone(), conn, kinds, step.epoch, tx) {
                    tracing::warn!(conn, %executor, epoch = ?step.epoch, newer, "executor refused: a later start of this executor id connected");
                    let refused = DaemonMessage::ProtocolError(ProtocolError {
                        code: ProtocolErrorCode::Superseded,
                        detail: format!(
                            "a later start of executor {executor} connected (epoch {newer} > {}): this process is the older one and must stop",
                            step.epoch.unwrap_or(0)
                        ),
                    });
                    let _ = socket.send(Message::Text(encode(&refused).into())).await;
                    let _ =
                        socket.send(Message::Close(Some(CloseFrame { code: 1008, reason: "superseded".into() }))).await;
                    break;
                }
            }
        }
        // A replaced connection's frames, or a removed host's, reach nothing.
        if let Some(executor) = session.executor()
            && step.registered.is_none()
        {
            let replaced = !bridge.registry.holds(executor, conn);
            let now = Instant::now();
            let recheck = now.duration_since(checked_at) >= Duration::from_millis(HOST_RECHECK_MS);
            if recheck {
                checked_at = now;
            }
            if replaced || (recheck && !session.still_authorized()) {
                let (code, detail) = if replaced {
                    (ProtocolErrorCode::Replaced, "another connection said hello with this executor id")
                } else {
                    (ProtocolErrorCode::Unauthorized, "this host's token was removed from the daemon's host book")
                };
                tracing::info!(conn, %executor, ?code, "executor connection cut off");
                let error = DaemonMessage::ProtocolError(ProtocolError { code, detail: detail.into() });
                let _ = socket.send(Message::Text(encode(&error).into())).await;
                let _ =
                    socket.send(Message::Close(Some(CloseFrame { code: 1008, reason: "protocol error".into() }))).await;
                break;
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
            let result = operator::perform(&bridge.handle, action_id, op).await;
            engine_gone |= unavailable(result.error.as_ref());
            tracing::info!(conn, executor = ?session.executor(), operation = name, ok = result.ok, "operator action");
            let text = encode(&DaemonMessage::OperatorResult(result));
            if socket.send(Message::Text(text.into())).await.is_err() {
                engine_gone = true;
            }
        }
        for (action_id, action) in step.grant_actions {
            if engine_gone {
                break;
            }
            let name = action.name();
            let result = match grant_refusal(peer) {
                None => operator::decide(bridge.grants.clone(), action_id, action).await,
                Some(refusal) => executor_protocol::OperatorResultWire::refused(action_id, refusal),
            };
            let code = result.error.as_ref().map(|e| e.code.clone());
            // The action's name and outcome only: request codes are not logged.
            tracing::info!(conn, executor = ?session.executor(), action = name, ok = result.ok, ?code, "operator OAuth action");
            let text = encode(&DaemonMessage::OperatorResult(result));
            if socket.send(Message::Text(text.into())).await.is_err() {
                engine_gone = true;
            }
        }
        for (query_id, query) in step.queries {
            if engine_gone {
                break;
            }
            let data = operator::answer(&bridge.handle, bridge.grants.as_deref(), query_id, query).await;
            engine_gone |= unavailable(data.error.as_ref());
            tracing::debug!(conn, executor = ?session.executor(), ?query, ok = data.ok, "operator query");
            let text = encode(&DaemonMessage::OperatorData(data));
            if socket.send(Message::Text(text.into())).await.is_err() {
                engine_gone = true;
            }
        }
        for reply in &step.replies {
            if let DaemonMessage::ProtocolError(e) = reply {
                errors.record(conn, peer, session.executor(), e, text.as_str());
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
    errors.flush(conn, session.executor());
    let still_current = session.executor().is_some_and(|e| bridge.registry.unregister(e, conn));
    if let Some(input) = session.on_close(still_current) {
        let _ = bridge.handle.executor(input).await;
    }
    tracing::debug!(conn, "executor connection ended");
}

/// One connection's protocol errors for the log: the first of each code in an interval
/// is logged in full, the rest are counted and summarized once the interval is over (or
/// the connection ends), so that a flood of 20,000 bad frames costs a few lines.
#[derive(Debug, Default)]
struct ErrorLog {
    /// Errors counted but not logged yet, by code, in order of first appearance.
    counted: Vec<(ProtocolErrorCode, u64)>,
    /// Codes already logged in full in this interval.
    logged: Vec<ProtocolErrorCode>,
    /// When the interval started and when it ends (set while it runs).
    window: Option<(tokio::time::Instant, tokio::time::Instant)>,
}

impl ErrorLog {
    fn record(
        &mut self,
        conn: u64,
        peer: Option<SocketAddr>,
        executor: Option<&engine::ids::ExecutorId>,
        error: &ProtocolError,
        frame: &str,
    ) {
        if self.window.is_none() {
            let now = tokio::time::Instant::now();
            self.window = Some((now, now + Duration::from_millis(ERROR_LOG_INTERVAL_MS)));
        }
        if !self.logged.contains(&error.code) {
            self.logged.push(error.code);
            let excerpt = excerpt(frame);
            tracing::warn!(conn, ?peer, executor = ?executor, code = ?error.code, detail = %error.detail, excerpt, "executor protocol error (more of this code in the next 10 s are counted, not logged)");
            return;
        }
        match self.counted.iter_mut().find(|(code, _)| *code == error.code) {
            Some((_, n)) => *n += 1,
            None => self.counted.push((error.code, 1)),
        }
    }

    /// Logs the counts of the interval that ended and starts afresh.
    fn flush(&mut self, conn: u64, executor: Option<&engine::ids::ExecutorId>) {
        let who = executor.map_or_else(|| format!("connection {conn}"), |e| format!("executor {e}"));
        let seconds = self.window.map_or(0.0, |(started, _)| started.elapsed().as_secs_f64());
        for (code, n) in self.counted.drain(..) {
            let code = serde_json::to_string(&code).unwrap_or_default();
            let code = code.trim_matches('"');
            tracing::warn!(
                conn,
                code,
                frames = n,
                "dropped {n} more {code} frames from {who} in the last {seconds:.1} s"
            );
        }
        self.logged.clear();
        self.window = None;
    }
}

/// What of an offending frame goes into a log line: its start, unless it holds a token
/// (a `hello` with a near-miss token must not leak it into the log).
fn excerpt(frame: &str) -> String {
    if frame.contains("token") {
        return format!("<{} bytes, not quoted: the frame mentions a token>", frame.len());
    }
    let mut excerpt: String = frame.chars().take(EXCERPT_CHARS_MAX).collect();
    if excerpt.len() < frame.len() {
        excerpt.push('…');
    }
    excerpt
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

/// Whether an operator answer says the engine has stopped.
/// Why an executor at `peer` may not decide an OAuth grant, or `None`: the operator decides
/// grants from the daemon's own machine only (issue 17: "the operator approves from the
/// loopback side"), even when remote executors are allowed.
fn grant_refusal(peer: Option<SocketAddr>) -> Option<caller_protocol::ErrorOut> {
    let local = peer.is_some_and(|p| p.ip().is_loopback() || is_mapped_loopback(p.ip()));
    (!local).then(|| {
        caller_protocol::ErrorOut::new(
            executor_protocol::oauth_codes::LOOPBACK_REQUIRED,
            "OAuth grants are decided only from a browser on the daemon's machine",
        )
    })
}

fn unavailable(error: Option<&caller_protocol::ErrorOut>) -> bool {
    error.is_some_and(|e| e.code == caller_protocol::codes::ENGINE_UNAVAILABLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_decided_from_loopback_only() {
        let at = |s: &str| Some(s.parse::<SocketAddr>().expect("address"));
        assert!(grant_refusal(at("127.0.0.1:50000")).is_none());
        assert!(grant_refusal(at("[::1]:50000")).is_none());
        assert!(grant_refusal(at("[::ffff:127.0.0.1]:50000")).is_none());
        for remote in [at("192.168.1.20:50000"), at("[2001:db8::1]:50000"), None] {
            let refusal = grant_refusal(remote).expect("refused");
            assert_eq!(refusal.code, executor_protocol::oauth_codes::LOOPBACK_REQUIRED);
        }
    }
}
