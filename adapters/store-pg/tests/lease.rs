//! The lease's expiry against a real PostgreSQL (`store_pg::test_server`): a live lease
//! keeps another holder out (`PG_LEASE_HELD`, naming the leader's URL) while its own holder
//! takes it back at once; renewals keep it live; it lapses by the database's clock after its
//! time to live and another holder takes it; a renewal by a fenced epoch is refused
//! (`PG_FENCED`, and the keeper says so); tables of format 1 are upgraded in place (to 3).

use std::time::{Duration, Instant};
use store_pg::lease::{Keeper, LeaseClient};
use store_pg::test_server::TestServer;
use store_pg::{Options, PgStore};

/// A short time to live, so a lapse is seen in a test (ms).
const TTL_MS: u64 = 1_500;
/// How long a test waits for a condition at most.
const WAIT_MAX: Duration = Duration::from_secs(20);

/// Options of a daemon with id `holder` serving at `url`, with [`TTL_MS`].
fn as_daemon(holder: &str, url: &str) -> Options {
    Options { holder: Some(holder.into()), holder_url: url.into(), lease_ttl_ms: TTL_MS, ..Options::default() }
}

/// Waits until `condition` holds, at most [`WAIT_MAX`]; answers how long it took.
fn wait_for(what: &str, mut condition: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < WAIT_MAX, "{what}: not within {WAIT_MAX:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    start.elapsed()
}

#[test]
fn a_live_lease_keeps_others_out_lapses_by_the_database_clock_and_is_taken_over() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let a = PgStore::open_with(&url, as_daemon("daemon-a", "http://a.example/mcp")).expect("A acquires");
    assert_eq!(a.epoch(), 1);

    let err = PgStore::open_with(&url, as_daemon("daemon-b", "http://b.example/mcp")).expect_err("B is a standby");
    assert_eq!(err.code(), "PG_LEASE_HELD", "{err}");
    let text = err.to_string();
    assert!(text.contains("daemon-a") && text.contains("http://a.example/mcp"), "the leader is named: {text}");
    let mut reader = LeaseClient::connect(&url, 5_000).expect("lease client");
    let lease = reader.read().expect("read");
    assert_eq!((lease.epoch, lease.holder.as_str(), lease.live), (1, "daemon-a", true), "{lease:?}");
    assert!(lease.expires_in_ms <= TTL_MS, "{lease:?}");
    assert!(!lease.free_for("daemon-b") && lease.free_for("daemon-a"));

    // Renewals keep it live past its first time to live.
    let mut renewer = LeaseClient::connect(&url, 5_000).expect("renewer");
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(TTL_MS * 2) {
        renewer.renew(a.epoch(), TTL_MS).expect("renew");
        assert!(reader.read().expect("read").live, "renewed every 300 ms, it stays live");
        std::thread::sleep(Duration::from_millis(300));
    }
    let err = PgStore::open_with(&url, as_daemon("daemon-b", "http://b.example/mcp")).expect_err("still held");
    assert_eq!(err.code(), "PG_LEASE_HELD", "{err}");

    // Not renewed, it lapses by the database's clock, and B takes it with the next epoch.
    let lapsed = wait_for("the lease lapses", || !reader.read().expect("read").live);
    assert!(lapsed <= Duration::from_millis(TTL_MS + 1_000), "lapsed {lapsed:?} after the last renewal");
    let b = PgStore::open_with(&url, as_daemon("daemon-b", "http://b.example/mcp")).expect("B takes over");
    assert_eq!(b.epoch(), 2);
    let lease = reader.read().expect("read");
    assert_eq!((lease.holder.as_str(), lease.leader_url.as_str()), ("daemon-b", "http://b.example/mcp"));

    // A's renewal is fenced now.
    let err = renewer.renew(a.epoch(), TTL_MS).expect_err("fenced");
    assert_eq!(err.code(), "PG_FENCED", "{err}");
    assert!(err.to_string().contains("epoch 1") && err.to_string().contains("epoch 2"), "{err}");
}

