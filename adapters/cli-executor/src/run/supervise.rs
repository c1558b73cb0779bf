//! The supervision of one worker's task: `serve` feeds it the connection's messages,
//! what its pump observed and the end of its restart backoff, one at a time,
//! until the connection drops its sender; the child is then stopped.

use crate::Error;
use crate::base::pump::{Core, Event, Pump};
use crate::base::worker::{In, Shell};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Serves `input` until the connection drops its sender; the child is then stopped.
pub(crate) async fn serve<S: Shell>(mut shell: S, mut input: mpsc::Receiver<In>) {
    loop {
        let restart_at = shell.restarts().at;
        tokio::select! {
            message = input.recv() => match message {
                Some(message) => shell.input(message).await,
                None => break,
            },
            event = next(shell.pump()) => shell.event(event).await,
            () = sleep_until(restart_at) => {
                shell.restarts().at = None;
                shell.restart().await;
            }
        }
    }
    let worker = shell.worker();
    if let Some(pump) = shell.pump().take()
        && let Err(e) = pump.stop().await
        && e != Error::ChildGone
    {
        tracing::warn!(%worker, code = e.code(), "stopping the child: {e}");
    }
}

async fn next<C: Core>(pump: &mut Option<Pump<C>>) -> Result<Event<C::Report>, Error> {
    match pump.as_mut() {
        Some(pump) => pump.next().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
