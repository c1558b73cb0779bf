//! The listener ([`bind`], with a listen backlog deep enough for a flood's reconnections)
//! and the accept loop ([`serve`]): every connection on the listener admitted into the pending
//! pool (shedding the longest idle pending connection when full; a short `503` only when
//! every place is established), served by hyper's HTTP/1 connection with its header read
//! timeout and upgrades, on an [`EdgeIo`] socket with the idle timeout; refusals, sheddings
//! and timeouts counted and summarized once per [`LOG_SUMMARY_INTERVAL_MS`]; graceful
//! shutdown that waits for every admitted connection to go.

use crate::activity::Activity;
use crate::gate::{Caps, Gate, Refusal, ShedFor};
use crate::idle::{EdgeIo, IdleTimeout, Shed};
use crate::limits::{EdgeLimits, LISTEN_BACKLOG, LOG_SUMMARY_INTERVAL_MS, PENDING_SHED_AGE_MIN_MS};
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// A refused connection is read from (and its bytes discarded) at most this long after
/// the 503, so that closing it does not reset the connection before the client read
/// the answer.
const REFUSAL_LINGER_MS: u64 = 1_000;
/// At most this many refused connections linger at once; past it they are dropped
/// without an answer.
const REFUSALS_LINGERING_MAX: usize = 64;
/// Bytes of a refused connection's request read (and discarded) before closing it.
const REFUSAL_DRAIN_BYTES_MAX: usize = 64 * 1024;
/// The whole answer to a refused connection.
const REFUSAL_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
content-length: 40\r\nretry-after: 1\r\nconnection: close\r\n\r\ntoo many connections; try again shortly\n";
/// Pause after a failed `accept` (out of file descriptors, mostly) before the next one.
const ACCEPT_ERROR_BACKOFF_MS: u64 = 100;

/// Counts of what happened at the edge since the last summary line.
#[derive(Debug, Default)]
struct Tally {
    refused_total: AtomicU64,
    refused_per_ip: AtomicU64,
    refused_unanswered: AtomicU64,
    shed_pool: AtomicU64,
    shed_address: AtomicU64,
    header_timeouts: AtomicU64,
    idle_timeouts: AtomicU64,
    accept_errors: AtomicU64,
}

impl Tally {
    /// Logs what happened since the last call (nothing when nothing did).
    fn summarize(&self, limits: &EdgeLimits, interval_ms: u64) {
        let take = |c: &AtomicU64| c.swap(0, Ordering::Relaxed);
        let (total, per_ip, unanswered) =
            (take(&self.refused_total), take(&self.refused_per_ip), take(&self.refused_unanswered));
        if total + per_ip > 0 {
            tracing::warn!(
                over_connections_max = total,
                over_connections_per_ip_max = per_ip,
                closed_without_answer = unanswered,
                connections_max = limits.connections_max,
                connections_per_ip_max = limits.connections_per_ip_max,
                "refused {} connections with 503 in the last {} s (connection caps reached)",
                total + per_ip,
                interval_ms / 1_000,
            );
        }
        let (pool, address) = (take(&self.shed_pool), take(&self.shed_address));
        if pool + address > 0 {
            tracing::warn!(
                pending_pool_full = pool,
                address_at_its_cap = address,
                pending_connections_max = limits.pending_connections_max,
                connections_per_ip_max = limits.connections_per_ip_max,
                "closed {} pending connections (no request authenticated on them yet) in the last {} s to make room \
                 for newer ones",
                pool + address,
                interval_ms / 1_000,
            );
        }
        let (header, idle) = (take(&self.header_timeouts), take(&self.idle_timeouts));
        if header + idle > 0 {
            tracing::debug!(
                header_read_timeouts = header,
                idle_timeouts = idle,
                "closed {} silent connections in the last {} s",
                header + idle,
                interval_ms / 1_000,
            );
        }
        let errors = take(&self.accept_errors);
        if errors > 0 {
            tracing::warn!(errors, "accept failed {errors} times in the last {} s", interval_ms / 1_000);
        }
    }
}

