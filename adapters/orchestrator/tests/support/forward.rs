//! A loopback TCP forwarder standing in for "one address that follows the leader" (a load
//! balancer, a floating IP: `docs/scale-out.md`): each connection goes to the first of its
//! upstreams that accepts it, so once the leader is dead (its port refuses) it reaches the
//! next daemon. It reads nothing of what it carries. Bound first ([`Forward::bind`]), so
//! that a `--public-url` can name it before the daemons it forwards to are started.
//! [`Forward::freeze`] makes it a black hole (a network partition, not a refusal): from
//! then on nothing it receives is passed on either way, and its connections stay open.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long one upstream may take to accept a connection, in ms.
const UPSTREAM_CONNECT_MS_MAX: u64 = 1_000;
/// How often a frozen pipe looks whether it still is, in ms (it always is: a freeze is
/// for the rest of the test).
const FROZEN_CHECK_MS: u64 = 50;

/// The forwarder; its threads end with the test process.
pub struct Forward {
    /// Where it listens (127.0.0.1, a free port).
    pub addr: SocketAddr,
    /// The listener until [`Forward::start`] (connections wait in its backlog meanwhile).
    listener: Option<TcpListener>,
    /// Set by [`Forward::freeze`]: every pipe holds what it read from then on.
    frozen: Arc<AtomicBool>,
}

impl Forward {
    /// Listens on a free loopback port; forwards nothing until [`Forward::start`].
    pub fn bind() -> Forward {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the forwarder");
        Forward { addr: listener.local_addr().expect("addr"), listener: Some(listener), frozen: Arc::default() }
    }

    /// Forwards every connection to the first of `upstreams` (in order) that accepts it.
    pub fn start(&mut self, upstreams: Vec<SocketAddr>) {
        let listener = self.listener.take().expect("started once");
        let frozen = self.frozen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let (upstreams, frozen) = (upstreams.clone(), frozen.clone());
                std::thread::spawn(move || forward(client, &upstreams, &frozen));
            }
        });
    }

    /// From now on passes nothing on, either way, on the connections it has and on new
    /// ones, and closes none of them: what is sent through it is never answered.
    pub fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }

    /// `http://ADDR`: the forwarder as a `--public-url`.
    pub fn public_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// The `HOST:PORT` of an `http://HOST:PORT/...` URL.
pub fn addr_of(url: &str) -> SocketAddr {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    rest.split('/').next().expect("authority").parse().expect("HOST:PORT")
}

/// Copies both ways between `client` and the first upstream that accepts, until either
/// side closes; with none accepting, closes `client`.
fn forward(client: TcpStream, upstreams: &[SocketAddr], frozen: &Arc<AtomicBool>) {
    hold_while(frozen);
    let timeout = Duration::from_millis(UPSTREAM_CONNECT_MS_MAX);
    let Some(upstream) = upstreams.iter().find_map(|a| TcpStream::connect_timeout(a, timeout).ok()) else {
        return;
    };
    let (Ok(client_read), Ok(upstream_read)) = (client.try_clone(), upstream.try_clone()) else { return };
    let back_frozen = frozen.clone();
    let back = std::thread::spawn(move || pipe(upstream_read, client, &back_frozen));
    pipe(client_read, upstream, frozen);
    let _ = back.join();
}

/// Returns once `frozen` is not set (never, once it is).
fn hold_while(frozen: &AtomicBool) {
    while frozen.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(FROZEN_CHECK_MS));
    }
}

/// Copies `from` into `to` until `from` ends, then closes both for writing and reading;
/// once `frozen`, holds what it read.
fn pipe(mut from: TcpStream, mut to: TcpStream, frozen: &AtomicBool) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        hold_while(frozen);
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
