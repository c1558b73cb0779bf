//! The OAuth endpoints over HTTP: metadata (RFC 9728, RFC 8414; only for the public
//! host), registration, authorize and the consent poll, token and revocation. Bodies are
//! read through `edge::read_body` with the caps below; answers are never cached.

use crate::authority::{AuthorizeError, Poll, Refusal, SCOPE_MCP, SCOPES_SUPPORTED};
use crate::client_auth::{self, Attempt};
use crate::form::{encode, parse_form};
use crate::page;
use crate::rate::retry_after_s;
use crate::server::{OAuth, now_ms};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use edge::headers::host_name;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Largest registration body (RFC 7591 metadata), in bytes.
pub const REGISTER_BODY_BYTES_MAX: usize = 16 * 1024;
/// Largest token or revocation body (a form), in bytes.
pub const TOKEN_BODY_BYTES_MAX: usize = 8 * 1024;
/// Longest query string of `/oauth/authorize` and `/oauth/consent`, in bytes.
pub const QUERY_BYTES_MAX: usize = 8 * 1024;
fn json_answer(status: StatusCode, body: Value) -> Response {
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
    page::harden(&mut response);
    response
}

fn refusal(status: StatusCode, r: &Refusal) -> Response {
    json_answer(status, r.body())
}

/// `429` with `Retry-After` in whole seconds: `response` past a rate limit.
fn too_many(mut response: Response, wait_ms: u64) -> Response {
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(retry_after_s(wait_ms)));
    response
}

