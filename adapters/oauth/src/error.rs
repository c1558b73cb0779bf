//! Why the OAuth server cannot start or its state cannot be used, with stable codes.

use std::path::PathBuf;

/// Why OAuth cannot start or its state cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// `--public-url` is not an accepted address.
    #[error("bad --public-url {0}")]
    PublicUrl(String),
    /// An `--oauth-redirect-allow` value is not an absolute http(s) URI.
    #[error("bad --oauth-redirect-allow {0:?}: an absolute http(s) URI without fragment or user info")]
    RedirectAllow(String),
    /// The grants file exists but cannot be decoded: nothing is dropped silently.
    #[error(
        "the OAuth grants file {path} is damaged ({why}); the daemon will not start and forget grants: \
         move the file aside to start with no OAuth grants (clients then connect again)"
    )]
    GrantsCorrupt {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        why: String,
    },
    /// Reading or writing the grants file failed.
    #[error("cannot use {path}: {source}")]
    GrantsIo {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The state kept elsewhere (the database) cannot be read or written; `code` is the
    /// store's own (`PG_FENCED`, `PG_QUERY`, ...).
    #[error("cannot use the OAuth grants kept in {place} [{code}]: {detail}")]
    Stored {
        /// Where (never a password).
        place: String,
        /// The store's stable code.
        code: &'static str,
        /// What went wrong.
        detail: String,
    },
    /// The data directory's daemon keeps its OAuth state elsewhere: its file would be the
    /// wrong thing to read or edit.
    #[error(
        "the OAuth grants of the daemon of {} are kept in {place}, not in that directory: run this command \
         while its leader runs (it answers through the daemon)",
        dir.display()
    )]
    Elsewhere {
        /// The data directory.
        dir: PathBuf,
        /// Where the state is kept (from the directory's note).
        place: String,
    },
    /// Another process (a running daemon with OAuth on) holds the OAuth lock.
    #[error("{path} is locked: a daemon serving OAuth runs on this data directory")]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
}

impl OAuthError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            OAuthError::PublicUrl(_) => "OAUTH_PUBLIC_URL",
            OAuthError::RedirectAllow(_) => "OAUTH_REDIRECT_ALLOW",
            OAuthError::GrantsCorrupt { .. } => "OAUTH_GRANTS_CORRUPT",
            OAuthError::GrantsIo { .. } => "OAUTH_GRANTS_IO",
            OAuthError::Locked { .. } => "OAUTH_LOCKED",
            OAuthError::Stored { .. } => "OAUTH_GRANTS_STORE",
            OAuthError::Elsewhere { .. } => "OAUTH_GRANTS_ELSEWHERE",
        }
    }
}

impl From<address::PublicUrlError> for OAuthError {
    fn from(e: address::PublicUrlError) -> OAuthError {
        OAuthError::PublicUrl(e.0)
    }
}
