//! The daemon's network edge: the accept loop and every connection's limits, for every
//! route on the listener (`/mcp`, `/executor`, and whatever is mounted next to them), and
//! the guard in front of `/mcp`. It knows HTTP, not what is served: the routes come from
//! the daemon's composition root, the OAuth server plugs into the guard through
//! [`guard::AccessTokens`] and builds on [`headers`] and [`read_body`].
//!
//! # Layout
//! - `limits.rs`: [`EdgeLimits`] (header read, idle and body timeouts, connection caps,
//!   trusted proxies), their defaults (`docs/limits.md`) and [`EdgeLimits::validate`].
//! - `accept.rs`: [`bind`], the listener with a deep backlog; [`serve`], the accept loop on hyper's HTTP/1 connection builder (upgrades
//!   on), the `503` when every place is established, summaries of refusals, sheddings and
//!   timeouts, graceful shutdown.
//! - `gate.rs`: the pools: every connection pending until its route [`establish`]es it
//!   ([`Standing`]); the longest idle pending one shed for a new one when full; the
//!   per-address cap for client addresses only.
//! - `activity.rs`: [`Activity`], what moves on a connection (last byte, requests in
//!   flight, requests being [`answering`]).
//! - `idle.rs`: [`EdgeIo`], the socket with the idle timeout (paused while a request is
//!   being answered, kept across a WebSocket upgrade) that fails once shed.
//! - `body.rs`: [`read_body`], a body read whole within a deadline and a cap (framing
//!   errors are 4xx).
//! - `guard.rs`: [`guard::Guard`], the `/mcp` middleware: Host and Origin validation
//!   (DNS-rebinding protection), the bearer token (the static one, or an access token of
//!   [`guard::AccessTokens`]), the body cap, malformed JSON as JSON-RPC errors.
//! - `headers.rs`: what every route's own caller checks read: host names of `Host` and
//!   `Origin`, loopback names, the bearer token, a constant-time comparison.
//!
//! Architecture Invariant: every connection on the listener is admitted under the caps and
//! read under the timeouts; no route is served around [`serve`]; only a connection no
//! route has established is ever shed.

mod accept;
mod activity;
mod body;
mod gate;
pub mod guard;
pub mod headers;
mod idle;
mod limits;

pub use accept::{bind, serve};
pub use activity::{Activity, Answering, answering};
pub use body::{BodyError, read_body};
pub use gate::{Standing, establish};
pub use idle::{EdgeIo, IdleTimeout, Shed};
pub use limits::{
    BODY_READ_TIMEOUT_MS_DEFAULT, CONNECTIONS_MAX_DEFAULT, CONNECTIONS_PER_IP_MAX_DEFAULT, EdgeLimits,
    HEADER_READ_TIMEOUT_MS_DEFAULT, IDLE_TIMEOUT_MS_DEFAULT, LISTEN_BACKLOG, LOG_SUMMARY_INTERVAL_MS, LimitsError,
    PENDING_CONNECTIONS_MAX_DEFAULT, PENDING_SHED_AGE_MIN_MS,
};
