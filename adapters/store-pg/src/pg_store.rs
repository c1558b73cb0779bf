//! [`PgStore`]: the runtime's store seam on a PostgreSQL database, through the client
//! thread (`client.rs`), every commit fenced by the epoch its open took.

use crate::client::{self, Connect, Loaded, Opened, Request, Rows};
use crate::error::{Corruption, Error, StoredKey};
use crate::url::parse_url;
use engine::event::Event;
use engine::ids::Cursor;
use engine::{Batch, Record, RecordKey};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// The table of every record but events (for messages).
pub const TABLE_STATE: &str = "orchestrator_state";
/// The table of the event log (for messages).
pub const TABLE_EVENTS: &str = "orchestrator_events";

/// Knobs of a [`PgStore`].
#[derive(Clone, Debug)]
pub struct Options {
    /// Newest events `load` returns (older ones stay readable through `events_after`),
    /// the same bound as the fjall store's `Options::events_load_count_max`.
    pub events_load_count_max: usize,
    /// How long connecting may take, in milliseconds, unless the connection string sets
    /// `connect_timeout` itself.
    pub connect_timeout_ms: u64,
    /// How long one request (a load, a commit, a page of events) may take before the store
    /// gives up and poisons itself, in milliseconds: a database that stopped answering
    /// (a partition) fails the daemon instead of hanging it.
    pub request_timeout_ms: u64,
    /// How long opening waits for a commit in flight of the previous writer to release the
    /// lease row, in milliseconds.
    pub lease_wait_ms: u64,
    /// Who holds the lease: the daemon's id, which survives its restarts (so a restarted
    /// leader takes its own lease back at once). Default: the host name and the process id.
    pub holder: Option<String>,
    /// The URL the holder serves at, written into the lease row so that standbys can name
    /// the leader. Default: empty.
    pub holder_url: String,
    /// How long the lease lasts without renewal, in ms, by the database's clock
    /// ([`crate::LEASE_TTL_MS_DEFAULT`]); the holder renews it with [`crate::lease::Keeper`].
    pub lease_ttl_ms: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            events_load_count_max: engine::limits::EVENTS_RETAINED_COUNT_DEFAULT,
            connect_timeout_ms: crate::CONNECT_TIMEOUT_MS_DEFAULT,
            request_timeout_ms: crate::REQUEST_TIMEOUT_MS_DEFAULT,
            lease_wait_ms: crate::LEASE_WAIT_MS_MAX,
            holder: None,
            holder_url: String::new(),
            lease_ttl_ms: crate::LEASE_TTL_MS_DEFAULT,
        }
    }
}

/// The Postgres store: records in two tables, one fenced transaction per group commit.
///
/// Contract refinement (as the fjall store's): `load` returns every non-event record and
/// only the newest [`Options::events_load_count_max`] events; `events_after` pages
/// through all of them. `load` and `commit` fail with [`Error::Fenced`] once another
/// store opened the same database; `events_after` (a read of history) does not.
pub struct PgStore {
    /// Host, port, user and database (never the password), for messages.
    target: String,
    /// Requests to the client thread; `None` once dropped (which ends the thread).
    requests: Option<Sender<Request>>,
    /// The client thread, joined on drop unless it stopped answering.
    thread: Option<JoinHandle<()>>,
    /// The epoch this store's open took.
    epoch: u64,
    /// The commit counter after this store's newest commit.
    commits: u64,
    /// Bounds on what a load returns and how long a request may take.
    options: Options,
    /// The first failure; once set, every call fails with [`Error::Poisoned`].
    poisoned: OnceLock<String>,
    /// Set when a request timed out: the thread may be stuck in the network, so dropping
    /// the store does not wait for it.
    hung: AtomicBool,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.target)
            .field("epoch", &self.epoch)
            .field("poisoned", &self.poisoned.get())
            .finish()
    }
}

/// Whether a `--store` value names a Postgres database (`postgres://` or `postgresql://`).
pub fn is_postgres_url(value: &str) -> bool {
    value.starts_with("postgres://") || value.starts_with("postgresql://")
}