/// A listener on `addr` (address reuse on, as the standard library's) whose backlog holds
/// [`LISTEN_BACKLOG`] connections waiting for `accept`. The standard library's and tokio's
/// `bind` ask for 128: while the accept loop waits for a pending connection to come of
/// age, a flood's reconnections overflowed that queue, the kernel dropped the handshakes
/// that came next, and a new client waited for its SYN to be sent again (1 s, then 2 s:
/// `ListenOverflows` counted it, docs/benchmarks.md).
pub fn bind(addr: SocketAddr) -> io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    #[cfg(not(windows))]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Serves `router` on `listener` with the edge's limits until `stop` is cancelled, then
/// asks every connection to finish its request in flight and close, and completes once
/// all are gone (the caller bounds how long it waits).
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    limits: EdgeLimits,
    stop: CancellationToken,
) {
    let gate = Gate::new(Caps {
        total_max: limits.connections_max,
        pending_max: limits.pending_connections_max,
        per_ip_max: limits.connections_per_ip_max,
        trusted_proxies: limits.trusted_proxies.clone(),
        shed_age_min: Duration::from_millis(PENDING_SHED_AGE_MIN_MS),
    });
    let tally = Arc::new(Tally::default());
    let lingering = Arc::new(Semaphore::new(REFUSALS_LINGERING_MAX));
    let summaries = tokio::spawn({
        let tally = tally.clone();
        let stop = stop.clone();
        let limits = limits.clone();
        async move {
            let period = Duration::from_millis(LOG_SUMMARY_INTERVAL_MS);
            let mut tick = tokio::time::interval_at(Instant::now() + period, period);
            loop {
                tokio::select! {
                    _ = tick.tick() => tally.summarize(&limits, LOG_SUMMARY_INTERVAL_MS),
                    () = stop.cancelled() => break,
                }
            }
            tally.summarize(&limits, LOG_SUMMARY_INTERVAL_MS);
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(Duration::from_millis(limits.header_read_timeout_ms));
    let idle = Duration::from_millis(limits.idle_timeout_ms);
    loop {
        let (tcp, peer) = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tally.accept_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(ACCEPT_ERROR_BACKOFF_MS)).await;
                    continue;
                }
            },
        };
        let activity = Activity::new();
        let mut admission = gate.admit(peer.ip(), activity.clone());
        // The pools are full of connections too young to shed: this one waits for the
        // first to come of age, and so does the accept loop (the backlog holds the rest).
        while let Err(Refusal::NotYet(when)) = admission {
            tokio::select! {
                biased;
                () = stop.cancelled() => break,
                () = tokio::time::sleep_until(when) => {}
            }
            admission = gate.admit(peer.ip(), activity.clone());
        }
        let admitted = match admission {
            Ok(admitted) => admitted,
            Err(refusal) => {
                match refusal {
                    Refusal::Total | Refusal::NotYet(_) => &tally.refused_total,
                    Refusal::PerIp => &tally.refused_per_ip,
                }
                .fetch_add(1, Ordering::Relaxed);
                match lingering.clone().try_acquire_owned() {
                    Ok(permit) => {
                        tokio::spawn(refuse(tcp, permit));
                    }
                    Err(_) => {
                        tally.refused_unanswered.fetch_add(1, Ordering::Relaxed);
                    }
                }
                continue;
            }
        };
        for shed in &admitted.shed {
            match shed {
                ShedFor::Pool => &tally.shed_pool,
                ShedFor::Address => &tally.shed_address,
            }
            .fetch_add(1, Ordering::Relaxed);
        }
        // Answers go out in several writes: without TCP_NODELAY, Nagle's algorithm and
        // the client's delayed ACK add about 40 ms to every call.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let standing = admitted.standing;
        let io =
            TokioIo::new(EdgeIo::new(tcp, activity.clone(), idle, Some(admitted.admission)).on_shed(reset_on_close));
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            // The peer's address, for the executor endpoint's loopback check; the
            // connection's activity, for the answering mark; its standing, for the route
            // that authenticates the client.
            request.extensions_mut().insert(ConnectInfo(peer));
            request.extensions_mut().insert(activity.clone());
            request.extensions_mut().insert(standing.clone());
            let in_flight = activity.in_flight();
            let response = router.clone().oneshot(request);
            async move {
                let response = response.await;
                drop(in_flight);
                response
            }
        });
        let connection = http.serve_connection(io, service).with_upgrades();
        let (stop, tally) = (stop.clone(), tally.clone());
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                note_connection_error(&tally, &e, peer);
            }
        });
        // Let the new connection read what its client already sent before the next accept:
        // under a flood of new connections the pending pool turns over quickly, and a client
        // whose request waits unread behind hundreds of accepts would be shed unheard.
        tokio::task::yield_now().await;
    }
    drop(listener);
    let _ = summaries.await;
    gate.drained().await;
}

