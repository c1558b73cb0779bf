//! Rule 11: no import circle between the modules of one crate.

use crate::{assert_clean, workspace};
use xtask::tidy_imports;
use xtask::tidy_violation::{self, Rule, SourceFile, Violation};

#[test]
fn workspace_rule_11_no_import_circle_between_modules() {
    let ws = workspace();
    for crate_dir in tidy_imports::CIRCLE_FREE_CRATES {
        let edges = tidy_imports::module_edges(&ws.rust_files, crate_dir);
        // A crate of one top-level module (or none) has no edge to read, and no circle.
        let src = format!("{crate_dir}/src/");
        let modules: std::collections::BTreeSet<&str> = ws
            .rust_files
            .iter()
            .filter_map(|f| f.path.strip_prefix(&src))
            .filter(|rel| !rel.starts_with("bin/") && *rel != "lib.rs" && *rel != "main.rs")
            .filter_map(|rel| rel.trim_end_matches(".rs").split('/').next())
            .collect();
        assert!(!edges.is_empty() || modules.len() < 2, "{crate_dir}: no module edges read");
    }
    let mut violations = tidy_imports::check_import_circles(&ws.rust_files);
    violations.extend(tidy_imports::check_every_crate_listed(&ws.root_manifest));
    assert_clean("import-circle", violations);
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
                tidy_violation::TEST_CODE_MARKER
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

#[test]
fn rule_11_every_member_is_listed_and_every_listed_crate_is_a_member() {
    let manifest = |members: &str| format!("[workspace]\nmembers = [{members}]\n");
    let all: Vec<String> = tidy_imports::CIRCLE_FREE_CRATES.iter().map(|c| format!("\"{c}\"")).collect();
    assert_eq!(tidy_imports::check_every_crate_listed(&manifest(&all.join(", "))), []);
    let with_new = format!("{}, \"adapters/new\"", all.join(", "));
    let v = tidy_imports::check_every_crate_listed(&manifest(&with_new));
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].message.contains("`adapters/new` is under no import-circle rule"), "{}", v[0].message);
    let without_sim: Vec<&String> = all.iter().filter(|c| c.as_str() != "\"sim\"").collect();
    let without_sim: Vec<&str> = without_sim.iter().map(|c| c.as_str()).collect();
    let v = tidy_imports::check_every_crate_listed(&manifest(&without_sim.join(", ")));
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].message.contains("`sim` is listed"), "{}", v[0].message);
}

#[test]
fn rule_11_a_shared_root_and_test_modules_make_no_edge() {
    // In the engine, `engine.rs` is read as a root: a rule file that adds methods to
    // `Engine` and `engine.rs` holding that rule's state make no circle.
    let files: Vec<SourceFile> = [
        ("engine/src/lib.rs", "//! E.\nmod engine;\nmod holds;\npub use engine::Engine;\n"),
        ("engine/src/engine.rs", "//! Engine.\nuse crate::holds::Holds;\n"),
        ("engine/src/holds/mod.rs", "//! Holds.\nuse crate::engine::Engine;\nuse crate::Engine as E;\n"),
    ]
    .iter()
    .map(|(p, t)| SourceFile::new(p, t))
    .collect();
    assert!(tidy_imports::module_edges(&files, "engine").is_empty());
    assert!(tidy_imports::check_import_circles_in(&files, &["engine"]).is_empty());
    // Elsewhere the same files are a circle.
    let moved: Vec<SourceFile> =
        files.iter().map(|f| SourceFile::new(&f.path.replacen("engine/", "k/", 1), &f.text)).collect();
    assert_eq!(tidy_imports::check_import_circles_in(&moved, &["k"]).len(), 1);
    // A test module's file (`a/tests.rs`) is test code: its imports are no edges.
    let tests = circle_report(&[
        ("k/src/a/mod.rs", "//! A.\nuse crate::b;\n#[cfg(test)]\nmod tests;\n"),
        ("k/src/a/tests.rs", "//! A's tests.\nuse super::*;\n"),
        ("k/src/b/mod.rs", "//! B.\n#[cfg(test)]\nmod tests;\n"),
        ("k/src/b/tests.rs", "//! B's tests.\nuse crate::a;\n"),
    ]);
    assert!(tests.is_empty(), "{tests:#?}");
}
