//! A small OAuth 2.1 authorization server beside `/mcp`, on only with `--public-url`:
//! for ChatGPT and other clients that cannot send the static bearer token.
//!
//! - `redirect.rs`: redirect URIs, exact-parsed, against the allowlist.
//! - `secrets.rs`: random tokens and codes, SHA-256, PKCE S256, the human code.
//! - `grants.rs`: `DIR/oauth-grants.json` (clients, grants, token hashes), atomic, 0600.
//! - `authority.rs`: registration, authorization requests, the operator's decision, codes.
//! - `tokens.rs`: code exchange, refresh rotation with reuse detection, revocation, checks.
//! - `http.rs`: the endpoints (metadata, register, authorize, consent, token, revoke).
//! - `page.rs`: the consent and error pages. `admin.rs`: the loopback admin API and its
//!   client (`orchestrator oauth …`). `desk.rs`: the same decisions for the executor
//!   bridge's operator channel (the extension's dashboard). `cimd.rs`: the seam for
//!   Client ID Metadata Documents.
//!
//! Architecture Invariant: no token, code or verifier is written anywhere but as its
//! SHA-256, and none appears in a log line; the server stores and logs ids only.

pub mod admin;
pub mod authority;
pub mod cimd;
mod desk;
pub mod grants;
pub mod http;
pub mod page;
pub mod redirect;
pub mod secrets;
mod tokens;

pub use address::PublicUrl;
pub use authority::{Authority, Ttls};

use axum::Router;
use axum::routing::{any, get, post};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// What `--public-url` and its companions configure.
#[derive(Clone, Debug)]
pub struct OAuthOptions {
    /// `--public-url`.
    pub public_url: String,
    /// `--oauth-redirect-allow` (exact URIs, repeatable).
    pub redirect_allow: Vec<String>,
    /// Lifetimes (shortened only by test flags).
    pub ttls: Ttls,
}

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
        }
    }
}

impl From<address::PublicUrlError> for OAuthError {
    fn from(e: address::PublicUrlError) -> OAuthError {
        OAuthError::PublicUrl(e.0)
    }
}

/// The running authorization server, shared by its routes and the `/mcp` guard.
#[derive(Debug)]
pub struct OAuth {
    /// The public address.
    pub public: PublicUrl,
    /// The static MCP token: the admin API's credential.
    pub(crate) static_token: String,
    /// The body deadline of every OAuth request (the edge's).
    pub(crate) body_read_timeout_ms: u64,
    authority: Mutex<Authority>,
    /// `DIR/oauth.lock`, held for the daemon's life.
    _lock: File,
}

impl OAuth {
    /// Parses the options, takes the lock and loads `dir`'s grants.
    pub fn start(
        options: &OAuthOptions,
        dir: &Path,
        static_token: &str,
        body_read_timeout_ms: u64,
    ) -> Result<OAuth, OAuthError> {
        let public = PublicUrl::parse(&options.public_url)?;
        if let Some(bad) = options.redirect_allow.iter().find(|u| redirect::parse(u).is_none()) {
            return Err(OAuthError::RedirectAllow(bad.clone()));
        }
        let lock = grants::lock(dir)?;
        let file = grants::load(dir)?;
        tracing::info!(
            issuer = %public.issuer(),
            clients = file.clients.len(),
            grants = file.grants.len(),
            "OAuth on: grants loaded"
        );
        let authority =
            Authority::new(public.clone(), options.redirect_allow.clone(), options.ttls, dir.to_path_buf(), file);
        Ok(OAuth {
            public,
            static_token: static_token.to_string(),
            body_read_timeout_ms,
            authority: Mutex::new(authority),
            _lock: lock,
        })
    }

    /// The authority, locked (a poisoned lock is taken over: the state is plain data).
    pub fn authority(&self) -> MutexGuard<'_, Authority> {
        self.authority.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The resource server's check of a bearer token that is not the static one.
    pub fn access_ok(&self, token: &str) -> bool {
        self.authority().access_ok(token, now_ms())
    }

    /// The 401 challenge for the public host (RFC 9728 §5.1, RFC 6750 §3).
    pub fn challenge(&self, token_sent: bool) -> String {
        let error = if token_sent { ", error=\"invalid_token\"" } else { "" };
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"{}\"{error}",
            self.public.resource_metadata(),
            authority::SCOPE_MCP
        )
    }

    /// The OAuth routes, at the root and again under the public prefix, if any.
    pub fn router(self: &Arc<OAuth>) -> Router {
        let prefix = self.public.prefix.clone();
        let mut routes = Router::new()
            .route("/.well-known/oauth-protected-resource", get(http::resource_metadata))
            .route("/.well-known/oauth-protected-resource/mcp", get(http::resource_metadata))
            .route("/.well-known/oauth-authorization-server", get(http::server_metadata))
            .route("/oauth/register", post(http::register))
            .route("/oauth/authorize", get(http::authorize))
            .route("/oauth/consent", get(http::consent))
            .route("/oauth/token", post(http::token))
            .route("/oauth/revoke", post(http::revoke))
            .route("/oauth/admin/{verb}", any(admin::admin));
        if !prefix.is_empty() {
            // RFC 9728 and RFC 8414 put the well-known segment before the path.
            routes = routes
                .route(&format!("/.well-known/oauth-protected-resource{prefix}/mcp"), get(http::resource_metadata))
                .route(&format!("/.well-known/oauth-authorization-server{prefix}"), get(http::server_metadata));
        }
        let routes = routes.with_state(self.clone());
        if prefix.is_empty() { routes } else { routes.clone().nest(&prefix, routes) }
    }
}

/// Whether `path` (with the public prefix already removed) is an OAuth route that
/// needs no bearer token (metadata and the endpoints; the admin API checks its own).
pub fn is_open_path(path: &str) -> bool {
    path.starts_with("/.well-known/") || path.starts_with("/oauth/")
}

/// Origins of the browser-side MCP clients accepted when OAuth is on.
pub const CLIENT_ORIGINS: [&str; 3] = ["https://chatgpt.com", "https://claude.ai", "https://claude.com"];

/// What the `/mcp` guard asks of the authorization server: its public host and clients'
/// origins, its own routes (open), its access tokens and the 401 challenge.
impl edge::guard::AccessTokens for OAuth {
    fn public_host(&self) -> &str {
        &self.public.host
    }

    fn client_origins(&self) -> Vec<String> {
        CLIENT_ORIGINS.iter().map(|o| o.to_string()).collect()
    }

    fn is_own_route(&self, path: &str) -> bool {
        let prefix = self.public.prefix.as_str();
        let path = match path.strip_prefix(prefix) {
            Some(rest) if !prefix.is_empty() && rest.starts_with('/') => rest,
            _ => path,
        };
        is_open_path(path)
    }

    fn accepts(&self, token: &str) -> bool {
        self.access_ok(token)
    }

    fn challenge(&self, token_sent: bool) -> String {
        OAuth::challenge(self, token_sent)
    }
}

/// Wall-clock time, Unix milliseconds (token lifetimes outlive restarts).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

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
