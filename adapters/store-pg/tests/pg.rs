//! The Postgres store against a real PostgreSQL (Debian's package, started per test by
//! `store_pg::test_server`): the runtime's contract suite (the same body the fjall store
//! runs), the epoch fence, recovery equal to the fjall store's, bounded loads, and bad
//! rows and bad addresses reported as typed errors.

use engine::ids::{Cursor, RunId};
use engine::{Batch, Engine, Record, RecordKey};
use runtime::Store;
use runtime::contract::{Harness, check_all};
use std::collections::BTreeMap;
use store::workload::Workload;
use store_pg::test_server::TestServer;
use store_pg::{Corruption, Error, Options, PgStore};

/// Fresh stores, each in a new database of one server; remembers each store's address
/// so that `reopen` opens the same database.
struct Pg<'s> {
    /// The server.
    server: &'s TestServer,
    /// Connection strings by the store's target (which names the database).
    urls: BTreeMap<String, String>,
}

impl Harness for Pg<'_> {
    type S = PgStore;
    fn fresh(&mut self) -> PgStore {
        let url = self.server.fresh_database();
        let store = PgStore::open(&url).expect("open");
        self.urls.insert(store.target().to_string(), url);
        store
    }
    fn reopen(&mut self, store: PgStore) -> PgStore {
        let url = self.urls[store.target()].clone();
        let epoch = store.epoch();
        drop(store);
        let store = PgStore::open(&url).expect("reopen");
        assert_eq!(store.epoch(), epoch + 1, "every open takes the next epoch");
        store
    }
}

#[test]
fn postgres_store_passes_the_contract() {
    let server = TestServer::start();
    eprintln!("tested on {}", server.version());
    check_all(&mut Pg { server: &server, urls: BTreeMap::new() });
}

/// `count` mutations of a small deterministic workload.
fn mutations(count: usize) -> (Workload, Vec<Batch>) {
    let mut workload = Workload::new(5, 2, 3);
    let batches = (0..count).map(|_| workload.next_mutation()).collect();
    (workload, batches)
}

/// The records a load returns, by key.
fn by_key(records: Vec<Record>) -> BTreeMap<RecordKey, Record> {
    records.into_iter().map(|r| (r.key(), r)).collect()
}

/// The latest record per key of `batches`: what a store that committed them all loads.
fn latest(batches: &[Batch]) -> BTreeMap<RecordKey, Record> {
    batches.iter().flat_map(|b| &b.records).map(|r| (r.key(), r.clone())).collect()
}

/// The single value of a one-row, one-column query.
fn scalar(server: &TestServer, url: &str, query: &str) -> String {
    let rows = server.rows(url, query);
    rows[0][0].clone().expect("a value")
}

#[test]
fn a_newer_open_fences_off_the_older_writer() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let (_, batches) = mutations(12);
    let mut a = PgStore::open(&url).expect("open A");
    a.commit(&batches[..8]).expect("A commits while it holds the lease");
    let mut b = PgStore::open(&url).expect("open B, which takes over");
    assert_eq!(b.epoch(), a.epoch() + 1, "B took the next epoch");
    let before = b.load().expect("B loads what A committed");
    let rows_before = scalar(&server, &url, "SELECT count(*) FROM orchestrator_state");

    // A is paused across B's open, then wakes and commits: refused, nothing written.
    let err = a.commit(&batches[8..10]).expect_err("A's commit after B opened must be refused");
    assert_eq!(err.code(), "PG_FENCED", "{err}");
    assert!(
        matches!(err, Error::Fenced { mine, current } if mine == a.epoch() && current == b.epoch()),
        "the error names both epochs: {err:?}"
    );
    assert_eq!(b.load().expect("load"), before, "nothing of A's refused commit is visible");
    assert_eq!(scalar(&server, &url, "SELECT count(*) FROM orchestrator_state"), rows_before);
    assert_eq!(
        scalar(&server, &url, "SELECT commits FROM orchestrator_lease"),
        "1",
        "A's refused commit is not counted"
    );
    assert_eq!(a.load().expect_err("A is poisoned").code(), "PG_POISONED");
    assert_eq!(a.commit(&batches[10..]).expect_err("A stays poisoned").code(), "PG_POISONED");

    // B commits fine, and a later store sees it.
    b.commit(&batches[8..]).expect("B commits");
    assert_eq!(b.commits(), 2);
    let expected = latest(&batches);
    drop(b);
    let mut c = PgStore::open(&url).expect("open C");
    assert_eq!((c.epoch(), c.commits()), (3, 2));
    assert_eq!(by_key(c.load().expect("load")), expected, "B's commits are all there");

    // A fenced store's load is refused too: it would serve a state that moves under it.
    let mut d = PgStore::open(&url).expect("open D");
    assert_eq!(c.load().expect_err("C was fenced by D").code(), "PG_FENCED");
    d.commit(&[]).expect("an empty commit writes nothing");
    assert_eq!(d.commits(), 2);
}

