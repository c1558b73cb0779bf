//! Rule 14: the rule table of `ARCHITECTURE.md` (the section headed
//! [`RULE_TABLE_HEADING`]) names only things that exist. The table maps every rule of the
//! specification to the file and item that owns it and to what proves it:
//! `| rule | what it says | owner (file: item) | proved by |`.
//!
//! How a cell is read, plain text on purpose:
//! - A cell is split into segments at `;`. In a segment, a backticked span that looks like
//!   a path (no whitespace, a `/`, no `::`) names a file, relative to the workspace root;
//!   the backticked spans after it, up to the next path or the end of the segment, are
//!   items that must occur in that file. Spans before the first path of a segment are
//!   prose and are not checked (`not implemented (`continue`)` is fine there).
//! - An item is `fn name`, `const NAME`, `struct Name`, `enum Name`, `trait Name`,
//!   `type Name`, `mod name`, `static NAME`, `function name` or `class Name` (the keyword
//!   and the name must occur as one phrase), `impl Type` or `impl Type::method` (`impl
//!   Type` and `fn method` must occur), a quoted text `'...'` or `"..."`, optionally after
//!   `test ` or `check ` (the text must occur as written: a test's title), or a bare path
//!   of names such as `Step::FreshContinue`, `Commands.#submitted` or `one_in_flight`
//!   (its last name must occur as a whole word).
//!
//! What is checked, row by row: four cells, a rule id not used before, an owner cell that
//! names at least one file, every named file exists (a file, not a directory), and every
//! item occurs in its file. The proved-by cell may name nothing (`none`): a rule without
//! proof is a finding for a person, not a broken table.

use crate::tidy_architecture::ARCHITECTURE_FILE;
pub use crate::tidy_markdown::{code_spans, split_cells};
use crate::tidy_violation::{Rule, Violation};
use std::collections::BTreeMap;
use std::path::{Component, Path};

/// The heading of the section that holds the rule table.
pub const RULE_TABLE_HEADING: &str = "## Rules of the specification and where they live";

/// Cells in a row: rule, what it says, owner, proved by.
pub const RULE_TABLE_COLUMNS: usize = 4;

/// Keywords that name an item as a phrase `keyword name`.
const ITEM_KEYWORDS: [&str; 10] =
    ["fn", "const", "static", "struct", "enum", "trait", "type", "mod", "function", "class"];

/// Prefixes allowed before a quoted item.
const QUOTE_PREFIXES: [&str; 2] = ["test ", "check "];

/// One row of the rule table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleRow {
    /// 1-based line in `ARCHITECTURE.md`.
    pub line: usize,
    /// The row's cells, trimmed, without the outer pipes.
    pub cells: Vec<String>,
}

/// A file a cell names and the items that must occur in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// Path relative to the workspace root, as written.
    pub path: String,
    /// Items as written, backticks removed.
    pub items: Vec<String>,
}

/// What must occur in a file for an item to be found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Needle {
    /// A phrase that must occur with no identifier character right before or after it.
    Word(String),
    /// Text that must occur as written.
    Literal(String),
}

/// The rows of the rule table, or `None` when the section is missing. Rows are the lines
/// of the section that start with `|`, minus the header (the first) and separator rows.
pub fn rule_rows(architecture: &str) -> Option<Vec<RuleRow>> {
    let mut lines = architecture.lines().enumerate();
    lines.by_ref().find(|(_, line)| line.trim() == RULE_TABLE_HEADING)?;
    let mut rows = Vec::new();
    let mut header_seen = false;
    for (index, line) in lines {
        if line.starts_with("## ") {
            break;
        }
        let trimmed = line.trim();
        if !trimmed.starts_with('|') {
            continue;
        }
        let cells = split_cells(trimmed);
        if !header_seen {
            header_seen = true;
            continue;
        }
        if is_separator(&cells) {
            continue;
        }
        rows.push(RuleRow { line: index + 1, cells });
    }
    Some(rows)
}

fn is_separator(cells: &[String]) -> bool {
    cells.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
}

/// Whether a backticked span names a file rather than an item.
pub fn is_path(span: &str) -> bool {
    !span.is_empty()
        && span.contains('/')
        && !span.contains("::")
        && !span.chars().any(char::is_whitespace)
        && !span.starts_with(['\'', '"'])
}

/// The files a cell names, each with the items that follow it in its segment.
pub fn references(cell: &str) -> Vec<Reference> {
    let mut out: Vec<Reference> = Vec::new();
    for segment in split_outside_code(cell, ';') {
        let mut open = false;
        for span in code_spans(&segment) {
            let span = span.trim().to_string();
            if is_path(&span) {
                out.push(Reference { path: span, items: Vec::new() });
                open = true;
            } else if open && let Some(last) = out.last_mut() {
                last.items.push(span);
            }
        }
    }
    out
}

