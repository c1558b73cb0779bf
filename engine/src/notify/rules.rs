//! The notification rules: which events open an episode a person hears about, the
//! outbox records they create (in the same batch), sending what is due, and what the
//! shell's answer does (delivered, retried with backoff, abandoned with an event).

use super::*;
use crate::effect::Effect;
use crate::engine::Engine;
use crate::event::{Event, EventKind};
use crate::limits::*;
use crate::model::{HoldReason, PauseReason, RunStatus};
use crate::time::Timestamp;
use crate::validate::truncate_detail;
use std::sync::Arc;

/// What a notice says: its kind, title, text and reset time.
type Said = (NoticeKind, String, String, Option<Timestamp>);

impl NoticeKind {
    /// The kind of notice an event opens, if it opens one: each of these events is
    /// appended once per episode by its own rule (a human wait, a hold, a stall pause, an
    /// absence episode, a firing, a run's end), which is what makes notices once per
    /// episode.
    pub fn of(kind: &EventKind) -> Option<NoticeKind> {
        Some(match kind {
            EventKind::WorkerAwaitingHuman { .. } => NoticeKind::HumanQuestion,
            EventKind::WorkerHeld { reason: HoldReason::AwaitingApproval, .. } => NoticeKind::ApprovalCard,
            EventKind::WorkerHeld { reason: HoldReason::UsageLimit | HoldReason::RateLimited, .. } => {
                NoticeKind::UsageLimit
            }
            EventKind::WorkerPaused { reason: PauseReason::UsageLimit, .. } => NoticeKind::UsageLimit,
            EventKind::WorkerPaused { reason: PauseReason::AccountCheck | PauseReason::CliRetrying, .. } => {
                NoticeKind::LoginOrChallenge
            }
            EventKind::ContinuationPausedForStall { .. } => NoticeKind::Stall,
            EventKind::DeadManFired { .. } => NoticeKind::DeadMan,
            EventKind::WorkerExecutorAbsent { .. } => NoticeKind::ExecutorOffline,
            EventKind::RunEnded { status: RunStatus::Completed } => NoticeKind::RunFinished,
            EventKind::RunEnded { .. } => NoticeKind::RunFailed,
            _ => return None,
        })
    }
}

impl Engine {
    /// Creates the notices of the events this input appended (one per configured target),
    /// then hands the shell every pending notice that is due: called by `finish_input`
    /// before the batch is gathered, so a notice is durable with its event.
    pub(crate) fn notify_appended(&mut self) {
        if !self.config.notify_targets.is_empty() {
            let opened: Vec<Event> =
                self.state.log.appended().iter().filter(|e| NoticeKind::of(&e.kind).is_some()).cloned().collect();
            for event in opened {
                self.open_episode(&event);
            }
        }
        let now = self.now;
        for id in self.state.notices.due(now) {
            self.state.notices.start(id, now.plus_ms(NOTIFY_SEND_MS_MAX));
            if let Some(notice) = self.state.notices.get(&id) {
                let notice = notice.clone();
                self.push_effect(Effect::Notify(notice));
            }
        }
    }

    /// One notice per target for the episode `event` opened.
    fn open_episode(&mut self, event: &Event) {
        let Some((kind, title, text, until)) = self.said(event) else { return };
        let cut = |s: String| -> Arc<str> { truncate_detail(&s, NOTIFY_TEXT_CHARS_MAX).into() };
        let (title, text) = (cut(title), cut(text));
        let targets = self.config.notify_targets.clone();
        for (i, target) in targets.iter().enumerate().take(NOTIFY_TARGETS_COUNT_MAX as usize) {
            let id = NoticeId::new(event.cursor, i as u64);
            debug_assert!(self.state.notices.get(&id).is_none(), "{id} opened twice");
            self.state.notices.set(Notice {
                id,
                target: target.clone(),
                kind,
                run: event.run,
                worker: event.worker,
                title: title.clone(),
                text: text.clone(),
                until,
                at: event.at,
                failures: 0,
                next_at: event.at,
                status: NoticeStatus::Pending,
            });
        }
    }

