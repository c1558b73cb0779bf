//! What a page can show over a conversation, and what a scenario makes it show: the page
//! stops (limits, checks, dialogs, approval cards, a lost app), scripted page events and
//! conversations that die for good.

use engine::ids::WorkerId;
use engine::model::{ConversationState, ErrorKind};

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
    /// Something in the latest turn or over the composer the adapter cannot name (a card,
    /// a form, a control it has never seen, issue 27): the page is `unrecognized`, typed
    /// into never, until it shows a state the adapter knows again.
    Unrecognized,
}

impl PageStop {
    /// Every stop, for seeded draws.
    pub const ALL: [PageStop; 7] = [
        PageStop::UsageLimit,
        PageStop::RateLimited,
        PageStop::SuspiciousActivity,
        PageStop::Challenge,
        PageStop::Login,
        PageStop::Dialog,
        PageStop::Unrecognized,
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
            "unrecognized" => PageStop::Unrecognized,
            _ => return None,
        })
    }

    /// The state the executor reports for it.
    pub fn state(self) -> ConversationState {
        match self {
            PageStop::Approval => ConversationState::AwaitingApproval,
            PageStop::Unrecognized => ConversationState::Unrecognized,
            stop => ConversationState::Error(stop.kind()),
        }
    }

    /// Its name in traces and violations.
    pub fn label(self) -> &'static str {
        match self {
            PageStop::Approval => "awaiting_approval",
            PageStop::NoApp => "no app in the picker",
            PageStop::Unrecognized => "an unrecognized page",
            stop => stop.kind().as_str(),
        }
    }

    /// The error kind the executor reports for it (an approval card and an unrecognized
    /// page are states of their own, and a missing app shows nothing over the page).
    pub(super) fn kind(self) -> ErrorKind {
        match self {
            PageStop::Approval | PageStop::NoApp | PageStop::Unrecognized => ErrorKind::Generic,
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
    pub(super) fn may_name_time(self) -> bool {
        matches!(self, PageStop::UsageLimit | PageStop::RateLimited)
    }

    /// What the page says.
    pub(super) fn words(self) -> &'static str {
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
            // The page-shape report's one line: what was not recognized, and where.
            PageStop::Unrecognized => "latest turn: a form the adapter cannot name (3 buttons)",
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
