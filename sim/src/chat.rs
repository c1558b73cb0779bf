//! A simulated ChatGPT conversation (one host per conversation) and the seeded worker
//! agent inside it, which calls the daemon over the simulated network. Its delivery-timeout
//! card offers the Retry control, and a click on it does what the real page's does. It
//! can show the page states that stop an unattended worker (`PageStop`: a usage limit
//! with its reset time, "Too many requests", suspicious activity, a human check, a
//! logged-out page, an unknown dialog) over the conversation, on a scenario's command or
//! at seeded random: the turn goes on underneath, and a stand-in person (or the limit's
//! reset time) takes it away after a while. Typing into such a page, or clicking its
//! dialog, is recorded as a violation.
//!
//! This file holds the conversation host (its page, its tabs, the Retry control);
//! `chat/agent.rs` the agent and its turns, `chat/stop.rs` the page stops.

mod agent;
mod stop;

pub use agent::AgentKnobs;
pub(crate) use agent::agent_call;
use agent::start_turn;
pub use stop::{APP_NAME, Death, PageEvent, PageStop};

use crate::epoch::EPOCH_MS;
use crate::ledger::SharedLedger;
use crate::oracle::RetryClick;
use crate::wire::{CHAT_PORT, FromChat, SimOp, ToChat, read_frame, write_frame};
use engine::ids::WorkerId;
use engine::model::{ConversationState, ErrorKind};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::watch;
use turmoil::net::{TcpListener, TcpStream};

/// How long a page stop must have shown before a submission into it counts as the
/// executor's fault rather than a race with the page's own change.
const STOP_NOTICE_MS: u64 = 1_000;

/// Simulated ms since the start.
fn elapsed_ms() -> u64 {
    turmoil::sim_elapsed().map_or(0, |d| d.as_millis() as u64)
}

/// What the page shows: the coarse state and, after a turn, the block it ended with.
#[derive(Clone, Debug, PartialEq)]
struct Shown {
    state: ConversationState,
    block: Option<String>,
    until_ms: Option<u64>,
    detail: Option<String>,
}

/// A page stop shown over the conversation.
#[derive(Clone, Copy, Debug)]
struct Overlay {
    stop: PageStop,
    since_ms: u64,
    serial: u64,
}

/// One conversation's state; it lives as long as the conversation host.
struct Conversation {
    state: watch::Sender<Shown>,
    worker: Option<WorkerId>,
    turn: u64,
    turns_done: u32,
    turns_needed: u32,
    finished: bool,
    forgot_complete: bool,
    rng: ChaCha8Rng,
    /// The last user message the page accepted (idempotency key, text): what the
    /// delivery-timeout card's Retry control re-sends when clicked.
    last_message: Option<(String, String)>,
    /// The conversation itself, under any page stop.
    under: Shown,
    /// A page stop covering it.
    overlay: Option<Overlay>,
    /// Serial of the last overlay, so a stand-in person clears only their own.
    overlays: u64,
    /// Write tools a person approved in this page load (a reload asks again).
    approved: std::collections::BTreeSet<&'static str>,
    /// Until when the composer's app picker does not offer the app (simulated ms).
    app_missing_until: u64,
    /// How many of the scenario's root waits (`AgentKnobs::root_waits`) this
    /// conversation's agent made: each is made once, at the first turn due.
    root_waits_made: usize,
}

impl Conversation {
    /// What the page shows (a stop over the conversation, if any).
    fn current(&self) -> ConversationState {
        self.state.borrow().state
    }

    /// The conversation under any stop.
    fn under(&self) -> ConversationState {
        self.under.state
    }

    fn show(&mut self, state: ConversationState, block: Option<String>) {
        self.under = Shown { state, block, until_ms: None, detail: None };
        if self.overlay.is_none() {
            let _ = self.state.send(self.under.clone());
        }
    }
}

/// Shows `stop` over the conversation for `length_ms` (a limit that names its time says
/// it lifts then); then the stand-in person (or the reset) clears it and the page shows
/// the conversation as it is by then.
fn cover(
    c: &Rc<RefCell<Conversation>>,
    stop: PageStop,
    length_ms: u64,
    names_time: bool,
    name: &str,
    ledger: &SharedLedger,
) {
    let now = elapsed_ms();
    if stop == PageStop::NoApp {
        c.borrow_mut().app_missing_until = now + length_ms;
        ledger.borrow_mut().trace(name, format!("the app picker lacks the app for {length_ms} ms"));
        return;
    }
    let serial = {
        let mut cv = c.borrow_mut();
        if cv.overlay.is_some() || cv.under() == ConversationState::Closed {
            return;
        }
        cv.overlays += 1;
        let serial = cv.overlays;
        cv.overlay = Some(Overlay { stop, since_ms: now, serial });
        let until_ms = (names_time && stop.may_name_time()).then(|| EPOCH_MS + now + length_ms);
        let shown = Shown { state: stop.state(), block: None, until_ms, detail: Some(stop.words().to_string()) };
        let _ = cv.state.send(shown);
        serial
    };
    let timed = if names_time && stop.may_name_time() { ", its time named" } else { "" };
    ledger.borrow_mut().trace(name, format!("page shows {} for {length_ms} ms{timed}", stop.label()));
    let (c, name, ledger) = (c.clone(), name.to_string(), ledger.clone());
    tokio::task::spawn_local(async move {
        tokio::time::sleep(Duration::from_millis(length_ms)).await;
        let mut cv = c.borrow_mut();
        if cv.overlay.is_some_and(|o| o.serial == serial) {
            cv.overlay = None;
            let _ = cv.state.send(cv.under.clone());
            ledger.borrow_mut().trace(&name, format!("page clear of {}", stop.label()));
        }
    });
}