    /// What the notice of `event` says: names, the worker's own words, times.
    fn said(&self, event: &Event) -> Option<Said> {
        let kind = NoticeKind::of(&event.kind)?;
        let task = self.state.runs.get(&event.run).map_or_else(|| event.run.to_string(), |r| r.task_name.to_string());
        let worker = event.worker.and_then(|id| self.state.workers.get(&id));
        let who = worker.map_or_else(|| task.clone(), |w| w.spec.display_name.clone());
        let (title, text, until) = match &event.kind {
            EventKind::WorkerAwaitingHuman { reason } => {
                let (question, choices) = worker
                    .and_then(|w| w.human.as_ref())
                    .map(|h| {
                        (h.question.to_string(), h.choices.iter().map(|c| c.as_ref()).collect::<Vec<_>>().join(" / "))
                    })
                    .unwrap_or_else(|| (reason.to_string(), String::new()));
                let text = if choices.is_empty() { question } else { format!("{question} Choices: {choices}") };
                (format!("{who} asks you"), text, None)
            }
            EventKind::WorkerHeld { reason, until, .. } => {
                let what = match reason {
                    HoldReason::AwaitingApproval => "waits for you to answer an approval card",
                    _ => "is held by a usage limit",
                };
                (format!("{who} {what}"), String::new(), *until)
            }
            EventKind::WorkerPaused { reason, .. } => {
                (format!("{who} is paused: {}", reason.as_str()), String::from("A person must look first."), None)
            }
            EventKind::ContinuationPausedForStall { attempts, quiet_ms } => (
                format!("{who} stalled"),
                format!("{attempts} turns and {} min without progress", quiet_ms / crate::time::MINUTE_MS),
                None,
            ),
            EventKind::DeadManFired { quiet_ms, .. } => (
                format!("{task} stopped moving"),
                format!("nothing moved for {} min", quiet_ms / crate::time::MINUTE_MS),
                None,
            ),
            EventKind::WorkerExecutorAbsent { kind, .. } => {
                (format!("{who}: no {} executor connected", kind.as_str()), String::new(), None)
            }
            EventKind::RunEnded { status } => {
                let how = match status {
                    RunStatus::Completed => "completed",
                    RunStatus::Failed => "failed",
                    RunStatus::Cancelled => "was stopped",
                    RunStatus::Active => "is active",
                };
                (format!("{task} {how}"), String::new(), None)
            }
            _ => return None,
        };
        Some((kind, title, text, until))
    }

    /// The shell's answer for a notice it was handed.
    pub(crate) fn notified(&mut self, id: NoticeId, outcome: NoticeOutcome) {
        let was_sent = self.state.notices.finish(id);
        let Some(notice) = self.state.notices.get(&id).cloned() else { return };
        if notice.status != NoticeStatus::Pending || !was_sent {
            // A late answer for a delivery already counted as failed, or for a notice
            // settled since: a delivery is never booked twice.
            if notice.status == NoticeStatus::Pending && outcome == NoticeOutcome::Delivered {
                self.settle(notice, NoticeStatus::Delivered(self.now));
            }
            return;
        }
        match outcome {
            NoticeOutcome::Delivered => self.settle(notice, NoticeStatus::Delivered(self.now)),
            NoticeOutcome::Failed { .. } => self.retry_later(notice),
            NoticeOutcome::Refused { detail } => self.abandon(notice, detail),
        }
    }

    /// Deliveries whose answer is overdue count as failed (called on every tick).
    pub(crate) fn notify_overdue(&mut self) {
        for id in self.state.notices.overdue(self.now) {
            self.state.notices.finish(id);
            if let Some(notice) = self.state.notices.get(&id).cloned() {
                self.retry_later(notice);
            }
        }
    }

    /// One more failed try: the next at backoff, or abandoned once too old.
    fn retry_later(&mut self, mut notice: Notice) {
        notice.failures = notice.failures.saturating_add(1);
        let next_at = self.now.plus_ms(retry_after_ms(notice.failures));
        if next_at.0.saturating_sub(notice.at.0) >= NOTIFY_GIVE_UP_MS {
            self.abandon(notice, Arc::from("not taken for a day"));
            return;
        }
        notice.next_at = next_at;
        self.state.notices.set(notice);
    }

    /// Given up: recorded with the event `notification.abandoned`.
    fn abandon(&mut self, notice: Notice, detail: Arc<str>) {
        let (run, worker, id, kind) = (notice.run, notice.worker, notice.id, notice.kind);
        self.settle(notice, NoticeStatus::Abandoned(self.now));
        self.emit(run, worker, None, EventKind::NotificationAbandoned { notice: id, kind, detail });
    }

    fn settle(&mut self, mut notice: Notice, status: NoticeStatus) {
        notice.status = status;
        self.state.notices.set(notice);
    }
}
