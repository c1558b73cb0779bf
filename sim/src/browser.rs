//! The simulated browser extension (executor): a command journal that survives its
//! restarts, a per-worker serial queue, managed tabs, coalesced state reports.
//!
//! A Rust model of the real extension, following the same protocol rules: journal
//! phases `received -> submission-started -> submitted -> completed`, never resubmit a
//! journaled key, republish bindings and journal in `hello`, honour command deadlines.

use crate::daemon::EPOCH_MS;
use crate::faults::{Boundary, Target};
use crate::ledger::SharedLedger;
use crate::wire::{
    CHAT_PORT, EXECUTOR_PORT, EXECUTOR_TOKEN, FromChat, ToChat, read_frame, read_text, write_frame, write_text,
};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::input::*;
use engine::model::ConversationState;
use engine::{CommandKind, ExecutorCommand};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use turmoil::net::TcpStream;

/// One journal line (persisted in extension storage).
#[derive(Clone, Debug)]
struct Entry {
    command: ExecutorCommand,
    phase: JournalPhase,
    state_seq: u64,
    conversation: Option<Arc<str>>,
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
}

/// What the browser host is given at every (re)start.
#[derive(Clone)]
pub struct BrowserState {
    /// Extension storage.
    pub storage: Rc<RefCell<Storage>>,
    /// Conversation hosts the browser may open, in order.
    pub chats: Vec<String>,
    /// Whether the page supports mid-turn steering.
    pub steering: bool,
    /// Submissions in progress at once, across workers (the extension's limit).
    pub concurrency: usize,
    /// Observations.
    pub ledger: SharedLedger,
}

/// Inputs of the browser's event loop.
enum Event {
    Command(ExecutorCommand),
    DaemonClosed,
    Chat(WorkerId, FromChat),
    TabReady(WorkerId, mpsc::UnboundedSender<ToChat>),
}

/// Runtime state: lost when the extension restarts.
struct Browser {
    state: BrowserState,
    id: ExecutorId,
    daemon: Option<mpsc::UnboundedSender<String>>,
    tabs: BTreeMap<WorkerId, (mpsc::UnboundedSender<ToChat>, Option<ConversationState>)>,
    queues: BTreeMap<WorkerId, VecDeque<AttemptId>>,
    busy: BTreeSet<WorkerId>,
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

    fn boundary(&self, b: Boundary) {
        self.state.ledger.borrow_mut().boundary(b);
    }

