//! The daemon's network edge: the accept loop and every connection's limits, for every
//! route on the listener (`/mcp`, `/executor`, and whatever is mounted next to them).
//!
//! - Admission: at most [`EdgeLimits::connections_max`] connections at once and
//!   [`EdgeLimits::connections_per_ip_max`] from one remote address; past either, the
//!   connection gets a short `503` and is closed (counted, and logged once per
//!   [`LOG_SUMMARY_INTERVAL_MS`]).
//! - Header read timeout (hyper's): a connection waiting for a request, a fresh one or an
//!   idle keep-alive one, must deliver that request's headers within
//!   [`EdgeLimits::header_read_timeout_ms`].
//! - Idle timeout ([`EdgeIo`]): a connection on which no byte moves in either direction
//!   for [`EdgeLimits::idle_timeout_ms`] is closed, except while a request is being
//!   answered ([`Activity::answering`]: a long poll holds its request legitimately).
//!   After a WebSocket upgrade the same rule holds on the upgraded socket.
//! - Bodies: [`read_body`] reads a request body whole, within a deadline and a cap, and
//!   turns what breaks its own framing into a 400 instead of a 500 downstream.

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Default of [`EdgeLimits::header_read_timeout_ms`].
pub const HEADER_READ_TIMEOUT_MS_DEFAULT: u64 = 10_000;
/// Default of [`EdgeLimits::idle_timeout_ms`]: three times the executor heartbeat (20 s),
/// and the bridge's own silence limit, so that a live executor is never cut.
pub const IDLE_TIMEOUT_MS_DEFAULT: u64 = 60_000;
/// Default of [`EdgeLimits::body_read_timeout_ms`].
pub const BODY_READ_TIMEOUT_MS_DEFAULT: u64 = 30_000;
/// Default of [`EdgeLimits::connections_max`]: below the usual 1,024 open-file limit,
/// with room for the store's files.
pub const CONNECTIONS_MAX_DEFAULT: usize = 512;
/// Default of [`EdgeLimits::connections_per_ip_max`]. Every local client shares
/// 127.0.0.1, so on loopback this is a second, lower total cap.
pub const CONNECTIONS_PER_IP_MAX_DEFAULT: usize = 256;
/// Repeated events at the edge (refusals, timeouts) are logged once per interval.
pub const LOG_SUMMARY_INTERVAL_MS: u64 = 10_000;
/// A refused connection is read from (and its bytes discarded) at most this long after
/// the 503, so that closing it does not reset the connection before the client read
/// the answer.
const REFUSAL_LINGER_MS: u64 = 1_000;
/// At most this many refused connections linger at once; past it they are dropped
/// without an answer.
const REFUSALS_LINGERING_MAX: usize = 64;
/// Bytes of a refused connection's request read (and discarded) before closing it.
const REFUSAL_DRAIN_BYTES_MAX: usize = 64 * 1024;
/// The whole answer to a refused connection.
const REFUSAL_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
content-length: 40\r\nretry-after: 1\r\nconnection: close\r\n\r\ntoo many connections; try again shortly\n";
/// Pause after a failed `accept` (out of file descriptors, mostly) before the next one.
const ACCEPT_ERROR_BACKOFF_MS: u64 = 100;

/// The edge's limits (`orchestrator serve --help` documents each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeLimits {
    /// A request's headers must arrive within this long of the connection waiting for it.
    pub header_read_timeout_ms: u64,
    /// A connection with no byte in either direction for this long, and no request being
    /// answered, is closed.
    pub idle_timeout_ms: u64,
    /// A request body must arrive whole within this long of its headers.
    pub body_read_timeout_ms: u64,
    /// Connections open at once, all peers together.
    pub connections_max: usize,
    /// Connections open at once from one remote IP address.
    pub connections_per_ip_max: usize,
}

impl Default for EdgeLimits {
    fn default() -> EdgeLimits {
        EdgeLimits {
            header_read_timeout_ms: HEADER_READ_TIMEOUT_MS_DEFAULT,
            idle_timeout_ms: IDLE_TIMEOUT_MS_DEFAULT,
            body_read_timeout_ms: BODY_READ_TIMEOUT_MS_DEFAULT,
            connections_max: CONNECTIONS_MAX_DEFAULT,
            connections_per_ip_max: CONNECTIONS_PER_IP_MAX_DEFAULT,
        }
    }
}

