//! The operator channel's OAuth approval (`oauth_pending`, `oauth_approve`, `oauth_deny`,
//! `oauth_revoke`): the validated inputs, the answer's JSON shape, the stable error codes,
//! and [`GrantDesk`], the seam through which the daemon's authorization server is reached
//! (the bridge does not know the orchestrator crate; `serve.rs` injects the desk, none
//! when OAuth is off). Nothing secret has a field here: no token, hash or handle.

use caller_protocol::ErrorOut;
use serde::{Deserialize, Serialize};

/// Stable error codes of the OAuth operator actions and query.
pub mod oauth_codes {
    /// The daemon runs without `--public-url`: there is no authorization server.
    pub const OAUTH_OFF: &str = "OAUTH_OFF";
    /// No waiting request shows this code (decided, expired or never shown), or no
    /// grant has this id.
    pub const OAUTH_NOT_FOUND: &str = "OAUTH_NOT_FOUND";
    /// The authorization server could not store the change (nothing changed).
    pub const OAUTH_STORE: &str = "OAUTH_STORE";
    /// The executor's `hello` did not set `capabilities.operator`.
    pub const OPERATOR_REQUIRED: &str = "OPERATOR_REQUIRED";
    /// The executor is not on the daemon's machine: a grant is decided only from loopback
    /// (a browser connected with `--executor-allow-remote` cannot approve or revoke).
    pub const LOOPBACK_REQUIRED: &str = "LOOPBACK_REQUIRED";
}

/// Characters of a request's code, without its dash (`K7QH-2MPD`).
pub const OAUTH_CODE_CHARS: usize = 8;
/// Hex characters after `grt-` in a grant id (48 random bits: an id, not a secret).
pub const GRANT_ID_HEX_CHARS: usize = 12;
/// The prefix of every grant id.
pub const GRANT_ID_PREFIX: &str = "grt-";

/// The short code a waiting authorization request shows on its consent page, normalized
/// to `XXXX-XXXX` (upper case; typed with or without the dash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthCode(String);

impl OAuthCode {
    /// The code as typed, or `INVALID_ARGUMENT` naming `code` (the code is not quoted:
    /// codes appear in no message or log line).
    pub fn parse(typed: &str) -> Result<OAuthCode, ErrorOut> {
        let bad = || ErrorOut::invalid("code", &format!("{OAUTH_CODE_CHARS} letters and digits, as XXXX-XXXX"));
        if !typed.is_ascii() {
            return Err(bad());
        }
        let (head, tail) = match typed.split_once('-') {
            Some((head, tail)) => (head, tail),
            None if typed.len() == OAUTH_CODE_CHARS => typed.split_at(OAUTH_CODE_CHARS / 2),
            None => return Err(bad()),
        };
        let half = |s: &str| s.len() == OAUTH_CODE_CHARS / 2 && s.bytes().all(|b| b.is_ascii_alphanumeric());
        if !(half(head) && half(tail)) {
            return Err(bad());
        }
        Ok(OAuthCode(format!("{}-{}", head.to_ascii_uppercase(), tail.to_ascii_uppercase())))
    }

    /// `XXXX-XXXX`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A grant's id, `grt-` and 12 lowercase hex characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantId(String);

impl GrantId {
    /// The id, or `INVALID_ARGUMENT` naming `grantId`.
    pub fn parse(printed: &str) -> Result<GrantId, ErrorOut> {
        let hex = printed.strip_prefix(GRANT_ID_PREFIX).unwrap_or_default();
        if hex.len() != GRANT_ID_HEX_CHARS || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(ErrorOut::invalid(
                "grantId",
                &format!("{GRANT_ID_PREFIX} and {GRANT_ID_HEX_CHARS} lowercase hex characters"),
            ));
        }
        Ok(GrantId(printed.to_string()))
    }

    /// The printed id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A validated OAuth operator action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrantAction {
    /// Approve the waiting request showing this code: its consent page proceeds.
    Approve(OAuthCode),
    /// Deny it: the client is sent back with `access_denied`.
    Deny(OAuthCode),
    /// Revoke the grant at once: its tokens are refused from now on.
    Revoke(GrantId),
}

impl GrantAction {
    /// The action's name for log lines (never its code).
    pub fn name(&self) -> &'static str {
        match self {
            GrantAction::Approve(_) => "oauth_approve",
            GrantAction::Deny(_) => "oauth_deny",
            GrantAction::Revoke(_) => "oauth_revoke",
        }
    }
}

/// `oauth_pending`'s data: the requests waiting for the operator and the live grants.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthPendingOut {
    /// The daemon serves OAuth (`--public-url`); when false both lists are empty.
    pub enabled: bool,
    /// Waiting requests, oldest first.
    pub pending: Vec<OAuthRequestOut>,
    /// Live grants, oldest first.
    pub grants: Vec<OAuthGrantOut>,
}

/// One authorization request waiting for the operator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthRequestOut {
    /// The short code its consent page shows (`XXXX-XXXX`), for approve and deny.
    pub code: String,
    /// The name the client gave itself when it registered (untrusted text).
    pub client_name: String,
    /// Always true today: every client registered itself (RFC 7591), so its name is
    /// only what it claims.
    pub self_registered: bool,
    /// Where the client's user is sent back (the redirect URI's host).
    pub redirect_host: String,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// When the request expires unanswered, ms since the Unix epoch.
    pub expires_at_ms: u64,
}

/// One live grant (an approved client's token family).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthGrantOut {
    /// `grt-…`, for `oauth_revoke`.
    pub grant_id: String,
    /// The client's self-given name at approval time.
    pub client_name: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the operator approved it, ms since the Unix epoch.
    pub created_at_ms: u64,
    /// When the client last got tokens (sign-in or refresh), ms since the Unix epoch: a
    /// client in use refreshes at least once per access-token lifetime.
    pub last_used_at_ms: u64,
}

/// The daemon's authorization server as the operator channel sees it. Implemented by
/// the orchestrator's OAuth server; `None` in the bridge when OAuth is off.
pub trait GrantDesk: Send + Sync + std::fmt::Debug {
    /// The waiting requests and live grants (with `enabled: true`).
    fn pending(&self) -> OAuthPendingOut;
    /// Performs the action, or why not (`OAUTH_NOT_FOUND`, `OAUTH_STORE`).
    fn perform(&self, action: &GrantAction) -> Result<(), ErrorOut>;
}
