//! The MCP relay: a loopback HTTP endpoint the CLI children are configured with, which
//! passes every request on to the MCP endpoint of the daemon this executor is connected
//! to, so the children follow the leader when a standby takes over.
//!
//! A child's MCP URL is fixed for the child's life (it is in Codex's configuration and
//! Claude's `--mcp-config`). With several `--daemon` URLs (a leader and its standbys) and no
//! `--mcp-url`, a fixed URL would keep calling a dead leader after a failover, and the
//! worker could never finish (it finishes only through `worker_complete`). So the children
//! get `http://127.0.0.1:PORT/mcp` here instead; each request goes to the daemon that last
//! welcomed this executor (its `hello` was accepted: it leads), over the same TCP or TLS
//! stream as the executor's WebSocket (`--daemon-ca` included), with `Host` set to the
//! daemon's. The relay reads nothing of what it carries: the child's bearer token goes
//! through as sent and the daemon checks it (a request without one is refused there, not
//! here). A request that arrives while no daemon is reachable waits up to
//! [`RELAY_LEADER_WAIT_MS`] for the executor to connect to one, then is answered 503 with
//! what happened. A new leader does not know the old one's MCP session: it answers 404 to
//! the session id, and the child's MCP client starts a new session (the failover test
//! shows the real Codex doing so).

use crate::Error;
use crate::run::stream::open_stream;
use http_body_util::{Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONNECTION, HOST, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, watch};

/// How long a request waits for a daemon to relay it to (none connected yet, or the one
/// it was to go to refuses connections: a leader that died), in ms. A takeover is bounded
/// by the standby's lease time plus the executor's reconnect: 30 s covers both with room.
pub const RELAY_LEADER_WAIT_MS: u64 = 30_000;

/// Requests relayed at once; a connection beyond it is closed at once. A handful of
/// children each make a few MCP calls per turn.
pub const RELAY_CONNECTIONS_MAX: usize = 256;

/// How often a request that found no daemon to take it tries again (unless the
/// executor follows another daemon sooner), in ms.
const RELAY_RETRY_MS: u64 = 500;

/// Headers that describe one hop's connection, not the request: never passed on.
const HOP_HEADERS: [&str; 4] = ["connection", "keep-alive", "proxy-connection", "upgrade"];

/// A response the relay makes itself (503) or one it passes on.
type Body = Either<Incoming, Full<Bytes>>;

/// The daemon requests go to: its executor URL (`ws://` or `wss://HOST:PORT/executor`,
/// which names the stream to open) and its authority (the `Host` to send).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Upstream {
    executor_url: String,
    authority: String,
}

/// The relay's handle: its URL for the children, and [`McpRelay::follow`] for the
/// connection loop. Its tasks end with the runtime.
pub struct McpRelay {
    /// `http://127.0.0.1:PORT/mcp`.
    url: String,
    /// The daemon that leads as far as this executor knows; `None` before the first.
    leader: watch::Sender<Option<Upstream>>,
}

impl McpRelay {
    /// Listens on a free loopback port and serves until the runtime ends; a request waits
    /// up to `leader_wait` for a daemon to take it ([`RELAY_LEADER_WAIT_MS`] in the
    /// executor).
    pub async fn start(tls: Arc<tokio_rustls::rustls::ClientConfig>, leader_wait: Duration) -> Result<McpRelay, Error> {
        let failed = |op: &'static str, e: std::io::Error| Error::Io {
            op,
            path: "127.0.0.1:0 (the MCP relay)".to_string(),
            detail: e.to_string(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| failed("bind", e))?;
        let addr = listener.local_addr().map_err(|e| failed("bind", e))?;
        let (leader, watching) = watch::channel(None);
        let slots = Arc::new(Semaphore::new(RELAY_CONNECTIONS_MAX));
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { continue };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    tracing::warn!("MCP relay: {RELAY_CONNECTIONS_MAX} connections open already; one refused");
                    continue;
                };
                let (watching, tls) = (watching.clone(), tls.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        relay(request, watching.clone(), tls.clone(), leader_wait)
                    });
                    let served = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(client), service)
                        .await;
                    if let Err(e) = served {
                        tracing::debug!("MCP relay: a child's connection ended: {e}");
                    }
                    drop(slot);
                });
            }
        });
        Ok(McpRelay { url: format!("http://{addr}/mcp"), leader })
    }

    /// The URL the children are configured with.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The daemon at `executor_url` welcomed this executor: requests go there from now on.
    pub fn follow(&self, executor_url: &str) {
        let rest = executor_url.strip_prefix("wss://").or_else(|| executor_url.strip_prefix("ws://"));
        let Some(authority) = rest.and_then(|r| r.split(['/', '?', '#']).next()).filter(|a| !a.is_empty()) else {
            return;
        };
        let upstream = Upstream { executor_url: executor_url.to_string(), authority: authority.to_string() };
        self.leader.send_if_modified(|now| {
            let changed = now.as_ref() != Some(&upstream);
            if changed {
                tracing::info!(url = executor_url, "MCP relay: the children's MCP calls go to this daemon");
                *now = Some(upstream);
            }
            changed
        });
    }
}

/// One request of a child, relayed to the leader (waiting for one if need be).
async fn relay(
    request: Request<Incoming>,
    mut leader: watch::Receiver<Option<Upstream>>,
    tls: Arc<tokio_rustls::rustls::ClientConfig>,
    leader_wait: Duration,
) -> Result<Response<Body>, hyper::Error> {
    let deadline = tokio::time::Instant::now() + leader_wait;
    let mut last_failure = "no daemon has welcomed this executor yet".to_string();
    let stream = loop {
        let upstream = leader.borrow_and_update().clone();
        if let Some(upstream) = upstream {
            match tokio::time::timeout_at(deadline, open_stream(&upstream.executor_url, &tls)).await {
                Ok(Ok(stream)) => break Some((stream, upstream)),
                Ok(Err(e)) => last_failure = format!("the daemon at {} did not answer: {e}", upstream.authority),
                Err(_) => break None,
            }
        }
        // Wait for another leader (the executor's reconnect), or retry the same one a
        // little later (a daemon restarting on the same address).
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        if remaining.is_zero() {
            break None;
        }
        let retry = Duration::from_millis(RELAY_RETRY_MS).min(remaining);
        if let Ok(Err(_)) = tokio::time::timeout(retry, leader.changed()).await {
            break None; // the executor is ending
        }
    };
    let Some((stream, upstream)) = stream else {
        let waited = leader_wait.as_millis();
        return Ok(unavailable(&format!("no daemon to relay to within {waited} ms: {last_failure}")));
    };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("MCP relay: the daemon's connection ended: {e}");
        }
    });
    let (mut parts, body) = request.into_parts();
    for name in HOP_HEADERS {
        parts.headers.remove(name);
    }
    let Ok(host) = HeaderValue::from_str(&upstream.authority) else {
        return Ok(unavailable(&format!("{:?} is not a host header", upstream.authority)));
    };
    parts.headers.insert(HOST, host);
    let mut response = sender.send_request(Request::from_parts(parts, body)).await?;
    response.headers_mut().remove(CONNECTION);
    Ok(response.map(Either::Left))
}

/// The relay's own answer when no daemon could take the request: 503, and why, as JSON.
fn unavailable(why: &str) -> Response<Body> {
    tracing::warn!("MCP relay: {why}");
    let body = serde_json::json!({ "code": "MCP_RELAY_NO_DAEMON", "message": why }).to_string();
    let mut response = Response::new(Either::Right(Full::new(Bytes::from(body))));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
