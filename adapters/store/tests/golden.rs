//! The version-1 golden fixture: bytes written by the store's first format version must
//! keep decoding to the same records, whatever the engine's types become.
//!
//! `fixtures/v1/records.hex` holds one stored entry per line (`keyspace key value`, hex)
//! as the first version wrote them; `fixtures/v1/records.txt` holds the records they
//! decode to (`{:?}`, one per line). A change of the engine's record types that breaks
//! this test needs a new format version (see `src/envelope.rs`), not new v1 bytes.
//!
//! The fixture was made by `STORE_GOLDEN_CREATE=1 cargo test -p store --test golden`,
//! which only creates missing files and never rewrites one.
//!
//! Fields added since version 1 print with their version-1 defaults: a worker spec gets
//! `executor: Chatgpt, workspace: None` (version 2), which [`since_v1`] appends to the
//! fixture's text.

use engine::ids::{CallId, WorkerId};
use engine::model::Assignment;
use engine::op::{Operation, SpawnArgs};
use engine::policy::{Mode, PolicyPatch};
use engine::{Batch, Effect, Engine, EngineConfig, Input, Record, Timestamp};
use runtime::Store;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use store::{FjallStore, KEYSPACE_EVENTS, KEYSPACE_STATE, envelope};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1")
}

/// One stored entry: keyspace, key bytes, value bytes.
type Entry = (String, Vec<u8>, Vec<u8>);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "hex has an even length");
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit")).collect()
}

fn parse(text: &str) -> Vec<Entry> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|line| {
            let mut parts = line.split(' ');
            let (Some(ks), Some(k), Some(v), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
                panic!("a fixture line is `keyspace key value`: {line}")
            };
            (ks.to_string(), unhex(k), unhex(v))
        })
        .collect()
}

/// The engine mutations of the fixture: every record kind, an attempt and a message
/// included.
fn scenario() -> Vec<Batch> {
    let mut engine = Engine::new(EngineConfig { seed: 42, ..EngineConfig::default() });
    let mut batches = Vec::new();
    let ops = vec![
        Operation::RunCreate {
            task_name: "Golden".into(),
            root_conversation_name: "Root".into(),
            context: "Keep version 1 loading.".into(),
            default_policy: Some(PolicyPatch::mode(Mode::Auto)),
            root_executor: Default::default(),
        },
        Operation::WorkerSpawn(Box::new(SpawnArgs {
            run: engine::ids::RunId(1),
            name: "/root/a".into(),
            display_name: Some("Lane A".into()),
            task_summary: "Build A".into(),
            assignment: Assignment {
                objective: "Build A.".into(),
                scope: "a/".into(),
                acceptance_criteria: vec!["A works.".into(), "Tests pass.".into()],
            },
            worktree: Some("wt-a".into()),
            policy: None,
            start: true,
            executor: None,
            workspace: None,
        })),
        Operation::MessageSend { from: Some(WorkerId(1)), to: WorkerId(2), body: "Start with the parser.".into() },
        Operation::WorkerProgress { worker: WorkerId(1), summary: "Planned.".into(), commit: Some("abc123".into()) },
        Operation::WorkerPause { worker: WorkerId(1), after_current_turn: false },
    ];
    for (i, op) in ops.into_iter().enumerate() {
        engine.handle(Timestamp(1_000_000 + i as u64 * 1_000), Input::Call { call: CallId(i as u64 + 1), op });
        while let Some(effect) = engine.poll_effect() {
            match effect {
                Effect::Persist(b) => batches.push(b),
                Effect::Reply { result, .. } => {
                    result.unwrap_or_else(|r| panic!("fixture operation rejected: {r:?}"));
                }
                Effect::Command(_) | Effect::Notify(_) => {}
            }
        }
    }
    batches
}

/// Every entry of a closed store's database, keyspace by keyspace in key order.
fn raw_entries(data_dir: &Path) -> Vec<Entry> {
    let db = fjall::Database::builder(data_dir.join("fjall")).open().expect("open fjall");
    let mut out = Vec::new();
    for name in [KEYSPACE_STATE, KEYSPACE_EVENTS] {
        let ks = db.keyspace(name, fjall::KeyspaceCreateOptions::default).expect("keyspace");
        for entry in ks.iter() {
            let (k, v) = entry.into_inner().expect("entry");
            out.push((name.to_string(), k.to_vec(), v.to_vec()));
        }
    }
    out
}

/// Creates the fixture files if asked to and they are missing; never rewrites one.
fn create_fixture_if_asked() {
    if std::env::var_os("STORE_GOLDEN_CREATE").is_none() {
        return;
    }
    let (hex_path, txt_path) = (fixture_dir().join("records.hex"), fixture_dir().join("records.txt"));
    assert!(!hex_path.exists() && !txt_path.exists(), "version-1 fixtures exist and are never rewritten");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = FjallStore::open(dir.path()).expect("open");
    store.commit(&scenario()).expect("commit");
    drop(store);
    let entries = raw_entries(dir.path());
    let hex_text: String = entries.iter().map(|(ks, k, v)| format!("{ks} {} {}\n", hex(k), hex(v))).collect();
    let txt: String =
        entries.iter().map(|(_, k, v)| format!("{:?}\n", envelope::decode(k, v).expect("decode"))).collect();
    std::fs::create_dir_all(fixture_dir()).expect("fixture dir");
    std::fs::write(&hex_path, hex_text).expect("write hex");
    std::fs::write(&txt_path, txt).expect("write txt");
}