impl PgStore {
    /// Opens the store at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?...]`)
    /// with default options.
    pub fn open(url: &str) -> Result<PgStore, Error> {
        PgStore::open_with(url, Options::default())
    }

    /// Opens the store: connects, makes the tables in an empty database, and takes the
    /// next epoch, which fences off every store opened before this one.
    pub fn open_with(url: &str, options: Options) -> Result<PgStore, Error> {
        assert!(options.events_load_count_max > 0, "a store must load at least the newest event");
        let target = parse_url(url, options.connect_timeout_ms)?;
        let holder = options.holder.clone().unwrap_or_else(default_holder);
        let connect = Connect {
            target: target.clone(),
            holder,
            holder_url: options.holder_url.clone(),
            lease_ttl_ms: options.lease_ttl_ms,
            lease_wait_ms: options.lease_wait_ms,
        };
        let (ready_tx, ready_rx) = mpsc::channel();
        let (requests, requests_rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("store-pg".into())
            .spawn(move || client::run(connect, ready_tx, requests_rx))
            .map_err(|source| Error::Thread { source })?;
        let open_wait = Duration::from_millis(
            options.connect_timeout_ms.saturating_add(options.lease_wait_ms).saturating_add(options.request_timeout_ms),
        );
        let opened: Opened = match ready_rx.recv_timeout(open_wait) {
            Ok(Ok(opened)) => opened,
            Ok(Err(error)) => {
                let _ = thread.join();
                return Err(error);
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(Error::Timeout { during: "opening", waited_ms: open_wait.as_millis() as u64 });
            }
            Err(RecvTimeoutError::Disconnected) => {
                let _ = thread.join();
                return Err(Error::ClientGone);
            }
        };
        Ok(PgStore {
            target: target.name,
            requests: Some(requests),
            thread: Some(thread),
            epoch: opened.epoch,
            commits: opened.commits,
            options,
            poisoned: OnceLock::new(),
            hung: AtomicBool::new(false),
        })
    }

    /// The epoch this store took when it opened (the lease's, until another store opens).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The commit counter after this store's newest commit (or as opened).
    pub fn commits(&self) -> u64 {
        self.commits
    }

    /// Host, port, user and database, for messages.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Whether an earlier failure poisoned the store.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.get().is_some()
    }

    /// Records the first failure and hands the error back.
    fn fail(&self, error: Error) -> Error {
        let _ = self.poisoned.set(error.to_string());
        error
    }

    /// Sends a request to the client thread and waits for its answer, at most
    /// [`Options::request_timeout_ms`]. Any error poisons the store.
    fn ask<T>(
        &self,
        during: &'static str,
        request: impl FnOnce(Sender<Result<T, Error>>) -> Request,
    ) -> Result<T, Error> {
        if let Some(cause) = self.poisoned.get() {
            return Err(Error::Poisoned { cause: cause.clone() });
        }
        let Some(requests) = &self.requests else { return Err(self.fail(Error::ClientGone)) };
        let (reply, answer) = mpsc::channel();
        if requests.send(request(reply)).is_err() {
            return Err(self.fail(Error::ClientGone));
        }
        let waited_ms = self.options.request_timeout_ms;
        match answer.recv_timeout(Duration::from_millis(waited_ms)) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(self.fail(error)),
            Err(RecvTimeoutError::Timeout) => {
                self.hung.store(true, Ordering::Relaxed);
                Err(self.fail(Error::Timeout { during, waited_ms }))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.fail(Error::ClientGone)),
        }
    }

    /// Decodes what a load read into records, in the fjall store's order: state records
    /// by key, each worker with its spec, then the newest events oldest first.
    fn records(&self, loaded: Loaded) -> Result<Vec<Record>, Error> {
        let mut records = Vec::with_capacity(loaded.state.len() + loaded.events_newest_first.len());
        let mut specs = store::specs::SpecRejoin::default();
        for (key, value) in &loaded.state {
            let mut record = decode_row(TABLE_STATE, key, value).map_err(|e| self.fail(e))?;
            specs.rejoin(&mut record);
            records.push(record);
        }
        for (key, value) in loaded.events_newest_first.iter().rev() {
            records.push(decode_row(TABLE_EVENTS, key, value).map_err(|e| self.fail(e))?);
        }
        Ok(records)
    }
}

