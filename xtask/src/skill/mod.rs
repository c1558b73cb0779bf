//! The agent skill `durable-continuation-output`: validation and reproducible packaging
//! (spec 000 §27.5, spec 001 C18.6).
//!
//! A skill is a folder whose `SKILL.md` opens with YAML frontmatter. [`package`] turns the
//! folder into an uploadable archive `<name>.zip` holding `<name>/SKILL.md` and the folder's
//! other files, and refuses anything it should not ship:
//! - frontmatter that an uploader would reject or read differently ([`validate_frontmatter`]);
//! - a `SKILL.md` that mentions the mechanics the skill deliberately leaves to the
//!   orchestrator ([`boundary_violations`]);
//! - files that look like secrets, local state or transcripts, by name ([`screen_name`]) or
//!   by content ([`screen_content`]), symlinks and special files.
//!
//! Every check is a pure function of names and contents, so each can be tested on a tiny
//! sample; only [`load`] and [`pack`] touch the disk. The archive itself comes from
//! [`crate::archive`], which fixes order, timestamps and permissions, so the same folder
//! always gives the same bytes.
//!
//! `frontmatter.rs` parses and checks the frontmatter, `boundary.rs` keeps orchestration
//! mechanics out of `SKILL.md`, `screen.rs` refuses secret-looking files; this file reads
//! the folder and builds, verifies and writes the archive.

mod boundary;
mod frontmatter;
mod screen;

pub use boundary::{SKILL_FORBIDDEN_TERMS, boundary_violations};
pub use frontmatter::{
    DESCRIPTION_CHARS_MAX, FRONTMATTER_KEYS, Frontmatter, FrontmatterError, NAME_CHARS_MAX, is_valid_name,
    parse_frontmatter, validate_frontmatter,
};
pub use screen::{Refusal, screen_content, screen_name};

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::archive::{self, ArchiveError};

/// Where skills live, relative to the workspace root.
pub const SKILLS_DIR: &str = "skills";
/// The one skill this workspace ships.
pub const SKILL_NAME: &str = "durable-continuation-output";
/// The file every skill folder must hold at its top level.
pub const SKILL_FILE: &str = "SKILL.md";
/// Where `skill-pack` writes the archive by default, relative to the workspace root.
pub const OUT_DIR_DEFAULT: &str = "target/skill";

/// Most files one skill folder may hold; a skill is a few documents, not a data set.
pub const SKILL_FILES_COUNT_MAX: usize = 64;
/// Largest single file in a skill folder.
pub const SKILL_FILE_BYTES_MAX: u64 = 1024 * 1024;
/// Deepest folder nesting under the skill folder.
pub const SKILL_DEPTH_MAX: usize = 8;

/// One file of a skill folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillFile {
    /// Path relative to the skill folder, `/`-separated: the archive entry name without the
    /// leading `<skill>/`.
    pub path: String,
    /// The file's bytes, as packaged.
    pub bytes: Vec<u8>,
}

impl SkillFile {
    /// A file from a path and contents; tests build samples with it.
    pub fn new(path: &str, bytes: &[u8]) -> SkillFile {
        SkillFile { path: path.to_string(), bytes: bytes.to_vec() }
    }
}