/// Why a limit value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// A timeout or a cap of zero would refuse everything.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// The per-IP cap is above the total cap.
    #[error("--connections-per-ip-max ({per_ip}) is above --connections-max ({total})")]
    PerIpAboveTotal {
        /// The per-IP cap.
        per_ip: usize,
        /// The total cap.
        total: usize,
    },
}

impl LimitsError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            LimitsError::Zero(_) => "LIMIT_ZERO",
            LimitsError::PerIpAboveTotal { .. } => "LIMIT_PER_IP_ABOVE_TOTAL",
        }
    }
}

impl EdgeLimits {
    /// Checks that the limits can work together.
    pub fn validate(&self) -> Result<(), LimitsError> {
        let named = [
            ("--header-read-timeout-ms", self.header_read_timeout_ms as usize),
            ("--idle-timeout-ms", self.idle_timeout_ms as usize),
            ("--body-read-timeout-ms", self.body_read_timeout_ms as usize),
            ("--connections-max", self.connections_max),
            ("--connections-per-ip-max", self.connections_per_ip_max),
        ];
        if let Some((name, _)) = named.iter().find(|(_, v)| *v == 0) {
            return Err(LimitsError::Zero(name));
        }
        if self.connections_per_ip_max > self.connections_max {
            return Err(LimitsError::PerIpAboveTotal {
                per_ip: self.connections_per_ip_max,
                total: self.connections_max,
            });
        }
        Ok(())
    }
}

/// What moves on one connection: when a byte last did, and how many requests are being
/// answered. Shared by the connection's [`EdgeIo`] and its requests (as an extension).
#[derive(Debug)]
pub struct Activity {
    /// Time origin of `last_ms`.
    base: Instant,
    /// When a byte last moved, in milliseconds after `base`.
    last_ms: AtomicU64,
    /// Requests whose answer is being worked on.
    answering: AtomicUsize,
}

impl Activity {
    fn new() -> Arc<Activity> {
        Arc::new(Activity { base: Instant::now(), last_ms: AtomicU64::new(0), answering: AtomicUsize::new(0) })
    }

    fn touch(&self) {
        let now = self.base.elapsed().as_millis() as u64;
        self.last_ms.fetch_max(now, Ordering::Relaxed);
    }

    /// Marks a request as being answered until the guard is dropped: the idle timeout
    /// does not run meanwhile (the client is waiting on us, not the other way round).
    pub fn answering(self: &Arc<Activity>) -> Answering {
        self.answering.fetch_add(1, Ordering::AcqRel);
        Answering(self.clone())
    }

    /// When the connection becomes idle past `idle`, unless a byte moves first.
    fn idle_deadline(&self, idle: Duration) -> Instant {
        self.base + Duration::from_millis(self.last_ms.load(Ordering::Relaxed)) + idle
    }
}

/// A request being answered ([`Activity::answering`]).
#[derive(Debug)]
pub struct Answering(Arc<Activity>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.touch();
        let before = self.0.answering.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(before > 0, "one answering mark dropped twice");
    }
}

/// Marks `request` as being answered, when it came through the edge.
pub fn answering(request: &Request) -> Option<Answering> {
    request.extensions().get::<Arc<Activity>>().map(|a| a.answering())
}

/// The right to be open: a place under the total cap and one under the peer's cap.
/// Travels with the socket, through a WebSocket upgrade, until it is dropped.
#[derive(Debug)]
struct Admission {
    _total: OwnedSemaphorePermit,
    ip: IpAddr,
    gate: Arc<Gate>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut per_ip = self.gate.per_ip.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                per_ip.remove(&self.ip);
            }
        }
    }
}

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    Total,
    PerIp,
}

/// The connection caps.
#[derive(Debug)]
struct Gate {
    total: Arc<Semaphore>,
    total_max: usize,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
    per_ip_max: usize,
}

impl Gate {
    fn admit(self: &Arc<Gate>, ip: IpAddr) -> Result<Admission, Refusal> {
        let mut per_ip = self.per_ip.lock().unwrap_or_else(|p| p.into_inner());
        let n = per_ip.get(&ip).copied().unwrap_or(0);
        if n >= self.per_ip_max {
            return Err(Refusal::PerIp);
        }
        let total = self.total.clone().try_acquire_owned().map_err(|_| Refusal::Total)?;
        per_ip.insert(ip, n + 1);
        Ok(Admission { _total: total, ip, gate: self.clone() })
    }

