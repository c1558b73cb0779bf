//! The TLS client every outgoing connection of ours uses (a notification's `https://`
//! post, a CLI executor's `wss://` connection to a daemon behind its public HTTPS URL):
//! rustls with the `ring` provider, Mozilla's root certificates compiled in
//! (`webpki-roots`) plus the roots of a PEM file the person gives (`--notify-ca`,
//! `--daemon-ca`: a private CA or a self-signed certificate), HTTP/1.1 offered by ALPN.

use rustls::RootCertStore;
use rustls::client::ClientConfig;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The largest CA file read, in bytes (a bundle of a few hundred roots is smaller).
pub const CA_FILE_BYTES_MAX: u64 = 1024 * 1024;

/// What is wrong with a CA file.
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

/// Why the TLS client could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// The CA file is refused.
    #[error("{}: {problem}", path.display())]
    Ca {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: CaProblem,
    },
    /// rustls refused the configuration.
    #[error("the TLS client cannot be set up: {0}")]
    Provider(String),
}

/// The roots of a CA file, checked.
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

/// The client configuration: Mozilla's roots, plus the CA file's.
pub fn client_config(ca: Option<&Path>) -> Result<Arc<ClientConfig>, TlsSetupError> {
    let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = ca {
        let refused = |problem| TlsSetupError::Ca { path: path.to_path_buf(), problem };
        for (i, cert) in read_ca(path).map_err(refused)?.into_iter().enumerate() {
            roots.add(cert).map_err(|e| refused(CaProblem::BadCertificate { index: i + 1, why: e.to_string() }))?;
        }
    }
    // rustls 0.23.48 deprecates ring's provider for its want of post-quantum key exchange
    // (X25519MLKEM768, which rustls offers with aws-lc-rs only; that needs cmake to build).
    // The classical key exchange (X25519, P-256) is accepted here (docs/notifications.md,
    // docs/scale-out.md).
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsSetupError::Provider(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The certificate problem of a failed handshake, when it was one (the peer's certificate
/// is not trusted): what a person fixes with a CA file.
pub fn untrusted_certificate(error: &std::io::Error) -> Option<String> {
    match error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::InvalidCertificate(why)) => Some(format!("{why:?}")),
        _ => None,
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
        assert!(matches!(e, TlsSetupError::Ca { problem: CaProblem::BadCertificate { index: 1, .. }, .. }), "{e}");
        std::fs::write(&path, vec![b'a'; CA_FILE_BYTES_MAX as usize + 1]).expect("write");
        assert!(matches!(read_ca(&path), Err(CaProblem::TooLarge)));
    }

    #[test]
    fn mozilla_s_roots_are_in_the_default_configuration() {
        assert!(client_config(None).is_ok());
        assert!(webpki_roots::TLS_SERVER_ROOTS.len() > 100);
    }
}
