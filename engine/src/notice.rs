//! Notifications as data (issue 31): a [`Notice`], its id, kind, status and the shell's
//! answer, and the retry backoff. Shared by the effects, inputs and records that carry
//! them; the rules that create and settle them are `notify/`.

use crate::ids::{Cursor, RunId, WorkerId};
use crate::limits::*;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// One notification's id: the episode's event cursor and the target's position, so the
/// same episode and target always give the same id (across restarts too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NoticeId(pub u64);

impl NoticeId {
    /// The id of `episode`'s notice for the target at `target`.
    pub fn new(episode: Cursor, target: u64) -> NoticeId {
        NoticeId(episode.0 * NOTIFY_TARGETS_COUNT_MAX + target)
    }

    /// The episode: the cursor of the event that opened it.
    pub fn episode(self) -> Cursor {
        Cursor(self.0 / NOTIFY_TARGETS_COUNT_MAX)
    }

    /// The target's position among the configured targets.
    pub fn target(self) -> u64 {
        self.0 % NOTIFY_TARGETS_COUNT_MAX
    }
}

impl fmt::Display for NoticeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ntf-{}-{}", self.episode().0, self.target())
    }
}

/// What a person is told about: the situations of issue 31.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoticeKind {
    /// A worker asks its person a question (with its choices): `worker.awaiting_human`.
    HumanQuestion,
    /// ChatGPT shows a tool-approval card in a worker's conversation.
    ApprovalCard,
    /// The stall guard paused a worker.
    Stall,
    /// An account's usage or rate limit holds a worker (with its reset time), or paused
    /// it without one.
    UsageLimit,
    /// A login, a challenge or "suspicious activity" stops a worker.
    LoginOrChallenge,
    /// The dead-man layer found a run stopped.
    DeadMan,
    /// No executor of a worker's kind has been connected for a while.
    ExecutorOffline,
    /// A run completed.
    RunFinished,
    /// A run failed or was cancelled.
    RunFailed,
    /// A person's `orchestrator notify test`: made and posted by the daemon's route at
    /// once, never by the engine, never stored (appended last: stored kinds keep their tags).
    Test,
}

impl NoticeKind {
    /// The stable wire name (`kind` in the webhook body).
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::HumanQuestion => "human_question",
            NoticeKind::ApprovalCard => "approval_card",
            NoticeKind::Stall => "stall",
            NoticeKind::UsageLimit => "usage_limit",
            NoticeKind::LoginOrChallenge => "login_or_challenge",
            NoticeKind::DeadMan => "dead_man",
            NoticeKind::ExecutorOffline => "executor_offline",
            NoticeKind::RunFinished => "run_finished",
            NoticeKind::RunFailed => "run_failed",
            NoticeKind::Test => "test",
        }
    }
}

/// Where a notice stands. Records are never deleted (the store keeps the latest version
/// per key); a settled notice stays as its proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoticeStatus {
    /// Not yet taken by its receiver: sent at `next_at`.
    Pending,
    /// The receiver acknowledged it (a 2xx) at this time.
    Delivered(Timestamp),
    /// Given up at this time (too old, or the receiver refused it for good).
    Abandoned(Timestamp),
}

/// One notification to one target: the durable outbox entry and what is posted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// Episode and target: the receiver's dedupe key (`Idempotency-Key`).
    pub id: NoticeId,
    /// The target as configured (`--notify`): the shell parses its form and URL.
    pub target: Arc<str>,
    /// What happened.
    pub kind: NoticeKind,
    /// The run it concerns.
    pub run: RunId,
    /// The worker it concerns, if one.
    pub worker: Option<WorkerId>,
    /// One line: what happened and to whom (names only).
    pub title: Arc<str>,
    /// The worker's own words (question, choices, summary) or the facts (reset time,
    /// executor kind); never transcript text.
    pub text: Arc<str>,
    /// A usage limit's reset time, when the page named one.
    pub until: Option<Timestamp>,
    /// When the episode began (its event's time).
    pub at: Timestamp,
    /// Tries that failed so far.
    pub failures: u32,
    /// When to (re)send it while pending.
    pub next_at: Timestamp,
    /// Pending, delivered or abandoned.
    pub status: NoticeStatus,
}

/// What the shell's delivery of a notice came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoticeOutcome {
    /// The receiver answered 2xx.
    Delivered,
    /// Not taken this time (down, 5xx, 429, timeout): retried after backoff.
    Failed {
        /// What went wrong, for the log (never the body).
        detail: Arc<str>,
    },
    /// Refused for good (a 4xx other than 408/429, a target that cannot be parsed):
    /// abandoned at once.
    Refused {
        /// What went wrong.
        detail: Arc<str>,
    },
}

/// The wait before the try after `failures` failed tries: [`NOTIFY_RETRY_FIRST_MS`],
/// doubling, capped at [`NOTIFY_RETRY_MS_MAX`].
pub fn retry_after_ms(failures: u32) -> u64 {
    let doublings = failures.saturating_sub(1).min(32);
    NOTIFY_RETRY_FIRST_MS.saturating_mul(1u64 << doublings).min(NOTIFY_RETRY_MS_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_starts_at_five_seconds_doubles_and_is_capped() {
        assert_eq!(retry_after_ms(1), 5_000);
        assert_eq!(retry_after_ms(2), 10_000);
        assert_eq!(retry_after_ms(3), 20_000);
        assert_eq!(retry_after_ms(10), NOTIFY_RETRY_MS_MAX);
        assert_eq!(retry_after_ms(u32::MAX), NOTIFY_RETRY_MS_MAX);
    }

    #[test]
    fn ids_keep_episode_and_target() {
        let id = NoticeId::new(Cursor(42), 3);
        assert_eq!((id.episode(), id.target()), (Cursor(42), 3));
        assert_eq!(id.to_string(), "ntf-42-3");
    }
}