/// Decodes one stored row of `table`, checking its envelope, that it is the record of its
/// key, and that it belongs in that table. Never skipped, never a panic.
pub fn decode_row(table: &'static str, key: &[u8], value: &[u8]) -> Result<Record, Error> {
    let corrupt = |problem| Error::Corrupt { table, key: StoredKey(key.to_vec()), problem };
    let record = match store::envelope::decode(key, value) {
        Ok(record) => record,
        Err(store::Error::Corrupt { problem, .. }) => return Err(corrupt(problem)),
        Err(other) => return Err(corrupt(Corruption::Payload { detail: other.to_string() })),
    };
    if store::key::is_event(record.key()) != (table == TABLE_EVENTS) {
        return Err(corrupt(Corruption::WrongKeyspace));
    }
    Ok(record)
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // Closing the channel ends the thread after the request in hand; its connection
        // closes with it. A thread stuck in the network is left behind.
        self.requests = None;
        if let Some(thread) = self.thread.take()
            && !self.hung.load(Ordering::Relaxed)
        {
            let _ = thread.join();
        }
    }
}

impl runtime::Store for PgStore {
    type Error = Error;

    fn load(&mut self) -> Result<Vec<Record>, Error> {
        let events_max = i64::try_from(self.options.events_load_count_max).unwrap_or(i64::MAX);
        let loaded = self.ask("loading", |reply| Request::Load { events_max, reply })?;
        self.records(loaded)
    }

    fn commit(&mut self, batches: &[Batch]) -> Result<(), Error> {
        if let Some(cause) = self.poisoned.get() {
            return Err(Error::Poisoned { cause: cause.clone() });
        }
        // One statement writes each table, and Postgres refuses to upsert one key twice in
        // a statement: keep the latest per key, which is what committing the batches one
        // by one would leave (as the fjall store does).
        let mut latest: BTreeMap<RecordKey, &Record> = BTreeMap::new();
        for record in batches.iter().flat_map(|b| &b.records) {
            latest.insert(record.key(), record);
        }
        if latest.is_empty() {
            return Ok(());
        }
        let (mut state, mut events) = (Rows::default(), Rows::default());
        for (key, record) in latest {
            let value = match store::envelope::encode(record) {
                Ok(value) => value,
                Err(store::Error::Encode { key, problem }) => return Err(self.fail(Error::Encode { key, problem })),
                Err(other) => return Err(self.fail(Error::Encode { key, problem: other.to_string() })),
            };
            let rows = if store::key::is_event(key) { &mut events } else { &mut state };
            rows.push(store::key::encode(key).as_bytes().to_vec(), value);
        }
        self.commits = self.ask("committing", |reply| Request::Commit { state, events, reply })?;
        Ok(())
    }

    fn events_after(&self, after: Cursor, limit: usize) -> Result<Vec<Event>, Error> {
        if after.0 == u64::MAX || limit == 0 {
            return Ok(Vec::new());
        }
        let after = store::key::encode(RecordKey::Event(after)).as_bytes().to_vec();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.ask("paging events", |reply| Request::EventsAfter { after, limit, reply })?;
        let mut events = Vec::with_capacity(rows.len());
        for (key, value) in &rows {
            match decode_row(TABLE_EVENTS, key, value).map_err(|e| self.fail(e))? {
                Record::Event(event) => events.push(event),
                // `decode_row` checked the table: only events pass.
                other => unreachable!("non-event {:?} passed the table check", other.key()),
            }
        }
        Ok(events)
    }
}

/// The host name and this process's id, for the lease row.
fn default_holder() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown host".into());
    format!("{host} pid {}", std::process::id())
}
