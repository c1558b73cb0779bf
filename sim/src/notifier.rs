//! The daemon's notification poster in the simulator, and the model receiver behind it
//! (issue 31): the shell's `NotifySink` hands each notice to a task on the daemon host,
//! which takes [`POST_LATENCY_MS`] to reach the receiver (so a crash right after the
//! commit loses the post, `notify-created`), records what the receiver took in the
//! ledger (it outlives the daemon, as a real receiver does), and takes as long again to
//! book the acknowledgement (so a crash in between loses the ack and the daemon posts the
//! same id again after its restart, `notify-sent-before-ack`).

use crate::faults::Boundary;
use crate::ledger::SharedLedger;
use engine::ids::WorkerId;
use engine::notify::{Notice, NoticeOutcome};
use runtime::{Handle, NotifySink};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a post takes to reach the receiver, and its answer to come back, simulated
/// ms: longer than a turmoil tick, so a crash at a boundary lands before the next step.
pub const POST_LATENCY_MS: u64 = 2_000;

/// The shell's sink: hands notices to the poster task (the shell needs a `Send` sink;
/// the ledger is not).
pub struct ChannelSink(pub mpsc::UnboundedSender<Notice>);

impl NotifySink for ChannelSink {
    fn send(&mut self, notice: Notice) {
        let _ = self.0.send(notice);
    }
}

/// Posts every notice the shell hands out, each in its own task (posts run side by side).
pub async fn poster(mut notices: mpsc::UnboundedReceiver<Notice>, handle: Handle, ledger: SharedLedger) {
    while let Some(notice) = notices.recv().await {
        tokio::task::spawn_local(post(notice, handle.clone(), ledger.clone()));
    }
}

async fn post(notice: Notice, handle: Handle, ledger: SharedLedger) {
    tokio::time::sleep(Duration::from_millis(POST_LATENCY_MS)).await;
    let outcome = {
        let mut l = ledger.borrow_mut();
        let now = l.now_ms;
        if l.notify_down.iter().any(|(from, until)| (*from..*until).contains(&now)) {
            l.trace("receiver", format!("down: {} refused", notice.id));
            NoticeOutcome::Failed { detail: "connection refused".into() }
        } else {
            l.notify_received.push((notice.id, now));
            l.trace("receiver", format!("took {} {}", notice.id, notice.kind.as_str()));
            l.boundary(Boundary::NotifySentBeforeAck, notice.worker.unwrap_or(WorkerId(0)), None);
            NoticeOutcome::Delivered
        }
    };
    tokio::time::sleep(Duration::from_millis(POST_LATENCY_MS)).await;
    let _ = handle.notified(notice.id, outcome).await;
}
