//! What a standby daemon answers on its listener (issue 32, `docs/scale-out.md`
//! "Standby"): every request, MCP, the executor endpoint and `/health` alike, gets HTTP 503
//! and `{"code":"NOT_LEADER","message":"not the leader; the leader is URL","leader":"URL"}`
//! (`/health` adds `"status":"standby"`), so a caller or a load balancer's health check goes
//! to the leader instead. Nothing a standby says is secret (the leader's URL is in the
//! lease row), so it checks no token, and every answer carries
//! `Access-Control-Allow-Origin: *` so that any origin may read it: the browser extension,
//! which cannot read a refused WebSocket upgrade, asks a standby's `/health` over `fetch`
//! which daemon leads (`extension/src/core/follow.js`), without host permissions for it.

use address::HEALTH_PATH;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use std::sync::{Arc, Mutex};

/// The stable code of a standby's answer.
pub const NOT_LEADER: &str = "NOT_LEADER";

/// Who may read a standby's answer from a browser: anyone (it holds nothing secret).
pub const STANDBY_ALLOW_ORIGIN: &str = "*";

/// The leader as the standby saw it last (its poll updates it).
#[derive(Clone, Debug, Default)]
pub struct LeaderView {
    /// The URL the leader serves at (its MCP endpoint), empty when it did not say.
    pub url: String,
    /// Its epoch.
    pub epoch: u64,
}

/// The shared view the poll updates and the route reads.
pub type SharedView = Arc<Mutex<LeaderView>>;

/// The standby's router: one answer for every path.
pub fn router(view: SharedView) -> axum::Router {
    axum::Router::new().fallback(move |uri: Uri| {
        let view = view.clone();
        async move { answer(&view, &uri) }
    })
}

/// 503 and the leader, as JSON.
fn answer(view: &SharedView, uri: &Uri) -> Response {
    let leader = view.lock().map(|v| v.clone()).unwrap_or_default();
    let named = if leader.url.is_empty() { "unknown (it did not say)" } else { leader.url.as_str() };
    let mut body = serde_json::json!({
        "code": NOT_LEADER,
        "message": format!("not the leader; the leader is {named}"),
        "leader": leader.url,
        "epoch": leader.epoch,
    });
    if uri.path() == HEALTH_PATH {
        body["status"] = "standby".into();
        body["version"] = env!("CARGO_PKG_VERSION").into();
    }
    let headers =
        [(header::CONTENT_TYPE, "application/json"), (header::ACCESS_CONTROL_ALLOW_ORIGIN, STANDBY_ALLOW_ORIGIN)];
    (StatusCode::SERVICE_UNAVAILABLE, headers, body.to_string()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_is_a_503_that_any_origin_may_read() {
        let view: SharedView = Arc::new(Mutex::new(LeaderView { url: "http://10.0.0.7:7411/mcp".into(), epoch: 4 }));
        for path in [HEALTH_PATH, "/executor", "/mcp"] {
            let response = answer(&view, &path.parse().expect("a path"));
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
            let allowed = response.headers().get(header::ACCESS_CONTROL_ALLOW_ORIGIN);
            assert_eq!(allowed.and_then(|v| v.to_str().ok()), Some("*"), "{path}: readable from the extension");
        }
    }
}