fn fixture() -> (Vec<Entry>, Vec<String>) {
    create_fixture_if_asked();
    let hex_text = std::fs::read_to_string(fixture_dir().join("records.hex")).expect("the v1 fixture is checked in");
    let txt = std::fs::read_to_string(fixture_dir().join("records.txt")).expect("the v1 fixture is checked in");
    (parse(&hex_text), txt.lines().map(str::to_string).collect())
}

/// The `{:?}` a version-1 record's text has today: every `WorkerSpec { .. }` in it (a
/// spec record, and the empty spec a worker record prints) with the fields added since
/// and the values a version-1 record gets.
fn since_v1(want: &str) -> String {
    const OPEN: &str = "WorkerSpec { ";
    let (mut out, mut rest) = (String::new(), want);
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let (mut depth, mut quoted, mut escaped, mut end) = (0usize, false, false, None);
        for (i, c) in rest.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                '{' if !quoted => depth += 1,
                '}' if !quoted => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end.expect("a WorkerSpec closes");
        out.push_str(rest[..end].trim_end());
        out.push_str(", executor: Chatgpt, workspace: None }");
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn version_one_bytes_decode_to_the_same_records() {
    let (entries, expected) = fixture();
    assert_eq!(entries.len(), expected.len(), "one record per stored entry");
    let mut kinds = BTreeSet::new();
    for ((ks, k, v), want) in entries.iter().zip(&expected) {
        assert_eq!(u16::from_be_bytes([v[4], v[5]]), envelope::FORMAT_VERSION_V1, "fixture values are version 1");
        let record = envelope::decode(k, v).unwrap_or_else(|e| panic!("version-1 bytes no longer decode: {e}"));
        assert_eq!(format!("{record:?}"), since_v1(want), "version-1 bytes decode to different values");
        assert_eq!(ks == KEYSPACE_EVENTS, matches!(record, Record::Event(_)), "{ks} holds {:?}", record.key());
        if envelope::FORMAT_VERSION_CURRENT == envelope::FORMAT_VERSION_V1 {
            // While version 1 is current, the encoder must still write exactly these bytes.
            assert_eq!(&envelope::encode(&record).expect("encode"), v, "{:?} encodes differently", record.key());
        }
        kinds.insert(store::key::encode(record.key()).as_bytes()[0]);
    }
    assert_eq!(kinds.len(), 7, "the fixture covers every record kind");
}

#[test]
fn version_one_data_loads_through_the_store_and_recovers_the_engine() {
    let (entries, _) = fixture();
    let dir = tempfile::tempdir().expect("tempdir");
    {
        // The store lays out its directory; the fixture bytes then go in through fjall.
        drop(FjallStore::open(dir.path()).expect("create"));
        let db = fjall::Database::builder(dir.path().join("fjall")).open().expect("open fjall");
        for (ks, k, v) in &entries {
            let keyspace = db.keyspace(ks, fjall::KeyspaceCreateOptions::default).expect("keyspace");
            keyspace.insert(k.as_slice(), v.as_slice()).expect("insert");
        }
        db.persist(fjall::PersistMode::SyncAll).expect("persist");
    }
    let mut store = FjallStore::open(dir.path()).expect("open");
    let loaded = store.load().expect("version-1 data loads");
    assert_eq!(loaded.len(), entries.len());
    let engine = Engine::recover(EngineConfig { seed: 42, ..EngineConfig::default() }, loaded).expect("recover");
    assert_eq!(engine.workers().count(), 2, "the root and lane A");
    assert!(engine.workers().all(|w| !w.spec.name.is_empty()), "every worker got its spec back");
    assert_eq!(engine.attempts().count(), 1, "lane A's bootstrap attempt");
    for w in engine.workers() {
        assert_eq!(w.spec.executor, engine::ExecutorKind::Chatgpt, "a version-1 worker is a chatgpt worker");
        assert_eq!(w.spec.workspace, None);
    }
}

/// A record written today (version 4) with a CLI worker's kind and workspace comes back
/// as written, and the same spec in version-1 bytes (no kind) loads as a chatgpt worker.
#[test]
fn a_cli_spec_round_trips_in_the_current_version_and_a_version_one_spec_is_chatgpt() {
    let (entries, _) = fixture();
    let (_, k, v) = entries
        .iter()
        .find(|(_, k, v)| matches!(envelope::decode(k, v), Ok(Record::WorkerSpec(s)) if s.name == "/root/a"))
        .expect("the fixture holds lane A's spec");
    let Ok(Record::WorkerSpec(old)) = envelope::decode(k, v) else { unreachable!() };
    assert_eq!((old.executor, old.workspace.as_ref()), (engine::ExecutorKind::Chatgpt, None));
    let mut spec = (*old).clone();
    spec.executor = engine::ExecutorKind::Codex;
    spec.workspace = Some(engine::Workspace { directory: "/src/app".into(), branch: Some("lane-a".into()) });
    let record = Record::WorkerSpec(std::sync::Arc::new(spec));
    let bytes = envelope::encode(&record).expect("encode");
    assert_eq!(u16::from_be_bytes([bytes[4], bytes[5]]), envelope::FORMAT_VERSION_CURRENT);
    assert_eq!(envelope::decode(k, &bytes).expect("decode"), record);
}
