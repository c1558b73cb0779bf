//! Rule 12, the CLI executor's layers (`adapters/cli-executor/src/`): the shared base, one
//! room per CLI, and the executor loop on top, each a folder, with imports only downwards.
//!
//! Every file lives in a layer folder ([`CLI_EXECUTOR_LAYERS`]; `lib.rs`, the crate root that
//! declares them, is the one exception), and every path it names inside the crate
//! (`crate::...`, or `super::...` climbing out of its folder) starts with a layer folder or
//! `crate::Error` (the base's error, re-exported at the root): a folder may name its own
//! layer and any layer below it, never one beside it (the other CLI's room) or above it.
//! Paths are read from the code only: comments, strings and character literals are
//! skipped, and a `{...}` group (`use crate::{base::x, codex::y}`) is read item by item.

use crate::tidy_violation::{Rule, SourceFile, Violation};

/// Where the CLI executor's sources live, relative to the workspace root.
pub const CLI_EXECUTOR_SRC: &str = "adapters/cli-executor/src/";

/// The layer folders and their rank: a file may import from its own folder and from any
/// folder of a lower rank. The two CLI rooms share a rank, so neither imports the other.
pub const CLI_EXECUTOR_LAYERS: [(&str, u8); 4] = [("base", 0), ("codex", 1), ("claude", 1), ("run", 2)];

/// The crate's root items a file may name without a layer folder: re-exports of the base.
pub const CLI_EXECUTOR_ROOT_ITEMS: [&str; 1] = ["Error"];

/// Rule 12: the file's imports within the CLI executor point only to its own layer folder
/// or a lower one; the file itself sits in a layer folder.
pub fn check_cli_executor_layers(file: &SourceFile) -> Vec<Violation> {
    let Some(rel) = file.path.strip_prefix(CLI_EXECUTOR_SRC) else { return Vec::new() };
    if !rel.ends_with(".rs") || rel == "lib.rs" {
        return Vec::new();
    }
    let module = module_path(rel);
    let Some(from) = module.first().and_then(|folder| layer(folder)) else {
        let folders: Vec<&str> = CLI_EXECUTOR_LAYERS.iter().map(|(name, _)| *name).collect();
        return vec![Violation::new(
            &file.path,
            0,
            Rule::CliExecutorLayers,
            format!("every file of the CLI executor lives in a layer folder: one of {}", folders.join(", ")),
        )];
    };
    let mut out = Vec::new();
    for (line, target) in crate_paths(&file.text, &module) {
        let message = match (target.as_str(), layer(&target)) {
            (_, Some((folder, rank))) if folder == from.0 || rank < from.1 => continue,
            (name, _) if CLI_EXECUTOR_ROOT_ITEMS.contains(&name) => continue,
            (_, Some((folder, rank))) if rank == from.1 => format!(
                "`{}/` names `crate::{folder}`: a CLI's room imports the shared base only, never the other room",
                from.0
            ),
            (_, Some((folder, _))) => format!(
                "`{}/` names `crate::{folder}`, a layer above it: imports go down only (base <- codex, claude <- run)",
                from.0
            ),
            (name, None) => format!(
                "`crate::{name}` is not a layer folder: name it through its layer (crate::base::..., crate::codex::..., crate::claude::..., crate::run::...)"
            ),
        };
        out.push(Violation::new(&file.path, line, Rule::CliExecutorLayers, message));
    }
    out
}

/// The layer folder `name` and its rank, if it is one.
fn layer(name: &str) -> Option<(&'static str, u8)> {
    CLI_EXECUTOR_LAYERS.iter().copied().find(|(folder, _)| *folder == name)
}

/// The module path of a source file relative to `src/`: `codex/core/mod.rs` is
/// `[codex, core]`, `base/journal/tests.rs` is `[base, journal, tests]`.
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

/// The first segment (below the crate root) of every crate path in `text`'s code, with its
/// 1-based line: `crate::a::b` names `a`; `super::` climbs from the module the path is
/// written in (`module`, plus any inline `mod x { .. }` around it); a `{...}` group names
/// each of its items. A `super::` path that stays below the root names its first segment
/// below the root too (`super::x` in `codex/home.rs` names `codex`).
fn crate_paths(text: &str, module: &[String]) -> Vec<(usize, String)> {
    let code = code_only(text);
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    // Inline modules open around the cursor: their names and the brace depth inside them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_mod: Option<String> = None;
    let mut line = 1;
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c == '\n' {
            line += 1;
        }
        if c == '{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((name, depth));
            }
            at += 1;
            continue;
        }
        if c == '}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            at += 1;
            continue;
        }
        if c == ';' {
            pending_mod = None;
        }
        if !is_ident_start(c) || (at > 0 && is_ident_char(chars[at - 1])) {
            at += 1;
            continue;
        }
        let word = ident_at(&chars, at);
        let after = at + word.chars().count();
        match word.as_str() {
            "mod" => {
                let next = skip_space(&chars, after);
                let name = ident_at(&chars, next);
                if !name.is_empty() {
                    pending_mod = Some(name);
                }
            }
            "crate" | "super" if starts_with(&chars, after, "::") => {
                let mut base: Vec<String> = module.to_vec();
                base.extend(inline.iter().map(|(name, _)| name.clone()));
                let mut cursor = at;
                if word == "crate" {
                    base.clear();
                    cursor = after + 2;
                } else {
                    // `super::super::...`: each climbs one module.
                    while ident_at(&chars, cursor) == "super" && starts_with(&chars, cursor + 5, "::") {
                        base.pop();
                        cursor += "super::".len();
                    }
                }
                for first in segments_after(&chars, cursor) {
                    let target = base.first().cloned().unwrap_or(first);
                    out.push((line, target));
                }
                at = cursor;
                continue;
            }
            _ => {}
        }
        at = after;
    }
    out
}

