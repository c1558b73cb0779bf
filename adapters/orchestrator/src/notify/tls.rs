//! TLS for `https://` notification targets: the shared client of `address::tls` (rustls
//! with ring, Mozilla's roots plus the roots of `--notify-ca FILE`), built once at start;
//! and a failed handshake said in a person's words.

use super::NotifyError;
use address::tls::TlsSetupError;
use rustls::client::ClientConfig;
use std::path::Path;
use std::sync::Arc;

/// The client configuration every https post uses: Mozilla's roots, plus the file's.
pub fn client_config(ca: Option<&Path>) -> Result<Arc<ClientConfig>, NotifyError> {
    address::tls::client_config(ca).map_err(|e| match e {
        TlsSetupError::Ca { path, problem } => NotifyError::Ca { path, problem },
        TlsSetupError::Provider(why) => NotifyError::Tls { why },
    })
}

/// A failed handshake in a person's words: an untrusted certificate says what to do.
pub fn handshake_failure(error: &std::io::Error) -> String {
    match address::tls::untrusted_certificate(error) {
        Some(why) => format!(
            "the receiver's certificate is not trusted ({why}): nothing was sent; for a private CA or a \
             self-signed certificate give its PEM with --notify-ca FILE"
        ),
        None => match error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
            Some(other) => format!("TLS handshake failed: {other}; nothing was sent"),
            None => format!("TLS handshake failed: {error}; nothing was sent"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_ca_file_is_a_notify_ca_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate\n").expect("write");
        let e = client_config(Some(&path)).expect_err("refused");
        assert_eq!(e.code(), "NOTIFY_CA", "{e}");
        assert!(client_config(None).is_ok());
    }
}
