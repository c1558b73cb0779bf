//! `orchestrator store verify --store postgres://...`: the Postgres store checked without
//! changing it, as [`store::verify`] checks a fjall data directory. One read-only
//! transaction at REPEATABLE READ (one snapshot, nothing locked that a running leader
//! needs, no lease taken): the lease row (format, epoch, holder, live or lapsed, commits
//! acknowledged), every row of both tables decoded and checked (envelope, checksum, key,
//! table, as a load does), each worker's spec beside it, the events' cursors without a
//! hole. Every problem is listed with its table and key (the first
//! [`PROBLEMS_LISTED_MAX`], then a count), never skipped.

use crate::error::Error;
use crate::pg_store::{TABLE_EVENTS, TABLE_STATE, decode_row};
use crate::sql;
use engine::Record;
use engine::ids::WorkerId;
use postgres::fallible_iterator::FallibleIterator;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Problems listed one per line; more are counted.
pub const PROBLEMS_LISTED_MAX: usize = 20;
/// How long any one statement of the check may take, in ms (a scan of millions of rows
/// takes seconds).
pub const VERIFY_STATEMENT_MS_MAX: u64 = 600_000;

/// What [`verify`] found.
#[derive(Debug)]
pub struct PgVerifyReport {
    /// Whether the store would start and serve everything it acknowledged.
    pub intact: bool,
    /// The findings, one sentence a line.
    pub text: String,
    /// Commits the lease row counts as acknowledged.
    pub commits: u64,
    /// State records read back.
    pub state_records: u64,
    /// Events read back.
    pub events: u64,
}

/// Reads the whole store at `url` in one read-only snapshot and says whether it is intact.
pub fn verify(url: &str) -> Result<PgVerifyReport, Error> {
    let target = crate::url::parse_url(url, crate::CONNECT_TIMEOUT_MS_DEFAULT)?;
    let mut client = target.connect()?;
    let target = target.name;
    let query = |during: &'static str| move |source| Error::Query { during, source };
    client
        .batch_execute(&format!(
            "SET statement_timeout = {VERIFY_STATEMENT_MS_MAX}; \
             BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        ))
        .map_err(query("starting the check"))?;
    let exists: bool =
        client.query_one(sql::TABLES_EXIST, &[]).and_then(|r| r.try_get(0)).map_err(query("finding the tables"))?;
    if !exists {
        return Err(Error::Schema {
            target,
            detail: "the store's tables are not there (no daemon has opened this database)".into(),
        });
    }
    let row = client.query_one(sql::VERIFY_LEASE, &[]).map_err(query("reading the lease"))?;
    let read = query("reading the lease");
    let (format, epoch, commits, holder, live): (i32, i64, i64, String, bool) = (
        row.try_get(0).map_err(read)?,
        row.try_get(1).map_err(query("reading the lease"))?,
        row.try_get(2).map_err(query("reading the lease"))?,
        row.try_get(3).map_err(query("reading the lease"))?,
        row.try_get(4).map_err(query("reading the lease"))?,
    );
    let mut text = String::new();
    let _ = writeln!(text, "store: Postgres at {target}, format {format}");
    let _ = writeln!(
        text,
        "lease: epoch {epoch}{}",
        match (holder.is_empty(), live) {
            (true, _) => ", never taken".to_string(),
            (false, true) => format!(", held by {holder}, live"),
            (false, false) => format!(", last held by {holder}, lapsed"),
        }
    );
    let _ = writeln!(text, "acknowledged: {commits} commit{}", if commits == 1 { "" } else { "s" });
    let mut problems = Problems::default();
    if format != sql::FORMAT {
        problems.note(format!("the tables are in format {format}; this build reads {}", sql::FORMAT));
    }

    let (mut state_records, mut specs, mut workers) = (0u64, BTreeSet::new(), Vec::<WorkerId>::new());
    let mut rows = client.query_raw(sql::LOAD_STATE, std::iter::empty::<i32>()).map_err(query("reading the state"))?;
    while let Some(row) = rows.next().map_err(query("reading the state"))? {
        let (key, value): (Vec<u8>, Vec<u8>) =
            (row.try_get(0).map_err(query("reading the state"))?, row.try_get(1).map_err(query("reading the state"))?);
        match decode_row(TABLE_STATE, &key, &value) {
            Ok(record) => {
                state_records += 1;
                match record {
                    Record::WorkerSpec(spec) => {
                        specs.insert(spec.id);
                    }
                    Record::Worker(worker) => workers.push(worker.id),
                    _ => {}
                }
            }
            Err(e) => problems.note(e.to_string()),
        }
    }
    drop(rows);
    for worker in workers.iter().filter(|w| !specs.contains(w)) {
        problems.note(format!("worker {worker} has no spec record"));
    }

    let (mut events, mut first, mut last) = (0u64, None::<u64>, None::<u64>);
    let mut rows =
        client.query_raw(sql::VERIFY_EVENTS, std::iter::empty::<i32>()).map_err(query("reading the events"))?;
    while let Some(row) = rows.next().map_err(query("reading the events"))? {
        let (key, value): (Vec<u8>, Vec<u8>) = (
            row.try_get(0).map_err(query("reading the events"))?,
            row.try_get(1).map_err(query("reading the events"))?,
        );
        match decode_row(TABLE_EVENTS, &key, &value) {
            Ok(Record::Event(event)) => {
                events += 1;
                let cursor = event.cursor.0;
                if let Some(previous) = last
                    && cursor != previous + 1
                {
                    problems.note(format!("events jump from cursor {previous} to {cursor}"));
                }
                first.get_or_insert(cursor);
                last = Some(cursor);
            }
            Ok(_) => problems.note(format!("{TABLE_EVENTS} holds a record that is not an event")),
            Err(e) => problems.note(e.to_string()),
        }
    }
    drop(rows);
    let _ = client.batch_execute("COMMIT");

    for line in &problems.listed {
        let _ = writeln!(text, "  {line}");
    }
    if problems.unlisted > 0 {
        let _ = writeln!(text, "  ... and {} more problems", problems.unlisted);
    }
    let _ = writeln!(
        text,
        "readable: {state_records} state records, {events} events{}",
        match (first, last) {
            (Some(a), Some(b)) => format!(" (cursors {a} to {b})"),
            _ => String::new(),
        }
    );
    let intact = problems.listed.is_empty();
    let _ = writeln!(text, "{}", if intact { "intact" } else { "NOT INTACT" });
    Ok(PgVerifyReport { intact, text, commits: u64::try_from(commits).unwrap_or(0), state_records, events })
}

/// The problems found: the first few in full, the rest counted.
#[derive(Default)]
struct Problems {
    listed: Vec<String>,
    unlisted: u64,
}

impl Problems {
    fn note(&mut self, line: String) {
        if self.listed.len() < PROBLEMS_LISTED_MAX {
            self.listed.push(line);
        } else {
            self.unlisted += 1;
        }
    }
}
