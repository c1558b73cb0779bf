//! The client thread: the one OS thread that owns the Postgres connection. The store's
//! methods send it a [`Request`] over a std channel and block on the answer.
//!
//! Why a thread of its own: `postgres::Client` drives a tokio runtime of its own and
//! panics inside another runtime's context, and the daemon's engine thread runs inside a
//! current-thread tokio runtime. Blocking the engine thread on the answer is what fjall's
//! fsync does too: the engine does nothing else until its batch is durable.
//!
//! The thread speaks bytes only (keys and values as the fjall store encodes them); the
//! store encodes and decodes records on the caller's side.

use crate::error::{Error, describe};
use crate::sql;
use postgres::{Client, Statement};
use std::sync::mpsc::{Receiver, Sender};

/// One stored row: its encoded key and value.
pub(crate) type KeyValue = (Vec<u8>, Vec<u8>);

/// Rows as two parallel arrays, the shape `unnest($1::bytea[], $2::bytea[])` takes.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    /// Encoded keys (`store::key`).
    pub keys: Vec<Vec<u8>>,
    /// Encoded values (`store::envelope`), one per key.
    pub values: Vec<Vec<u8>>,
}

impl Rows {
    /// Adds one row.
    pub fn push(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.keys.push(key);
        self.values.push(value);
    }
}

/// What a load read, from one snapshot.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// Every state row, in key order.
    pub state: Vec<KeyValue>,
    /// The newest events, newest first.
    pub events_newest_first: Vec<KeyValue>,
}

/// What the store asks of the client thread; each carries the channel of its answer.
pub(crate) enum Request {
    /// Everything `load` returns, after checking the epoch.
    Load {
        /// Newest events to read at most.
        events_max: i64,
        /// The answer.
        reply: Sender<Result<Loaded, Error>>,
    },
    /// One fenced transaction; answers the commit counter after it.
    Commit {
        /// State rows to upsert.
        state: Rows,
        /// Event rows to upsert.
        events: Rows,
        /// The answer.
        reply: Sender<Result<u64, Error>>,
    },
    /// A page of events after an encoded event key.
    EventsAfter {
        /// The encoded key of the last event the caller has.
        after: Vec<u8>,
        /// Events at most.
        limit: i64,
        /// The answer.
        reply: Sender<Result<Vec<KeyValue>, Error>>,
    },
}

/// What opening found: the epoch this store took and the commits made so far.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opened {
    /// This store's epoch.
    pub epoch: u64,
    /// The commit counter as opened.
    pub commits: u64,
}

/// How the client thread connects and who it says it is.
pub(crate) struct Connect {
    /// The parsed connection string (its name for messages, its TLS).
    pub target: crate::url::Target,
    /// Who holds the lease (the daemon's id), written into the lease row.
    pub holder: String,
    /// The URL the holder serves at, written into the lease row for standbys to name.
    pub holder_url: String,
    /// How long the lease lasts without renewal, in ms (by the database's clock).
    pub lease_ttl_ms: u64,
    /// How long opening waits for a commit in flight to release the lease row, in ms.
    pub lease_wait_ms: u64,
}

/// The connection and its prepared statements.
struct Conn {
    /// The connection.
    client: Client,
    /// This store's epoch, as the `bigint` the lease holds.
    epoch: i64,
    /// [`sql::FENCE`].
    fence: Statement,
    /// [`sql::CURRENT_EPOCH`].
    current_epoch: Statement,
    /// [`sql::UPSERT_STATE`].
    upsert_state: Statement,
    /// [`sql::UPSERT_EVENTS`].
    upsert_events: Statement,
    /// [`sql::LOAD_STATE`].
    load_state: Statement,
    /// [`sql::LOAD_EVENTS`].
    load_events: Statement,
    /// [`sql::EVENTS_AFTER`].
    events_after: Statement,
}

/// A statement failed while `during`.
fn query(during: &'static str) -> impl Fn(postgres::Error) -> Error {
    move |source| Error::Query { during, source }
}

