//! The operator's side: a loopback-only admin API (`/oauth/admin/…`: list waiting
//! requests, approve, deny, list grants, revoke) behind the static MCP token, and the
//! client the `orchestrator oauth` commands use to reach it.
//!
//! Architecture Invariant: a grant exists only after the operator approved its request
//! here, from loopback, with the static token, or from an operator executor connected
//! from loopback to the token-guarded `/executor` (`desk.rs`; the bridge refuses a remote
//! one with `LOOPBACK_REQUIRED`); nothing an OAuth client sends approves.

use crate::authority::Refusal;
use crate::page;
use crate::server::{OAuth, now_ms};
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use edge::headers::{LOOPBACK_HOSTS, bearer, constant_time_eq, host_name};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

/// Largest admin request body, in bytes.
pub const ADMIN_BODY_BYTES_MAX: usize = 4 * 1024;
/// How long the CLI waits for the daemon's answer, in milliseconds.
pub const ADMIN_CALL_TIMEOUT_MS: u64 = 10_000;

fn answer(status: StatusCode, body: Value) -> Response {
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
    page::harden(&mut response);
    response
}

/// Why an admin request is refused, before anything is looked at: `None` lets it in.
fn refused(oauth: &OAuth, request: &Request) -> Option<Response> {
    let peer_loopback = request.extensions().get::<ConnectInfo<SocketAddr>>().is_some_and(|c| c.0.ip().is_loopback());
    let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).and_then(host_name);
    let host_loopback = host.is_some_and(|h| LOOPBACK_HOSTS.contains(&h.as_str()));
    let origin_ok = request.headers().get(header::ORIGIN).is_none_or(|o| {
        o.to_str().is_ok_and(|o| o.starts_with("chrome-extension://") || o.starts_with("moz-extension://"))
    });
    if !(peer_loopback && host_loopback && origin_ok) {
        return Some(answer(
            StatusCode::FORBIDDEN,
            json!({"error": "forbidden", "error_description": "loopback only"}),
        ));
    }
    let presented = bearer(request.headers());
    if !presented.is_some_and(|t| constant_time_eq(t.as_bytes(), oauth.static_token.as_bytes())) {
        let body = json!({"error": "unauthorized", "error_description": "the static MCP token is required"});
        return Some(answer(StatusCode::UNAUTHORIZED, body));
    }
    None
}

fn outcome<T>(result: Result<T, Refusal>, ok: impl FnOnce(T) -> Value) -> Response {
    match result {
        Ok(v) => answer(StatusCode::OK, ok(v)),
        Err(r) if r.error == "not_found" => answer(StatusCode::NOT_FOUND, r.body()),
        Err(r) => answer(StatusCode::INTERNAL_SERVER_ERROR, r.body()),
    }
}

/// Every `/oauth/admin/{verb}` route.
pub async fn admin(State(oauth): State<Arc<OAuth>>, request: Request) -> Response {
    if let Some(response) = refused(&oauth, &request) {
        return response;
    }
    let verb = request.uri().path().rsplit('/').next().unwrap_or_default().to_string();
    let method = request.method().clone();
    let body: Value = if method == Method::POST {
        match edge::read_body(request.into_body(), ADMIN_BODY_BYTES_MAX, oauth.body_read_timeout_ms).await {
            Ok(bytes) if bytes.is_empty() => json!({}),
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(_) => return answer(StatusCode::BAD_REQUEST, json!({"error": "invalid_request"})),
            },
            Err(e) => return e.into_response(),
        }
    } else {
        json!({})
    };
    let text = |k: &str| body.get(k).and_then(Value::as_str).map(String::from);
    let now = now_ms();
    let mut authority = oauth.authority();
    match (method, verb.as_str()) {
        (Method::GET, "pending") => answer(StatusCode::OK, authority.pending_list(now)),
        (Method::GET, "grants") => answer(StatusCode::OK, authority.grants_list()),
        (Method::POST, "approve" | "deny") => {
            let Some(code) = text("code") else {
                return answer(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_request", "error_description": "code"}),
                );
            };
            outcome(authority.decide(&code, verb == "approve", now), |()| json!({"decided": verb}))
        }
        (Method::POST, "revoke") => {
            let all = body.get("all").and_then(Value::as_bool).unwrap_or(false);
            let id = text("grantId");
            if all == id.is_some() {
                let d = "give exactly one of grantId and all=true";
                return answer(StatusCode::BAD_REQUEST, json!({"error": "invalid_request", "error_description": d}));
            }
            outcome(authority.revoke_grants(id.as_deref()), |n| json!({"revoked": n}))
        }
        _ => answer(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
    }
}

/// Why the CLI could not get an answer from the daemon.
#[derive(Debug, thiserror::Error)]
pub enum AdminCallError {
    /// Nothing listens there (the daemon is not running).
    #[error("cannot reach the daemon at {addr}: {source}")]
    Unreachable {
        /// `host:port`.
        addr: String,
        /// The connection error.
        source: std::io::Error,
    },
    /// The exchange failed or timed out.
    #[error("the daemon's admin API failed: {0}")]
    Http(String),
}

impl AdminCallError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            AdminCallError::Unreachable { .. } => "ADMIN_UNREACHABLE",
            AdminCallError::Http(_) => "ADMIN_HTTP",
        }
    }
}

/// One admin call: `method` on `http://{addr}/oauth/admin/{verb}` with the static token.
/// Returns the status and the JSON answer.
pub async fn call(
    addr: &str,
    token: &str,
    method: Method,
    verb: &str,
    body: Option<Value>,
) -> Result<(u16, Value), AdminCallError> {
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|source| AdminCallError::Unreachable { addr: addr.to_string(), source })?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| AdminCallError::Http(e.to_string()))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let request = hyper::Request::builder()
            .method(method)
            .uri(format!("/oauth/admin/{verb}"))
            .header(header::HOST, addr)
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| AdminCallError::Http(e.to_string()))?;
        let response = sender.send_request(request).await.map_err(|e| AdminCallError::Http(e.to_string()))?;
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.map_err(|e| AdminCallError::Http(e.to_string()))?.to_bytes();
        let value = serde_json::from_slice(&bytes).unwrap_or_else(|_| json!({"text": String::from_utf8_lossy(&bytes)}));
        Ok((status, value))
    };
    match tokio::time::timeout(std::time::Duration::from_millis(ADMIN_CALL_TIMEOUT_MS), exchange).await {
        Ok(result) => result,
        Err(_) => Err(AdminCallError::Http(format!("no answer within {ADMIN_CALL_TIMEOUT_MS} ms"))),
    }
}