/// The conversation host's software.
pub async fn run(name: String, seed: u64, knobs: AgentKnobs, ledger: SharedLedger) -> turmoil::Result {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let span = u64::from(knobs.turns_max - knobs.turns_min + 1);
    let turns_needed = knobs.turns_min + (rng.next_u64() % span) as u32;
    let ready = Shown { state: ConversationState::Ready, block: None, until_ms: None, detail: None };
    let (state, _) = watch::channel(ready.clone());
    let conversation = Rc::new(RefCell::new(Conversation {
        state,
        worker: None,
        turn: 0,
        turns_done: 0,
        turns_needed,
        finished: false,
        forgot_complete: false,
        rng,
        last_message: None,
        under: ready,
        overlay: None,
        overlays: 0,
        approved: std::collections::BTreeSet::new(),
        app_missing_until: 0,
        root_waits_made: 0,
    }));
    // The scenario's page stops, on the conversation of the worker they name.
    for event in knobs.page_events.clone() {
        let (c, name, ledger) = (conversation.clone(), name.clone(), ledger.clone());
        tokio::task::spawn_local(async move {
            tokio::time::sleep(Duration::from_millis(event.at_ms.saturating_sub(elapsed_ms()))).await;
            if c.borrow().worker == Some(event.worker) {
                cover(&c, event.stop, event.length_ms, event.names_time, &name, &ledger);
            }
        });
    }
    for death in knobs.deaths.clone() {
        let (c, name, ledger) = (conversation.clone(), name.clone(), ledger.clone());
        tokio::task::spawn_local(async move {
            tokio::time::sleep(Duration::from_millis(death.at_ms.saturating_sub(elapsed_ms()))).await;
            let mut cv = c.borrow_mut();
            let Some(worker) = cv.worker else { return };
            if death.worker.is_none_or(|w| w == worker) {
                cv.turn += 1; // the running turn never ends
                cv.show(death.state, None);
                ledger.borrow_mut().trace(&name, format!("the conversation dies: {:?}", death.state));
            }
        });
    }
    let listener = TcpListener::bind(("0.0.0.0", CHAT_PORT)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let c = conversation.clone();
        tokio::task::spawn_local(tab(stream, c, name.clone(), knobs.clone(), ledger.clone()));
    }
}

