//! Pairing from the command line (docs/operator.md "Pairing"): `orchestrator pair` asks the
//! running daemon for a fresh one-time code (`POST /pair/code` with the static MCP token)
//! and prints it with its lifetime; `orchestrator executor-cli --pair CODE` exchanges a
//! code for the executor token (`POST /pair`) before it connects. Plain HTTP/1 on the
//! daemon's address (loopback, or a deliberately exposed `ws://` address); the code and the
//! tokens are never printed by the exchange.

use crate::reach::Target;
use address::pair::{CLIENT_CLI_EXECUTOR, PAIR_CODE_PATH, PAIR_PATH, PairAnswer, PairIssued, PairRefusal, PairRequest};
use http_body_util::{BodyExt, Full};
use hyper::Method;
use hyper::body::Bytes;
use hyper::header;
use hyper_util::rt::TokioIo;

/// How long a pairing call waits for the daemon, in milliseconds.
pub const PAIR_CALL_TIMEOUT_MS: u64 = 10_000;
/// The most of an answer read, in bytes (a pairing answer is a few hundred).
const ANSWER_BYTES_MAX: usize = 64 * 1024;

/// Why pairing failed, with a stable code.
#[derive(Debug, thiserror::Error)]
pub enum PairClientError {
    /// Nothing answers at the address.
    #[error("nothing answers at {addr}: is the daemon running there? ({source})")]
    Unreachable {
        /// `host:port`.
        addr: String,
        /// The connection error.
        source: std::io::Error,
    },
    /// The daemon refused, with its own code and sentence.
    #[error("the daemon refused: {message} ({code}, HTTP {status})")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The daemon's stable code (`PAIR_CODE_WRONG`, ...).
        code: String,
        /// Its sentence.
        message: String,
    },
    /// The address is not one this client speaks (`wss://`, `https://`: no TLS here).
    #[error("{0}")]
    Address(String),
    /// The exchange failed or timed out, or the answer was not the expected JSON.
    #[error("pairing failed: {0}")]
    Http(String),
}

impl PairClientError {
    /// A stable code for the error.
    pub fn code(&self) -> &str {
        match self {
            PairClientError::Unreachable { .. } => "PAIR_UNREACHABLE",
            PairClientError::Refused { code, .. } => code,
            PairClientError::Address(_) => "PAIR_ADDRESS",
            PairClientError::Http(_) => "PAIR_HTTP",
        }
    }
}

/// `host:port` of a daemon URL (`ws://HOST:PORT/executor`, `http://HOST:PORT/...`).
pub fn authority_of(url: &str) -> Result<String, PairClientError> {
    let rest = url.strip_prefix("ws://").or_else(|| url.strip_prefix("http://")).ok_or_else(|| {
        PairClientError::Address(format!(
            "--daemon {url}: pairing speaks plain ws:// or http:// (loopback, or an address the daemon was exposed on \
             with --executor-allow-remote); over TLS, copy the executor token file instead (docs/operator.md \"Pairing\")"
        ))
    })?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() || authority.contains('@') {
        return Err(PairClientError::Address(format!("--daemon {url}: no host:port")));
    }
    Ok(if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") })
}

/// One JSON call: status and body.
async fn call(
    addr: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: String,
) -> Result<(u16, Bytes), PairClientError> {
    call_within(addr, method, path, token, body, PAIR_CALL_TIMEOUT_MS).await
}

/// One HTTP/1 exchange with the daemon at `addr` (also `orchestrator notify test`'s, which
/// waits for the daemon's posts): the status and the body, bounded in size and time.
pub(crate) async fn call_within(
    addr: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: String,
    timeout_ms: u64,
) -> Result<(u16, Bytes), PairClientError> {
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|source| PairClientError::Unreachable { addr: addr.to_string(), source })?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| PairClientError::Http(e.to_string()))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, addr)
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(token) = token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request.body(Full::new(Bytes::from(body))).map_err(|e| PairClientError::Http(e.to_string()))?;
        let response = sender.send_request(request).await.map_err(|e| PairClientError::Http(e.to_string()))?;
        let status = response.status().as_u16();
        let limited = http_body_util::Limited::new(response.into_body(), ANSWER_BYTES_MAX);
        let bytes = limited.collect().await.map_err(|e| PairClientError::Http(e.to_string()))?.to_bytes();
        Ok((status, bytes))
    };
    match tokio::time::timeout(std::time::Duration::from_millis(timeout_ms), exchange).await {
        Ok(result) => result,
        Err(_) => Err(PairClientError::Http(format!("no answer within {timeout_ms} ms"))),
    }
}

