//! Request bodies: [`read_body`] reads one whole, within a deadline and a cap, and turns
//! what breaks its own framing into a 400 instead of a 500 downstream.

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use std::time::Duration;

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The body broke its own framing (a bad chunk, a body shorter than its
    /// `Content-Length`, a connection that ended mid-body).
    #[error("malformed request body: {0}")]
    Malformed(String),
    /// The body did not arrive whole in time.
    #[error("request body not received within {0} ms")]
    Timeout(u64),
    /// The body is larger than the cap.
    #[error("request body larger than {0} bytes")]
    TooLarge(usize),
}

impl BodyError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            BodyError::Malformed(_) => "BODY_MALFORMED",
            BodyError::Timeout(_) => "BODY_TIMEOUT",
            BodyError::TooLarge(_) => "BODY_TOO_LARGE",
        }
    }

    /// The HTTP status it is answered with: always a client error.
    pub fn status(&self) -> StatusCode {
        match self {
            BodyError::Malformed(_) => StatusCode::BAD_REQUEST,
            BodyError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            BodyError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }
}

impl IntoResponse for BodyError {
    fn into_response(self) -> Response {
        // The connection's framing is broken or abandoned: do not read another request on it.
        let mut response = (self.status(), format!("{self}\n")).into_response();
        response.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
        response
    }
}

/// Reads `body` whole: at most `bytes_max` bytes, within `timeout_ms`.
pub async fn read_body(body: Body, bytes_max: usize, timeout_ms: u64) -> Result<Bytes, BodyError> {
    let limited = http_body_util::Limited::new(body, bytes_max);
    match tokio::time::timeout(Duration::from_millis(timeout_ms), limited.collect()).await {
        Err(_) => Err(BodyError::Timeout(timeout_ms)),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge(bytes_max)),
        Ok(Err(e)) => {
            let mut why = e.to_string();
            let mut source = e.source();
            while let Some(s) = source {
                why = format!("{why}: {s}");
                source = s.source();
            }
            Err(BodyError::Malformed(why))
        }
    }
}
