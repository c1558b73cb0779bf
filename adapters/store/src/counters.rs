//! The store's own keys in `state`, read at a start: the commit counter
//! ([`key::COMMITS_KEY`]) and the newest checkpointed commit ([`key::CHECKPOINT_KEY`]).

use crate::error::{Corruption, Error, StoredKey};
use crate::key;
use fjall::Keyspace;
use std::path::Path;

/// The store's commit counter as recovered, with its format version (`None` in a store
/// written before it existed).
pub(crate) fn read_commits(dir: &Path, state: &Keyspace) -> Result<Option<(u8, u64)>, Error> {
    read_commit_key(dir, state, key::COMMITS_KEY, "not a commit counter")
}

/// The newest commit a checkpoint wrote into the keyspaces (0 before the first one).
pub(crate) fn read_checkpointed(dir: &Path, state: &Keyspace) -> Result<u64, Error> {
    read_commit_key(dir, state, key::CHECKPOINT_KEY, "not a checkpoint").map(|c| c.map_or(0, |(_, c)| c))
}

/// A commit number stored under `stored_key` in `state`, with its format version.
fn read_commit_key(dir: &Path, state: &Keyspace, stored_key: &[u8], what: &str) -> Result<Option<(u8, u64)>, Error> {
    let value = state.get(stored_key).map_err(|source| Error::Open { dir: dir.to_path_buf(), source })?;
    match value {
        None => Ok(None),
        Some(value) => match key::decode_commits_versioned(&value) {
            Some(commits) => Ok(Some(commits)),
            None => Err(Error::Corrupt {
                key: StoredKey(stored_key.to_vec()),
                problem: Corruption::Payload { detail: what.into() },
            }),
        },
    }
}
