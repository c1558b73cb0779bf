//! Checks over what the conversation hosts and the executor saw, beside the durable log:
//! nobody clicks the delivery-timeout card's Retry control (`no_retry_clicks`), and after
//! a `worker_attach` the old conversations are left alone (`attachments_honoured`). The
//! records the hosts keep in the ledger for them are defined here.

use super::Log;
use crate::wire::conversation_host;
use engine::event::EventKind;
use engine::ids::WorkerId;
use std::collections::BTreeSet;

/// One click on a conversation's Retry control, as its host saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryClick {
    /// The conversation host whose page was clicked, to find it in the trace.
    pub conversation: String,
    /// The worker whose message the conversation last accepted (`None` before any), to
    /// say whose turn was duplicated.
    pub worker: Option<WorkerId>,
    /// Simulated ms since the start, to find the click in the trace.
    pub at_ms: u64,
    /// The idempotency key of the user message the click re-sent; `None` when no
    /// delivery-timeout card was showing (no control to click, nothing sent).
    pub resubmitted: Option<String>,
}

/// The executor never clicks Retry: after a delivery timeout only the daemon's fresh
/// `continue` follows (spec 000 §22.3.1, 001 C16.4a). Every click breaks, whether or not
/// it re-sent anything.
pub fn no_retry_clicks(clicks: &[RetryClick]) -> Vec<String> {
    clicks
        .iter()
        .map(|click| {
            let whose = click.worker.map(|w| format!(" ({w})")).unwrap_or_default();
            let what = match &click.resubmitted {
                Some(key) => format!("re-sent {key}, a turn the daemon never commanded"),
                None => "with no delivery-timeout card showing".to_string(),
            };
            format!("Retry clicked: {}{whose} at {} ms {what}", click.conversation, click.at_ms)
        })
        .collect()
}

/// One prompt a conversation accepted, as its host saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The conversation host that took it: which conversation was typed into.
    pub conversation: String,
    /// The worker whose command it was.
    pub worker: WorkerId,
    /// Its idempotency key, to find its attempt.
    pub key: String,
    /// Simulated ms since the start, to order it against attaches.
    pub at_ms: u64,
}

/// The executor started managing a conversation for a worker (`None`: stopped), as the
/// executor stored it: what it held when an attach committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Managed {
    /// Whose binding changed.
    pub worker: WorkerId,
    /// The conversation host now managed for the worker, if any.
    pub conversation: Option<String>,
    /// Simulated ms since the start.
    pub at_ms: u64,
}

/// A `conversation.close` the executor received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closed {
    /// The worker it named.
    pub worker: WorkerId,
    /// The conversation host it named.
    pub conversation: String,
    /// Simulated ms since the start, when it arrived.
    pub at_ms: u64,
    /// Whether the executor held that binding and released it (a close for a binding not
    /// held is ignored), for `expect closes`.
    pub released: bool,
}

/// A state or binding report the executor published about a worker's conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    /// The worker it was about.
    pub worker: WorkerId,
    /// The conversation host whose page it described.
    pub conversation: String,
    /// Simulated ms since the start.
    pub at_ms: u64,
}

/// What the conversation hosts and the executor saw, for `attachments_honoured`.
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    /// Every prompt a conversation accepted.
    pub deliveries: &'a [Delivery],
    /// Every change of what the executor manages, in order.
    pub managed: &'a [Managed],
    /// Every `conversation.close` the executor received.
    pub closes: &'a [Closed],
    /// Every state and binding the executor published.
    pub published: &'a [Published],
}

/// One committed `worker_attach`, from the durable log.
#[derive(Clone, Copy, Debug)]
struct Attach<'a> {
    worker: WorkerId,
    /// The conversation host it was attached to.
    to: &'a str,
    at_ms: u64,
    cursor: u64,
}

impl Attach<'_> {
    fn describe(&self) -> String {
        format!("{} was attached to {} at {} ms (event #{})", self.worker, self.to, self.at_ms, self.cursor)
    }
}

