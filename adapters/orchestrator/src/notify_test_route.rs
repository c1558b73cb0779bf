//! `POST /notify/test` (`orchestrator notify test`): one test notification to every
//! `--notify` target, posted at once by the same poster, signed with the same secret, over
//! the same TLS roots as the real ones, and answered per target, so a person sees their
//! phone buzz (or why not) before the first night. Not an episode: nothing is stored, it
//! is not retried, and its id (`ntf-<wall-clock ms>-<target>`) is fresh per test, so a
//! receiver that drops repeated ids still shows the next test.
//!
//! The caller is checked as `/health` checks its own: a loopback `Host`, no `Origin`, the
//! static MCP token.

use crate::notify::post::{post, wall_clock_ms};
use crate::pair_route::json;
use address::notify_target::{self, NOTIFY_TEST_PATH, NotifyTestAnswer, NotifyTestResult};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use engine::Timestamp;
use engine::ids::{Cursor, RunId};
use engine::notify::{Notice, NoticeId, NoticeKind, NoticeOutcome, NoticeStatus};
use rustls::ClientConfig;
use std::sync::Arc;

/// What the route needs: the daemon's targets and what signs and carries their posts.
pub struct TestState {
    /// The `--notify` targets, in order (empty: the answer has no results).
    pub targets: Vec<Arc<str>>,
    /// The signing secret (`DIR/notify-secret`); `None` when there are no targets.
    pub secret: Option<Arc<[u8]>>,
    /// The roots `https://` targets are checked against.
    pub tls: Arc<ClientConfig>,
    /// The static MCP token, the route's credential.
    pub mcp_token: String,
}

/// The route.
pub fn router(state: Arc<TestState>) -> axum::Router {
    axum::Router::new().route(NOTIFY_TEST_PATH, axum::routing::post(test)).with_state(state)
}

/// The test notice for target number `index`, made at `now_ms`.
fn test_notice(target: &Arc<str>, index: usize, now_ms: u64) -> Notice {
    Notice {
        id: NoticeId::new(Cursor(now_ms), index as u64),
        target: target.clone(),
        kind: NoticeKind::Test,
        run: RunId(0),
        worker: None,
        title: Arc::from("Test notification from orchestrator"),
        text: Arc::from("orchestrator notify test: this is where you will hear when a worker needs you or a run ends."),
        until: None,
        at: Timestamp(now_ms),
        failures: 0,
        next_at: Timestamp(now_ms),
        status: NoticeStatus::Pending,
    }
}

async fn test(State(state): State<Arc<TestState>>, headers: HeaderMap) -> Response {
    if let Some((status, why)) = crate::health::refusal(&headers, &state.mcp_token) {
        return json(status, &serde_json::json!({ "code": "NOTIFY_TEST_REFUSED", "message": why }));
    }
    let now_ms = wall_clock_ms();
    let mut posts = Vec::new();
    for (index, target) in state.targets.iter().enumerate() {
        let notice = test_notice(target, index, now_ms);
        let (secret, tls) = (state.secret.clone().unwrap_or_else(|| Arc::from(&[][..])), state.tls.clone());
        posts.push(tokio::spawn(async move { post(&notice, &secret, tls).await }));
    }
    let mut results = Vec::new();
    for (target, handle) in state.targets.iter().zip(posts) {
        let shown = notify_target::parse(target).map_or_else(|_| "(a target the daemon refused)".into(), |t| t.shown());
        let (delivered, detail) = match handle.await {
            Ok(NoticeOutcome::Delivered) => (true, String::new()),
            Ok(NoticeOutcome::Failed { detail } | NoticeOutcome::Refused { detail }) => (false, detail.to_string()),
            Err(e) => (false, format!("the post stopped: {e}")),
        };
        tracing::info!(target = %shown, delivered, "test notification");
        results.push(NotifyTestResult { target: shown, delivered, detail });
    }
    json(StatusCode::OK, &NotifyTestAnswer { results })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_notice_is_its_own_kind_with_a_fresh_id_per_test() {
        let target: Arc<str> = Arc::from("http://127.0.0.1:9/hook");
        let (a, b) = (test_notice(&target, 1, 1_000), test_notice(&target, 1, 2_000));
        assert_eq!(
            (a.kind.as_str(), a.id.to_string(), b.id.to_string()),
            ("test", "ntf-1000-1".into(), "ntf-2000-1".into())
        );
    }
}
