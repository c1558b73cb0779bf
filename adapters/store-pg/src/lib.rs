//! The Postgres store: the runtime's [`runtime::Store`] seam on a PostgreSQL database
//! (issue 32, `docs/scale-out.md`), for a daemon whose state must outlive its machine.
//! Records are stored as the fjall store stores them (`store::key`, `store::envelope`),
//! as `bytea` rows.
//!
//! # Layout
//! - `pg_store.rs`: [`PgStore`], the [`runtime::Store`] implementation, and [`Options`].
//! - `client.rs`: the client thread that owns the connection; the store's methods send
//!   it requests over a std channel and wait.
//! - [`lease`]: the lease's expiry: [`lease::Keeper`] renews a leader's lease, and
//!   [`lease::LeaseClient`] lets a standby read it.
//! - [`blobs`]: [`blobs::BlobClient`], small named states kept whole (the daemon's OAuth
//!   grants), each write fenced by the writer's epoch.
//! - `url.rs`: connection strings parsed (connecting bounded) and named without the
//!   password.
//! - `tls.rs`: TLS to the database (`sslmode=require`, always verified; `sslrootcert`).
//! - [`sql`]: every statement the store sends.
//! - `verify.rs`: [`verify`], `store verify` on Postgres: one read-only snapshot, every
//!   row checked, nothing changed, no lease taken.
//! - `error.rs`: [`Error`], the one error enum, with stable codes (`PG_FENCED`, ...).
//! - `test_server.rs` (feature `test-server`): a throwaway PostgreSQL for tests.
//!
//! Architecture Invariant: `commit` returns only after the server acknowledged the
//! transaction holding every record of every batch given to it, with `synchronous_commit`
//! on (so the commit's WAL is flushed first); a batch is applied whole or not at all.
//!
//! Architecture Invariant: every commit is fenced. Opening takes the next epoch from the
//! lease row in a committed transaction; every commit's transaction first updates that row
//! on the condition that it still holds the store's epoch, and holds its lock until the
//! transaction ends. So a writer paused or cut off before a newer one opened can never
//! commit after it did: its fence updates no row and it fails with [`Error::Fenced`],
//! writing nothing.
//!
//! Architecture Invariant: a lease is taken only when it lapsed by the database's clock
//! (`now()`), or by its own holder; the daemons' clocks never decide it. A leader that
//! cannot renew for a whole time to live stops serving.
//!
//! Architecture Invariant: a stored row that fails its magic, version, checksum, key or
//! table check is reported with its key; it is never skipped.

pub mod blobs;
mod client;
mod error;
pub mod lease;
mod pg_store;
pub mod sql;
#[cfg(feature = "test-server")]
pub mod test_server;
mod tls;
mod url;
mod verify;

pub use error::{Corruption, Error, StoredKey};
pub use pg_store::{Options, PgStore, TABLE_EVENTS, TABLE_STATE, decode_row, is_postgres_url};
pub use url::target_name;
pub use verify::{PROBLEMS_LISTED_MAX, PgVerifyReport, VERIFY_STATEMENT_MS_MAX, verify};

/// How long connecting may take by default, in milliseconds.
pub const CONNECT_TIMEOUT_MS_DEFAULT: u64 = 10_000;
/// How long one request to the database may take by default, in milliseconds, before
/// the store poisons itself (and the daemon exits to recover).
pub const REQUEST_TIMEOUT_MS_DEFAULT: u64 = 60_000;
/// How long a session may sit idle inside a transaction, in milliseconds, before the
/// server ends it (`idle_in_transaction_session_timeout`): a writer stopped in the middle
/// of a commit releases the lease row's lock after this, so a newer writer can open.
pub const IDLE_IN_TRANSACTION_MS_MAX: u64 = 5_000;
/// How long opening waits for the lease row's lock by default, in milliseconds: longer
/// than [`IDLE_IN_TRANSACTION_MS_MAX`], so a stopped former writer's transaction is
/// ended first.
pub const LEASE_WAIT_MS_MAX: u64 = 60_000;
/// How long a lease lasts without renewal by default, in milliseconds (by the database's
/// clock): a leader that stops renewing for this long loses it to a standby.
pub const LEASE_TTL_MS_DEFAULT: u64 = 10_000;
/// How often a leader renews its lease by default, in milliseconds: several renewals fit in
/// one [`LEASE_TTL_MS_DEFAULT`], so one slow round trip does not lose it.
pub const LEASE_RENEW_MS_DEFAULT: u64 = 2_000;
/// How often a standby reads the lease by default, in milliseconds: a lapsed lease is
/// taken over at most this long after it lapsed (plus the takeover itself).
pub const LEASE_POLL_MS_DEFAULT: u64 = 1_000;
