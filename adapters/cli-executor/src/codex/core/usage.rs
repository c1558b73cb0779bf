//! Why a Codex turn failed, as the engine's error kinds: structured fields first
//! (`codexErrorInfo`, then the reset times of `account/rateLimits/updated`), the message
//! text only when no structured field says anything.
//!
//! Real 0.169.0 data (`tests/fixtures/codex-0.169.0/usage-limit.jsonl`): a 429
//! `usage_limit_reached` gives `turn/completed` with status `failed`, `error.codexErrorInfo`
//! `usageLimitExceeded` and the text "... try again at 12:00 PM." (no date), just after an
//! `account/rateLimits/updated` whose exhausted window carries `resetsAt` in Unix seconds.

use crate::base::report::cut_detail;
use engine::model::ErrorKind;
use engine::time::Timestamp;
use serde_json::Value;

/// A window at or past this share of its limit is the one that stopped the turn.
const USED_PERCENT_EXHAUSTED: f64 = 100.0;

/// Milliseconds in the seconds `resetsAt` is given in.
const MS_PER_SECOND: u64 = 1_000;

/// A failed turn, read for the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnFailure {
    /// The engine's error kind.
    pub kind: ErrorKind,
    /// When a usage or rate limit lifts, if a structured field says so and it is after `now`.
    pub until: Option<Timestamp>,
    /// The CLI's message, cut to [`crate::base::limits::DETAIL_CHARS_MAX`] characters (untrusted text).
    pub detail: Option<String>,
}

/// Reads a turn's `error` object (`{message, codexErrorInfo, ...}`), with the latest
/// `rateLimits` snapshot the app-server sent, at `now`.
pub fn classify(error: &Value, rate_limits: Option<&Value>, now: Timestamp) -> TurnFailure {
    let message = error.get("message").and_then(Value::as_str);
    let kind = match error_info(error) {
        Some("usageLimitExceeded") => ErrorKind::UsageLimit,
        Some("rateLimitExceeded") => ErrorKind::RateLimited,
        Some("contextWindowExceeded") => ErrorKind::ConversationFull,
        Some("unauthorized") => ErrorKind::LoginRequired,
        Some(_) => ErrorKind::Generic,
        None => from_text(message.unwrap_or_default()),
    };
    let until = match kind {
        ErrorKind::UsageLimit | ErrorKind::RateLimited => rate_limits.and_then(|limits| reset_after(limits, now)),
        _ => None,
    };
    TurnFailure { kind, until, detail: message.map(cut_detail) }
}

/// `codexErrorInfo` is a string (`"usageLimitExceeded"`) or an object with one key
/// (`{"httpConnectionFailed": {...}}`): its name either way.
fn error_info(error: &Value) -> Option<&str> {
    match error.get("codexErrorInfo")? {
        Value::String(name) => Some(name),
        Value::Object(object) => object.keys().next().map(String::as_str),
        _ => None,
    }
}

/// The text fallback. The limit sentence names a time without a date or zone ("try again
/// at 12:00 PM"), so no reset time is read from it: the engine pauses instead.
fn from_text(message: &str) -> ErrorKind {
    let lower = message.to_lowercase();
    if lower.contains("hit your usage limit") || lower.contains("usage limit has been reached") {
        ErrorKind::UsageLimit
    } else {
        ErrorKind::Generic
    }
}

/// The latest reset among exhausted windows (`primary`, `secondary`), if it is after `now`:
/// a reset already past says nothing about when the limit lifts.
fn reset_after(limits: &Value, now: Timestamp) -> Option<Timestamp> {
    let resets = ["primary", "secondary"].into_iter().filter_map(|name| {
        let window = limits.get(name)?;
        let used = window.get("usedPercent")?.as_f64()?;
        let resets_at_s = window.get("resetsAt")?.as_u64()?;
        (used >= USED_PERCENT_EXHAUSTED).then(|| Timestamp(resets_at_s.saturating_mul(MS_PER_SECOND)))
    });
    resets.max().filter(|until| *until > now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::limits::DETAIL_CHARS_MAX;
    use serde_json::json;

    const NOW: Timestamp = Timestamp(1_796_147_802_879);

    fn limits(used: f64, resets_at_s: u64) -> Value {
        json!({"primary": {"usedPercent": used, "windowDurationMins": 300, "resetsAt": resets_at_s},
               "secondary": {"usedPercent": 40, "windowDurationMins": 10080, "resetsAt": resets_at_s + 86_400}})
    }

    #[test]
    fn structured_usage_limit_takes_the_exhausted_window_reset() {
        let error = json!({"message": "You’ve hit your usage limit. ... try again at 12:00 PM.", "codexErrorInfo": "usageLimitExceeded"});
        let failure = classify(&error, Some(&limits(100.0, 1_796_212_800)), NOW);
        assert_eq!(failure.kind, ErrorKind::UsageLimit);
        assert_eq!(failure.until, Some(Timestamp(1_796_212_800_000)));
        assert!(failure.detail.expect("message").starts_with("You’ve hit"));
    }

    #[test]
    fn a_reset_in_the_past_or_no_exhausted_window_is_no_reset() {
        let error = json!({"message": "x", "codexErrorInfo": "usageLimitExceeded"});
        assert_eq!(classify(&error, Some(&limits(100.0, 1_796_126_400)), NOW).until, None);
        assert_eq!(classify(&error, Some(&limits(99.0, 1_796_212_800)), NOW).until, None);
        assert_eq!(classify(&error, None, NOW).until, None);
    }

    #[test]
    fn other_infos_and_the_text_fallback() {
        let info = |v: Value| classify(&json!({"message": "m", "codexErrorInfo": v}), None, NOW).kind;
        assert_eq!(info(json!("rateLimitExceeded")), ErrorKind::RateLimited);
        assert_eq!(info(json!("contextWindowExceeded")), ErrorKind::ConversationFull);
        assert_eq!(info(json!("unauthorized")), ErrorKind::LoginRequired);
        assert_eq!(info(json!({"httpConnectionFailed": {"httpStatusCode": 502}})), ErrorKind::Generic);
        let text = |m: &str| classify(&json!({"message": m}), Some(&limits(100.0, 1_796_212_800)), NOW);
        let limit = text("You've hit your usage limit. Try again at 3:04 PM.");
        assert_eq!((limit.kind, limit.until), (ErrorKind::UsageLimit, Some(Timestamp(1_796_212_800_000))));
        assert_eq!(text("stream disconnected").kind, ErrorKind::Generic);
    }

    #[test]
    fn detail_is_cut_to_its_limit() {
        let long = "é".repeat(DETAIL_CHARS_MAX + 5);
        assert_eq!(cut_detail(&long).chars().count(), DETAIL_CHARS_MAX);
    }
}
