//! A small MCP client over streamable HTTP: JSON-RPC requests on one keep-alive
//! HTTP/1.1 connection, the session header, and answers as JSON or as an SSE stream.
//! Used by `orchestrator status`, the integration tests and the benchmark. Its failures
//! are [`ClientError`]s (inside the `anyhow::Error` its methods return), so a command can
//! tell a daemon that is not there from one that refuses the token or the action.

use anyhow::{Context, bail};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// The protocol version the client asks for (sessions, `initialize`).
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// An HTTP answer, raw.
#[derive(Debug)]
pub struct RawResponse {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: hyper::HeaderMap,
    /// The JSON-RPC message that answered (from JSON or the SSE stream), if any.
    pub message: Option<Value>,
    /// The body text when it was not a JSON-RPC answer.
    pub text: String,
}

/// The result of one tool call.
#[derive(Debug, Clone)]
pub struct ToolResult {
    /// `isError` of the result.
    pub is_error: bool,
    /// A success's `structuredContent`; a refusal's `{code, message}`, which the server
    /// sends as JSON text content (or `Null`).
    pub structured: Value,
}

/// Why a call to the daemon failed, with a stable code: what the commands tell a person
/// apart (`crate::reach` words the first two for the data directory in use).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens at the address (the daemon is not running there).
    #[error("nothing answers at {addr}: {source}")]
    Unreachable {
        /// `host:port`.
        addr: String,
        /// The connection error.
        source: std::io::Error,
    },
    /// The daemon answered 401: the token is missing or not the one it was started with.
    #[error("the daemon refused the MCP token (HTTP 401)")]
    Unauthorized,
    /// Another HTTP failure.
    #[error("HTTP {status} from the daemon: {body}")]
    Http {
        /// The status.
        status: StatusCode,
        /// The body, trimmed.
        body: String,
    },
    /// The daemon is a standby of a Postgres database (HTTP 503, `NOT_LEADER`): another
    /// daemon leads it, at `leader`.
    #[error(
        "this daemon is a standby: not the leader; the leader is {leader} (NOT_LEADER); point the command at the leader (--url {leader})"
    )]
    NotLeader {
        /// The leader's MCP URL, as the standby named it.
        leader: String,
    },
    /// The daemon refused the tool call: the engine's stable code and its message.
    #[error("{tool} refused: {message} ({code})")]
    Refused {
        /// The tool.
        tool: String,
        /// The stable code, e.g. `ROOT_LIFECYCLE`.
        code: String,
        /// The daemon's message (written for the calling agent).
        message: String,
    },
}

impl ClientError {
    /// A stable code for the error.
    pub fn code(&self) -> &str {
        match self {
            ClientError::Unreachable { .. } => "DAEMON_UNREACHABLE",
            ClientError::Unauthorized => "TOKEN_REFUSED",
            ClientError::Http { .. } => "DAEMON_HTTP",
            ClientError::NotLeader { .. } => "NOT_LEADER",
            ClientError::Refused { code, .. } => code,
        }
    }
}

/// One MCP session over one HTTP connection.
pub struct McpClient {
    /// `host:port` for the Host header and the connection.
    authority: String,
    /// The endpoint path, e.g. `/mcp`.
    path: String,
    /// Bearer token, if any.
    token: Option<String>,
    /// `Mcp-Session-Id` after `initialize`, when the server keeps sessions.
    session: Option<String>,
    /// The protocol version `initialize` settled on: sent as `MCP-Protocol-Version` on every
    /// later request (a stateless server has no session to remember it by).
    protocol: Option<String>,
    /// The connection.
    sender: SendRequest<Full<Bytes>>,
    /// Next JSON-RPC id.
    next_id: u64,
}

/// Splits `http://host:port/path` into authority and path.
pub fn parse_url(url: &str) -> anyhow::Result<(String, String)> {
    let rest = url.strip_prefix("http://").context("only http:// URLs are supported (the daemon serves loopback)")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        bail!("no host in {url}");
    }
    Ok((authority.to_string(), path.to_string()))
}

