//! Client authentication a public client cannot have: every client here is public (no
//! secret is ever issued), so a `/oauth/token` or `/oauth/revoke` request that
//! authenticates as a confidential client (`Authorization: Basic`, a non-empty
//! `client_secret`, a `client_assertion`) is refused with `401 invalid_client` (RFC 6749
//! §5.2) before anything else is looked at, whatever the secret. An empty `client_secret`
//! is no secret and is ignored; other `Authorization` schemes are no client
//! authentication (RFC 6749 §2.3) and are ignored too.

use crate::authority::Refusal;
use axum::http::{HeaderMap, header};
use std::collections::BTreeMap;

/// How a request tried to authenticate its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// `Authorization: Basic …` (the answer then carries a `Basic` challenge, RFC 6749 §5.2).
    Basic,
    /// A secret or an assertion in the body.
    Body,
}

impl Attempt {
    /// The refusal.
    pub(crate) fn refusal(self) -> Refusal {
        let how = match self {
            Attempt::Basic => "Authorization: Basic",
            Attempt::Body => "a client_secret or client_assertion",
        };
        Refusal::new(
            "invalid_client",
            format!("this server's clients are public (token_endpoint_auth_method none): send no {how}"),
        )
    }
}

/// The client authentication `headers` and `form` attempt, if any.
pub(crate) fn attempted(headers: &HeaderMap, form: &BTreeMap<String, String>) -> Option<Attempt> {
    let basic = headers.get_all(header::AUTHORIZATION).iter().any(|v| {
        let v = v.as_bytes();
        v.len() >= 5 && v[..5].eq_ignore_ascii_case(b"basic") && (v.len() == 5 || v[5] == b' ')
    });
    if basic {
        return Some(Attempt::Basic);
    }
    let secret = form.get("client_secret").is_some_and(|s| !s.is_empty());
    let assertion = form.contains_key("client_assertion") || form.contains_key("client_assertion_type");
    (secret || assertion).then_some(Attempt::Body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn basic_a_secret_or_an_assertion_is_an_attempt_and_nothing_else_is() {
        let mut basic = HeaderMap::new();
        basic.insert(header::AUTHORIZATION, "basic Y2xpOm1hZGUtdXA=".parse().expect("header"));
        assert_eq!(attempted(&basic, &form(&[])), Some(Attempt::Basic));
        let mut bearer = HeaderMap::new();
        bearer.insert(header::AUTHORIZATION, "Bearer oat_x".parse().expect("header"));
        assert_eq!(attempted(&bearer, &form(&[])), None);
        let none = HeaderMap::new();
        assert_eq!(attempted(&none, &form(&[("client_secret", "s")])), Some(Attempt::Body));
        assert_eq!(attempted(&none, &form(&[("client_assertion_type", "jwt")])), Some(Attempt::Body));
        assert_eq!(attempted(&none, &form(&[("client_secret", ""), ("client_id", "cli_x")])), None);
        assert_eq!(Attempt::Basic.refusal().error, "invalid_client");
    }
}
