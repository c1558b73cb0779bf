//! House rule 11: no import circle between the top-level modules of one crate. A module
//! that uses another's items and is used back by it is one room in two files: the rule
//! asks for a seam instead (the shared part in a module of its own, or a trait or a
//! function passed in).
//!
//! The graph is read from the text, as the other rules are: in a file of module `m`
//! (`src/m.rs`, `src/m/mod.rs` or anything under `src/m/`), every `crate::x` path, and
//! every `super::…::x` path that climbs to the crate root, is an edge `m -> x` when `x` is
//! a top-level module of the crate (`use crate::{x, y::Z}` groups too, across lines). A
//! name the crate root re-exports (`pub use x::Item;` in `lib.rs`) counts as its module's,
//! so `crate::Item` is an edge to `x`. Only production code counts: comments, string and
//! character literals, the test code after the `#[cfg(test)]` marker and the files of a
//! test module (`m/tests.rs`, declared as `#[cfg(test)] mod tests;`) are left out. The
//! crate root itself is no module: `lib.rs` and `main.rs` wire the modules together.
//!
//! The rule holds for every crate of the workspace: each member is in
//! [`CIRCLE_FREE_CRATES`], or in [`CIRCLE_EXEMPT_CRATES`] with the reason why
//! ([`check_every_crate_listed`] keeps the lists complete). A module that is a crate's
//! composition root in all but name is read as a second root ([`SHARED_ROOTS`], each with
//! its reason): its uses and the uses of it are no edges, as for `lib.rs`.

use crate::tidy_manifest::workspace_members;
use crate::tidy_violation::{Rule, SourceFile, TEST_CODE_MARKER, Violation};
use std::collections::{BTreeMap, BTreeSet};

/// The crates (their directories) whose top-level modules must form no circle: every
/// member of the workspace.
pub const CIRCLE_FREE_CRATES: [&str; 17] = [
    "adapters/address",
    "adapters/bridge",
    "adapters/bridge/test-executor",
    "adapters/cli-executor",
    "adapters/console",
    "adapters/edge",
    "adapters/mcp",
    "adapters/oauth",
    "adapters/orchestrator",
    "adapters/protocol/caller",
    "adapters/protocol/executor",
    "adapters/store",
    "adapters/store-pg",
    "engine",
    "runtime",
    "sim",
    "xtask",
];

/// Members exempt from the rule, each with the reason why (none today).
pub const CIRCLE_EXEMPT_CRATES: [(&str, &str); 0] = [];

/// Modules read as a second crate root: (crate directory, module, why).
pub const SHARED_ROOTS: [(&str, &str, &str); 1] = [(
    "engine",
    "engine",
    "`Engine` is the engine's composition root: `engine.rs` holds the owners of its state \
     (`State`, `Index`, `Connections`, `Approvals`) and the handle/poll loop, and each rule \
     file adds an `impl Engine` block. A rule file names `Engine` to add its methods and \
     `engine.rs` names the owners to hold them: the wiring `lib.rs` does elsewhere, not a \
     dependency between two rules (`ARCHITECTURE.md`, the engine)",
)];

/// One use of a module by another: where it is written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ModuleEdge {
    /// The module whose file holds the path.
    pub from: String,
    /// The module the path names.
    pub to: String,
    /// The file, relative to the workspace root.
    pub file: String,
    /// 1-based line of the path.
    pub line: usize,
}

/// Rule 11, completeness: every workspace member (from the root manifest) is in
/// [`CIRCLE_FREE_CRATES`] or [`CIRCLE_EXEMPT_CRATES`], so a new crate cannot slip past
/// the rule, and every listed crate is a member.
pub fn check_every_crate_listed(root_manifest: &str) -> Vec<Violation> {
    let members = workspace_members(root_manifest);
    let listed = |m: &str| CIRCLE_FREE_CRATES.contains(&m) || CIRCLE_EXEMPT_CRATES.iter().any(|(c, _)| *c == m);
    let mut out: Vec<Violation> = members
        .iter()
        .filter(|m| !listed(m))
        .map(|m| {
            Violation::new(
                "Cargo.toml",
                0,
                Rule::ImportCircle,
                format!(
                    "the member `{m}` is under no import-circle rule: add it to CIRCLE_FREE_CRATES in xtask/src/tidy_imports.rs (or to CIRCLE_EXEMPT_CRATES, with the reason)"
                ),
            )
        })
        .collect();
    let stale = CIRCLE_FREE_CRATES.iter().copied().chain(CIRCLE_EXEMPT_CRATES.iter().map(|(c, _)| *c));
    for crate_dir in stale.filter(|c| !members.iter().any(|m| m == c)) {
        out.push(Violation::new(
            "xtask/src/tidy_imports.rs",
            0,
            Rule::ImportCircle,
            format!("`{crate_dir}` is listed for the import-circle rule but is no workspace member"),
        ));
    }
    out
}

