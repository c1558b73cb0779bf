//! A simulated ChatGPT conversation (one host per conversation) and the seeded worker
//! agent inside it, which calls the daemon over the simulated network. Its delivery-timeout
//! card offers the Retry control, and a click on it does what the real page's does. It
//! can show the page states that stop an unattended worker (`PageStop`: a usage limit
//! with its reset time, "Too many requests", suspicious activity, a human check, a
//! logged-out page, an unknown dialog) over the conversation, on a scenario's command or
//! at seeded random: the turn goes on underneath, and a stand-in person (or the limit's
//! reset time) takes it away after a while. Typing into such a page, or clicking its
//! dialog, is recorded as a violation.

use crate::daemon::EPOCH_MS;
use crate::ledger::SharedLedger;
use crate::oracle::RetryClick;
use crate::wire::{CHAT_PORT, DAEMON_PORT, FromChat, FromDaemon, SimOp, ToChat, ToDaemon, read_frame, write_frame};
use engine::ids::WorkerId;
use engine::model::{ConversationState, ErrorKind};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::watch;
use turmoil::net::{TcpListener, TcpStream};

/// How the agents of a run behave (drawn per seed).
#[derive(Clone, Debug)]
pub struct AgentKnobs {
    /// Turns an agent needs before it calls `worker_complete`.
    pub turns_min: u32,
    /// Upper bound of the same.
    pub turns_max: u32,
    /// Percent of turns that report durable progress.
    pub progress_pct: u64,
    /// Percent of turns longer than 20 minutes (past the keepalive).
    pub long_turn_pct: u64,
    /// Percent of turn ends shown as "Message delivery timed out".
    pub delivery_timeout_pct: u64,
    /// Percent of turns that end with a human wait.
    pub human_pct: u64,
    /// Every turn ends with the continuation-state block of the agent skill.
    pub blocks: bool,
    /// The agent says `status: complete` once without calling `worker_complete`.
    pub forget_complete: bool,
    /// Human waits are expressed only by `status: blocked`, never by the call.
    pub block_waits: bool,
    /// Percent of lane turns that wait for lane 0 to complete (a dependency).
    pub dependency_pct: u64,
    /// Percent of progress reports that also message `/root`.
    pub message_pct: u64,
    /// Percent of turn ends where the tab closes or the conversation fills up.
    pub lost_pct: u64,
    /// Percent of turn ends where the page's controls change for a few minutes.
    pub host_ui_pct: u64,
    /// Percent of lane turns where the agent gives up and calls `worker_fail`.
    pub fail_pct: u64,
    /// Percent of submissions the page answers with "Message delivery timed out" at
    /// once (the executor reports `MESSAGE_DELIVERY_TIMEOUT` as the command's result).
    pub submit_timeout_pct: u64,
    /// Percent of turn ends after which the page shows a random `PageStop`.
    pub page_stop_pct: u64,
    /// Page stops a scenario shows at given times.
    pub page_events: Vec<PageEvent>,
    /// Conversations a scenario kills at given times (tab closed, error card, full).
    pub deaths: Vec<Death>,
    /// `/root`'s agent recovers lanes without a live conversation at each of its turns.
    pub recover_lanes: bool,
    /// The orchestrator's app asks for approval: the agent's first call of each write
    /// tool in a conversation (and again after the page reloads) waits on the approval
    /// card until a simulated person answers it, after a seeded delay in this range (ms).
    pub approvals: Option<(u64, u64)>,
}

/// A page state that stops an unattended worker (docs/protocol/executor.md, the
/// `errorKind` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageStop {
    /// A usage cap notice, with or without its reset time.
    UsageLimit,
    /// ChatGPT's "Too many requests" dialog.
    RateLimited,
    /// "Suspicious activity detected".
    SuspiciousActivity,
    /// A Cloudflare check.
    Challenge,
    /// A logged-out page.
    Login,
    /// An unknown modal dialog.
    Dialog,
    /// A tool-approval card ("Allow ChatGPT to use Orchestrator?"); a person answers it.
    Approval,
    /// The latest turn says the conversation cannot use the app any more
    /// ("FORBIDDEN: This conversation does not support developer MCPs").
    AppUnavailable,
    /// The composer's app picker does not offer the app (nothing shows over the page):
    /// a submission fails `APP_NOT_SELECTED` before anything is typed.
    NoApp,
}

