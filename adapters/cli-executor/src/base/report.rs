//! What both cores report and the words they share: a conversation's coarse state
//! ([`Report`]), the failure codes of a prompt whose submission a crash left open
//! ([`AMBIGUOUS`], [`ABSENT`]), and untrusted CLI text cut for people ([`cut_detail`]).
//! The Codex core made them first; the Claude core speaks the same, so they live here,
//! below both rooms.

use crate::base::limits::DETAIL_CHARS_MAX;
use engine::model::{CliRetry, ConversationState};
use engine::time::Timestamp;

/// The protocol's failure code for "submission began and its result is unknown".
pub const AMBIGUOUS: &str = "AMBIGUOUS_SUBMISSION";

/// The definite failure reported for a prompt proven absent: the daemon may send again
/// (after its usual 30 s, with a new attempt). `DEADLINE_EXCEEDED` is the protocol's
/// "definitely not submitted" code that the engine retries; the detail says why.
pub const ABSENT: &str = "DEADLINE_EXCEEDED";

/// A coarse state with what goes with it (`seq` is assigned by the publishing layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The state.
    pub state: ConversationState,
    /// With `idle`: the tail of the last agent message (untrusted).
    pub block: Option<String>,
    /// With a usage or rate limit: when it lifts.
    pub until: Option<Timestamp>,
    /// CLI text for people (untrusted).
    pub detail: Option<String>,
    /// With `generating`: the CLI retries its model connection inside the running turn.
    pub retry: Option<CliRetry>,
}

impl Report {
    pub(crate) fn bare(state: ConversationState) -> Report {
        Report { state, block: None, until: None, detail: None, retry: None }
    }
}

/// Untrusted CLI text for people, cut to [`DETAIL_CHARS_MAX`] characters.
pub fn cut_detail(text: &str) -> String {
    text.chars().take(DETAIL_CHARS_MAX).collect()
}
