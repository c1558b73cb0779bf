//! House rules checked over the workspace source tree (rust-analyzer's `tidy` test, for us).
//!
//! Every rule is a pure function from file contents to a list of [`Violation`]s, so each
//! one can be tested on a tiny in-memory sample. Only [`load`] touches the disk. Matching
//! is plain text on purpose: a rule that is easy to read is easy to trust, and the house
//! code is written so that the simple reading is the right one.
//!
//! The rule families:
//! 1. [`check_module_doc`]: every Rust file opens with a `//!` module doc line.
//! 2. [`check_no_ignore`]: no test is ever skipped with the ignore attribute.
//! 3. [`check_debug_macros`]: no dbg, todo or unimplemented macro outside test code.
//! 4. [`check_engine_purity`] and [`check_engine_dependencies`]: the engine does no IO,
//!    reads no clock, draws no unseeded randomness, iterates no hash map.
//! 5. [`check_manifest_inherits`]: every crate takes version, publish and lints from the
//!    workspace.
//! 6. [`check_no_unwrap`]: the engine states a reason for every invariant it relies on.
//! 7. [`check_architecture`]: `ARCHITECTURE.md` names every member and states invariants.
//! 8. [`crate::tidy_extension::check_script_header`]: every extension script says what it
//!    is for.
//! 9. [`crate::tidy_extension::check_core_purity`]: the extension's `src/core/` stays pure.
//! 10. [`crate::tidy_extension::check_no_skipped_tests`]: no extension test is skipped.
//! 11. [`crate::tidy_imports::check_import_circles`]: no import circle between the
//!     top-level modules of one crate (for the crates that have none left).
//! 12. [`crate::tidy_layers::check_cli_executor_layers`]: the CLI executor's layers import
//!     only downwards (base <- each CLI's room <- the executor loop).
//! 13. [`crate::tidy_protocol::check_protocol_dependencies`]: the protocol crates depend
//!     on the engine and serde only, never on a runtime or a server.
//! 14. [`crate::tidy_rules::check_rule_table`]: the rule table of `ARCHITECTURE.md` names
//!     files that exist and items that occur in them (it reads those files, so [`run`]
//!     wires it rather than [`check`]).

use crate::{tidy_extension, tidy_imports, tidy_layers, tidy_protocol};
use std::fmt;
use std::fs;
use std::io;
use std::path::Path;

/// Directory names the walk never enters: build output, npm installs. Hidden directories
/// (`.git`, `.ci`, ...) are skipped as well.
const SKIPPED_DIRS: [&str; 2] = ["target", "node_modules"];

/// A line containing this marker starts the test code of a file: everything after it is
/// exempt from the rules about production code. Test modules sit at the end of a file.
/// Built with `concat!` so that the rest of this file is not taken for test code.
pub const TEST_CODE_MARKER: &str = concat!("#[cfg", "(test)]");

/// The ignore attribute, built with `concat!` so that this file does not trip its own rule.
const IGNORE_ATTRIBUTE: &str = concat!("#[", "ignore");

/// Macros that must not reach production code, built with `concat!` for the same reason.
const DEBUG_MACROS: [&str; 3] = [concat!("dbg", "!("), concat!("todo", "!("), concat!("unimplemented", "!(")];

/// Where the pure engine's sources live, relative to the workspace root.
const ENGINE_SRC_PREFIX: &str = "engine/src/";

/// The engine's manifest, relative to the workspace root.
const ENGINE_MANIFEST: &str = "engine/Cargo.toml";

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

/// The only crates the engine may depend on outside `[dev-dependencies]`.
pub const ENGINE_DEPENDENCIES_ALLOWED: [&str; 2] = ["serde", "rand_chacha"];

/// The call the engine replaces with `expect("reason")`.
const UNWRAP_CALL: &str = ".unwrap()";

/// The root document every member crate must appear in.
pub const ARCHITECTURE_FILE: &str = "ARCHITECTURE.md";

