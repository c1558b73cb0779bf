//! Rule 7: `ARCHITECTURE.md` exists and its machine-checkable claims hold:
//! - it names every member crate and states its invariants ([`check_architecture`]);
//! - its codemap has a section per crate (a `### ` heading naming the crate's folder,
//!   `` ### `engine/` ``) that names each top-level module of the crate, every `src/*.rs`
//!   as `x.rs` and every `src/*/` as `x/`, and every `.rs` file the document names exists
//!   ([`check_codemap`]);
//! - the extension's section names every script under `extension/src/`
//!   ([`check_extension_codemap`]);
//! - its "API boundaries" table lists, per crate, the workspace crates it may depend on,
//!   and no manifest depends on one its row leaves out ([`check_api_boundaries`]).
//!
//! So a file added, moved or deleted, or a new dependency between crates, breaks `tidy`
//! until the document says so.

use crate::tidy_manifest::{package_name, runtime_dependencies, workspace_members};
use crate::tidy_markdown::{code_spans, heading_level, section, split_cells};
use crate::tidy_violation::{Rule, SourceFile, Violation};
use std::collections::{BTreeMap, BTreeSet};

/// The root document every member crate must appear in.
pub const ARCHITECTURE_FILE: &str = "ARCHITECTURE.md";

/// The prefix of a line stating an architecture invariant.
const ARCHITECTURE_INVARIANT_PREFIX: &str = "Architecture Invariant:";

/// The heading of the codemap; each crate's section is a `### ` heading under it.
pub const CODEMAP_HEADING: &str = "## Codemap";

/// The heading of the section holding the crate dependency table.
pub const API_BOUNDARIES_HEADING: &str = "## API boundaries";

/// What the dependency table's second cell says when a crate may depend on no
/// workspace crate.
pub const NO_CRATES: &str = "none";

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
            out.push(violation(0, format!("the codemap must mention the member crate `{member}`")));
        }
    }
    let has_invariant = text.lines().any(|line| line.trim_start().starts_with(ARCHITECTURE_INVARIANT_PREFIX));
    if !has_invariant {
        out.push(violation(0, format!("state at least one line starting with `{ARCHITECTURE_INVARIANT_PREFIX}`")));
    }
    out
}

/// Rule 7, codemap: every member has a section under [`CODEMAP_HEADING`] whose heading
/// names its folder in backticks with a trailing `/`; the section names every top-level
/// module of the crate found among `rust_files` (`x.rs` or `x/`, alone or at the end of a
/// longer path such as `src/x/`); and every backticked span of the whole document that
/// ends in `.rs` names a Rust file that exists: as a full path when it starts with a
/// member's folder, else, inside a crate's section, as the end of a path of that crate.
pub fn check_codemap(root_manifest: &str, architecture: Option<&str>, rust_files: &[SourceFile]) -> Vec<Violation> {
    let Some(text) = architecture else {
        return Vec::new();
    };
    let members = workspace_members(root_manifest);
    let Some(codemap) = section(text, CODEMAP_HEADING) else {
        return vec![violation(0, format!("add the section `{CODEMAP_HEADING}`, with a `### ` heading per crate"))];
    };
    let sections = crate_sections(&codemap, &members);
    let mut out = Vec::new();
    for member in &members {
        let files = crate_files(member, &members, rust_files);
        let Some((heading_line, body)) = sections.get(member.as_str()) else {
            out.push(violation(
                0,
                format!("the codemap has no section for the crate `{member}`: add a heading `### `{member}/``"),
            ));
            continue;
        };
        let spans: Vec<String> = body.iter().flat_map(|(_, line)| code_spans(line)).collect();
        for module in top_level_modules(member, &files) {
            let named = spans.iter().any(|span| span == &module || span.ends_with(&format!("/{module}")));
            if !named {
                out.push(violation(
                    *heading_line,
                    format!(
                        "the codemap's section for `{member}` must name its module `{module}` (`{member}/src/{module}`)"
                    ),
                ));
            }
        }
        for (line, span) in body.iter().flat_map(|(n, line)| code_spans(line).into_iter().map(move |s| (*n, s))) {
            if is_rust_path(&span)
                && !starts_with_member(&span, &members)
                && !files.iter().any(|f| ends_with_path(f, &span))
            {
                out.push(violation(line, format!("`{span}` names no Rust file of the crate `{member}`")));
            }
        }
    }
    for (index, line) in text.lines().enumerate() {
        for span in code_spans(line) {
            let exists = rust_files.iter().any(|f| f.path == span);
            if is_rust_path(&span) && starts_with_member(&span, &members) && !exists {
                out.push(violation(index + 1, format!("`{span}` names no Rust file of the workspace")));
            }
        }
    }
    out
}