#[test]
fn the_engine_recovers_from_postgres_as_from_fjall() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let (workload, batches) = mutations(60);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut fjall = store::FjallStore::open(dir.path()).expect("open fjall");
    let mut pg = PgStore::open(&url).expect("open postgres");
    for group in batches.chunks(7) {
        fjall.commit(group).expect("fjall commit");
        pg.commit(group).expect("postgres commit");
    }
    drop((fjall, pg));
    let from_fjall = store::FjallStore::open(dir.path()).expect("reopen fjall").load().expect("fjall load");
    let from_pg = PgStore::open(&url).expect("reopen postgres").load().expect("postgres load");
    assert_eq!(from_pg, from_fjall, "both stores load the same records in the same order");
    let config = workload.engine().config().clone();
    let recovered = Engine::recover(config.clone(), from_pg).expect("recover from postgres");
    let recovered_fjall = Engine::recover(config, from_fjall).expect("recover from fjall");
    assert!(recovered.durable_eq(workload.engine()), "recovered from Postgres equals the live engine");
    assert!(recovered.durable_eq(&recovered_fjall), "and the engine recovered from fjall");
}

#[test]
fn load_returns_only_the_newest_events_but_events_after_pages_them_all() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let (workload, batches) = mutations(60);
    let options = || Options { events_load_count_max: 10, ..Options::default() };
    let mut store = PgStore::open_with(&url, options()).expect("open");
    for batch in &batches {
        store.commit(std::slice::from_ref(batch)).expect("commit");
    }
    assert_eq!(store.commits(), 60);
    drop(store);
    let mut store = PgStore::open_with(&url, options()).expect("reopen");
    assert_eq!(store.commits(), 60, "the commit counter survives a reopen");
    let cursors: Vec<u64> = store
        .load()
        .expect("load")
        .iter()
        .filter_map(|r| match r {
            Record::Event(e) => Some(e.cursor.0),
            _ => None,
        })
        .collect();
    let last = workload.engine().last_cursor().0;
    assert_eq!(cursors, (last - 9..=last).collect::<Vec<_>>(), "load returns the newest ten events, in order");
    let mut paged = Vec::new();
    let mut after = Cursor(0);
    loop {
        let page = store.events_after(after, 7).expect("page");
        let Some(end) = page.last() else { break };
        after = end.cursor;
        paged.extend(page.iter().map(|e| e.cursor.0));
    }
    assert_eq!(paged, (1..=last).collect::<Vec<_>>(), "events_after pages through every event");
    assert!(store.events_after(Cursor(u64::MAX), 10).expect("events").is_empty());
}

