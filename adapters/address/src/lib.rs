//! Where a running daemon is and how to reach it: what the daemon (`orchestrator serve`)
//! writes, listens on and answers, and what its commands (`status`, `start`, `doctor`,
//! `worker`, `oauth`, `executor-cli`) read to find it. One crate below both sides, so
//! that the daemon and its command-line client agree without depending on each other.
//!
//! # Layout
//! - `dir.rs`: the default data directory, the file where `serve` records its MCP URL,
//!   the default listen address, and [`daemon_address`] (a command's way to the daemon).
//! - `token.rs`: the MCP bearer token: flag, environment, or `DIR/mcp-token` (generated
//!   from the OS CSPRNG on first start, 0600).
//! - `public_url.rs`: [`PublicUrl`], `--public-url` parsed strictly: the OAuth issuer and
//!   the URLs derived from it, which the daemon serves and `doctor` checks.
//! - `health.rs`: [`Health`], the answer of `GET /health` (served by the daemon, read by
//!   `doctor`).
//! - `pair.rs`: pairing on the wire: `/pair` and `/pair/code`, the one-time code's
//!   printed form, the JSON the daemon and `orchestrator pair`/`executor-cli --pair` exchange.
//! - `config.rs`: the configuration file `orchestrator setup` writes and `serve` and
//!   `doctor` read ([`config::Config`]), its place, and [`config::ConfigError`] naming the
//!   file, the line and the key.
//! - `notify_target.rs`: a notification target parsed once
//!   (`[json:|text:|slack:|discord:]http(s)://HOST[:PORT][/PATH]`), for `serve --notify`,
//!   `setup`, the configuration file and `doctor` alike.
//! - `follow.rs`: following the leader among several daemon URLs ([`follow::Follow`]): a
//!   standby's `NOT_LEADER` answer read, the next URL chosen, at most a few hops.
//! - `tls.rs`: the TLS client of our outgoing connections (`https://` notifications,
//!   `wss://` executors): rustls with ring, Mozilla's roots plus a CA file's.
//! - `private.rs`: the data directory kept private (`0700`, files `0600`): made so at the
//!   daemon's start, checked by `doctor`.

pub mod config;
mod dir;
pub mod follow;
mod health;
pub mod notify_target;
pub mod pair;
pub mod private;
mod public_url;
pub mod tls;
pub mod token;

pub use dir::{LISTEN_DEFAULT, URL_FILE_NAME, daemon_address, default_data_dir};
pub use health::{
    ExecutorKindsView, HEALTH_PATH, Health, NotificationFailureView, NotificationsView, RefusedHelloView,
};
pub use public_url::{PublicUrl, PublicUrlError};