/// Makes a shed connection close with a reset rather than a FIN: the daemon then keeps no
/// TIME_WAIT entry for it. A flood that reconnects a thousand times a second from one
/// address would otherwise fill the daemon's side with TIME_WAIT entries, and a new
/// connection from a reused port of that address (every local client shares 127.0.0.1)
/// would meet one and wait for its SYN to be sent again (1 s, then 2 s).
fn reset_on_close(tcp: &tokio::net::TcpStream) {
    // A zero linger never blocks the drop (the deprecation is about non-zero ones).
    #[allow(deprecated, reason = "SO_LINGER 0: close sends a reset and never blocks")]
    if let Err(e) = tcp.set_linger(Some(Duration::ZERO)) {
        tracing::debug!(error = %e, "cannot set SO_LINGER on a shed connection");
    }
}

/// Counts a timed-out connection; a shed one was counted when it was shed; other errors
/// (resets, client bugs) are debug lines.
fn note_connection_error(tally: &Tally, e: &hyper::Error, peer: SocketAddr) {
    if e.is_timeout() {
        tally.header_timeouts.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<IdleTimeout>() {
            tally.idle_timeouts.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if s.is::<Shed>() {
            return;
        }
        source = s.source();
    }
    tracing::debug!(%peer, error = %e, "connection ended with an error");
}

/// Answers a refused connection with a 503, then reads what it sends (briefly, boundedly)
/// so that the close does not reset the connection before the answer is read.
async fn refuse(mut tcp: tokio::net::TcpStream, _permit: OwnedSemaphorePermit) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let answered = async {
        tcp.write_all(REFUSAL_RESPONSE).await?;
        tcp.shutdown().await?;
        let mut scratch = [0u8; 4096];
        let mut drained = 0;
        while drained < REFUSAL_DRAIN_BYTES_MAX {
            let n = tcp.read(&mut scratch).await?;
            if n == 0 {
                break;
            }
            drained += n;
        }
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(Duration::from_millis(REFUSAL_LINGER_MS), answered).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Connections that the listen backlog must hold while nothing accepts them: more than
    /// the 128 of the standard library's `bind`, so that a shallow backlog fails the test.
    const WAITING_CONNECTIONS: usize = 400;
    /// Upper bound on the wait for every handshake (they complete at once when held).
    const HANDSHAKES_MS_MAX: u64 = 10_000;

    #[tokio::test]
    async fn the_backlog_holds_hundreds_of_handshakes_while_the_accept_loop_waits() {
        let listener = bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let addr = listener.local_addr().expect("addr");
        // Nothing accepts: every connection waits in the backlog, as a flood's reconnections
        // do while the accept loop waits for a pending connection to come of age. With a
        // backlog of 128 the kernel drops the handshakes past it and their connects hang.
        // The kernel caps every backlog at `net.core.somaxconn` (4,096 since Linux 5.4; 128
        // before): on such a kernel the test holds what the daemon can get there.
        let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn").ok();
        let cap = somaxconn.and_then(|s| s.trim().parse::<usize>().ok()).unwrap_or(WAITING_CONNECTIONS);
        let waiting = WAITING_CONNECTIONS.min(cap);
        if waiting < WAITING_CONNECTIONS {
            eprintln!("net.core.somaxconn is {cap}: the kernel holds at most {cap} handshakes in any backlog");
        }
        let mut connects = tokio::task::JoinSet::new();
        for _ in 0..waiting {
            connects.spawn(tokio::net::TcpStream::connect(addr));
        }
        let all = connects.join_all();
        let held = tokio::time::timeout(Duration::from_millis(HANDSHAKES_MS_MAX), all)
            .await
            .expect("every handshake completes while nothing accepts");
        assert!(held.iter().all(Result::is_ok), "every connection is held");
        drop(listener);
    }
}
