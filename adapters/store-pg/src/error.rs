//! [`Error`], the Postgres store's one error enum, with stable codes.

use engine::RecordKey;
pub use store::{Corruption, StoredKey};

/// What went wrong in the Postgres store. After any error the store is poisoned: every
/// later call fails with [`Error::Poisoned`], and the daemon must exit and recover by
/// opening the store again (which takes a new epoch).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection string does not parse, or names something the store cannot use.
    #[error("the Postgres store's address is not usable: {problem}")]
    Config {
        /// What is wrong with it (never the password).
        problem: String,
    },
    /// The database could not be reached or refused the connection.
    #[error(
        "cannot connect to Postgres at {target}: {}; check that the server runs, that the address, user and database are right and that this host may connect (pg_hba.conf)",
        describe(source)
    )]
    Connect {
        /// Host, port, user and database (never the password).
        target: String,
        /// The client's error.
        #[source]
        source: postgres::Error,
    },
    /// The store's tables could not be made, or were made by a newer build.
    #[error("the Postgres store's tables at {target} are not usable: {detail}")]
    Schema {
        /// Host, port, user and database.
        target: String,
        /// What is wrong.
        detail: String,
    },
    /// The server would acknowledge commits it has not made durable (`fsync` off).
    #[error(
        "the Postgres server at {target} runs with {setting} = {value}: a commit it acknowledges could be lost in a crash, and the store promises the opposite; turn it on"
    )]
    NotDurable {
        /// Host, port, user and database.
        target: String,
        /// The setting.
        setting: &'static str,
        /// Its value.
        value: String,
    },
    /// Another store opened the same database since this one did, and took a newer epoch:
    /// this one may not write any more. Nothing of the refused commit is visible.
    #[error(
        "this store's epoch {mine} was fenced off by a newer writer (epoch {current}) on the same database: another daemon took over; nothing of this commit was written"
    )]
    Fenced {
        /// This store's epoch.
        mine: u64,
        /// The epoch the lease holds now.
        current: u64,
    },
    /// Another daemon holds a live lease on the database: this one must wait as a standby
    /// (nothing was taken or written).
    #[error(
        "another daemon ({holder}) leads this database with epoch {epoch}, its lease live for {expires_in_ms} ms more; the leader is {leader_url}"
    )]
    LeaseHeld {
        /// The leader's daemon id.
        holder: String,
        /// The URL the leader serves at (empty when it did not say).
        leader_url: String,
        /// The leader's epoch.
        epoch: u64,
        /// How long its lease lasts without renewal, in ms, by the database's clock.
        expires_in_ms: u64,
    },
    /// The leader could not renew its lease for longer than the lease lasts: a standby may
    /// have taken over, so this daemon stops serving (self-fencing).
    #[error(
        "the lease of epoch {epoch} could not be renewed for {waited_ms} ms, longer than it lasts ({ttl_ms} ms); another daemon may have taken over, so this one stops (last failure: {last_error})"
    )]
    LeaseLost {
        /// This daemon's epoch.
        epoch: u64,
        /// How long since the last renewal that succeeded began, in ms.
        waited_ms: u64,
        /// The lease's time to live, in ms.
        ttl_ms: u64,
        /// The last renewal's failure.
        last_error: String,
    },
    /// A statement failed (the connection dropped, the server refused, a serialization
    /// failure). What was acknowledged before is committed.
    #[error(
        "Postgres failed while {during}: {}; the store is poisoned: exit and restart to recover (acknowledged writes are committed)",
        describe(source)
    )]
    Query {
        /// What the store was doing.
        during: &'static str,
        /// The client's error.
        #[source]
        source: postgres::Error,
    },
    /// The database did not answer within the store's limit.
    #[error(
        "Postgres did not answer within {waited_ms} ms while {during}; the store is poisoned: exit and restart to recover"
    )]
    Timeout {
        /// What the store was doing.
        during: &'static str,
        /// How long the store waited, in milliseconds.
        waited_ms: u64,
    },
    /// A stored row is not a valid record. It is never skipped: recovery stops here.
    #[error("corrupt row in {table} at key {key}: {problem}")]
    Corrupt {
        /// The table it is in.
        table: &'static str,
        /// Its key, as stored.
        key: StoredKey,
        /// What is wrong with it.
        problem: Corruption,
    },
    /// A record could not be encoded (nothing was written).
    #[error("cannot encode record {key:?}: {problem}")]
    Encode {
        /// The record's key.
        key: RecordKey,
        /// Why.
        problem: String,
    },
    /// The thread that owns the connection could not be started.
    #[error("cannot start the Postgres store's client thread: {source}")]
    Thread {
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The thread that owns the connection is gone (it panicked).
    #[error("the Postgres store's client thread is gone; exit and restart to recover")]
    ClientGone,
    /// An earlier failure poisoned the store; it accepts no more work.
    #[error("the Postgres store is poisoned by an earlier failure ({cause}); exit and restart to recover")]
    Poisoned {
        /// The first failure.
        cause: String,
    },
}

impl Error {
    /// The stable code of this error, for logs, exit messages and tests.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Config { .. } => "PG_CONFIG",
            Error::Connect { .. } => "PG_CONNECT",
            Error::Schema { .. } => "PG_SCHEMA",
            Error::NotDurable { .. } => "PG_NOT_DURABLE",
            Error::Fenced { .. } => "PG_FENCED",
            Error::LeaseHeld { .. } => "PG_LEASE_HELD",
            Error::LeaseLost { .. } => "PG_LEASE_LOST",
            Error::Query { .. } => "PG_QUERY",
            Error::Timeout { .. } => "PG_TIMEOUT",
            Error::Corrupt { .. } => "PG_CORRUPT_RECORD",
            Error::Encode { .. } => "PG_ENCODE",
            Error::Thread { .. } => "PG_THREAD",
            Error::ClientGone => "PG_CLIENT_GONE",
            Error::Poisoned { .. } => "PG_POISONED",
        }
    }
}

/// A client error in full: the server's message, code, detail and hint for an error the
/// server sent (the client's own `Display` says only "db error"), else the client's words.
pub(crate) fn describe(error: &postgres::Error) -> String {
    let Some(db) = error.as_db_error() else {
        return match std::error::Error::source(error) {
            Some(source) if !error.to_string().contains(&source.to_string()) => format!("{error}: {source}"),
            _ => error.to_string(),
        };
    };
    let mut text = format!("{} {}: {}", db.severity(), db.code().code(), db.message());
    if let Some(detail) = db.detail() {
        text.push_str(&format!(" ({detail})"));
    }
    if let Some(hint) = db.hint() {
        text.push_str(&format!("; hint: {hint}"));
    }
    text
}
