//! Every SQL statement the store sends, in one place (`docs/scale-out.md` quotes them).
//!
//! Four tables, all created on first open: `orchestrator_lease` (one row: the schema's
//! format, the writer's epoch, the commit counter, the lease's holder, URL and expiry), `orchestrator_state` (every record but
//! events, the latest per key), `orchestrator_events` (the event log) and
//! `orchestrator_blobs` (small named states kept whole, each write fenced: the daemon's
//! OAuth grants, `blobs.rs`). Keys and values
//! are `bytea` in the fjall store's encoding (`store::key`, `store::envelope`): `bytea`
//! compares byte by byte, so `ORDER BY key` is the order of `engine::RecordKey`, as in
//! fjall.

/// The table format this build writes and reads. A newer format is refused at open; an
/// older one is upgraded in place ([`UPGRADE_1_TO_2`], then [`UPGRADE_2_TO_3`]).
///
/// - 1: the lease row holds the epoch, the commit counter and who took it.
/// - 2: the lease row also holds its expiry (`expires_at`, the database's clock) and the
///   URL its holder serves at (`holder_url`), for standbys.
/// - 3: `orchestrator_blobs` (name, value): the leader's OAuth grants. An older build
///   refuses it, so it cannot lead and serve OAuth from its own file instead.
pub const FORMAT: i32 = 3;

/// The advisory lock that serializes first-time table creation between two daemons that
/// open an empty database at once (`CREATE TABLE IF NOT EXISTS` races otherwise). An
/// arbitrary constant: "orchstr" in ASCII.
pub const CREATE_LOCK_KEY: i64 = 0x006f_7263_6873_7472;

/// Settings of every session: commits are acknowledged only once durable (whatever the
/// database's or role's default says), and a session paused inside a transaction (a
/// stopped process) loses it, and the lease row's lock with it, after
/// [`crate::IDLE_IN_TRANSACTION_MS_MAX`].
pub fn session_settings() -> String {
    format!(
        "SET synchronous_commit = on; SET idle_in_transaction_session_timeout = {}",
        crate::IDLE_IN_TRANSACTION_MS_MAX
    )
}

/// Whether the server makes commits durable at all (`NULL` where the setting does not
/// exist, as on a database that is not PostgreSQL itself).
pub const SHOW_FSYNC: &str = "SELECT current_setting('fsync', true)";

/// Whether the record tables exist already (then nothing is created, so a role that may
/// only read and write them, not create tables, can run the store on tables made for it;
/// format 3's `orchestrator_blobs` is made with them, or by [`UPGRADE_2_TO_3`]).
pub const TABLES_EXIST: &str = "\
SELECT to_regclass('orchestrator_lease') IS NOT NULL AND to_regclass('orchestrator_state') IS NOT NULL
    AND to_regclass('orchestrator_events') IS NOT NULL";

/// Takes the creation lock for the rest of the transaction.
pub const LOCK_CREATE: &str = "SELECT pg_advisory_xact_lock($1)";

/// The tables, and the lease row of an empty database (epoch 0: nobody has opened it).
pub const CREATE: &str = "\
CREATE TABLE IF NOT EXISTS orchestrator_lease (
    id smallint PRIMARY KEY CHECK (id = 1),
    format integer NOT NULL,
    epoch bigint NOT NULL,
    commits bigint NOT NULL,
    holder text NOT NULL,
    taken_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL DEFAULT now(),
    holder_url text NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS orchestrator_state (key bytea PRIMARY KEY, value bytea NOT NULL);
CREATE TABLE IF NOT EXISTS orchestrator_events (key bytea PRIMARY KEY, value bytea NOT NULL);
CREATE TABLE IF NOT EXISTS orchestrator_blobs (name text PRIMARY KEY, value bytea NOT NULL);
INSERT INTO orchestrator_lease (id, format, epoch, commits, holder, taken_at, expires_at, holder_url)
    VALUES (1, 3, 0, 0, '', now(), now(), '') ON CONFLICT (id) DO NOTHING";

/// The format the lease row says the tables are in (run under [`LOCK_CREATE`]).
pub const READ_FORMAT: &str = "SELECT format FROM orchestrator_lease WHERE id = 1";

/// Format 1 to 2: the lease gains its expiry (lapsed: whoever opens next takes it) and its
/// holder's URL. Run under [`LOCK_CREATE`], in one transaction with the format's update.
pub const UPGRADE_1_TO_2: &str = "\
ALTER TABLE orchestrator_lease ADD COLUMN IF NOT EXISTS expires_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN IF NOT EXISTS holder_url text NOT NULL DEFAULT '';
UPDATE orchestrator_lease SET format = 2 WHERE id = 1 AND format = 1";

/// Format 2 to 3: the blobs' table (the leader's OAuth grants; empty: the first leader
/// imports its grants file, `docs/scale-out.md`). Run as [`UPGRADE_1_TO_2`] is.
pub const UPGRADE_2_TO_3: &str = "\
CREATE TABLE IF NOT EXISTS orchestrator_blobs (name text PRIMARY KEY, value bytea NOT NULL);
UPDATE orchestrator_lease SET format = 3 WHERE id = 1 AND format = 2";

