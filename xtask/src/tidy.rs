//! House rules checked over the workspace source tree (rust-analyzer's `tidy` test, for us).
//!
//! Every rule is a pure function from file contents to a list of [`Violation`]s, so each
//! one can be tested on a tiny in-memory sample. Only [`load`] touches the disk. Matching
//! is plain text on purpose: a rule that is easy to read is easy to trust, and the house
//! code is written so that the simple reading is the right one.
//!
//! This file loads the tree ([`load`]) and runs every rule ([`check`]); the rules are
//! source-text rules here and in the `tidy_*.rs` files beside it, all reporting through
//! [`crate::tidy_violation`]. The rule families:
//! 1. [`check_module_doc`]: every Rust file opens with a `//!` module doc line.
//! 2. [`check_no_ignore`]: no test is ever skipped with the ignore attribute.
//! 3. [`check_debug_macros`]: no dbg, todo or unimplemented macro outside test code.
//! 4. [`check_engine_purity`] and [`crate::tidy_manifest::check_engine_dependencies`]: the engine does no IO,
//!    reads no clock, draws no unseeded randomness, iterates no hash map.
//! 5. [`crate::tidy_manifest::check_manifest_inherits`]: every crate takes version, publish and lints from the
//!    workspace.
//! 6. [`check_no_unwrap`]: the engine states a reason for every invariant it relies on.
//! 7. [`crate::tidy_architecture::check_architecture`], [`crate::tidy_architecture::check_codemap`]
//!    and [`crate::tidy_architecture::check_api_boundaries`]: `ARCHITECTURE.md` names every
//!    member and states invariants; its codemap names every crate and top-level module
//!    (and every extension script) and only Rust files that exist; no crate depends on one
//!    its API boundaries leave out ([`crate::tidy_architecture::check_extension_codemap`]).
//! 8. [`crate::tidy_extension::check_script_header`]: every extension script says what it
//!    is for.
//! 9. [`crate::tidy_extension::check_core_purity`]: the extension's `src/core/` stays pure.
//! 10. [`crate::tidy_extension::check_no_skipped_tests`]: no extension test is skipped.
//! 11. [`crate::tidy_imports::check_import_circles`]: no import circle between the
//!     top-level modules of one crate, for every crate of the workspace.
//! 12. [`crate::tidy_layers::check_cli_executor_layers`]: the CLI executor's layers import
//!     only downwards (base <- each CLI's room <- the executor loop).
//! 13. [`crate::tidy_protocol::check_protocol_dependencies`]: the protocol crates depend
//!     on the engine and serde only, never on a runtime or a server.
//! 14. [`crate::tidy_rules::check_rule_table`]: the rule table of `ARCHITECTURE.md` names
//!     files that exist and items that occur in them (it reads those files, so [`run`]
//!     wires it rather than [`check`]).
//! 15. [`crate::tidy_signals::check_signal_sites`]: only the files that own it signal a
//!     process (the CLI executor's group owner and two start-up checks).
//! 16. [`crate::tidy_length::check_file_length`]: no Rust file over 600 lines without
//!     its reason in its top `//!` comment.

use crate::tidy_architecture::{
    ARCHITECTURE_FILE, check_api_boundaries, check_architecture, check_codemap, check_extension_codemap,
};
use crate::tidy_manifest::{check_engine_dependencies, check_manifest_inherits};
use crate::tidy_violation::{Rule, SourceFile, Violation, production_lines};
use crate::{tidy_extension, tidy_imports, tidy_layers, tidy_length, tidy_protocol, tidy_signals};
use std::fs;
use std::io;
use std::path::Path;

/// Directory names the walk never enters: build output (`extension/dist`, what `npm run
/// pack` writes, copies the sources), npm installs. Hidden directories (`.git`, `.ci`, ...)
/// are skipped as well.
const SKIPPED_DIRS: [&str; 3] = ["target", "node_modules", "dist"];

/// The ignore attribute, built with `concat!` so that this file does not trip its own rule.
const IGNORE_ATTRIBUTE: &str = concat!("#[", "ignore");

/// Macros that must not reach production code, built with `concat!` for the same reason.
const DEBUG_MACROS: [&str; 3] = [concat!("dbg", "!("), concat!("todo", "!("), concat!("unimplemented", "!(")];

/// Where the pure engine's sources live, relative to the workspace root.
const ENGINE_SRC_PREFIX: &str = "engine/src/";

