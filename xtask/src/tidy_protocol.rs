//! Rule 13: the protocol crates stay a protocol layer. `caller-protocol` and
//! `executor-protocol` hold the JSON shapes, codec and connection rules that the daemon,
//! the simulator and the CLI executor share; their `[dependencies]` name only the engine,
//! each other, serde and the few helpers they use, so that axum, tokio, fjall or any other
//! runtime can never creep in (and with it into everything that speaks the protocol).

use crate::tidy_manifest::runtime_dependencies;
use crate::tidy_violation::{Rule, SourceFile, Violation};

/// Each protocol crate's manifest and the only crates it may depend on outside
/// `[dev-dependencies]` (exactly the ones it uses).
pub const PROTOCOL_DEPENDENCIES_ALLOWED: [(&str, &[&str]); 2] = [
    ("adapters/protocol/caller/Cargo.toml", &["engine", "serde", "serde_json", "serde_path_to_error", "schemars"]),
    ("adapters/protocol/executor/Cargo.toml", &["engine", "caller-protocol", "serde", "serde_json", "thiserror"]),
];

/// Rule 13, manifest: a protocol crate's `[dependencies]` (target-specific tables
/// included) name only its allowed crates.
pub fn check_protocol_dependencies(manifest: &SourceFile) -> Vec<Violation> {
    let Some((_, allowed)) = PROTOCOL_DEPENDENCIES_ALLOWED.iter().find(|(path, _)| *path == manifest.path) else {
        return Vec::new();
    };
    runtime_dependencies(&manifest.text)
        .into_iter()
        .filter(|(_, name)| !allowed.contains(&name.as_str()))
        .map(|(line, name)| {
            Violation::new(
                &manifest.path,
                line,
                Rule::ProtocolPurity,
                format!(
                    "a protocol crate may depend only on {}; `{name}` belongs in the bridge, an executor or [dev-dependencies]",
                    allowed.join(", ")
                ),
            )
        })
        .collect()
}

/// Rule 13, presence: every protocol manifest the rule fences exists, so that moving a
/// crate cannot switch the rule off unnoticed.
pub fn check_protocol_crates_exist(manifests: &[SourceFile]) -> Vec<Violation> {
    PROTOCOL_DEPENDENCIES_ALLOWED
        .iter()
        .filter(|(path, _)| !manifests.iter().any(|m| m.path == *path))
        .map(|(path, _)| {
            Violation::new(
                path,
                0,
                Rule::ProtocolPurity,
                "the protocol crate's manifest is missing: update PROTOCOL_DEPENDENCIES_ALLOWED in xtask/src/tidy_protocol.rs if it moved".to_string(),
            )
        })
        .collect()
}
