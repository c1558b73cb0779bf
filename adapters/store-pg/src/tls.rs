//! TLS to the database: the connection string's `sslmode=require` (or libpq's
//! `verify-ca`/`verify-full`, taken as the same) makes the store and the lease connect over
//! TLS with `address::tls`'s client, which always checks the server's certificate chain and
//! host name: Mozilla's roots, plus the roots of the string's `sslrootcert=FILE` (a managed
//! database's CA bundle, or a private CA). So `require` here means what libpq calls
//! `verify-full`: a server whose certificate does not check is refused, never used
//! unverified. Without `sslmode=require` the connection is in clear, as before (the
//! `postgres` crate's default `prefer` is taken as "in clear", so a local server with
//! Debian's snake-oil certificate keeps working).
//!
//! The connection strings libpq accepts and `postgres` does not (`sslrootcert`, the
//! `verify-*` modes) are read here and taken out before the rest is parsed.

use crate::error::Error;
use postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The ALPN protocol libpq 17 offers: a server that checks ALPN accepts this one.
const ALPN_POSTGRESQL: &[u8] = b"postgresql";

/// What a connection string asks of TLS, read before `postgres` parses the rest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TlsAsk {
    /// `sslmode=require`, `verify-ca` or `verify-full`.
    pub required: bool,
    /// `sslrootcert=FILE`: extra trusted roots (PEM).
    pub root_cert: Option<PathBuf>,
}

/// Takes the TLS parameters `postgres` does not parse out of `url` (URI form
/// `postgres://...?sslmode=verify-full&sslrootcert=/path`, or key=value form `host=...
/// sslrootcert=/path`), and maps libpq's `verify-*` modes to `require`: the string to
/// parse, and what it asked.
pub(crate) fn take_tls_params(url: &str) -> Result<(String, TlsAsk), Error> {
    let mut ask = TlsAsk::default();
    let mut keep = |key: &str, value: &str| -> Result<Option<String>, Error> {
        match key {
            "sslrootcert" => {
                ask.root_cert = Some(PathBuf::from(percent_decoded(value)?));
                Ok(None)
            }
            "sslmode" => match value {
                "require" | "verify-ca" | "verify-full" => {
                    ask.required = true;
                    Ok(Some("sslmode=require".into()))
                }
                other => Ok(Some(format!("sslmode={other}"))),
            },
            _ => Ok(Some(format!("{key}={value}"))),
        }
    };
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let Some((base, query)) = url.split_once('?') else { return Ok((url.to_string(), ask)) };
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            kept.extend(keep(key, value)?);
        }
        let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
        return Ok((url, ask));
    }
    // key=value form: only unquoted values are read here (a quoted sslrootcert is refused
    // with the rest by `postgres`'s parser as an unknown option).
    let mut kept = Vec::new();
    for word in url.split_whitespace() {
        match word.split_once('=') {
            Some((key, value)) if !value.starts_with('\'') => kept.extend(keep(key, value)?),
            _ => kept.push(word.to_string()),
        }
    }
    Ok((kept.join(" "), ask))
}

/// `%XX` escapes decoded (a path in a URI's query may be written with them).
fn percent_decoded(value: &str) -> Result<String, Error> {
    let bad = || Error::Config { problem: format!("sslrootcert={value:?} is not a decodable path") };
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3).ok_or_else(bad)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// The TLS client for `ask`, or `None` for a connection in clear.
pub(crate) fn client_for(ask: &TlsAsk) -> Result<Option<RustlsConnect>, Error> {
    if !ask.required {
        if ask.root_cert.is_some() {
            return Err(Error::Config {
                problem: "sslrootcert without sslmode=require (or verify-full): the connection would not use it".into(),
            });
        }
        return Ok(None);
    }
    let config = address::tls::client_config(ask.root_cert.as_deref())
        .map_err(|e| Error::Config { problem: format!("sslrootcert {e}") })?;
    let mut config = (*config).clone();
    config.alpn_protocols = vec![ALPN_POSTGRESQL.to_vec()];
    Ok(Some(RustlsConnect(Arc::new(config))))
}

