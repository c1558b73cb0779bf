//! Workspace automation in Rust rather than shell scripts (matklad's `xtask` pattern).
//!
//! # Layout
//! - [`tidy`]: house rules checked over the source tree as pure functions of file
//!   contents, plus one loader that reads the tree from disk.
//! - `main.rs`: the thin command line, `cargo run -p xtask -- tidy`.
//!
//! The crate depends on std only, so the checks build in seconds on a clean clone.

pub mod tidy;
