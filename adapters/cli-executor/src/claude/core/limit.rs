//! Why a Claude turn ended in error, as the engine's error kinds, with the reset time of a
//! usage limit: structured fields first, the text second, otherwise no time (a pause).
//!
//! Recorded (2.1.332, API-key auth, `usage-limit.jsonl`): a 429 `rate_limit_error` gives
//! an assistant message with `error:"rate_limit"`, `api_error_status:429`, and a `result`
//! with `subtype:"success"`, **`is_error:true`**, `terminal_reason:"api_error"`,
//! `api_error_status:429` and the text "API Error: Request rejected (429) · <the API's
//! message>". No `rate_limit_event` came, although the mock sent the subscription headers
//! (`anthropic-ratelimit-unified-status: rejected`, `...-reset`): that event belongs to
//! subscription (OAuth) auth. Its `rate_limit_info.resetsAt` (Unix seconds, third-party
//! SDK types) is read when it comes; otherwise the subscription notices' text:
//! "You've hit your limit · resets 1pm (Europe/Lisbon)", "You've hit your session limit ·
//! resets 12:50am (America/Los_Angeles)", "Claude AI usage limit reached|<epoch>".
//! "…will reset at 9am" has no zone: no time. A time needs its zone resolved by [`Zones`].

use super::tz::Zones;
use crate::base::report::cut_detail;
use engine::model::ErrorKind;
use engine::time::Timestamp;
use serde_json::Value;

const DAY_S: i64 = 86_400;
const MS_PER_SECOND: i64 = 1_000;

/// A failed turn, read for the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The engine's error kind.
    pub kind: ErrorKind,
    /// When a usage limit lifts, if a field or the text says so and it is after `now`.
    pub until: Option<Timestamp>,
    /// The CLI's text, cut for people (untrusted).
    pub detail: Option<String>,
}

/// A reset time as a limit notice writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetText {
    /// `...|1796212800`: Unix seconds.
    Epoch(i64),
    /// `resets 1pm (Europe/Lisbon)`: a wall-clock time, its zone if named.
    Clock {
        /// 0..=23.
        hour: u8,
        /// 0..=59.
        minute: u8,
        /// The IANA zone in parentheses, if any.
        zone: Option<String>,
    },
}

/// Reads a `result` line with `is_error:true`, the turn's last assistant `error` field, and
/// the last `rate_limit_event.rate_limit_info` seen, at `now`.
pub fn classify(
    result: &Value,
    assistant_error: Option<&str>,
    rate_limit: Option<&Value>,
    now: Timestamp,
    zones: &dyn Zones,
) -> Failure {
    let text = result.get("result").and_then(Value::as_str).unwrap_or_default();
    let status = result.get("api_error_status").and_then(Value::as_u64);
    let lower = text.to_lowercase();
    let limit_text = ["hit your limit", "hit your session limit", "usage limit", "rate limit", "limit reached"]
        .iter()
        .any(|p| lower.contains(p));
    let kind = if status == Some(429) || assistant_error == Some("rate_limit") || limit_text {
        ErrorKind::UsageLimit
    } else if matches!(status, Some(401 | 403)) || assistant_error == Some("authentication_failed") {
        ErrorKind::LoginRequired
    } else if lower.contains("prompt is too long") || lower.contains("context window") {
        ErrorKind::ConversationFull
    } else {
        ErrorKind::Generic
    };
    let until = match kind {
        ErrorKind::UsageLimit => structured_reset(rate_limit)
            .or_else(|| reset_text(text).and_then(|reset| resolve(&reset, now, zones)))
            .filter(|until| *until > now),
        _ => None,
    };
    let detail = (!text.is_empty()).then(|| cut_detail(text));
    Failure { kind, until, detail }
}

/// `rate_limit_info.resetsAt` (Unix seconds) of a rejected limit.
fn structured_reset(info: Option<&Value>) -> Option<Timestamp> {
    let info = info?;
    let status = info.get("status").and_then(Value::as_str);
    if status.is_some_and(|s| s.starts_with("allowed")) {
        return None;
    }
    let seconds = info.get("resetsAt").and_then(Value::as_i64)?;
    u64::try_from(seconds.checked_mul(MS_PER_SECOND)?).ok().map(Timestamp)
}

