//! Rule 7: `ARCHITECTURE.md` names every member and states invariants.

use crate::{assert_clean, rules, workspace};
use xtask::tidy_architecture;
use xtask::tidy_manifest;
use xtask::tidy_violation::{Rule, SourceFile};

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

// ---------------------------------------------------------------------------------------
// Rule 7: the codemap and the API boundaries.
// ---------------------------------------------------------------------------------------

#[test]
fn workspace_rule_7_codemap_names_every_module_and_api_boundaries_hold() {
    let ws = workspace();
    let architecture = ws.architecture.as_deref();
    let mut violations = tidy_architecture::check_codemap(&ws.root_manifest, architecture, &ws.rust_files);
    violations.extend(tidy_architecture::check_api_boundaries(&ws.root_manifest, architecture, &ws.manifests));
    assert_clean("architecture", violations);
}

/// Two members, one nested in the other's folder, as `adapters/bridge/test-executor` is.
const NESTED_ROOT: &str = "[workspace]\nmembers = [\"app\", \"app/kit\", \"core\"]\n";

const CODEMAP: &str = "# Architecture\n\n## Entry points\n\n`app/src/main.rs` `main`.\n\n## Codemap\n\n\
     ### `core/`\n\n- `lib.rs`: the root.\n\n### `app/`\n\n- `main.rs`: the binary.\n- `run/`: the loop, \
     `run/mod.rs`.\n- `tests/`: `support/mod.rs`.\n\n### `app/kit/`\n\n- `lib.rs`: a kit.\n\n## Invariants\n\n\
     `lib.rs` is not checked here.\n";

fn codemap_files() -> Vec<SourceFile> {
    ["core/src/lib.rs", "app/src/main.rs", "app/src/run/mod.rs", "app/tests/support/mod.rs", "app/kit/src/lib.rs"]
        .iter()
        .map(|path| SourceFile::new(path, "//! A file.\n"))
        .collect()
}

fn codemap_messages(doc: &str, files: &[SourceFile]) -> Vec<String> {
    tidy_architecture::check_codemap(NESTED_ROOT, Some(doc), files).iter().map(ToString::to_string).collect()
}

#[test]
fn codemap_accepts_a_section_per_crate_naming_every_module() {
    assert_eq!(codemap_messages(CODEMAP, &codemap_files()), Vec::<String>::new());
    // No document: rule 7's first check says so, once.
    assert_eq!(tidy_architecture::check_codemap(NESTED_ROOT, None, &codemap_files()), []);
}

#[test]
fn codemap_fires_on_a_crate_without_a_section() {
    let doc = CODEMAP.replace("### `app/kit/`", "### The kit");
    let v = codemap_messages(&doc, &codemap_files());
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("no section for the crate `app/kit`"), "{}", v[0]);
}

#[test]
fn codemap_fires_on_a_module_not_named_in_its_crate_section() {
    let mut files = codemap_files();
    files.push(SourceFile::new("app/src/flags.rs", "//! Flags.\n"));
    files.push(SourceFile::new("app/src/net/tcp.rs", "//! TCP.\n"));
    let v = codemap_messages(CODEMAP, &files);
    assert_eq!(v.len(), 2, "{v:#?}");
    assert!(v[0].contains("module `flags.rs`") && v[0].starts_with("ARCHITECTURE.md:13:"), "{}", v[0]);
    assert!(v[1].contains("module `net/`"), "{}", v[1]);
    // Named in another crate's section is not named in its own.
    let doc = CODEMAP.replace("- `lib.rs`: a kit.", "- `lib.rs`: a kit; `net/`.");
    assert_eq!(codemap_messages(&doc, &files).len(), 2);
    // A longer path ending in the module names it.
    let doc = CODEMAP.replace("- `main.rs`: the binary.", "- `main.rs`: the binary, `src/flags.rs`, `src/net/`.");
    assert_eq!(codemap_messages(&doc, &files), Vec::<String>::new());
}

#[test]
fn codemap_fires_on_a_rust_file_that_does_not_exist() {
    // A name in a section is looked for among that crate's files only.
    let doc = CODEMAP.replace("- `lib.rs`: a kit.", "- `lib.rs`: a kit, not `main.rs`.");
    let v = codemap_messages(&doc, &codemap_files());
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("`main.rs` names no Rust file of the crate `app/kit`"), "{}", v[0]);
    // A full path anywhere in the document must exist as written.
    let doc = CODEMAP.replace("`app/src/main.rs`", "`app/src/bin.rs`");
    let v = codemap_messages(&doc, &codemap_files());
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].starts_with("ARCHITECTURE.md:5:") && v[0].contains("`app/src/bin.rs`"), "{}", v[0]);
    // A pattern is not a file.
    let doc = CODEMAP.replace("`app/src/main.rs`", "`app/src/*.rs`");
    assert_eq!(codemap_messages(&doc, &codemap_files()), Vec::<String>::new());
}

