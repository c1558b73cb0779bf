//! `GET /health`: what `orchestrator doctor` asks a running daemon (the answer's shape is
//! [`address::Health`]): its version, the executor protocol it speaks, the executors
//! connected now (and the worker kinds each runs), the hellos it refused for their protocol version, its public address
//! and what its notifications came to,
//! read from the parts `serve` mounted. For the operator only: a loopback `Host`, no
//! `Origin` (no web page may read it) and the static MCP bearer token.

use address::{ExecutorKindsView, HEALTH_PATH, Health, RefusedHelloView};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use edge::headers::{LOOPBACK_HOSTS, bearer, constant_time_eq, host_name};
use std::sync::Arc;

/// What the route reads.
#[derive(Clone)]
pub struct HealthState {
    /// The static MCP bearer token.
    pub token: String,
    /// The bridge's live connections, when the bridge is mounted.
    pub registry: Option<bridge::server::Registry>,
    /// The OAuth issuer (`--public-url`), when OAuth is on.
    pub public_url: Option<String>,
    /// What the notifications came to, with `--notify`.
    pub notifications: Option<Arc<crate::notify::NotifyStatus>>,
}

/// The `/health` router.
pub fn router(state: HealthState) -> axum::Router {
    axum::Router::new().route(HEALTH_PATH, axum::routing::get(health)).with_state(Arc::new(state))
}

async fn health(State(state): State<Arc<HealthState>>, headers: HeaderMap) -> Response {
    if let Some((status, why)) = refusal(&headers, &state.token) {
        return (status, format!("{why}\n")).into_response();
    }
    let registry = state.registry.as_ref();
    let body = Health {
        version: env!("CARGO_PKG_VERSION").to_string(),
        executor_protocol: registry.map(|_| executor_protocol::PROTOCOL_VERSION),
        executors: registry.map(|r| r.connected().iter().map(ToString::to_string).collect()).unwrap_or_default(),
        executor_kinds: registry
            .map(|r| {
                r.connected_kinds()
                    .into_iter()
                    .map(|(e, kinds)| ExecutorKindsView {
                        executor_id: e.to_string(),
                        kinds: kinds.iter().map(|k| k.as_str().to_string()).collect(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        refused_hellos: registry
            .map(|r| {
                r.refused_hellos()
                    .into_iter()
                    .map(|h| RefusedHelloView { protocol: h.protocol, at_ms: h.at_ms })
                    .collect()
            })
            .unwrap_or_default(),
        public_url: state.public_url.clone(),
        notifications: state.notifications.as_ref().map(|s| s.view()),
    };
    match serde_json::to_string(&body) {
        Ok(json) => {
            ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], json).into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("cannot encode the answer: {e}\n")).into_response(),
    }
}

/// Why a request may not read `/health`, or `None`.
pub(crate) fn refusal(headers: &HeaderMap, token: &str) -> Option<(StatusCode, &'static str)> {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).and_then(host_name);
    if !host.is_some_and(|h| LOOPBACK_HOSTS.contains(&h.as_str())) {
        return Some((StatusCode::FORBIDDEN, "/health answers on loopback only"));
    }
    if headers.contains_key(header::ORIGIN) {
        return Some((StatusCode::FORBIDDEN, "/health is not for web pages"));
    }
    match bearer(headers) {
        Some(t) if constant_time_eq(t.as_bytes(), token.as_bytes()) => None,
        _ => Some((StatusCode::UNAUTHORIZED, "missing or wrong bearer token (the MCP token)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn only_the_operator_on_loopback_reads_it() {
        let token = "0123456789abcdef0123";
        let ok = [("host", "127.0.0.1:7411"), ("authorization", "Bearer 0123456789abcdef0123")];
        assert_eq!(refusal(&headers(&ok), token), None);
        let remote = [("host", "tunnel.example.com"), ok[1]];
        assert_eq!(refusal(&headers(&remote), token).map(|r| r.0), Some(StatusCode::FORBIDDEN));
        let page = [ok[0], ok[1], ("origin", "http://127.0.0.1:7411")];
        assert_eq!(refusal(&headers(&page), token).map(|r| r.0), Some(StatusCode::FORBIDDEN));
        let wrong = [ok[0], ("authorization", "Bearer 0123456789abcdef0124")];
        assert_eq!(refusal(&headers(&wrong), token).map(|r| r.0), Some(StatusCode::UNAUTHORIZED));
        assert_eq!(refusal(&headers(&ok[..1]), token).map(|r| r.0), Some(StatusCode::UNAUTHORIZED));
    }
}