#[test]
fn a_restarted_holder_takes_its_own_lease_back_at_once() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let first = PgStore::open_with(&url, as_daemon("daemon-a", "http://a/mcp")).expect("first");
    let epoch = first.epoch();
    drop(first);
    let again = PgStore::open_with(&url, as_daemon("daemon-a", "http://a/mcp")).expect("the same id, at once");
    assert_eq!(again.epoch(), epoch + 1, "with a new epoch, which fences off the old process");
}

#[test]
fn the_keeper_renews_says_when_fenced_and_releases_on_a_clean_stop() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let a = PgStore::open_with(&url, as_daemon("daemon-a", "http://a/mcp")).expect("A");
    let keeper = Keeper::start(&url, a.epoch(), TTL_MS, 200).expect("keeper");
    let mut reader = LeaseClient::connect(&url, 5_000).expect("reader");
    // Two whole times to live later, the keeper still holds it.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(TTL_MS * 2) {
        keeper.check().expect("renewed");
        assert!(reader.read().expect("read").live);
        std::thread::sleep(Duration::from_millis(100));
    }
    // A newer epoch (the same holder, restarted) fences the keeper's.
    let newer = PgStore::open_with(&url, as_daemon("daemon-a", "http://a/mcp")).expect("newer");
    wait_for("the keeper sees it is fenced", || keeper.check().is_err());
    let err = keeper.check().expect_err("fenced");
    assert_eq!(err.code(), "PG_FENCED", "{err}");
    drop(keeper);

    // The newer one's keeper releases on a clean stop: lapsed at once.
    let keeper = Keeper::start(&url, newer.epoch(), 60_000, 200).expect("keeper");
    assert!(reader.read().expect("read").live);
    keeper.release();
    let lease = reader.read().expect("read");
    assert!(!lease.live, "released: {lease:?}");
    PgStore::open_with(&url, as_daemon("daemon-b", "http://b/mcp")).expect("B takes it without waiting");
}

#[test]
fn a_keeper_that_cannot_reach_the_database_loses_the_lease_after_its_time_to_live() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let a = PgStore::open_with(&url, as_daemon("daemon-a", "http://a/mcp")).expect("A");
    // Its renewals go to a port nothing listens on: the database is unreachable for it.
    let unreachable = format!("postgres://orchestrator@127.0.0.1:{}/none", free_port());
    let keeper = Keeper::start(&unreachable, a.epoch(), TTL_MS, 100).expect("keeper");
    let waited = wait_for("the keeper gives the lease up", || keeper.check().is_err());
    assert!(waited >= Duration::from_millis(TTL_MS - 100), "not before the time to live: {waited:?}");
    let err = keeper.check().expect_err("lost");
    assert_eq!(err.code(), "PG_LEASE_LOST", "{err}");
    assert!(err.to_string().contains("PG_CONNECT"), "the last failure is named: {err}");
}

#[test]
fn tables_of_format_1_are_upgraded_in_place() {
    let server = TestServer::start();
    let url = server.fresh_database();
    server.execute(
        &url,
        "CREATE TABLE orchestrator_lease (id smallint PRIMARY KEY CHECK (id = 1), format integer NOT NULL,
             epoch bigint NOT NULL, commits bigint NOT NULL, holder text NOT NULL, taken_at timestamptz NOT NULL);
         CREATE TABLE orchestrator_state (key bytea PRIMARY KEY, value bytea NOT NULL);
         CREATE TABLE orchestrator_events (key bytea PRIMARY KEY, value bytea NOT NULL);
         INSERT INTO orchestrator_lease VALUES (1, 1, 7, 3, 'old host pid 1', now())",
    );
    let store = PgStore::open_with(&url, as_daemon("daemon-a", "http://a/mcp")).expect("open upgrades");
    assert_eq!(store.epoch(), 8, "the epoch goes on from format 1's");
    let rows = server.rows(&url, "SELECT format, holder_url FROM orchestrator_lease");
    assert_eq!(rows[0][0].as_deref(), Some("3"), "format 1 goes through 2 to 3");
    assert_eq!(rows[0][1].as_deref(), Some("http://a/mcp"));
    let blobs = server.rows(&url, "SELECT count(*) FROM orchestrator_blobs");
    assert_eq!(blobs[0][0].as_deref(), Some("0"), "format 3's table is made, empty");
}

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}
