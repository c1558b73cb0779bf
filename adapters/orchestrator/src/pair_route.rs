//! The pairing routes (docs/operator.md "Pairing"), mounted by `serve.rs` with the
//! executor bridge, under the edge's caps and timeouts like every route:
//!
//! - `GET /pair`: the discovery answer (product, version): what the extension's probe of
//!   loopback ports looks for. Nothing secret.
//! - `POST /pair` `{"code": "4821-7730"}`: a good code for the executor token (and the
//!   MCP URL; the MCP token too for `"client": "cli-executor"`, and for one that names its
//!   `"host"` a token good for that executor id only, from the host book, instead of the
//!   shared one). No token: the code is the credential, checked by [`PairBook`] (once,
//!   minutes, rate limited).
//! - `POST /pair/code`: a fresh code, for `orchestrator pair`: as `/health`, a loopback
//!   `Host`, no `Origin` and the static MCP token.
//!
//! `/pair` accepts a peer on loopback only unless the daemon accepts remote executors
//! (`--executor-allow-remote`), a `Host` that is loopback or allowed (`--allow-host`, the
//! public URL's host: no DNS rebinding), and no `Origin` or an extension's (the bridge's
//! own rule), so no web page may try codes. An extension's origin is answered with CORS
//! headers naming it. Codes and tokens are never logged.

use crate::pair::{PairBook, PairError, code_digits};
use address::pair::{
    CLIENT_CLI_EXECUTOR, PAIR_CODE_PATH, PAIR_PATH, PRODUCT, PairAnswer, PairDiscovery, PairIssued, PairRefusal,
    PairRequest, format_code,
};
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use edge::headers::{LOOPBACK_HOSTS, host_name};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// `POST /pair`'s body cap in bytes: a code and a client name fit many times over.
pub const PAIR_BODY_BYTES_MAX: usize = 512;

/// What the routes need.
pub struct PairState {
    /// The codes and the tries' budgets.
    pub book: Mutex<PairBook>,
    /// What a good code is exchanged for.
    pub executor_token: String,
    /// The static MCP token: `POST /pair/code`'s credential, and a CLI executor's share.
    pub mcp_token: String,
    /// The MCP endpoint, in the answer.
    pub mcp_url: String,
    /// Peers off loopback may pair (`--executor-allow-remote`).
    pub allow_remote: bool,
    /// `Origin` prefixes allowed (the bridge's: the extensions').
    pub origin_prefixes: Vec<String>,
    /// Host names allowed besides loopback (`--allow-host`, the public URL's host).
    pub hosts: Vec<String>,
    /// How long a body may take to arrive (the edge's `--body-read-timeout-ms`).
    pub body_read_timeout_ms: u64,
    /// The per-host tokens a CLI executor that names its host is paired with.
    pub host_book: Option<Arc<bridge::server::HostBook>>,
}

impl PairState {
    /// A fresh code, registered in the book: its printed form, or `None` when the OS random
    /// source failed.
    pub fn issue(&self, now_ms: u64) -> Option<String> {
        let digits = code_digits(|| {
            let mut b = [0u8; 4];
            getrandom::fill(&mut b).ok().map(|()| u32::from_le_bytes(b))
        })?;
        self.book.lock().unwrap_or_else(|p| p.into_inner()).issue(&digits, now_ms);
        Some(format_code(&digits))
    }

    fn ttl_ms(&self) -> u64 {
        self.book.lock().unwrap_or_else(|p| p.into_inner()).ttl_ms()
    }
}

/// The routes.
pub fn router(state: Arc<PairState>) -> axum::Router {
    axum::Router::new()
        .route(PAIR_PATH, axum::routing::get(discover).post(exchange).options(preflight))
        .route(PAIR_CODE_PATH, axum::routing::post(issue))
        .with_state(state)
}

