//! The idle timeout: [`EdgeIo`], a connection's socket that fails a read or write waiting
//! past the idle limit with no byte moved either way, and [`Activity`], what moves on the
//! connection, with the mark of a request being answered (during which no idle timeout
//! runs: a long poll holds its request legitimately). After a WebSocket upgrade the same
//! rule holds on the upgraded socket.

use crate::gate::Admission;
use axum::extract::Request;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// What moves on one connection: when a byte last did, and how many requests are being
/// answered. Shared by the connection's [`EdgeIo`] and its requests (as an extension).
#[derive(Debug)]
pub struct Activity {
    /// Time origin of `last_ms`.
    base: Instant,
    /// When a byte last moved, in milliseconds after `base`.
    last_ms: AtomicU64,
    /// Requests whose answer is being worked on.
    answering: AtomicUsize,
}

impl Activity {
    pub(crate) fn new() -> Arc<Activity> {
        Arc::new(Activity { base: Instant::now(), last_ms: AtomicU64::new(0), answering: AtomicUsize::new(0) })
    }

    fn touch(&self) {
        let now = self.base.elapsed().as_millis() as u64;
        self.last_ms.fetch_max(now, Ordering::Relaxed);
    }

    /// Marks a request as being answered until the guard is dropped: the idle timeout
    /// does not run meanwhile (the client is waiting on us, not the other way round).
    pub fn answering(self: &Arc<Activity>) -> Answering {
        self.answering.fetch_add(1, Ordering::AcqRel);
        Answering(self.clone())
    }

    /// When the connection becomes idle past `idle`, unless a byte moves first.
    fn idle_deadline(&self, idle: Duration) -> Instant {
        self.base + Duration::from_millis(self.last_ms.load(Ordering::Relaxed)) + idle
    }
}

/// A request being answered ([`Activity::answering`]).
#[derive(Debug)]
pub struct Answering(Arc<Activity>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.touch();
        let before = self.0.answering.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(before > 0, "one answering mark dropped twice");
    }
}

/// Marks `request` as being answered, when it came through the edge.
pub fn answering(request: &Request) -> Option<Answering> {
    request.extensions().get::<Arc<Activity>>().map(|a| a.answering())
}

/// A connection's socket with the idle timeout: reads and writes that wait past
/// [`EdgeLimits::idle_timeout_ms`] with no byte moved and no request being answered fail
/// with `TimedOut`, which ends the connection (or the WebSocket on it).
#[derive(Debug)]
pub struct EdgeIo<T> {
    inner: T,
    activity: Arc<Activity>,
    idle: Duration,
    read_sleep: Pin<Box<Sleep>>,
    write_sleep: Pin<Box<Sleep>>,
    _admission: Option<Admission>,
}

impl<T> EdgeIo<T> {
    pub(crate) fn new(inner: T, activity: Arc<Activity>, idle: Duration, admission: Option<Admission>) -> EdgeIo<T> {
        let deadline = activity.idle_deadline(idle);
        EdgeIo {
            inner,
            activity,
            idle,
            read_sleep: Box::pin(tokio::time::sleep_until(deadline)),
            write_sleep: Box::pin(tokio::time::sleep_until(deadline)),
            _admission: admission,
        }
    }
}

/// `Ready(Err(TimedOut))` once the connection has been idle too long; otherwise arms
/// `sleep` for the moment it would be and returns `Pending`.
fn poll_idle(
    activity: &Activity,
    idle: Duration,
    sleep: &mut Pin<Box<Sleep>>,
    cx: &mut Context<'_>,
) -> Poll<io::Error> {
    loop {
        let now = Instant::now();
        let deadline = if activity.answering.load(Ordering::Acquire) > 0 {
            now + idle
        } else {
            let deadline = activity.idle_deadline(idle);
            if deadline <= now {
                return Poll::Ready(io::Error::new(io::ErrorKind::TimedOut, IdleTimeout));
            }
            deadline
        };
        if sleep.deadline() != deadline {
            sleep.as_mut().reset(deadline);
        }
        ready!(sleep.as_mut().poll(cx));
    }
}

/// The error inside the `TimedOut` of an idle connection, to tell it from others.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("no byte in either direction for the idle timeout")]
pub struct IdleTimeout;

impl<T: AsyncRead + Unpin> AsyncRead for EdgeIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    this.activity.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => poll_idle(&this.activity, this.idle, &mut this.read_sleep, cx).map(Err),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for EdgeIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(result) => {
                if result.as_ref().is_ok_and(|n| *n > 0) {
                    this.activity.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => poll_idle(&this.activity, this.idle, &mut this.write_sleep, cx).map(Err),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(result) => {
                if result.as_ref().is_ok_and(|n| *n > 0) {
                    this.activity.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => poll_idle(&this.activity, this.idle, &mut this.write_sleep, cx).map(Err),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_idle_socket_times_out_unless_a_request_is_being_answered() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let idle = Duration::from_millis(1_000);
        let (near, mut far) = tokio::io::duplex(64);
        let activity = Activity::new();
        let mut io = EdgeIo::new(near, activity.clone(), idle, None);
        let answering = activity.answering();
        let mut buf = [0u8; 8];
        // Answering: ten idle periods pass and the read is still waiting.
        let waited = tokio::time::timeout(idle * 10, io.read(&mut buf)).await;
        assert!(waited.is_err(), "no idle timeout while answering");
        drop(answering);
        far.write_all(b"x").await.expect("write");
        assert_eq!(io.read(&mut buf).await.expect("a byte"), 1);
        let started = Instant::now();
        let err = io.read(&mut buf).await.expect_err("times out");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), idle, "exactly one idle period after the last byte");
    }
}
