//! The lease's expiry (`docs/scale-out.md`, "The lease"): [`LeaseClient`], a connection of
//! its own that reads, renews and releases the lease row, and [`Keeper`], the leader's
//! thread that renews it every few seconds and says when it cannot (self-fencing).
//!
//! The store's own connection is busy with commits; the lease gets a second one so that a
//! long load or commit never delays a renewal. Expiry is always the database's `now()`.
//! Like the store's, these calls block: never make them inside a tokio runtime (a std
//! thread of their own, as [`Keeper`] does).

use crate::error::{Error, describe};
use crate::sql;
use postgres::Client;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The lease row as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseState {
    /// The epoch of the newest holder.
    pub epoch: u64,
    /// Its daemon id (empty in a database nobody opened yet).
    pub holder: String,
    /// The URL it serves at (empty when it did not say).
    pub leader_url: String,
    /// Whether its lease is live now, by the database's clock.
    pub live: bool,
    /// For how many more ms it is live (0 once lapsed).
    pub expires_in_ms: u64,
}

impl LeaseState {
    /// Reads a row of [`sql::READ_LEASE`].
    pub(crate) fn from_row(row: &postgres::Row) -> Result<LeaseState, Error> {
        let read = |e| Error::Query { during: "reading the lease", source: e };
        let epoch: i64 = row.try_get(0).map_err(read)?;
        let expires_in_ms: i64 = row.try_get(4).map_err(read)?;
        Ok(LeaseState {
            epoch: u64::try_from(epoch).unwrap_or(0),
            holder: row.try_get(1).map_err(read)?,
            leader_url: row.try_get(2).map_err(read)?,
            live: row.try_get(3).map_err(read)?,
            expires_in_ms: u64::try_from(expires_in_ms).unwrap_or(0),
        })
    }

    /// Whether a daemon with id `me` may take the lease now: it lapsed, or it is `me`'s.
    pub fn free_for(&self, me: &str) -> bool {
        !self.live || self.holder == me
    }
}

/// A connection for the lease alone (the leader's renewals, a standby's polls).
pub struct LeaseClient {
    /// The connection.
    client: Client,
    /// Host, port, user and database, for messages.
    target: String,
}

impl std::fmt::Debug for LeaseClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseClient").field("target", &self.target).finish()
    }
}

impl LeaseClient {
    /// Connects to `url` (as [`crate::PgStore::open`] does); every statement on this
    /// connection, a lock wait included, is bounded by `statement_ms`.
    pub fn connect(url: &str, statement_ms: u64) -> Result<LeaseClient, Error> {
        let target = crate::url::parse_url(url, crate::CONNECT_TIMEOUT_MS_DEFAULT)?;
        let mut client = target.connect()?;
        let target = target.name;
        client
            .batch_execute(&format!("SET statement_timeout = {statement_ms}"))
            .map_err(|source| Error::Query { during: "setting up the lease session", source })?;
        Ok(LeaseClient { client, target })
    }

    /// Host, port, user and database, for messages.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The lease as it is now.
    pub fn read(&mut self) -> Result<LeaseState, Error> {
        let row = self
            .client
            .query_opt(sql::READ_LEASE, &[])
            .map_err(|source| Error::Query { during: "reading the lease", source })?;
        let Some(row) = row else {
            return Err(Error::Schema {
                target: self.target.clone(),
                detail: "the lease row (id 1) of orchestrator_lease is missing".into(),
            });
        };
        LeaseState::from_row(&row)
    }

    /// Renews the lease of `epoch` for `ttl_ms` from the database's now; [`Error::Fenced`]
    /// when the lease holds another epoch.
    pub fn renew(&mut self, epoch: u64, ttl_ms: u64) -> Result<(), Error> {
        let (mine, ttl) = (epoch as i64, i64::try_from(ttl_ms).unwrap_or(i64::MAX));
        let rows = self
            .client
            .query(sql::RENEW, &[&mine, &ttl])
            .map_err(|source| Error::Query { during: "renewing the lease", source })?;
        if rows.is_empty() {
            let current = self.read().map(|lease| lease.epoch).unwrap_or(0);
            return Err(Error::Fenced { mine: epoch, current });
        }
        Ok(())
    }

    /// Lets the lease of `epoch` lapse now (a clean stop), if it is still that epoch's.
    pub fn release(&mut self, epoch: u64) -> Result<(), Error> {
        self.client
            .execute(sql::RELEASE, &[&(epoch as i64)])
            .map_err(|source| Error::Query { during: "releasing the lease", source })?;
        Ok(())
    }
}

/// What the keeper's thread shares with [`Keeper::check`].
#[derive(Debug)]
struct Shared {
    /// When the newest renewal that succeeded was sent (its expiry is at least a time to
    /// live after this, by any clock that runs at the database's rate).
    renewed_at: Instant,
    /// A failure that ends the lease at once (fenced).
    fatal: Option<Error>,
    /// The newest failure of a renewal, for the message when the lease is lost.
    last_error: Option<String>,
}

