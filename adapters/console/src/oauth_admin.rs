//! The client of the daemon's OAuth admin API (`/oauth/admin/{verb}`, loopback only, the
//! static MCP token): what `orchestrator oauth pending|approve|deny|list|revoke` send to a
//! running daemon.

use http_body_util::{BodyExt, Full};
use hyper::Method;
use hyper::body::Bytes;
use hyper::header;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// How long the CLI waits for the daemon's answer, in milliseconds.
pub const ADMIN_CALL_TIMEOUT_MS: u64 = 10_000;

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
