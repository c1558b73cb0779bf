//! The HTTP guard in front of `/mcp`: Host and Origin validation (DNS-rebinding
//! protection, on by default), the bearer token, the request body cap, and the body read
//! whole before rmcp sees it (framing errors are 4xx, malformed JSON a JSON-RPC -32700).
//!
//! Checks run in that order, so a browser page on a rebound name learns nothing (403)
//! before the token is even looked at (401). rmcp validates Host and Origin again and
//! enforces the body cap while streaming; this layer answers earlier and uniformly.
//!
//! Access tokens of an authorization server are accepted beside the static token through
//! [`AccessTokens`], which the `oauth` crate implements: the guard knows no OAuth type.

use crate::activity::answering;
use crate::body::read_body;
use crate::gate::establish;
use crate::headers::{LOOPBACK_HOSTS, bearer, constant_time_eq, host_name, origin_host};
use crate::limits::BODY_READ_TIMEOUT_MS_DEFAULT;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Largest accepted request body. The largest legitimate call (`worker_spawn` with 64
/// acceptance criteria of 32 KiB each, JSON-escaped) stays well below it.
pub const REQUEST_BODY_BYTES_MAX: usize = 4 * 1024 * 1024;

/// What the guard checks.
#[derive(Clone, Debug)]
pub struct Guard {
    /// The bearer token callers must present.
    token: String,
    /// Host names (without port) accepted in `Host` and `Origin`, lowercase.
    hosts: Vec<String>,
    /// Requests with a larger body are refused with 413.
    body_bytes_max: usize,
    /// A body must arrive whole within this long (408 otherwise).
    body_read_timeout_ms: u64,
    /// Origins accepted exactly (ChatGPT's and Claude's, when OAuth is on).
    origins: Vec<String>,
    /// The authorization server, with `--public-url`: its routes pass without a token,
    /// and its access tokens are accepted on `/mcp` beside the static one.
    oauth: Option<Arc<dyn AccessTokens>>,
}

/// What the guard asks of an authorization server whose access tokens it accepts beside
/// the static token (the `oauth` crate's `OAuth` implements it). The seam that keeps the
/// edge below the OAuth server: the server uses the edge's helpers, never the other way.
pub trait AccessTokens: Send + Sync + std::fmt::Debug {
    /// The public host name, lowercase: accepted in `Host` and `Origin`; a 401 on it
    /// carries [`AccessTokens::challenge`].
    fn public_host(&self) -> &str;
    /// Origins accepted exactly besides the allowed hosts' (the server's browser-side
    /// clients).
    fn client_origins(&self) -> Vec<String>;
    /// Whether the request path goes to one of the server's own routes: no bearer token
    /// is needed there (they read their own bodies and check their own callers); Host and
    /// Origin are checked as for every route.
    fn is_own_route(&self, path: &str) -> bool;
    /// Whether `token` is a live access token of the server.
    fn accepts(&self, token: &str) -> bool;
    /// The `WWW-Authenticate` value of a 401 on the public host.
    fn challenge(&self, token_sent: bool) -> String;
}

impl Guard {
    /// A guard for `token`, accepting loopback plus `extra_hosts`.
    pub fn new(token: &str, extra_hosts: &[String], body_bytes_max: usize) -> Guard {
        let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        for h in extra_hosts {
            let h = h.trim().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
            if !h.is_empty() && !hosts.contains(&h) {
                hosts.push(h);
            }
        }
        Guard {
            token: token.to_string(),
            hosts,
            body_bytes_max,
            body_read_timeout_ms: BODY_READ_TIMEOUT_MS_DEFAULT,
            origins: Vec::new(),
            oauth: None,
        }
    }

    /// With the authorization server: its public host accepted in `Host` and `Origin`,
    /// its clients' origins accepted, its tokens accepted on `/mcp`.
    pub fn with_access_tokens(mut self, oauth: Arc<dyn AccessTokens>) -> Guard {
        if !self.hosts.iter().any(|h| h == oauth.public_host()) {
            self.hosts.push(oauth.public_host().to_string());
        }
        self.origins = oauth.client_origins();
        self.oauth = Some(oauth);
        self
    }

    /// With this body deadline.
    pub fn with_body_read_timeout_ms(mut self, ms: u64) -> Guard {
        self.body_read_timeout_ms = ms;
        self
    }

    /// The accepted host names.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    fn host_allowed(&self, host: &str) -> bool {
        self.hosts.iter().any(|h| h == host)
    }

    /// The verdict on a request's Host and Origin: `None` lets it through.
    pub fn check_origin(&self, headers: &HeaderMap) -> Option<(StatusCode, &'static str)> {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).and_then(host_name);
        match host {
            Some(h) if self.host_allowed(&h) => {}
            _ => return Some((StatusCode::FORBIDDEN, "Host not allowed (use --allow-host to add one)")),
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let exact = origin.to_str().is_ok_and(|o| self.origins.iter().any(|a| a.eq_ignore_ascii_case(o)));
            let ok = exact || origin.to_str().ok().and_then(origin_host).is_some_and(|h| self.host_allowed(&h));
            if !ok {
                return Some((StatusCode::FORBIDDEN, "Origin not allowed"));
            }
        }
        None
    }

    /// The verdict on a request's headers: `None` lets it through.
    pub fn check(&self, headers: &HeaderMap) -> Option<(StatusCode, &'static str)> {
        if let Some(refused) = self.check_origin(headers) {
            return Some(refused);
        }
        let presented = bearer(headers);
        let static_ok = presented.is_some_and(|t| constant_time_eq(t.as_bytes(), self.token.as_bytes()));
        let oauth_ok = || presented.zip(self.oauth.as_ref()).is_some_and(|(t, o)| o.accepts(t));
        if !static_ok && !oauth_ok() {
            return Some((StatusCode::UNAUTHORIZED, "missing or wrong bearer token"));
        }
        let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.body_bytes_max as u64) {
            return Some((StatusCode::PAYLOAD_TOO_LARGE, "request body too large"));
        }
        None
    }

    /// The `WWW-Authenticate` of a 401: the resource-metadata challenge on the public
    /// host, the plain one elsewhere (a loopback client with a static token is never
    /// steered into OAuth; anthropics/claude-code#59467).
    fn challenge(&self, headers: &HeaderMap) -> HeaderValue {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).and_then(host_name);
        match &self.oauth {
            Some(o) if host.is_some_and(|h| h == o.public_host()) => {
                let sent = headers.get(header::AUTHORIZATION).is_some();
                HeaderValue::from_str(&o.challenge(sent)).unwrap_or(HeaderValue::from_static("Bearer"))
            }
            _ => HeaderValue::from_static("Bearer realm=\"orchestrator\""),
        }
    }

    /// Whether the request goes to an OAuth route (no bearer needed there).
    fn is_oauth_route(&self, path: &str) -> bool {
        self.oauth.as_ref().is_some_and(|o| o.is_own_route(path))
    }
}

