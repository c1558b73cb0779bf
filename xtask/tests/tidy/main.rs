//! The house rules, enforced: each rule family runs on the real workspace and must find
//! nothing, and each rule is shown to fire on a small bad sample (so these tests can fail).
//! One module per rule family, as in `xtask/src/`; this file holds the helpers they share,
//! the walk of the real tree and the whole run.

use std::path::PathBuf;

use xtask::tidy::{self, Workspace};
use xtask::tidy_manifest;
use xtask::tidy_violation::{Rule, SourceFile, Violation};

mod architecture;
mod extension;
mod imports;
mod layers;
mod manifest;
mod protocol;
mod rules;
mod signals;
mod source;

use architecture::ROOT_MANIFEST;
use manifest::GOOD_MANIFEST;

/// The workspace root: the xtask crate sits directly under it.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn workspace() -> Workspace {
    tidy::load(&root()).expect("the workspace tree is readable")
}

fn assert_clean(family: &str, violations: Vec<Violation>) {
    if violations.is_empty() {
        return;
    }
    let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
    panic!("house rule `{family}` is broken in {} place(s):\n{}", list.len(), list.join("\n"));
}

fn over_rust_files(check: fn(&SourceFile) -> Vec<Violation>) -> Vec<Violation> {
    workspace().rust_files.iter().flat_map(check).collect()
}

fn over_manifests(check: fn(&SourceFile) -> Vec<Violation>) -> Vec<Violation> {
    workspace().manifests.iter().flat_map(check).collect()
}

fn rules(violations: &[Violation]) -> Vec<(usize, Rule)> {
    violations.iter().map(|v| (v.line, v.rule)).collect()
}

/// The ignore attribute, assembled at run time so this file does not break rule 2.
fn ignore_attribute() -> String {
    concat!("#[", "ignore]").to_string()
}

// ---------------------------------------------------------------------------------------
// The real workspace.
// ---------------------------------------------------------------------------------------

#[test]
fn walk_sees_the_workspace_and_skips_build_output() {
    let ws = workspace();
    let rust: Vec<&str> = ws.rust_files.iter().map(|f| f.path.as_str()).collect();
    let manifests: Vec<&str> = ws.manifests.iter().map(|f| f.path.as_str()).collect();
    for expected in ["engine/src/lib.rs", "xtask/src/tidy.rs", "xtask/tests/tidy/main.rs"] {
        assert!(rust.contains(&expected), "{expected} not walked: {rust:?}");
    }
    for expected in ["Cargo.toml", "engine/Cargo.toml", "xtask/Cargo.toml"] {
        assert!(manifests.contains(&expected), "{expected} not walked: {manifests:?}");
    }
    let skipped = |p: &&str| p.split('/').any(|c| c == "target" || c == "node_modules" || c.starts_with('.'));
    assert!(!rust.iter().any(skipped), "walked into a skipped dir");
    assert!(!manifests.iter().any(skipped), "walked into a skipped dir");
    let members = tidy_manifest::workspace_members(&ws.root_manifest);
    for expected in ["engine", "xtask"] {
        assert!(
            members.iter().any(|m| m == expected),
            "member {expected} not read from the root manifest: {members:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The whole run.
// ---------------------------------------------------------------------------------------

#[test]
fn check_runs_every_rule_and_sorts_the_report() {
    let ws = Workspace {
        rust_files: vec![
            SourceFile::new("engine/src/z.rs", "fn f() { Some(1).unwrap(); }\n"),
            SourceFile::new("engine/src/a.rs", "//! A.\nuse std::collections::HashSet;\n"),
            SourceFile::new("sim/src/lib.rs", "//! S.\nfn f() { todo!() }\n"),
        ],
        manifests: vec![SourceFile::new(
            "engine/Cargo.toml",
            &GOOD_MANIFEST.replace("serde.workspace", "tokio.workspace"),
        )],
        root_manifest: ROOT_MANIFEST.to_string(),
        architecture: None,
        script_files: vec![SourceFile::new("extension/src/core/x.js", "import { a } from './a.js';\n")],
    };
    let report: Vec<String> = tidy::check(&ws).iter().map(ToString::to_string).collect();
    let prefixes: Vec<&str> = report.iter().map(|line| line.split(" [").next().unwrap_or(line)).collect();
    assert_eq!(
        prefixes,
        [
            "ARCHITECTURE.md:",
            "engine/Cargo.toml:8:",
            "engine/src/a.rs:2:",
            "engine/src/z.rs:1:",
            "engine/src/z.rs:1:",
            "extension/src/core/x.js:1:",
            "sim/src/lib.rs:2:",
        ],
        "{report:#?}"
    );
    assert!(report[3].contains("[module-doc]") || report[4].contains("[module-doc]"));
    assert!(report[3].contains("[no-unwrap]") || report[4].contains("[no-unwrap]"));
    assert_eq!(ws.files_checked(), 5);
}
