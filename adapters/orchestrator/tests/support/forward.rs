//! A loopback TCP forwarder standing in for "one address that follows the leader" (a load
//! balancer, a floating IP: `docs/scale-out.md`): each connection goes to the first of its
//! upstreams that accepts it, so once the leader is dead (its port refuses) it reaches the
//! next daemon. It reads nothing of what it carries.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// How long one upstream may take to accept a connection, in ms.
const UPSTREAM_CONNECT_MS_MAX: u64 = 1_000;

/// The forwarder's address; its threads end with the test process.
pub struct Forward {
    /// Where it listens (127.0.0.1, a free port).
    pub addr: SocketAddr,
}

impl Forward {
    /// Listens on a free loopback port and forwards every connection to the first of
    /// `upstreams` (`HOST:PORT`, in order) that accepts it.
    pub fn start(upstreams: Vec<SocketAddr>) -> Forward {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the forwarder");
        let addr = listener.local_addr().expect("addr");
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let upstreams = upstreams.clone();
                std::thread::spawn(move || forward(client, &upstreams));
            }
        });
        Forward { addr }
    }

    /// `http://ADDR/mcp`: the MCP URL through the forwarder.
    pub fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

/// The `HOST:PORT` of an `http://HOST:PORT/...` URL.
pub fn addr_of(url: &str) -> SocketAddr {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    rest.split('/').next().expect("authority").parse().expect("HOST:PORT")
}

/// Copies both ways between `client` and the first upstream that accepts, until either
/// side closes; with none accepting, closes `client`.
fn forward(client: TcpStream, upstreams: &[SocketAddr]) {
    let timeout = Duration::from_millis(UPSTREAM_CONNECT_MS_MAX);
    let Some(upstream) = upstreams.iter().find_map(|a| TcpStream::connect_timeout(a, timeout).ok()) else {
        return;
    };
    let (Ok(client_read), Ok(upstream_read)) = (client.try_clone(), upstream.try_clone()) else { return };
    let back = std::thread::spawn(move || pipe(upstream_read, client));
    pipe(client_read, upstream);
    let _ = back.join();
}

/// Copies `from` into `to` until `from` ends, then closes both for writing and reading.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