/// One browser tab attached to the conversation: it sees every state change and may
/// submit messages.
async fn tab(stream: TcpStream, c: Rc<RefCell<Conversation>>, name: String, knobs: AgentKnobs, ledger: SharedLedger) {
    let (mut reader, mut writer) = stream.into_split();
    // A tab (re)loading the page: ChatGPT asks for every write tool's approval again.
    c.borrow_mut().approved.clear();
    let mut states = c.borrow().state.subscribe();
    let (out_tx, mut out_rx) = tokio::sync::mpsc::unbounded_channel::<FromChat>();
    let first = states.borrow_and_update().clone();
    let _ = out_tx.send(FromChat::State {
        state: first.state,
        block: first.block,
        until_ms: first.until_ms,
        detail: first.detail,
    });
    let forward = out_tx.clone();
    tokio::task::spawn_local(async move {
        while states.changed().await.is_ok() {
            let s = states.borrow_and_update().clone();
            let frame = FromChat::State { state: s.state, block: s.block, until_ms: s.until_ms, detail: s.detail };
            if forward.send(frame).is_err() {
                break;
            }
        }
    });
    tokio::task::spawn_local(async move {
        while let Some(frame) = out_rx.recv().await {
            if write_frame(&mut writer, &frame).await.is_err() {
                break;
            }
        }
    });
    while let Ok(Some(frame)) = read_frame::<_, ToChat>(&mut reader).await {
        let (worker, key, prompt, steer) = match frame {
            ToChat::Submit { worker, key, prompt, steer } => (worker, key, prompt, steer),
            ToChat::ClickRetry => {
                click_retry(&c, &name, &knobs, &ledger);
                continue;
            }
            ToChat::ClickDialog => {
                let shown = c.borrow().overlay.map(|o| o.stop.label());
                let what = shown.map_or("with no dialog showing".to_string(), |k| format!("showing {k}"));
                ledger.borrow_mut().violation(format!("the executor clicked a dialog on {name}, {what}"));
                continue;
            }
        };
        let state = c.borrow().current();
        let stopped = match state {
            ConversationState::Error(kind) => kind.stops_typing() || kind == ErrorKind::AppUnavailable,
            ConversationState::AwaitingApproval | ConversationState::Unrecognized => true,
            _ => false,
        };
        if stopped {
            // Nothing can be typed into a page that shows a limit, a check, a dialog, an
            // approval card, a lost app or something the adapter cannot name. The
            // executor saw it (unless the page changed this very moment): its fault.
            let since = c.borrow().overlay.map_or(0, |o| o.since_ms);
            if elapsed_ms().saturating_sub(since) > STOP_NOTICE_MS {
                let shown = c.borrow().overlay.map_or(state.as_str(), |o| o.stop.label());
                let what = format!("typed {key} into {name} while it shows {shown}");
                ledger.borrow_mut().violation(what);
            }
            let _ = out_tx.send(FromChat::Refused { key });
            continue;
        }
        if elapsed_ms() < c.borrow().app_missing_until {
            // The executor chooses the app before it types; the picker lacks it.
            ledger.borrow_mut().trace(&name, format!("no app pill for {key}: nothing typed"));
            let _ = out_tx.send(FromChat::AppMissing { key });
            continue;
        }
        let accepts = match state {
            ConversationState::Closed => false,
            ConversationState::Generating => steer,
            _ => true,
        };
        if !accepts {
            let _ = out_tx.send(FromChat::Refused { key });
            continue;
        }
        ledger.borrow_mut().delivered(&name, worker, &key, &prompt);
        c.borrow_mut().last_message = Some((key.clone(), prompt.clone()));
        let timed_out = state != ConversationState::Generating
            && knobs.submit_timeout_pct > 0
            && c.borrow_mut().rng.next_u64() % 100 < knobs.submit_timeout_pct;
        if timed_out {
            // The message went in, but the page shows the delivery-timeout card instead of
            // a turn: whether the model saw it is unknown.
            let mut l = ledger.borrow_mut();
            l.trace(&name, format!("accept {key} send, then the delivery timed out"));
            l.retry_offers += 1;
            drop(l);
            let mut cv = c.borrow_mut();
            cv.worker = Some(worker);
            cv.turn += 1;
            cv.show(ConversationState::Error(ErrorKind::DeliveryTimeout), None);
            let _ = out_tx.send(FromChat::TimedOut { key });
            continue;
        }
        ledger.borrow_mut().trace(&name, format!("accept {key} {}", if steer { "steer" } else { "send" }));
        let _ = out_tx.send(FromChat::Accepted { key: key.clone() });
        c.borrow_mut().worker = Some(worker);
        if state != ConversationState::Generating {
            start_turn(c.clone(), worker, name.clone(), knobs.clone(), ledger.clone());
        } else {
            // A mid-turn checkpoint or correction: the agent reports to root, then goes on.
            let (l, n) = (ledger.clone(), name.clone());
            tokio::task::spawn_local(async move {
                tokio::time::sleep(Duration::from_secs(20)).await;
                let summary = format!("{worker}-checkpoint-{key}");
                if agent_call(&n, SimOp::Progress { worker, summary: summary.clone() }, &l).await.is_ok() {
                    l.borrow_mut().acked.push((worker, summary));
                }
            });
        }
    }
}

/// A click on the Retry control, handled as the real page does: with the delivery-timeout
/// card showing, it re-sends the last user message as a new user turn (one the daemon
/// never commanded: the ledger counts a second delivery of its key) and a turn starts;
/// without the card there is no control and nothing happens. Every click is recorded for
/// the oracle, which breaks on each one.
fn click_retry(c: &Rc<RefCell<Conversation>>, name: &str, knobs: &AgentKnobs, ledger: &SharedLedger) {
    let (card, worker, last) = {
        let cv = c.borrow();
        (cv.current() == ConversationState::Error(ErrorKind::DeliveryTimeout), cv.worker, cv.last_message.clone())
    };
    let resend = if card { worker.zip(last) } else { None };
    let mut l = ledger.borrow_mut();
    let at_ms = l.now_ms;
    let resubmitted = resend.as_ref().map(|(_, (key, _))| key.clone());
    l.retry_clicks.push(RetryClick { conversation: name.to_string(), worker, at_ms, resubmitted });
    let Some((worker, (key, prompt))) = resend else {
        l.trace(name, "Retry clicked with no delivery-timeout card: no such control");
        return;
    };
    l.trace(name, format!("Retry clicked: re-sends {key}"));
    l.delivered(name, worker, &key, &prompt);
    drop(l);
    start_turn(c.clone(), worker, name.to_string(), knobs.clone(), ledger.clone());
}

#[cfg(test)]
mod tests;
