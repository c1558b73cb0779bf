//! The simulated browser extension (executor): a command journal that survives its
//! restarts, a per-worker serial queue, managed tabs, coalesced state reports.
//!
//! A Rust model of the real extension, following the same protocol rules: journal
//! phases `received -> submission-started -> submitted -> completed`, never resubmit a
//! journaled key, republish bindings and journal in `hello`, honour command deadlines,
//! never click the delivery-timeout card's Retry control (`delivery_timeout_card`), type
//! a command only into the conversation it names (`not_held`), stop managing a
//! conversation on `conversation.close` (`release`), report the page states that stop a
//! worker with their reset time and words, never type into a page that shows one (a
//! queued command waits, or fails `DEADLINE_EXCEEDED` at its deadline), and never click
//! a dialog.
//!
//! This file holds the browser's state, its connection to the daemon and its event loop;
//! `browser/queue.rs` a command's life (journal, per-worker queue, submission, result),
//! `browser/tabs.rs` the managed tabs (binding, what a page shows, inspect, release).

mod queue;
mod tabs;

use crate::epoch::EPOCH_MS;
use crate::faults::{Boundary, Target};
use crate::ledger::SharedLedger;
use crate::wire::{EXECUTOR_TOKEN, FromChat, ToChat, conversation_host};
use engine::ExecutorCommand;
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::input::*;
use engine::model::ConversationState;
use engine::time::Timestamp;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// One journal line (persisted in extension storage).
#[derive(Clone, Debug)]
struct Entry {
    command: ExecutorCommand,
    phase: JournalPhase,
    state_seq: u64,
    conversation: Option<Arc<str>>,
    /// When the command was received (simulated epoch ms): the composer needs
    /// `submit_delay_ms` after that before a submission can start.
    received_at: u64,
}

/// A managed tab (persisted): which conversation host serves it.
#[derive(Clone, Debug)]
struct Tab {
    chat: String,
    url: Arc<str>,
}

/// Extension storage: survives extension restarts (it is the browser's disk).
#[derive(Debug, Default)]
pub struct Storage {
    journal: BTreeMap<AttemptId, Entry>,
    tabs: BTreeMap<WorkerId, Tab>,
    next_chat: usize,
    seq: BTreeMap<WorkerId, u64>,
    reported: BTreeMap<WorkerId, ConversationState>,
    /// The reset time and words of what each tab last showed (republished with it).
    page: BTreeMap<WorkerId, (Option<Timestamp>, Option<Arc<str>>)>,
}

/// What the browser host is given at every (re)start.
#[derive(Clone)]
pub struct BrowserState {
    /// Extension storage.
    pub storage: Rc<RefCell<Storage>>,
    /// Conversation hosts the browser may open for a `conversation.create`, in order.
    pub chats: Vec<String>,
    /// Conversation hosts kept for the operator's attaches: never handed out for a
    /// create, opened only when the operator (or a command) names one.
    pub attachable: Vec<String>,
    /// Whether the page supports mid-turn steering.
    pub steering: bool,
    /// Submissions in progress at once, across workers (the extension's limit).
    pub concurrency: usize,
    /// How long the page needs after a command arrives before typing can start
    /// (focusing the tab, waiting for the composer): the window in which a
    /// `command.cancel` still withdraws it.
    pub submit_delay_ms: u64,
    /// Observations.
    pub ledger: SharedLedger,
}

/// One opened tab: the worker it was opened for and a serial that tells it from the
/// worker's earlier tabs (a replaced or released tab's page stays open, unmanaged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TabRef {
    worker: WorkerId,
    serial: u64,
}

/// Inputs of the browser's event loop.
enum Event {
    Command(ExecutorCommand),
    DaemonClosed,
    Chat(TabRef, FromChat),
    TabReady(TabRef, mpsc::UnboundedSender<ToChat>),
    /// The composer of this worker's tab may be ready now.
    Pump(WorkerId),
}

/// Runtime state: lost when the extension restarts.
struct Browser {
    state: BrowserState,
    id: ExecutorId,
    daemon: Option<mpsc::UnboundedSender<String>>,
    tabs: BTreeMap<WorkerId, (mpsc::UnboundedSender<ToChat>, Option<ConversationState>)>,
    queues: BTreeMap<WorkerId, VecDeque<AttemptId>>,
    busy: BTreeSet<WorkerId>,
    /// Workers whose queue head waits for the composer (a `Pump` is scheduled).
    preparing: BTreeSet<WorkerId>,
    /// The serial of the tab each worker's binding owns: events of any other tab (one
    /// whose conversation was released or replaced) come from a page no longer managed.
    opened: BTreeMap<WorkerId, u64>,
    /// The serial of the next tab opened.
    next_tab: u64,
    /// Workers bound here to a conversation the daemon has not heard this browser holds
    /// (named by a command): the first state of its tab is
    /// reported as a `binding`, as the extension does once the tab shows the URL.
    unverified: BTreeSet<WorkerId>,
    events: mpsc::UnboundedSender<Event>,
    /// Reconciled with the daemon (hello sent): only then are submissions started.
    ready: bool,
}