/// After every committed attach, the worker's old conversations (the ones that took its
/// prompts before, and the one the executor managed for it then) are left alone until
/// the worker is attached back to one of them: nothing is typed into them; the executor
/// that managed one for the worker receives `conversation.close` for it (spec: the
/// daemon sends it when the worker was attached to another conversation, or when the
/// executor reports the stale binding later); and nothing about it is published after
/// that close.
pub fn attachments_honoured(log: Log<'_>, seen: Seen<'_>) -> Vec<String> {
    let attaches = attaches_in(log);
    let mut broken = Vec::new();
    for (i, attach) in attaches.iter().enumerate() {
        let held = seen
            .managed
            .iter()
            .rfind(|m| m.worker == attach.worker && m.at_ms <= attach.at_ms)
            .and_then(|m| m.conversation.as_deref())
            .filter(|c| *c != attach.to);
        let typed = seen.deliveries.iter().filter(|d| d.worker == attach.worker && d.at_ms < attach.at_ms);
        let old: BTreeSet<&str> =
            typed.map(|d| d.conversation.as_str()).chain(held).filter(|c| *c != attach.to).collect();
        for conversation in old {
            // Until the worker is attached back to it.
            let back = attaches[i + 1..].iter().find(|a| a.worker == attach.worker && a.to == conversation);
            let until_ms = back.map_or(u64::MAX, |a| a.at_ms);
            broken.extend(typed_into_old(attach, conversation, until_ms, seen));
            let must_close = held == Some(conversation);
            broken.extend(released(attach, conversation, must_close, until_ms, seen));
        }
    }
    broken
}

/// The committed attaches of the log, in order.
fn attaches_in(log: Log<'_>) -> Vec<Attach<'_>> {
    log.events
        .iter()
        .filter_map(|e| match (&e.kind, e.worker) {
            (EventKind::WorkerAttached { conversation }, Some(worker)) => Some(Attach {
                worker,
                to: conversation_host(conversation)?,
                at_ms: e.at.ms_since(log.start),
                cursor: e.cursor.0,
            }),
            _ => None,
        })
        .collect()
}

/// The executor received `conversation.close` for the old `conversation` if it
/// `must_close` it (it managed it when the attach committed), and published nothing about
/// it after a close (until `until_ms`). This holds for a conversation adopted from the
/// executor's report after an ambiguous create too, which no attempt names by URL: the
/// engine names that close by the create (the matrix found it sent none before).
fn released(attach: &Attach<'_>, conversation: &str, must_close: bool, until_ms: u64, seen: Seen<'_>) -> Vec<String> {
    let close = seen
        .closes
        .iter()
        .find(|c| c.worker == attach.worker && c.conversation == conversation && c.at_ms >= attach.at_ms);
    match close {
        Some(close) => published_after_close(attach, close, until_ms, seen),
        None if must_close => vec![format!(
            "old conversation never released: the executor managed {conversation} when {} and never received \
             conversation.close for it",
            attach.describe()
        )],
        None => Vec::new(),
    }
}

/// Prompts typed into the attach's old `conversation` in `[attach, until_ms)`.
fn typed_into_old(attach: &Attach<'_>, conversation: &str, until_ms: u64, seen: Seen<'_>) -> Vec<String> {
    seen.deliveries
        .iter()
        .filter(|d| d.conversation == conversation && (attach.at_ms..until_ms).contains(&d.at_ms))
        .map(|d| {
            format!(
                "typed into an old conversation: {} went into {conversation} at {} ms, after {}",
                d.key,
                d.at_ms,
                attach.describe()
            )
        })
        .collect()
}

/// Reports about the closed conversation the executor published after the close.
fn published_after_close(attach: &Attach<'_>, close: &Closed, until_ms: u64, seen: Seen<'_>) -> Vec<String> {
    seen.published
        .iter()
        .filter(|p| p.worker == close.worker && p.conversation == close.conversation)
        .filter(|p| p.at_ms > close.at_ms && p.at_ms < until_ms)
        .map(|p| {
            format!(
                "old conversation still managed: the executor published {} for {} at {} ms, after \
                 conversation.close at {} ms ({})",
                p.conversation,
                p.worker,
                p.at_ms,
                close.at_ms,
                attach.describe()
            )
        })
        .collect()
}
