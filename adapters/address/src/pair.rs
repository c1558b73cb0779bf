//! Pairing on the wire (docs/operator.md "Pairing"): the routes, the one-time code's
//! printed form, and the JSON the daemon and its clients (`orchestrator pair`,
//! `orchestrator executor-cli --pair`, the browser extension) exchange. The daemon serves
//! them; the commands read them, so both sides agree without depending on each other.

use serde::{Deserialize, Serialize};

/// `GET`: the discovery answer ([`PairDiscovery`]); `POST`: a code for the executor token.
pub const PAIR_PATH: &str = "/pair";
/// `POST`, with the static MCP token from loopback: a fresh code ([`PairIssued`]).
pub const PAIR_CODE_PATH: &str = "/pair/code";
/// What the discovery answer names as its product, so that a probe tells our daemon from
/// anything else listening on the port.
pub const PRODUCT: &str = "orchestrator";
/// Digits in a code: typed by a person, 10^8 possibilities (the math in docs/limits.md).
pub const PAIR_CODE_DIGITS: usize = 8;

/// A code as a person reads it: `48217730` as `4821-7730`.
pub fn format_code(digits: &str) -> String {
    match digits.len() {
        PAIR_CODE_DIGITS => format!("{}-{}", &digits[..4], &digits[4..]),
        _ => digits.to_string(),
    }
}

/// A code as typed (`4821-7730`, `4821 7730`, `48217730`) back to its digits; `None` when
/// it is not [`PAIR_CODE_DIGITS`] digits once spaces and dashes are dropped.
pub fn normalize_code(typed: &str) -> Option<String> {
    let digits: String = typed.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    (digits.len() == PAIR_CODE_DIGITS && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

/// `GET /pair`: enough for a probe to know it found the daemon, nothing secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairDiscovery {
    /// Always [`PRODUCT`].
    pub product: String,
    /// The daemon's version.
    pub version: String,
    /// Whether `POST /pair` is served (it needs the executor bridge).
    pub pairing: bool,
}

/// `POST /pair`'s body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PairRequest {
    /// The code as typed.
    pub code: String,
    /// `cli-executor` asks for the MCP token too (its children call the tools with it);
    /// absent or anything else: the executor token only (the browser extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The executor id a `cli-executor` will say hello with: the daemon answers with a token
    /// good for that host only (its host book; one issued to it before is retired).
    /// Absent: the shared executor token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// [`PairRequest::client`] of `orchestrator executor-cli --pair`.
pub const CLIENT_CLI_EXECUTOR: &str = "cli-executor";

/// `POST /pair`'s answer to a good code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairAnswer {
    /// Always [`PRODUCT`].
    pub product: String,
    /// The daemon's version.
    pub version: String,
    /// The executor token, for the extension's settings or `executor-cli`'s token file.
    pub executor_token: String,
    /// The MCP token, only for [`CLIENT_CLI_EXECUTOR`] (its children need it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_token: Option<String>,
    /// The daemon's MCP endpoint as it listens (`http://ADDR:PORT/mcp`).
    pub mcp_url: String,
}

/// `POST /pair/code`'s answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairIssued {
    /// The code, printed form ([`format_code`]).
    pub code: String,
    /// How long it is good for, in milliseconds.
    pub expires_in_ms: u64,
}

/// Every refusal of the pairing routes: a stable code and a sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairRefusal {
    /// Stable: `PAIR_CODE_WRONG`, `PAIR_CODE_EXPIRED`, `PAIR_CODE_USED`, `PAIR_RATE_LIMITED`, ...
    pub code: String,
    /// What happened and what to do, in a person's words.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_typed_with_or_without_separators() {
        assert_eq!(format_code("48217730"), "4821-7730");
        assert_eq!(normalize_code("4821-7730").as_deref(), Some("48217730"));
        assert_eq!(normalize_code(" 4821 7730 ").as_deref(), Some("48217730"));
        assert_eq!(normalize_code("4821-773"), None);
        assert_eq!(normalize_code("4821-773x"), None);
        assert_eq!(normalize_code("4821-77301"), None);
    }
}