/// `body` as JSON, never cached (also `/notify/test`'s answers).
pub(crate) fn json(status: StatusCode, body: &impl serde::Serialize) -> Response {
    match serde_json::to_string(body) {
        Ok(text) => (status, [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], text)
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

fn refusal(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    json(status, &PairRefusal { code: code.to_string(), message: message.into() })
}

/// Why this caller may not use `/pair` at all, or `None`.
fn caller_refusal(state: &PairState, peer: Option<SocketAddr>, headers: &HeaderMap) -> Option<Response> {
    let local = peer.is_some_and(|p| is_loopback(p.ip()));
    if !state.allow_remote && !local {
        return Some(refusal(
            StatusCode::FORBIDDEN,
            "PAIR_NOT_LOOPBACK",
            "pairing is accepted from this machine only (start the daemon with --executor-allow-remote to pair executors on other machines)",
        ));
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).and_then(host_name);
    if !host.is_some_and(|h| LOOPBACK_HOSTS.contains(&h.as_str()) || state.hosts.contains(&h)) {
        return Some(refusal(
            StatusCode::FORBIDDEN,
            "PAIR_HOST",
            "this Host is not one the daemon answers as (--allow-host)",
        ));
    }
    if !origin_allowed(state, headers) {
        return Some(refusal(
            StatusCode::FORBIDDEN,
            "PAIR_ORIGIN",
            "web pages may not pair; the extension and executor-cli may",
        ));
    }
    None
}

fn is_loopback(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        std::net::IpAddr::V4(v4) => v4.is_loopback(),
    }
}

fn origin_allowed(state: &PairState, headers: &HeaderMap) -> bool {
    match headers.get(header::ORIGIN) {
        None => true,
        Some(o) => o.to_str().is_ok_and(|o| state.origin_prefixes.iter().any(|p| o.starts_with(p.as_str()))),
    }
}

/// An allowed extension's origin may read the answer (it is not a page of the daemon's).
fn with_cors(mut response: Response, headers: &HeaderMap) -> Response {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
        h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("Retry-After"));
    }
    response
}

type Peer = Option<axum::Extension<ConnectInfo<SocketAddr>>>;

async fn preflight(State(state): State<Arc<PairState>>, peer: Peer, headers: HeaderMap) -> Response {
    let peer = peer.map(|axum::Extension(ConnectInfo(a))| a);
    if let Some(refused) = caller_refusal(&state, peer, &headers) {
        return refused;
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST"));
    h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("Content-Type"));
    h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    with_cors(response, &headers)
}

async fn discover(State(state): State<Arc<PairState>>, peer: Peer, headers: HeaderMap) -> Response {
    let peer = peer.map(|axum::Extension(ConnectInfo(a))| a);
    if let Some(refused) = caller_refusal(&state, peer, &headers) {
        return refused;
    }
    let body =
        PairDiscovery { product: PRODUCT.to_string(), version: env!("CARGO_PKG_VERSION").to_string(), pairing: true };
    with_cors(json(StatusCode::OK, &body), &headers)
}

async fn exchange(State(state): State<Arc<PairState>>, peer: Peer, headers: HeaderMap, body: Body) -> Response {
    let peer = peer.map(|axum::Extension(ConnectInfo(a))| a);
    if let Some(refused) = caller_refusal(&state, peer, &headers) {
        return refused;
    }
    let answer = exchange_checked(&state, peer, body).await;
    with_cors(answer, &headers)
}

async fn exchange_checked(state: &PairState, peer: Option<SocketAddr>, body: Body) -> Response {
    let bytes = match edge::read_body(body, PAIR_BODY_BYTES_MAX, state.body_read_timeout_ms).await {
        Ok(bytes) => bytes,
        Err(e) => return refusal(e.status(), e.code(), e.to_string()),
    };
    // Any content type: the extension sends text/plain so that no preflight is needed.
    let request: PairRequest = match serde_json::from_slice(&bytes) {
        Ok(r) => r,
        Err(_) => {
            return refusal(StatusCode::BAD_REQUEST, "PAIR_BAD_REQUEST", "expected {\"code\": \"NNNN-NNNN\"}");
        }
    };
    let cli = request.client.as_deref() == Some(CLIENT_CLI_EXECUTOR);
    let host = request.host.as_deref().filter(|_| cli);
    if let Some(host) = host
        && !bridge::server::valid_host(host)
    {
        return refusal(
            StatusCode::BAD_REQUEST,
            "PAIR_BAD_REQUEST",
            "host must be an executor id (1 to 128 printable ASCII characters)",
        );
    }
    let address = peer.map(|p| p.ip().to_string()).unwrap_or_default();
    let tried = state.book.lock().unwrap_or_else(|p| p.into_inner()).redeem(&request.code, &address, oauth::now_ms());
    match tried {
        Ok(()) => {
            tracing::info!(peer = %address, cli, host, "paired a client with a one-time code");
            let executor_token = match (host, &state.host_book) {
                (Some(host), Some(book)) => match host_token(book, host) {
                    Ok(token) => token,
                    Err(e) => return refusal(StatusCode::INTERNAL_SERVER_ERROR, "PAIR_HOSTS", e.to_string()),
                },
                _ => state.executor_token.clone(),
            };
            let body = PairAnswer {
                product: PRODUCT.to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
                executor_token,
                mcp_token: cli.then(|| state.mcp_token.clone()),
                mcp_url: state.mcp_url.clone(),
            };
            json(StatusCode::OK, &body)
        }
        Err(e) => {
            let status = match e {
                PairError::Wrong => StatusCode::UNAUTHORIZED,
                PairError::Expired | PairError::Used | PairError::Withdrawn => StatusCode::GONE,
                PairError::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            };
            let mut response = refusal(status, e.code(), e.to_string());
            if let PairError::RateLimited(wait_ms) = e {
                let seconds = oauth::rate::retry_after_s(wait_ms).to_string();
                if let Ok(v) = HeaderValue::from_str(&seconds) {
                    response.headers_mut().insert(header::RETRY_AFTER, v);
                }
            }
            response
        }
    }
}