/// The browser host's software.
pub async fn run(state: BrowserState) -> turmoil::Result {
    let (events, mut rx) = mpsc::unbounded_channel();
    let mut b = Browser {
        state: state.clone(),
        id: ExecutorId::new("browser-1"),
        daemon: None,
        tabs: BTreeMap::new(),
        queues: BTreeMap::new(),
        busy: BTreeSet::new(),
        preparing: BTreeSet::new(),
        opened: BTreeMap::new(),
        next_tab: 0,
        unverified: BTreeSet::new(),
        events,
        ready: false,
    };
    state.ledger.borrow_mut().trace("browser", "start");
    let tabs: Vec<(WorkerId, Tab)> = state.storage.borrow().tabs.iter().map(|(w, t)| (*w, t.clone())).collect();
    for (worker, tab) in tabs {
        b.open_tab(worker, tab.chat);
    }
    // Commands received but not started before a restart resume from the journal.
    let resumable: Vec<(WorkerId, AttemptId)> = state
        .storage
        .borrow()
        .journal
        .iter()
        .filter(|(_, e)| e.phase == JournalPhase::Received)
        .map(|(a, e)| (e.command.worker, *a))
        .collect();
    for (worker, attempt) in resumable {
        b.queues.entry(worker).or_default().push_back(attempt);
    }
    // Give the tabs a moment to report their current state before saying hello.
    tokio::time::sleep(Duration::from_millis(500)).await;
    while let Ok(event) = rx.try_recv() {
        b.handle(event);
    }
    b.connect().await;
    // Submissions cut by the restart cannot be proven either way: fail them closed.
    let orphaned: Vec<CommandId> = state
        .storage
        .borrow()
        .journal
        .values()
        .filter(|e| e.phase == JournalPhase::SubmissionStarted)
        .map(|e| e.command.id)
        .collect();
    for id in orphaned {
        b.set_phase(id.attempt, JournalPhase::Completed);
        b.result(
            id,
            CommandOutcome::Failed {
                code: ExecErrorCode::AmbiguousSubmission,
                detail: "restarted mid-submission".into(),
            },
        );
    }
    b.ready = true;
    let queued: Vec<WorkerId> = b.queues.keys().copied().collect();
    for worker in queued {
        b.pump(worker);
    }
    while let Some(event) = rx.recv().await {
        if let Event::DaemonClosed = event {
            b.daemon = None;
            tokio::time::sleep(Duration::from_secs(2)).await;
            b.connect().await;
        } else {
            b.handle(event);
        }
        if b.halted() {
            std::future::pending::<()>().await;
        }
    }
    Ok(())
}

impl Browser {
    fn now_ms(&self) -> u64 {
        EPOCH_MS + self.state.ledger.borrow().now_ms
    }

    /// Whether the fault plan killed this host at the boundary just passed.
    fn halted(&self) -> bool {
        self.state.ledger.borrow().crash_now.is_some_and(|(t, _)| t == Target::Executor)
    }

    fn boundary(&self, b: Boundary, worker: WorkerId) {
        self.state.ledger.borrow_mut().boundary(b, worker, Some(Target::Executor));
    }

    /// Connects to the daemon's executor port (retrying) and says hello, in the bridge's
    /// protocol.
    async fn connect(&mut self) {
        let (events, ledger, id) = (self.events.clone(), self.state.ledger.clone(), self.id.clone());
        let tx = crate::link::connect(events, ledger, id, (Event::Command, || Event::DaemonClosed), true).await;
        let hello = self.hello();
        let _ = tx.send(executor_protocol::encode(&hello));
        self.daemon = Some(tx);
        let mut l = self.state.ledger.borrow_mut();
        l.hellos += 1;
        l.trace("browser", "hello");
    }

