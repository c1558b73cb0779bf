//! Workspace automation in Rust rather than shell scripts (matklad's `xtask` pattern).
//!
//! # Layout
//! - [`tidy`]: house rules checked over the source tree as pure functions of file
//!   contents, plus one loader that reads the tree from disk and runs them all. Every rule
//!   reports through [`tidy_violation`]; [`tidy_manifest`] holds the manifest rules and the
//!   TOML reading they share, [`tidy_architecture`] the checks of `ARCHITECTURE.md` (its
//!   codemap, invariants and API boundaries), [`tidy_markdown`] the markdown they read,
//!   [`tidy_extension`] the rules for the browser extension's scripts, [`tidy_imports`] the
//!   rule against import circles between a crate's modules, [`tidy_layers`] the CLI
//!   executor's import layers, [`tidy_protocol`] the protocol crates' dependency fence,
//!   [`tidy_rules`] the rule table of `ARCHITECTURE.md`, [`tidy_signals`] the files that
//!   may signal a process, [`tidy_length`] the longest a file may be without a reason.
//! - [`skill`]: the agent skill under `skills/`: frontmatter and content checks, and the
//!   reproducible, uploadable archive.
//! - [`archive`]: a deterministic ZIP writer and strict reader for stored entries.
//! - [`dist`]: a release archive of an already built binary in cargo-dist's layout, with
//!   its checksum file (for the install test; releases are built by cargo-dist in CI).
//! - `main.rs`: the thin command line, `cargo run -p xtask -- tidy | skill-pack [--out DIR] | dist`.
//!
//! The crate depends on std and `crc32fast` only, so the checks build in seconds on a clean
//! clone.

pub mod archive;
pub mod dist;
pub mod skill;
pub mod tidy;
pub mod tidy_architecture;
pub mod tidy_extension;
pub mod tidy_imports;
pub mod tidy_layers;
pub mod tidy_length;
pub mod tidy_manifest;
pub mod tidy_markdown;
pub mod tidy_protocol;
pub mod tidy_rules;
pub mod tidy_signals;
pub mod tidy_violation;