/// The prefix of a line stating an architecture invariant.
const ARCHITECTURE_INVARIANT_PREFIX: &str = "Architecture Invariant:";

/// The family of house rules a violation breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// Rule 1: the first non-empty line of a Rust file starts with `//!`.
    ModuleDoc,
    /// Rule 2: no test is skipped.
    NoIgnore,
    /// Rule 3: no debugging or placeholder macros outside test code.
    NoDebugMacros,
    /// Rule 4: the engine stays pure, in its sources and in its dependencies.
    EnginePurity,
    /// Rule 5: every crate manifest inherits version, publish and lints.
    ManifestInherits,
    /// Rule 6: no `.unwrap()` in the engine outside test code.
    NoUnwrap,
    /// Rule 7: `ARCHITECTURE.md` exists, names every member, states an invariant.
    Architecture,
    /// Rule 8: every extension script opens with a comment saying what it is for.
    ExtensionHeader,
    /// Rule 9: the extension's `src/core/` stays pure.
    ExtensionPurity,
    /// Rule 10: no extension test is skipped.
    NoSkippedScriptTests,
    /// Rule 11: no import circle between the top-level modules of one crate.
    ImportCircle,
    /// Rule 12: within the CLI executor, no file imports from a layer beside or above its own.
    CliExecutorLayers,
    /// Rule 13: the protocol crates depend only on the engine and serde.
    ProtocolPurity,
    /// Rule 14: the rule table of `ARCHITECTURE.md` names existing files and items.
    RuleTable,
}

impl Rule {
    /// A short stable name, printed in reports.
    pub fn name(self) -> &'static str {
        match self {
            Rule::ModuleDoc => "module-doc",
            Rule::NoIgnore => "no-ignore",
            Rule::NoDebugMacros => "no-debug-macros",
            Rule::EnginePurity => "engine-purity",
            Rule::ManifestInherits => "manifest-inherits",
            Rule::NoUnwrap => "no-unwrap",
            Rule::Architecture => "architecture",
            Rule::ExtensionHeader => "extension-header",
            Rule::ExtensionPurity => "extension-purity",
            Rule::NoSkippedScriptTests => "no-skipped-script-tests",
            Rule::ImportCircle => "import-circle",
            Rule::CliExecutorLayers => "cli-executor-layers",
            Rule::ProtocolPurity => "protocol-purity",
            Rule::RuleTable => "rule-table",
        }
    }
}

/// One broken house rule at one place.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// Path relative to the workspace root, with `/` separators, so reports are stable
    /// across machines and can be pasted into an editor.
    pub file: String,
    /// 1-based line number; 0 when the violation concerns the file as a whole.
    pub line: usize,
    /// Which rule family is broken, so a reader knows which test guards it.
    pub rule: Rule,
    /// What is wrong and what to do instead.
    pub message: String,
}

impl Violation {
    pub(crate) fn new(file: &str, line: usize, rule: Rule, message: String) -> Violation {
        Violation { file: file.to_string(), line, rule, message }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: [{}] {}", self.file, self.rule.name(), self.message)
        } else {
            write!(f, "{}:{}: [{}] {}", self.file, self.line, self.rule.name(), self.message)
        }
    }
}

/// A file's path and contents, as the rules see it.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path relative to the workspace root, with `/` separators: the rules decide by
    /// prefix (`engine/src/`) and by path component (`tests`).
    pub path: String,
    /// The whole file; the rules never read the disk themselves.
    pub text: String,
}

impl SourceFile {
    /// A file from a path and contents; tests build samples with it.
    pub fn new(path: &str, text: &str) -> SourceFile {
        SourceFile { path: path.to_string(), text: text.to_string() }
    }
}

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
    out.extend(check_architecture(&workspace.root_manifest, workspace.architecture.as_deref()));
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
/// directory and everything after [`TEST_CODE_MARKER`] are test code.
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

