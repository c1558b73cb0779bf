//! The byte stream under a connection to a daemon: TCP to the host and port of its
//! `ws://` or `wss://` URL, and for `wss://` TLS over it with the certificate checked
//! against the host name. The executor's WebSocket and the MCP relay (`mcp_relay`) both
//! reach the daemon through it.

use crate::Error;

/// A byte stream under the WebSocket: plain TCP for `ws://`, TLS over it for `wss://`.
pub(crate) trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for T {}

/// The connection under `url`'s WebSocket: TCP to its host and port (80 or 443 by
/// default), and for `wss://` a TLS handshake that checks the certificate against the
/// host name (Mozilla's roots and `--daemon-ca`'s).
pub(crate) async fn open_stream(
    url: &str,
    tls: &std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
) -> Result<Box<dyn Stream>, Error> {
    let failed = |op: &'static str, detail: String| Error::Io { op, path: url.to_string(), detail };
    let secure = url.starts_with("wss://");
    let rest = url.strip_prefix("wss://").or_else(|| url.strip_prefix("ws://")).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            (host, port.parse::<u16>().map_err(|_| failed("websocket", format!("bad port {port:?}")))?)
        }
        _ => (authority, if secure { 443 } else { 80 }),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(failed("websocket", "no host".to_string()));
    }
    let tcp = tokio::net::TcpStream::connect((host, port)).await.map_err(|e| failed("connect", e.to_string()))?;
    let _ = tcp.set_nodelay(true);
    if !secure {
        return Ok(Box::new(tcp));
    }
    let name = rustls_pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| failed("tls", format!("{host:?} is not a server name: {e}")))?;
    match tokio_rustls::TlsConnector::from(tls.clone()).connect(name, tcp).await {
        Ok(stream) => Ok(Box::new(stream)),
        Err(e) => Err(failed(
            "tls",
            match address::tls::untrusted_certificate(&e) {
                Some(why) => format!(
                    "the daemon's certificate is not trusted ({why}): for a private CA or a self-signed certificate give its PEM with --daemon-ca FILE"
                ),
                None => format!("TLS handshake failed: {e}"),
            },
        )),
    }
}
