//! The durable OAuth state: registered clients and grants, with tokens kept only as
//! SHA-256, behind [`GrantsBackend`]. Its file backend, [`FileGrants`], is
//! `DIR/oauth-grants.json`: written atomically (temporary file, fsync, rename, fsync of the
//! directory), mode 0600; a file that cannot be read is a typed error, never a silent empty
//! start. `DIR/oauth.lock` is held by the daemon while OAuth is on, so the CLI edits the
//! file only when no daemon serves it. A daemon whose state is kept elsewhere (the
//! database, `--store postgres://`) leaves a note in its data directory
//! ([`ELSEWHERE_FILE_NAME`]), so that the CLI does not edit a file nobody reads.

use crate::error::OAuthError;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The grants file inside the data directory.
pub const GRANTS_FILE_NAME: &str = "oauth-grants.json";
/// The lock file the daemon holds while OAuth is on.
pub const LOCK_FILE_NAME: &str = "oauth.lock";
/// The file format's version (bumped on an incompatible change; older ones are read).
pub const GRANTS_VERSION: u32 = 1;
/// The note in the data directory of a daemon whose OAuth state is kept elsewhere: it
/// names where (never a password).
pub const ELSEWHERE_FILE_NAME: &str = "oauth-grants.elsewhere";

/// Where the durable OAuth state is kept. Both calls block: the file's fsync, or a
/// database's round trip (whose backend runs its client on a thread of its own).
pub trait GrantsBackend: Send + std::fmt::Debug {
    /// The state as kept: none yet is an empty state; unreadable is an error (the daemon
    /// then refuses to start rather than forget grants).
    fn load(&mut self) -> Result<GrantsFile, OAuthError>;
    /// Replaces the state whole, returning once it is durable. An error means it may not
    /// be: the caller undoes the change and reports a failure, never a success.
    fn save(&mut self, file: &GrantsFile) -> Result<(), OAuthError>;
}

/// The state in `DIR/oauth-grants.json`, with `DIR/oauth.lock` held while this lives.
#[derive(Debug)]
pub struct FileGrants {
    /// The data directory.
    dir: PathBuf,
    /// `DIR/oauth.lock`, held so that no other process edits the file meanwhile.
    _lock: File,
}

impl FileGrants {
    /// Takes `dir`'s lock (`Err(Locked)` while another process holds it).
    pub fn open(dir: &Path) -> Result<FileGrants, OAuthError> {
        Ok(FileGrants { _lock: lock(dir)?, dir: dir.to_path_buf() })
    }
}

impl GrantsBackend for FileGrants {
    fn load(&mut self) -> Result<GrantsFile, OAuthError> {
        load(&self.dir)
    }

    fn save(&mut self, file: &GrantsFile) -> Result<(), OAuthError> {
        save(&self.dir, file)
    }
}

/// A dynamically registered public client (RFC 7591).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Client {
    /// Random, issued by us.
    pub client_id: String,
    /// As the client named itself (shown as "self-registered").
    pub client_name: String,
    /// Exactly the registered redirect URIs.
    pub redirect_uris: Vec<String>,
    /// Registration time, Unix ms.
    pub created_ms: u64,
}

/// One approved authorization: a token family (one refresh token at a time, rotated).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Grant {
    /// `grt-…`, shown to the operator.
    pub grant_id: String,
    /// The client it was granted to.
    pub client_id: String,
    /// The client's name at grant time (for `oauth list` after the client is gone).
    pub client_name: String,
    /// Granted scopes, space separated.
    pub scope: String,
    /// The audience: our canonical resource.
    pub resource: String,
    /// Approval time, Unix ms.
    pub created_ms: u64,
    /// Last token issue (code exchange or refresh), Unix ms.
    pub refreshed_ms: u64,
    /// SHA-256 (hex) of the current access token.
    pub access_sha256: String,
    /// When the access token expires, Unix ms.
    pub access_expires_ms: u64,
    /// SHA-256 (hex) of the current refresh token.
    pub refresh_sha256: String,
    /// When the refresh token expires, Unix ms (sliding: renewed on each refresh).
    pub refresh_expires_ms: u64,
    /// SHA-256 of refresh tokens already used: presenting one again revokes the grant.
    pub retired_refresh_sha256: Vec<String>,
    /// SHA-256 (hex) of the authorization code the grant was issued for: presenting it
    /// again revokes the grant (OAuth 2.1 §4.1.3). Empty in files written before it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code_sha256: String,
}

/// The whole file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct GrantsFile {
    /// [`GRANTS_VERSION`].
    pub version: u32,
    /// Registered clients.
    pub clients: Vec<Client>,
    /// Live grants.
    pub grants: Vec<Grant>,
}

impl GrantsFile {
    /// An empty state.
    pub fn empty() -> GrantsFile {
        GrantsFile { version: GRANTS_VERSION, clients: Vec::new(), grants: Vec::new() }
    }
}

/// The state as stored elsewhere (the file's own JSON, compact).
pub fn encode(file: &GrantsFile) -> Vec<u8> {
    serde_json::to_vec(file).expect("plain data always serializes")
}