impl PageStop {
    /// Every stop, for seeded draws.
    pub const ALL: [PageStop; 6] = [
        PageStop::UsageLimit,
        PageStop::RateLimited,
        PageStop::SuspiciousActivity,
        PageStop::Challenge,
        PageStop::Login,
        PageStop::Dialog,
    ];

    /// The scenario language's name.
    pub fn parse(text: &str) -> Option<PageStop> {
        Some(match text {
            "usage-limit" => PageStop::UsageLimit,
            "rate-limited" => PageStop::RateLimited,
            "suspicious-activity" => PageStop::SuspiciousActivity,
            "challenge" => PageStop::Challenge,
            "login" => PageStop::Login,
            "dialog" => PageStop::Dialog,
            "approval" => PageStop::Approval,
            "app-unavailable" => PageStop::AppUnavailable,
            "no-app" => PageStop::NoApp,
            _ => return None,
        })
    }

    /// The state the executor reports for it.
    pub fn state(self) -> ConversationState {
        match self {
            PageStop::Approval => ConversationState::AwaitingApproval,
            stop => ConversationState::Error(stop.kind()),
        }
    }

    /// Its name in traces and violations.
    pub fn label(self) -> &'static str {
        match self {
            PageStop::Approval => "awaiting_approval",
            PageStop::NoApp => "no app in the picker",
            stop => stop.kind().as_str(),
        }
    }

    /// The error kind the executor reports for it (an approval card is a state of its
    /// own, and a missing app shows nothing over the page).
    fn kind(self) -> ErrorKind {
        match self {
            PageStop::Approval | PageStop::NoApp => ErrorKind::Generic,
            PageStop::AppUnavailable => ErrorKind::AppUnavailable,
            PageStop::UsageLimit => ErrorKind::UsageLimit,
            PageStop::RateLimited => ErrorKind::RateLimited,
            PageStop::SuspiciousActivity => ErrorKind::SuspiciousActivity,
            PageStop::Challenge => ErrorKind::Challenge,
            PageStop::Login => ErrorKind::LoginRequired,
            PageStop::Dialog => ErrorKind::BlockedByDialog,
        }
    }

    /// Whether the page names the time it lifts (only limits can).
    fn may_name_time(self) -> bool {
        matches!(self, PageStop::UsageLimit | PageStop::RateLimited)
    }

    /// What the page says.
    fn words(self) -> &'static str {
        match self {
            PageStop::UsageLimit => "You've hit your limit. Responses will use another model until your limit resets.",
            PageStop::RateLimited => "Too many requests",
            PageStop::SuspiciousActivity => "Suspicious activity detected",
            PageStop::Challenge => "Verify you are human",
            PageStop::Login => "Log in",
            PageStop::Dialog => "Temporary Chat",
            PageStop::Approval => APP_NAME,
            PageStop::AppUnavailable => "FORBIDDEN: This conversation does not support developer MCPs",
            PageStop::NoApp => "",
        }
    }
}

/// A page stop a scenario shows (`at TIME page laneN KIND DURATION [no-time]`).
#[derive(Clone, Debug)]
pub struct PageEvent {
    /// Simulated ms after the start.
    pub at_ms: u64,
    /// Whose conversation shows it.
    pub worker: WorkerId,
    /// What.
    pub stop: PageStop,
    /// How long until the page is clear again (a limit's reset, a person's fix).
    pub length_ms: u64,
    /// A limit names its reset time (`untilMs`).
    pub names_time: bool,
}

/// A conversation that dies for good at a given time: its tab closes, an error card stays,
/// or it fills up. The turn running in it never ends.
#[derive(Clone, Debug)]
pub struct Death {
    /// Simulated ms after the start.
    pub at_ms: u64,
    /// Whose conversation; `None`: every worker's.
    pub worker: Option<WorkerId>,
    /// What the page shows from then on.
    pub state: ConversationState,
}

