//! Parser for the end-of-response continuation-state block (spec 000 §27, spec 001 C18.2).
//!
//! The block is untrusted page content and only one signal: a parse failure must fail safe, and a
//! parsed `complete` never completes a worker by itself. Accepted shape, as the last non-empty
//! lines of a response (optionally inside a triple-backtick fence, optionally `- ` bulleted, CRLF
//! tolerated):
//!
//! ```text
//! status: working
//! summary: Parser landed; scheduler half done.
//! current: Wiring the idle grace timer.
//! next: Keepalive jitter and floor.
//! ```
//!
//! Rules: the block is the run of `key: value` lines that ends the final paragraph (lines after its
//! first key line must all be key lines); keys are `status|summary|current|next`, ASCII
//! case-insensitive, each exactly once, in any order; every value is a single line; prose may
//! precede the block, but a `status:` line anywhere before it means two blocks.

use serde::{Deserialize, Serialize};

/// Longest text `parse` accepts; callers pass only the tail of a response (see [`response_tail`]).
pub const BLOCK_INPUT_BYTES_MAX: usize = 16 * 1024;
/// Longest accepted value of one field, after trimming.
pub const BLOCK_FIELD_BYTES_MAX: usize = 1024;

/// Markdown fence that may wrap the block.
const FENCE: &str = "```";
/// Bullet prefixes tolerated before a key.
const BULLETS: [&str; 2] = ["- ", "* "];

const KEY_STATUS: &str = "status";
const KEY_SUMMARY: &str = "summary";
const KEY_CURRENT: &str = "current";
const KEY_NEXT: &str = "next";
/// The four keys, in their usual order.
const KEYS: [&str; 4] = [KEY_STATUS, KEY_SUMMARY, KEY_CURRENT, KEY_NEXT];

/// The agent's own view of the assignment at the end of a turn (spec 000 §27.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlockStatus {
    /// The assignment is unfinished; another execution can continue it.
    Working,
    /// The agent claims all requested work and acceptance gates are finished.
    Complete,
    /// Progress genuinely needs external input or an unavailable dependency.
    Blocked,
}

impl BlockStatus {
    /// The stable wire name, as written in the block.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockStatus::Working => "working",
            BlockStatus::Complete => "complete",
            BlockStatus::Blocked => "blocked",
        }
    }

    fn from_value(value: &str) -> Option<Self> {
        [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Blocked]
            .into_iter()
            .find(|status| status.as_str().eq_ignore_ascii_case(value))
    }
}

/// A validated continuation-state block; values are trimmed single lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContinuationBlock {
    /// The claimed state of the assignment.
    pub status: BlockStatus,
    /// Overall state of the assignment.
    pub summary: String,
    /// What the agent is doing now.
    pub current: String,
    /// The next step; may be empty only when `status` is `complete`.
    pub next: String,
}

/// Why a response's block was rejected; every rejection fails safe to durable worker state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockError {
    /// The response does not end with a block.
    Missing,
    /// A `status:` line appears before the final block, or twice within it.
    Duplicate,
    /// `status` is not one of working, complete, blocked.
    UnknownStatus,
    /// A required field is absent, or empty where a value is required.
    MissingField(&'static str),
    /// A field other than `status` appears twice in the block.
    DuplicateField(&'static str),
    /// A field's value exceeds [`BLOCK_FIELD_BYTES_MAX`].
    FieldTooLong(&'static str),
    /// The text exceeds [`BLOCK_INPUT_BYTES_MAX`].
    InputTooLong,
    /// A continuation line, stray text, a control character or an unbalanced fence.
    Malformed,
}

impl BlockError {
    /// Stable machine-readable code for events and logs.
    pub fn code(&self) -> &'static str {
        match self {
            BlockError::Missing => "BLOCK_MISSING",
            BlockError::Duplicate => "BLOCK_DUPLICATE",
            BlockError::UnknownStatus => "BLOCK_UNKNOWN_STATUS",
            BlockError::MissingField(_) => "BLOCK_MISSING_FIELD",
            BlockError::DuplicateField(_) => "BLOCK_DUPLICATE_FIELD",
            BlockError::FieldTooLong(_) => "BLOCK_FIELD_TOO_LONG",
            BlockError::InputTooLong => "BLOCK_INPUT_TOO_LONG",
            BlockError::Malformed => "BLOCK_MALFORMED",
        }
    }

    /// The field the error is about, if any.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            BlockError::MissingField(field) | BlockError::DuplicateField(field) | BlockError::FieldTooLong(field) => {
                Some(field)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for BlockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field() {
            Some(field) => write!(f, "{} ({field})", self.code()),
            None => f.write_str(self.code()),
        }
    }
}

impl std::error::Error for BlockError {}

/// The last at most [`BLOCK_INPUT_BYTES_MAX`] bytes of a response, cut on a char boundary.
pub fn response_tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(BLOCK_INPUT_BYTES_MAX);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text.get(start..).unwrap_or_default()
}

