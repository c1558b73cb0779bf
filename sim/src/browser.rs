//! The simulated browser extension (executor): a command journal that survives its
//! restarts, a per-worker serial queue, managed tabs, coalesced state reports.
//!
//! A Rust model of the real extension, following the same protocol rules: journal
//! phases `received -> submission-started -> submitted -> completed`, never resubmit a
//! journaled key, republish bindings and journal in `hello`, honour command deadlines,
//! never click the delivery-timeout card's Retry control (`delivery_timeout_card`).

use crate::daemon::EPOCH_MS;
use crate::faults::{Boundary, Target};
use crate::ledger::SharedLedger;
use crate::wire::{
    CHAT_PORT, EXECUTOR_PORT, EXECUTOR_TOKEN, FromChat, ToChat, read_frame, read_text, write_frame, write_text,
};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::input::*;
use engine::model::{ConversationState, ErrorKind};
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
    /// How long the page needs after a command arrives before typing can start
    /// (focusing the tab, waiting for the composer): the window in which a
    /// `command.cancel` still withdraws it.
    pub submit_delay_ms: u64,
    /// Observations.
    pub ledger: SharedLedger,
}

/// Inputs of the browser's event loop.
enum Event {
    Command(ExecutorCommand),
    DaemonClosed,
    Chat(WorkerId, FromChat),
    TabReady(WorkerId, mpsc::UnboundedSender<ToChat>),
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

/// Sends a `heartbeat` every `every_ms` (the interval `welcome` announces) while the
/// connection's sender lives: the protocol's liveness signal (the daemon closes a
/// connection silent for 60 s), and what finds a socket that broke under a partition.
async fn heartbeat(tx: mpsc::WeakUnboundedSender<String>, every_ms: u64) {
    loop {
        tokio::time::sleep(Duration::from_millis(every_ms.max(1_000))).await;
        let Some(tx) = tx.upgrade() else { return };
        if tx.send(bridge::encode(&bridge::ExecutorMessage::Heartbeat {})).is_err() {
            return;
        }
    }
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
        self.state.ledger.borrow_mut().boundary(b, worker);
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
        // Heartbeats start with the connection, not with `welcome`: a welcome lost with a
        // broken link must not leave the executor silent on a dead socket forever.
        let every_ms = bridge::SessionConfig::new(EXECUTOR_TOKEN).heartbeat_ms;
        tokio::task::spawn_local(heartbeat(tx.downgrade(), every_ms));
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
        let mut l = self.state.ledger.borrow_mut();
        l.hellos += 1;
        l.trace("browser", "hello");
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
            Event::Pump(worker) => {
                self.preparing.remove(&worker);
                self.pump(worker);
            }
            Event::Chat(worker, FromChat::State { state, block }) => self.observed(worker, state, block),
            Event::Chat(worker, FromChat::Accepted { key }) => self.accepted(worker, &key),
            Event::Chat(worker, FromChat::Refused { key }) => {
                self.refused(worker, &key, ExecErrorCode::ComposerBusy, "the page refused")
            }
            Event::Chat(worker, FromChat::TimedOut { key }) => self.refused(
                worker,
                &key,
                ExecErrorCode::MessageDeliveryTimeout,
                "the page showed: Message delivery timed out",
            ),
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
        match c.kind {
            CommandKind::Inspect => return self.inspect(c.worker, &c.conversation),
            CommandKind::Close => return self.release(c.worker, &c.conversation),
            _ => {}
        }
        let known = self.state.storage.borrow().journal.get(&attempt).cloned();
        match known {
            Some(e) if e.phase >= JournalPhase::Submitted => {
                self.result(c.id, CommandOutcome::Submitted { state_seq: e.state_seq, conversation: e.conversation });
            }
            Some(_) => {} // already queued or ambiguous: never twice
            None => {
                let worker = c.worker;
                let received_at = self.now_ms();
                self.state.storage.borrow_mut().journal.insert(
                    attempt,
                    Entry { command: c, phase: JournalPhase::Received, state_seq: 0, conversation: None, received_at },
                );
                self.boundary(Boundary::EnqueuedBeforeAck, worker);
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
        // The composer needs a moment after the command arrived.
        let ready_at = entry.received_at + self.state.submit_delay_ms;
        if self.now_ms() < ready_at {
            if self.preparing.insert(worker) {
                let (events, wait) = (self.events.clone(), Duration::from_millis(ready_at - self.now_ms()));
                tokio::task::spawn_local(async move {
                    tokio::time::sleep(wait).await;
                    let _ = events.send(Event::Pump(worker));
                });
            }
            return;
        }
        // Submission starts: journal first, then touch the page.
        self.set_phase(attempt, JournalPhase::SubmissionStarted);
        self.boundary(Boundary::SubmissionStarted, worker);
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
        self.boundary(Boundary::SubmittedBeforeResult, worker);
        if self.halted() {
            return;
        }
        self.result(id, CommandOutcome::Submitted { state_seq, conversation: conversation.clone() });
        if let Some(url) = conversation {
            let report = BindingReport { worker, conversation: url, open: true, observation: None };
            self.send(ExecutorInput::Binding { executor: self.id.clone(), report });
        }
        self.finish(attempt);
        self.boundary(Boundary::JournalCompleted, worker);
        if self.halted() {
            return;
        }
        self.pump_all();
    }

    /// The page refused (definitely not submitted), or showed the delivery-timeout card
    /// (submitted or not, nobody knows): the command ends with `code`.
    fn refused(&mut self, worker: WorkerId, key: &str, code: ExecErrorCode, detail: &str) {
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
        self.result(id, CommandOutcome::Failed { code, detail: detail.into() });
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
            if state == ConversationState::Error(ErrorKind::DeliveryTimeout) {
                self.delivery_timeout_card(worker);
            }
        }
        self.pump(worker);
    }

    /// `conversation.inspect`: republish what the tab last showed, with the sequence it
    /// already has (an unchanged page must not read as a new turn end). Not journaled.
    fn inspect(&mut self, worker: WorkerId, conversation: &str) {
        let current = {
            let storage = self.state.storage.borrow();
            let ours = storage.tabs.get(&worker).is_some_and(|t| &*t.url == conversation);
            ours.then(|| Some((*storage.reported.get(&worker)?, *storage.seq.get(&worker)?))).flatten()
        };
        self.state.ledger.borrow_mut().trace("browser", format!("{worker} inspect: republish {current:?}"));
        if let Some((state, seq)) = current {
            let observation = Observation { state, seq, block: None };
            self.send(ExecutorInput::State { executor: self.id.clone(), worker, observation });
        }
    }

    /// `conversation.close`: forget the binding (the tab itself stays open); a later
    /// command for the worker opens a fresh conversation.
    fn release(&mut self, worker: WorkerId, conversation: &str) {
        let mut storage = self.state.storage.borrow_mut();
        if storage.tabs.get(&worker).is_some_and(|t| &*t.url == conversation) {
            storage.tabs.remove(&worker);
            storage.reported.remove(&worker);
            drop(storage);
            self.tabs.remove(&worker);
            self.state.ledger.borrow_mut().trace("browser", format!("{worker} close: binding released"));
        }
    }

    /// The page shows "Message delivery timed out" with its Retry control. Retry is never
    /// clicked: it would re-send the last message, a turn the daemon did not command. The
    /// card has just been reported (`conversation.state` error `delivery_timeout`), and a
    /// submission it answered ends with `MESSAGE_DELIVERY_TIMEOUT` (`refused`); the daemon
    /// alone decides what follows, and its fresh `continue` arrives as an ordinary
    /// command. Deliberately, nothing is sent to the page here.
    fn delivery_timeout_card(&self, worker: WorkerId) {
        let what = format!("{worker} delivery-timeout card: reported, Retry not clicked, waiting for the daemon");
        self.state.ledger.borrow_mut().trace("browser", what);
    }
}