/// Rule 4, manifest: `engine/Cargo.toml` depends (outside dev-dependencies) only on
/// [`ENGINE_DEPENDENCIES_ALLOWED`]. Target-specific dependency tables count too.
pub fn check_engine_dependencies(manifest: &SourceFile) -> Vec<Violation> {
    if manifest.path != ENGINE_MANIFEST {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (line_no, name) in runtime_dependencies(&manifest.text) {
        if !ENGINE_DEPENDENCIES_ALLOWED.contains(&name.as_str()) {
            out.push(Violation::new(
                &manifest.path,
                line_no,
                Rule::EnginePurity,
                format!(
                    "the engine may depend only on {}; `{name}` belongs in an adapter or in [dev-dependencies]",
                    ENGINE_DEPENDENCIES_ALLOWED.join(", ")
                ),
            ));
        }
    }
    out
}

/// Rule 5: a crate manifest (one with `[package]`) inherits `version` and `publish`
/// from the workspace and opts into the workspace lints. The virtual root is skipped.
pub fn check_manifest_inherits(manifest: &SourceFile) -> Vec<Violation> {
    let lines = toml_lines(&manifest.text);
    let is_crate = lines.iter().any(|l| matches!(l, TomlLine::Table { name, .. } if name == "package"));
    if !is_crate {
        return Vec::new();
    }
    let mut out = Vec::new();
    for field in ["version", "publish"] {
        if !inherits(&lines, "package", field) {
            out.push(Violation::new(
                &manifest.path,
                0,
                Rule::ManifestInherits,
                format!("[package] must take `{field}` from the workspace: `{field}.workspace = true`"),
            ));
        }
    }
    if !inherits(&lines, "", "lints") {
        out.push(Violation::new(
            &manifest.path,
            0,
            Rule::ManifestInherits,
            "the crate must use the workspace lints: `[lints]` with `workspace = true`".to_string(),
        ));
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

/// Rule 7: `ARCHITECTURE.md` exists, names every workspace member (as a whole word) and
/// has at least one line starting with `Architecture Invariant:`.
pub fn check_architecture(root_manifest: &str, architecture: Option<&str>) -> Vec<Violation> {
    let Some(text) = architecture else {
        return vec![Violation::new(
            ARCHITECTURE_FILE,
            0,
            Rule::Architecture,
            format!(
                "{ARCHITECTURE_FILE} is missing at the workspace root: it must name every member crate and state at least one `{ARCHITECTURE_INVARIANT_PREFIX}` line"
            ),
        )];
    };
    let mut out = Vec::new();
    for member in workspace_members(root_manifest) {
        if !contains_word(text, &member) {
            out.push(Violation::new(
                ARCHITECTURE_FILE,
                0,
                Rule::Architecture,
                format!("the codemap must mention the member crate `{member}`"),
            ));
        }
    }
    let has_invariant = text.lines().any(|line| line.trim_start().starts_with(ARCHITECTURE_INVARIANT_PREFIX));
    if !has_invariant {
        out.push(Violation::new(
            ARCHITECTURE_FILE,
            0,
            Rule::Architecture,
            format!("state at least one line starting with `{ARCHITECTURE_INVARIANT_PREFIX}`"),
        ));
    }
    out
}

/// The members listed in the root manifest's `[workspace]` table, in order.
pub fn workspace_members(root_manifest: &str) -> Vec<String> {
    let mut table = String::new();
    let mut collecting = false;
    let mut value = String::new();
    for raw in root_manifest.lines() {
        let line = strip_comment(raw).trim();
        if collecting {
            value.push_str(line);
            if line.contains(']') {
                break;
            }
            continue;
        }
        if let Some(name) = table_header(line) {
            table = name;
            continue;
        }
        if table != "workspace" {
            continue;
        }
        if let Some((key, rest)) = line.split_once('=')
            && key.trim() == "members"
        {
            value.push_str(rest);
            if rest.contains(']') {
                break;
            }
            collecting = true;
        }
    }
    quoted_strings(&value)
}

/// Production lines of a file, 1-based: none for files under a `tests` directory, and
/// only those before the first [`TEST_CODE_MARKER`] otherwise.
fn production_lines(file: &SourceFile) -> impl Iterator<Item = (usize, &str)> {
    let in_tests_dir = file.path.split('/').any(|part| part == "tests");
    file.text
        .lines()
        .enumerate()
        .take_while(move |(_, line)| !in_tests_dir && !line.contains(TEST_CODE_MARKER))
        .map(|(index, line)| (index + 1, line))
}

/// One meaningful line of a manifest, as far as the rules care. A tiny reading of TOML:
/// one key per line, comments stripped, whitespace removed from keys and values.
#[derive(Clone, Debug, PartialEq, Eq)]
enum TomlLine {
    /// `[name]` or `[[name]]`.
    Table { line: usize, name: String },
    /// `key = value` inside `table` ("" before any header).
    Entry { line: usize, table: String, key: String, value: String },
}

fn toml_lines(text: &str) -> Vec<TomlLine> {
    let mut out = Vec::new();
    let mut table = String::new();
    for (index, raw) in text.lines().enumerate() {
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = table_header(line) {
            table = name.clone();
            out.push(TomlLine::Table { line: index + 1, name });
        } else if let Some((key, value)) = line.split_once('=') {
            out.push(TomlLine::Entry {
                line: index + 1,
                table: table.clone(),
                key: without_whitespace(key).replace('"', ""),
                value: without_whitespace(value),
            });
        }
    }
    out
}

/// `[name]` or `[[name]]` with whitespace removed; `None` for any other line.
fn table_header(line: &str) -> Option<String> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    let inner = inner.strip_prefix('[').and_then(|i| i.strip_suffix(']')).unwrap_or(inner);
    Some(without_whitespace(inner))
}

/// Whether `table.field` is inherited from the workspace, in any of TOML's spellings:
/// `field.workspace = true`, `field = { workspace = true }`, or a `[table.field]` table.
fn inherits(lines: &[TomlLine], table: &str, field: &str) -> bool {
    let dotted_key = format!("{field}.workspace");
    let sub_table = if table.is_empty() { field.to_string() } else { format!("{table}.{field}") };
    lines.iter().any(|l| match l {
        TomlLine::Entry { table: t, key, value, .. } => {
            (t == table && *key == dotted_key && value == "true")
                || (t == table && key == field && value == "{workspace=true}")
                || (*t == sub_table && key == "workspace" && value == "true")
        }
        TomlLine::Table { .. } => false,
    })
}

/// Names of the non-dev, non-build dependencies, with the line declaring each.
pub(crate) fn runtime_dependencies(manifest: &str) -> Vec<(usize, String)> {
    let is_dependency_list =
        |table: &str| table == "dependencies" || (table.starts_with("target.") && table.ends_with(".dependencies"));
    let dependency_table_name = |table: &str| -> Option<String> {
        let rest = if let Some(rest) = table.strip_prefix("dependencies.") {
            rest
        } else if table.starts_with("target.") {
            table.split_once(".dependencies.")?.1
        } else {
            return None;
        };
        Some(rest.replace(['"', '\''], ""))
    };
    let mut out = Vec::new();
    for line in toml_lines(manifest) {
        match line {
            TomlLine::Table { line, name } => {
                if let Some(dep) = dependency_table_name(&name) {
                    out.push((line, dep));
                }
            }
            TomlLine::Entry { line, table, key, .. } => {
                if is_dependency_list(&table) {
                    // `serde.workspace = true` names `serde`.
                    let name = key.split('.').next().unwrap_or(&key).replace('\'', "");
                    out.push((line, name));
                }
            }
        }
    }
    out
}

/// The line without a trailing `#` comment; a `#` inside a string is kept.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') => return &line[..at],
            _ => {}
        }
    }
    line
}

fn without_whitespace(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The contents of every `"..."` in `s`.
fn quoted_strings(s: &str) -> Vec<String> {
    s.split('"').skip(1).step_by(2).map(str::to_string).collect()
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `word` occurs in `text` with no word character on either side.
fn contains_word(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
    })
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