/// The axum middleware: the header checks (a request that passes them establishes its
/// connection: never shed after that), then the body read whole (a body that breaks
/// its framing is a 400, one that trickles a 408: never rmcp's 500), then the request is
/// marked as being answered (the edge's idle timeout waits for a long poll). A body that
/// is not JSON, or JSON that is no JSON-RPC message, is a 400 with a JSON-RPC error.
pub async fn guard(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    if guard.is_oauth_route(request.uri().path()) {
        // The OAuth endpoints read their own bodies with their own caps (the oauth crate);
        // Host and Origin are checked here as for every route.
        if let Some((status, why)) = guard.check_origin(request.headers()) {
            tracing::debug!(%status, why, "OAuth request refused");
            return (status, Body::from(format!("{why}\n"))).into_response();
        }
        return next.run(request).await;
    }
    if let Some((status, why)) = guard.check(request.headers()) {
        tracing::debug!(%status, why, "request refused");
        let mut response = (status, Body::from(format!("{why}\n"))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, guard.challenge(request.headers()));
        }
        return response;
    }
    // The client proved itself: its connection leaves the pending pool for good.
    establish(&request);
    // The credential has done its work: nothing behind the guard (rmcp, its logs) sees it.
    request.headers_mut().remove(header::AUTHORIZATION);
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body, guard.body_bytes_max, guard.body_read_timeout_ms).await {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::debug!(code = e.code(), error = %e, "request body refused");
            return e.into_response();
        }
    };
    let declares_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json")));
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    let answering = answering(&request);
    let response = next.run(request).await;
    drop(answering);
    // rmcp answers a JSON body it cannot decode with 415; the media type was right, the
    // content was not: that is JSON-RPC's parse error (or invalid request).
    if declares_json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return json_rpc_error(&bytes);
    }
    response
}

/// JSON-RPC code of a body that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC code of JSON that is not a JSON-RPC message.
pub const INVALID_REQUEST: i64 = -32600;

/// A 400 with the JSON-RPC error for an undecodable body.
fn json_rpc_error(body: &[u8]) -> Response {
    let (code, message) = match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        Err(_) => (PARSE_ERROR, "Parse error: the request body is not JSON"),
        Ok(_) => (INVALID_REQUEST, "Invalid Request: the body is JSON but not a JSON-RPC message"),
    };
    let error = serde_json::json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], error.to_string()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn verdicts() {
        let g = Guard::new("secret-token-123456", &["Tunnel.Example".into()], 100);
        let ok = [("host", "127.0.0.1:7411"), ("authorization", "Bearer secret-token-123456")];
        assert_eq!(g.check(&headers(&ok)), None);
        let tunnel = [("host", "tunnel.example"), ("authorization", "bearer secret-token-123456")];
        assert_eq!(g.check(&headers(&tunnel)), None);
        let evil = [("host", "evil.example"), ("authorization", "Bearer secret-token-123456")];
        assert_eq!(g.check(&headers(&evil)).map(|v| v.0), Some(StatusCode::FORBIDDEN));
        let origin = [("host", "localhost"), ("origin", "http://evil.example"), ok[1]];
        assert_eq!(g.check(&headers(&origin)).map(|v| v.0), Some(StatusCode::FORBIDDEN));
        let good_origin = [("host", "localhost"), ("origin", "http://localhost:5173"), ok[1]];
        assert_eq!(g.check(&headers(&good_origin)), None);
        let wrong = [("host", "localhost"), ("authorization", "Bearer secret-token-123457")];
        assert_eq!(g.check(&headers(&wrong)).map(|v| v.0), Some(StatusCode::UNAUTHORIZED));
        assert_eq!(g.check(&headers(&[("host", "localhost")])).map(|v| v.0), Some(StatusCode::UNAUTHORIZED));
        let big = [ok[0], ok[1], ("content-length", "101")];
        assert_eq!(g.check(&headers(&big)).map(|v| v.0), Some(StatusCode::PAYLOAD_TOO_LARGE));
        assert!(
            constant_time_eq(b"abc", b"abc") && !constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"ab", b"abc")
        );
    }
}