/// Why packaging failed.
#[derive(Debug)]
pub enum PackError {
    /// Reading the skill or writing the archive failed.
    Io {
        /// The path being read or written.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The skill folder's own name is not valid UTF-8 or missing.
    NotASkillDir(PathBuf),
    /// There is no `SKILL.md` at the top of the folder.
    SkillFileMissing,
    /// `SKILL.md` is not UTF-8.
    SkillFileNotUtf8,
    /// The frontmatter is refused.
    Frontmatter(FrontmatterError),
    /// `SKILL.md` mentions mechanics the skill must leave out; holds the terms found.
    Boundary(Vec<&'static str>),
    /// A file may not be packaged.
    Refused {
        /// The file's path relative to the skill folder.
        path: String,
        /// Why.
        refusal: Refusal,
    },
    /// More than [`SKILL_FILES_COUNT_MAX`] files.
    TooManyFiles,
    /// Folders nest deeper than [`SKILL_DEPTH_MAX`]; holds the path.
    TooDeep(String),
    /// Two files map to the same entry name.
    DuplicatePath(String),
    /// The archive could not be written or read back.
    Archive(ArchiveError),
    /// The archive read back does not list exactly the expected entries with their bytes.
    ArchiveMismatch {
        /// The entries the folder should give, in order.
        expected: Vec<String>,
        /// The entries the archive holds, in order.
        found: Vec<String>,
    },
}

impl PackError {
    /// The refusal, when a file was refused; lets tests match without comparing IO errors.
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            PackError::Refused { refusal, .. } => Some(*refusal),
            _ => None,
        }
    }
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            PackError::NotASkillDir(path) => write!(f, "{} is not a skill folder with a UTF-8 name", path.display()),
            PackError::SkillFileMissing => write!(f, "the skill folder has no top-level {SKILL_FILE}"),
            PackError::SkillFileNotUtf8 => write!(f, "{SKILL_FILE} is not UTF-8"),
            PackError::Frontmatter(e) => write!(f, "{SKILL_FILE} frontmatter: {e}"),
            PackError::Boundary(terms) => write!(
                f,
                "{SKILL_FILE} mentions mechanics that stay outside the skill: {}",
                terms.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ")
            ),
            PackError::Refused { path, refusal } => write!(f, "refused {path}: {}", refusal.reason()),
            PackError::TooManyFiles => write!(f, "the skill folder holds more than {SKILL_FILES_COUNT_MAX} files"),
            PackError::TooDeep(path) => write!(f, "{path} nests deeper than {SKILL_DEPTH_MAX} folders"),
            PackError::DuplicatePath(path) => write!(f, "{path} appears twice"),
            PackError::Archive(e) => write!(f, "archive: {e}"),
            PackError::ArchiveMismatch { expected, found } => {
                write!(f, "the archive holds {found:?} instead of {expected:?}")
            }
        }
    }
}

impl std::error::Error for PackError {}

impl From<FrontmatterError> for PackError {
    fn from(e: FrontmatterError) -> PackError {
        PackError::Frontmatter(e)
    }
}

impl From<ArchiveError> for PackError {
    fn from(e: ArchiveError) -> PackError {
        PackError::Archive(e)
    }
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> PackError + '_ {
    move |source| PackError::Io { path: path.to_path_buf(), source }
}

/// Reads every file of the skill folder at `skill_dir`, sorted by path. Names are screened
/// before a file is read, contents right after; the first refusal stops the walk.
pub fn load(skill_dir: &Path) -> Result<Vec<SkillFile>, PackError> {
    let mut files = Vec::new();
    walk(skill_dir, "", 0, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn walk(dir: &Path, prefix: &str, depth: usize, files: &mut Vec<SkillFile>) -> Result<(), PackError> {
    if depth > SKILL_DEPTH_MAX {
        return Err(PackError::TooDeep(prefix.to_string()));
    }
    let mut children = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error(dir))? {
        children.push(entry.map_err(io_error(dir))?.path());
    }
    // Sorted so that, of several bad files, the same one is always reported.
    children.sort();
    for path in children {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        if let Some(refusal) = screen_name(&relative) {
            return Err(PackError::Refused { path: relative, refusal });
        }
        let meta = fs::symlink_metadata(&path).map_err(io_error(&path))?;
        if meta.is_dir() {
            walk(&path, &relative, depth + 1, files)?;
            continue;
        }
        if !meta.is_file() {
            return Err(PackError::Refused { path: relative, refusal: Refusal::NotRegular });
        }
        if meta.len() > SKILL_FILE_BYTES_MAX {
            return Err(PackError::Refused { path: relative, refusal: Refusal::TooLarge });
        }
        if files.len() >= SKILL_FILES_COUNT_MAX {
            return Err(PackError::TooManyFiles);
        }
        let bytes = fs::read(&path).map_err(io_error(&path))?;
        if let Some(refusal) = screen_content(&bytes) {
            return Err(PackError::Refused { path: relative, refusal });
        }
        files.push(SkillFile { path: relative, bytes });
    }
    Ok(())
}

/// A validated, verified archive of one skill, not yet on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    /// The skill's name, which is also the archive's top folder.
    pub skill_name: String,
    /// The entry names, in archive order.
    pub entries: Vec<String>,
    /// The archive's bytes.
    pub bytes: Vec<u8>,
}

impl Package {
    /// `<skill>.zip`, the archive's file name.
    pub fn file_name(&self) -> String {
        format!("{}.zip", self.skill_name)
    }

    /// CRC-32 of the whole archive, printed so two builds can be compared at a glance.
    pub fn crc32(&self) -> u32 {
        crc32fast::hash(&self.bytes)
    }
}

/// The entry names for `files` of skill `skill_name`: `<skill>/<path>`, sorted.
pub fn expected_entries(skill_name: &str, files: &[SkillFile]) -> Vec<String> {
    let mut entries: Vec<String> = files.iter().map(|file| format!("{skill_name}/{}", file.path)).collect();
    entries.sort();
    entries
}