/// The `401 invalid_client` of client authentication a public client cannot have.
fn client_refused(attempt: Attempt) -> Response {
    let mut response = refusal(StatusCode::UNAUTHORIZED, &attempt.refusal());
    if attempt == Attempt::Basic {
        // RFC 6749 §5.2: a challenge in the scheme the client used.
        let challenge = header::HeaderValue::from_static("Basic realm=\"orchestrator\"");
        response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// Whether the request names the public host (metadata is served only there).
fn on_public_host(oauth: &OAuth, headers: &HeaderMap) -> bool {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).and_then(host_name);
    host.is_some_and(|h| h == oauth.public.host)
}

/// RFC 9728 protected-resource metadata.
pub async fn resource_metadata(State(oauth): State<Arc<OAuth>>, headers: HeaderMap) -> Response {
    if !on_public_host(&oauth, &headers) {
        return StatusCode::NOT_FOUND.into_response();
    }
    json_answer(
        StatusCode::OK,
        json!({
            "resource": oauth.public.resource(),
            "authorization_servers": [oauth.public.issuer()],
            "scopes_supported": [SCOPE_MCP],
            "bearer_methods_supported": ["header"],
            "resource_name": "orchestrator",
        }),
    )
}

/// RFC 8414 authorization-server metadata.
pub async fn server_metadata(State(oauth): State<Arc<OAuth>>, headers: HeaderMap) -> Response {
    if !on_public_host(&oauth, &headers) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let p = &oauth.public;
    json_answer(
        StatusCode::OK,
        json!({
            "issuer": p.issuer(),
            "authorization_endpoint": p.endpoint("/oauth/authorize"),
            "token_endpoint": p.endpoint("/oauth/token"),
            "registration_endpoint": p.endpoint("/oauth/register"),
            "revocation_endpoint": p.endpoint("/oauth/revoke"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": SCOPES_SUPPORTED,
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": false,
        }),
    )
}

async fn body(oauth: &OAuth, request: Request, cap: usize) -> Result<Bytes, Response> {
    edge::read_body(request.into_body(), cap, oauth.body_read_timeout_ms).await.map_err(IntoResponse::into_response)
}

async fn form(oauth: &OAuth, request: Request) -> Result<BTreeMap<String, String>, Response> {
    let bytes = body(oauth, request, TOKEN_BODY_BYTES_MAX).await?;
    let text = std::str::from_utf8(&bytes).ok();
    text.and_then(parse_form).ok_or_else(|| {
        refusal(
            StatusCode::BAD_REQUEST,
            &Refusal::new("invalid_request", "the body must be a form, each parameter once"),
        )
    })
}

/// `POST /oauth/register` (RFC 7591).
pub async fn register(State(oauth): State<Arc<OAuth>>, request: Request) -> Response {
    let bytes = match body(&oauth, request, REGISTER_BODY_BYTES_MAX).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let Ok(metadata) = serde_json::from_slice::<Value>(&bytes) else {
        let r = Refusal::new("invalid_client_metadata", "the body must be JSON client metadata");
        return refusal(StatusCode::BAD_REQUEST, &r);
    };
    match oauth.authority().register(&metadata, now_ms()) {
        Ok(client) => json_answer(StatusCode::CREATED, client),
        Err(r) if r.error == "temporarily_unavailable" => refusal(StatusCode::TOO_MANY_REQUESTS, &r),
        Err(r) if r.error == "server_error" => refusal(StatusCode::INTERNAL_SERVER_ERROR, &r),
        Err(r) => refusal(StatusCode::BAD_REQUEST, &r),
    }
}

fn query(request: &Request) -> Option<BTreeMap<String, String>> {
    let q = request.uri().query().unwrap_or("");
    if q.len() > QUERY_BYTES_MAX {
        return None;
    }
    parse_form(q)
}

/// `GET /oauth/authorize`: the request is checked and filed, and the consent page shows
/// the code the operator approves.
pub async fn authorize(State(oauth): State<Arc<OAuth>>, request: Request) -> Response {
    let Some(q) = query(&request) else {
        return page::error(StatusCode::BAD_REQUEST, "malformed authorization request");
    };
    let now = now_ms();
    if let Err(wait_ms) = oauth.authority().admit_authorize(&q, now) {
        tracing::debug!(wait_ms, "an authorization request past its client's rate limit");
        let message = format!("too many authorization requests; try again in {} s", retry_after_s(wait_ms));
        return too_many(page::error(StatusCode::TOO_MANY_REQUESTS, &message), wait_ms);
    }
    let result = oauth.authority().authorize(&q, now);
    match result {
        Ok(handle) => consent_poll(&oauth, &handle),
        Err(AuthorizeError::Page(message)) => page::error(StatusCode::BAD_REQUEST, &message),
        Err(AuthorizeError::Redirect(url)) => no_store(Redirect::to(&url).into_response()),
    }
}

fn no_store(mut response: Response) -> Response {
    page::harden(&mut response);
    response
}

fn consent_poll(oauth: &OAuth, handle: &str) -> Response {
    let poll = oauth.authority().poll(handle, now_ms());
    match poll {
        Poll::Waiting { human_code, client_name, redirect_host, scope } => {
            let url = oauth.public.endpoint(&format!("/oauth/consent?request={}", encode(handle)));
            page::consent(&human_code, &client_name, &redirect_host, &scope, &url)
        }
        Poll::Redirect(url) => no_store(Redirect::to(&url).into_response()),
        Poll::Gone => {
            page::error(StatusCode::NOT_FOUND, "this authorization request expired or was already used; start again")
        }
    }
}

/// `GET /oauth/consent?request=HANDLE`: the waiting page's reload.
pub async fn consent(State(oauth): State<Arc<OAuth>>, request: Request) -> Response {
    match query(&request).as_ref().and_then(|q| q.get("request")) {
        Some(handle) => consent_poll(&oauth, handle),
        None => page::error(StatusCode::BAD_REQUEST, "malformed consent request"),
    }
}

/// `POST /oauth/token`: paced per client (`429` past the budget), client authentication
/// refused (`401 invalid_client`), then the grant.
pub async fn token(State(oauth): State<Arc<OAuth>>, request: Request) -> Response {
    let headers = request.headers().clone();
    let form = match form(&oauth, request).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    let now = now_ms();
    if let Err(wait_ms) = oauth.authority().admit_token(&form, now) {
        tracing::debug!(wait_ms, "a token request past its client's rate limit");
        let r = Refusal::new(
            "temporarily_unavailable",
            format!("too many token requests; retry after {} s", retry_after_s(wait_ms)),
        );
        return too_many(refusal(StatusCode::TOO_MANY_REQUESTS, &r), wait_ms);
    }
    if let Some(attempt) = client_auth::attempted(&headers, &form) {
        return client_refused(attempt);
    }
    let result = oauth.authority().token(&form, now);
    match result {
        Ok(tokens) => json_answer(StatusCode::OK, tokens),
        Err(r) if r.error == "server_error" => refusal(StatusCode::INTERNAL_SERVER_ERROR, &r),
        Err(r) => refusal(StatusCode::BAD_REQUEST, &r),
    }
}

/// `POST /oauth/revoke` (RFC 7009): 200 whether or not the token was known; client
/// authentication is refused as at `/oauth/token`.
pub async fn revoke(State(oauth): State<Arc<OAuth>>, request: Request) -> Response {
    let headers = request.headers().clone();
    let form = match form(&oauth, request).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    if let Some(attempt) = client_auth::attempted(&headers, &form) {
        return client_refused(attempt);
    }
    let Some(token) = form.get("token") else {
        return refusal(StatusCode::BAD_REQUEST, &Refusal::new("invalid_request", "token is required"));
    };
    let result = oauth.authority().revoke_token(token);
    match result {
        Ok(()) => json_answer(StatusCode::OK, json!({})),
        Err(r) => refusal(StatusCode::INTERNAL_SERVER_ERROR, &r),
    }
}

/// A 404 for any other `/oauth/…` path, uncached.
pub async fn not_found(_body: Body) -> Response {
    no_store(StatusCode::NOT_FOUND.into_response())
}