/// Hex of bytes, for a `'\x..'::bytea` literal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_broken_row_is_an_error_naming_its_key() {
    let server = TestServer::start();
    let (_, batches) = mutations(10);
    let run_key = hex(store::key::encode(RecordKey::Run(RunId(1))).as_bytes());
    let event_key = hex(store::key::encode(RecordKey::Event(Cursor(2))).as_bytes());
    let cases = [
        (
            "a truncated value",
            format!("UPDATE orchestrator_state SET value = '\\x4f52'::bytea WHERE key = '\\x{run_key}'"),
        ),
        (
            "a flipped payload byte",
            format!(
                "UPDATE orchestrator_state SET value = overlay(value placing '\\xff'::bytea from 20 for 1) WHERE key = '\\x{run_key}'"
            ),
        ),
        (
            "an event among the state records",
            format!(
                "INSERT INTO orchestrator_state SELECT key, value FROM orchestrator_events WHERE key = '\\x{event_key}'"
            ),
        ),
        ("an undecodable key", "INSERT INTO orchestrator_state VALUES ('\\x7f'::bytea, '\\x00'::bytea)".to_string()),
    ];
    for (case, statement) in cases {
        let url = server.fresh_database();
        PgStore::open(&url).expect("open").commit(&batches).expect("commit");
        server.execute(&url, &statement);
        let mut store = PgStore::open(&url).expect("reopen");
        let err = store.load().expect_err(case);
        assert_eq!(err.code(), "PG_CORRUPT_RECORD", "{case}: {err}");
        let message = err.to_string();
        assert!(message.contains("orchestrator_state"), "{case}: the table is named: {message}");
        match &err {
            Error::Corrupt { key, problem, .. } => match case {
                "an undecodable key" => {
                    assert_eq!(problem, &Corruption::BadKey);
                    assert!(message.contains("0x7f"), "{message}");
                }
                "an event among the state records" => {
                    assert_eq!(
                        (key.decoded(), problem),
                        (Some(RecordKey::Event(Cursor(2))), &Corruption::WrongKeyspace)
                    );
                }
                _ => {
                    assert_eq!(key.decoded(), Some(RecordKey::Run(RunId(1))), "{case}");
                    assert!(message.contains("Run(RunId(1))"), "{case}: the key is named: {message}");
                }
            },
            other => panic!("{case}: {other:?}"),
        }
        assert_eq!(store.load().expect_err("poisoned").code(), "PG_POISONED", "{case}");
    }

    // A broken event is found when it is paged.
    let url = server.fresh_database();
    PgStore::open(&url).expect("open").commit(&batches).expect("commit");
    server
        .execute(&url, &format!("UPDATE orchestrator_events SET value = '\\x00'::bytea WHERE key = '\\x{event_key}'"));
    let store = PgStore::open(&url).expect("reopen");
    let err = store.events_after(Cursor(0), 10).expect_err("the broken event");
    assert_eq!(err.code(), "PG_CORRUPT_RECORD");
    assert!(err.to_string().contains("Event(Cursor(2))") && err.to_string().contains("orchestrator_events"), "{err}");
}

#[test]
fn tables_of_a_newer_format_are_refused_without_taking_the_epoch() {
    let server = TestServer::start();
    let url = server.fresh_database();
    drop(PgStore::open(&url).expect("open"));
    server.execute(&url, "UPDATE orchestrator_lease SET format = 4");
    let err = PgStore::open(&url).expect_err("a newer format");
    assert_eq!(err.code(), "PG_SCHEMA", "{err}");
    assert!(err.to_string().contains("format 4"), "{err}");
    assert_eq!(scalar(&server, &url, "SELECT epoch FROM orchestrator_lease"), "1", "the refused open took no epoch");
}

#[test]
fn a_server_that_does_not_make_commits_durable_is_refused() {
    let server = TestServer::start_with(&["fsync=off"]);
    let err = PgStore::open(&server.fresh_database()).expect_err("fsync off");
    assert_eq!(err.code(), "PG_NOT_DURABLE", "{err}");
    assert!(err.to_string().contains("fsync = off"), "{err}");
}

#[test]
fn bad_and_unreachable_addresses_are_typed_errors() {
    let err = PgStore::open("postgres://orchestrator@127.0.0.1:notaport/x").expect_err("bad port");
    assert_eq!(err.code(), "PG_CONFIG", "{err}");
    let err = PgStore::open("postgres://orchestrator@127.0.0.1/x?sslmode=sometimes").expect_err("no such mode");
    assert_eq!(err.code(), "PG_CONFIG", "{err}");
    let err = PgStore::open("postgres://orchestrator@127.0.0.1/x?sslrootcert=/ca.pem").expect_err("a CA, no TLS");
    assert_eq!(err.code(), "PG_CONFIG", "{err}");
    // Nothing listens on a port that was free a moment ago (closed again at once).
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let url = format!("postgres://orchestrator:secret-password@127.0.0.1:{port}/x");
    let err = PgStore::open(&url).expect_err("nothing listens");
    assert_eq!(err.code(), "PG_CONNECT", "{err}");
    let message = err.to_string();
    assert!(message.contains(&format!("orchestrator@127.0.0.1:{port}/x")), "the target is named: {message}");
    assert!(!message.contains("secret-password"), "never the password: {message}");
    assert!(message.contains("Connection refused"), "the reason is given: {message}");
}

