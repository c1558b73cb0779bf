//! A CLI executor on another host (issue 32, docs/scale-out.md "Executors on several
//! hosts"): it reaches the daemon through a TLS front (as through the daemon's public HTTPS
//! URL) at `wss://localhost:PORT/executor`, trusting the front's certificate through
//! `--daemon-ca`, says `hello` with its own host id and the per-host token
//! `orchestrator executor add` issued, and carries a run's worker (its first prompt
//! submitted). The front is tokio-rustls over loopback with a certificate `openssl` makes.

mod harness;

#[path = "../../orchestrator/tests/support/cert.rs"]
mod cert;

use harness::{Binary, Daemon, dirs, options, spawn_executor, submitted};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A TLS front on loopback passing every connection on to `daemon_ws` (`ws://HOST:PORT/...`):
/// its `wss://localhost:PORT/executor` URL, and how many handshakes it completed.
async fn tls_front(cert: &cert::Cert, daemon_ws: &str) -> (String, Arc<AtomicUsize>) {
    let acceptor = tokio_rustls::TlsAcceptor::from(cert.server_config());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("wss://localhost:{}/executor", listener.local_addr().expect("addr").port());
    let upstream = daemon_ws.trim_start_matches("ws://").trim_end_matches("/executor").to_string();
    let handshakes = Arc::new(AtomicUsize::new(0));
    let count = handshakes.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, upstream, count) = (acceptor.clone(), upstream.clone(), count.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let Ok(mut daemon) = tokio::net::TcpStream::connect(&upstream).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut daemon).await;
            });
        }
    });
    (url, handshakes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executor_on_another_host_connects_over_tls_with_its_own_token() {
    let d = Daemon::start().await;
    let cert = cert::Cert::make();
    let (url, handshakes) = tls_front(&cert, &d.url).await;
    let token = bridge::server::HostBook::in_dir(&d.data_dir()).add("build-2", 1).expect("executor add");
    let dirs = dirs();
    std::fs::write(&dirs.token, format!("{token}\n")).expect("the host's token file");
    let mut options = options(&d.url, &dirs, &Binary::Sim(Vec::new()));
    options.urls = vec![url];
    options.executor_id = "build-2".to_string();
    options.daemon_ca = Some(cert.cert.clone());
    let task = spawn_executor(options);
    let root = harness::start_run(&d, &dirs, engine::ExecutorKind::Codex).await;
    submitted(&d, root, 1).await;
    assert!(handshakes.load(Ordering::SeqCst) >= 1, "the executor came through the TLS front");
    task.abort();
    let _ = task.await;
}
