//! The running authorization server, [`OAuth`]: started from `--public-url` and its
//! companions (the lock and the grants file taken), shared by its routes, the `/mcp`
//! guard and the bridge's operator channel.

use crate::authority::{self, Authority, Ttls};
use crate::error::OAuthError;
use crate::{grants, redirect};
use address::PublicUrl;
use std::fs::File;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

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
}

/// Wall-clock time, Unix milliseconds (token lifetimes outlive restarts).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