    /// `hello`: the journal and every managed tab with its current state.
    fn hello(&mut self) -> executor_protocol::ExecutorMessage {
        let mut storage = self.state.storage.borrow_mut();
        let journal: Vec<JournalEntry> = storage
            .journal
            .iter()
            .map(|(a, e)| JournalEntry {
                command: CommandId { attempt: *a },
                phase: e.phase,
                state_seq: e.state_seq,
                conversation: e.conversation.clone(),
            })
            .collect();
        let mut bindings = Vec::new();
        // Every binding is reported here: none waits for its first state any more.
        self.unverified.clear();
        let tabs: Vec<(WorkerId, Tab)> = storage.tabs.iter().map(|(w, t)| (*w, t.clone())).collect();
        for (worker, tab) in tabs {
            self.state.ledger.borrow_mut().published(worker, &tab.chat);
            let state = self.tabs.get(&worker).and_then(|(_, s)| *s);
            // The last published state keeps its sequence, as the extension republishes
            // the stored observation unchanged: a larger sequence on an unchanged state
            // would read as a new turn end (a turn the tab took while the daemon was down,
            // before its page showed it generating). Only a state never published gets a
            // new one.
            let unpublished = state.is_some() && storage.reported.get(&worker).copied() != state;
            let seq = storage.seq.entry(worker).or_insert(0);
            if unpublished {
                *seq += 1;
            }
            let seq = *seq;
            if let Some(s) = state {
                storage.reported.insert(worker, s);
            }
            bindings.push(BindingReport {
                worker,
                conversation: tab.url.clone(),
                open: state != Some(ConversationState::Closed),
                observation: state.map(|state| {
                    let (until, detail) = storage.page.get(&worker).cloned().unwrap_or_default();
                    Observation { state, seq, block: None, until, detail, approval: None, retry: None }
                }),
            });
        }
        executor_protocol::ExecutorMessage::Hello(executor_protocol::Hello {
            token: EXECUTOR_TOKEN.to_string(),
            executor_id: self.id.to_string(),
            protocol: executor_protocol::PROTOCOL_VERSION,
            capabilities: executor_protocol::Capabilities {
                steering: self.state.steering,
                operator: false,
                kinds: None,
                // As the extension: its heartbeats answered, so a zombie leader is left.
                heartbeat_echo: true,
            },
            concurrency_max: self.state.concurrency as u32,
            bindings: bindings.iter().map(executor_protocol::BindingWire::from).collect(),
            journal: journal.iter().map(executor_protocol::JournalWire::from).collect::<Vec<_>>(),
            epoch: None,
            accounts: None,
        })
    }

    /// Sends an engine-shaped report as its executor protocol message (bindings and states
    /// are noted in the ledger with the conversation they are about).
    fn send(&self, input: ExecutorInput) {
        let message = match &input {
            ExecutorInput::Binding { report, .. } => {
                let chat = conversation_host(&report.conversation).unwrap_or(&report.conversation);
                self.state.ledger.borrow_mut().published(report.worker, chat);
                executor_protocol::ExecutorMessage::Binding(executor_protocol::BindingWire::from(report))
            }
            ExecutorInput::State { worker, observation, .. } => {
                if let Some(tab) = self.state.storage.borrow().tabs.get(worker) {
                    self.state.ledger.borrow_mut().published(*worker, &tab.chat);
                }
                executor_protocol::ExecutorMessage::State(executor_protocol::StateWire::new(*worker, observation))
            }
            ExecutorInput::Result { command, outcome, .. } => {
                executor_protocol::ExecutorMessage::Result(executor_protocol::ResultWire {
                    command_id: *command,
                    outcome: executor_protocol::OutcomeWire::from(outcome),
                })
            }
            ExecutorInput::Hello { .. } | ExecutorInput::Disconnected { .. } | ExecutorInput::SteerLanded { .. } => {
                return;
            }
        };
        if let Some(tx) = &self.daemon {
            let _ = tx.send(executor_protocol::encode(&message));
        }
    }

    fn result(&self, command: CommandId, outcome: CommandOutcome) {
        self.send(ExecutorInput::Result { executor: self.id.clone(), command, outcome });
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Command(c) => self.command(c),
            Event::DaemonClosed => {}
            Event::TabReady(tab, tx) if self.managed(tab) => {
                self.tabs.insert(tab.worker, (tx, None));
                self.pump(tab.worker);
            }
            Event::Pump(worker) => {
                self.preparing.remove(&worker);
                self.pump(worker);
            }
            // A page no longer managed: whatever it shows is nobody's business here.
            Event::TabReady(..) => {}
            Event::Chat(tab, _) if !self.managed(tab) => {}
            Event::Chat(tab, FromChat::State { state, block, until_ms, detail }) => {
                self.observed(tab.worker, state, block, until_ms.map(Timestamp), detail.map(Arc::from))
            }
            Event::Chat(tab, FromChat::Accepted { key }) => self.accepted(tab.worker, &key),
            Event::Chat(tab, FromChat::Refused { key }) => {
                self.refused(tab.worker, &key, ExecErrorCode::ComposerBusy, "the page refused")
            }
            Event::Chat(tab, FromChat::AppMissing { key }) => {
                self.refused(tab.worker, &key, ExecErrorCode::AppNotSelected, crate::chat::APP_NAME)
            }
            Event::Chat(tab, FromChat::TimedOut { key }) => self.refused(
                tab.worker,
                &key,
                ExecErrorCode::MessageDeliveryTimeout,
                "the page showed: Message delivery timed out",
            ),
        }
    }
}

#[cfg(test)]
mod tests;