/// The state from [`encode`]'s bytes (or a file's): `Err` says why they are not one.
pub fn decode(bytes: &[u8]) -> Result<GrantsFile, String> {
    let file: GrantsFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if file.version != GRANTS_VERSION {
        return Err(format!("unknown version {}", file.version));
    }
    Ok(file)
}

/// Notes in `dir` that its daemon keeps its OAuth state in `place` (0600).
pub fn note_elsewhere(dir: &Path, place: &str) -> Result<(), OAuthError> {
    let path = dir.join(ELSEWHERE_FILE_NAME);
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&path).and_then(|mut out| out.write_all(format!("{place}\n").as_bytes()));
    written.map_err(|source| OAuthError::GrantsIo { path, source })
}

/// Drops [`note_elsewhere`]'s note (a daemon keeping its state in the file again).
pub fn forget_elsewhere(dir: &Path) -> Result<(), OAuthError> {
    let path = dir.join(ELSEWHERE_FILE_NAME);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(OAuthError::GrantsIo { path, source: e }),
        _ => Ok(()),
    }
}

/// `Err(Elsewhere)` when `dir`'s daemon keeps its OAuth state elsewhere.
pub fn here(dir: &Path) -> Result<(), OAuthError> {
    match std::fs::read_to_string(dir.join(ELSEWHERE_FILE_NAME)) {
        Ok(place) => Err(OAuthError::Elsewhere { dir: dir.to_path_buf(), place: place.trim().to_string() }),
        Err(_) => Ok(()),
    }
}

/// The file's path in `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(GRANTS_FILE_NAME)
}

/// Loads `dir`'s grants: none yet is an empty state; unreadable or undecodable is an
/// error naming the file (the daemon then refuses to start rather than forget grants).
pub fn load(dir: &Path) -> Result<GrantsFile, OAuthError> {
    let path = path(dir);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(GrantsFile::empty()),
        Err(source) => return Err(OAuthError::GrantsIo { path, source }),
    };
    decode(&bytes).map_err(|why| OAuthError::GrantsCorrupt { path, why })
}

/// Writes `file` atomically: a temporary file (0600) beside it, fsync, rename, fsync of
/// the directory. A crash leaves the old file or the new one, never a mix.
pub fn save(dir: &Path, file: &GrantsFile) -> Result<(), OAuthError> {
    let path = path(dir);
    let io = |source| OAuthError::GrantsIo { path: path.clone(), source };
    let bytes = serde_json::to_vec_pretty(file).map_err(|e| io(std::io::Error::other(e)))?;
    let temp = dir.join(format!("{GRANTS_FILE_NAME}.tmp"));
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut out = options.open(&temp).map_err(io)?;
    out.write_all(&bytes).map_err(io)?;
    out.sync_all().map_err(io)?;
    drop(out);
    std::fs::rename(&temp, &path).map_err(io)?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    Ok(())
}

/// Takes `dir`'s OAuth lock without waiting: `Err(Locked)` while a daemon serving OAuth
/// holds it. The lock lasts as long as the returned file.
pub fn lock(dir: &Path) -> Result<File, OAuthError> {
    let path = dir.join(LOCK_FILE_NAME);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| OAuthError::GrantsIo { path: path.clone(), source })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(OAuthError::Locked { path }),
        Err(TryLockError::Error(source)) => Err(OAuthError::GrantsIo { path, source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_mode_and_corruption() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(load(dir.path()).expect("empty"), GrantsFile::empty());
        let mut file = GrantsFile::empty();
        file.clients.push(Client {
            client_id: "cli-x".into(),
            client_name: "n".into(),
            redirect_uris: vec!["http://127.0.0.1:1/cb".into()],
            created_ms: 1,
        });
        save(dir.path(), &file).expect("save");
        assert_eq!(load(dir.path()).expect("load"), file);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(dir.path())).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(path(dir.path()), b"{\"version\":1,\"clients\":[").expect("write");
        assert_eq!(load(dir.path()).map_err(|e| e.code()), Err("OAUTH_GRANTS_CORRUPT"));
        let held = lock(dir.path()).expect("lock");
        assert_eq!(lock(dir.path()).map_err(|e| e.code()).err(), Some("OAUTH_LOCKED"));
        drop(held);
        assert!(lock(dir.path()).is_ok());
    }

    #[test]
    fn encoded_state_decodes_and_a_note_says_where_it_is_kept() {
        let mut file = GrantsFile::empty();
        file.clients.push(Client {
            client_id: "cli-y".into(),
            client_name: "n".into(),
            redirect_uris: vec![],
            created_ms: 2,
        });
        assert_eq!(decode(&encode(&file)), Ok(file));
        assert!(decode(b"{\"version\":9,\"clients\":[],\"grants\":[]}").is_err_and(|why| why.contains("version 9")));
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(here(dir.path()).is_ok());
        note_elsewhere(dir.path(), "PostgreSQL u@h:5432/db").expect("note");
        let err = here(dir.path()).expect_err("elsewhere");
        assert_eq!(err.code(), "OAUTH_GRANTS_ELSEWHERE");
        assert!(err.to_string().contains("PostgreSQL u@h:5432/db"), "{err}");
        forget_elsewhere(dir.path()).expect("forget");
        forget_elsewhere(dir.path()).expect("twice");
        assert!(here(dir.path()).is_ok());
    }
}