/// Parses the continuation-state block that ends `text`.
pub fn parse(text: &str) -> Result<ContinuationBlock, BlockError> {
    if text.len() > BLOCK_INPUT_BYTES_MAX {
        return Err(BlockError::InputTooLong);
    }
    let lines: Vec<&str> = text.split('\n').map(strip_cr).collect();
    let region = block_region(&lines)?;
    let (before, block) = split_final_block(&lines[..region])?;
    let fields = collect_fields(block)?;
    if fields.status.is_some() && before.iter().any(|line| is_status_line(line)) {
        return Err(BlockError::Duplicate);
    }
    fields.validate()
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// End (exclusive) of the lines that may hold the block: a closing fence and the trailing blank
/// lines are cut off; with a fence, the block's lines must follow the matching opening fence.
fn block_region(lines: &[&str]) -> Result<usize, BlockError> {
    let end = lines.iter().rposition(|line| !is_blank(line)).ok_or(BlockError::Missing)?;
    let last = lines[end].trim();
    if !last.starts_with(FENCE) {
        return Ok(end + 1);
    }
    if last != FENCE {
        return Err(BlockError::Missing);
    }
    let open = lines[..end].iter().rposition(|line| line.trim().starts_with(FENCE)).ok_or(BlockError::Malformed)?;
    let inner_end = lines[..end].iter().rposition(|line| !is_blank(line)).unwrap_or(open);
    if inner_end <= open {
        return Err(BlockError::Missing);
    }
    Ok(inner_end + 1)
}

/// Splits `lines` (ending on a non-blank line) into everything before the block and the block.
fn split_final_block<'l, 't>(lines: &'l [&'t str]) -> Result<(&'l [&'t str], &'l [&'t str]), BlockError> {
    let paragraph_start =
        lines.iter().rposition(|line| is_blank(line) || line.trim().starts_with(FENCE)).map_or(0, |i| i + 1);
    let paragraph = &lines[paragraph_start..];
    let first_key = paragraph.iter().position(|line| split_key(line).is_some()).ok_or(BlockError::Missing)?;
    Ok(lines.split_at(paragraph_start + first_key))
}

fn is_status_line(line: &str) -> bool {
    matches!(split_key(line), Some((KEY_STATUS, _)))
}

/// `(canonical key, raw value)` when the line is `[- ]key: value` for one of the four keys.
fn split_key(line: &str) -> Option<(&'static str, &str)> {
    let body = strip_bullet(line.trim());
    let colon = body.find(':')?;
    let (name, rest) = body.split_at(colon);
    let key = KEYS.into_iter().find(|key| key.eq_ignore_ascii_case(name))?;
    Some((key, rest.get(1..).unwrap_or_default()))
}

fn strip_bullet(line: &str) -> &str {
    BULLETS.into_iter().find_map(|bullet| line.strip_prefix(bullet)).map_or(line, str::trim_start)
}

fn has_control_chars(line: &str) -> bool {
    line.chars().any(|c| c.is_control() && c != '\t')
}

/// The four raw values of one block, each seen at most once.
#[derive(Default)]
struct Fields<'t> {
    status: Option<&'t str>,
    summary: Option<&'t str>,
    current: Option<&'t str>,
    next: Option<&'t str>,
}

fn collect_fields<'t>(block: &[&'t str]) -> Result<Fields<'t>, BlockError> {
    let mut fields = Fields::default();
    for line in block {
        if has_control_chars(line) {
            return Err(BlockError::Malformed);
        }
        let (key, value) = split_key(line).ok_or(BlockError::Malformed)?;
        fields.set(key, value.trim())?;
    }
    Ok(fields)
}

impl<'t> Fields<'t> {
    fn slot(&mut self, key: &'static str) -> &mut Option<&'t str> {
        match key {
            KEY_STATUS => &mut self.status,
            KEY_SUMMARY => &mut self.summary,
            KEY_CURRENT => &mut self.current,
            _ => &mut self.next,
        }
    }

    fn set(&mut self, key: &'static str, value: &'t str) -> Result<(), BlockError> {
        if value.len() > BLOCK_FIELD_BYTES_MAX {
            return Err(BlockError::FieldTooLong(key));
        }
        let slot = self.slot(key);
        match (slot.is_some(), key) {
            (true, KEY_STATUS) => Err(BlockError::Duplicate),
            (true, _) => Err(BlockError::DuplicateField(key)),
            (false, _) => {
                *slot = Some(value);
                Ok(())
            }
        }
    }

    fn validate(self) -> Result<ContinuationBlock, BlockError> {
        let status = self.status.ok_or(BlockError::MissingField(KEY_STATUS))?;
        let status = BlockStatus::from_value(status).ok_or(BlockError::UnknownStatus)?;
        let summary = required(self.summary, KEY_SUMMARY, false)?;
        let current = required(self.current, KEY_CURRENT, false)?;
        let next = required(self.next, KEY_NEXT, status == BlockStatus::Complete)?;
        Ok(ContinuationBlock {
            status,
            summary: summary.to_string(),
            current: current.to_string(),
            next: next.to_string(),
        })
    }
}

fn required<'t>(value: Option<&'t str>, key: &'static str, empty_ok: bool) -> Result<&'t str, BlockError> {
    match value {
        Some(value) if empty_ok || !value.is_empty() => Ok(value),
        _ => Err(BlockError::MissingField(key)),
    }
}

#[cfg(test)]
mod tests;
