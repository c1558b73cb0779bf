//! The blobs (`orchestrator_blobs`, where the daemon keeps its OAuth grants) against a real
//! PostgreSQL: a blob written is read back whole and replaced whole; a write by a writer
//! whose epoch a newer open took is refused (`PG_FENCED`, both epochs named) and changes
//! nothing, while the newer writer's goes in; format 2's tables gain the table in place.

use store_pg::PgStore;
use store_pg::blobs::BlobClient;
use store_pg::test_server::TestServer;

/// The statement bound of the tests' blob connections (ms).
const STATEMENT_MS: u64 = 5_000;
/// The blob the tests write.
const NAME: &str = "oauth-grants";

#[test]
fn a_blob_is_read_back_whole_and_replaced_whole() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let store = PgStore::open(&url).expect("open makes the tables");
    let mut blobs = BlobClient::connect(&url, STATEMENT_MS).expect("connect");
    assert_eq!(blobs.get(NAME).expect("get"), None, "nothing written yet");
    blobs.put(NAME, b"{\"version\":1}", store.epoch()).expect("put");
    assert_eq!(blobs.get(NAME).expect("get").as_deref(), Some(&b"{\"version\":1}"[..]));
    blobs.put(NAME, b"\x00second", store.epoch()).expect("put again");
    assert_eq!(blobs.get(NAME).expect("get").as_deref(), Some(&b"\x00second"[..]), "replaced whole, bytes kept");
    assert_eq!(blobs.get("another").expect("get"), None, "by name");
    // Another connection reads what was acknowledged.
    let mut other = BlobClient::connect(&url, STATEMENT_MS).expect("connect");
    assert_eq!(other.get(NAME).expect("get").as_deref(), Some(&b"\x00second"[..]));
}

#[test]
fn a_fenced_writer_cannot_overwrite_the_newer_writers_blob() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let old = PgStore::open(&url).expect("the old writer");
    let old_epoch = old.epoch();
    let mut old_blobs = BlobClient::connect(&url, STATEMENT_MS).expect("connect");
    old_blobs.put(NAME, b"old", old_epoch).expect("the leader writes");
    drop(old);
    let new = PgStore::open(&url).expect("a newer writer takes the next epoch");
    assert_eq!(new.epoch(), old_epoch + 1);
    let mut new_blobs = BlobClient::connect(&url, STATEMENT_MS).expect("connect");
    new_blobs.put(NAME, b"new", new.epoch()).expect("the newer writer writes");

    let err = old_blobs.put(NAME, b"stale", old_epoch).expect_err("fenced");
    assert_eq!(err.code(), "PG_FENCED", "{err}");
    let text = err.to_string();
    assert!(text.contains(&format!("epoch {old_epoch}")) && text.contains(&format!("epoch {}", new.epoch())), "{text}");
    assert_eq!(new_blobs.get(NAME).expect("get").as_deref(), Some(&b"new"[..]), "the fenced write changed nothing");
    let err = old_blobs.put("fresh-name", b"stale", old_epoch).expect_err("fenced for every name");
    assert_eq!(err.code(), "PG_FENCED", "{err}");
    assert_eq!(new_blobs.get("fresh-name").expect("get"), None);
    // The fenced connection is still usable, and the newer writer goes on writing.
    assert_eq!(old_blobs.get(NAME).expect("get").as_deref(), Some(&b"new"[..]));
    new_blobs.put(NAME, b"newer", new.epoch()).expect("the leader writes again");
    assert_eq!(old_blobs.get(NAME).expect("get").as_deref(), Some(&b"newer"[..]));
}

#[test]
fn tables_of_format_2_gain_the_blobs_table_in_place() {
    let server = TestServer::start();
    let url = server.fresh_database();
    drop(PgStore::open(&url).expect("open"));
    server.execute(&url, "DROP TABLE orchestrator_blobs; UPDATE orchestrator_lease SET format = 2");
    let store = PgStore::open(&url).expect("open upgrades");
    let rows = server.rows(&url, "SELECT format FROM orchestrator_lease");
    assert_eq!(rows[0][0].as_deref(), Some("3"));
    let mut blobs = BlobClient::connect(&url, STATEMENT_MS).expect("connect");
    blobs.put(NAME, b"x", store.epoch()).expect("the table is there");
    assert_eq!(blobs.get(NAME).expect("get").as_deref(), Some(&b"x"[..]));
}
