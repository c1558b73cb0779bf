//! A small OAuth 2.1 authorization server beside `/mcp`, on only with `--public-url`:
//! for ChatGPT and other clients that cannot send the static bearer token. It builds on
//! the `edge` crate (header helpers, body reads) and plugs into its `/mcp` guard through
//! [`edge::guard::AccessTokens`]; the edge never depends on it.
//!
//! # Layout
//! - `server.rs`: [`OAuth`], the running server (options, grants loaded from their
//!   backend), shared by its routes, the guard and the bridge's operator channel.
//! - `routes.rs`: the router (at the root and under the public prefix) and its open paths.
//! - `resource.rs`: what the `/mcp` guard asks ([`edge::guard::AccessTokens`] for [`OAuth`]).
//! - `http.rs`: the endpoints (metadata, register, authorize, consent, token, revoke).
//! - `form.rs`: form and query decoding and encoding.
//! - `page.rs`: the consent and error pages.
//! - `admin.rs`: the loopback admin API (`orchestrator oauth …`).
//! - `desk.rs`: the same decisions for the executor bridge's operator channel (the
//!   extension's dashboard), the bridge's `GrantDesk`.
//! - `authority.rs`: registration, authorization requests, the operator's decision, codes.
//! - `tokens.rs`: code exchange (a replayed code revokes the grant it produced), refresh
//!   rotation with reuse detection, revocation, checks.
//! - `rate.rs`: the per-client rate limits of `/oauth/token` and `/oauth/authorize`.
//! - `client_auth.rs`: the refusal of client authentication a public client cannot have.
//! - `grants.rs`: the durable state (clients, grants, token hashes) behind
//!   [`GrantsBackend`]: `DIR/oauth-grants.json` ([`FileGrants`], atomic, 0600), or the
//!   database (the daemon's backend); the note saying it is kept elsewhere.
//! - `redirect.rs`: redirect URIs, exact-parsed, against the allowlist.
//! - `secrets.rs`: random tokens and codes, SHA-256, PKCE S256, the human code.
//! - `offline.rs`: `oauth list|revoke` on the grants file when no daemon runs.
//! - `cimd.rs`: the seam for Client ID Metadata Documents.
//! - `error.rs`: [`OAuthError`].
//!
//! The public address itself ([`PublicUrl`]) is the `address` crate's.
//!
//! Architecture Invariant: no token, code or verifier is written anywhere but as its
//! SHA-256, and none appears in a log line; the server stores and logs ids only.

pub mod admin;
pub mod authority;
pub mod cimd;
mod client_auth;
mod desk;
mod error;
pub mod form;
pub mod grants;
pub mod http;
mod offline;
pub mod page;
pub mod rate;
pub mod redirect;
mod resource;
mod routes;
pub mod secrets;
mod server;
mod tokens;

pub use address::PublicUrl;
pub use authority::{Authority, Ttls};
pub use error::OAuthError;
pub use grants::{FileGrants, GrantsBackend, GrantsFile};
pub use offline::{offline_list, offline_revoke};
pub use resource::CLIENT_ORIGINS;
pub use routes::is_open_path;
pub use server::{OAuth, OAuthOptions, now_ms};