/// Loads, validates and archives the skill folder at `skill_dir`.
pub fn package(skill_dir: &Path) -> Result<Package, PackError> {
    let skill_name = skill_dir
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| PackError::NotASkillDir(skill_dir.to_path_buf()))?;
    let files = load(skill_dir)?;
    package_files(skill_name, &files)
}

/// Validates the files of skill `skill_name` and archives them: the pure core of [`package`].
pub fn package_files(skill_name: &str, files: &[SkillFile]) -> Result<Package, PackError> {
    if files.len() > SKILL_FILES_COUNT_MAX {
        return Err(PackError::TooManyFiles);
    }
    let mut sorted: Vec<&SkillFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(pair) = sorted.windows(2).find(|pair| pair[0].path == pair[1].path) {
        return Err(PackError::DuplicatePath(pair[0].path.clone()));
    }
    for file in &sorted {
        let refusal = screen_name(&file.path).or_else(|| screen_content(&file.bytes));
        if let Some(refusal) = refusal {
            return Err(PackError::Refused { path: file.path.clone(), refusal });
        }
    }
    let skill_file = sorted.iter().find(|file| file.path == SKILL_FILE).ok_or(PackError::SkillFileMissing)?;
    let text = std::str::from_utf8(&skill_file.bytes).map_err(|_| PackError::SkillFileNotUtf8)?;
    validate_frontmatter(skill_name, text)?;
    let found = boundary_violations(text);
    if !found.is_empty() {
        return Err(PackError::Boundary(found));
    }

    let entries = expected_entries(skill_name, files);
    let contents: Vec<(&str, &[u8])> =
        entries.iter().zip(&sorted).map(|(entry, file)| (entry.as_str(), file.bytes.as_slice())).collect();
    let bytes = archive::write(&contents)?;
    verify_archive(skill_name, files, &bytes)?;
    Ok(Package { skill_name: skill_name.to_string(), entries, bytes })
}

/// Reads `bytes` back and checks that it holds exactly `files` of skill `skill_name`: every
/// entry under `<skill>/`, `<skill>/SKILL.md` among them, sorted, each with its file's bytes.
pub fn verify_archive(skill_name: &str, files: &[SkillFile], bytes: &[u8]) -> Result<(), PackError> {
    let read = archive::read(bytes)?;
    let expected = expected_entries(skill_name, files);
    let found: Vec<String> = read.iter().map(|entry| entry.name.clone()).collect();
    let mismatch = || PackError::ArchiveMismatch { expected: expected.clone(), found: found.clone() };
    if found != expected || !found.contains(&format!("{skill_name}/{SKILL_FILE}")) {
        return Err(mismatch());
    }
    let prefix = format!("{skill_name}/");
    for entry in &read {
        let path = entry.name.strip_prefix(&prefix).ok_or_else(mismatch)?;
        let file = files.iter().find(|file| file.path == path).ok_or_else(mismatch)?;
        if file.bytes != entry.data {
            return Err(mismatch());
        }
    }
    Ok(())
}

/// What [`pack`] wrote.
#[derive(Clone, Debug)]
pub struct Packed {
    /// Where the archive is.
    pub path: PathBuf,
    /// What it holds.
    pub package: Package,
}

/// Packages the skill folder at `skill_dir` into `<out_dir>/<skill>.zip`, creating `out_dir`
/// if needed, and checks that the file on disk holds exactly the packaged bytes.
pub fn pack(skill_dir: &Path, out_dir: &Path) -> Result<Packed, PackError> {
    let package = package(skill_dir)?;
    fs::create_dir_all(out_dir).map_err(io_error(out_dir))?;
    let path = out_dir.join(package.file_name());
    // Written beside the target and renamed, so a crash never leaves a half archive behind.
    let staging = out_dir.join(format!("{}.partial", package.file_name()));
    fs::write(&staging, &package.bytes).map_err(io_error(&staging))?;
    fs::rename(&staging, &path).map_err(io_error(&path))?;
    let written = fs::read(&path).map_err(io_error(&path))?;
    if written != package.bytes {
        return Err(PackError::Io { path, source: io::Error::other("the archive on disk differs from the package") });
    }
    Ok(Packed { path, package })
}

/// The canonical skill folder of the workspace at `root`.
pub fn skill_dir(root: &Path) -> PathBuf {
    root.join(SKILLS_DIR).join(SKILL_NAME)
}
