//! What a standby daemon answers on its listener (issue 32, `docs/scale-out.md`
//! "Standby"): every request, MCP, the executor endpoint and `/health` alike, gets HTTP 503
//! and `{"code":"NOT_LEADER","message":"not the leader; the leader is URL","leader":"URL"}`
//! (`/health` adds `"status":"standby"`), so a caller or a load balancer's health check goes
//! to the leader instead. Nothing a standby says is secret (the leader's URL is in the
//! lease row), so it checks no token.

use address::HEALTH_PATH;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use std::sync::{Arc, Mutex};

/// The stable code of a standby's answer.
pub const NOT_LEADER: &str = "NOT_LEADER";

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
    (StatusCode::SERVICE_UNAVAILABLE, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}
