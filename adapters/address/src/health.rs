//! `GET /health`'s answer: what a running daemon says about itself to the operator (its
//! version, the executor protocol it speaks, the executors connected now, the hellos it
//! refused for their protocol version, its public address, what its notifications came
//! to). The daemon serves it; `orchestrator doctor` reads it.

use serde::{Deserialize, Serialize};

/// The route.
pub const HEALTH_PATH: &str = "/health";

/// What `/health` answers (JSON, camelCase).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// The daemon's version (`orchestrator --version`).
    pub version: String,
    /// The executor protocol version it speaks; `None` when no bridge is mounted.
    pub executor_protocol: Option<u32>,
    /// The executors connected now (their `hello` accepted), by id.
    pub executors: Vec<String>,
    /// The same executors with the worker kinds each runs (`chatgpt`: a browser profile;
    /// `codex`, `claude`: a CLI executor). Absent from older daemons.
    #[serde(default)]
    pub executor_kinds: Vec<ExecutorKindsView>,
    /// The newest hellos refused because the executor spoke another protocol version.
    pub refused_hellos: Vec<RefusedHelloView>,
    /// The `--public-url` the daemon serves OAuth for (its issuer), if any.
    pub public_url: Option<String>,
    /// What its notifications came to (`--notify`); absent without targets, and from
    /// older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<NotificationsView>,
}

/// The notification outbox as its durable records say, and the last post that failed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationsView {
    /// The `--notify` targets configured now.
    pub targets: u64,
    /// Notices their receiver acknowledged (a 2xx), ever.
    pub delivered: u64,
    /// Notices not yet acknowledged (being posted, or waiting for their retry).
    pub pending: u64,
    /// Notices given up (refused for good, or not taken for a day).
    pub abandoned: u64,
    /// The last post that did not deliver, since the daemon started.
    pub last_failure: Option<NotificationFailureView>,
}

/// A post that did not deliver.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationFailureView {
    /// The notification (`ntf-EPISODE-TARGET`).
    pub notification_id: String,
    /// What went wrong (never the body).
    pub detail: String,
    /// When, in ms since the Unix epoch.
    pub at_ms: u64,
}

impl NotificationsView {
    /// One line for a person: `6 delivered, 0 pending, 0 abandoned (2 targets)`, and the
    /// last failure with how long ago it was, as of `now_ms`.
    pub fn line(&self, now_ms: u64) -> String {
        let mut line = format!(
            "{} delivered, {} pending, {} abandoned ({} target{})",
            self.delivered,
            self.pending,
            self.abandoned,
            self.targets,
            if self.targets == 1 { "" } else { "s" }
        );
        if let Some(f) = &self.last_failure {
            let ago_s = now_ms.saturating_sub(f.at_ms) / 1_000;
            line.push_str(&format!("; last failure {ago_s} s ago ({}): {}", f.notification_id, f.detail));
        }
        line
    }
}

/// One connected executor and the worker kinds it runs, as `/health` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutorKindsView {
    /// Its id (its `hello`'s `executorId`).
    pub executor_id: String,
    /// The kinds it runs: `chatgpt`, `codex`, `claude`.
    pub kinds: Vec<String>,
}

/// One refused hello, as `/health` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedHelloView {
    /// The protocol version the executor asked for.
    pub protocol: u32,
    /// When, in ms since the Unix epoch.
    pub at_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notifications_line_counts_and_names_the_last_failure() {
        let mut v = NotificationsView { targets: 2, delivered: 6, ..NotificationsView::default() };
        assert_eq!(v.line(0), "6 delivered, 0 pending, 0 abandoned (2 targets)");
        v.pending = 1;
        v.last_failure =
            Some(NotificationFailureView { notification_id: "ntf-9-0".into(), detail: "refused".into(), at_ms: 1_000 });
        assert_eq!(
            v.line(61_000),
            "6 delivered, 1 pending, 0 abandoned (2 targets); last failure 60 s ago (ntf-9-0): refused"
        );
        let json = serde_json::to_value(&v).expect("json");
        assert_eq!(json["lastFailure"]["notificationId"], "ntf-9-0");
        let old: Health = serde_json::from_str(
            r#"{"version":"0","executorProtocol":null,"executors":[],"refusedHellos":[],"publicUrl":null}"#,
        )
        .expect("an older daemon's answer");
        assert_eq!(old.notifications, None);
    }
}
