//! A worker's liveness on the wire (`worker_get`'s and `worker_list`'s `liveness`, and the
//! operator summary's): who carries it (its executor, by id and kind), connected or not,
//! since when, and its CLI retrying inside the running turn; and the one line a person
//! reads about it ([`LivenessOut::line`]), the same on every surface.

use crate::out::ms;
use engine::ExecutorKind;
use engine::limits::CLI_RETRY_MS_MAX;
use engine::view::{LivenessView, RetryView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who carries an unfinished worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LivenessOut {
    /// `connected` (its executor is there), `offline` (the executor holding its
    /// conversation is gone: nothing watches or types into it until that executor is back;
    /// never reported `running` meanwhile) or `unassigned` (no executor holds it yet: its
    /// next command goes to any connected executor of its kind).
    pub state: String,
    /// The executor holding its conversation (or its command), by the id its `hello` gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_id: Option<String>,
    /// The kind of executor it needs: `chatgpt` (a browser profile), `codex` or `claude` (a
    /// CLI executor).
    pub executor_kind: String,
    /// `connected`: since the executor's `hello`; `offline`: since it went away (or the
    /// daemon started); `unassigned`: since no executor of its kind is connected (absent
    /// while one is). Ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
    /// Connected executors that run its kind.
    pub capable_executors: u32,
    /// Present once no executor of its kind has been connected for the daemon's limit
    /// (5 minutes) and `worker.executor_absent` was recorded: since when none is. One
    /// episode per value: notify a person once per value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent_since_ms: Option<u64>,
    /// Its CLI retrying its model connection inside the running turn (network, login,
    /// server errors), while its executor is connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryOut>,
    /// Its next turn waits for a free slot on its host (a CLI executor runs as many turns
    /// at once as its `--turns-max` allows) or on the account it runs under there (as many
    /// as its `--account` allows, on all the hosts that name it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<SlotOut>,
}

/// A CLI worker's next turn waiting for a free slot on its host, or on its account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlotOut {
    /// The host, by the id its `hello` gave.
    pub executor_id: String,
    /// Its other workers' turns running or on their way now (for an account: the
    /// account's, on all its hosts).
    pub busy: u32,
    /// How many it runs at once.
    pub max: u32,
    /// The account whose slots are all taken; absent: the host's are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// How many of `busy` run on hosts not heard from since the daemon started: what they
    /// run under is not known until they reconnect, so they count against the account.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unheard: u32,
}

/// Whether a count is zero (left out of the JSON).
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A CLI retrying inside a worker's running turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetryOut {
    /// What the CLI said, e.g. "Reconnecting... waiting for network" (untrusted text).
    pub reason: String,
    /// Which retry, when the CLI counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// Since when it retries, ms since the Unix epoch. The daemon pauses the worker
    /// (`cli_retrying`) after 10 minutes of it without progress.
    pub since_ms: u64,
}

impl From<&RetryView> for RetryOut {
    fn from(r: &RetryView) -> RetryOut {
        RetryOut { reason: r.reason.to_string(), attempt: r.attempt, since_ms: ms(r.since) }
    }
}

impl From<&LivenessView> for LivenessOut {
    fn from(l: &LivenessView) -> LivenessOut {
        LivenessOut {
            state: l.carrier.as_str().to_string(),
            executor_id: l.executor.as_ref().map(ToString::to_string),
            executor_kind: l.kind.as_str().to_string(),
            since_ms: l.since.map(ms),
            capable_executors: l.capable,
            absent_since_ms: l.absent_since.map(ms),
            retry: l.retry.as_ref().map(RetryOut::from),
            slot: l.slot.as_ref().map(|s| SlotOut {
                executor_id: s.executor.to_string(),
                busy: s.busy,
                max: s.max,
                account: s.account.as_ref().map(ToString::to_string),
                unheard: s.unheard,
            }),
        }
    }
}

/// What a person calls an executor of a kind: a browser profile runs ChatGPT workers, a
/// CLI executor Codex and Claude Code ones.
pub fn executor_kind_name(kind: ExecutorKind) -> &'static str {
    match kind {
        ExecutorKind::Chatgpt => "browser",
        ExecutorKind::Codex => "Codex CLI",
        ExecutorKind::Claude => "Claude Code CLI",
    }
}

/// A time of day as `16:04 UTC` (the daemon knows no time zone).
fn clock(at_ms: u64) -> String {
    const MINUTE_MS: u64 = 60_000;
    let minutes = (at_ms / MINUTE_MS) % (24 * 60);
    format!("{:02}:{:02} UTC", minutes / 60, minutes % 60)
}