fn split_outside_code(text: &str, separator: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut in_code = false;
    for c in text.chars() {
        if c == '`' {
            in_code = !in_code;
        }
        if c == separator && !in_code {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
}

/// What must occur in the file for `item` to be found, or why the item cannot be read.
pub fn needles(item: &str) -> Result<Vec<Needle>, String> {
    let item = item.trim();
    let item = item.strip_suffix("()").unwrap_or(item);
    let unquoted = QUOTE_PREFIXES.iter().find_map(|p| item.strip_prefix(p)).unwrap_or(item).trim();
    for quote in ['\'', '"'] {
        if let Some(inner) = unquoted.strip_prefix(quote) {
            return match inner.strip_suffix(quote) {
                Some(text) if !text.is_empty() => Ok(vec![Needle::Literal(text.to_string())]),
                _ => Err(format!("`{item}`: a quoted item needs its closing quote and some text")),
            };
        }
    }
    if let Some((keyword, rest)) = item.split_once(' ') {
        let rest = rest.trim();
        if keyword == "impl" {
            let (ty, method) = match rest.rsplit_once("::") {
                Some((ty, method)) => (ty, Some(method)),
                None => (rest, None),
            };
            let mut out = vec![Needle::Word(format!("impl {}", name(ty, item)?))];
            if let Some(method) = method {
                out.push(Needle::Word(format!("fn {}", name(method, item)?)));
            }
            return Ok(out);
        }
        if ITEM_KEYWORDS.contains(&keyword) {
            return Ok(vec![Needle::Word(format!("{keyword} {}", name(rest, item)?))]);
        }
        return Err(format!(
            "`{item}`: not an item (use `fn x`, `const X`, `struct X`, `impl T::x`, a quoted text, or a name)"
        ));
    }
    let last = item.rsplit(['.', ':']).next().unwrap_or(item).trim_start_matches('#');
    Ok(vec![Needle::Word(name(last, item)?.to_string())])
}

/// A single identifier, or an error naming the item it came from.
fn name<'a>(text: &'a str, item: &str) -> Result<&'a str, String> {
    let text = text.trim();
    if !text.is_empty() && text.chars().all(is_ident_char) {
        Ok(text)
    } else {
        Err(format!("`{item}`: `{text}` is not a name (quote the text to look for it as written)"))
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `needle` occurs in `text`.
pub fn found(text: &str, needle: &Needle) -> bool {
    match needle {
        Needle::Literal(literal) => text.contains(literal.as_str()),
        Needle::Word(word) => text.match_indices(word.as_str()).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
        }),
    }
}

/// Whether a path is one the table may name: relative, inside the workspace.
fn is_workspace_path(path: &str) -> bool {
    Path::new(path).components().all(|c| matches!(c, Component::Normal(_)))
}

/// Reads a workspace file for the rule: its text, or `None` when it is not a readable file
/// inside `root`.
pub fn read_from(root: &Path) -> impl Fn(&str) -> Option<String> + '_ {
    move |path| {
        if !is_workspace_path(path) {
            return None;
        }
        let full = root.join(path);
        if full.is_file() { std::fs::read_to_string(full).ok() } else { None }
    }
}

/// Rule 14: every row of the rule table names files that exist and items that occur in
/// them. `read` returns a workspace file's text (`None`: no such file). A missing
/// `ARCHITECTURE.md` is rule 7's to report.
pub fn check_rule_table(architecture: Option<&str>, read: &dyn Fn(&str) -> Option<String>) -> Vec<Violation> {
    let Some(text) = architecture else {
        return Vec::new();
    };
    let violation = |line: usize, message: String| Violation::new(ARCHITECTURE_FILE, line, Rule::RuleTable, message);
    let Some(rows) = rule_rows(text) else {
        return vec![violation(
            0,
            format!("add the section `{RULE_TABLE_HEADING}`: a table from each rule of the specification to its owner"),
        )];
    };
    if rows.is_empty() {
        return vec![violation(0, format!("the section `{RULE_TABLE_HEADING}` has no table rows"))];
    }
    let mut files: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for row in rows {
        if row.cells.len() != RULE_TABLE_COLUMNS {
            out.push(violation(
                row.line,
                format!(
                    "a row has {RULE_TABLE_COLUMNS} cells (rule, what it says, owner, proved by), not {}",
                    row.cells.len()
                ),
            ));
            continue;
        }
        let id = row.cells[0].replace('`', "");
        if id.is_empty() {
            out.push(violation(row.line, "a row needs a rule id".to_string()));
        } else if let Some(first) = ids.insert(id.clone(), row.line) {
            out.push(violation(row.line, format!("rule {id} is already listed on line {first}")));
        }
        let owner = references(&row.cells[2]);
        if owner.is_empty() {
            out.push(violation(row.line, format!("rule {id}: name the file that owns it (a backticked path)")));
        }
        for (column, refs) in [("owner", owner), ("proved by", references(&row.cells[3]))] {
            for reference in refs {
                let text = files.entry(reference.path.clone()).or_insert_with(|| read(&reference.path));
                let Some(text) = text else {
                    out.push(violation(row.line, format!("rule {id}, {column}: `{}` is not a file", reference.path)));
                    continue;
                };
                for item in &reference.items {
                    match needles(item) {
                        Err(why) => out.push(violation(row.line, format!("rule {id}, {column}: {why}"))),
                        Ok(needles) => {
                            if let Some(missing) = needles.iter().find(|n| !found(text, n)) {
                                let what = match missing {
                                    Needle::Word(w) | Needle::Literal(w) => w,
                                };
                                out.push(violation(
                                    row.line,
                                    format!("rule {id}, {column}: `{what}` does not occur in `{}`", reference.path),
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    out
}
