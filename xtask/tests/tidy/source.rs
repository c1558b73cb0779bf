//! Rules 1 to 4 and 6, over the sources' text: module docs, no ignored test, no debugging
//! macro in production code, a pure engine that never unwraps.

use crate::{assert_clean, ignore_attribute, over_manifests, over_rust_files, rules};
use xtask::tidy;
use xtask::tidy_manifest;
use xtask::tidy_violation::{Rule, SourceFile};

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
    violations.extend(over_manifests(tidy_manifest::check_engine_dependencies));
    assert_clean("engine-purity", violations);
}

#[test]
fn workspace_rule_6_engine_never_unwraps() {
    assert_clean("no-unwrap", over_rust_files(tidy::check_no_unwrap));
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
