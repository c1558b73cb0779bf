//! `application/x-www-form-urlencoded`, both ways: the forms and queries the endpoints
//! read (each parameter once), and the query values of the redirects they write.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use std::collections::BTreeMap;

/// Parameters in one form or query.
const PARAMS_MAX: usize = 32;

/// What stays unescaped in a query value: RFC 3986 unreserved characters.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-encodes a query value.
pub fn encode(value: &str) -> String {
    utf8_percent_encode(value, QUERY_VALUE).to_string()
}

/// Decodes `application/x-www-form-urlencoded` (forms and queries). A repeated
/// parameter, bad UTF-8 or too many parameters is `None` (RFC 6749 §3.1).
pub fn parse_form(text: &str) -> Option<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for pair in text.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| percent_decode_str(&s.replace('+', " ")).decode_utf8().ok().map(|c| c.into_owned());
        let (k, v) = (decode(k)?, decode(v)?);
        if out.insert(k, v).is_some() || out.len() > PARAMS_MAX {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_once_each() {
        let f = parse_form("a=1&b=x+y%2Fz&c=").expect("form");
        assert_eq!(f.get("b").map(String::as_str), Some("x y/z"));
        assert_eq!(f.get("c").map(String::as_str), Some(""));
        assert_eq!(parse_form("a=1&a=2"), None);
        assert_eq!(parse_form("a=%FF"), None);
        assert_eq!(encode("a b/c~"), "a%20b%2Fc~");
    }
}