    /// Completes once every admitted connection is gone.
    async fn drained(&self) {
        let _ = self.total.acquire_many(self.total_max as u32).await;
    }
}

/// A connection's socket with the idle timeout: reads and writes that wait past
/// [`EdgeLimits::idle_timeout_ms`] with no byte moved and no request being answered fail
/// with `TimedOut`, which ends the connection (or the WebSocket on it).
#[derive(Debug)]
pub struct EdgeIo<T> {
    inner: T,
    activity: Arc<Activity>,
    idle: Duration,
    read_sleep: Pin<Box<Sleep>>,
    write_sleep: Pin<Box<Sleep>>,
    _admission: Option<Admission>,
}

impl<T> EdgeIo<T> {
    fn new(inner: T, activity: Arc<Activity>, idle: Duration, admission: Option<Admission>) -> EdgeIo<T> {
        let deadline = activity.idle_deadline(idle);
        EdgeIo {
            inner,
            activity,
            idle,
            read_sleep: Box::pin(tokio::time::sleep_until(deadline)),
            write_sleep: Box::pin(tokio::time::sleep_until(deadline)),
            _admission: admission,
        }
    }
}

/// `Ready(Err(TimedOut))` once the connection has been idle too long; otherwise arms
/// `sleep` for the moment it would be and returns `Pending`.
fn poll_idle(
    activity: &Activity,
    idle: Duration,
    sleep: &mut Pin<Box<Sleep>>,
    cx: &mut Context<'_>,
) -> Poll<io::Error> {
    loop {
        let now = Instant::now();
        let deadline = if activity.answering.load(Ordering::Acquire) > 0 {
            now + idle
        } else {
            let deadline = activity.idle_deadline(idle);
            if deadline <= now {
                return Poll::Ready(io::Error::new(io::ErrorKind::TimedOut, IdleTimeout));
            }
            deadline
        };
        if sleep.deadline() != deadline {
            sleep.as_mut().reset(deadline);
        }
        ready!(sleep.as_mut().poll(cx));
    }
}

/// The error inside the `TimedOut` of an idle connection, to tell it from others.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("no byte in either direction for the idle timeout")]
pub struct IdleTimeout;

