//! A flood of lingering connections from one address (issue 30): silent TCP connections,
//! `/executor` upgrades that never say `hello`, and requests whose headers trickle in a
//! line at a time. Each slot holds one such connection and opens the next as soon as the
//! daemon closes it, so the daemon always sees as many lingering connections as there are
//! slots. Shared by the fair-edges test and the `flood` benchmark.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// How often a slow-header connection sends its next header line.
const SLOW_HEADER_EVERY_MS: u64 = 500;

/// What one slot's connections do.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Connect and send nothing.
    Silent,
    /// Upgrade to the executor WebSocket and never say `hello`.
    Upgrade,
    /// Send a request's headers one line at a time, never finishing them.
    SlowHeaders,
}

/// What the flood saw.
#[derive(Debug, Default)]
pub struct Counts {
    /// Connections opened.
    pub opened: AtomicU64,
    /// Silent and slow-header connections the daemon closed (shed, or at a timeout).
    pub closed_quiet: AtomicU64,
    /// Upgraded connections the daemon closed (shed, or at the hello deadline).
    pub closed_upgrades: AtomicU64,
    /// Upgrades answered `101 Switching Protocols`.
    pub upgraded: AtomicU64,
    /// Answers with a `503` (a refused connection).
    pub refused: AtomicU64,
}

/// A running flood; stopped (every connection dropped) when dropped.
pub struct Flood {
    tasks: JoinSet<()>,
    /// What it saw so far.
    pub counts: Arc<Counts>,
}

impl Flood {
    /// Starts `per_kind` slots of each kind against the daemon at `addr` (`host:port`).
    pub fn start(addr: &str, per_kind: usize) -> Flood {
        let counts = Arc::new(Counts::default());
        let mut tasks = JoinSet::new();
        for kind in [Kind::Silent, Kind::Upgrade, Kind::SlowHeaders] {
            for _ in 0..per_kind {
                tasks.spawn(slot(addr.to_string(), kind, counts.clone()));
            }
        }
        Flood { tasks, counts }
    }

    /// Connections opened so far.
    pub fn opened(&self) -> u64 {
        self.counts.opened.load(Ordering::Relaxed)
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.tasks.abort_all();
    }
}

/// One slot: a lingering connection of `kind`, again and again.
async fn slot(addr: String, kind: Kind, counts: Arc<Counts>) {
    loop {
        let Ok(mut tcp) = TcpStream::connect(&addr).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        counts.opened.fetch_add(1, Ordering::Relaxed);
        linger(&mut tcp, &addr, kind, &counts).await;
        match kind {
            Kind::Upgrade => &counts.closed_upgrades,
            Kind::Silent | Kind::SlowHeaders => &counts.closed_quiet,
        }
        .fetch_add(1, Ordering::Relaxed);
    }
}

/// Holds `tcp` the way `kind` does until the daemon closes it.
async fn linger(tcp: &mut TcpStream, addr: &str, kind: Kind, counts: &Counts) {
    let mut buf = [0u8; 1024];
    match kind {
        Kind::Silent => {}
        Kind::Upgrade => {
            let request = format!(
                "GET /executor HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\
                 sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
            );
            if tcp.write_all(request.as_bytes()).await.is_err() {
                return;
            }
            match tcp.read(&mut buf).await {
                Ok(n) if buf[..n].starts_with(b"HTTP/1.1 101") => counts.upgraded.fetch_add(1, Ordering::Relaxed),
                Ok(n) if buf[..n].starts_with(b"HTTP/1.1 503") => counts.refused.fetch_add(1, Ordering::Relaxed),
                _ => return,
            };
        }
        Kind::SlowHeaders => {
            if tcp.write_all(format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\n").as_bytes()).await.is_err() {
                return;
            }
            for line in 0u64.. {
                match tokio::time::timeout(Duration::from_millis(SLOW_HEADER_EVERY_MS), tcp.read(&mut buf)).await {
                    Err(_) => {
                        if tcp.write_all(format!("x-slow-{line}: 1\r\n").as_bytes()).await.is_err() {
                            return;
                        }
                    }
                    Ok(Ok(n)) if n > 0 => {
                        if buf[..n].starts_with(b"HTTP/1.1 503") {
                            counts.refused.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Ok(_) => return,
                }
            }
        }
    }
    // Read (and discard) until the daemon closes the connection.
    loop {
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if buf[..n].starts_with(b"HTTP/1.1 503") {
                    counts.refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}