/// Rule 11 over the workspace's Rust files, for [`CIRCLE_FREE_CRATES`].
pub fn check_import_circles(files: &[SourceFile]) -> Vec<Violation> {
    check_import_circles_in(files, &CIRCLE_FREE_CRATES)
}

/// Rule 11 for the crates whose directories are `crates`: one violation per circle, at
/// the first use on it, naming the circle's path and where each step is written.
pub fn check_import_circles_in(files: &[SourceFile], crates: &[&str]) -> Vec<Violation> {
    let mut out = Vec::new();
    for crate_dir in crates {
        let edges = module_edges(files, crate_dir);
        for circle in circles(&edges) {
            let steps: Vec<String> =
                circle.iter().map(|e| format!("{}:{} ({} uses {})", e.file, e.line, e.from, e.to)).collect();
            let names: Vec<&str> = circle.iter().map(|e| e.from.as_str()).chain([circle[0].from.as_str()]).collect();
            out.push(Violation::new(
                &circle[0].file,
                circle[0].line,
                Rule::ImportCircle,
                format!(
                    "import circle between the modules of {crate_dir}: {}; break it with a seam (the shared part in a module of its own, or a trait or a function passed in): {}",
                    names.join(" -> "),
                    steps.join(", ")
                ),
            ));
        }
    }
    out
}

/// Every use of one top-level module by another in the crate at `crate_dir`, in file and
/// line order (each file's first use of each module only).
pub fn module_edges(files: &[SourceFile], crate_dir: &str) -> Vec<ModuleEdge> {
    let src = format!("{crate_dir}/src/");
    let roots: Vec<&str> = SHARED_ROOTS.iter().filter(|(c, _, _)| *c == crate_dir).map(|(_, m, _)| *m).collect();
    let shared = |path: &[String]| path.first().is_some_and(|m| roots.contains(&m.as_str()));
    let in_crate: Vec<(&SourceFile, Vec<String>)> = files
        .iter()
        .filter_map(|f| Some((f, module_path(f.path.strip_prefix(&src)?)?)))
        .filter(|(_, path)| !is_test_module(path))
        .collect();
    let modules: BTreeSet<String> =
        in_crate.iter().filter(|(_, path)| !shared(path)).filter_map(|(_, path)| path.first().cloned()).collect();
    let mut reexports = BTreeMap::new();
    for (file, path) in &in_crate {
        if path.is_empty() {
            reexports.extend(root_reexports(&file.text, &modules));
        }
    }
    let mut out = Vec::new();
    for (file, path) in &in_crate {
        let Some(own) = path.first().filter(|_| !shared(path)) else { continue };
        let mut seen = BTreeSet::new();
        for (line, name) in root_names(&file.text, path) {
            let target = if modules.contains(&name) { Some(&name) } else { reexports.get(&name) };
            if let Some(to) = target.filter(|to| *to != own && modules.contains(*to))
                && seen.insert(to.clone())
            {
                out.push(ModuleEdge { from: own.clone(), to: to.clone(), file: file.path.clone(), line });
            }
        }
    }
    out
}

/// Whether a module path names a test module (`a::tests`, from `a/tests.rs`): test code,
/// which the rule leaves out as it does the code after the test marker.
fn is_test_module(path: &[String]) -> bool {
    path.len() > 1 && path.last().is_some_and(|m| m == "tests")
}