/// `postgres`'s TLS connector over rustls.
#[derive(Clone)]
pub(crate) struct RustlsConnect(Arc<rustls::ClientConfig>);

/// One handshake, for the host name the connection was made to.
pub(crate) struct RustlsConnector {
    config: Arc<rustls::ClientConfig>,
    name: rustls_pki_types::ServerName<'static>,
}

impl<S> MakeTlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnector;
    type Error = std::io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnector, std::io::Error> {
        let name = rustls_pki_types::ServerName::try_from(domain.to_string())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{domain:?}: {e}")))?;
        Ok(RustlsConnector { config: self.0.clone(), name })
    }
}

impl<S> TlsConnect<S> for RustlsConnector
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<RustlsStream<S>, std::io::Error>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let connector = tokio_rustls::TlsConnector::from(self.config);
            match connector.connect(self.name, stream).await {
                Ok(tls) => Ok(RustlsStream(tls)),
                Err(e) => Err(match address::tls::untrusted_certificate(&e) {
                    Some(why) => std::io::Error::other(format!(
                        "the database's certificate is not trusted ({why}): give its CA's PEM with sslrootcert=FILE in the connection string"
                    )),
                    None => e,
                }),
            }
        })
    }
}

/// A TLS session to the database.
pub(crate) struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        // No tls-server-end-point binding: SCRAM falls back to no channel binding, as with
        // libpq's default `channel_binding=prefer` against a server that offers none.
        ChannelBinding::none()
    }
}

/// Connects with TLS when the string asked for it, in clear otherwise.
pub(crate) fn connect(
    config: &postgres::Config,
    tls: Option<&RustlsConnect>,
) -> Result<postgres::Client, postgres::Error> {
    match tls {
        Some(tls) => config.connect(tls.clone()),
        None => config.connect(postgres::NoTls),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_tls_parameters_are_read_and_taken_out_of_both_forms() {
        let (url, ask) = take_tls_params(
            "postgres://u@db.example:5432/orch?sslmode=verify-full&sslrootcert=/etc/ca%20b.pem&application_name=x",
        )
        .expect("parsed");
        assert_eq!(url, "postgres://u@db.example:5432/orch?sslmode=require&application_name=x");
        assert_eq!(ask, TlsAsk { required: true, root_cert: Some(PathBuf::from("/etc/ca b.pem")) });
        let (url, ask) = take_tls_params("host=db.example user=u sslmode=require sslrootcert=/ca.pem").expect("parsed");
        assert_eq!(url, "host=db.example user=u sslmode=require");
        assert_eq!(ask, TlsAsk { required: true, root_cert: Some(PathBuf::from("/ca.pem")) });
        let (url, ask) = take_tls_params("postgres://u@h/d?sslmode=prefer").expect("parsed");
        assert_eq!((url.as_str(), ask.required), ("postgres://u@h/d?sslmode=prefer", false));
        let (url, ask) = take_tls_params("postgres://u@h/d").expect("parsed");
        assert_eq!((url.as_str(), ask), ("postgres://u@h/d", TlsAsk::default()));
        assert!(take_tls_params("postgres://u@h/d?sslrootcert=%zz").is_err());
    }

    #[test]
    fn a_root_certificate_without_tls_is_refused_rather_than_ignored() {
        let ask = TlsAsk { required: false, root_cert: Some(PathBuf::from("/ca.pem")) };
        let Err(Error::Config { problem }) = client_for(&ask) else { panic!("refused") };
        assert!(problem.contains("without sslmode=require"), "{problem}");
        let ask = TlsAsk { required: true, root_cert: Some(PathBuf::from("/nonexistent/ca.pem")) };
        let Err(Error::Config { problem }) = client_for(&ask) else { panic!("refused") };
        assert!(problem.contains("/nonexistent/ca.pem"), "{problem}");
    }
}