/// Waits until some session of the server waits for a lock (a store blocked on the lease
/// row), at most ten seconds.
fn wait_for_a_lock_wait(server: &TestServer, url: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let query = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
    while scalar(server, url, query) == "0" {
        assert!(std::time::Instant::now() < deadline, "no session waited for the lease row within 10 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A takeover in flight (its `UPDATE` of the lease row not yet committed) and a commit of
/// the old writer at the same moment: the commit waits for the row, then sees the new
/// epoch and is refused, writing nothing.
#[test]
fn a_commit_racing_a_takeover_waits_for_it_and_is_refused() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let (_, batches) = mutations(3);
    let mut a = PgStore::open(&url).expect("open A");
    let mut takeover = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    takeover.batch_execute("BEGIN; UPDATE orchestrator_lease SET epoch = epoch + 1 WHERE id = 1").expect("take over");
    let committing = std::thread::spawn(move || a.commit(&batches).map_err(|e| e.code()));
    wait_for_a_lock_wait(&server, &url);
    takeover.batch_execute("COMMIT").expect("commit the takeover");
    assert_eq!(committing.join().expect("joined"), Err("PG_FENCED"));
    assert_eq!(scalar(&server, &url, "SELECT count(*) FROM orchestrator_state"), "0", "nothing of A is visible");
}

/// The old writer's commit in flight (fenced and written, not yet committed) while a new
/// store opens: the open waits for it, and the new store loads it.
#[test]
fn a_takeover_waits_for_a_commit_in_flight_and_sees_it() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let (_, batches) = mutations(1);
    drop(PgStore::open(&url).expect("open, epoch 1"));
    let record = &batches[0].records[0];
    let key = store::key::encode(record.key()).as_bytes().to_vec();
    let value = store::envelope::encode(record).expect("encode");
    let mut old = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    let mut tx = old.transaction().expect("begin");
    let fenced = tx.execute(store_pg::sql::FENCE, &[&1i64]).expect("fence");
    assert_eq!(fenced, 1, "epoch 1 still holds the lease");
    tx.execute("INSERT INTO orchestrator_state VALUES ($1, $2)", &[&key, &value]).expect("write");
    let url_b = url.clone();
    let opening = std::thread::spawn(move || {
        let mut b = PgStore::open(&url_b).expect("open B");
        (b.epoch(), b.load().expect("load"))
    });
    wait_for_a_lock_wait(&server, &url);
    tx.commit().expect("the old writer's commit");
    let (epoch, loaded) = opening.join().expect("joined");
    assert_eq!(epoch, 2);
    assert_eq!(loaded, vec![record.clone()], "the takeover sees the commit that was in flight");
}

#[test]
fn the_store_opens_over_a_unix_socket() {
    let server = TestServer::start();
    let tcp = server.fresh_database();
    let database = tcp.rsplit('/').next().expect("database").to_string();
    let url = format!(
        "postgres://{}@/{database}?host={}&port={}",
        store_pg::test_server::SUPERUSER,
        server.socket_dir().display(),
        server.port()
    );
    let mut store = PgStore::open(&url).expect("open over the socket");
    let (_, batches) = mutations(2);
    store.commit(&batches).expect("commit");
    assert!(store.target().contains(&server.socket_dir().display().to_string()), "{}", store.target());
    let over_socket = store.load().expect("load");
    drop(store);
    let over_tcp = PgStore::open(&tcp).expect("open over TCP").load().expect("load");
    assert!(!over_socket.is_empty());
    assert_eq!(over_socket, over_tcp, "one database, whichever way it is reached");
}

/// A role that may not create tables: refused with `PG_SCHEMA` on an empty database, and
/// fine on tables made for it beforehand, which it only reads and writes.
#[test]
fn a_role_that_cannot_create_tables_runs_on_tables_made_for_it() {
    let server = TestServer::start();
    let url = server.fresh_database();
    server.execute(&url, "CREATE ROLE limited LOGIN");
    let limited = url.replacen("orchestrator@", "limited@", 1);
    let err = PgStore::open(&limited).expect_err("an empty database and no CREATE");
    assert_eq!(err.code(), "PG_SCHEMA", "{err}");
    assert!(err.to_string().contains("permission denied"), "{err}");

    drop(PgStore::open(&url).expect("the owner makes the tables"));
    server.execute(
        &url,
        "GRANT SELECT, INSERT, UPDATE ON orchestrator_lease, orchestrator_state, orchestrator_events TO limited",
    );
    let (_, batches) = mutations(4);
    let mut store = PgStore::open(&limited).expect("open on the tables made for it");
    store.commit(&batches).expect("commit");
    assert_eq!(by_key(store.load().expect("load")), latest(&batches), "every record written and read back");
}
