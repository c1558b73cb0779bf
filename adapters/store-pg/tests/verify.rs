//! `store verify` on Postgres (`store_pg::verify`) against a real PostgreSQL: an intact
//! store is said intact with its counts while its leader still serves, and the check takes
//! no lease (the epoch is unchanged); a damaged row and a hole in the events are each
//! named; a database no daemon opened is a `PG_SCHEMA` error.

use engine::ids::{Cursor, RunId};
use engine::{Batch, RecordKey};
use runtime::Store;
use store::workload::Workload;
use store_pg::PgStore;
use store_pg::test_server::TestServer;

/// Hex of bytes, for a `'\x..'::bytea` literal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn committed(url: &str, count: usize) -> PgStore {
    let mut workload = Workload::new(5, 2, 3);
    let batches: Vec<Batch> = (0..count).map(|_| workload.next_mutation()).collect();
    let mut store = PgStore::open(url).expect("open");
    for batch in &batches {
        store.commit(std::slice::from_ref(batch)).expect("commit");
    }
    store
}

#[test]
fn an_intact_store_is_said_so_while_its_leader_serves_and_no_lease_is_taken() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let store = committed(&url, 30);
    let epoch = store.epoch();
    let report = store_pg::verify(&url).expect("verify");
    eprintln!("orchestrator store verify --store postgres://...:\n{}", report.text);
    assert!(report.intact, "{}", report.text);
    assert!(report.text.ends_with("intact\n") && report.text.contains(", live\n"), "{}", report.text);
    assert_eq!(report.commits, store.commits());
    assert!(report.state_records > 0 && report.events > 0, "{report:?}");
    let after = server.rows(&url, "SELECT epoch FROM orchestrator_lease");
    assert_eq!(after[0][0].as_deref(), Some(epoch.to_string().as_str()), "the check took no epoch");
    assert!(!store.is_poisoned());
}

#[test]
fn a_damaged_row_and_a_hole_in_the_events_are_each_named() {
    let server = TestServer::start();
    let url = server.fresh_database();
    drop(committed(&url, 30));
    let run_key = hex(store::key::encode(RecordKey::Run(RunId(1))).as_bytes());
    let event_key = hex(store::key::encode(RecordKey::Event(Cursor(3))).as_bytes());
    server.execute(
        &url,
        &format!(
            "UPDATE orchestrator_state SET value = overlay(value placing '\\xff'::bytea from 20 for 1) WHERE key = '\\x{run_key}'; \
             DELETE FROM orchestrator_events WHERE key = '\\x{event_key}'"
        ),
    );
    let report = store_pg::verify(&url).expect("verify");
    eprintln!("{}", report.text);
    assert!(!report.intact, "{}", report.text);
    assert!(report.text.ends_with("NOT INTACT\n"), "{}", report.text);
    assert!(report.text.contains("orchestrator_state") && report.text.contains(&run_key), "the key: {}", report.text);
    assert!(report.text.contains("events jump from cursor 2 to 4"), "{}", report.text);
}

#[test]
fn a_database_no_daemon_opened_is_a_schema_error() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let err = store_pg::verify(&url).expect_err("no tables");
    assert_eq!(err.code(), "PG_SCHEMA", "{err}");
}
