//! Argument checks shared by the operations: lengths, names, URLs. Untrusted input.

use crate::limits::*;
use crate::reject::Rejection;

/// A required text field: non-blank, at most `max` bytes, no control characters except
/// newline and tab.
pub(crate) fn text(field: &str, value: &str, max: usize) -> Result<(), Rejection> {
    if value.trim().is_empty() {
        return Err(Rejection::invalid(field, "must not be empty"));
    }
    optional_text(field, value, max)
}

/// An optional text field: may be empty, otherwise as [`text`].
pub(crate) fn optional_text(field: &str, value: &str, max: usize) -> Result<(), Rejection> {
    if value.len() > max {
        return Err(Rejection::invalid(field, &format!("must be at most {max} bytes, got {}", value.len())));
    }
    if value.chars().any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r') {
        return Err(Rejection::invalid(field, "must not contain control characters"));
    }
    Ok(())
}

/// A one-line name (task name, display name...).
pub(crate) fn name(field: &str, value: &str) -> Result<(), Rejection> {
    text(field, value, NAME_BYTES_MAX)?;
    if value.contains('\n') || value.contains('\r') {
        return Err(Rejection::invalid(field, "must be a single line"));
    }
    Ok(())
}

/// A hierarchical worker name below `/root`: `/root/<segment>[/<segment>...]`, each
/// segment lowercase ASCII letters, digits, `-` or `_`.
pub(crate) fn worker_name(value: &str) -> Result<(), Rejection> {
    let field = "name";
    name(field, value)?;
    let Some(rest) = value.strip_prefix("/root/") else {
        return Err(Rejection::invalid(field, "must start with /root/ (e.g. /root/backend)"));
    };
    let segments: Vec<&str> = rest.split('/').collect();
    if segments.len() + 1 > WORKER_NAME_DEPTH_MAX {
        return Err(Rejection::invalid(field, &format!("must be at most {WORKER_NAME_DEPTH_MAX} levels deep")));
    }
    for segment in segments {
        let ok = !segment.is_empty()
            && segment.len() <= 64
            && segment.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !ok {
            return Err(Rejection::invalid(field, "segments must be 1-64 of a-z, 0-9, '-' or '_'"));
        }
    }
    Ok(())
}

/// The parent of a hierarchical name (`/root/a/b` -> `/root/a`).
pub(crate) fn parent_name(value: &str) -> &str {
    value.rsplit_once('/').map(|(parent, _)| parent).unwrap_or("")
}

/// A conversation URL or id: one line, no whitespace, bounded.
pub(crate) fn conversation(value: &str) -> Result<(), Rejection> {
    let field = "conversationUrl";
    text(field, value, CONVERSATION_URL_BYTES_MAX)?;
    if value.chars().any(char::is_whitespace) {
        return Err(Rejection::invalid(field, "must not contain whitespace"));
    }
    Ok(())
}

/// A page size: 1..=max.
pub(crate) fn limit(field: &str, value: usize, max: usize) -> Result<(), Rejection> {
    if value == 0 || value > max {
        return Err(Rejection::invalid(field, &format!("must be between 1 and {max}, got {value}")));
    }
    Ok(())
}

/// Cuts untrusted executor detail to at most `max` bytes on a char boundary.
pub(crate) fn truncate_detail(value: &str, max: usize) -> String {
    if value.len() <= max {
        return value.to_string();
    }
    let mut end = max;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    value[..end].to_string()
}

/// The letter(s) of the n-th lane: A..Z, then AA, AB...
pub(crate) fn lane_letters(mut n: u32) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'A' + (n % 26) as u8);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII letters")
}

/// A stable 64-bit FNV-1a digest (for coalescing identical corrections).
pub(crate) fn digest(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain(std::iter::once(0xff)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_names() {
        assert!(worker_name("/root/backend").is_ok());
        assert!(worker_name("/root/a/b-c_1").is_ok());
        for bad in ["/root", "/root/", "root/a", "/root/A", "/root/a//b", "/root/a b", "/other/a"] {
            assert!(worker_name(bad).is_err(), "{bad}");
        }
        assert_eq!(parent_name("/root/a/b"), "/root/a");
        assert_eq!(parent_name("/root/a"), "/root");
    }

    #[test]
    fn lanes() {
        assert_eq!(lane_letters(0), "A");
        assert_eq!(lane_letters(25), "Z");
        assert_eq!(lane_letters(26), "AA");
        assert_eq!(lane_letters(27), "AB");
    }

    #[test]
    fn text_limits() {
        assert!(text("f", "", 10).is_err());
        assert!(text("f", "  ", 10).is_err());
        assert!(text("f", "hello", 3).is_err());
        assert!(text("f", "a\u{7}b", 10).is_err());
        assert!(text("f", "line\nline", 20).is_ok());
        assert!(name("f", "line\nline").is_err());
        assert_eq!(truncate_detail("héllo", 2), "h");
    }
}
