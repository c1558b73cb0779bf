//! The accounts a CLI executor's workers run under, on the wire: `hello.accounts`, each
//! `{"kind": "codex", "name": "team", "turnsMax": 6}` (`executor-cli --account
//! codex=team:6`), and the checks a `hello` must pass: a CLI kind the executor runs, a
//! printable name, a cap of at least one turn, one account per kind, at most
//! [`ACCOUNTS_COUNT_MAX`] of them. Absent: no account (the extension, an executor-cli
//! without `--account`), and the `hello` keeps its bytes.

use super::ExecutorKindWire;
use engine::{AccountCap, ExecutorKind};
use serde::{Deserialize, Serialize};

/// Accounts one `hello` may name (one per CLI kind is all that is meaningful; a few spare).
pub const ACCOUNTS_COUNT_MAX: usize = 8;

/// Bytes of an account's name (printable ASCII, no spaces).
pub const ACCOUNT_NAME_BYTES_MAX: usize = 64;

/// The largest cap an account may name (turns at once across its hosts).
pub const ACCOUNT_TURNS_MAX_MAX: u32 = 4_096;

/// One account in `hello.accounts`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountWire {
    /// The kind of worker that runs under it.
    pub kind: ExecutorKindWire,
    /// Its name, the same on every host that shares it.
    pub name: String,
    /// Turns at once under it, on all its hosts together.
    pub turns_max: u32,
}

impl From<&AccountWire> for AccountCap {
    fn from(a: &AccountWire) -> AccountCap {
        AccountCap { kind: ExecutorKind::from(a.kind), name: a.name.as_str().into(), turns_max: a.turns_max }
    }
}

impl From<&AccountCap> for AccountWire {
    fn from(a: &AccountCap) -> AccountWire {
        AccountWire { kind: a.kind.into(), name: a.name.to_string(), turns_max: a.turns_max }
    }
}

/// What is wrong with a `hello`'s accounts, for an executor that runs `kinds`; `None` when
/// they are fine.
pub fn accounts_problem(accounts: &[AccountWire], kinds: &[ExecutorKind]) -> Option<String> {
    if accounts.len() > ACCOUNTS_COUNT_MAX {
        return Some(format!("{} accounts; at most {ACCOUNTS_COUNT_MAX}", accounts.len()));
    }
    for (i, a) in accounts.iter().enumerate() {
        let kind = ExecutorKind::from(a.kind);
        let name = &a.name;
        if !kind.is_cli() || !kinds.contains(&kind) {
            return Some(format!("account {name:?} is for {kind} workers, which this executor does not run"));
        }
        if name.is_empty() || name.len() > ACCOUNT_NAME_BYTES_MAX || !name.bytes().all(|b| b.is_ascii_graphic()) {
            return Some(format!(
                "account name {name:?}: 1 to {ACCOUNT_NAME_BYTES_MAX} printable ASCII characters, no spaces"
            ));
        }
        if a.turns_max == 0 || a.turns_max > ACCOUNT_TURNS_MAX_MAX {
            return Some(format!("account {name:?}: turnsMax {} is not 1 to {ACCOUNT_TURNS_MAX_MAX}", a.turns_max));
        }
        if accounts[..i].iter().any(|b| b.kind == a.kind) {
            return Some(format!("two accounts for {kind} workers; one per kind"));
        }
    }
    None
}