/// Finds the reset in a limit notice's text.
pub fn reset_text(text: &str) -> Option<ResetText> {
    if let Some((head, tail)) = text.rsplit_once('|')
        && head.to_lowercase().contains("limit")
        && let Ok(seconds) = tail.trim().parse::<i64>()
    {
        return Some(ResetText::Epoch(seconds));
    }
    let lower = text.to_lowercase();
    let at = lower.find("resets ").map(|i| i + "resets ".len())?;
    let rest = &text[at..];
    let (hour, minute, used) = clock(rest)?;
    let after = rest[used..].trim_start();
    let zone = after
        .strip_prefix('(')
        .and_then(|z| z.split_once(')'))
        .map(|(zone, _)| zone.trim().to_string())
        .filter(|z| !z.is_empty());
    Some(ResetText::Clock { hour, minute, zone })
}

/// `1pm`, `12:50am`, `9 AM`: the hour (0..=23), the minute, and the bytes read.
fn clock(text: &str) -> Option<(u8, u8, usize)> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let h_len = digits(text);
    if h_len == 0 || h_len > 2 {
        return None;
    }
    let hour: u8 = text[..h_len].parse().ok()?;
    let mut used = h_len;
    let mut minute = 0u8;
    if text[used..].starts_with(':') {
        let m_len = digits(&text[used + 1..]);
        if m_len != 2 {
            return None;
        }
        minute = text[used + 1..used + 3].parse().ok()?;
        used += 3;
    }
    let spaced = text[used..].trim_start();
    let skipped = text.len() - used - spaced.len();
    let meridiem = spaced.get(..2).map(str::to_ascii_lowercase);
    let hour = match meridiem.as_deref() {
        Some("am") if (1..=12).contains(&hour) => {
            used += skipped + 2;
            hour % 12
        }
        Some("pm") if (1..=12).contains(&hour) => {
            used += skipped + 2;
            hour % 12 + 12
        }
        _ if text[..used].contains(':') && hour < 24 => hour,
        _ => return None,
    };
    (minute < 60).then_some((hour, minute, used))
}

