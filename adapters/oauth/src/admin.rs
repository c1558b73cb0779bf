//! The operator's side: a loopback-only admin API (`/oauth/admin/…`: list waiting
//! requests, approve, deny, list grants, revoke) behind the static MCP token (the
//! `orchestrator oauth` commands reach it with the `console` crate's client).
//!
//! Architecture Invariant: a grant exists only after the operator approved its request
//! here, from loopback, with the static token, or from an operator executor connected
//! from loopback to the token-guarded `/executor` (`desk.rs`; the bridge refuses a remote
//! one with `LOOPBACK_REQUIRED`); nothing an OAuth client sends approves.

use crate::authority::Refusal;
use crate::page;
use crate::server::{OAuth, now_ms};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use edge::headers::{LOOPBACK_HOSTS, bearer, constant_time_eq, host_name};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

/// Largest admin request body, in bytes.
pub const ADMIN_BODY_BYTES_MAX: usize = 4 * 1024;

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