/// Text that must never appear in the engine's sources, comments included: IO and async
/// runtimes, wall clocks, unseeded randomness, JSON, and unordered collections.
pub const ENGINE_FORBIDDEN_TOKENS: [&str; 17] = [
    "tokio",
    "fjall",
    "axum",
    "rmcp",
    "serde_json",
    "std::fs",
    "std::net",
    "std::thread",
    "std::process",
    "Instant::now",
    "SystemTime::now",
    "thread_rng",
    "rand::rng",
    "new_v4",
    "HashMap",
    "HashSet",
    "std::env",
];

/// The call the engine replaces with `expect("reason")`.
const UNWRAP_CALL: &str = ".unwrap()";

/// Everything the rules read, loaded once from disk.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// Every `*.rs` file outside skipped directories, sorted by path.
    pub rust_files: Vec<SourceFile>,
    /// Every `Cargo.toml`, the root virtual manifest included, sorted by path.
    pub manifests: Vec<SourceFile>,
    /// The root `Cargo.toml`, whose `members` rule 7 reads.
    pub root_manifest: String,
    /// `ARCHITECTURE.md` at the root, if it exists.
    pub architecture: Option<String>,
    /// Every `*.js` / `*.mjs` under `extension/` (its `node_modules` excluded), sorted.
    pub script_files: Vec<SourceFile>,
}

impl Workspace {
    /// How many files the rules looked at.
    pub fn files_checked(&self) -> usize {
        self.rust_files.len()
            + self.manifests.len()
            + self.script_files.len()
            + usize::from(self.architecture.is_some())
    }
}

/// The outcome of a full tidy run.
#[derive(Clone, Debug)]
pub struct Report {
    /// How many files were read, printed so a silently empty walk is noticed.
    pub files_checked: usize,
    /// Every violation, sorted by file and line.
    pub violations: Vec<Violation>,
}

/// Load the workspace at `root` and run every rule.
pub fn run(root: &Path) -> io::Result<Report> {
    let workspace = load(root)?;
    let mut violations = check(&workspace);
    // The real tree only: the protocol crates the dependency rule fences are where it
    // looks for them.
    violations.extend(tidy_protocol::check_protocol_crates_exist(&workspace.manifests));
    // The rule table names files of every kind (scenarios, tests, docs): read as needed.
    violations.extend(crate::tidy_rules::check_rule_table(
        workspace.architecture.as_deref(),
        &crate::tidy_rules::read_from(root),
    ));
    // And every member is under the import-circle rule, every crate it lists a member.
    violations.extend(tidy_imports::check_every_crate_listed(&workspace.root_manifest));
    violations.sort();
    Ok(Report { files_checked: workspace.files_checked(), violations })
}

/// Read every file the rules need from the workspace at `root`.
pub fn load(root: &Path) -> io::Result<Workspace> {
    let mut paths = Vec::new();
    walk(root, &mut paths)?;
    paths.sort();

    let mut rust_files = Vec::new();
    let mut manifests = Vec::new();
    let mut script_files = Vec::new();
    for path in paths {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let is_rust = name.ends_with(".rs");
        let is_manifest = name == "Cargo.toml";
        if tidy_extension::is_extension_script(&relative(root, &path)) {
            script_files.push(SourceFile { path: relative(root, &path), text: read(&path)? });
            continue;
        }
        if !is_rust && !is_manifest {
            continue;
        }
        let file = SourceFile { path: relative(root, &path), text: read(&path)? };
        if is_rust {
            rust_files.push(file);
        } else {
            manifests.push(file);
        }
    }

    let root_manifest = read(&root.join("Cargo.toml"))?;
    let architecture_path = root.join(ARCHITECTURE_FILE);
    let architecture = if architecture_path.is_file() { Some(read(&architecture_path)?) } else { None };
    Ok(Workspace { rust_files, manifests, root_manifest, architecture, script_files })
}

/// Run every rule over a loaded workspace; violations come back sorted.
pub fn check(workspace: &Workspace) -> Vec<Violation> {
    let mut out = Vec::new();
    for file in &workspace.rust_files {
        out.extend(check_module_doc(file));
        out.extend(check_no_ignore(file));
        out.extend(check_debug_macros(file));
        out.extend(check_engine_purity(file));
        out.extend(check_no_unwrap(file));
        out.extend(tidy_layers::check_cli_executor_layers(file));
        out.extend(tidy_signals::check_signal_sites(file));
        out.extend(tidy_length::check_file_length(file));
    }
    for manifest in &workspace.manifests {
        out.extend(check_engine_dependencies(manifest));
        out.extend(check_manifest_inherits(manifest));
        out.extend(tidy_protocol::check_protocol_dependencies(manifest));
    }
    for script in &workspace.script_files {
        out.extend(tidy_extension::check_script_header(script));
        out.extend(tidy_extension::check_core_purity(script));
        out.extend(tidy_extension::check_no_skipped_tests(script));
    }
    out.extend(tidy_imports::check_import_circles(&workspace.rust_files));
    let architecture = workspace.architecture.as_deref();
    out.extend(check_architecture(&workspace.root_manifest, architecture));
    out.extend(check_codemap(&workspace.root_manifest, architecture, &workspace.rust_files));
    out.extend(check_extension_codemap(architecture, &workspace.script_files));
    out.extend(check_api_boundaries(&workspace.root_manifest, architecture, &workspace.manifests));
    out.sort();
    out
}