/// The first segment of the path at `at`, or of each item of a `{...}` group there.
fn segments_after(chars: &[char], at: usize) -> Vec<String> {
    let at = skip_space(chars, at);
    if chars.get(at) != Some(&'{') {
        let word = ident_at(chars, at);
        return if word.is_empty() { Vec::new() } else { vec![word] };
    }
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut expect_item = true;
    for (offset, &c) in chars[at..].iter().enumerate() {
        match c {
            '{' => {
                depth += 1;
                expect_item = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => expect_item = true,
            c if expect_item && depth == 1 && is_ident_start(c) => {
                out.push(ident_at(chars, at + offset));
                expect_item = false;
            }
            c if expect_item && depth == 1 && !c.is_whitespace() => expect_item = false,
            _ => {}
        }
    }
    out
}

/// `text` with every comment, string and character literal blanked out (newlines kept, so
/// lines still count). Block comments nest; raw strings (`r"..."`, `r#"..."#`, `br".."`)
/// end at their own closing; a `'` that opens no character literal is a lifetime.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                out.push(' ');
                at += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[at]);
                    at += 1;
                }
            }
            continue;
        }
        if let Some(hashes) = raw_string_start(&chars, at) {
            // `r`, the hashes and the quote, then up to a quote followed by as many hashes.
            let open = 1 + hashes + 1;
            for _ in 0..open {
                out.push(' ');
            }
            at += open;
            while at < chars.len() {
                let closes = chars[at] == '"' && (1..=hashes).all(|k| chars.get(at + k) == Some(&'#'));
                if closes {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    at += hashes + 1;
                    break;
                }
                blank(&mut out, chars[at]);
                at += 1;
            }
            continue;
        }
        if c == '"' {
            out.push(' ');
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                if chars[at] == '\\' {
                    blank(&mut out, chars[at]);
                    at += 1;
                }
                if at < chars.len() {
                    blank(&mut out, chars[at]);
                    at += 1;
                }
            }
            out.push(' ');
            at += 1;
            continue;
        }
        if c == '\'' {
            let len = match (next, chars.get(at + 2), chars.get(at + 3)) {
                // `'\n'`, `'\''`, `'\u{..}'`: the escaped character, then the closing quote.
                (Some('\\'), _, _) => {
                    chars.get(at + 3..).and_then(|rest| rest.iter().position(|&c| c == '\'')).map(|end| end + 4)
                }
                (Some(_), Some('\''), _) => Some(3),
                _ => None, // a lifetime or a label
            };
            if let Some(len) = len {
                for k in 0..len.min(chars.len() - at) {
                    blank(&mut out, chars[at + k]);
                }
                at += len;
                continue;
            }
        }
        out.push(c);
        at += 1;
    }
    out
}

/// How many `#` a raw string opening at `at` has (`r"`: 0), if one opens there: an `r` (or
/// `br`) that starts a token, then hashes, then a quote.
fn raw_string_start(chars: &[char], at: usize) -> Option<usize> {
    if chars[at] != 'r' {
        return None;
    }
    let token_start = match at.checked_sub(1).map(|i| chars[i]) {
        Some('b') => at < 2 || !is_ident_char(chars[at - 2]),
        Some(c) => !is_ident_char(c),
        None => true,
    };
    if !token_start {
        return None;
    }
    let hashes = chars[at + 1..].iter().take_while(|&&c| c == '#').count();
    (chars.get(at + 1 + hashes) == Some(&'"')).then_some(hashes)
}

fn ident_at(chars: &[char], at: usize) -> String {
    match chars.get(at) {
        Some(&c) if is_ident_start(c) => chars[at..].iter().take_while(|&&c| is_ident_char(c)).collect(),
        _ => String::new(),
    }
}

fn skip_space(chars: &[char], at: usize) -> usize {
    at + chars.get(at..).map_or(0, |rest| rest.iter().take_while(|c| c.is_whitespace()).count())
}

fn starts_with(chars: &[char], at: usize, text: &str) -> bool {
    text.chars().enumerate().all(|(k, c)| chars.get(at + k) == Some(&c))
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}