fn refused(status: u16, bytes: &[u8]) -> PairClientError {
    match serde_json::from_slice::<PairRefusal>(bytes) {
        Ok(r) => PairClientError::Refused { status, code: r.code, message: r.message },
        Err(_) => PairClientError::Refused {
            status,
            code: "PAIR_UNKNOWN".to_string(),
            message: if status == 404 {
                "this daemon does not pair (an older version, or one started without the executor bridge)".to_string()
            } else {
                String::from_utf8_lossy(bytes).trim().chars().take(200).collect()
            },
        },
    }
}

/// `orchestrator pair`: a fresh code from the daemon `target` names.
pub async fn issue(target: &Target) -> anyhow::Result<PairIssued> {
    let (addr, _) = crate::client::parse_url(&target.url)?;
    let token = target.token.as_deref().unwrap_or_default();
    let (status, bytes) = match call(&addr, Method::POST, PAIR_CODE_PATH, Some(token), String::new()).await {
        Ok(answer) => answer,
        Err(PairClientError::Unreachable { .. }) => {
            let dir = target.data_dir.display().to_string();
            return Err(crate::reach::ReachError::NotRunning { url: target.url.clone(), dir }.into());
        }
        Err(e) => return Err(e.into()),
    };
    if status == 401 {
        return Err(target.explain(crate::client::ClientError::Unauthorized.into()));
    }
    if status != 200 {
        return Err(refused(status, &bytes).into());
    }
    Ok(serde_json::from_slice(&bytes).map_err(|e| PairClientError::Http(e.to_string()))?)
}

/// What `orchestrator pair` prints: the code, its lifetime, and where to type it.
pub fn issued_text(issued: &PairIssued, executor_url: &str) -> String {
    let minutes = issued.expires_in_ms.div_ceil(60_000);
    let lifetime = if issued.expires_in_ms >= 60_000 {
        format!("{minutes} minute{}", if minutes == 1 { "" } else { "s" })
    } else {
        format!("{} seconds", issued.expires_in_ms.div_ceil(1_000))
    };
    format!(
        "Pairing code {}, valid for {lifetime}, once.\n\
         Browser: open the extension's settings, Pair with this daemon, and type it.\n\
         Command-line executor: orchestrator executor-cli --pair {} --daemon {executor_url}\n",
        issued.code, issued.code
    )
}

/// `executor-cli --pair`: `code` exchanged at the daemon of `daemon_url` for the executor
/// token and the MCP token (its children call the tools with it).
pub async fn exchange(daemon_url: &str, code: &str, host: Option<&str>) -> Result<PairAnswer, PairClientError> {
    let addr = authority_of(daemon_url)?;
    let request = PairRequest {
        code: code.to_string(),
        client: Some(CLIENT_CLI_EXECUTOR.to_string()),
        host: host.map(str::to_string),
    };
    let body = serde_json::to_string(&request).map_err(|e| PairClientError::Http(e.to_string()))?;
    let (status, bytes) = call(&addr, Method::POST, PAIR_PATH, None, body).await?;
    if status != 200 {
        return Err(refused(status, &bytes));
    }
    serde_json::from_slice(&bytes).map_err(|e| PairClientError::Http(format!("an answer that is not pairing's: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_url_gives_the_address_and_tls_is_refused_with_what_to_do() {
        assert_eq!(authority_of("ws://127.0.0.1:7411/executor").unwrap(), "127.0.0.1:7411");
        assert_eq!(authority_of("http://box.lan:9000").unwrap(), "box.lan:9000");
        assert_eq!(authority_of("ws://box.lan/executor").unwrap(), "box.lan:80");
        let tls = authority_of("wss://o.example.com/executor").unwrap_err();
        assert!(tls.to_string().contains("copy the executor token"), "{tls}");
    }

    #[test]
    fn the_code_is_printed_with_its_lifetime_and_both_ways_to_use_it() {
        let issued = PairIssued { code: "4821-7730".into(), expires_in_ms: 600_000 };
        let text = issued_text(&issued, "ws://127.0.0.1:7411/executor");
        assert!(text.starts_with("Pairing code 4821-7730, valid for 10 minutes, once.\n"), "{text}");
        assert!(text.contains("executor-cli --pair 4821-7730 --daemon ws://127.0.0.1:7411/executor"), "{text}");
        let short = PairIssued { code: "1".into(), expires_in_ms: 1_500 };
        assert!(issued_text(&short, "x").contains("valid for 2 seconds"));
    }
}
