//! The operator channel against the engine: actions performed as the MCP tools' engine
//! operations, queries answered through the MCP tools' reads and JSON shapes, and the
//! `operator.summary` push with each worker's recent continuity events. The OAuth
//! actions and query go to the injected [`GrantDesk`] instead.

use super::registry::Outgoing;
use caller_protocol::{ErrorOut, FromReply};
use engine::Reply;
use engine::event::Event;
use engine::ids::{Cursor, RunId, WorkerId};
use engine::kind::ExecutorKind;
use engine::limits::EVENTS_PAGE_COUNT_MAX;
use engine::op::{EventsPage, Operation};
use executor_protocol::continuity::{RecentEvents, RecentSentences};
use executor_protocol::encode;
use executor_protocol::{
    DaemonMessage, GrantAction, GrantDesk, OAuthPendingOut, OperatorData, OperatorDataWire, OperatorResultWire,
    OperatorSummaryWire, Query, RunSummary, WorkerEventsOut, oauth_codes,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// One engine call, with the MCP tools' errors: the engine's rejection, or
/// `ENGINE_UNAVAILABLE` when it has stopped.
async fn call(handle: &runtime::Handle, op: Operation) -> Result<Reply, ErrorOut> {
    match handle.call(op).await {
        Ok(Ok(reply)) => Ok(reply),
        Ok(Err(rejection)) => Err(rejection.into()),
        Err(runtime::ShellGone) => Err(ErrorOut::unavailable()),
    }
}

/// Performs an `operator.action` once its operation is durable. A refusal is worded for
/// the person who pressed the button (`caller_protocol::refusal`), its code kept.
pub(super) async fn perform(handle: &runtime::Handle, action_id: String, op: Operation) -> OperatorResultWire {
    let (worker, run) = subject(&op);
    match call(handle, op).await {
        Ok(reply) => {
            let mut result = OperatorResultWire::done(action_id);
            match reply {
                Reply::Run(view) => (result.run_id, result.worker_id) = (Some(view.run.id), Some(view.run.root)),
                Reply::Worker(view) => {
                    (result.run_id, result.worker_id) = (Some(view.worker.spec.run), Some(view.worker.spec.id))
                }
                _ => {}
            }
            result
        }
        Err(error) => OperatorResultWire::refused(action_id, for_person(handle, &error, worker, run).await),
    }
}

/// The worker and the run an operator action is about (what a person's words name).
fn subject(op: &Operation) -> (Option<WorkerId>, Option<RunId>) {
    match op {
        Operation::WorkerPause { worker, .. }
        | Operation::WorkerResume { worker }
        | Operation::WorkerContinueNow { worker, .. }
        | Operation::WorkerResolveHuman { worker, .. }
        | Operation::WorkerReleaseDependency { worker, .. }
        | Operation::WorkerInterrupt { worker, .. }
        | Operation::WorkerAttach { worker, .. }
        | Operation::WorkerApprovalAnswer { worker, .. }
        | Operation::WorkerContinuationSet { worker, .. } => (Some(*worker), None),
        Operation::RunCancel { run, .. }
        | Operation::RunPauseAll { run }
        | Operation::RunResumeAll { run }
        | Operation::RunSetDefaultContinuation { run, .. } => (None, Some(*run)),
        _ => (None, None),
    }
}

/// `error` in a person's words, the worker's run looked up when the words name it.
async fn for_person(
    handle: &runtime::Handle,
    error: &ErrorOut,
    worker: Option<WorkerId>,
    run: Option<RunId>,
) -> ErrorOut {
    let mut run = run;
    if let (Some(id), None, true) = (worker, run, caller_protocol::refusal::needs_run(&error.code))
        && let Ok(Reply::Worker(view)) = call(handle, Operation::WorkerGet { worker: id }).await
    {
        run = Some(view.worker.spec.run);
    }
    let (worker, run) = (worker.map(|w| w.to_string()), run.map(|r| r.to_string()));
    let subject = caller_protocol::refusal::Subject { worker: worker.as_deref(), run: run.as_deref() };
    caller_protocol::refusal::for_person(error, subject)
}

/// Performs an OAuth `operator.action` at the authorization server (its file is written
/// off the async threads), or `OAUTH_OFF` without one.
pub(super) async fn decide(
    desk: Option<Arc<dyn GrantDesk>>,
    action_id: String,
    action: GrantAction,
) -> OperatorResultWire {
    let outcome = match desk {
        None => Err(ErrorOut::new(oauth_codes::OAUTH_OFF, "OAuth is off: the daemon runs without --public-url")),
        Some(desk) => tokio::task::spawn_blocking(move || desk.perform(&action))
            .await
            .unwrap_or_else(|_| Err(ErrorOut::internal("the OAuth action failed unexpectedly"))),
    };
    match outcome {
        Ok(()) => OperatorResultWire::done(action_id),
        Err(error) => OperatorResultWire::refused(action_id, error),
    }
}

/// Answers an `operator.query` (`oauth_pending` from `desk`: `enabled: false` without one).
pub(super) async fn answer(
    handle: &runtime::Handle,
    desk: Option<&dyn GrantDesk>,
    query_id: String,
    query: Query,
) -> OperatorDataWire {
    let data = match query {
        Query::OauthPending => Ok(OperatorData::OAuth(desk.map_or_else(OAuthPendingOut::default, |d| d.pending()))),
        Query::WorkerAttempts { worker, after_sequence, limit } => {
            let op = Operation::WorkerAttempts { worker, after_sequence, limit: limit as usize };
            match call(handle, op).await {
                Ok(reply) => caller_protocol::AttemptsOut::from_reply(reply).map(OperatorData::Attempts),
                Err(error) => Err(error),
            }
        }
        Query::WorkerEvents { worker } => worker_events(handle, worker).await.map(OperatorData::Events),
    };
    OperatorDataWire::new(query_id, data)
}

/// The worker's newest continuity events from the engine's retained window.
async fn worker_events(handle: &runtime::Handle, worker: WorkerId) -> Result<WorkerEventsOut, ErrorOut> {
    let from = window_start(handle, Some(worker)).await?;
    let mut recent = RecentEvents::default();
    scan(handle, from, Some(worker), |e| recent.absorb(e)).await?;
    Ok(WorkerEventsOut { events: recent.into_events().iter().map(caller_protocol::EventOut::from).collect() })
}

/// The cursor just before the engine's retained window of recent events (older ones
/// would come from the store), checking `worker` exists (`UNKNOWN_WORKER` otherwise).
async fn window_start(handle: &runtime::Handle, worker: Option<WorkerId>) -> Result<Cursor, ErrorOut> {
    let newest = *handle.durable_cursor().borrow();
    let probe = Operation::EventsAfter { cursor: newest, run: None, worker, limit: 1 };
    Ok(page(call(handle, probe).await?)?.retained_after)
}

fn page(reply: Reply) -> Result<EventsPage, ErrorOut> {
    match reply {
        Reply::Events(page) => Ok(page),
        _ => Err(ErrorOut::internal("the engine answered with an unexpected reply (expected events)")),
    }
}

/// Feeds `each` every event after `from` (of `worker` only, when given) up to the newest
/// durable one, a page at a time.
async fn scan(
    handle: &runtime::Handle,
    from: Cursor,
    worker: Option<WorkerId>,
    mut each: impl FnMut(&Event),
) -> Result<(), ErrorOut> {
    let newest = *handle.durable_cursor().borrow();
    let mut cursor = from;
    loop {
        let op = Operation::EventsAfter { cursor, run: None, worker, limit: EVENTS_PAGE_COUNT_MAX };
        let page = page(call(handle, op).await?)?;
        page.events.iter().for_each(&mut each);
        // Pages end at the newest event when fewer than a page matched; a page served
        // from the store may hold fewer after filtering, so progress is the test.
        if page.next_cursor <= cursor || page.next_cursor >= newest {
            return Ok(());
        }
        cursor = page.next_cursor;
    }
}

/// Waits this long after a durable change before recomputing the summary, so that a
/// burst of commits costs one summary.
pub const SUMMARY_DEBOUNCE_MS: u64 = 100;

/// Pushes `operator.summary` to one connection: now, then after every durable change
/// that alters it. Ends with the connection or the engine.
pub(super) async fn push_summaries(handle: runtime::Handle, tx: mpsc::WeakSender<Outgoing>) {
    let mut durable = handle.durable_cursor();
    let Ok(start) = window_start(&handle, None).await else { return };
    let mut recent = RecentSentences::after(start);
    let mut last: Option<OperatorSummaryWire> = None;
    loop {
        durable.borrow_and_update();
        let Some(summary) = summary(&handle, &mut recent).await else { return };
        if last.as_ref() != Some(&summary) {
            let Some(tx) = tx.upgrade() else { return };
            let text = encode(&DaemonMessage::OperatorSummary(summary.clone()));
            if tx.send(Outgoing::Text(text)).await.is_err() {
                return;
            }
            last = Some(summary);
        }
        if durable.changed().await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(SUMMARY_DEBOUNCE_MS)).await;
    }
}

