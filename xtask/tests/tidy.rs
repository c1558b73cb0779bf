//! The house rules, enforced: each rule family runs on the real workspace and must find
//! nothing, and each rule is shown to fire on a small bad sample (so these tests can fail).

use std::path::PathBuf;

use xtask::tidy::{self, Rule, SourceFile, Violation, Workspace};
use xtask::{tidy_extension, tidy_imports, tidy_layers, tidy_protocol};

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
    for expected in ["engine/src/lib.rs", "xtask/src/tidy.rs", "xtask/tests/tidy.rs"] {
        assert!(rust.contains(&expected), "{expected} not walked: {rust:?}");
    }
    for expected in ["Cargo.toml", "engine/Cargo.toml", "xtask/Cargo.toml"] {
        assert!(manifests.contains(&expected), "{expected} not walked: {manifests:?}");
    }
    let skipped = |p: &&str| p.split('/').any(|c| c == "target" || c == "node_modules" || c.starts_with('.'));
    assert!(!rust.iter().any(skipped), "walked into a skipped dir");
    assert!(!manifests.iter().any(skipped), "walked into a skipped dir");
    let members = tidy::workspace_members(&ws.root_manifest);
    for expected in ["engine", "xtask"] {
        assert!(
            members.iter().any(|m| m == expected),
            "member {expected} not read from the root manifest: {members:?}"
        );
    }
}

#[test]
fn workspace_rule_1_every_rust_file_has_a_module_doc() {
    assert_clean("module-doc", over_rust_files(tidy::check_module_doc));
}

#[test]
fn workspace_rule_2_no_test_is_ignored() {
    assert_clean("no-ignore", over_rust_files(tidy::check_no_ignore));
}

#[test]
fn workspace_rule_3_no_debug_macros_in_production_code() {
    assert_clean("no-debug-macros", over_rust_files(tidy::check_debug_macros));
}

#[test]
fn workspace_rule_4_engine_is_pure() {
    let mut violations = over_rust_files(tidy::check_engine_purity);
    violations.extend(over_manifests(tidy::check_engine_dependencies));
    assert_clean("engine-purity", violations);
}

#[test]
fn workspace_rule_5_manifests_inherit_from_the_workspace() {
    assert_clean("manifest-inherits", over_manifests(tidy::check_manifest_inherits));
}

#[test]
fn workspace_rule_6_engine_never_unwraps() {
    assert_clean("no-unwrap", over_rust_files(tidy::check_no_unwrap));
}

#[test]
fn workspace_rule_7_architecture_doc_names_members_and_invariants() {
    let ws = workspace();
    assert_clean("architecture", tidy::check_architecture(&ws.root_manifest, ws.architecture.as_deref()));
}

// ---------------------------------------------------------------------------------------
// Rule 1: module docs.
// ---------------------------------------------------------------------------------------

#[test]
fn module_doc_accepts_a_leading_doc_after_blank_lines() {
    for text in ["//! Doc.\nfn f() {}\n", "\n  \n//! Doc.\n", "\u{feff}//! Doc.\n"] {
        let file = SourceFile::new("a/src/lib.rs", text);
        assert_eq!(tidy::check_module_doc(&file), [], "{text:?}");
    }
}

