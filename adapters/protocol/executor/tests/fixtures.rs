//! The golden fixtures in `docs/protocol/fixtures/` (loaded by the extension's tests too):
//! each decodes and re-encodes byte for byte, every message type has one, and the
//! document names every type and error code.

use executor_protocol::*;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn protocol_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../docs/protocol")
}

/// `(file name, text without the trailing newline)` of every fixture.
fn fixtures() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(protocol_dir().join("fixtures")).expect("docs/protocol/fixtures exists") {
        let path = entry.expect("readable directory").path();
        // `rules/` holds rule cases (frames and the verdicts they get), not messages.
        if path.is_dir() {
            continue;
        }
        let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
        assert!(name.ends_with(".json"), "only .json files belong in fixtures/: {name}");
        let text = std::fs::read_to_string(&path).expect("readable fixture");
        let text = text.strip_suffix('\n').unwrap_or_else(|| panic!("{name} must end with one newline")).to_string();
        out.push((name, text));
    }
    out.sort();
    out
}

/// Every `type` a message enum accepts, read from serde's own "expected one of" list so
/// that a new variant cannot escape this test.
fn declared_types(decode: impl Fn(&str) -> Result<(), Error>) -> BTreeSet<String> {
    let Err(Error::Malformed(message)) = decode(r#"{"v":1,"type":"\u0000"}"#) else {
        panic!("an unknown type must be malformed");
    };
    let list = message.split("expected one of").nth(1).unwrap_or_else(|| panic!("serde lists the variants: {message}"));
    list.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

#[test]
fn every_fixture_decodes_and_re_encodes_byte_stable() {
    let fixtures = fixtures();
    assert!(!fixtures.is_empty());
    for (name, text) in &fixtures {
        let again = if name.starts_with("executor.") {
            let message = decode_executor(text, MESSAGE_BYTES_MAX).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                name.starts_with(&format!("executor.{}.", message.type_name())),
                "{name} holds a {}",
                message.type_name()
            );
            encode(&message)
        } else if name.starts_with("daemon.") {
            let message = decode_daemon(text, MESSAGE_BYTES_MAX).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                name.starts_with(&format!("daemon.{}.", message.type_name())),
                "{name} holds a {}",
                message.type_name()
            );
            encode(&message)
        } else {
            panic!("{name}: fixture names start with executor. or daemon.");
        };
        assert_eq!(&again, text, "{name} does not re-encode byte for byte");
    }
}

#[test]
fn every_message_type_has_a_fixture_and_a_section_in_the_document() {
    let names: Vec<String> = fixtures().into_iter().map(|(name, _)| name).collect();
    let doc = std::fs::read_to_string(protocol_dir().join("executor.md")).expect("docs/protocol/executor.md exists");
    let executor = declared_types(|t| decode_executor(t, MESSAGE_BYTES_MAX).map(|_| ()));
    let daemon = declared_types(|t| decode_daemon(t, MESSAGE_BYTES_MAX).map(|_| ()));
    assert!(executor.contains("hello") && daemon.contains("command"), "{executor:?} {daemon:?}");
    for (side, types) in [("executor", &executor), ("daemon", &daemon)] {
        for t in types {
            let prefix = format!("{side}.{t}.");
            assert!(names.iter().any(|n| n.starts_with(&prefix)), "no fixture {prefix}json for message type {t}");
            assert!(doc.contains(&format!("### `{t}`")), "executor.md has no section ### `{t}`");
        }
    }
}

#[test]
fn the_document_lists_every_error_code() {
    let doc = std::fs::read_to_string(protocol_dir().join("executor.md")).expect("docs/protocol/executor.md exists");
    let codes = [
        ProtocolErrorCode::Malformed,
        ProtocolErrorCode::UnsupportedVersion,
        ProtocolErrorCode::TooLarge,
        ProtocolErrorCode::RateLimited,
        ProtocolErrorCode::HelloRequired,
        ProtocolErrorCode::Unauthorized,
        ProtocolErrorCode::InvalidExecutorId,
        ProtocolErrorCode::DuplicateHello,
        ProtocolErrorCode::Replaced,
        ProtocolErrorCode::Superseded,
        ProtocolErrorCode::InvalidAccount,
    ];
    for code in codes {
        let wire = serde_json::to_string(&code).expect("codes serialize");
        let wire = wire.trim_matches('"');
        assert!(doc.contains(&format!("`{wire}`")), "executor.md does not list {wire}");
    }
    for code in [
        "AMBIGUOUS_SUBMISSION",
        "HOST_UI_CHANGED",
        "MESSAGE_DELIVERY_TIMEOUT",
        "DEADLINE_EXCEEDED",
        "STEERING_UNAVAILABLE",
        "COMPOSER_BUSY",
        "CONVERSATION_CLOSED",
        "CONVERSATION_FULL",
        "CANCELLED",
    ] {
        assert_eq!(engine::ExecErrorCode::parse(code).as_str(), code);
        assert!(doc.contains(&format!("`{code}`")), "executor.md does not list {code}");
    }
}