/// A fresh token for `host` in the book; one issued to it before is retired (pairing
/// again is how a replaced host gets its own).
fn host_token(book: &bridge::server::HostBook, host: &str) -> Result<String, bridge::server::HostsError> {
    match book.remove(host) {
        Ok(()) => tracing::info!(host, "a host paired again: its previous token is retired"),
        Err(bridge::server::HostsError::Unknown(_)) => {}
        Err(e) => return Err(e),
    }
    book.add(host, oauth::now_ms())
}

async fn issue(State(state): State<Arc<PairState>>, headers: HeaderMap) -> Response {
    if let Some((status, why)) = crate::health::refusal(&headers, &state.mcp_token) {
        return refusal(status, "PAIR_CODE_REFUSED", why);
    }
    match state.issue(oauth::now_ms()) {
        Some(code) => {
            let body = PairIssued { code, expires_in_ms: state.ttl_ms() };
            json(StatusCode::OK, &body)
        }
        None => refusal(StatusCode::INTERNAL_SERVER_ERROR, "PAIR_RANDOM", "the OS random source failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(allow_remote: bool) -> PairState {
        PairState {
            book: Mutex::new(PairBook::new([0; 32], 1_000)),
            executor_token: String::new(),
            mcp_token: String::new(),
            mcp_url: String::new(),
            allow_remote,
            origin_prefixes: vec!["chrome-extension://".into(), "moz-extension://".into()],
            hosts: vec!["box.lan".into()],
            body_read_timeout_ms: 1_000,
            host_book: None,
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, v.parse().expect("header"));
        }
        map
    }

    fn code(r: Option<Response>) -> Option<StatusCode> {
        r.map(|r| r.status())
    }

    #[test]
    fn a_peer_off_loopback_pairs_only_when_remote_executors_are_allowed() {
        let lan: SocketAddr = "192.0.2.7:5000".parse().expect("addr");
        let local: SocketAddr = "127.0.0.1:5000".parse().expect("addr");
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:5000".parse().expect("addr");
        let h = headers(&[("host", "box.lan:7411")]);
        assert_eq!(code(caller_refusal(&state(false), Some(lan), &h)), Some(StatusCode::FORBIDDEN));
        assert_eq!(code(caller_refusal(&state(false), None, &h)), Some(StatusCode::FORBIDDEN));
        assert_eq!(code(caller_refusal(&state(true), Some(lan), &h)), None);
        assert_eq!(code(caller_refusal(&state(false), Some(local), &h)), None);
        assert_eq!(code(caller_refusal(&state(false), Some(mapped), &h)), None);
        let moz = headers(&[("host", "127.0.0.1:7411"), ("origin", "moz-extension://abc")]);
        assert_eq!(code(caller_refusal(&state(false), Some(local), &moz)), None);
        let other = headers(&[("host", "other.lan")]);
        assert_eq!(code(caller_refusal(&state(true), Some(lan), &other)), Some(StatusCode::FORBIDDEN));
    }
}