/// The orchestrator's app as ChatGPT names it.
pub const APP_NAME: &str = "Orchestrator";

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
            ConversationState::AwaitingApproval => true,
            _ => false,
        };
        if stopped {
            // Nothing can be typed into a page that shows a limit, a check, a dialog, an
            // approval card or a lost app. The executor saw it (unless the page changed
            // this very moment): its fault.
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

/// Starts a turn: generate for a while, make the agent's calls, then end the turn.
fn start_turn(c: Rc<RefCell<Conversation>>, worker: WorkerId, name: String, knobs: AgentKnobs, ledger: SharedLedger) {
    let (turn, length_ms, report, finish, human, timeout) = {
        let mut cv = c.borrow_mut();
        cv.turn += 1;
        cv.show(ConversationState::Generating, None);
        let roll = cv.rng.next_u64() % 100;
        let length_ms = if roll < knobs.long_turn_pct {
            20 * 60_000 + cv.rng.next_u64() % (25 * 60_000)
        } else {
            30_000 + cv.rng.next_u64() % (10 * 60_000)
        };
        let report = cv.rng.next_u64() % 100 < knobs.progress_pct;
        let finish = !cv.finished && cv.turns_done + 1 >= cv.turns_needed;
        let human = !finish && cv.rng.next_u64() % 100 < knobs.human_pct;
        // The forgetful agent claims completion in its block once, without the call.
        let forget = finish && knobs.forget_complete && !cv.forgot_complete;
        if forget {
            cv.forgot_complete = true;
        }
        let finish = finish && !forget;
        let timeout = cv.rng.next_u64() % 100 < knobs.delivery_timeout_pct;
        (cv.turn, length_ms, report, finish, human, timeout)
    };
    let forgot = c.borrow().forgot_complete && !finish && c.borrow().turns_done + 1 >= c.borrow().turns_needed;
    let is_root = worker == WorkerId(1);
    let (depend, message, fault, fail, stop) = {
        let mut cv = c.borrow_mut();
        let depend = !is_root && worker != WorkerId(2) && !finish && cv.rng.next_u64() % 100 < knobs.dependency_pct;
        let message = cv.rng.next_u64() % 100 < knobs.message_pct;
        let roll = cv.rng.next_u64() % 100;
        let fault = if roll < knobs.lost_pct {
            Some(if roll.is_multiple_of(2) {
                ConversationState::Closed
            } else {
                ConversationState::Error(ErrorKind::ConversationFull)
            })
        } else if roll < knobs.lost_pct + knobs.host_ui_pct {
            Some(ConversationState::Error(ErrorKind::HostUiChanged))
        } else {
            None
        };
        // Rarely, a lane's agent gives up: `worker_fail` instead of more work.
        let fail =
            knobs.fail_pct > 0 && !is_root && !finish && !cv.finished && cv.rng.next_u64() % 100 < knobs.fail_pct;
        // Rarely, the page shows a stop after the turn (drawn only when enabled, so that
        // other seeds' draws stay what they were).
        let stop = if knobs.page_stop_pct > 0 && cv.rng.next_u64() % 100 < knobs.page_stop_pct {
            let stop = PageStop::ALL[(cv.rng.next_u64() % PageStop::ALL.len() as u64) as usize];
            let length_ms = if stop == PageStop::UsageLimit {
                10 * 60_000 + cv.rng.next_u64() % (30 * 60_000)
            } else {
                2 * 60_000 + cv.rng.next_u64() % (10 * 60_000)
            };
            Some((stop, length_ms, cv.rng.next_u64().is_multiple_of(2)))
        } else {
            None
        };
        (depend, message, fault, fail, stop)
    };
    tokio::task::spawn_local(async move {
        let half = Duration::from_millis(length_ms / 2);
        if is_root && knobs.recover_lanes {
            let _ = agent_call(&name, SimOp::RecoverLanes, &ledger).await;
        }
        tokio::time::sleep(half).await;
        if report {
            let summary = format!("{worker}-turn{turn}-progress");
            approval(&c, "worker_progress", &knobs, &name, &ledger).await;
            if agent_call(&name, SimOp::Progress { worker, summary: summary.clone() }, &ledger).await.is_ok() {
                ledger.borrow_mut().acked.push((worker, summary));
            }
            if message && !is_root {
                let body = format!("{worker} turn {turn}: checkpoint");
                approval(&c, "message_send", &knobs, &name, &ledger).await;
                let _ = agent_call(&name, SimOp::MessageRoot { worker, body }, &ledger).await;
            }
        }
        if depend {
            let _ = agent_call(&name, SimOp::AwaitWorker { worker, on: WorkerId(2) }, &ledger).await;
        }
        if human && !knobs.block_waits {
            let question = format!("{worker}-turn{turn}-question");
            let _ = agent_call(&name, SimOp::AwaitHuman { worker, question }, &ledger).await;
        }
        tokio::time::sleep(half).await;
        // The coordinator tries to close the run every turn; it is refused while lanes
        // are unfinished, and keeps coordinating.
        let finish = finish || is_root;
        if fail {
            let reason = format!("{worker}-gave-up");
            match agent_call(&name, SimOp::Fail { worker, reason }, &ledger).await {
                Err(code) if code != "WORKER_TERMINAL" => {}
                _ => {
                    let mut l = ledger.borrow_mut();
                    l.finished_agents.insert(worker);
                    l.failed_agents.insert(worker);
                }
            }
        } else if finish {
            let summary = format!("{worker}-done");
            approval(&c, "worker_complete", &knobs, &name, &ledger).await;
            match agent_call(&name, SimOp::Complete { worker, summary: summary.clone() }, &ledger).await {
                Ok(()) => {
                    ledger.borrow_mut().acked.push((worker, summary));
                    ledger.borrow_mut().finished_agents.insert(worker);
                }
                Err(code) if code == "WORKER_TERMINAL" => {
                    ledger.borrow_mut().finished_agents.insert(worker);
                }
                Err(_) => {}
            }
        }
        let mut cv = c.borrow_mut();
        if cv.turn != turn {
            return; // a newer turn took over
        }
        cv.turns_done += 1;
        if (finish || fail) && ledger.borrow().finished_agents.contains(&worker) {
            cv.finished = true;
        }
        let done = ledger.borrow().finished_agents.contains(&worker);
        let end = match fault {
            Some(state) if !done => state,
            _ if timeout => ConversationState::Error(ErrorKind::DeliveryTimeout),
            _ => ConversationState::Idle,
        };
        if end == ConversationState::Error(ErrorKind::DeliveryTimeout) {
            ledger.borrow_mut().retry_offers += 1; // the card comes with its Retry control
        }
        if end == ConversationState::Error(ErrorKind::HostUiChanged) {
            // The page's controls come back after a few minutes.
            let c2 = c.clone();
            tokio::task::spawn_local(async move {
                tokio::time::sleep(Duration::from_secs(180)).await;
                let mut cv = c2.borrow_mut();
                if cv.turn == turn && cv.under() == ConversationState::Error(ErrorKind::HostUiChanged) {
                    cv.show(ConversationState::Idle, None);
                }
            });
        }
        let failed = ledger.borrow().failed_agents.contains(&worker);
        let status = if failed {
            "blocked" // the agent could not finish: it says so
        } else if done || forgot {
            "complete"
        } else if human {
            "blocked"
        } else {
            "working"
        };
        let block = (knobs.blocks && end == ConversationState::Idle).then(|| {
            format!("Turn {turn} done.\n\nstatus: {status}\nsummary: turn {turn} of {worker}\ncurrent: lane work\nnext: keep going")
        });
        if knobs.blocks && status != "working" {
            ledger.borrow_mut().trace(&name, format!("turn {turn} block {status}"));
        }
        cv.show(end, block);
        drop(cv);
        ledger.borrow_mut().trace(&name, format!("turn {turn} ends {}", end.as_str()));
        if let Some((stop, length_ms, names_time)) = stop.filter(|_| end == ConversationState::Idle && !done) {
            cover(&c, stop, length_ms, names_time, &name, &ledger);
        }
    });
}

/// Before the agent's first call of a write tool in this page load: ChatGPT shows the
/// approval card, the turn waits, and a simulated person answers it after a seeded delay
/// (the executor never clicks it). Nothing when the app asks for no approvals, or when
/// another stop already covers the page (the call waits on that instead).
async fn approval(
    c: &Rc<RefCell<Conversation>>,
    tool: &'static str,
    knobs: &AgentKnobs,
    name: &str,
    ledger: &SharedLedger,
) {
    let Some((min_ms, max_ms)) = knobs.approvals else { return };
    let wait_ms = {
        let mut cv = c.borrow_mut();
        if cv.approved.contains(tool) || cv.overlay.is_some() {
            return;
        }
        min_ms + cv.rng.next_u64() % (max_ms.saturating_sub(min_ms) + 1)
    };
    ledger.borrow_mut().approvals += 1;
    cover(c, PageStop::Approval, wait_ms, false, name, ledger);
    tokio::time::sleep(Duration::from_millis(wait_ms + 1)).await;
    c.borrow_mut().approved.insert(tool);
    ledger.borrow_mut().trace(name, format!("a person approved {tool}"));
}

/// One agent call with retries: the daemon may be down or restarting.
pub(crate) async fn agent_call(name: &str, op: SimOp, ledger: &SharedLedger) -> Result<(), String> {
    for attempt in 0..20u64 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(5 * attempt.min(6))).await;
        }
        let Ok(mut stream) = TcpStream::connect(("daemon", DAEMON_PORT)).await else { continue };
        if write_frame(&mut stream, &ToDaemon::Call { call: attempt, op: op.clone() }).await.is_err() {
            continue;
        }
        match read_frame::<_, FromDaemon>(&mut stream).await {
            Ok(Some(FromDaemon::Reply { result: Ok(answer), .. })) => {
                if let (SimOp::RecoverLanes, Some(recovered)) = (&op, answer) {
                    ledger.borrow_mut().root_recoveries += recovered.0 as usize;
                }
                return Ok(());
            }
            Ok(Some(FromDaemon::Reply { result: Err(code), .. })) if code != "UNAVAILABLE" => return Err(code),
            _ => continue,
        }
    }
    ledger.borrow_mut().trace(name, format!("agent gave up on {op:?}"));
    Err("GAVE_UP".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Ledger;
    use crate::oracle;
    use crate::world::Knobs;

    /// What the test's tab saw, in order.
    type Seen = Rc<RefCell<Vec<FromChat>>>;

    /// Reads frames into `seen` until one matches `until`.
    async fn read_until(
        reader: &mut turmoil::net::tcp::OwnedReadHalf,
        seen: &Seen,
        until: impl Fn(&FromChat) -> bool,
    ) -> turmoil::Result {
        loop {
            let frame = read_frame::<_, FromChat>(reader).await?.ok_or("the conversation hung up")?;
            let stop = until(&frame);
            seen.borrow_mut().push(frame);
            if stop {
                return Ok(());
            }
        }
    }

    /// Runs one conversation host whose every submission times out, and a tab that submits
    /// one message and sends `frames` either before it (`early`) or once the page answered
    /// it with the delivery-timeout card. Returns the ledger and what the tab saw.
    fn conversation(frames: Vec<ToChat>, early: bool) -> (Ledger, Vec<FromChat>) {
        let mut agents = Knobs::calm(1).agents;
        // No agent calls (there is no daemon here): no progress, nowhere near the end.
        (agents.turns_min, agents.turns_max, agents.progress_pct) = (100, 100, 0);
        agents.submit_timeout_pct = 100;
        let ledger: SharedLedger = Rc::new(RefCell::new(Ledger::default()));
        let seen: Seen = Rc::new(RefCell::new(Vec::new()));
        let mut sim = turmoil::Builder::new()
            .rng_seed(1)
            .simulation_duration(Duration::from_secs(120))
            .tick_duration(Duration::from_millis(100))
            .build();
        let (l, a) = (ledger.clone(), agents.clone());
        sim.host("chat-0", move || run("chat-0".into(), 7, a.clone(), l.clone()));
        let tab_seen = seen.clone();
        sim.client("tab", async move {
            let (mut reader, mut writer) = TcpStream::connect(("chat-0", CHAT_PORT)).await?.into_split();
            read_until(&mut reader, &tab_seen, |f| matches!(f, FromChat::State { .. })).await?;
            if early {
                for frame in &frames {
                    write_frame(&mut writer, frame).await?;
                }
            }
            let key = "wrk-2-exe-1".to_string();
            let submit = ToChat::Submit { worker: WorkerId(2), key, prompt: "start".into(), steer: false };
            write_frame(&mut writer, &submit).await?;
            read_until(&mut reader, &tab_seen, |f| matches!(f, FromChat::TimedOut { .. })).await?;
            if !early {
                for frame in &frames {
                    write_frame(&mut writer, frame).await?;
                }
            }
            // Let the page react, and keep reading what it shows meanwhile.
            let settle = tokio::time::sleep(Duration::from_secs(10));
            tokio::pin!(settle);
            loop {
                tokio::select! {
                    _ = &mut settle => return Ok(()),
                    frame = read_frame::<_, FromChat>(&mut reader) => {
                        tab_seen.borrow_mut().push(frame?.ok_or("the conversation hung up")?)
                    }
                }
            }
        });
        while !sim.step().expect("the simulation runs") {
            ledger.borrow_mut().now_ms = sim.elapsed().as_millis() as u64;
        }
        let ledger = std::mem::take(&mut *ledger.borrow_mut());
        let seen = std::mem::take(&mut *seen.borrow_mut());
        (ledger, seen)
    }

    fn shown(seen: &[FromChat], state: ConversationState) -> bool {
        seen.iter().any(|f| matches!(f, FromChat::State { state: s, .. } if *s == state))
    }

    #[test]
    fn clicking_retry_on_the_card_resends_the_last_message_and_breaks() {
        let (ledger, seen) = conversation(vec![ToChat::ClickRetry], false);
        assert!(shown(&seen, ConversationState::Error(ErrorKind::DeliveryTimeout)), "no card: {seen:?}");
        assert_eq!(ledger.retry_offers, 1);
        // The page took the click: the last message went in again and a turn started.
        assert!(shown(&seen, ConversationState::Generating), "Retry started no turn: {seen:?}");
        assert_eq!(ledger.deliveries.get("wrk-2-exe-1"), Some(&2));
        assert!(
            ledger.violations.iter().any(|v| v.ends_with("prompt wrk-2-exe-1 delivered 2 times")),
            "the duplicate was not caught: {:?}",
            ledger.violations
        );
        let broken = oracle::no_retry_clicks(&ledger.retry_clicks);
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(
            broken[0].starts_with("Retry clicked: chat-0 (wrk-2) at ")
                && broken[0].ends_with("re-sent wrk-2-exe-1, a turn the daemon never commanded"),
            "{broken:?}"
        );
    }

    #[test]
    fn retry_without_the_card_sends_nothing_but_still_breaks() {
        let (ledger, seen) = conversation(vec![ToChat::ClickRetry], true);
        assert_eq!(ledger.deliveries.get("wrk-2-exe-1"), Some(&1), "{seen:?}");
        assert!(ledger.violations.is_empty(), "{:?}", ledger.violations);
        assert!(!shown(&seen, ConversationState::Generating), "{seen:?}");
        let broken = oracle::no_retry_clicks(&ledger.retry_clicks);
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].ends_with("with no delivery-timeout card showing"), "{broken:?}");
    }

    #[test]
    fn any_click_on_a_dialog_breaks() {
        let (ledger, _) = conversation(vec![ToChat::ClickDialog], false);
        let clicked: Vec<_> =
            ledger.violations.iter().filter(|v| v.contains("the executor clicked a dialog")).collect();
        assert_eq!(clicked.len(), 1, "{:?}", ledger.violations);
    }

    #[test]
    fn a_card_left_alone_has_no_click() {
        let (ledger, seen) = conversation(Vec::new(), false);
        assert!(shown(&seen, ConversationState::Error(ErrorKind::DeliveryTimeout)), "no card: {seen:?}");
        assert_eq!(ledger.retry_offers, 1);
        assert!(ledger.retry_clicks.is_empty() && ledger.violations.is_empty(), "{:?}", ledger.violations);
        assert!(!shown(&seen, ConversationState::Generating), "{seen:?}");
    }
}