impl<T: AsyncRead + Unpin> AsyncRead for EdgeIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    this.activity.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => poll_idle(&this.activity, this.idle, &mut this.read_sleep, cx).map(Err),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for EdgeIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(result) => {
                if result.as_ref().is_ok_and(|n| *n > 0) {
                    this.activity.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => poll_idle(&this.activity, this.idle, &mut this.write_sleep, cx).map(Err),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(result) => {
                if result.as_ref().is_ok_and(|n| *n > 0) {
                    this.activity.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => poll_idle(&this.activity, this.idle, &mut this.write_sleep, cx).map(Err),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Counts of what happened at the edge since the last summary line.
#[derive(Debug, Default)]
struct Tally {
    refused_total: AtomicU64,
    refused_per_ip: AtomicU64,
    refused_unanswered: AtomicU64,
    header_timeouts: AtomicU64,
    idle_timeouts: AtomicU64,
    accept_errors: AtomicU64,
}

impl Tally {
    /// Logs what happened since the last call (nothing when nothing did).
    fn summarize(&self, limits: &EdgeLimits, interval_ms: u64) {
        let take = |c: &AtomicU64| c.swap(0, Ordering::Relaxed);
        let (total, per_ip, unanswered) =
            (take(&self.refused_total), take(&self.refused_per_ip), take(&self.refused_unanswered));
        if total + per_ip > 0 {
            tracing::warn!(
                over_connections_max = total,
                over_connections_per_ip_max = per_ip,
                closed_without_answer = unanswered,
                connections_max = limits.connections_max,
                connections_per_ip_max = limits.connections_per_ip_max,
                "refused {} connections with 503 in the last {} s (connection caps reached)",
                total + per_ip,
                interval_ms / 1_000,
            );
        }
        let (header, idle) = (take(&self.header_timeouts), take(&self.idle_timeouts));
        if header + idle > 0 {
            tracing::debug!(
                header_read_timeouts = header,
                idle_timeouts = idle,
                "closed {} silent connections in the last {} s",
                header + idle,
                interval_ms / 1_000,
            );
        }
        let errors = take(&self.accept_errors);
        if errors > 0 {
            tracing::warn!(errors, "accept failed {errors} times in the last {} s", interval_ms / 1_000);
        }
    }
}

/// Serves `router` on `listener` with the edge's limits until `stop` is cancelled, then
/// asks every connection to finish its request in flight and close, and completes once
/// all are gone (the caller bounds how long it waits).
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    limits: EdgeLimits,
    stop: CancellationToken,
) {
    let gate = Arc::new(Gate {
        total: Arc::new(Semaphore::new(limits.connections_max)),
        total_max: limits.connections_max,
        per_ip: Mutex::new(HashMap::new()),
        per_ip_max: limits.connections_per_ip_max,
    });
    let tally = Arc::new(Tally::default());
    let lingering = Arc::new(Semaphore::new(REFUSALS_LINGERING_MAX));
    let summaries = tokio::spawn({
        let tally = tally.clone();
        let stop = stop.clone();
        async move {
            let period = Duration::from_millis(LOG_SUMMARY_INTERVAL_MS);
            let mut tick = tokio::time::interval_at(Instant::now() + period, period);
            loop {
                tokio::select! {
                    _ = tick.tick() => tally.summarize(&limits, LOG_SUMMARY_INTERVAL_MS),
                    () = stop.cancelled() => break,
                }
            }
            tally.summarize(&limits, LOG_SUMMARY_INTERVAL_MS);
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(Duration::from_millis(limits.header_read_timeout_ms));
    let idle = Duration::from_millis(limits.idle_timeout_ms);
    loop {
        let (tcp, peer) = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tally.accept_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(ACCEPT_ERROR_BACKOFF_MS)).await;
                    continue;
                }
            },
        };
        let admission = match gate.admit(peer.ip()) {
            Ok(admission) => admission,
            Err(refusal) => {
                match refusal {
                    Refusal::Total => &tally.refused_total,
                    Refusal::PerIp => &tally.refused_per_ip,
                }
                .fetch_add(1, Ordering::Relaxed);
                match lingering.clone().try_acquire_owned() {
                    Ok(permit) => {
                        tokio::spawn(refuse(tcp, permit));
                    }
                    Err(_) => {
                        tally.refused_unanswered.fetch_add(1, Ordering::Relaxed);
                    }
                }
                continue;
            }
        };
        // Answers go out in several writes: without TCP_NODELAY, Nagle's algorithm and
        // the client's delayed ACK add about 40 ms to every call.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let activity = Activity::new();
        let io = TokioIo::new(EdgeIo::new(tcp, activity.clone(), idle, Some(admission)));
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            // The peer's address, for the executor endpoint's loopback check, and the
            // connection's activity, for the answering mark.
            request.extensions_mut().insert(ConnectInfo(peer));
            request.extensions_mut().insert(activity.clone());
            router.clone().oneshot(request)
        });
        let connection = http.serve_connection(io, service).with_upgrades();
        let (stop, tally) = (stop.clone(), tally.clone());
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                note_connection_error(&tally, &e, peer);
            }
        });
    }
    drop(listener);
    let _ = summaries.await;
    gate.drained().await;
}

/// Counts a timed-out connection; other errors (resets, client bugs) are debug lines.
fn note_connection_error(tally: &Tally, e: &hyper::Error, peer: SocketAddr) {
    if e.is_timeout() {
        tally.header_timeouts.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<IdleTimeout>() {
            tally.idle_timeouts.fetch_add(1, Ordering::Relaxed);
            return;
        }
        source = s.source();
    }
    tracing::debug!(%peer, error = %e, "connection ended with an error");
}

/// Answers a refused connection with a 503, then reads what it sends (briefly, boundedly)
/// so that the close does not reset the connection before the answer is read.
async fn refuse(mut tcp: tokio::net::TcpStream, _permit: OwnedSemaphorePermit) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let answered = async {
        tcp.write_all(REFUSAL_RESPONSE).await?;
        tcp.shutdown().await?;
        let mut scratch = [0u8; 4096];
        let mut drained = 0;
        while drained < REFUSAL_DRAIN_BYTES_MAX {
            let n = tcp.read(&mut scratch).await?;
            if n == 0 {
                break;
            }
            drained += n;
        }
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(Duration::from_millis(REFUSAL_LINGER_MS), answered).await;
}

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The body broke its own framing (a bad chunk, a body shorter than its
    /// `Content-Length`, a connection that ended mid-body).
    #[error("malformed request body: {0}")]
    Malformed(String),
    /// The body did not arrive whole in time.
    #[error("request body not received within {0} ms")]
    Timeout(u64),
    /// The body is larger than the cap.
    #[error("request body larger than {0} bytes")]
    TooLarge(usize),
}