#[test]
fn every_command_kind_has_a_fixture_and_is_documented() {
    let doc = std::fs::read_to_string(protocol_dir().join("executor.md")).expect("docs/protocol/executor.md exists");
    let Err(e) = serde_json::from_str::<KindWire>(r#""\u0000""#) else { panic!("an unknown kind must not decode") };
    let message = e.to_string();
    let list = message.split("expected one of").nth(1).unwrap_or_else(|| panic!("serde lists the kinds: {message}"));
    let kinds: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
    assert!(kinds.len() >= 6, "{kinds:?}");
    let commands: Vec<String> =
        fixtures().into_iter().filter(|(name, _)| name.starts_with("daemon.command.")).map(|(_, text)| text).collect();
    for kind in kinds {
        let wire = format!(r#""kind":"{kind}""#);
        assert!(commands.iter().any(|text| text.contains(&wire)), "no daemon.command fixture of kind {kind}");
        assert!(doc.contains(&format!("`{kind}`")), "executor.md does not describe {kind}");
    }
}

/// `fixtures/rules/version.json`: every case decodes to its code, and after a `hello` the
/// session answers it with that code and closes exactly when the case says so (a `v`
/// that is not a number is `MALFORMED` and keeps the connection; another number is
/// `UNSUPPORTED_VERSION` and closes). The extension's tests load the same file.
#[test]
fn the_version_rule_cases_hold_in_the_codec_and_the_session() {
    let text = std::fs::read_to_string(protocol_dir().join("fixtures/rules/version.json")).expect("the version rule");
    let rule: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let cases = rule["cases"].as_array().expect("cases");
    assert!(cases.len() >= 10, "{cases:?}");
    let doc = std::fs::read_to_string(protocol_dir().join("executor.md")).expect("executor.md");
    assert!(doc.contains("fixtures/rules/version.json"), "executor.md points at the rule's cases");
    for case in cases {
        let frame = case["frame"].as_str().expect("frame");
        let code = case["code"].as_str();
        let closes = case["closes"].as_bool().expect("closes");
        let decoded = decode_executor(frame, MESSAGE_BYTES_MAX).map_err(|e| e.code());
        let wire = decoded.as_ref().err().map(|c| serde_json::to_value(c).expect("codes serialize"));
        assert_eq!(wire.as_ref().and_then(|w| w.as_str()), code, "{frame}");

        let mut session = Session::new(SessionConfig::new("secret"));
        let hello = encode(&ExecutorMessage::Hello(hello("secret", "chrome-1")));
        assert!(session.on_text(&hello, 0).registered.is_some());
        let step = session.on_text(frame, 1);
        let replied = step.replies.iter().find_map(|r| match r {
            DaemonMessage::ProtocolError(e) => Some(serde_json::to_value(e.code).expect("codes serialize")),
            _ => None,
        });
        assert_eq!(replied.as_ref().and_then(|w| w.as_str()), code, "{frame}");
        assert_eq!(step.close, closes, "{frame}");
    }
}

/// A `hello` with no bindings, no journal, steering on and a concurrency of 4 (the test
/// executor's, `test_executor::hello`, which this crate's tests cannot depend on).
fn hello(token: &str, executor_id: &str) -> Hello {
    Hello {
        token: token.to_string(),
        executor_id: executor_id.to_string(),
        protocol: PROTOCOL_VERSION,
        capabilities: Capabilities { steering: true, operator: false, kinds: None, heartbeat_echo: false },
        concurrency_max: 4,
        bindings: Vec::new(),
        journal: Vec::new(),
        epoch: None,
        accounts: None,
    }
}
