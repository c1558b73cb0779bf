//! Rules over the crates' manifests (rule 4's dependency half and rule 5), and the small
//! reading of TOML they and the other manifest rules share: one key per line, comments
//! stripped, whitespace removed (the workspace's manifests are written that way).

use crate::tidy_violation::{Rule, SourceFile, Violation};

/// The engine's manifest, relative to the workspace root.
const ENGINE_MANIFEST: &str = "engine/Cargo.toml";

/// The only crates the engine may depend on outside `[dev-dependencies]`.
pub const ENGINE_DEPENDENCIES_ALLOWED: [&str; 2] = ["serde", "rand_chacha"];

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

/// The `name` of a manifest's `[package]`; `None` for a virtual manifest.
pub fn package_name(manifest: &str) -> Option<String> {
    toml_lines(manifest).into_iter().find_map(|line| match line {
        TomlLine::Entry { table, key, value, .. } if table == "package" && key == "name" => {
            Some(value.trim_matches(['"', '\'']).to_string())
        }
        _ => None,
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
