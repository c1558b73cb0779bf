//! The orchestrator's MCP server as a CLI child sees it: where it is, the token it sends
//! (only through an environment variable, never in a file or an argument), the name the CLI
//! configures it under, and a probe that proves it answers before a prompt goes in.
//!
//! A CLI worker finishes only by calling `worker_complete` on this server. A child started
//! without a working connection to it would run turns that can never complete, so every
//! kind fails closed: Codex marks the server `required` and reports its startup status
//! (`mcpServer/startupStatus/updated`); Claude Code prints nothing before its first user
//! line, so the executor calls [`probe`] itself before writing one. The probe is the MCP
//! handshake a client does (`initialize`, then `tools/list`) with the worker's bearer token,
//! and it checks that `worker_complete` is offered.

use crate::Error;
use crate::base::limits::{MCP_PROBE_BYTES_MAX, MCP_PROBE_TIMEOUT_MS};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::time::Duration;

/// The variable that carries the bearer token to the child. Its name contains `TOKEN`, so
/// Codex's default `shell_environment_policy` strips it from the commands the model runs.
pub const MCP_TOKEN_ENV: &str = "ORCHESTRATOR_MCP_TOKEN";

/// The name the CLI's configuration gives the server: Claude Code names its tools
/// `mcp__orchestrator__<tool>`, Codex `orchestrator__<tool>` in its tool list.
pub const MCP_SERVER_NAME: &str = "orchestrator";

/// The stable code of an MCP server a child cannot use (what [`Error::McpUnreachable`]'s
/// `code()` says: the error does not import this module, and a test here checks they
/// agree): a command failed for it says `HOST_UI_CHANGED` with a detail starting
/// `MCP_UNREACHABLE:`.
pub const UNREACHABLE: &str = "MCP_UNREACHABLE";

/// The tool without which a worker can never finish: the probe checks it is offered.
pub const COMPLETION_TOOL: &str = "worker_complete";

/// The MCP protocol version the probe asks for (the daemon's rmcp speaks it).
const PROTOCOL_VERSION: &str = "2025-11-25";

/// The daemon's MCP endpoint and the token a CLI child authenticates with.
#[derive(Clone, PartialEq, Eq)]
pub struct McpServer {
    /// `http://HOST:PORT/mcp` (the daemon serves MCP and `/executor` on one port).
    pub url: String,
    /// The bearer token (the daemon's MCP token). Never logged: see the `Debug` impl.
    pub token: String,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("url", &self.url).field("token", &"<redacted>").finish()
    }
}

impl McpServer {
    /// The variables a child gets so its CLI can reach the server: the token, by name.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![(MCP_TOKEN_ENV.to_string(), self.token.clone())]
    }
}

/// The MCP endpoint of the daemon whose executor endpoint is `daemon_url`
/// (`ws://HOST:PORT/executor` → `http://HOST:PORT/mcp`); `None` for anything else.
pub fn url_from_daemon(daemon_url: &str) -> Option<String> {
    let (scheme, rest) = if let Some(rest) = daemon_url.strip_prefix("ws://") {
        ("http", rest)
    } else {
        ("https", daemon_url.strip_prefix("wss://")?)
    };
    let authority = rest.split('/').next().filter(|a| !a.is_empty())?;
    Some(format!("{scheme}://{authority}/mcp"))
}

/// Proves the server answers the MCP handshake with this token and offers
/// [`COMPLETION_TOOL`], within [`MCP_PROBE_TIMEOUT_MS`]. [`Error::McpUnreachable`] says
/// what failed (connection, status, answer) without the token.
pub async fn probe(server: &McpServer) -> Result<(), Error> {
    let unreachable = |detail: String| Error::McpUnreachable { url: server.url.clone(), detail };
    let (authority, path) = split_http_url(&server.url).map_err(unreachable)?;
    let attempt = async {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "orchestrator-cli-executor", "version": env!("CARGO_PKG_VERSION")},
        }});
        let (answer, session) = post(&authority, &path, &server.token, None, &init).await?;
        if answer.get("result").and_then(|r| r.get("serverInfo")).is_none() {
            return Err(format!("initialize was not answered: {}", short(&answer)));
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post_notification(&authority, &path, &server.token, session.as_deref(), &initialized).await?;
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
        let (answer, _) = post(&authority, &path, &server.token, session.as_deref(), &list).await?;
        let offered = answer
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| tools.iter().any(|t| t.get("name").and_then(Value::as_str) == Some(COMPLETION_TOOL)));
        if !offered {
            return Err(format!("tools/list does not offer {COMPLETION_TOOL}"));
        }
        Ok(())
    };
    match tokio::time::timeout(Duration::from_millis(MCP_PROBE_TIMEOUT_MS), attempt).await {
        Ok(result) => result.map_err(unreachable),
        Err(_) => Err(unreachable(format!("no answer within {MCP_PROBE_TIMEOUT_MS} ms"))),
    }
}

