//! An executor host's connection to the daemon's executor port, in the executor protocol:
//! connect (retrying), a writer task, heartbeats from the first moment, and a reader that
//! turns the daemon's commands into the host's own events. Shared by the browser and the
//! CLI executor. The browser, as the extension does, asks for its heartbeats to be answered
//! (`hello.capabilities.heartbeatEcho`) and leaves a daemon that answered and then went
//! silent (a zombie leader, paused past its lease) for [`SILENCE_HEARTBEATS_MAX`]
//! heartbeat intervals (`extension/src/core/daemon-link.js`).

use crate::ledger::SharedLedger;
use crate::wire::{EXECUTOR_PORT, read_text, write_text};
use engine::ExecutorCommand;
use engine::ids::ExecutorId;
use std::time::Duration;
use tokio::sync::mpsc;

/// What a daemon's command becomes on the host's events, and what the connection's end does.
pub type Handlers<E> = (fn(ExecutorCommand) -> E, fn() -> E);

/// Heartbeat intervals a daemon that answered heartbeats may stay silent before the
/// browser leaves it (the extension's `DAEMON_SILENCE_HEARTBEATS_MAX`).
pub const SILENCE_HEARTBEATS_MAX: u64 = 3;

/// Connects to the daemon (retrying every 2 s) and returns the sender of outgoing
/// frames. Every command the daemon sends becomes `command(c)` on `events`; the end of
/// the connection becomes `closed()`. With `leave_silent`, a daemon that answered a
/// heartbeat and then sent nothing for [`SILENCE_HEARTBEATS_MAX`] intervals is left (the
/// connection ends as if it dropped).
pub async fn connect<E: 'static>(
    events: mpsc::UnboundedSender<E>,
    ledger: SharedLedger,
    id: ExecutorId,
    (command, closed): Handlers<E>,
    leave_silent: bool,
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
    let silence = Duration::from_millis(SILENCE_HEARTBEATS_MAX * every_ms.max(1_000));
    tokio::task::spawn_local(async move {
        let mut answered = false;
        loop {
            let read = read_text(&mut reader);
            let text = if leave_silent && answered {
                match tokio::time::timeout(silence, read).await {
                    Ok(read) => read,
                    Err(_) => {
                        let mut l = ledger.borrow_mut();
                        l.silent_leaves += 1;
                        l.trace("browser", "left a daemon silent since its last answer");
                        break;
                    }
                }
            } else {
                read.await
            };
            let Ok(Some(text)) = text else { break };
            match executor_protocol::decode_daemon(&text, executor_protocol::MESSAGE_BYTES_MAX) {
                Ok(executor_protocol::DaemonMessage::Heartbeat {}) => answered = true,
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
