//! The poster: the shell's `NotifySink` hands each notice to a channel (the engine
//! thread has no I/O driver); a task on the daemon's runtime posts it over HTTP/1 with
//! its signature and its id, and answers the engine with what came of it.

use super::{Form, body, hmac, parse_target};
use engine::notify::{Notice, NoticeOutcome};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use runtime::{Handle, NotifySink};
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
pub async fn poster(mut notices: mpsc::UnboundedReceiver<Notice>, handle: Handle, secret: Arc<[u8]>) {
    while let Some(notice) = notices.recv().await {
        let (handle, secret) = (handle.clone(), secret.clone());
        tokio::spawn(async move {
            let outcome = post(&notice, &secret).await;
            match &outcome {
                NoticeOutcome::Delivered => {
                    tracing::info!(notification = %notice.id, kind = notice.kind.as_str(), "notification delivered")
                }
                NoticeOutcome::Failed { detail } | NoticeOutcome::Refused { detail } => {
                    tracing::warn!(notification = %notice.id, kind = notice.kind.as_str(), %detail, "notification not delivered")
                }
            }
            let _ = handle.notified(notice.id, outcome).await;
        });
    }
}

/// One post: signed body, `Idempotency-Key` = the notification id.
pub async fn post(notice: &Notice, secret: &[u8]) -> NoticeOutcome {
    let failed = |detail: String| NoticeOutcome::Failed { detail: detail.into() };
    let target = match parse_target(&notice.target) {
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
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        let response = sender.send_request(request).await?;
        Ok::<StatusCode, Box<dyn std::error::Error + Send + Sync>>(response.status())
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