/// The codemap section of the browser extension, which is no crate but has a section too.
pub const EXTENSION_SECTION: &str = "### `extension/`";

/// Where the extension's scripts live; each must be named in [`EXTENSION_SECTION`].
const EXTENSION_SRC: &str = "extension/src/";

/// Rule 7, codemap of the extension: its section names every script under
/// `extension/src/` by its file name (`executor.js`), so a script added or moved shows up
/// here as it does for a crate's module.
pub fn check_extension_codemap(architecture: Option<&str>, script_files: &[SourceFile]) -> Vec<Violation> {
    let Some(text) = architecture else {
        return Vec::new();
    };
    let Some(body) = section(text, EXTENSION_SECTION) else {
        return vec![violation(0, format!("the codemap has no section `{EXTENSION_SECTION}`"))];
    };
    let spans: BTreeSet<String> = body.iter().flat_map(|(_, line)| code_spans(line)).collect();
    script_files
        .iter()
        .filter_map(|f| f.path.strip_prefix(EXTENSION_SRC).map(|rest| (f.path.as_str(), rest)))
        .filter(|(_, rest)| {
            let name = rest.rsplit('/').next().unwrap_or(rest);
            !spans.iter().any(|span| span == name || ends_with_path(span, rest))
        })
        .map(|(path, _)| {
            violation(0, format!("the codemap's section `{EXTENSION_SECTION}` must name the script `{path}`"))
        })
        .collect()
}

/// Rule 7, API boundaries: the table under [`API_BOUNDARIES_HEADING`] has a row per
/// member crate, `| `name` | `dep`, `dep` | ... |` (or [`NO_CRATES`] in the second cell),
/// naming only crates that exist; and each member's manifest depends (outside
/// `[dev-dependencies]`) on no workspace crate its row leaves out.
pub fn check_api_boundaries(
    root_manifest: &str,
    architecture: Option<&str>,
    manifests: &[SourceFile],
) -> Vec<Violation> {
    let Some(text) = architecture else {
        return Vec::new();
    };
    let Some(body) = section(text, API_BOUNDARIES_HEADING) else {
        return vec![violation(
            0,
            format!(
                "add the section `{API_BOUNDARIES_HEADING}`: a table of the workspace crates each crate may depend on"
            ),
        )];
    };
    let members = workspace_members(root_manifest);
    let crates: BTreeMap<String, &SourceFile> = manifests
        .iter()
        .filter(|m| members.iter().any(|member| m.path == format!("{member}/Cargo.toml")))
        .filter_map(|m| package_name(&m.text).map(|name| (name, m)))
        .collect();
    let mut out = Vec::new();
    let mut allowed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (line, text) in &body {
        let cells = split_cells(text);
        let Some(name) = cells.first().and_then(|c| single_span(c)) else {
            continue;
        };
        let mut may = BTreeSet::new();
        for dep in cells.get(1).map(|c| code_spans(c)).unwrap_or_default() {
            if !crates.contains_key(&dep) {
                out.push(violation(*line, format!("`{dep}` is not a crate of the workspace")));
            }
            may.insert(dep);
        }
        let none = cells.get(1).is_some_and(|c| c.trim() == NO_CRATES);
        if may.is_empty() && !none {
            out.push(violation(*line, format!("say which crates `{name}` may depend on, or `{NO_CRATES}`")));
        }
        if !crates.contains_key(&name) {
            out.push(violation(*line, format!("`{name}` is not a crate of the workspace")));
        }
        allowed.insert(name, may);
    }
    for (name, manifest) in &crates {
        let Some(may) = allowed.get(name) else {
            out.push(violation(0, format!("the API boundaries table has no row for the crate `{name}`")));
            continue;
        };
        for (line, dep) in runtime_dependencies(&manifest.text) {
            if crates.contains_key(&dep) && !may.contains(&dep) {
                out.push(Violation::new(
                    &manifest.path,
                    line,
                    Rule::Architecture,
                    format!(
                        "`{name}` depends on `{dep}`, which its row of {ARCHITECTURE_FILE}'s API boundaries does not allow: move the code, or change the boundary there first"
                    ),
                ));
            }
        }
    }
    out
}

