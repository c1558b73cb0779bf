//! Rules 8 to 10: the browser extension's scripts.

use crate::{assert_clean, workspace};
use xtask::tidy_extension;
use xtask::tidy_violation::{Rule, SourceFile};

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
