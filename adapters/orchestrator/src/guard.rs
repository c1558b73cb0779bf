//! The HTTP guard in front of `/mcp`: Host and Origin validation (DNS-rebinding
//! protection, on by default), the bearer token, the request body cap, and the body read
//! whole before rmcp sees it (framing errors are 4xx, malformed JSON a JSON-RPC -32700).
//!
//! Checks run in that order, so a browser page on a rebound name learns nothing (403)
//! before the token is even looked at (401). rmcp validates Host and Origin again and
//! enforces the body cap while streaming; this layer answers earlier and uniformly.

use crate::edge;
use crate::oauth::{self, OAuth};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Hosts always allowed: loopback names and addresses.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
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
    oauth: Option<Arc<OAuth>>,
}

/// Origins of the browser-side MCP clients accepted when OAuth is on.
pub const OAUTH_CLIENT_ORIGINS: [&str; 3] = ["https://chatgpt.com", "https://claude.ai", "https://claude.com"];

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
            body_read_timeout_ms: edge::BODY_READ_TIMEOUT_MS_DEFAULT,
            origins: Vec::new(),
            oauth: None,
        }
    }

    /// With the authorization server: its public host accepted in `Host` and `Origin`,
    /// ChatGPT's and Claude's origins accepted, its tokens accepted on `/mcp`.
    pub fn with_oauth(mut self, oauth: Arc<OAuth>) -> Guard {
        if !self.hosts.contains(&oauth.public.host) {
            self.hosts.push(oauth.public.host.clone());
        }
        self.origins = OAUTH_CLIENT_ORIGINS.iter().map(|o| o.to_string()).collect();
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
        let presented = oauth::admin::bearer(headers);
        let static_ok = presented.is_some_and(|t| constant_time_eq(t.as_bytes(), self.token.as_bytes()));
        let oauth_ok = || presented.zip(self.oauth.as_ref()).is_some_and(|(t, o)| o.access_ok(t));
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
            Some(o) if host.is_some_and(|h| h == o.public.host) => {
                let sent = headers.get(header::AUTHORIZATION).is_some();
                HeaderValue::from_str(&o.challenge(sent)).unwrap_or(HeaderValue::from_static("Bearer"))
            }
            _ => HeaderValue::from_static("Bearer realm=\"orchestrator\""),
        }
    }

    /// Whether the request goes to an OAuth route (no bearer needed there).
    fn is_oauth_route(&self, path: &str) -> bool {
        let Some(o) = &self.oauth else { return false };
        let prefix = o.public.prefix.as_str();
        let path = match path.strip_prefix(prefix) {
            Some(rest) if !prefix.is_empty() && rest.starts_with('/') => rest,
            _ => path,
        };
        oauth::is_open_path(path)
    }
}

/// The axum middleware: the header checks, then the body read whole (a body that breaks
/// its framing is a 400, one that trickles a 408: never rmcp's 500), then the request is
/// marked as being answered (the edge's idle timeout waits for a long poll). A body that
/// is not JSON, or JSON that is no JSON-RPC message, is a 400 with a JSON-RPC error.
pub async fn guard(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    if guard.is_oauth_route(request.uri().path()) {
        // The OAuth endpoints read their own bodies with their own caps (oauth/http.rs);
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
    // The credential has done its work: nothing behind the guard (rmcp, its logs) sees it.
    request.headers_mut().remove(header::AUTHORIZATION);
    let (parts, body) = request.into_parts();
    let bytes = match edge::read_body(body, guard.body_bytes_max, guard.body_read_timeout_ms).await {
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
    let answering = edge::answering(&request);
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

/// The host name of a `Host` header value, lowercase, without port or brackets.
pub fn host_name(value: &str) -> Option<String> {
    let value = value.trim();
    let host = if let Some(rest) = value.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))) {
            return None;
        }
        inside
    } else {
        match value.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !h.contains(':') => h,
            Some(_) => return None,
            None => value,
        }
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The host name of an `Origin` header value (`http(s)://host[:port]`); `null` and
/// other schemes have none.
pub fn origin_host(value: &str) -> Option<String> {
    let rest = value.strip_prefix("http://").or_else(|| value.strip_prefix("https://"))?;
    let authority = rest.split('/').next()?;
    if authority.contains('@') {
        return None;
    }
    host_name(authority)
}

/// Compares without an early exit, so the time taken does not tell how much matched.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
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
    fn hosts_and_origins() {
        assert_eq!(host_name("127.0.0.1:7411").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_name("[::1]:7411").as_deref(), Some("::1"));
        assert_eq!(host_name("LocalHost").as_deref(), Some("localhost"));
        assert_eq!(host_name("evil.example:80").as_deref(), Some("evil.example"));
        assert_eq!(host_name("a:b:c"), None);
        assert_eq!(origin_host("http://localhost:3000").as_deref(), Some("localhost"));
        assert_eq!(origin_host("null"), None);
        assert_eq!(origin_host("file://x"), None);
        assert_eq!(origin_host("http://user@localhost"), None);
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