impl LivenessOut {
    /// The one line a person reads about who carries the worker, e.g. `executor offline
    /// since 03:12 UTC (Codex CLI cli-host): nothing runs it until it is back`, `CLI
    /// retrying: stream disconnected (since 03:12 UTC; paused after 10 min)` or `carried by
    /// browser chrome-1, connected since 02:40 UTC`.
    pub fn line(&self) -> String {
        let kind = ExecutorKind::parse(&self.executor_kind).map_or("executor", executor_kind_name);
        let since = |prefix: &str| self.since_ms.map(|t| format!("{prefix}{}", clock(t))).unwrap_or_default();
        let executor = self.executor_id.as_deref().unwrap_or("?");
        if let Some(slot) = &self.slot {
            return match &slot.account {
                Some(account) if slot.unheard > 0 => format!(
                    "waiting for a free slot on the {} account {account}: {} of {} turns running under it or \
                     on hosts not heard from since the daemon started ({} there, counted until they reconnect)",
                    kind.trim_end_matches(" CLI"),
                    slot.busy,
                    slot.max,
                    slot.unheard
                ),
                Some(account) => format!(
                    "waiting for a free slot on the {} account {account}: {} of {} turns running under it",
                    kind.trim_end_matches(" CLI"),
                    slot.busy,
                    slot.max
                ),
                None => format!(
                    "waiting for a free slot on {kind} {}: {} of {} turns running there",
                    slot.executor_id, slot.busy, slot.max
                ),
            };
        }
        match self.state.as_str() {
            "connected" => match &self.retry {
                Some(r) => format!(
                    "CLI retrying: {} (since {}; paused after {} min)",
                    r.reason,
                    clock(r.since_ms),
                    CLI_RETRY_MS_MAX / 60_000
                ),
                None => format!("carried by {kind} {executor}{}", since(", connected since ")),
            },
            "offline" => {
                format!("executor offline{} ({kind} {executor}): nothing runs it until it is back", since(" since "))
            }
            _ if self.capable_executors > 0 => {
                format!(
                    "no executor holds it yet: its next turn goes to a connected {kind} ({} connected)",
                    self.capable_executors
                )
            }
            _ => format!("no {kind} executor connected{}: nothing runs it until one connects", since(" since ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2025-11-30 01:26 UTC.
    const T: u64 = 1_764_466_000_000;

    fn live(state: &str, kind: &str, executor: Option<&str>, capable: u32) -> LivenessOut {
        LivenessOut {
            state: state.into(),
            executor_id: executor.map(String::from),
            executor_kind: kind.into(),
            since_ms: Some(T),
            capable_executors: capable,
            absent_since_ms: None,
            retry: None,
            slot: None,
        }
    }

    #[test]
    fn a_connected_worker_names_its_executor_by_kind_and_since_when() {
        assert_eq!(
            live("connected", "chatgpt", Some("chrome-1"), 1).line(),
            "carried by browser chrome-1, connected since 01:26 UTC"
        );
        assert_eq!(
            live("connected", "codex", Some("cli-host"), 1).line(),
            "carried by Codex CLI cli-host, connected since 01:26 UTC"
        );
    }

    #[test]
    fn a_turn_waiting_for_a_slot_on_its_host_says_so() {
        let mut l = live("connected", "codex", Some("build-2"), 1);
        l.slot = Some(SlotOut { executor_id: "build-2".into(), busy: 3, max: 3, account: None, unheard: 0 });
        assert_eq!(l.line(), "waiting for a free slot on Codex CLI build-2: 3 of 3 turns running there");
        let team = Some("team".to_string());
        l.slot = Some(SlotOut { executor_id: "build-2".into(), busy: 6, max: 6, account: team.clone(), unheard: 0 });
        assert_eq!(l.line(), "waiting for a free slot on the Codex account team: 6 of 6 turns running under it");
        l.slot = Some(SlotOut { executor_id: "build-2".into(), busy: 6, max: 6, account: team, unheard: 2 });
        assert_eq!(
            l.line(),
            "waiting for a free slot on the Codex account team: 6 of 6 turns running under it or on hosts not heard \
             from since the daemon started (2 there, counted until they reconnect)"
        );
    }

    #[test]
    fn a_worker_whose_executor_is_gone_reads_offline_since_then() {
        assert_eq!(
            live("offline", "claude", Some("cli-host"), 0).line(),
            "executor offline since 01:26 UTC (Claude Code CLI cli-host): nothing runs it until it is back"
        );
    }

    #[test]
    fn a_retrying_cli_says_what_it_retries_and_when_it_pauses() {
        let mut l = live("connected", "codex", Some("cli-host"), 1);
        l.retry = Some(RetryOut { reason: "stream disconnected".into(), attempt: Some(3), since_ms: T });
        assert_eq!(l.line(), "CLI retrying: stream disconnected (since 01:26 UTC; paused after 10 min)");
    }

    #[test]
    fn an_unassigned_worker_says_whether_an_executor_of_its_kind_is_there() {
        assert_eq!(
            live("unassigned", "codex", None, 0).line(),
            "no Codex CLI executor connected since 01:26 UTC: nothing runs it until one connects"
        );
        let mut waiting = live("unassigned", "chatgpt", None, 2);
        waiting.since_ms = None;
        assert_eq!(waiting.line(), "no executor holds it yet: its next turn goes to a connected browser (2 connected)");
    }
}
