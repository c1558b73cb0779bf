//! The running authorization server, [`OAuth`]: started from `--public-url` and its
//! companions on the grants' backend (the data directory's file under its lock, or the
//! database), shared by its routes, the `/mcp` guard and the bridge's operator channel.

use crate::authority::{self, Authority, Ttls};
use crate::error::OAuthError;
use crate::grants::GrantsBackend;
use crate::redirect;
use address::PublicUrl;
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
}

impl OAuthOptions {
    /// The public address, if the options are usable (checked before anything starts).
    pub fn validate(&self) -> Result<PublicUrl, OAuthError> {
        let public = PublicUrl::parse(&self.public_url)?;
        if let Some(bad) = self.redirect_allow.iter().find(|u| redirect::parse(u).is_none()) {
            return Err(OAuthError::RedirectAllow(bad.clone()));
        }
        Ok(public)
    }
}

impl OAuth {
    /// Checks the options and loads the grants from `backend`, which keeps them from then on.
    pub fn start(
        options: &OAuthOptions,
        mut backend: Box<dyn GrantsBackend>,
        static_token: &str,
        body_read_timeout_ms: u64,
    ) -> Result<OAuth, OAuthError> {
        let public = options.validate()?;
        let file = backend.load()?;
        tracing::info!(
            issuer = %public.issuer(),
            clients = file.clients.len(),
            grants = file.grants.len(),
            "OAuth on: grants loaded"
        );
        let authority = Authority::new(public.clone(), options.redirect_allow.clone(), options.ttls, backend, file);
        Ok(OAuth {
            public,
            static_token: static_token.to_string(),
            body_read_timeout_ms,
            authority: Mutex::new(authority),
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
