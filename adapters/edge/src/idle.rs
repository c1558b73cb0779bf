//! The idle timeout and shedding on the socket: [`EdgeIo`], a connection's socket that
//! fails a read or write waiting past the idle limit with no byte moved either way (unless
//! a request is being answered: [`Activity`]), or at once when the pending pool shed the
//! connection. After a WebSocket upgrade the same rules hold on the upgraded socket.

use crate::activity::Activity;
use crate::gate::Admission;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::WaitForCancellationFutureOwned;

/// A connection's socket with the idle timeout: reads and writes that wait past
/// [`EdgeLimits::idle_timeout_ms`] with no byte moved and no request being answered fail
/// with `TimedOut`, which ends the connection (or the WebSocket on it). Once the pending
/// pool sheds the connection, every read and write fails with `ConnectionAborted`.
///
/// [`EdgeLimits::idle_timeout_ms`]: crate::EdgeLimits::idle_timeout_ms
#[derive(Debug)]
pub struct EdgeIo<T> {
    inner: T,
    activity: Arc<Activity>,
    idle: Duration,
    read_sleep: Pin<Box<Sleep>>,
    write_sleep: Pin<Box<Sleep>>,
    /// Completes when the pending pool sheds this connection.
    shed: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
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
            shed: admission.as_ref().map(|a| Box::pin(a.shed_signal().cancelled_owned())),
            _admission: admission,
        }
    }

    /// The error every read and write returns once the connection was shed (and the
    /// waker armed for that moment otherwise).
    fn poll_shed(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        let shed = self.shed.as_mut()?;
        shed.as_mut().poll(cx).is_ready().then(|| io::Error::new(io::ErrorKind::ConnectionAborted, Shed))
    }
}

/// The error inside the `ConnectionAborted` of a connection the pending pool shed.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("shed from the pending pool to make room for a newer connection")]
pub struct Shed;

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
        let deadline = if activity.is_answering() {
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
        if let Some(e) = this.poll_shed(cx) {
            return Poll::Ready(Err(e));
        }
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
        if let Some(e) = this.poll_shed(cx) {
            return Poll::Ready(Err(e));
        }
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
        if let Some(e) = this.poll_shed(cx) {
            return Poll::Ready(Err(e));
        }
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
