//! The managed tabs: opening one for a worker's conversation, which tab a binding owns,
//! binding a worker to a conversation (never typing into another), coalescing what a
//! page shows into state reports, `conversation.inspect` and `conversation.close`.

use super::{Browser, Event, Tab, TabRef};
use crate::wire::{CHAT_PORT, FromChat, ToChat, conversation_host, conversation_url, read_frame, write_frame};
use engine::ids::{AttemptId, WorkerId};
use engine::input::*;
use engine::model::{ConversationState, ErrorKind};
use engine::time::Timestamp;
use engine::{CommandKind, ExecutorCommand};
use std::sync::Arc;
use tokio::sync::mpsc;
use turmoil::net::TcpStream;

impl Browser {
    /// Opens a tab on the conversation host for the worker's binding; the worker's
    /// previous tab (if any) stops being managed.
    pub(super) fn open_tab(&mut self, worker: WorkerId, chat: String) {
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
    pub(super) fn managed(&self, tab: TabRef) -> bool {
        self.opened.get(&tab.worker) == Some(&tab.serial)
    }

    /// Whether the worker's binding here is `conversation`.
    pub(super) fn holds(&self, worker: WorkerId, conversation: &str) -> bool {
        self.state.storage.borrow().tabs.get(&worker).is_some_and(|t| &*t.url == conversation)
    }

    /// The conversation host a URL names, if this browser can open it.
    pub(super) fn reachable(&self, url: &str) -> Option<String> {
        let host = conversation_host(url)?;
        self.state.chats.iter().chain(&self.state.attachable).find(|c| *c == host).cloned()
    }

    /// Manages `chat` for the worker from now on, in a fresh tab (stored first); the tab
    /// of its previous binding, if any, stays open as it is, unmanaged.
    pub(super) fn bind(&mut self, worker: WorkerId, chat: String) {
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
    pub(super) fn not_held(&mut self, attempt: AttemptId, c: &ExecutorCommand) {
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

    pub(super) fn tab_closed(&self, worker: WorkerId) -> bool {
        self.tabs.get(&worker).is_some_and(|(_, s)| *s == Some(ConversationState::Closed))
    }

    /// A tab's state: coalesce and report real transitions only.
    pub(super) fn observed(
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
    pub(super) fn inspect(&mut self, worker: WorkerId, conversation: &str) {
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
    pub(super) fn release(&mut self, worker: WorkerId, conversation: &str) {
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
    pub(super) fn delivery_timeout_card(&self, worker: WorkerId) {
        let what = format!("{worker} delivery-timeout card: reported, Retry not clicked, waiting for the daemon");
        self.state.ledger.borrow_mut().trace("browser", what);
    }
}