/// Every unfinished run with its workers and the recently finished ones, through the same read operations (and JSON
/// shapes) as the MCP tools, with the recent continuity events read since the last
/// summary. `None` when the engine is gone.
async fn summary(handle: &runtime::Handle, recent: &mut RecentSentences) -> Option<OperatorSummaryWire> {
    let reply = call(handle, Operation::RunList { include_terminal: false }).await.ok()?;
    let runs = caller_protocol::RunListOut::from_reply(reply).ok()?.runs;
    let mut out = Vec::with_capacity(runs.len());
    let mut kinds = std::collections::BTreeMap::new();
    for run in &runs {
        let op = Operation::WorkerList { run: run.run_id.parse().ok()?, include_terminal: true };
        let workers = caller_protocol::WorkerListOut::from_reply(call(handle, op).await.ok()?).ok()?.workers;
        for w in &workers {
            if let (Ok(id), Some(kind)) = (w.worker_id.parse::<WorkerId>(), ExecutorKind::parse(&w.executor)) {
                kinds.insert(id, kind);
            }
        }
        out.push(RunSummary::new(run, &workers));
    }
    // A worker not listed (its run ended) is dropped from the buffer below.
    let kind_of = |w: WorkerId| kinds.get(&w).copied().unwrap_or_default();
    scan(handle, recent.cursor(), None, |e| recent.absorb(e, kind_of)).await.ok()?;
    let mut shown = std::collections::BTreeSet::new();
    for worker in out.iter_mut().flat_map(|run| run.workers.iter_mut()) {
        let id: WorkerId = worker.worker_id.parse().ok()?;
        worker.recent_events = recent.of(id);
        shown.insert(id);
    }
    recent.retain(|w| shown.contains(&w));
    let finished = finished_runs(handle).await?;
    Some(OperatorSummaryWire { runs: out, finished })
}

/// Finished runs an `operator.summary` carries at most (the engine's history retention may
/// keep fewer): the dashboard's "Finished" and the popup's count.
pub const SUMMARY_FINISHED_RUNS_MAX: usize = 20;

/// The most recently finished runs with their workers (`run_history`), without recent
/// events: what a person returning in the morning reads to see what finished and how.
async fn finished_runs(handle: &runtime::Handle) -> Option<Vec<RunSummary>> {
    let reply = call(handle, Operation::RunHistory { limit: SUMMARY_FINISHED_RUNS_MAX }).await.ok()?;
    let runs = caller_protocol::RunListOut::from_reply(reply).ok()?.runs;
    let mut out = Vec::with_capacity(runs.len());
    for run in &runs {
        let op = Operation::WorkerList { run: run.run_id.parse().ok()?, include_terminal: true };
        let workers = caller_protocol::WorkerListOut::from_reply(call(handle, op).await.ok()?).ok()?.workers;
        out.push(RunSummary::new(run, &workers));
    }
    Some(out)
}
