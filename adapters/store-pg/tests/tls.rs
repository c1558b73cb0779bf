//! TLS to the database against a real PostgreSQL with `ssl=on` (its certificate made by
//! the `openssl` CLI for 127.0.0.1): with `sslmode=require` (or libpq's `verify-full`) and
//! `sslrootcert=` naming that certificate, the store commits and loads over TLS (the
//! server's `pg_stat_ssl` says so), and so do the lease's and `store verify`'s
//! connections; without `sslrootcert` the server's certificate is not trusted and the store
//! refuses to open, saying what to give; against a server without TLS, `sslmode=require`
//! is refused rather than sent in clear.

use engine::Batch;
use runtime::Store;
use std::path::{Path, PathBuf};
use std::process::Command;
use store::workload::Workload;
use store_pg::PgStore;
use store_pg::test_server::TestServer;

/// A certificate for 127.0.0.1 and its key (PEM), made by `openssl req -x509`.
fn certificate(dir: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("db.crt"), dir.join("db.key"));
    let out = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"])
        .args(["-days", "1", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("the openssl CLI makes the test certificate: install Debian's openssl package");
    assert!(out.status.success(), "openssl req failed: {}", String::from_utf8_lossy(&out.stderr));
    (cert, key)
}

/// Connections to the server that use TLS now (read over a connection in clear).
fn tls_connections(server: &TestServer, url: &str) -> u64 {
    let rows = server.rows(url, "SELECT count(*) FROM pg_stat_ssl WHERE ssl");
    rows[0][0].as_deref().expect("a count").parse().expect("a number")
}

#[test]
fn the_store_the_lease_and_verify_speak_tls_when_the_string_asks_and_trust_only_what_it_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = certificate(dir.path());
    let server = TestServer::start_tls(&cert, &key);
    let plain = server.fresh_database();
    let ca = cert.display().to_string().replace(' ', "%20");
    let url = format!("{plain}?sslmode=verify-full&sslrootcert={ca}");

    let mut store = PgStore::open(&url).expect("the store opens over TLS");
    assert_eq!(tls_connections(&server, &plain), 1, "the store's connection is the one over TLS");
    let mut workload = Workload::new(3, 2, 2);
    let batches: Vec<Batch> = (0..5).map(|_| workload.next_mutation()).collect();
    for batch in &batches {
        store.commit(std::slice::from_ref(batch)).expect("commit over TLS");
    }
    let loaded = store.load().expect("load over TLS");
    assert!(!loaded.is_empty());
    let commits = store.commits();
    drop(store);

    let mut lease = store_pg::lease::LeaseClient::connect(&url, 1_000).expect("the lease's connection over TLS");
    lease.read().expect("the lease read over TLS");
    let report = store_pg::verify(&url).expect("verify over TLS");
    assert!(report.intact && report.commits == commits, "{}", report.text);

    // The server's certificate is no public CA's: without sslrootcert it is not trusted.
    let untrusted = PgStore::open(&format!("{plain}?sslmode=require")).expect_err("refused");
    let text = untrusted.to_string();
    assert_eq!(untrusted.code(), "PG_CONNECT", "{text}");
    assert!(text.contains("not trusted") && text.contains("sslrootcert=FILE"), "{text}");
}

#[test]
fn require_against_a_server_without_tls_is_refused_not_sent_in_clear() {
    let server = TestServer::start();
    let plain = server.fresh_database();
    let error = PgStore::open(&format!("{plain}?sslmode=require")).expect_err("refused");
    assert_eq!(error.code(), "PG_CONNECT", "{error}");
    // And a CA file with no TLS asked is a mistake said at once, not ignored.
    let error = PgStore::open(&format!("{plain}?sslrootcert=/etc/ca.pem")).expect_err("refused");
    assert_eq!(error.code(), "PG_CONFIG", "{error}");
}
