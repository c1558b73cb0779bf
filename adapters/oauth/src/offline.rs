//! `orchestrator oauth list|revoke` with no daemon running: the grants file, read or
//! edited under its lock.

use crate::authority::{Authority, Ttls};
use crate::error::OAuthError;
use crate::grants;
use address::PublicUrl;
use std::path::Path;

/// `orchestrator oauth list` with no daemon running: the file, read under the lock.
pub fn offline_list(dir: &Path) -> Result<serde_json::Value, OAuthError> {
    let _lock = grants::lock(dir)?;
    let file = grants::load(dir)?;
    let public = PublicUrl::parse("http://127.0.0.1:1").expect("a fixed valid URL");
    Ok(Authority::new(public, Vec::new(), Ttls::default(), dir.to_path_buf(), file).grants_list())
}

/// `orchestrator oauth revoke` with no daemon running: the file edited under the lock
/// (so a daemon starting meanwhile waits for nothing: it fails to take the lock and says so).
pub fn offline_revoke(dir: &Path, grant_id: Option<&str>) -> Result<Result<usize, String>, OAuthError> {
    let _lock = grants::lock(dir)?;
    let file = grants::load(dir)?;
    let public = PublicUrl::parse("http://127.0.0.1:1").expect("a fixed valid URL");
    let mut authority = Authority::new(public, Vec::new(), Ttls::default(), dir.to_path_buf(), file);
    Ok(authority.revoke_grants(grant_id).map_err(|r| r.description))
}