fn violation(line: usize, message: String) -> Violation {
    Violation::new(ARCHITECTURE_FILE, line, Rule::Architecture, message)
}

/// A crate's section of the codemap: its heading's line number, and its lines with theirs.
type CrateSection<'a> = (usize, Vec<(usize, &'a str)>);

/// The codemap's `### ` sections by the member whose folder their heading names in
/// backticks (`` `adapters/store/` ``), each with its heading's line and its lines.
fn crate_sections<'a>(codemap: &[(usize, &'a str)], members: &[String]) -> BTreeMap<&'a str, CrateSection<'a>> {
    let mut out: BTreeMap<&str, CrateSection<'_>> = BTreeMap::new();
    let mut current: Option<&str> = None;
    for &(number, line) in codemap {
        if heading_level(line) == Some(3) {
            current = code_spans(line).iter().find_map(|span| {
                let folder = span.strip_suffix('/')?;
                members.iter().find(|m| m.as_str() == folder).map(|_| {
                    let at = line.find(span.as_str()).expect("a span of the line");
                    &line[at..at + folder.len()]
                })
            });
            if let Some(member) = current {
                out.insert(member, (number, Vec::new()));
            }
        } else if let Some(member) = current
            && let Some((_, lines)) = out.get_mut(member)
        {
            lines.push((number, line));
        }
    }
    out
}

/// The workspace paths of a member's Rust files: those under its folder and not under
/// another member nested in it (`adapters/bridge/test-executor` inside `adapters/bridge`).
fn crate_files<'a>(member: &str, members: &[String], rust_files: &'a [SourceFile]) -> Vec<&'a str> {
    let inside = |path: &str, folder: &str| path.starts_with(&format!("{folder}/"));
    let nested: Vec<&String> = members.iter().filter(|m| m.as_str() != member && inside(m, member)).collect();
    rust_files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|path| inside(path, member) && !nested.iter().any(|n| inside(path, n)))
        .collect()
}

/// A crate's top-level modules: each `src/x.rs` as `x.rs`, each folder `src/x/` holding
/// Rust files as `x/`.
fn top_level_modules(member: &str, files: &[&str]) -> BTreeSet<String> {
    let src = format!("{member}/src/");
    files
        .iter()
        .filter_map(|path| path.strip_prefix(&src))
        .map(|rest| match rest.split_once('/') {
            Some((folder, _)) => format!("{folder}/"),
            None => rest.to_string(),
        })
        .collect()
}

/// Whether a backticked span is a path of a Rust file (`x.rs`, `a/b.rs`).
fn is_rust_path(span: &str) -> bool {
    span.ends_with(".rs")
        && span.len() > ".rs".len()
        && !span.chars().any(|c| c.is_whitespace() || c == ':' || c == '*')
}

fn starts_with_member(span: &str, members: &[String]) -> bool {
    members.iter().any(|m| span.starts_with(&format!("{m}/")))
}

/// Whether `path` is `tail` or ends with `/tail`.
fn ends_with_path(path: &str, tail: &str) -> bool {
    path == tail || path.ends_with(&format!("/{tail}"))
}

/// The cell's text when it is exactly one backticked span.
fn single_span(cell: &str) -> Option<String> {
    let inner = cell.trim().strip_prefix('`')?.strip_suffix('`')?;
    (!inner.is_empty() && !inner.contains('`')).then(|| inner.to_string())
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