/// `http://authority/path` split; only plain HTTP: the executor runs beside the daemon.
fn split_http_url(url: &str) -> Result<(String, String), String> {
    let rest = url.strip_prefix("http://").ok_or_else(|| format!("{url}: only http:// is supported"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(format!("{url}: no host"));
    }
    Ok((authority.to_string(), path.to_string()))
}

/// One JSON-RPC request: the answer (from a JSON body or the first SSE `data:` line) and
/// the `Mcp-Session-Id` the server gave, if any.
async fn post(
    authority: &str,
    path: &str,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> Result<(Value, Option<String>), String> {
    let (status, headers, text) = send(authority, path, token, session, body).await?;
    if status != StatusCode::OK {
        return Err(format!("HTTP {status} for {}", body["method"].as_str().unwrap_or("?")));
    }
    let session = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    let json_text = if headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"))
    {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|d| !d.is_empty())
            .unwrap_or_default()
            .to_string()
    } else {
        text
    };
    let answer = serde_json::from_str(&json_text).map_err(|e| format!("the answer is not JSON-RPC: {e}"))?;
    Ok((answer, session))
}

/// A notification: accepted with 202 (or 200).
async fn post_notification(
    authority: &str,
    path: &str,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> Result<(), String> {
    let (status, _, _) = send(authority, path, token, session, body).await?;
    if status != StatusCode::ACCEPTED && status != StatusCode::OK {
        return Err(format!("HTTP {status} for {}", body["method"].as_str().unwrap_or("?")));
    }
    Ok(())
}

/// One POST on its own connection; the body read up to [`MCP_PROBE_BYTES_MAX`].
async fn send(
    authority: &str,
    path: &str,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> Result<(StatusCode, hyper::HeaderMap, String), String> {
    let addr = if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") };
    let stream = tokio::net::TcpStream::connect(&addr).await.map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| format!("HTTP: {e}"))?;
    let driver = tokio::spawn(connection);
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(hyper::header::HOST, authority)
        .header(hyper::header::AUTHORIZATION, format!("Bearer {token}"))
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL_VERSION);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let request =
        request.body(Full::new(Bytes::from(body.to_string()))).map_err(|e| format!("cannot build a request: {e}"))?;
    let response = sender.send_request(request).await.map_err(|e| format!("HTTP: {e}"))?;
    let (parts, body) = response.into_parts();
    let bytes = Limited::new(body, MCP_PROBE_BYTES_MAX)
        .collect()
        .await
        .map_err(|e| format!("reading the answer: {e}"))?
        .to_bytes();
    driver.abort();
    Ok((parts.status, parts.headers, String::from_utf8_lossy(&bytes).into_owned()))
}

/// A JSON value cut for an error line.
fn short(value: &Value) -> String {
    let text = value.to_string();
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_url_follows_the_daemon_url_and_the_token_is_never_printed() {
        assert_eq!(url_from_daemon("ws://127.0.0.1:7411/executor").as_deref(), Some("http://127.0.0.1:7411/mcp"));
        assert_eq!(url_from_daemon("wss://example.org/executor").as_deref(), Some("https://example.org/mcp"));
        assert_eq!(url_from_daemon("http://127.0.0.1:7411/executor"), None);
        assert_eq!(url_from_daemon("ws:///executor"), None);
        let server = McpServer { url: "http://127.0.0.1:1/mcp".to_string(), token: "s3cret-token-value".to_string() };
        assert!(!format!("{server:?}").contains("s3cret"), "{server:?}");
        assert_eq!(server.env(), vec![(MCP_TOKEN_ENV.to_string(), "s3cret-token-value".to_string())]);
    }

    #[tokio::test]
    async fn a_probe_of_nothing_listening_is_mcp_unreachable_without_the_token() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        drop(listener);
        let server = McpServer { url: format!("http://127.0.0.1:{port}/mcp"), token: "s3cret-token-value".to_string() };
        let err = probe(&server).await.expect_err("nothing listens");
        assert_eq!(err.code(), "MCP_UNREACHABLE");
        assert_eq!(err.code(), UNREACHABLE, "the constant is the error's code");
        assert!(!err.to_string().contains("s3cret"), "{err}");
        let https = McpServer { url: "https://example.org/mcp".to_string(), token: "t".to_string() };
        assert_eq!(probe(&https).await.map_err(|e| e.code()), Err("MCP_UNREACHABLE"));
    }
}
