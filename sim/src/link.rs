//! An executor host's connection to the daemon's executor port, in the executor protocol:
//! connect (retrying), a writer task, heartbeats from the first moment, and a reader that
//! turns the daemon's commands into the host's own events. Shared by the browser and the
//! CLI executor.

use crate::ledger::SharedLedger;
use crate::wire::{EXECUTOR_PORT, read_text, write_text};
use engine::ExecutorCommand;
use engine::ids::ExecutorId;
use std::time::Duration;
use tokio::sync::mpsc;

/// Connects to the daemon (retrying every 2 s) and returns the sender of outgoing
/// frames. Every command the daemon sends becomes `command(c)` on `events`; the end of
/// the connection becomes `closed()`.
pub async fn connect<E: 'static>(
    events: mpsc::UnboundedSender<E>,
    ledger: SharedLedger,
    id: ExecutorId,
    command: fn(ExecutorCommand) -> E,
    closed: fn() -> E,
) -> mpsc::UnboundedSender<String> {
    let standby = ledger.borrow().standby;
    let stream = loop {
        match crate::wire::connect_daemon(EXECUTOR_PORT, standby).await {
            Ok(s) => break s,
            Err(_) => tokio::time::sleep(Duration::from_secs(2)).await,
        }
    };
    let (mut reader, mut writer) = stream.into_split();
    let (tx, mut out) = mpsc::unbounded_channel::<String>();
    tokio::task::spawn_local(async move {
        while let Some(text) = out.recv().await {
            if write_text(&mut writer, &text).await.is_err() {
                break;
            }
        }
    });
    // Heartbeats start with the connection, not with `welcome`: a welcome lost with a
    // broken link must not leave the executor silent on a dead socket forever.
    let every_ms = executor_protocol::SessionConfig::new(crate::wire::EXECUTOR_TOKEN).heartbeat_ms;
    tokio::task::spawn_local(heartbeat(tx.downgrade(), every_ms));
    tokio::task::spawn_local(async move {
        while let Ok(Some(text)) = read_text(&mut reader).await {
            match executor_protocol::decode_daemon(&text, executor_protocol::MESSAGE_BYTES_MAX) {
                Ok(executor_protocol::DaemonMessage::Command(c)) => {
                    if events.send(command(c.into_engine(id.clone()))).is_err() {
                        return;
                    }
                }
                Ok(executor_protocol::DaemonMessage::ProtocolError(e)) => {
                    ledger.borrow_mut().violation(format!("the daemon refused a protocol message from {id}: {e:?}"));
                }
                Ok(_) => {}
                Err(e) => ledger.borrow_mut().violation(format!("undecodable daemon message: {e}")),
            }
        }
        let _ = events.send(closed());
    });
    tx
}

/// Sends a `heartbeat` every `every_ms` (the interval `welcome` announces) while the
/// connection's sender lives: the protocol's liveness signal (the daemon closes a
/// connection silent for 60 s), and what finds a socket that broke under a partition.
async fn heartbeat(tx: mpsc::WeakUnboundedSender<String>, every_ms: u64) {
    loop {
        tokio::time::sleep(Duration::from_millis(every_ms.max(1_000))).await;
        let Some(tx) = tx.upgrade() else { return };
        if tx.send(executor_protocol::encode(&executor_protocol::ExecutorMessage::Heartbeat {})).is_err() {
            return;
        }
    }
}
