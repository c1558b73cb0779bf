//! What every route's own caller checks read from request headers: the host name of a
//! `Host` or `Origin` value, the loopback names, the bearer token, and a comparison of
//! secrets that takes the same time however much of them matches.

use axum::http::{HeaderMap, header};

/// Hosts always allowed: loopback names and addresses.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The host name of a `Host` header value, lowercase, without port or brackets.
pub fn host_name(value: &str) -> Option<String> {
    let value = value.trim();
    let host = if let Some(rest) = value.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))) {
            return None;
        }
        inside
    } else {
        match value.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !h.contains(':') => h,
            Some(_) => return None,
            None => value,
        }
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The host name of an `Origin` header value (`http(s)://host[:port]`); `null` and
/// other schemes have none.
pub fn origin_host(value: &str) -> Option<String> {
    let rest = value.strip_prefix("http://").or_else(|| value.strip_prefix("https://"))?;
    let authority = rest.split('/').next()?;
    if authority.contains('@') {
        return None;
    }
    host_name(authority)
}

/// The bearer token of `Authorization`, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// Compares without an early exit, so the time taken does not tell how much matched.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        assert_eq!(host_name("127.0.0.1:7411").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_name("[::1]:7411").as_deref(), Some("::1"));
        assert_eq!(host_name("LocalHost").as_deref(), Some("localhost"));
        assert_eq!(host_name("evil.example:80").as_deref(), Some("evil.example"));
        assert_eq!(host_name("a:b:c"), None);
        assert_eq!(origin_host("http://localhost:3000").as_deref(), Some("localhost"));
        assert_eq!(origin_host("null"), None);
        assert_eq!(origin_host("file://x"), None);
        assert_eq!(origin_host("http://user@localhost"), None);
    }
}