/// The module path of a file under `src/`: `[]` for the crate root (`lib.rs`, `main.rs`),
/// `[m]` for `m.rs` and `m/mod.rs`, `[m, n]` for `m/n.rs`; `None` for `src/bin/`, which
/// holds other crates.
fn module_path(relative: &str) -> Option<Vec<String>> {
    let mut parts: Vec<String> = relative.strip_suffix(".rs")?.split('/').map(str::to_string).collect();
    if parts.len() > 1 && parts[0] == "bin" {
        return None;
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        return Some(Vec::new());
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

/// The production code of a file, one entry per line (1-based), with comments and the
/// contents of string and character literals blanked out (so neither names a module).
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let production: Vec<&str> = text.lines().take_while(|line| !line.contains(TEST_CODE_MARKER)).collect();
    blank_comments_and_literals(&production.join("\n"))
        .split('\n')
        .enumerate()
        .map(|(index, line)| (index + 1, line.to_string()))
        .collect()
}

/// `code` with every comment and the inside of every string and character literal
/// replaced by spaces; line breaks are kept, so lines keep their numbers. Raw strings
/// are read as plain ones, which is right unless they hold a quote.
fn blank_comments_and_literals(code: &str) -> String {
    #[derive(PartialEq)]
    enum State {
        Code,
        Str,
        LineComment,
        BlockComment(usize),
    }
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut state = State::Code;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
        match state {
            State::Code => match (c, next) {
                ('/', Some('/')) => {
                    state = State::LineComment;
                    out.push(' ');
                }
                ('/', Some('*')) => {
                    state = State::BlockComment(1);
                    out.push_str("  ");
                    i += 1;
                }
                ('"', _) => {
                    state = State::Str;
                    out.push('"');
                }
                ('\'', _) => {
                    // A character literal ('x', '\n', '\u{..}'), not a lifetime ('a).
                    let from = if next == Some('\\') { i + 3 } else { i + 2 };
                    let close = (from..chars.len().min(i + 12)).find(|&j| chars[j] == '\'');
                    match close {
                        Some(j) if j == i + 2 || next == Some('\\') => {
                            out.push('\'');
                            out.extend(std::iter::repeat_n(' ', j - i - 1));
                            out.push('\'');
                            i = j;
                        }
                        _ => out.push(c),
                    }
                }
                _ => out.push(c),
            },
            State::Str => match c {
                '\\' => {
                    out.push(' ');
                    if let Some(n) = next {
                        out.push(blank(n));
                        i += 1;
                    }
                }
                '"' => {
                    state = State::Code;
                    out.push('"');
                }
                _ => out.push(blank(c)),
            },
            State::LineComment => {
                if c == '\n' {
                    state = State::Code;
                }
                out.push(blank(c));
            }
            State::BlockComment(depth) => {
                if (c, next) == ('*', Some('/')) {
                    state = if depth == 1 { State::Code } else { State::BlockComment(depth - 1) };
                    out.push_str("  ");
                    i += 1;
                } else if (c, next) == ('/', Some('*')) {
                    state = State::BlockComment(depth + 1);
                    out.push_str("  ");
                    i += 1;
                } else {
                    out.push(blank(c));
                }
            }
        }
        i += 1;
    }
    out
}

/// The first segment after the crate root of every path in a file of module `path` that
/// reaches the root (`crate::x`, or enough `super::` to climb there), with its line.
/// A group (`crate::{x, y::z}`) gives each of its items' first segments.
fn root_names(text: &str, path: &[String]) -> Vec<(usize, String)> {
    let lines = code_lines(text);
    let code: String = lines.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n");
    let line_at = |offset: usize| lines[code[..offset].matches('\n').count()].0;
    let mut out = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let preceded_by_word = code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
        let root = if preceded_by_word {
            None
        } else if let Some(after) = rest.strip_prefix("crate::") {
            Some(after)
        } else if rest.starts_with("super::") {
            let mut after = rest;
            let mut climbs = 0;
            while let Some(next) = after.strip_prefix("super::") {
                after = next;
                climbs += 1;
            }
            // `super` from a file of module `a::b` names `a`; climbing as many times as the
            // path is long reaches the crate root.
            (climbs == path.len()).then_some(after)
        } else {
            None
        };
        let Some(after) = root else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let start = code.len() - after.len();
        for (offset, name) in first_segments(after) {
            out.push((line_at(start + offset), name));
        }
        at = start;
    }
    out
}

