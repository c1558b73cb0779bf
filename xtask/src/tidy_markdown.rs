//! The little markdown `ARCHITECTURE.md`'s checks read (rules 7 and 14): a section by its
//! heading, the cells of a table line, the backticked spans of a text. Plain text on
//! purpose, as every tidy rule.

/// The lines of the section that starts with the heading line `heading` (compared
/// trimmed), up to the next heading of the same or a higher level, each with its 1-based
/// line number; `None` when there is no such heading.
pub fn section<'a>(text: &'a str, heading: &str) -> Option<Vec<(usize, &'a str)>> {
    let level = heading_level(heading)?;
    let mut lines = text.lines().enumerate();
    lines.by_ref().find(|(_, line)| line.trim() == heading)?;
    let body = lines
        .take_while(|(_, line)| heading_level(line).is_none_or(|l| l > level))
        .map(|(index, line)| (index + 1, line))
        .collect();
    Some(body)
}

/// How many `#` open a heading line (`## Codemap` is 2); `None` for any other line.
pub fn heading_level(line: &str) -> Option<usize> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    (hashes > 0 && line[hashes..].starts_with(' ')).then_some(hashes)
}

/// The cells of a table line: split at `|` outside backticks (`\|` is a literal pipe),
/// trimmed, the empty cells before the first and after the last pipe dropped.
pub fn split_cells(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut current = String::new();
    let mut in_code = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                current.push('|');
                chars.next();
            }
            '`' => {
                in_code = !in_code;
                current.push(c);
            }
            '|' if !in_code => cells.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    cells.push(current);
    if line.trim_start().starts_with('|') && cells.first().is_some_and(|c| c.trim().is_empty()) {
        cells.remove(0);
    }
    if line.trim_end().ends_with('|') && cells.last().is_some_and(|c| c.trim().is_empty()) {
        cells.pop();
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The backticked spans of a text, in order.
pub fn code_spans(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_string).collect()
}
