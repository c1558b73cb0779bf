//! TLS for `https://` notification targets: rustls with the `ring` provider, Mozilla's
//! root certificates compiled in (`webpki-roots`) and the extra roots of `--notify-ca FILE`
//! (PEM, for a private CA or a self-hosted ntfy), the client configuration built once at
//! start; and a failed handshake said in a person's words.

use super::NotifyError;
use rustls::RootCertStore;
use rustls::client::ClientConfig;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use std::path::Path;
use std::sync::Arc;

/// The largest `--notify-ca` file read, in bytes (a bundle of a few hundred roots is smaller).
pub const CA_FILE_BYTES_MAX: u64 = 1024 * 1024;

/// What is wrong with a `--notify-ca` file.
#[derive(Debug, thiserror::Error)]
pub enum CaProblem {
    /// It cannot be read.
    #[error("cannot read it: {0}")]
    Unreadable(std::io::Error),
    /// Larger than [`CA_FILE_BYTES_MAX`].
    #[error("larger than {CA_FILE_BYTES_MAX} bytes")]
    TooLarge,
    /// A PEM section that cannot be decoded.
    #[error("not PEM: {0}")]
    Pem(String),
    /// No `-----BEGIN CERTIFICATE-----` section.
    #[error("holds no -----BEGIN CERTIFICATE----- section")]
    NoCertificate,
    /// A certificate that cannot be a root (not X.509 DER, or malformed).
    #[error("certificate {index} cannot be a trusted root: {why}")]
    BadCertificate {
        /// Its place in the file, from 1.
        index: usize,
        /// What rustls said.
        why: String,
    },
}

/// The roots of a `--notify-ca` file, checked.
pub fn read_ca(path: &Path) -> Result<Vec<CertificateDer<'static>>, CaProblem> {
    let meta = std::fs::metadata(path).map_err(CaProblem::Unreadable)?;
    if meta.len() > CA_FILE_BYTES_MAX {
        return Err(CaProblem::TooLarge);
    }
    let bytes = std::fs::read(path).map_err(CaProblem::Unreadable)?;
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(&bytes).collect::<Result<_, _>>().map_err(|e| CaProblem::Pem(e.to_string()))?;
    if certs.is_empty() {
        return Err(CaProblem::NoCertificate);
    }
    Ok(certs)
}

/// The client configuration every https post uses: Mozilla's roots, plus the file's.
pub fn client_config(ca: Option<&Path>) -> Result<Arc<ClientConfig>, NotifyError> {
    let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = ca {
        let refused = |problem| NotifyError::Ca { path: path.to_path_buf(), problem };
        for (i, cert) in read_ca(path).map_err(refused)?.into_iter().enumerate() {
            roots.add(cert).map_err(|e| refused(CaProblem::BadCertificate { index: i + 1, why: e.to_string() }))?;
        }
    }
    // rustls 0.23.48 deprecates ring's provider for its want of post-quantum key exchange
    // (X25519MLKEM768, which rustls offers with aws-lc-rs only; that needs cmake to build).
    // A notification is a short signed note whose only secret is its webhook's path; the
    // classical key exchange (X25519, P-256) is accepted for it (docs/notifications.md).
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| NotifyError::Tls { why: e.to_string() })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A failed handshake in a person's words: an untrusted certificate says what to do.
pub fn handshake_failure(error: &std::io::Error) -> String {
    let tls = error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match tls {
        Some(rustls::Error::InvalidCertificate(why)) => format!(
            "the receiver's certificate is not trusted ({why:?}): nothing was sent; for a private CA or a \
             self-signed certificate give its PEM with --notify-ca FILE"
        ),
        Some(other) => format!("TLS handshake failed: {other}; nothing was sent"),
        None => format!("TLS handshake failed: {error}; nothing was sent"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_ca_file_is_refused_with_what_is_wrong() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ca.pem");
        assert!(matches!(read_ca(&path), Err(CaProblem::Unreadable(_))));
        std::fs::write(&path, "not a certificate\n").expect("write");
        assert!(matches!(read_ca(&path), Err(CaProblem::NoCertificate)));
        std::fs::write(&path, "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n").expect("write");
        assert!(matches!(read_ca(&path), Err(CaProblem::Pem(_))), "{:?}", read_ca(&path));
        std::fs::write(&path, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").expect("write");
        let e = client_config(Some(&path)).expect_err("refused");
        assert!(matches!(e, NotifyError::Ca { problem: CaProblem::BadCertificate { index: 1, .. }, .. }), "{e}");
        assert_eq!(e.code(), "NOTIFY_CA");
        std::fs::write(&path, vec![b'a'; CA_FILE_BYTES_MAX as usize + 1]).expect("write");
        assert!(matches!(read_ca(&path), Err(CaProblem::TooLarge)));
    }

    #[test]
    fn mozilla_s_roots_are_in_the_default_configuration() {
        assert!(client_config(None).is_ok());
        assert!(webpki_roots::TLS_SERVER_ROOTS.len() > 100);
    }
}