/// The thread's body: connects and opens (answering `ready`), then serves requests until
/// the store drops its sender.
pub(crate) fn run(connect: Connect, ready: Sender<Result<Opened, Error>>, requests: Receiver<Request>) {
    let mut conn = match open(&connect) {
        Ok((conn, opened)) => {
            if ready.send(Ok(opened)).is_err() {
                return;
            }
            conn
        }
        Err(error) => {
            let _ = ready.send(Err(error));
            return;
        }
    };
    for request in requests {
        match request {
            Request::Load { events_max, reply } => {
                let _ = reply.send(conn.load(events_max));
            }
            Request::Commit { state, events, reply } => {
                let _ = reply.send(conn.commit(&state, &events));
            }
            Request::EventsAfter { after, limit, reply } => {
                let _ = reply.send(conn.events_after(&after, limit));
            }
        }
    }
}

/// Connects, checks durability, makes the tables if needed and takes the next epoch.
fn open(connect: &Connect) -> Result<(Conn, Opened), Error> {
    let mut client = connect.target.connect()?;
    let target = &connect.target.name;
    client.batch_execute(&sql::session_settings()).map_err(query("setting up the session"))?;
    let fsync: Option<String> =
        client.query_one(sql::SHOW_FSYNC, &[]).and_then(|row| row.try_get(0)).map_err(query("reading fsync"))?;
    if let Some(value) = fsync
        && value != "on"
    {
        return Err(Error::NotDurable { target: target.clone(), setting: "fsync", value });
    }
    let schema = |detail: String| Error::Schema { target: target.clone(), detail };
    let exist: bool = client
        .query_one(sql::TABLES_EXIST, &[])
        .and_then(|row| row.try_get(0))
        .map_err(query("looking for the tables"))?;
    {
        let mut tx = client.transaction().map_err(query("creating the tables"))?;
        tx.execute(sql::LOCK_CREATE, &[&sql::CREATE_LOCK_KEY]).map_err(query("locking table creation"))?;
        if !exist {
            tx.batch_execute(sql::CREATE).map_err(|e| schema(format!("cannot create the tables: {}", describe(&e))))?;
        }
        let format: Option<i32> = tx
            .query_opt(sql::READ_FORMAT, &[])
            .map_err(query("reading the format"))?
            .map(|row| row.try_get(0))
            .transpose()
            .map_err(query("reading the format"))?;
        if format == Some(1) {
            tx.batch_execute(sql::UPGRADE_1_TO_2)
                .map_err(|e| schema(format!("cannot upgrade the tables from format 1: {}", describe(&e))))?;
        }
        if matches!(format, Some(1 | 2)) {
            tx.batch_execute(sql::UPGRADE_2_TO_3)
                .map_err(|e| schema(format!("cannot upgrade the tables from format 2: {}", describe(&e))))?;
        }
        tx.commit().map_err(query("creating the tables"))?;
    }
    let opened = {
        let mut tx = client.transaction().map_err(query("taking the lease"))?;
        tx.batch_execute(&format!("SET LOCAL lock_timeout = {}", connect.lease_wait_ms))
            .map_err(query("taking the lease"))?;
        let ttl = i64::try_from(connect.lease_ttl_ms).unwrap_or(i64::MAX);
        let rows = tx
            .query(sql::TAKE_EPOCH, &[&connect.holder, &connect.holder_url, &ttl])
            .map_err(query("taking the lease"))?;
        let Some(row) = rows.first() else {
            // Another holder's lease is live, or the row is missing.
            let held = tx.query_opt(sql::READ_LEASE, &[]).map_err(query("reading the lease"))?;
            let Some(held) = held else {
                return Err(schema("the lease row (id 1) of orchestrator_lease is missing".into()));
            };
            let lease = crate::lease::LeaseState::from_row(&held)?;
            return Err(Error::LeaseHeld {
                holder: lease.holder,
                leader_url: lease.leader_url,
                epoch: lease.epoch,
                expires_in_ms: lease.expires_in_ms,
            });
        };
        let format: i32 = row.try_get(0).map_err(query("reading the lease"))?;
        let epoch: i64 = row.try_get(1).map_err(query("reading the lease"))?;
        let commits: i64 = row.try_get(2).map_err(query("reading the lease"))?;
        if format != sql::FORMAT {
            // The transaction rolls back when dropped: the epoch is not taken.
            return Err(schema(format!(
                "the tables are in format {format}, this build reads format {} (written by a newer build?)",
                sql::FORMAT
            )));
        }
        let (Ok(epoch_u), Ok(commits_u)) = (u64::try_from(epoch), u64::try_from(commits)) else {
            return Err(schema(format!("the lease row holds a negative epoch {epoch} or commit count {commits}")));
        };
        tx.commit().map_err(query("taking the lease"))?;
        Opened { epoch: epoch_u, commits: commits_u }
    };
    let prepare = |client: &mut Client, text: &str| client.prepare(text).map_err(query("preparing statements"));
    let conn = Conn {
        epoch: opened.epoch as i64,
        fence: prepare(&mut client, sql::FENCE)?,
        current_epoch: prepare(&mut client, sql::CURRENT_EPOCH)?,
        upsert_state: prepare(&mut client, sql::UPSERT_STATE)?,
        upsert_events: prepare(&mut client, sql::UPSERT_EVENTS)?,
        load_state: prepare(&mut client, sql::LOAD_STATE)?,
        load_events: prepare(&mut client, sql::LOAD_EVENTS)?,
        events_after: prepare(&mut client, sql::EVENTS_AFTER)?,
        client,
    };
    Ok((conn, opened))
}

