//! The poster: the shell's `NotifySink` hands each notice to a channel (the engine
//! thread has no I/O driver); a task on the daemon's runtime posts it over HTTP/1, in
//! clear for `http://` or over TLS for `https://` (the certificate checked for the host
//! name, `tls.rs`), with its signature and its id, and answers the engine with what came
//! of it.

use super::{Form, NotifyStatus, body, hmac};
use address::notify_target;
use engine::notify::{Notice, NoticeOutcome};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use runtime::{Handle, NotifySink};
use rustls::ClientConfig;
use rustls_pki_types::ServerName;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long one post may take, connect to answer, ms: below the engine's
/// `NOTIFY_SEND_MS_MAX`, so the engine hears of a slow receiver before it gives up on the
/// answer.
pub const POST_TIMEOUT_MS: u64 = 30_000;

/// The shell's sink: notices to the poster task.
pub struct ChannelSink(pub mpsc::UnboundedSender<Notice>);

impl NotifySink for ChannelSink {
    fn send(&mut self, notice: Notice) {
        let _ = self.0.send(notice);
    }
}

/// Posts every notice handed out, each in its own task, until the engine stops.
pub async fn poster(
    mut notices: mpsc::UnboundedReceiver<Notice>,
    handle: Handle,
    secret: Arc<[u8]>,
    tls: Arc<ClientConfig>,
    status: Arc<NotifyStatus>,
) {
    while let Some(notice) = notices.recv().await {
        let (handle, secret, tls, status) = (handle.clone(), secret.clone(), tls.clone(), status.clone());
        tokio::spawn(async move {
            let outcome = post(&notice, &secret, tls).await;
            match &outcome {
                NoticeOutcome::Delivered => {
                    tracing::info!(notification = %notice.id, kind = notice.kind.as_str(), "notification delivered")
                }
                NoticeOutcome::Failed { detail } | NoticeOutcome::Refused { detail } => {
                    tracing::warn!(notification = %notice.id, kind = notice.kind.as_str(), %detail, "notification not delivered");
                    status.failed(notice.id, detail, wall_clock_ms());
                }
            }
            let _ = handle.notified(notice.id, outcome).await;
        });
    }
}

/// What went wrong on the way: before anything was sent (the handshake), or after.
type Trouble = Box<dyn std::error::Error + Send + Sync>;

/// One post: signed body, `Idempotency-Key` = the notification id.
pub async fn post(notice: &Notice, secret: &[u8], tls: Arc<ClientConfig>) -> NoticeOutcome {
    let failed = |detail: String| NoticeOutcome::Failed { detail: detail.into() };
    let target = match notify_target::parse(&notice.target) {
        Ok(t) => t,
        Err(e) => return NoticeOutcome::Refused { detail: e.to_string().into() },
    };
    let (content_type, bytes) = body(notice, target.form);
    let mut request = Request::post(target.path.as_str())
        .header(hyper::header::HOST, target.authority())
        .header(hyper::header::CONTENT_TYPE, content_type)
        .header("X-Orchestrator-Signature", hmac::signature(secret, &bytes))
        .header("X-Orchestrator-Notification", notice.id.to_string())
        .header("Idempotency-Key", notice.id.to_string());
    if target.form == Form::Text {
        // ntfy's title; header values are ASCII, so other characters become `?`.
        let title: String =
            notice.title.chars().map(|c| if c.is_ascii() && !c.is_control() { c } else { '?' }).collect();
        request = request.header("Title", title);
    }
    let request = match request.body(Full::new(Bytes::from(bytes))) {
        Ok(r) => r,
        Err(e) => return NoticeOutcome::Refused { detail: e.to_string().into() },
    };
    let exchange = async {
        let stream = tokio::net::TcpStream::connect((target.host.as_str(), target.port)).await?;
        if !target.tls {
            return send(stream, request).await;
        }
        // SNI and the certificate check both go by the target's host name (or address).
        let name = ServerName::try_from(target.host.clone())?;
        let stream = match tokio_rustls::TlsConnector::from(tls).connect(name, stream).await {
            Ok(stream) => stream,
            Err(e) => return Err(super::tls::handshake_failure(&e).into()),
        };
        send(stream, request).await
    };
    match tokio::time::timeout(Duration::from_millis(POST_TIMEOUT_MS), exchange).await {
        Err(_) => failed("no answer in time".into()),
        Ok(Err(e)) => failed(e.to_string()),
        Ok(Ok(status)) if status.is_success() => NoticeOutcome::Delivered,
        Ok(Ok(status))
            if status.is_server_error()
                || status == StatusCode::TOO_MANY_REQUESTS
                || status == StatusCode::REQUEST_TIMEOUT =>
        {
            failed(format!("the receiver answered {status}"))
        }
        Ok(Ok(status)) => NoticeOutcome::Refused { detail: format!("the receiver answered {status}").into() },
    }
}

/// The request over an open stream (plain or TLS), HTTP/1; the answer's status.
async fn send<S>(stream: S, request: Request<Full<Bytes>>) -> Result<StatusCode, Trouble>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender.send_request(request).await?.status())
}

/// Milliseconds since the Unix epoch (when a post failed, for a person).
pub(crate) fn wall_clock_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
