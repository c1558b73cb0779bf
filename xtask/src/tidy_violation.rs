//! What every house rule shares: the file it reads ([`SourceFile`]), the family it
//! belongs to ([`Rule`]) and what it reports ([`Violation`]). The rule modules (`tidy_*.rs`)
//! build on this file only, and `tidy.rs` runs them all.

use std::fmt;

/// A line containing this marker starts the test code of a file: everything after it is
/// exempt from the rules about production code. Test modules sit at the end of a file.
/// Built with `concat!` so that the rest of this file is not taken for test code.
pub const TEST_CODE_MARKER: &str = concat!("#[cfg", "(test)]");

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
    /// Rule 7: `ARCHITECTURE.md` exists, names every member, states an invariant, has a
    /// codemap naming every crate and top-level module, and API boundaries the manifests keep.
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
    /// Rule 15: only the files that own it signal a process.
    SignalSites,
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
            Rule::SignalSites => "signal-sites",
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

/// Production lines of a file, 1-based: none for files under a `tests` directory, and
/// only those before the first [`TEST_CODE_MARKER`] otherwise.
pub(crate) fn production_lines(file: &SourceFile) -> impl Iterator<Item = (usize, &str)> {
    let in_tests_dir = file.path.split('/').any(|part| part == "tests");
    file.text
        .lines()
        .enumerate()
        .take_while(move |(_, line)| !in_tests_dir && !line.contains(TEST_CODE_MARKER))
        .map(|(index, line)| (index + 1, line))
}
