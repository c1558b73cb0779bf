//! Rules 4 (the engine's dependencies) and 5 (manifests inherit from the workspace).

use crate::{assert_clean, over_manifests, rules};
use xtask::tidy_manifest;
use xtask::tidy_violation::{Rule, SourceFile};

#[test]
fn workspace_rule_5_manifests_inherit_from_the_workspace() {
    assert_clean("manifest-inherits", over_manifests(tidy_manifest::check_manifest_inherits));
}

#[test]
fn engine_dependencies_fire_on_anything_but_serde_and_rand_chacha() {
    let manifest = r#"[package]
name = "engine"

[dependencies]
serde.workspace = true
rand_chacha = { workspace = true }
tokio = { version = "1", features = ["rt"] } # not here

[dependencies.fjall]
version = "2"

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[dev-dependencies]
proptest = "1"

[build-dependencies]
cc = "1"
"#;
    let violations = tidy_manifest::check_engine_dependencies(&SourceFile::new("engine/Cargo.toml", manifest));
    let found: Vec<(usize, bool)> = violations.iter().map(|v| (v.line, v.rule == Rule::EnginePurity)).collect();
    assert_eq!(found, [(7, true), (9, true), (13, true)], "{violations:#?}");
    assert!(violations[0].message.contains("`tokio`"));
    assert!(violations[1].message.contains("`fjall`"));
    assert!(violations[2].message.contains("`libc`"));
    // Other crates may depend on what they like.
    assert_eq!(tidy_manifest::check_engine_dependencies(&SourceFile::new("adapters/Cargo.toml", manifest)), []);
}

// ---------------------------------------------------------------------------------------
// Rule 5: manifests inherit from the workspace.
// ---------------------------------------------------------------------------------------

pub(crate) const GOOD_MANIFEST: &str = r#"[package]
name = "a"
version.workspace = true
edition.workspace = true
publish = { workspace = true }

[dependencies]
serde.workspace = true

[lints]
workspace = true
"#;

#[test]
fn manifest_inherits_accepts_every_spelling() {
    assert_eq!(tidy_manifest::check_manifest_inherits(&SourceFile::new("a/Cargo.toml", GOOD_MANIFEST)), []);
    let other_spelling = "[package]\nname = \"a\"\nlints.workspace = true\n\
                          [package.version]\nworkspace = true\n[package.publish]\nworkspace = true\n";
    // `lints.workspace` above sits inside [package]; that is not the lints table.
    let v = tidy_manifest::check_manifest_inherits(&SourceFile::new("a/Cargo.toml", other_spelling));
    assert_eq!(rules(&v), [(0, Rule::ManifestInherits)]);
    let top_level = "lints.workspace = true\n[package]\nname = \"a\"\n\
                     version.workspace = true\npublish.workspace = true\n";
    assert_eq!(tidy_manifest::check_manifest_inherits(&SourceFile::new("a/Cargo.toml", top_level)), []);
}

#[test]
fn manifest_inherits_fires_on_each_missing_field() {
    let cases = [
        (GOOD_MANIFEST.replace("version.workspace = true", "version = \"0.1.0\""), "version"),
        (GOOD_MANIFEST.replace("publish = { workspace = true }", "publish = false"), "publish"),
        (GOOD_MANIFEST.replace("[lints]\nworkspace = true\n", ""), "[lints]"),
        (GOOD_MANIFEST.replace("[lints]\nworkspace = true", "[lints]\nworkspace = false"), "[lints]"),
        (GOOD_MANIFEST.replace("[lints]\nworkspace = true", "[lints]\n# workspace = true"), "[lints]"),
    ];
    for (text, field) in cases {
        let v = tidy_manifest::check_manifest_inherits(&SourceFile::new("a/Cargo.toml", &text));
        assert_eq!(rules(&v), [(0, Rule::ManifestInherits)], "{text}");
        assert!(v[0].message.contains(field), "{}", v[0].message);
    }
}

#[test]
fn manifest_inherits_skips_the_virtual_root() {
    let root = "[workspace]\nmembers = [\"a\"]\n\n[workspace.package]\nversion = \"0.0.0\"\n";
    assert_eq!(tidy_manifest::check_manifest_inherits(&SourceFile::new("Cargo.toml", root)), []);
}
