//! What the daemon's notifications came to, for a person: the outbox's notices counted by
//! status from the engine's durable records (recounted after each commit that changed
//! one), and the last post that failed, as the poster saw it. `/health` answers it as
//! `notifications`; `orchestrator doctor` prints it ("notifications: 6 delivered, 0
//! pending, ...").

use address::{NotificationFailureView, NotificationsView};
use engine::notify::{NoticeId, NoticeStatus};
use engine::{Batch, Engine, Record};
use std::sync::{Arc, Mutex};

/// Shared by the engine thread (the counts), the poster (failures) and `/health`.
#[derive(Debug, Default)]
pub struct NotifyStatus {
    view: Mutex<NotificationsView>,
}

impl NotifyStatus {
    /// For `targets` configured targets; nothing counted yet.
    pub fn new(targets: usize) -> Arc<NotifyStatus> {
        let view = NotificationsView { targets: targets as u64, ..NotificationsView::default() };
        Arc::new(NotifyStatus { view: Mutex::new(view) })
    }

    /// Counts every notice of the engine's outbox by its status.
    pub fn count(&self, engine: &Engine) {
        let (mut delivered, mut pending, mut abandoned) = (0, 0, 0);
        for notice in engine.notices() {
            match notice.status {
                NoticeStatus::Pending => pending += 1,
                NoticeStatus::Delivered(_) => delivered += 1,
                NoticeStatus::Abandoned(_) => abandoned += 1,
            }
        }
        let mut view = self.lock();
        (view.delivered, view.pending, view.abandoned) = (delivered, pending, abandoned);
    }

    /// The shell's commit observer: recounts when a committed batch changed a notice.
    pub fn observe(&self, engine: &Engine, batches: &[Batch]) {
        if batches.iter().flat_map(|b| &b.records).any(|r| matches!(r, Record::Notice(_))) {
            self.count(engine);
        }
    }

    /// A post that did not deliver, at `at_ms` (ms since the Unix epoch).
    pub fn failed(&self, id: NoticeId, detail: &str, at_ms: u64) {
        self.lock().last_failure =
            Some(NotificationFailureView { notification_id: id.to_string(), detail: detail.to_string(), at_ms });
    }

    /// What `/health` answers.
    pub fn view(&self) -> NotificationsView {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, NotificationsView> {
        // A panic while the lock was held leaves counts that the next commit corrects.
        self.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