const BOUNDARIES: &str = "# Architecture\n\n## API boundaries\n\n| crate | may depend on | notably |\n|---|---|---|\n\
     | `core` | none | `serde` |\n| `app` | `core` | |\n| `kit` | `core` | |\n\n## Invariants\n";

fn boundary_manifests(app_dependencies: &str) -> Vec<SourceFile> {
    vec![
        SourceFile::new("core/Cargo.toml", "[package]\nname = \"core\"\n\n[dependencies]\nserde.workspace = true\n"),
        SourceFile::new(
            "app/Cargo.toml",
            &format!(
                "[package]\nname = \"app\"\n\n[dependencies]\n{app_dependencies}\n[dev-dependencies]\nkit.workspace = true\n"
            ),
        ),
        SourceFile::new(
            "app/kit/Cargo.toml",
            "[package]\nname = \"kit\"\n\n[dependencies]\ncore = { path = \"../../core\" }\n",
        ),
    ]
}

fn boundary_messages(doc: &str, manifests: &[SourceFile]) -> Vec<String> {
    tidy_architecture::check_api_boundaries(NESTED_ROOT, Some(doc), manifests).iter().map(ToString::to_string).collect()
}

#[test]
fn api_boundaries_accept_dependencies_the_table_allows() {
    // A dev-dependency is outside the boundary; so is a crate from outside the workspace.
    assert_eq!(boundary_messages(BOUNDARIES, &boundary_manifests("core.workspace = true\n")), Vec::<String>::new());
}

#[test]
fn api_boundaries_fire_on_a_dependency_the_row_leaves_out() {
    let v = boundary_messages(BOUNDARIES, &boundary_manifests("core.workspace = true\nkit.workspace = true\n"));
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(
        v[0].starts_with("app/Cargo.toml:6: [architecture]") && v[0].contains("`app` depends on `kit`"),
        "{}",
        v[0]
    );
}

#[test]
fn api_boundaries_fire_on_a_missing_row_an_unknown_crate_or_an_empty_cell() {
    let manifests = boundary_manifests("core.workspace = true\n");
    let v = boundary_messages(&BOUNDARIES.replace("| `kit` | `core` | |\n", ""), &manifests);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("no row for the crate `kit`"), "{}", v[0]);

    let v = boundary_messages(&BOUNDARIES.replace("| `app` | `core` |", "| `app` | `core`, `cor` |"), &manifests);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("`cor` is not a crate of the workspace"), "{}", v[0]);

    let v = boundary_messages(&BOUNDARIES.replace("| `core` | none |", "| `core` | |"), &manifests);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("say which crates `core` may depend on"), "{}", v[0]);

    let v = boundary_messages("# Architecture\n", &manifests);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("## API boundaries"), "{}", v[0]);
}

#[test]
fn workspace_rule_7_the_extension_section_names_every_script() {
    let ws = workspace();
    assert!(ws.script_files.iter().any(|f| f.path == "extension/src/core/executor.js"), "scripts not walked");
    assert_clean(
        "architecture",
        tidy_architecture::check_extension_codemap(ws.architecture.as_deref(), &ws.script_files),
    );
}

#[test]
fn extension_codemap_fires_on_a_script_not_named() {
    let doc = "## Codemap\n\n### `extension/`\n\n- `executor.js`: the machine.\n- `ui/view.js`.\n\n### `tests/`\n\n`queue.js`\n";
    let scripts = [
        SourceFile::new("extension/src/core/executor.js", "// E.\n"),
        SourceFile::new("extension/src/ui/view.js", "// V.\n"),
        SourceFile::new("extension/src/core/queue.js", "// Q.\n"),
        SourceFile::new("extension/test/unit/queue.test.mjs", "// T.\n"),
    ];
    let v = tidy_architecture::check_extension_codemap(Some(doc), &scripts);
    assert_eq!(rules(&v), [(0, Rule::Architecture)]);
    assert!(v[0].message.contains("`extension/src/core/queue.js`"), "{}", v[0].message);
    let v = tidy_architecture::check_extension_codemap(Some("## Codemap\n"), &scripts);
    assert!(v[0].message.contains("no section"), "{}", v[0].message);
}
