//! Rule 7: `ARCHITECTURE.md` names every member and states invariants.

use crate::{assert_clean, rules, workspace};
use xtask::tidy_architecture;
use xtask::tidy_manifest;
use xtask::tidy_violation::Rule;

#[test]
fn workspace_rule_7_architecture_doc_names_members_and_invariants() {
    let ws = workspace();
    assert_clean("architecture", tidy_architecture::check_architecture(&ws.root_manifest, ws.architecture.as_deref()));
}

// ---------------------------------------------------------------------------------------
// Rule 7: ARCHITECTURE.md.
// ---------------------------------------------------------------------------------------

pub(crate) const ROOT_MANIFEST: &str = "[workspace]\nresolver = \"3\"\nmembers = [\n    \"engine\", # core\n    \"xtask\",\n]\n\n[workspace.dependencies]\nengine = { path = \"engine\" }\n";

const GOOD_ARCHITECTURE: &str = "# Architecture\n\n## Codemap\n\n### `engine`\nThe state machine.\n\n\
     Architecture Invariant: the engine knows nothing about JSON.\n\n### `xtask/`\nHouse rules.\n";

#[test]
fn workspace_members_reads_single_and_multi_line_lists() {
    assert_eq!(tidy_manifest::workspace_members(ROOT_MANIFEST), ["engine", "xtask"]);
    assert_eq!(
        tidy_manifest::workspace_members("[workspace]\nmembers = [\"engine\", \"xtask\"]\n"),
        ["engine", "xtask"]
    );
    // `members` of another table is not the workspace's.
    assert_eq!(tidy_manifest::workspace_members("[package]\nmembers = [\"x\"]\n"), Vec::<String>::new());
}

#[test]
fn architecture_accepts_a_doc_naming_every_member() {
    assert_eq!(tidy_architecture::check_architecture(ROOT_MANIFEST, Some(GOOD_ARCHITECTURE)), []);
}

#[test]
fn architecture_fires_when_the_doc_is_missing() {
    let v = tidy_architecture::check_architecture(ROOT_MANIFEST, None);
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert_eq!(v[0].file, "ARCHITECTURE.md");
    assert!(v[0].message.contains("missing"), "{}", v[0].message);
}

#[test]
fn architecture_fires_on_an_unnamed_member_or_no_invariant() {
    let no_xtask = GOOD_ARCHITECTURE.replace("`xtask/`", "tools");
    let v = tidy_architecture::check_architecture(ROOT_MANIFEST, Some(&no_xtask));
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert!(v[0].message.contains("`xtask`"), "{}", v[0].message);

    // A longer word is not a mention.
    let only_engineering = GOOD_ARCHITECTURE.replace("`engine`", "engineering").replace("the engine", "it");
    let v = tidy_architecture::check_architecture(ROOT_MANIFEST, Some(&only_engineering));
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert!(v[0].message.contains("`engine`"), "{}", v[0].message);

    let no_invariant = GOOD_ARCHITECTURE.replace("Architecture Invariant:", "Invariant:");
    let v = tidy_architecture::check_architecture(ROOT_MANIFEST, Some(&no_invariant));
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert!(v[0].message.contains("Architecture Invariant:"));

    let mid_line = GOOD_ARCHITECTURE.replace("Architecture Invariant:", "As said, Architecture Invariant:");
    assert_eq!(tidy_architecture::check_architecture(ROOT_MANIFEST, Some(&mid_line)).len(), 1);
}