#[test]
fn module_doc_fires_when_the_first_line_is_not_a_module_doc() {
    let cases = [
        ("use std::fmt;\n//! Too late.\n", 1),
        ("\n#![allow(dead_code)]\n//! After an attribute.\n", 2),
        ("// A plain comment.\n", 1),
        ("/// An item doc.\nfn f() {}\n", 1),
        ("", 0),
        ("\n\n", 0),
    ];
    for (text, line) in cases {
        let file = SourceFile::new("a/tests/support/mod.rs", text);
        assert_eq!(rules(&tidy::check_module_doc(&file)), [(line, Rule::ModuleDoc)], "{text:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Rule 2: no ignored tests.
// ---------------------------------------------------------------------------------------

#[test]
fn no_ignore_fires_everywhere_with_or_without_a_reason() {
    let bare = format!("//! T.\n{}\n#[test]\nfn slow() {{}}\n", ignore_attribute());
    let reason =
        format!("//! T.\n#[test]\n{} = \"flaky\"]\nfn slow() {{}}\n", ignore_attribute().trim_end_matches(']'));
    for path in ["engine/src/a.rs", "engine/tests/a.rs", "x/benches/b.rs"] {
        let file = SourceFile::new(path, &bare);
        assert_eq!(rules(&tidy::check_no_ignore(&file)), [(2, Rule::NoIgnore)], "{path}");
        let file = SourceFile::new(path, &reason);
        assert_eq!(rules(&tidy::check_no_ignore(&file)), [(3, Rule::NoIgnore)], "{path}");
    }
}

#[test]
fn no_ignore_accepts_the_word_and_longer_attribute_names() {
    let text = format!(
        "//! T.\n// We ignore blank lines.\n{}_case]\nfn ignore_me() {{}}\n",
        ignore_attribute().trim_end_matches(']')
    );
    let file = SourceFile::new("engine/tests/a.rs", &text);
    assert_eq!(tidy::check_no_ignore(&file), []);
}

// ---------------------------------------------------------------------------------------
// Rule 3: no debugging or placeholder macros in production code.
// ---------------------------------------------------------------------------------------

#[test]
fn debug_macros_fire_in_production_code() {
    let text = "//! P.\nfn a() { dbg!(1); }\nfn b() { todo!() }\nfn c() { unimplemented!(\"x\") }\n";
    let file = SourceFile::new("engine/src/a.rs", text);
    assert_eq!(
        rules(&tidy::check_debug_macros(&file)),
        [(2, Rule::NoDebugMacros), (3, Rule::NoDebugMacros), (4, Rule::NoDebugMacros)]
    );
    // Not only in the engine: every crate's production code.
    let file = SourceFile::new("adapters/store/src/lib.rs", text);
    assert_eq!(tidy::check_debug_macros(&file).len(), 3);
}

#[test]
fn debug_macros_are_allowed_in_test_code() {
    let after_marker = "//! P.\nfn a() {}\n\n#[cfg(test)]\nmod tests {\n    fn b() { dbg!(1); todo!() }\n}\n";
    let file = SourceFile::new("engine/src/a.rs", after_marker);
    assert_eq!(tidy::check_debug_macros(&file), []);
    let in_tests_dir = "//! T.\nfn b() { dbg!(1); }\n";
    let file = SourceFile::new("engine/tests/support/mod.rs", in_tests_dir);
    assert_eq!(tidy::check_debug_macros(&file), []);
}

// ---------------------------------------------------------------------------------------
// Rule 4: the engine is pure.
// ---------------------------------------------------------------------------------------

#[test]
fn engine_purity_fires_on_every_forbidden_token_even_in_comments() {
    for token in tidy::ENGINE_FORBIDDEN_TOKENS {
        let text = format!("//! E.\nuse std::sync::Arc;\n// see {token} here\n");
        let file = SourceFile::new("engine/src/ops/mod.rs", &text);
        assert_eq!(rules(&tidy::check_engine_purity(&file)), [(3, Rule::EnginePurity)], "{token}");
    }
    let file = SourceFile::new(
        "engine/src/a.rs",
        "//! E.\nlet t = std::time::Instant::now();\nlet m: HashMap<u8, u8> = HashMap::new();\n",
    );
    assert_eq!(rules(&tidy::check_engine_purity(&file)), [(2, Rule::EnginePurity), (3, Rule::EnginePurity)]);
}

#[test]
fn engine_purity_only_applies_to_engine_sources() {
    let clean = "//! E.\nuse std::collections::BTreeMap;\nuse std::sync::Arc;\nuse std::fmt;\n";
    assert_eq!(tidy::check_engine_purity(&SourceFile::new("engine/src/a.rs", clean)), []);
    let impure = "//! A.\nuse tokio::fs;\nuse std::collections::HashMap;\n";
    for path in ["adapters/store/src/lib.rs", "engine/tests/a.rs", "xtask/src/tidy.rs"] {
        assert_eq!(tidy::check_engine_purity(&SourceFile::new(path, impure)), [], "{path}");
    }
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
    let violations = tidy::check_engine_dependencies(&SourceFile::new("engine/Cargo.toml", manifest));
    let found: Vec<(usize, bool)> = violations.iter().map(|v| (v.line, v.rule == Rule::EnginePurity)).collect();
    assert_eq!(found, [(7, true), (9, true), (13, true)], "{violations:#?}");
    assert!(violations[0].message.contains("`tokio`"));
    assert!(violations[1].message.contains("`fjall`"));
    assert!(violations[2].message.contains("`libc`"));
    // Other crates may depend on what they like.
    assert_eq!(tidy::check_engine_dependencies(&SourceFile::new("adapters/Cargo.toml", manifest)), []);
}

// ---------------------------------------------------------------------------------------
// Rule 5: manifests inherit from the workspace.
// ---------------------------------------------------------------------------------------

const GOOD_MANIFEST: &str = r#"[package]
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
    assert_eq!(tidy::check_manifest_inherits(&SourceFile::new("a/Cargo.toml", GOOD_MANIFEST)), []);
    let other_spelling = "[package]\nname = \"a\"\nlints.workspace = true\n\
                          [package.version]\nworkspace = true\n[package.publish]\nworkspace = true\n";
    // `lints.workspace` above sits inside [package]; that is not the lints table.
    let v = tidy::check_manifest_inherits(&SourceFile::new("a/Cargo.toml", other_spelling));
    assert_eq!(rules(&v), [(0, Rule::ManifestInherits)]);
    let top_level = "lints.workspace = true\n[package]\nname = \"a\"\n\
                     version.workspace = true\npublish.workspace = true\n";
    assert_eq!(tidy::check_manifest_inherits(&SourceFile::new("a/Cargo.toml", top_level)), []);
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
        let v = tidy::check_manifest_inherits(&SourceFile::new("a/Cargo.toml", &text));
        assert_eq!(rules(&v), [(0, Rule::ManifestInherits)], "{text}");
        assert!(v[0].message.contains(field), "{}", v[0].message);
    }
}

#[test]
fn manifest_inherits_skips_the_virtual_root() {
    let root = "[workspace]\nmembers = [\"a\"]\n\n[workspace.package]\nversion = \"0.0.0\"\n";
    assert_eq!(tidy::check_manifest_inherits(&SourceFile::new("Cargo.toml", root)), []);
}

// ---------------------------------------------------------------------------------------
// Rule 6: no unwrap in the engine.
// ---------------------------------------------------------------------------------------

#[test]
fn no_unwrap_fires_in_engine_production_code_only() {
    let text = "//! E.\nfn a(x: Option<u8>) -> u8 {\n    x.unwrap()\n}\n\
                fn b(x: Option<u8>) -> u8 { x.expect(\"set at spawn\") }\n\
                fn c(x: Option<u8>) -> u8 { x.unwrap_or(0) }\n\
                #[cfg(test)]\nmod tests {\n    fn d() { Some(1).unwrap(); }\n}\n";
    let file = SourceFile::new("engine/src/ops/run.rs", text);
    assert_eq!(rules(&tidy::check_no_unwrap(&file)), [(3, Rule::NoUnwrap)]);
    for path in ["engine/tests/a.rs", "xtask/src/main.rs", "adapters/src/a.rs"] {
        assert_eq!(tidy::check_no_unwrap(&SourceFile::new(path, text)), [], "{path}");
    }
}

// ---------------------------------------------------------------------------------------
// Rule 7: ARCHITECTURE.md.
// ---------------------------------------------------------------------------------------

const ROOT_MANIFEST: &str = "[workspace]\nresolver = \"3\"\nmembers = [\n    \"engine\", # core\n    \"xtask\",\n]\n\n[workspace.dependencies]\nengine = { path = \"engine\" }\n";

const GOOD_ARCHITECTURE: &str = "# Architecture\n\n## Codemap\n\n### `engine`\nThe state machine.\n\n\
     Architecture Invariant: the engine knows nothing about JSON.\n\n### `xtask/`\nHouse rules.\n";

#[test]
fn workspace_members_reads_single_and_multi_line_lists() {
    assert_eq!(tidy::workspace_members(ROOT_MANIFEST), ["engine", "xtask"]);
    assert_eq!(tidy::workspace_members("[workspace]\nmembers = [\"engine\", \"xtask\"]\n"), ["engine", "xtask"]);
    // `members` of another table is not the workspace's.
    assert_eq!(tidy::workspace_members("[package]\nmembers = [\"x\"]\n"), Vec::<String>::new());
}

#[test]
fn architecture_accepts_a_doc_naming_every_member() {
    assert_eq!(tidy::check_architecture(ROOT_MANIFEST, Some(GOOD_ARCHITECTURE)), []);
}

#[test]
fn architecture_fires_when_the_doc_is_missing() {
    let v = tidy::check_architecture(ROOT_MANIFEST, None);
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert_eq!(v[0].file, "ARCHITECTURE.md");
    assert!(v[0].message.contains("missing"), "{}", v[0].message);
}

#[test]
fn architecture_fires_on_an_unnamed_member_or_no_invariant() {
    let no_xtask = GOOD_ARCHITECTURE.replace("`xtask/`", "tools");
    let v = tidy::check_architecture(ROOT_MANIFEST, Some(&no_xtask));
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert!(v[0].message.contains("`xtask`"), "{}", v[0].message);

    // A longer word is not a mention.
    let only_engineering = GOOD_ARCHITECTURE.replace("`engine`", "engineering").replace("the engine", "it");
    let v = tidy::check_architecture(ROOT_MANIFEST, Some(&only_engineering));
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert!(v[0].message.contains("`engine`"), "{}", v[0].message);

    let no_invariant = GOOD_ARCHITECTURE.replace("Architecture Invariant:", "Invariant:");
    let v = tidy::check_architecture(ROOT_MANIFEST, Some(&no_invariant));
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert!(v[0].message.contains("Architecture Invariant:"));

    let mid_line = GOOD_ARCHITECTURE.replace("Architecture Invariant:", "As said, Architecture Invariant:");
    assert_eq!(tidy::check_architecture(ROOT_MANIFEST, Some(&mid_line)).len(), 1);
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

#[test]
fn workspace_rules_8_to_10_hold_for_the_extension_scripts() {
    let ws = workspace();
    assert!(
        ws.script_files.iter().any(|f| f.path == "extension/src/core/executor.js"),
        "the extension's scripts were not read"
    );
    assert!(ws.script_files.iter().all(|f| !f.path.contains("node_modules")), "node_modules must be skipped");
    let mut violations = Vec::new();
    for file in &ws.script_files {
        violations.extend(tidy_extension::check_script_header(file));
        violations.extend(tidy_extension::check_core_purity(file));
        violations.extend(tidy_extension::check_no_skipped_tests(file));
    }
    assert_clean("extension", violations);
}

#[test]
fn rule_8_an_extension_script_must_say_what_it_is_for() {
    let bare = SourceFile::new("extension/src/ui/x.js", "\nexport const x = 1;\n");
    let found = tidy_extension::check_script_header(&bare);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].line, found[0].rule), (2, Rule::ExtensionHeader));
    let good = SourceFile::new("extension/src/ui/x.js", "// What x is for.\nexport const x = 1;\n");
    assert!(tidy_extension::check_script_header(&good).is_empty());
}