/// The first instant after `now` that the reset names, if its zone is known.
pub fn resolve(reset: &ResetText, now: Timestamp, zones: &dyn Zones) -> Option<Timestamp> {
    let now_s = i64::try_from(now.0).ok()? / MS_PER_SECOND;
    let at_s = match reset {
        ResetText::Epoch(seconds) => *seconds,
        ResetText::Clock { hour, minute, zone } => {
            let zone = zone.as_deref()?;
            let offset = i64::from(zones.offset_s(zone, now_s)?);
            let day = (now_s + offset).div_euclid(DAY_S) * DAY_S;
            let wall = i64::from(*hour) * 3_600 + i64::from(*minute) * 60;
            (0..=1).find_map(|d| {
                let local = day + d * DAY_S + wall;
                let guess = local - offset;
                let utc = local - i64::from(zones.offset_s(zone, guess)?);
                (utc > now_s).then_some(utc)
            })?
        }
    };
    u64::try_from(at_s.checked_mul(MS_PER_SECOND)?).ok().map(Timestamp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::tz::NoZones;
    use serde_json::json;

    /// Fixed offsets: Lisbon UTC+0 (winter), Los Angeles UTC-8 (winter).
    #[derive(Debug)]
    struct Fixed;
    impl Zones for Fixed {
        fn offset_s(&self, zone: &str, _at_s: i64) -> Option<i32> {
            match zone {
                "Europe/Lisbon" => Some(0),
                "America/Los_Angeles" => Some(-8 * 3_600),
                _ => None,
            }
        }
    }

    // 2026-12-01T20:00:00Z.
    const NOW: Timestamp = Timestamp(1_796_155_200_000);

    fn clock(hour: u8, minute: u8, zone: Option<&str>) -> Option<ResetText> {
        Some(ResetText::Clock { hour, minute, zone: zone.map(str::to_string) })
    }

    #[test]
    fn the_notice_texts_from_the_notes() {
        assert_eq!(
            reset_text("You've hit your limit · resets 1pm (Europe/Lisbon)"),
            clock(13, 0, Some("Europe/Lisbon"))
        );
        assert_eq!(
            reset_text("You've hit your session limit · resets 12:50am (America/Los_Angeles)"),
            clock(0, 50, Some("America/Los_Angeles"))
        );
        assert_eq!(reset_text("Claude AI usage limit reached|1796212800"), Some(ResetText::Epoch(1_796_212_800)));
        assert_eq!(reset_text("Your limit will reset at 9am"), None, "no 'resets', no zone: no time");
        assert_eq!(reset_text("resets 12pm"), clock(12, 0, None));
        assert_eq!(reset_text("resets 9 AM (UTC)"), clock(9, 0, Some("UTC")));
        assert_eq!(reset_text("resets 13:05 (Europe/Lisbon)"), clock(13, 5, Some("Europe/Lisbon")));
        for garbled in [
            "resets soon",
            "resets 13pm (X)",
            "resets 1:5pm",
            "resets 123am",
            "resets 25:00",
            "resets :30pm",
            "|",
            "limit|x",
        ] {
            assert_eq!(reset_text(garbled), None, "{garbled:?}");
        }
    }

    #[test]
    fn a_clock_resolves_to_the_next_such_time_in_its_zone() {
        // 20:00Z: 1pm Lisbon (UTC) is tomorrow 13:00Z; 12:50am Los Angeles (UTC-8) is 08:50Z tomorrow.
        let lisbon = resolve(&clock(13, 0, Some("Europe/Lisbon")).expect("p"), NOW, &Fixed);
        assert_eq!(lisbon, Some(Timestamp(NOW.0 + 17 * 3_600_000)));
        let la = resolve(&clock(0, 50, Some("America/Los_Angeles")).expect("p"), NOW, &Fixed);
        assert_eq!(la, Some(Timestamp(NOW.0 + (12 * 60 + 50) * 60_000)));
        // 9pm Lisbon is later today.
        assert_eq!(
            resolve(&clock(21, 0, Some("Europe/Lisbon")).expect("p"), NOW, &Fixed),
            Some(NOW.plus_ms(3_600_000))
        );
        // Unknown zone or none: no time.
        assert_eq!(resolve(&clock(13, 0, Some("Mars/Olympus")).expect("p"), NOW, &Fixed), None);
        assert_eq!(resolve(&clock(13, 0, None).expect("p"), NOW, &Fixed), None);
        assert_eq!(resolve(&clock(13, 0, Some("Europe/Lisbon")).expect("p"), NOW, &NoZones), None);
    }

    #[test]
    fn the_recorded_429_is_a_usage_limit_without_a_time() {
        let result = json!({"type": "result", "subtype": "success", "is_error": true, "api_error_status": 429,
            "terminal_reason": "api_error",
            "result": "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later."});
        let failure = classify(&result, Some("rate_limit"), None, NOW, &Fixed);
        assert_eq!((failure.kind, failure.until), (ErrorKind::UsageLimit, None));
        assert!(failure.detail.expect("text").starts_with("API Error: Request rejected (429)"));
    }

    #[test]
    fn structured_reset_first_then_text() {
        let result = json!({"is_error": true, "result": "You've hit your limit · resets 1pm (Europe/Lisbon)"});
        let info = json!({"status": "rejected", "resetsAt": 1_796_212_800, "rateLimitType": "five_hour"});
        let structured = classify(&result, None, Some(&info), NOW, &Fixed);
        assert_eq!((structured.kind, structured.until), (ErrorKind::UsageLimit, Some(Timestamp(1_796_212_800_000))));
        let text = classify(&result, None, None, NOW, &Fixed);
        assert_eq!(text.until, Some(Timestamp(NOW.0 + 17 * 3_600_000)));
        let allowed = json!({"status": "allowed", "resetsAt": 1_796_212_800});
        assert_eq!(classify(&result, None, Some(&allowed), NOW, &Fixed).until, text.until);
        // A reset already past says nothing.
        let past = json!({"is_error": true, "result": "Claude AI usage limit reached|1700000000"});
        assert_eq!(classify(&past, None, None, NOW, &Fixed).until, None);
    }

    #[test]
    fn other_errors() {
        let kind = |status: Value, text: &str| {
            classify(&json!({"is_error": true, "api_error_status": status, "result": text}), None, None, NOW, &Fixed)
                .kind
        };
        assert_eq!(kind(json!(500), "API Error: 500 Internal server error"), ErrorKind::Generic);
        assert_eq!(kind(json!(401), "Invalid API key"), ErrorKind::LoginRequired);
        assert_eq!(kind(Value::Null, "Prompt is too long"), ErrorKind::ConversationFull);
        assert_eq!(kind(Value::Null, "Connection error."), ErrorKind::Generic);
    }
}