/// The fenced error of a store of epoch `mine`, with the epoch the lease holds now.
fn fenced(tx: &mut postgres::Transaction<'_>, current_epoch: &Statement, mine: i64) -> Error {
    let current = tx
        .query_one(current_epoch, &[])
        .and_then(|row| row.try_get::<_, i64>(0))
        .map_or(0, |epoch| u64::try_from(epoch).unwrap_or(0));
    Error::Fenced { mine: mine as u64, current }
}

impl Conn {
    /// One transaction: the fence first, then the rows, then `COMMIT` (acknowledged by the
    /// server once durable: `synchronous_commit` is on).
    fn commit(&mut self, state: &Rows, events: &Rows) -> Result<u64, Error> {
        let mut tx = self.client.transaction().map_err(query("beginning a commit"))?;
        let counted = tx.query(&self.fence, &[&self.epoch]).map_err(query("checking the epoch"))?;
        let Some(row) = counted.first() else {
            let error = fenced(&mut tx, &self.current_epoch, self.epoch);
            let _ = tx.rollback();
            return Err(error);
        };
        let commits: i64 = row.try_get(0).map_err(query("counting the commit"))?;
        if !state.keys.is_empty() {
            tx.execute(&self.upsert_state, &[&state.keys, &state.values]).map_err(query("writing records"))?;
        }
        if !events.keys.is_empty() {
            tx.execute(&self.upsert_events, &[&events.keys, &events.values]).map_err(query("writing events"))?;
        }
        tx.commit().map_err(query("committing"))?;
        Ok(commits as u64)
    }

    /// Every state row and the newest events from one snapshot, if the epoch is still ours.
    fn load(&mut self, events_max: i64) -> Result<Loaded, Error> {
        let mut tx = self.client.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead);
        tx = tx.read_only(true);
        let mut tx = tx.start().map_err(query("beginning a load"))?;
        let current: i64 = tx
            .query_one(&self.current_epoch, &[])
            .and_then(|row| row.try_get(0))
            .map_err(query("reading the lease"))?;
        if current != self.epoch {
            let _ = tx.rollback();
            return Err(Error::Fenced { mine: self.epoch as u64, current: u64::try_from(current).unwrap_or(0) });
        }
        let pairs = |rows: Vec<postgres::Row>| -> Result<Vec<KeyValue>, Error> {
            rows.into_iter()
                .map(|row| {
                    Ok((
                        row.try_get(0).map_err(query("reading keys"))?,
                        row.try_get(1).map_err(query("reading values"))?,
                    ))
                })
                .collect()
        };
        let state = pairs(tx.query(&self.load_state, &[]).map_err(query("loading records"))?)?;
        let events = pairs(tx.query(&self.load_events, &[&events_max]).map_err(query("loading events"))?)?;
        tx.commit().map_err(query("ending a load"))?;
        Ok(Loaded { state, events_newest_first: events })
    }

    /// A page of events after `after` (an encoded event key).
    fn events_after(&mut self, after: &[u8], limit: i64) -> Result<Vec<KeyValue>, Error> {
        let rows = self.client.query(&self.events_after, &[&after, &limit]).map_err(query("paging events"))?;
        rows.into_iter()
            .map(|row| {
                Ok((row.try_get(0).map_err(query("reading keys"))?, row.try_get(1).map_err(query("reading values"))?))
            })
            .collect()
    }
}