#[test]
fn rule_9_the_extension_core_takes_time_and_io_as_inputs() {
    for token in tidy_extension::CORE_FORBIDDEN_TOKENS {
        let file = SourceFile::new("extension/src/core/x.js", &format!("// x.\nconst y = {token}z;\n"));
        let found = tidy_extension::check_core_purity(&file);
        assert_eq!(found.len(), 1, "{token} not caught");
        assert_eq!((found[0].line, found[0].rule), (2, Rule::ExtensionPurity));
    }
    let commented =
        SourceFile::new("extension/src/core/x.js", "// no Date.now() here\n * nor setTimeout\nconst y = 1;\n");
    assert!(tidy_extension::check_core_purity(&commented).is_empty());
    let platform = SourceFile::new("extension/src/platform/x.js", "// x.\nsetTimeout(f, 1);\n");
    assert!(tidy_extension::check_core_purity(&platform).is_empty(), "only the core is pure");
}

#[test]
fn rule_10_no_extension_test_is_skipped() {
    for token in tidy_extension::SKIPPING_TOKENS {
        let file = SourceFile::new("extension/test/unit/x.test.mjs", &format!("// x.\ntest{token}'t', () => {{}});\n"));
        let found = tidy_extension::check_no_skipped_tests(&file);
        assert_eq!(found.len(), 1, "{token} not caught");
        assert_eq!(found[0].rule, Rule::NoSkippedScriptTests);
    }
}

