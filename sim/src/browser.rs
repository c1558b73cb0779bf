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

use crate::daemon::EPOCH_MS;
use crate::faults::{Boundary, Target};
use crate::ledger::SharedLedger;
use crate::wire::{
    CHAT_PORT, EXECUTOR_TOKEN, FromChat, ToChat, conversation_host, conversation_url, read_frame, write_frame,
};
use engine::ids::{AttemptId, CommandId, ExecutorId, WorkerId};
use engine::input::*;
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
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
        let tx = crate::link::connect(events, ledger, id, Event::Command, || Event::DaemonClosed).await;
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
            },
            concurrency_max: self.state.concurrency as u32,
            bindings: bindings.iter().map(executor_protocol::BindingWire::from).collect(),
            journal: journal.iter().map(executor_protocol::JournalWire::from).collect::<Vec<_>>(),
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

    /// Opens a tab on the conversation host for the worker's binding; the worker's
    /// previous tab (if any) stops being managed.
    fn open_tab(&mut self, worker: WorkerId, chat: String) {
        let tab = TabRef { worker, serial: self.next_tab };
        self.next_tab += 1;
        self.opened.insert(worker, tab.serial);
        self.tabs.remove(&worker);
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
            let _ = events.send(Event::TabReady(tab, tx));
            while let Ok(Some(frame)) = read_frame::<_, FromChat>(&mut reader).await {
                if events.send(Event::Chat(tab, frame)).is_err() {
                    return;
                }
            }
        });
    }

    /// Whether `tab` is the one its worker's binding owns now.
    fn managed(&self, tab: TabRef) -> bool {
        self.opened.get(&tab.worker) == Some(&tab.serial)
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

    /// A command waits for the page to clear (or for its deadline): look again then.
    fn wait_for_page(&mut self, worker: WorkerId, deadline: Timestamp) {
        if self.preparing.insert(worker) {
            let wait = Duration::from_millis(deadline.0.saturating_sub(self.now_ms()) + 1_000);
            let events = self.events.clone();
            tokio::task::spawn_local(async move {
                tokio::time::sleep(wait).await;
                let _ = events.send(Event::Pump(worker));
            });
        }
    }

    /// A command from the daemon: journal it (idempotently) and queue it.
    fn command(&mut self, c: ExecutorCommand) {
        let attempt = c.attempt;
        self.state.ledger.borrow_mut().browser_commands.insert(c.worker);
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
        if c.kind == CommandKind::Create
            && (!self.state.storage.borrow().tabs.contains_key(&worker) || self.tab_closed(worker))
        {
            let index = self.state.storage.borrow().next_chat;
            let Some(chat) = self.state.chats.get(index).cloned() else {
                self.finish(attempt);
                let detail = "no free conversation".into();
                self.result(c.id, CommandOutcome::Failed { code: ExecErrorCode::ConversationClosed, detail });
                return;
            };
            self.state.storage.borrow_mut().next_chat += 1;
            return self.bind(worker, chat); // submit once the tab is connected and ready
        }
        if c.kind != CommandKind::Create && !self.holds(worker, &c.conversation) {
            return self.not_held(attempt, &c);
        }
        let Some((tab, state)) = self.tabs.get(&worker).cloned() else {
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
            (ConversationState::Error(kind), _) if kind.stops_typing() || kind == ErrorKind::AppUnavailable => {
                // Nothing is typed into a page that shows a limit, a check, a dialog or a
                // lost app: the command waits for the page to clear, or for its deadline.
                self.wait_for_page(worker, c.deadline);
                return;
            }
            (ConversationState::AwaitingApproval, _) => {
                // Nor while an approval card waits (never clicked): the command waits.
                self.wait_for_page(worker, c.deadline);
                return;
            }
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

    /// Whether the worker's binding here is `conversation`.
    fn holds(&self, worker: WorkerId, conversation: &str) -> bool {
        self.state.storage.borrow().tabs.get(&worker).is_some_and(|t| &*t.url == conversation)
    }

    /// The conversation host a URL names, if this browser can open it.
    fn reachable(&self, url: &str) -> Option<String> {
        let host = conversation_host(url)?;
        self.state.chats.iter().chain(&self.state.attachable).find(|c| *c == host).cloned()
    }

    /// Manages `chat` for the worker from now on, in a fresh tab (stored first); the tab
    /// of its previous binding, if any, stays open as it is, unmanaged.
    fn bind(&mut self, worker: WorkerId, chat: String) {
        {
            let mut storage = self.state.storage.borrow_mut();
            storage.tabs.insert(worker, Tab { chat: chat.clone(), url: Arc::from(conversation_url(&chat)) });
            storage.seq.insert(worker, 0);
            storage.reported.remove(&worker);
        }
        self.unverified.remove(&worker);
        let mut l = self.state.ledger.borrow_mut();
        l.managed(worker, Some(&chat));
        l.trace("browser", format!("{worker} manages {chat}"));
        drop(l);
        self.open_tab(worker, chat);
    }

    /// A send or steer naming a conversation this browser does not manage for the worker
    /// is never typed into another tab. As in the extension: a steer fails
    /// `STEERING_UNAVAILABLE` (no tab shows that conversation mid-turn), a send opens the
    /// named conversation in a tab of its own and is typed there once the page is ready,
    /// and a URL that names no conversation fails `CONVERSATION_CLOSED`.
    fn not_held(&mut self, attempt: AttemptId, c: &ExecutorCommand) {
        let (code, detail) = match (c.kind, self.reachable(&c.conversation)) {
            (CommandKind::Steer, _) => {
                (ExecErrorCode::SteeringUnavailable, "the conversation is not open in this browser")
            }
            (_, Some(chat)) => {
                self.bind(c.worker, chat);
                self.unverified.insert(c.worker);
                return; // submit once the tab is connected and ready
            }
            (_, None) => (ExecErrorCode::ConversationClosed, "not a conversation of chatgpt.com"),
        };
        self.finish(attempt);
        self.result(c.id, CommandOutcome::Failed { code, detail: detail.into() });
        self.pump(c.worker);
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
    fn observed(
        &mut self,
        worker: WorkerId,
        state: ConversationState,
        block: Option<String>,
        until: Option<Timestamp>,
        detail: Option<Arc<str>>,
    ) {
        if let Some((_, s)) = self.tabs.get_mut(&worker) {
            *s = Some(state);
        }
        let report = {
            let mut storage = self.state.storage.borrow_mut();
            storage.page.insert(worker, (until, detail.clone()));
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
            let observation = Observation { state, seq, block, until, detail, approval: None, retry: None };
            let conversation = self.state.storage.borrow().tabs.get(&worker).map(|t| t.url.clone());
            match conversation.filter(|_| self.unverified.remove(&worker)) {
                Some(conversation) => {
                    let open = state != ConversationState::Closed;
                    let report = BindingReport { worker, conversation, open, observation: Some(observation) };
                    self.send(ExecutorInput::Binding { executor: self.id.clone(), report });
                }
                None => self.send(ExecutorInput::State { executor: self.id.clone(), worker, observation }),
            }
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
            let page = storage.page.get(&worker).cloned().unwrap_or_default();
            ours.then(|| Some((*storage.reported.get(&worker)?, *storage.seq.get(&worker)?, page))).flatten()
        };
        let shown = current.as_ref().map(|(state, seq, _)| (*state, *seq));
        self.state.ledger.borrow_mut().trace("browser", format!("{worker} inspect: republish {shown:?}"));
        if let Some((state, seq, (until, detail))) = current {
            let observation = Observation { state, seq, block: None, until, detail, approval: None, retry: None };
            self.send(ExecutorInput::State { executor: self.id.clone(), worker, observation });
        }
    }

    /// `conversation.close`: stop managing the conversation (forget the binding, publish
    /// nothing more about it, never type into it); its page stays open as it is. No
    /// `command.result`; a close for a binding not held here is ignored.
    fn release(&mut self, worker: WorkerId, conversation: &str) {
        let held = self.holds(worker, conversation);
        let chat = conversation_host(conversation).unwrap_or(conversation);
        let mut l = self.state.ledger.borrow_mut();
        l.closed(worker, chat, held);
        if !held {
            return l.trace("browser", format!("{worker} close {chat}: not managed here, ignored"));
        }
        l.managed(worker, None);
        l.trace("browser", format!("{worker} close {chat}: binding released"));
        drop(l);
        let mut storage = self.state.storage.borrow_mut();
        storage.tabs.remove(&worker);
        storage.reported.remove(&worker);
        drop(storage);
        self.tabs.remove(&worker);
        self.opened.remove(&worker);
        self.unverified.remove(&worker);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat;
    use crate::ledger::Ledger;
    use crate::oracle::Closed;
    use crate::wire::{EXECUTOR_PORT, read_text, write_text};
    use crate::world::Knobs;

    const W: WorkerId = WorkerId(2);
    /// How long a test watches after its last command (longer than any turn).
    const BROWSE_AFTER_S: u64 = 900;

    /// A command for `W` delivering `attempt` (`conversation` as a host name; empty for a
    /// create).
    fn command(attempt: u64, kind: CommandKind, conversation: &str) -> ExecutorCommand {
        let attempt = AttemptId(attempt);
        let url = if conversation.is_empty() { String::new() } else { conversation_url(conversation) };
        ExecutorCommand {
            executor: ExecutorId::new("browser-1"),
            id: CommandId { attempt },
            idempotency_key: format!("{}:{attempt}", kind.as_str()),
            worker: W,
            attempt,
            kind,
            conversation: Arc::from(url),
            prompt: "go on".into(),
            prompt_version: "test/v1".into(),
            deadline: Timestamp(EPOCH_MS + 3_600_000),
            executor_kind: engine::ExecutorKind::Chatgpt,
            workspace: None,
            approval: None,
        }
    }

    /// Runs the browser against a stand-in daemon that says nothing but `script` (each
    /// command after its delay in seconds) and two conversations, `chat-0` (for creates)
    /// and `fresh-0` (kept for attaches). Returns the ledger and every message the
    /// browser sent the daemon.
    fn browse(script: Vec<(u64, ExecutorCommand)>) -> (Ledger, Vec<String>) {
        let mut agents = Knobs::calm(1).agents;
        // No agent calls (there is no caller port here): no progress, nowhere near the end.
        (agents.turns_min, agents.turns_max, agents.progress_pct) = (100, 100, 0);
        let ledger: SharedLedger = Rc::new(RefCell::new(Ledger::default()));
        let heard: Rc<RefCell<Vec<String>>> = Rc::default();
        let mut sim = turmoil::Builder::new()
            .rng_seed(1)
            .simulation_duration(Duration::from_secs(3_600))
            .tick_duration(Duration::from_millis(100))
            .build();
        for (seed, name) in ["chat-0", "fresh-0"].into_iter().enumerate() {
            let (l, a) = (ledger.clone(), agents.clone());
            sim.host(name, move || chat::run(name.into(), seed as u64, a.clone(), l.clone()));
        }
        let state = BrowserState {
            storage: Rc::default(),
            chats: vec!["chat-0".into()],
            attachable: vec!["fresh-0".into()],
            steering: true,
            concurrency: 8,
            submit_delay_ms: 0,
            ledger: ledger.clone(),
        };
        sim.host("browser", move || run(state.clone()));
        let daemon_heard = heard.clone();
        sim.client("daemon", async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", EXECUTOR_PORT)).await?;
            let (mut reader, mut writer) = listener.accept().await?.0.into_split();
            tokio::task::spawn_local(async move {
                while let Ok(Some(text)) = read_text(&mut reader).await {
                    daemon_heard.borrow_mut().push(text);
                }
            });
            for (after_s, c) in script {
                tokio::time::sleep(Duration::from_secs(after_s)).await;
                let text = executor_protocol::encode(&executor_protocol::DaemonMessage::Command(
                    executor_protocol::CommandWire::from(&c),
                ));
                write_text(&mut writer, &text).await?;
            }
            // Let the pages and the browser play out what the commands started.
            tokio::time::sleep(Duration::from_secs(BROWSE_AFTER_S)).await;
            Ok(())
        });
        while !sim.step().expect("the simulation runs") {
            ledger.borrow_mut().now_ms = sim.elapsed().as_millis() as u64;
        }
        let ledger = std::mem::take(&mut *ledger.borrow_mut());
        let heard = std::mem::take(&mut *heard.borrow_mut());
        (ledger, heard)
    }

    fn typed(ledger: &Ledger) -> Vec<(&str, &str)> {
        ledger.delivered.iter().map(|d| (d.conversation.as_str(), d.key.as_str())).collect()
    }

    #[test]
    fn a_send_is_typed_only_into_the_conversation_it_names() {
        let (ledger, heard) = browse(vec![
            (5, command(1, CommandKind::Create, "")),
            (60, command(2, CommandKind::Send, "fresh-0")),
            (5, command(3, CommandKind::Steer, "chat-0")),
        ]);
        // The send opened its conversation (never the tab the worker had), and was
        // reported as the worker's binding there; the steer named a conversation no
        // longer managed here: nothing typed, STEERING_UNAVAILABLE.
        let create = "conversation.create:exe-1";
        assert_eq!(typed(&ledger), vec![("chat-0", create), ("fresh-0", "conversation.send:exe-2")]);
        assert!(heard.iter().any(|m| m.contains(r#""type":"binding""#) && m.contains("/c/fresh-0")), "{heard:?}");
        let refused = heard.iter().find(|m| m.contains(r#""commandId":"cmd-3""#)).expect("a result for the steer");
        assert!(refused.contains("STEERING_UNAVAILABLE"), "{refused}");
    }

    #[test]
    fn a_closed_conversation_is_never_reported_nor_typed_into_again() {
        let (ledger, heard) = browse(vec![
            (5, command(1, CommandKind::Create, "")),
            (5, command(1, CommandKind::Close, "chat-0")),
            (1_200, command(2, CommandKind::Send, "fresh-0")),
        ]);
        let closed = &ledger.closes[..];
        assert!(matches!(closed, [Closed { conversation, released: true, .. }] if conversation == "chat-0"));
        // The bootstrap turn ran on in its page (left alone) and ended unreported.
        let after = closed[0].at_ms;
        assert!(ledger.trace.iter().any(|l| l.contains("chat-0   turn 1 ends idle")), "{:?}", ledger.trace);
        let late: Vec<_> = ledger.published.iter().filter(|p| p.conversation == "chat-0" && p.at_ms > after).collect();
        assert!(late.is_empty(), "{late:?}");
        assert!(!heard.iter().any(|m| m.contains(r#""commandId":"cmd-1""#) && m.contains("failed")), "{heard:?}");
        assert_eq!(
            typed(&ledger),
            vec![("chat-0", "conversation.create:exe-1"), ("fresh-0", "conversation.send:exe-2")]
        );
    }
}