/// Rule 1: the first non-empty line of every Rust file starts with `//!`.
pub fn check_module_doc(file: &SourceFile) -> Vec<Violation> {
    let text = file.text.strip_prefix('\u{feff}').unwrap_or(&file.text);
    let first = text.lines().enumerate().find(|(_, line)| !line.trim().is_empty());
    match first {
        Some((_, line)) if line.trim_start().starts_with("//!") => Vec::new(),
        Some((index, _)) => vec![Violation::new(
            &file.path,
            index + 1,
            Rule::ModuleDoc,
            "the first non-empty line must be a `//!` module doc saying what this file is for".to_string(),
        )],
        None => vec![Violation::new(
            &file.path,
            0,
            Rule::ModuleDoc,
            "the file is empty; it must open with a `//!` module doc".to_string(),
        )],
    }
}

/// Rule 2: no ignore attribute anywhere, test files included: a skipped test is a
/// silent hole in the safety net.
pub fn check_no_ignore(file: &SourceFile) -> Vec<Violation> {
    let mut out = Vec::new();
    for (index, line) in file.text.lines().enumerate() {
        let hit = line.match_indices(IGNORE_ATTRIBUTE).any(|(at, _)| {
            // The bare attribute or one with a reason, but not some longer attribute name.
            let next = line[at + IGNORE_ATTRIBUTE.len()..].chars().next();
            !next.is_some_and(is_word_char)
        });
        if hit {
            out.push(Violation::new(
                &file.path,
                index + 1,
                Rule::NoIgnore,
                "tests must run: remove the ignore attribute, or fix or delete the test".to_string(),
            ));
        }
    }
    out
}

/// Rule 3: no dbg, todo or unimplemented macro in production code. Files under a `tests`
/// directory and everything after [`crate::tidy_violation::TEST_CODE_MARKER`] are test code.
pub fn check_debug_macros(file: &SourceFile) -> Vec<Violation> {
    let mut out = Vec::new();
    for (line_no, line) in production_lines(file) {
        for pattern in DEBUG_MACROS {
            if line.contains(pattern) {
                out.push(Violation::new(
                    &file.path,
                    line_no,
                    Rule::NoDebugMacros,
                    format!("`{pattern}` must not reach production code"),
                ));
            }
        }
    }
    out
}

/// Rule 4, sources: no file under `engine/src/` contains a forbidden token, comments
/// and test modules included (plain substring match).
pub fn check_engine_purity(file: &SourceFile) -> Vec<Violation> {
    if !file.path.starts_with(ENGINE_SRC_PREFIX) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (index, line) in file.text.lines().enumerate() {
        for token in ENGINE_FORBIDDEN_TOKENS {
            if line.contains(token) {
                out.push(Violation::new(
                    &file.path,
                    index + 1,
                    Rule::EnginePurity,
                    format!("the engine is a pure state machine: `{token}` is forbidden in {ENGINE_SRC_PREFIX}"),
                ));
            }
        }
    }
    out
}

/// Rule 6: no `.unwrap()` in the engine's production code; an invariant the engine
/// relies on is stated with `expect("reason")`.
pub fn check_no_unwrap(file: &SourceFile) -> Vec<Violation> {
    if !file.path.starts_with(ENGINE_SRC_PREFIX) {
        return Vec::new();
    }
    production_lines(file)
        .filter(|(_, line)| line.contains(UNWRAP_CALL))
        .map(|(line_no, _)| {
            Violation::new(
                &file.path,
                line_no,
                Rule::NoUnwrap,
                "use `expect(\"why this cannot fail\")` instead of `.unwrap()` in the engine".to_string(),
            )
        })
        .collect()
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Collect every file under `dir`, skipping build output, npm installs, hidden
/// directories and symlinks (which could loop).
fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if file_type.is_dir() {
            if name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_ref()) {
                continue;
            }
            walk(&entry.path(), out)?;
        } else if file_type.is_file() {
            out.push(entry.path());
        }
    }
    Ok(())
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

fn read(path: &Path) -> io::Result<String> {
    fs::read_to_string(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}