// ---------------------------------------------------------------------------------------
// Rule 11: no import circle between the modules of one crate.
// ---------------------------------------------------------------------------------------

#[test]
fn workspace_rule_11_no_import_circle_between_modules() {
    let ws = workspace();
    for crate_dir in tidy_imports::CIRCLE_FREE_CRATES {
        let edges = tidy_imports::module_edges(&ws.rust_files, crate_dir);
        assert!(!edges.is_empty(), "{crate_dir}: no module edges read");
    }
    assert_clean("import-circle", tidy_imports::check_import_circles(&ws.rust_files));
}

fn circle_report(files: &[(&str, &str)]) -> Vec<Violation> {
    let files: Vec<SourceFile> = files.iter().map(|(p, t)| SourceFile::new(p, t)).collect();
    tidy_imports::check_import_circles_in(&files, &["k"])
}

#[test]
fn rule_11_a_circle_is_reported_with_its_path_and_where_each_step_is_written() {
    let found = circle_report(&[
        ("k/src/lib.rs", "//! K.\nmod a;\nmod b;\nmod c;\n"),
        ("k/src/a.rs", "//! A.\n\nuse crate::b::B;\n"),
        ("k/src/b.rs", "//! B.\nuse std::fmt;\nfn f() { crate::c::g() }\n"),
        ("k/src/c.rs", "//! C.\nuse crate::a;\n"),
    ]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!((found[0].file.as_str(), found[0].line, found[0].rule), ("k/src/a.rs", 3, Rule::ImportCircle));
    let message = &found[0].message;
    assert!(message.contains("a -> b -> c -> a"), "{message}");
    assert!(message.contains("k/src/b.rs:3 (b uses c)") && message.contains("k/src/c.rs:2 (c uses a)"), "{message}");
}

#[test]
fn rule_11_reads_groups_across_lines_super_paths_and_root_reexports() {
    // A group over several lines.
    let grouped = circle_report(&[
        ("k/src/a.rs", "//! A.\nuse crate::{\n    x::X,\n    b::{self, B},\n};\n"),
        ("k/src/b.rs", "//! B.\nuse crate::a::A;\n"),
        ("k/src/x.rs", "//! X.\n"),
    ]);
    assert_eq!(grouped.len(), 1, "{grouped:#?}");
    assert!(grouped[0].message.contains("a -> b -> a"), "{}", grouped[0].message);
    // `super::` from a top-level module is the crate root; from `a/inner.rs` it is `a`.
    let supers = circle_report(&[
        ("k/src/a/mod.rs", "//! A.\nmod inner;\nuse super::b::B;\n"),
        ("k/src/a/inner.rs", "//! Inner.\nuse super::A;\n"),
        ("k/src/b.rs", "//! B.\nfn f() { super::a::f() }\n"),
    ]);
    assert_eq!(supers.len(), 1, "{supers:#?}");
    let nested = circle_report(&[
        ("k/src/a/inner.rs", "//! Inner.\nuse super::super::b;\n"),
        ("k/src/b.rs", "//! B.\nuse crate::a;\n"),
    ]);
    assert_eq!(nested.len(), 1, "{nested:#?}");
    // A name the root re-exports counts as its module's.
    let reexported = circle_report(&[
        ("k/src/lib.rs", "//! K.\nmod a;\nmod b;\npub use b::{Thing, other::Inner as Renamed};\n"),
        ("k/src/a.rs", "//! A.\nuse crate::Renamed;\n"),
        ("k/src/b.rs", "//! B.\nuse crate::a;\n"),
    ]);
    assert_eq!(reexported.len(), 1, "{reexported:#?}");
}

#[test]
fn rule_11_leaves_out_comments_tests_the_root_other_crates_and_lookalikes() {
    let clean = circle_report(&[
        // The root uses every module: it wires them, it is no module itself.
        ("k/src/lib.rs", "//! K.\nmod a;\nmod b;\nuse crate::a::A;\nuse crate::b::B;\n"),
        ("k/src/a.rs", "//! A, see [`crate::b`].\nuse crate::b::B; // b is below a\nuse other_crate::a;\n"),
        (
            "k/src/b.rs",
            &format!(
                "//! B.\nfn f() {{ let q = b'\"'; let s = \"crate::a\"; /* crate::a */ }}\n{}\nmod tests {{ use crate::a; }}\n",
                tidy::TEST_CODE_MARKER
            ),
        ),
        // Another crate with a circle: not in the list.
        ("j/src/a.rs", "//! A.\nuse crate::b;\n"),
        ("j/src/b.rs", "//! B.\nuse crate::a;\n"),
    ]);
    // `a -> b` is real; nothing in b goes back: not the string (even after a quote in a
    // character literal), the comment, the test module, nor `other_crate::a` in a.
    assert!(clean.is_empty(), "{clean:#?}");
    let files: Vec<SourceFile> =
        [("k/src/b.rs", "//! B.\n// crate::a\nuse crate::x;\n")].iter().map(|(p, t)| SourceFile::new(p, t)).collect();
    assert!(tidy_imports::module_edges(&files, "k").is_empty(), "a comment and a non-module name are no edges");
}

// ---------------------------------------------------------------------------------------
// Rule 12: the CLI executor's layers.
// ---------------------------------------------------------------------------------------

#[test]
fn workspace_rule_12_the_cli_executor_imports_only_downwards() {
    let ws = workspace();
    let files: Vec<&SourceFile> =
        ws.rust_files.iter().filter(|f| f.path.starts_with(tidy_layers::CLI_EXECUTOR_SRC)).collect();
    for (folder, _) in tidy_layers::CLI_EXECUTOR_LAYERS {
        let prefix = format!("{}{folder}/", tidy_layers::CLI_EXECUTOR_SRC);
        assert!(files.iter().any(|f| f.path.starts_with(&prefix)), "no file read under {prefix}");
    }
    assert_clean("cli-executor-layers", files.into_iter().flat_map(tidy_layers::check_cli_executor_layers).collect());
}

/// The rule's findings for `text` at `path` under the CLI executor's `src/`, as lines.
fn layers(path: &str, text: &str) -> Vec<usize> {
    let file = SourceFile::new(&format!("{}{path}", tidy_layers::CLI_EXECUTOR_SRC), text);
    let found = tidy_layers::check_cli_executor_layers(&file);
    assert!(found.iter().all(|v| v.rule == Rule::CliExecutorLayers), "{found:?}");
    found.iter().map(|v| v.line).collect()
}

#[test]
fn rule_12_the_base_imports_neither_a_room_nor_the_loop() {
    let text = "//! B.\nuse crate::Error;\nuse crate::base::limits::X;\nuse crate::codex::home;\nfn f() { crate::claude::g(); crate::run::h(); }\n";
    assert_eq!(layers("base/child.rs", text), [4, 5, 5]);
    assert_eq!(layers("base/journal/tests.rs", "//! T.\nuse crate::run::router::Router;\n"), [2]);
}

#[test]
fn rule_12_a_room_imports_the_base_and_itself_only() {
    let text = "//! C.\nuse crate::base::pump::Pump;\nuse crate::codex::jsonrpc;\nuse super::record::ThreadRecord;\n\
                use crate::claude::Claude;\nuse crate::run::supervise::serve;\n";
    assert_eq!(layers("codex/core/effect.rs", text), [5, 6]);
    let other = "//! C.\nuse crate::codex::Report;\nuse crate::claude::tz::Zones;\n";
    assert_eq!(layers("claude/core/limit.rs", other), [2]);
    let found = tidy_layers::check_cli_executor_layers(&SourceFile::new(
        &format!("{}claude/task.rs", tidy_layers::CLI_EXECUTOR_SRC),
        "//! C.\nuse crate::codex::reconcile::ABSENT;\n",
    ));
    assert!(found[0].message.contains("never the other room"), "{found:?}");
}

#[test]
fn rule_12_the_loop_may_import_every_layer() {
    let text = "//! R.\nuse crate::base::worker::In;\nuse crate::codex::task::CodexTask;\nuse crate::claude::task::ClaudeTask;\nuse crate::run::supervise::serve;\n";
    assert_eq!(layers("run/router.rs", text), Vec::<usize>::new());
}

#[test]
fn rule_12_groups_lines_and_super_paths_are_read() {
    let grouped = "//! G.\nuse crate::{\n    Error,\n    base::report::Report,\n    run::connection,\n};\n";
    assert_eq!(layers("claude/cli.rs", grouped), [2]);
    // `super` climbs from the file's module: out of `codex/` from `codex/core/x.rs` takes three.
    let climbing = "//! S.\nuse super::super::jsonrpc;\nuse super::super::super::run::router;\nuse super::super::super::base::x;\n";
    assert_eq!(layers("codex/core/x.rs", climbing), [3]);
    // Inside an inline module, `super` is the file's own module (`base`); two climb to the root.
    let inline = "//! I.\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::limits::X;\n    \
                  use super::super::run::router;\n}\nuse super::codex::Codex;\n";
    assert_eq!(layers("base/mod.rs", inline), [7, 9]);
}

#[test]
fn rule_12_comments_strings_and_characters_are_not_imports() {
    let text = "//! See `crate::run::router`.\n/// A [`crate::codex::Codex`] link.\nfn f() {\n    /* crate::run::x /* nested */ crate::claude::y */\n    \
                let s = \"crate::run::z\";\n    let r = r#\"crate::codex::\"q\"# ;\n    let c = '\"';\n    let d = '\\'';\n    \
                let l: &'static str = \"\";\n    crate::run::after_all();\n}\n";
    assert_eq!(layers("base/x.rs", text), [10]);
}

#[test]
fn rule_12_every_file_sits_in_a_layer_folder_and_names_layers() {
    assert_eq!(layers("helpers.rs", "//! H.\nuse crate::base::x;\n"), [0]);
    assert_eq!(layers("util/x.rs", "//! U.\n"), [0]);
    assert_eq!(layers("lib.rs", "//! L.\npub mod run;\npub use run::connection;\n"), Vec::<usize>::new());
    // A root alias hides a layer: inside the crate, paths go through the folders.
    assert_eq!(layers("codex/task.rs", "//! T.\nuse crate::connection::run;\nuse crate::Error;\n"), [2]);
    // Other crates are not this rule's business.
    let elsewhere = SourceFile::new("adapters/bridge/src/x.rs", "//! X.\nuse crate::server::y;\n");
    assert!(tidy_layers::check_cli_executor_layers(&elsewhere).is_empty());
}

// ---------------------------------------------------------------------------------------
// Rule 13: the protocol crates depend only on the engine and serde.
// ---------------------------------------------------------------------------------------

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
