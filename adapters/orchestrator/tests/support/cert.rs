//! A certificate for `localhost` and 127.0.0.1 that the `openssl` CLI makes at test time,
//! and a rustls server configuration presenting it: the HTTPS receiver of
//! `tests/notify.rs` and the TLS front of the CLI executor's `wss://` test
//! (`adapters/cli-executor/tests/wss.rs`) both use it.

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

/// A certificate for `localhost` and 127.0.0.1, made by `openssl req -x509`.
pub struct Cert {
    _dir: tempfile::TempDir,
    /// The certificate (PEM): also what `--notify-ca` is given.
    pub cert: PathBuf,
    /// Its private key (PEM, PKCS#8).
    pub key: PathBuf,
}

impl Cert {
    /// Makes one. The `openssl` CLI must be there (Debian's `openssl` package, on the CI
    /// machine too): without it the test fails, it is not skipped.
    pub fn make() -> Cert {
        let dir = tempfile::tempdir().expect("tempdir");
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        let out = Command::new("openssl")
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"])
            .args(["-days", "1", "-subj", "/CN=localhost"])
            .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
            // An end-entity certificate (webpki refuses a CA's as a server's).
            .args(["-addext", "basicConstraints=critical,CA:FALSE"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .expect("the openssl CLI makes the test certificate: install Debian's openssl package");
        assert!(out.status.success(), "openssl req failed: {}", String::from_utf8_lossy(&out.stderr));
        Cert { _dir: dir, cert, key }
    }

    /// A rustls server configuration presenting it.
    pub fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(&self.cert).expect("cert").collect::<Result<_, _>>().expect("cert pem");
        let key = PrivateKeyDer::from_pem_file(&self.key).expect("key pem");
        #[allow(deprecated)] // the daemon's provider (`notify/tls.rs` says why)
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server certificate");
        Arc::new(config)
    }
}