impl BodyError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            BodyError::Malformed(_) => "BODY_MALFORMED",
            BodyError::Timeout(_) => "BODY_TIMEOUT",
            BodyError::TooLarge(_) => "BODY_TOO_LARGE",
        }
    }

    /// The HTTP status it is answered with: always a client error.
    pub fn status(&self) -> StatusCode {
        match self {
            BodyError::Malformed(_) => StatusCode::BAD_REQUEST,
            BodyError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            BodyError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }
}

impl IntoResponse for BodyError {
    fn into_response(self) -> Response {
        // The connection's framing is broken or abandoned: do not read another request on it.
        let mut response = (self.status(), format!("{self}\n")).into_response();
        response.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
        response
    }
}

/// Reads `body` whole: at most `bytes_max` bytes, within `timeout_ms`.
pub async fn read_body(body: Body, bytes_max: usize, timeout_ms: u64) -> Result<Bytes, BodyError> {
    let limited = http_body_util::Limited::new(body, bytes_max);
    match tokio::time::timeout(Duration::from_millis(timeout_ms), limited.collect()).await {
        Err(_) => Err(BodyError::Timeout(timeout_ms)),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge(bytes_max)),
        Ok(Err(e)) => {
            let mut why = e.to_string();
            let mut source = e.source();
            while let Some(s) = source {
                why = format!("{why}: {s}");
                source = s.source();
            }
            Err(BodyError::Malformed(why))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked() {
        assert_eq!(EdgeLimits::default().validate(), Ok(()));
        let zero = EdgeLimits { idle_timeout_ms: 0, ..EdgeLimits::default() };
        assert_eq!(zero.validate(), Err(LimitsError::Zero("--idle-timeout-ms")));
        let odd = EdgeLimits { connections_max: 4, connections_per_ip_max: 5, ..EdgeLimits::default() };
        assert_eq!(odd.validate().map_err(|e| e.code()), Err("LIMIT_PER_IP_ABOVE_TOTAL"));
    }

    #[test]
    fn the_gate_counts_per_ip_and_in_total_and_frees_on_drop() {
        let gate = Arc::new(Gate {
            total: Arc::new(Semaphore::new(3)),
            total_max: 3,
            per_ip: Mutex::new(HashMap::new()),
            per_ip_max: 2,
        });
        let a: IpAddr = "10.0.0.1".parse().expect("ip");
        let b: IpAddr = "10.0.0.2".parse().expect("ip");
        let a1 = gate.admit(a).expect("first from a");
        let _a2 = gate.admit(a).expect("second from a");
        assert_eq!(gate.admit(a).err(), Some(Refusal::PerIp));
        let _b1 = gate.admit(b).expect("first from b");
        assert_eq!(gate.admit(b).err(), Some(Refusal::Total));
        drop(a1);
        assert!(gate.admit(b).is_ok(), "a freed place is free again");
        assert!(gate.per_ip.lock().expect("lock").get(&a).is_some_and(|n| *n == 1));
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_socket_times_out_unless_a_request_is_being_answered() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let idle = Duration::from_millis(1_000);
        let (near, mut far) = tokio::io::duplex(64);
        let activity = Activity::new();
        let mut io = EdgeIo::new(near, activity.clone(), idle, None);
        let answering = activity.answering();
        let mut buf = [0u8; 8];
        // Answering: ten idle periods pass and the read is still waiting.
        let waited = tokio::time::timeout(idle * 10, io.read(&mut buf)).await;
        assert!(waited.is_err(), "no idle timeout while answering");
        drop(answering);
        far.write_all(b"x").await.expect("write");
        assert_eq!(io.read(&mut buf).await.expect("a byte"), 1);
        let started = Instant::now();
        let err = io.read(&mut buf).await.expect_err("times out");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), idle, "exactly one idle period after the last byte");
    }
}