/// Opening takes the next epoch, if the lease is free: lapsed (its expiry passed, by the
/// database's clock), or held by this same daemon id (a restarted leader takes its own
/// lease back at once). From this transaction's commit on, every commit of an older epoch
/// is refused. Waits for a commit in flight to finish (the row's lock), at most
/// [`crate::LEASE_WAIT_MS_MAX`] (`SET LOCAL lock_timeout` before it). `$1` the holder,
/// `$2` its URL, `$3` the lease's time to live in ms. Zero rows: another holder's lease
/// is live (or the row is missing).
pub const TAKE_EPOCH: &str = "\
UPDATE orchestrator_lease SET epoch = epoch + 1, holder = $1, holder_url = $2, taken_at = now(),
    expires_at = now() + $3::bigint * interval '1 millisecond'
    WHERE id = 1 AND (holder = $1 OR expires_at <= now()) RETURNING format, epoch, commits";

/// The lease as a standby sees it: epoch, holder, holder's URL, whether it is live and
/// for how many more ms (both by the database's clock).
pub const READ_LEASE: &str = "\
SELECT epoch, holder, holder_url, expires_at > now(),
    GREATEST(0, floor(extract(epoch FROM expires_at - now()) * 1000))::bigint
    FROM orchestrator_lease WHERE id = 1";

/// The leader's renewal: pushes the expiry to `$2` ms from the database's now, only while
/// the lease still holds its epoch `$1`. Zero rows: fenced.
pub const RENEW: &str = "\
UPDATE orchestrator_lease SET expires_at = now() + $2::bigint * interval '1 millisecond'
    WHERE id = 1 AND epoch = $1 RETURNING epoch";

/// A leader that stops cleanly lets its lease lapse now, so a standby takes over within
/// one poll instead of one time to live.
pub const RELEASE: &str = "UPDATE orchestrator_lease SET expires_at = now() WHERE id = 1 AND epoch = $1";

/// The fence, the first statement of every commit's transaction: counts the commit only
/// if the lease still holds this store's epoch, and holds the row's lock until the
/// transaction ends, so a newer open waits for this commit or this commit sees the newer
/// epoch (and updates no row). Zero rows: fenced.
pub const FENCE: &str = "\
UPDATE orchestrator_lease SET commits = commits + 1 WHERE id = 1 AND epoch = $1 RETURNING commits";

/// The epoch the lease holds now (for the fenced error, and for `load`).
pub const CURRENT_EPOCH: &str = "SELECT epoch FROM orchestrator_lease WHERE id = 1";

/// Writes state records: keys and values as two arrays, one statement per commit.
pub const UPSERT_STATE: &str = "\
INSERT INTO orchestrator_state (key, value) SELECT * FROM unnest($1::bytea[], $2::bytea[])
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value";

/// Writes events, as [`UPSERT_STATE`].
pub const UPSERT_EVENTS: &str = "\
INSERT INTO orchestrator_events (key, value) SELECT * FROM unnest($1::bytea[], $2::bytea[])
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value";

/// A load reads from one snapshot (`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`).
pub const BEGIN_SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/// Every state record, in key order (a worker's spec before the worker).
pub const LOAD_STATE: &str = "SELECT key, value FROM orchestrator_state ORDER BY key";

/// The newest events, newest first, at most `$1`.
pub const LOAD_EVENTS: &str = "SELECT key, value FROM orchestrator_events ORDER BY key DESC LIMIT $1";

/// Events after a key, in order, at most `$2`.
pub const EVENTS_AFTER: &str = "SELECT key, value FROM orchestrator_events WHERE key > $1 ORDER BY key LIMIT $2";

/// A blob's fence, the first statement of its write's transaction: a row only while the
/// lease holds the writer's epoch `$1`, whose share lock (held until the transaction ends)
/// conflicts with [`TAKE_EPOCH`]'s update: a newer open waits for this write, or this
/// write sees the newer epoch (and gets no row). Zero rows: fenced.
pub const BLOB_FENCE: &str = "SELECT epoch FROM orchestrator_lease WHERE id = 1 AND epoch = $1 FOR SHARE";

/// One blob by name (`$1`).
pub const GET_BLOB: &str = "SELECT value FROM orchestrator_blobs WHERE name = $1";

/// Writes blob `$1` whole (`$2`), after [`BLOB_FENCE`] in the same transaction.
pub const PUT_BLOB: &str = "\
INSERT INTO orchestrator_blobs (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value";

/// `store verify`: the lease row as the check reports it.
pub const VERIFY_LEASE: &str = "\
SELECT format, epoch, commits, holder, expires_at > now() FROM orchestrator_lease WHERE id = 1";

/// `store verify`: every event row, oldest first (read in one snapshot with
/// [`LOAD_STATE`], in a `REPEATABLE READ READ ONLY` transaction).
pub const VERIFY_EVENTS: &str = "SELECT key, value FROM orchestrator_events ORDER BY key";