/// The first identifier of `text`, or of each item of a `{…}` group at its start, with
/// its byte offset in `text`. `self` and `*` name no module.
fn first_segments(text: &str) -> Vec<(usize, String)> {
    let Some(inside) = text.strip_prefix('{') else {
        return identifier(text).map(|name| vec![(0, name)]).unwrap_or_default();
    };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut item_next = true;
    for (i, c) in inside.char_indices() {
        let offset = i + 1;
        if item_next && !c.is_whitespace() {
            item_next = false;
            if depth == 0
                && let Some(name) = identifier(&text[offset..])
            {
                out.push((offset, name));
            }
        }
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_next = true,
            _ => {}
        }
    }
    out
}

/// The identifier at the start of `text`, unless it is `self`.
fn identifier(text: &str) -> Option<String> {
    let name: String = text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty() && name != "self").then_some(name)
}

/// The names the crate root re-exports from its modules (`pub use x::Item;`, `pub use
/// x::{A, b::C as D};`, with or without `crate::`), each with the module it comes from.
fn root_reexports(text: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let code: String = code_lines(text).into_iter().map(|(_, l)| l).collect::<Vec<_>>().join("\n");
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(path) = statement.strip_prefix("pub use ").or_else(|| statement.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let path = path.trim().strip_prefix("crate::").unwrap_or(path.trim());
        let Some(module) = identifier(path).filter(|m| modules.contains(m)) else { continue };
        for leaf in leaves(&path[module.len()..]) {
            out.insert(leaf, module.clone());
        }
    }
    out
}

/// The names a `use` path's tail brings into scope: `::A` gives `A`, `::{A, b::C as D}`
/// gives `A` and `D`.
fn leaves(tail: &str) -> Vec<String> {
    let flat: String = tail.chars().filter(|c| !c.is_whitespace() || *c == ' ').collect();
    let mut out = Vec::new();
    for item in flat.split([',', '{', '}']) {
        let item = item.trim();
        let name = match item.rsplit_once(" as ") {
            Some((_, alias)) => alias.trim(),
            None => item.rsplit("::").next().unwrap_or(item),
        };
        if let Some(name) = identifier(name.trim()) {
            out.push(name);
        }
    }
    out
}

/// One circle per group of modules that reach each other (a strongly connected component
/// of more than one module), as its edges in order, starting at the group's first module
/// by name along the shortest way back to it.
fn circles(edges: &[ModuleEdge]) -> Vec<Vec<ModuleEdge>> {
    let mut next: BTreeMap<&str, Vec<&ModuleEdge>> = BTreeMap::new();
    for edge in edges {
        next.entry(edge.from.as_str()).or_default().push(edge);
    }
    let nodes: BTreeSet<&str> = edges.iter().flat_map(|e| [e.from.as_str(), e.to.as_str()]).collect();
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(node) = stack.pop() {
            for edge in next.get(node.as_str()).into_iter().flatten() {
                if seen.insert(edge.to.clone()) {
                    stack.push(edge.to.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&str, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut reported: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::new();
    for node in &nodes {
        if reported.contains(node) || !reachable[node].contains(*node) {
            continue;
        }
        let group: BTreeSet<&str> =
            nodes.iter().copied().filter(|m| reachable[node].contains(*m) && reachable[m].contains(*node)).collect();
        reported.extend(group.iter().copied());
        if let Some(circle) = shortest_circle(node, &next, &group) {
            out.push(circle);
        }
    }
    out
}

/// The shortest way from `start` back to itself inside `group` (breadth first, edges in
/// file order), as its edges.
fn shortest_circle(
    start: &str,
    next: &BTreeMap<&str, Vec<&ModuleEdge>>,
    group: &BTreeSet<&str>,
) -> Option<Vec<ModuleEdge>> {
    let mut came_by: BTreeMap<&str, &ModuleEdge> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for edge in next.get(node).into_iter().flatten() {
            let to = edge.to.as_str();
            if !group.contains(to) || came_by.contains_key(to) {
                continue;
            }
            came_by.insert(to, edge);
            if to == start {
                let mut path = vec![(*edge).clone()];
                let mut at = edge.from.as_str();
                while at != start {
                    let step = came_by[at];
                    path.push(step.clone());
                    at = step.from.as_str();
                }
                path.reverse();
                return Some(path);
            }
            queue.push_back(to);
        }
    }
    None
}
