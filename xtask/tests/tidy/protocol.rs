//! Rule 13: the protocol crates depend only on the engine and serde.

use crate::{assert_clean, over_manifests, rules, workspace};
use xtask::tidy_protocol;
use xtask::tidy_violation::{Rule, SourceFile};

#[test]
fn workspace_rule_13_the_protocol_crates_depend_on_the_engine_and_serde_only() {
    let ws = workspace();
    let mut violations = tidy_protocol::check_protocol_crates_exist(&ws.manifests);
    violations.extend(over_manifests(tidy_protocol::check_protocol_dependencies));
    assert_clean("protocol-purity", violations);
}

#[test]
fn rule_13_fires_on_a_runtime_in_a_protocol_crate() {
    let manifest = r#"[package]
name = "executor-protocol"

[dependencies]
engine.workspace = true
caller-protocol.workspace = true
serde.workspace = true
tokio = { workspace = true, features = ["rt"] }

[dependencies.axum]
workspace = true

[target.'cfg(unix)'.dependencies]
rustix = "1"

[dev-dependencies]
test-executor.workspace = true
"#;
    let violations =
        tidy_protocol::check_protocol_dependencies(&SourceFile::new("adapters/protocol/executor/Cargo.toml", manifest));
    assert_eq!(rules(&violations), [(8, Rule::ProtocolPurity), (10, Rule::ProtocolPurity), (14, Rule::ProtocolPurity)]);
    assert!(violations[0].message.contains("`tokio`"), "{}", violations[0].message);
    assert!(violations[1].message.contains("`axum`"));
    assert!(violations[2].message.contains("`rustix`"));
    // The caller protocol has its own list: the executor protocol is not on it.
    let caller = "[dependencies]
engine.workspace = true
executor-protocol.workspace = true
";
    let v = tidy_protocol::check_protocol_dependencies(&SourceFile::new("adapters/protocol/caller/Cargo.toml", caller));
    assert_eq!(rules(&v), [(3, Rule::ProtocolPurity)]);
    // Other crates may depend on what they like.
    assert_eq!(
        tidy_protocol::check_protocol_dependencies(&SourceFile::new("adapters/bridge/Cargo.toml", manifest)),
        []
    );
}

#[test]
fn rule_13_fires_when_a_protocol_crate_moved_away() {
    let only_caller = [SourceFile::new(
        "adapters/protocol/caller/Cargo.toml",
        "[package]
",
    )];
    let v = tidy_protocol::check_protocol_crates_exist(&only_caller);
    assert_eq!(rules(&v), [(0, Rule::ProtocolPurity)]);
    assert_eq!(v[0].file, "adapters/protocol/executor/Cargo.toml");
}
