//! The loopback webhook receiver of `tests/notify.rs`: plain HTTP, or HTTPS through
//! tokio-rustls with a certificate the `openssl` CLI makes at test time; it keeps every
//! post (path, headers, body) and every failed handshake, answers 200 or, while "down",
//! 503, and wakes whoever waits for what it saw (no polling).

pub use cert::Cert;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::watch;

/// How long a test waits for the receiver to see what it must, ms.
pub const WAIT_MS: u64 = 30_000;
/// The test certificate, shared with the CLI executor's `wss://` test.
#[path = "../support/cert.rs"]
mod cert;

/// The largest body read, bytes.
const BODY_BYTES_MAX: usize = 64 * 1024;

/// One post the receiver answered.
#[derive(Clone, Debug)]
pub struct Post {
    /// The request's path.
    pub path: String,
    /// Its headers, names lower-case.
    pub headers: BTreeMap<String, String>,
    /// Its body.
    pub body: String,
    /// Answered 200 (else 503: the receiver was "down").
    pub taken: bool,
}

impl Post {
    /// The notification id (`Idempotency-Key`).
    pub fn id(&self) -> String {
        self.headers.get("idempotency-key").cloned().unwrap_or_default()
    }
}

/// What the receiver saw.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// The posts, in order.
    pub posts: Vec<Post>,
    /// Handshakes that failed, with what rustls said (TLS only).
    pub handshake_failures: Vec<String>,
}

impl Seen {
    /// The posts answered 200.
    pub fn taken(&self) -> Vec<Post> {
        self.posts.iter().filter(|p| p.taken).cloned().collect()
    }
}

/// A loopback webhook receiver on the test's runtime.
#[derive(Clone)]
pub struct Receiver {
    port: u16,
    tls: bool,
    seen: Arc<Mutex<Seen>>,
    down: Arc<AtomicBool>,
    changed: watch::Sender<u64>,
}

impl Receiver {
    /// A plain HTTP receiver on 127.0.0.1.
    pub async fn start(down: bool) -> Receiver {
        Receiver::listen(down, None).await
    }

    /// An HTTPS receiver presenting `cert` (reached as `localhost`).
    pub async fn start_tls(cert: &Cert) -> Receiver {
        Receiver::listen(false, Some(tokio_rustls::TlsAcceptor::from(cert.server_config()))).await
    }

    async fn listen(down: bool, tls: Option<tokio_rustls::TlsAcceptor>) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let r = Receiver {
            port,
            tls: tls.is_some(),
            seen: Arc::default(),
            down: Arc::new(AtomicBool::new(down)),
            changed: watch::channel(0).0,
        };
        let me = r.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (me, tls) = (me.clone(), tls.clone());
                tokio::spawn(async move {
                    match tls {
                        None => me.serve(stream).await,
                        Some(acceptor) => match acceptor.accept(stream).await {
                            Ok(stream) => me.serve(stream).await,
                            Err(e) => me.saw(|s| s.handshake_failures.push(e.to_string())),
                        },
                    }
                });
            }
        });
        r
    }

    fn saw(&self, change: impl FnOnce(&mut Seen)) {
        change(&mut self.seen.lock().expect("lock"));
        self.changed.send_modify(|n| *n += 1);
    }

    async fn serve<S: AsyncRead + AsyncWrite + Unpin>(&self, stream: S) {
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        if reader.read_line(&mut line).await.is_err() {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut headers = BTreeMap::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).await.is_err() || h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let length: usize = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
        let mut body = vec![0; length.min(BODY_BYTES_MAX)];
        let _ = reader.read_exact(&mut body).await;
        let taken = !self.down.load(Ordering::SeqCst);
        let status = if taken { "200 OK" } else { "503 Service Unavailable" };
        let mut stream = reader.into_inner();
        let answer = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
        let body = String::from_utf8(body).expect("utf-8 body");
        self.saw(|s| s.posts.push(Post { path, headers, body, taken }));
    }

    /// The URL of `path` here: `http://127.0.0.1:PORT/PATH` or `https://localhost:PORT/PATH`.
    pub fn url(&self, path: &str) -> String {
        if self.tls {
            format!("https://localhost:{}{path}", self.port)
        } else {
            format!("http://127.0.0.1:{}{path}", self.port)
        }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Answer 503 (down) or 200 from now on.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// What it saw so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().expect("lock").clone()
    }

    /// Waits until `done` holds of what it saw, woken by each post or failed handshake;
    /// fails the test after [`WAIT_MS`].
    pub async fn wait(&self, what: &str, done: impl Fn(&Seen) -> bool) -> Seen {
        let mut changes = self.changed.subscribe();
        let waiting = async {
            loop {
                let seen = self.seen();
                if done(&seen) {
                    return seen;
                }
                changes.changed().await.expect("the receiver lives");
            }
        };
        match tokio::time::timeout(Duration::from_millis(WAIT_MS), waiting).await {
            Ok(seen) => seen,
            Err(_) => panic!("{what}: {:#?}", self.seen()),
        }
    }
}
