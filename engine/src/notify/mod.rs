//! Notifications (issue 31): a person is told, through the webhooks the daemon was
//! started with (`--notify`), when a worker needs them and when a run ends.
//!
//! The engine decides; the shell only posts. A notification is due when the input
//! appends an event that opens an *episode* a person should hear about (see
//! [`NoticeKind::of`]); its [`Notice`] records, one per configured target, are written in
//! the same batch as that event, so a crash either loses both or keeps both. The episode's
//! id is that event's cursor, so one episode can never have two notices for one target,
//! and a re-send after a crash carries the same [`NoticeId`] (the receiver's dedupe key).
//! Delivery: [`crate::Effect::Notify`] hands a pending notice to the shell, whose answer
//! comes back as [`crate::Input::Notified`]; a failure is retried with backoff from the
//! engine's clock, and a notice nobody took for [`crate::limits::NOTIFY_GIVE_UP_MS`] is abandoned with
//! the event `notification.abandoned`. Written up in `docs/notifications.md`.

pub use crate::notice::*;

mod rules;
pub(crate) mod state;