/// The leader's renewals: a thread that renews the lease every `renew_ms`; [`Keeper::check`]
/// says when the lease is lost (fenced, or not renewed for a whole time to live). Dropping
/// it stops the thread; [`Keeper::release`] also lets the lease lapse.
pub struct Keeper {
    /// The epoch it renews.
    epoch: u64,
    /// The lease's time to live, in ms.
    ttl_ms: u64,
    /// What the thread found.
    shared: Arc<Mutex<Shared>>,
    /// Dropped (or sent `true`: release) to stop the thread.
    stop: Option<mpsc::Sender<bool>>,
    /// The thread, joined on release.
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Keeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keeper").field("epoch", &self.epoch).field("ttl_ms", &self.ttl_ms).finish()
    }
}

impl Keeper {
    /// Starts renewing the lease of `epoch` (just taken, so counted as renewed now) on a
    /// connection of its own to `url`, every `renew_ms`, each for `ttl_ms`.
    pub fn start(url: &str, epoch: u64, ttl_ms: u64, renew_ms: u64) -> Result<Keeper, Error> {
        let shared = Arc::new(Mutex::new(Shared { renewed_at: Instant::now(), fatal: None, last_error: None }));
        let (stop, stopped) = mpsc::channel::<bool>();
        let (url, thread_shared) = (url.to_string(), shared.clone());
        // A renewal waits at most one renewal interval for the row's lock or the server.
        let statement_ms = renew_ms.max(1);
        let thread = std::thread::Builder::new()
            .name("store-pg-lease".into())
            .spawn(move || {
                let mut client = LeaseClient::connect(&url, statement_ms).ok();
                let release = loop {
                    match stopped.recv_timeout(Duration::from_millis(renew_ms)) {
                        Ok(release) => break release,
                        Err(RecvTimeoutError::Disconnected) => break false,
                        Err(RecvTimeoutError::Timeout) => {}
                    }
                    let sent = Instant::now();
                    let result = match client.as_mut() {
                        Some(c) => c.renew(epoch, ttl_ms),
                        None => LeaseClient::connect(&url, statement_ms).and_then(|mut c| {
                            let renewed = c.renew(epoch, ttl_ms);
                            client = Some(c);
                            renewed
                        }),
                    };
                    let Ok(mut shared) = thread_shared.lock() else { return };
                    match result {
                        Ok(()) => shared.renewed_at = shared.renewed_at.max(sent),
                        Err(fenced @ Error::Fenced { .. }) => {
                            shared.fatal = Some(fenced);
                            return;
                        }
                        Err(other) => {
                            shared.last_error = Some(format!("[{}] {}", other.code(), detail(&other)));
                            // Reconnect at the next renewal: the connection may be gone.
                            client = None;
                        }
                    }
                };
                if release && let Some(c) = client.as_mut() {
                    let _ = c.release(epoch);
                }
            })
            .map_err(|source| Error::Thread { source })?;
        Ok(Keeper { epoch, ttl_ms, shared, stop: Some(stop), thread: Some(thread) })
    }

    /// The epoch it renews.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// `Ok` while the lease is this daemon's; else why it is lost: [`Error::Fenced`] (a
    /// newer epoch took it) or [`Error::LeaseLost`] (not renewed for a whole time to live:
    /// a standby may take it any moment). Cheap: call it often.
    pub fn check(&self) -> Result<(), Error> {
        let Ok(mut shared) = self.shared.lock() else { return Err(Error::ClientGone) };
        if let Some(fatal) = shared.fatal.take() {
            let again = match &fatal {
                Error::Fenced { mine, current } => Error::Fenced { mine: *mine, current: *current },
                _ => Error::ClientGone,
            };
            shared.fatal = Some(again);
            return Err(fatal);
        }
        let waited_ms = shared.renewed_at.elapsed().as_millis() as u64;
        if waited_ms >= self.ttl_ms {
            return Err(Error::LeaseLost {
                epoch: self.epoch,
                waited_ms,
                ttl_ms: self.ttl_ms,
                last_error: shared.last_error.clone().unwrap_or_else(|| "none answered".into()),
            });
        }
        Ok(())
    }

    /// Stops renewing and lets the lease lapse now, so a standby takes over within its
    /// poll; waits for the thread (at most one renewal in flight).
    pub fn release(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        // Closing the channel stops the thread at its next wake; it is not joined (it may be
        // stuck in the network).
        self.stop = None;
    }
}

/// An error's words with the server's detail (the client's `Display` says "db error").
fn detail(error: &Error) -> String {
    match error {
        Error::Query { during, source } => format!("{during}: {}", describe(source)),
        other => other.to_string(),
    }
}
