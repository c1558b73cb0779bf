//! `orchestrator oauth list|revoke` with no daemon running: the grants file, read or
//! edited under its lock; refused (`OAUTH_GRANTS_ELSEWHERE`) where the daemon keeps its
//! state in the database.

use crate::authority::{Authority, Ttls};
use crate::error::OAuthError;
use crate::grants::{self, FileGrants, GrantsBackend};
use address::PublicUrl;
use std::path::Path;

/// `orchestrator oauth list` with no daemon running: the file, read under the lock.
pub fn offline_list(dir: &Path) -> Result<serde_json::Value, OAuthError> {
    let authority = offline(dir)?;
    Ok(authority.grants_list())
}

/// `orchestrator oauth revoke` with no daemon running: the file edited under the lock
/// (so a daemon starting meanwhile waits for nothing: it fails to take the lock and says so).
pub fn offline_revoke(dir: &Path, grant_id: Option<&str>) -> Result<Result<usize, String>, OAuthError> {
    let mut authority = offline(dir)?;
    Ok(authority.revoke_grants(grant_id).map_err(|r| r.description))
}

/// An authority on `dir`'s file, its lock held, when the file is where the state is kept.
fn offline(dir: &Path) -> Result<Authority, OAuthError> {
    grants::here(dir)?;
    let mut backend = FileGrants::open(dir)?;
    let file = backend.load()?;
    let public = PublicUrl::parse("http://127.0.0.1:1").expect("a fixed valid URL");
    Ok(Authority::new(public, Vec::new(), Ttls::default(), Box::new(backend), file))
}