/// One HTTP/1.1 connection.
async fn open(authority: &str) -> anyhow::Result<SendRequest<Full<Bytes>>> {
    let addr = if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") };
    let stream = tokio::net::TcpStream::connect(&addr)
        .await
        .map_err(|source| ClientError::Unreachable { addr: addr.clone(), source })?;
    stream.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

impl McpClient {
    /// Opens a connection without initializing (for raw requests).
    pub async fn connect_raw(url: &str, token: Option<&str>) -> anyhow::Result<McpClient> {
        let (authority, path) = parse_url(url)?;
        let sender = open(&authority).await?;
        Ok(McpClient {
            authority,
            path,
            token: token.map(String::from),
            session: None,
            protocol: None,
            sender,
            next_id: 1,
        })
    }

    /// The MCP endpoint this session talks to (`http://HOST:PORT/PATH`).
    pub fn url(&self) -> String {
        format!("http://{}{}", self.authority, self.path)
    }

    /// Connects and performs the `initialize` handshake.
    pub async fn connect(url: &str, token: Option<&str>) -> anyhow::Result<McpClient> {
        let mut client = McpClient::connect_raw(url, token).await?;
        let init = client
            .request(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": { "name": "orchestrator-client", "version": env!("CARGO_PKG_VERSION") }
                }),
            )
            .await?;
        let Some(protocol) = init.get("protocolVersion").and_then(Value::as_str) else {
            bail!("unexpected initialize answer: {init}");
        };
        client.protocol = Some(protocol.to_string());
        client.notify("notifications/initialized", json!({})).await?;
        Ok(client)
    }

    /// Sends one HTTP request with the usual headers plus `extra`.
    pub async fn send(
        &mut self,
        method: Method,
        body: Option<&Value>,
        extra: &[(&str, &str)],
        id: Option<u64>,
    ) -> anyhow::Result<RawResponse> {
        let mut builder = Request::builder()
            .method(method)
            .uri(&self.path)
            .header("host", &self.authority)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(token) = &self.token {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        if let Some(session) = &self.session {
            builder = builder.header("mcp-session-id", session);
        }
        if let Some(protocol) = &self.protocol {
            builder = builder.header("mcp-protocol-version", protocol);
        }
        if let Some(headers) = builder.headers_mut() {
            for (k, v) in extra {
                let name = hyper::header::HeaderName::from_bytes(k.as_bytes())?;
                headers.insert(name, hyper::header::HeaderValue::from_str(v)?);
            }
        }
        let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        // An answer stream left unfinished (we stop reading once our answer arrived)
        // closes the connection: open a fresh one; the session lives on the server.
        if self.sender.ready().await.is_err() {
            self.sender = open(&self.authority).await?;
        }
        let response = self.sender.send_request(builder.body(Full::new(bytes))?).await?;
        let status = response.status();
        let headers = response.headers().clone();
        let sse = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut body = response.into_body();
        let mut text = String::new();
        let mut message = None;
        if sse {
            // Read events until the answer to our id arrives; the stream may stay open.
            let mut buffer = String::new();
            'read: while let Some(frame) = body.frame().await {
                let frame = frame?;
                let Some(chunk) = frame.data_ref() else { continue };
                buffer.push_str(&String::from_utf8_lossy(chunk));
                while let Some(end) = buffer.find("\n\n") {
                    let event: String = buffer.drain(..end + 2).collect();
                    let data: String = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(|d| d.strip_prefix(' ').unwrap_or(d))
                        .collect::<Vec<_>>()
                        .join("\n");
                    if data.is_empty() {
                        continue;
                    }
                    if let Ok(v) = serde_json::from_str::<Value>(&data)
                        && (id.is_none() || v.get("id").and_then(Value::as_u64) == id)
                    {
                        message = Some(v);
                        break 'read;
                    }
                }
            }
            // The server ends a request's stream after its answer: read to the end so
            // the connection can carry the next request (if it lingers, reconnect).
            let drain = async { while let Some(Ok(_)) = body.frame().await {} };
            let _ = tokio::time::timeout(std::time::Duration::from_millis(200), drain).await;
        } else {
            let collected = body.collect().await?.to_bytes();
            text = String::from_utf8_lossy(&collected).to_string();
            message = serde_json::from_str::<Value>(&text).ok().filter(|v| v.get("jsonrpc").is_some());
        }
        Ok(RawResponse { status, headers, message, text })
    }

    /// A JSON-RPC request; returns its `result`, or fails with its `error`.
    pub async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let response = self.send(Method::POST, Some(&body), &[], Some(id)).await?;
        if response.status == StatusCode::UNAUTHORIZED {
            return Err(ClientError::Unauthorized.into());
        }
        if let Some(leader) = not_leader(response.status, &response.text) {
            return Err(ClientError::NotLeader { leader }.into());
        }
        if !response.status.is_success() {
            return Err(ClientError::Http { status: response.status, body: response.text.trim().to_string() }.into());
        }
        if let Some(session) = response.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            self.session = Some(session.to_string());
        }
        let message = response.message.context("the daemon sent no JSON-RPC answer")?;
        if let Some(error) = message.get("error") {
            bail!("JSON-RPC error: {error}");
        }
        message.get("result").cloned().context("JSON-RPC answer without result")
    }

    /// A JSON-RPC notification.
    pub async fn notify(&mut self, method: &str, params: Value) -> anyhow::Result<()> {
        let body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        let response = self.send(Method::POST, Some(&body), &[], None).await?;
        if response.status == StatusCode::UNAUTHORIZED {
            return Err(ClientError::Unauthorized.into());
        }
        if !response.status.is_success() {
            bail!("HTTP {} for {method}", response.status);
        }
        Ok(())
    }

    /// Calls a tool.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> anyhow::Result<ToolResult> {
        let result = self.request("tools/call", json!({ "name": name, "arguments": arguments })).await?;
        let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let structured = if is_error {
            let text = result.pointer("/content/0/text").and_then(Value::as_str).unwrap_or("");
            serde_json::from_str(text).unwrap_or_else(|_| json!({ "code": "", "message": text }))
        } else {
            result.get("structuredContent").cloned().unwrap_or(Value::Null)
        };
        Ok(ToolResult { is_error, structured })
    }

    /// Calls a tool that must succeed; returns its structured content.
    pub async fn call_ok(&mut self, name: &str, arguments: Value) -> anyhow::Result<Value> {
        let result = self.call_tool(name, arguments).await?;
        if result.is_error {
            let text = |k: &str| result.structured.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            return Err(
                ClientError::Refused { tool: name.to_string(), code: text("code"), message: text("message") }.into()
            );
        }
        Ok(result.structured)
    }
}

/// The leader a standby names in its answer (HTTP 503 and `{"code":"NOT_LEADER","leader":URL}`).
pub fn not_leader(status: StatusCode, body: &str) -> Option<String> {
    if status != StatusCode::SERVICE_UNAVAILABLE {
        return None;
    }
    let answer: Value = serde_json::from_str(body).ok()?;
    if answer.get("code").and_then(Value::as_str) != Some("NOT_LEADER") {
        return None;
    }
    Some(answer.get("leader").and_then(Value::as_str).filter(|l| !l.is_empty()).unwrap_or("unknown").to_string())
}