    /// Connects to the daemon's executor port (retrying) and says hello, in the bridge's
    /// protocol.
    async fn connect(&mut self) {
        let stream = loop {
            match TcpStream::connect(("daemon", EXECUTOR_PORT)).await {
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
        let (events, ledger, id) = (self.events.clone(), self.state.ledger.clone(), self.id.clone());
        tokio::task::spawn_local(async move {
            while let Ok(Some(text)) = read_text(&mut reader).await {
                match bridge::decode_daemon(&text, bridge::MESSAGE_BYTES_MAX) {
                    Ok(bridge::DaemonMessage::Command(command)) => {
                        if events.send(Event::Command(command.into_engine(id.clone()))).is_err() {
                            return;
                        }
                    }
                    Ok(bridge::DaemonMessage::ProtocolError(e)) => {
                        ledger.borrow_mut().violation(format!("the daemon refused a protocol message: {e:?}"));
                    }
                    Ok(_) => {}
                    Err(e) => ledger.borrow_mut().violation(format!("undecodable daemon message: {e}")),
                }
            }
            let _ = events.send(Event::DaemonClosed);
        });
        let hello = self.hello();
        let _ = tx.send(bridge::encode(&hello));
        self.daemon = Some(tx);
        self.state.ledger.borrow_mut().trace("browser", "hello");
    }

    /// `hello`: the journal and every managed tab with its current state.
    fn hello(&mut self) -> bridge::ExecutorMessage {
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
        let tabs: Vec<(WorkerId, Tab)> = storage.tabs.iter().map(|(w, t)| (*w, t.clone())).collect();
        for (worker, tab) in tabs {
            let state = self.tabs.get(&worker).and_then(|(_, s)| *s);
            let seq = storage.seq.entry(worker).or_insert(0);
            *seq += 1;
            let seq = *seq;
            if let Some(s) = state {
                storage.reported.insert(worker, s);
            }
            bindings.push(BindingReport {
                worker,
                conversation: tab.url.clone(),
                open: state != Some(ConversationState::Closed),
                observation: state.map(|state| Observation { state, seq, block: None }),
            });
        }
        bridge::ExecutorMessage::Hello(bridge::Hello {
            token: EXECUTOR_TOKEN.to_string(),
            executor_id: self.id.to_string(),
            protocol: bridge::PROTOCOL_VERSION,
            capabilities: bridge::Capabilities { steering: self.state.steering, operator: false },
            concurrency_max: self.state.concurrency as u32,
            bindings: bindings.iter().map(bridge::BindingWire::from).collect(),
            journal: journal.iter().map(bridge::JournalWire::from).collect::<Vec<_>>(),
        })
    }

    /// Sends an engine-shaped report as its bridge protocol message.
    fn send(&self, input: ExecutorInput) {
        let message = match &input {
            ExecutorInput::Binding { report, .. } => {
                bridge::ExecutorMessage::Binding(bridge::BindingWire::from(report))
            }
            ExecutorInput::State { worker, observation, .. } => {
                bridge::ExecutorMessage::State(bridge::StateWire::new(*worker, observation))
            }
            ExecutorInput::Result { command, outcome, .. } => bridge::ExecutorMessage::Result(bridge::ResultWire {
                command_id: *command,
                outcome: bridge::OutcomeWire::from(outcome),
            }),
            ExecutorInput::Hello { .. } | ExecutorInput::Disconnected { .. } => return,
        };
        if let Some(tx) = &self.daemon {
            let _ = tx.send(bridge::encode(&message));
        }
    }

    fn result(&self, command: CommandId, outcome: CommandOutcome) {
        self.send(ExecutorInput::Result { executor: self.id.clone(), command, outcome });
    }

    fn open_tab(&mut self, worker: WorkerId, chat: String) {
        let events = self.events.clone();
        tokio::task::spawn_local(async move {
            let Ok(stream) = TcpStream::connect((chat.as_str(), CHAT_PORT)).await else { return };
            let (mut reader, mut writer) = stream.into_split();
            let (tx, mut out) = mpsc::unbounded_channel::<ToChat>();
            tokio::task::spawn_local(async move {
                while let Some(frame) = out.recv().await {
                    if write_frame(&mut writer, &frame).await.is_err() {
                        break;
                    }
                }
            });
            let _ = events.send(Event::TabReady(worker, tx));
            while let Ok(Some(frame)) = read_frame::<_, FromChat>(&mut reader).await {
                if events.send(Event::Chat(worker, frame)).is_err() {
                    return;
                }
            }
        });
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Command(c) => self.command(c),
            Event::DaemonClosed => {}
            Event::TabReady(worker, tx) => {
                self.tabs.insert(worker, (tx, None));
                self.pump(worker);
            }
            Event::Chat(worker, FromChat::State { state, block }) => self.observed(worker, state, block),
            Event::Chat(worker, FromChat::Accepted { key }) => self.accepted(worker, &key),
            Event::Chat(worker, FromChat::Refused { key }) => self.refused(worker, &key),
        }
    }

    /// A command from the daemon: journal it (idempotently) and queue it.
    fn command(&mut self, c: ExecutorCommand) {
        let attempt = c.attempt;
        if c.kind == CommandKind::Cancel {
            // Withdraw it unless its submission already began.
            let queued =
                self.state.storage.borrow().journal.get(&attempt).is_some_and(|e| e.phase == JournalPhase::Received);
            if queued {
                self.finish(attempt);
                self.result(c.id, CommandOutcome::Failed { code: ExecErrorCode::Cancelled, detail: String::new() });
                self.pump(c.worker);
            }
            return;
        }
        let known = self.state.storage.borrow().journal.get(&attempt).cloned();
        match known {
            Some(e) if e.phase >= JournalPhase::Submitted => {
                self.result(c.id, CommandOutcome::Submitted { state_seq: e.state_seq, conversation: e.conversation });
            }
            Some(_) => {} // already queued or ambiguous: never twice
            None => {
                let worker = c.worker;
                self.state.storage.borrow_mut().journal.insert(
                    attempt,
                    Entry { command: c, phase: JournalPhase::Received, state_seq: 0, conversation: None },
                );
                self.boundary(Boundary::EnqueuedBeforeAck);
                if self.halted() {
                    return;
                }
                self.queues.entry(worker).or_default().push_back(attempt);
                self.pump(worker);
            }
        }
    }

    /// Works the worker's queue: one submission at a time.
    fn pump(&mut self, worker: WorkerId) {
        if !self.ready || self.busy.contains(&worker) || self.busy.len() >= self.state.concurrency || self.halted() {
            return;
        }
        let Some(&attempt) = self.queues.get(&worker).and_then(|q| q.front()) else { return };
        let entry = self.state.storage.borrow().journal.get(&attempt).cloned();
        let Some(entry) = entry.filter(|e| e.phase == JournalPhase::Received) else {
            self.queues.get_mut(&worker).map(VecDeque::pop_front);
            return self.pump(worker);
        };
        let c = entry.command;
        if self.now_ms() > c.deadline.0 {
            self.finish(attempt);
            self.result(c.id, CommandOutcome::Failed { code: ExecErrorCode::DeadlineExceeded, detail: String::new() });
            return self.pump(worker);
        }
        if c.kind == CommandKind::Create {
            {
                if !self.state.storage.borrow().tabs.contains_key(&worker) || self.tab_closed(worker) {
                    let mut storage = self.state.storage.borrow_mut();
                    let index = storage.next_chat;
                    let Some(chat) = self.state.chats.get(index).cloned() else {
                        drop(storage);
                        self.finish(attempt);
                        self.result(
                            c.id,
                            CommandOutcome::Failed {
                                code: ExecErrorCode::ConversationClosed,
                                detail: "no free conversation".into(),
                            },
                        );
                        return;
                    };
                    storage.next_chat += 1;
                    let url: Arc<str> = Arc::from(format!("https://chatgpt.com/c/{chat}"));
                    storage.tabs.insert(worker, Tab { chat: chat.clone(), url });
                    storage.seq.insert(worker, 0);
                    storage.reported.remove(&worker);
                    drop(storage);
                    self.tabs.remove(&worker);
                    self.open_tab(worker, chat);
                    return; // submit once the tab is connected and ready
                }
            }
        }
        let Some((tab, state)) = self.tabs.get(&worker).cloned() else {
            if !self.state.storage.borrow().tabs.contains_key(&worker) {
                self.finish(attempt);
                self.result(
                    c.id,
                    CommandOutcome::Failed { code: ExecErrorCode::ConversationClosed, detail: String::new() },
                );
                return self.pump(worker);
            }
            return; // the tab is still connecting
        };
        let Some(state) = state else { return };
        let steer = match (state, c.kind) {
            (ConversationState::Closed, _) => {
                self.finish(attempt);
                self.result(
                    c.id,
                    CommandOutcome::Failed { code: ExecErrorCode::ConversationClosed, detail: String::new() },
                );
                return self.pump(worker);
            }
            (ConversationState::Generating, CommandKind::Steer) if self.state.steering => true,
            (ConversationState::Generating, CommandKind::Steer) => {
                self.finish(attempt);
                self.result(
                    c.id,
                    CommandOutcome::Failed { code: ExecErrorCode::SteeringUnavailable, detail: String::new() },
                );
                return self.pump(worker);
            }
            (ConversationState::Generating, _) => return, // wait for idle
            _ => false,
        };
        // Submission starts: journal first, then touch the page.
        self.set_phase(attempt, JournalPhase::SubmissionStarted);
        self.boundary(Boundary::SubmissionStarted);
        if self.halted() {
            return;
        }
        self.busy.insert(worker);
        let _ = tab.send(ToChat::Submit { worker, key: c.idempotency_key.clone(), prompt: c.prompt.clone(), steer });
    }

    /// Works every queue (a slot under the concurrency limit may have freed up).
    fn pump_all(&mut self) {
        let workers: Vec<WorkerId> = self.queues.iter().filter(|(_, q)| !q.is_empty()).map(|(w, _)| *w).collect();
        for worker in workers {
            self.pump(worker);
        }
    }

    fn tab_closed(&self, worker: WorkerId) -> bool {
        self.tabs.get(&worker).is_some_and(|(_, s)| *s == Some(ConversationState::Closed))
    }

    fn set_phase(&self, attempt: AttemptId, phase: JournalPhase) {
        if let Some(e) = self.state.storage.borrow_mut().journal.get_mut(&attempt) {
            e.phase = phase;
        }
    }

    /// Marks the queue head done (journal `completed`) and frees the worker's queue.
    fn finish(&mut self, attempt: AttemptId) {
        self.set_phase(attempt, JournalPhase::Completed);
        if let Some(entry) = self.state.storage.borrow().journal.get(&attempt) {
            let worker = entry.command.worker;
            if let Some(q) = self.queues.get_mut(&worker) {
                q.retain(|a| *a != attempt);
            }
        }
    }

    fn head(&self, worker: WorkerId) -> Option<AttemptId> {
        self.queues.get(&worker).and_then(|q| q.front()).copied()
    }

    /// The page shows our message: submitted.
    fn accepted(&mut self, worker: WorkerId, key: &str) {
        let Some(attempt) = self.head(worker) else { return };
        let (id, kind) = {
            let storage = self.state.storage.borrow();
            let e = &storage.journal[&attempt];
            if e.command.idempotency_key != key {
                return;
            }
            (e.command.id, e.command.kind)
        };
        self.busy.remove(&worker);
        let conversation = (kind == CommandKind::Create).then(|| self.state.storage.borrow().tabs[&worker].url.clone());
        let state_seq = self.state.storage.borrow().seq.get(&worker).copied().unwrap_or(0);
        {
            let mut storage = self.state.storage.borrow_mut();
            let e = storage.journal.get_mut(&attempt).expect("journaled");
            e.phase = JournalPhase::Submitted;
            e.state_seq = state_seq;
            e.conversation = conversation.clone();
        }
        self.boundary(Boundary::SubmittedBeforeResult);
        if self.halted() {
            return;
        }
        self.result(id, CommandOutcome::Submitted { state_seq, conversation: conversation.clone() });
        if let Some(url) = conversation {
            let report = BindingReport { worker, conversation: url, open: true, observation: None };
            self.send(ExecutorInput::Binding { executor: self.id.clone(), report });
        }
        self.finish(attempt);
        self.boundary(Boundary::JournalCompleted);
        if self.halted() {
            return;
        }
        self.pump_all();
    }

    /// The page refused: definitely not submitted.
    fn refused(&mut self, worker: WorkerId, key: &str) {
        let Some(attempt) = self.head(worker) else { return };
        let id = {
            let storage = self.state.storage.borrow();
            let e = &storage.journal[&attempt];
            if e.command.idempotency_key != key {
                return;
            }
            e.command.id
        };
        self.busy.remove(&worker);
        self.finish(attempt);
        self.result(
            id,
            CommandOutcome::Failed { code: ExecErrorCode::ComposerBusy, detail: "the page refused".into() },
        );
        self.pump(worker);
    }

    /// A tab's state: coalesce and report real transitions only.
    fn observed(&mut self, worker: WorkerId, state: ConversationState, block: Option<String>) {
        if let Some((_, s)) = self.tabs.get_mut(&worker) {
            *s = Some(state);
        }
        let report = {
            let mut storage = self.state.storage.borrow_mut();
            if storage.reported.get(&worker) == Some(&state) {
                None
            } else {
                storage.reported.insert(worker, state);
                let seq = storage.seq.entry(worker).or_insert(0);
                *seq += 1;
                Some(*seq)
            }
        };
        if let Some(seq) = report {
            let observation = Observation { state, seq, block };
            self.send(ExecutorInput::State { executor: self.id.clone(), worker, observation });
        }
        self.pump(worker);
    }
}
