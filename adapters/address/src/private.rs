//! The data directory is private: it holds the tokens and the run's text (objectives,
//! summaries, answers, worker messages), so it is `0700` and every file in it `0600`
//! (a file's own execute bit is kept: only group and others lose their access). The daemon
//! makes it so at start ([`secure`], saying what it changed) and creates what comes later
//! with a private umask ([`private_umask`]); `orchestrator doctor` checks it ([`exposed`]).
//!
//! The walk does not follow symbolic links (a CLI session's link to the person's login is
//! the person's file) and stops at the CLI sessions' own homes (`cli-executor/sessions/*`):
//! their files are the CLIs' to write, private through their `0700` directories.

use std::path::{Path, PathBuf};

/// Most entries looked at in one walk: a data directory holds a few hundred; past this the
/// rest is left for the next start.
pub const WALK_ENTRIES_MAX: usize = 100_000;
/// The permission bits group and others must not have.
pub const NOT_PRIVATE_BITS: u32 = 0o077;
/// Below `DIR/cli-executor/sessions/<worker>/` the walk does not descend.
const CLI_SESSIONS: [&str; 2] = ["cli-executor", "sessions"];

/// An entry that group or others can reach, with its mode before any change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exposed {
    /// The file or directory.
    pub path: PathBuf,
    /// Its permission bits (e.g. `0o644`).
    pub mode: u32,
    /// A directory (wanted `0700`) rather than a file (wanted `0600`).
    pub is_dir: bool,
}

impl Exposed {
    /// The mode it gets: the same without group's and others' bits.
    pub fn private_mode(&self) -> u32 {
        self.mode & !NOT_PRIVATE_BITS
    }
}

/// Every entry of `dir` (itself included) that group or others can reach. A missing
/// directory has none.
pub fn exposed(dir: &Path) -> std::io::Result<Vec<Exposed>> {
    let mut found = Vec::new();
    walk(dir, &mut |entry| found.push(entry))?;
    Ok(found)
}

/// Makes `dir` private: every entry [`exposed`] finds loses group's and others' bits.
/// Returns what was changed, for a warning.
pub fn secure(dir: &Path) -> std::io::Result<Vec<Exposed>> {
    let loose = exposed(dir)?;
    for entry in &loose {
        set_mode(&entry.path, entry.private_mode())?;
    }
    Ok(loose)
}

/// One sentence for a person about what [`secure`] changed: how many entries and the first.
pub fn warning(dir: &Path, changed: &[Exposed]) -> Option<String> {
    let first = changed.first()?;
    Some(format!(
        "the data directory {} was readable by other users: made {} entr{} private ({} was {:o}, now {:o}); it holds \
         the tokens and the runs' text",
        dir.display(),
        changed.len(),
        if changed.len() == 1 { "y" } else { "ies" },
        first.path.display(),
        first.mode,
        first.private_mode()
    ))
}

/// From now on this process creates files `0600` and directories `0700` (the daemon's
/// store files included). Not for a process that starts programs in a person's workspace:
/// they inherit it.
pub fn private_umask() {
    #[cfg(unix)]
    {
        rustix::process::umask(rustix::fs::Mode::from_raw_mode(NOT_PRIVATE_BITS));
    }
}

fn walk(dir: &Path, found: &mut impl FnMut(Exposed)) -> std::io::Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(path) = stack.pop() {
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        seen += 1;
        if seen > WALK_ENTRIES_MAX || meta.file_type().is_symlink() {
            continue;
        }
        if let Some(mode) = mode(&meta).filter(|m| m & NOT_PRIVATE_BITS != 0) {
            found(Exposed { path: path.clone(), mode, is_dir: meta.is_dir() });
        }
        if meta.is_dir() && !in_cli_session(dir, &path) {
            for entry in std::fs::read_dir(&path)? {
                stack.push(entry?.path());
            }
        }
    }
    Ok(())
}

/// Whether `path` is a CLI session's home (`DIR/cli-executor/sessions/<worker>`).
fn in_cli_session(dir: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(dir) else { return false };
    let parts: Vec<_> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    parts.len() >= 3 && parts[0] == CLI_SESSIONS[0] && parts[1] == CLI_SESSIONS[1]
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o777)
}

#[cfg(not(unix))]
fn mode(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    fn mode_of(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn a_loose_directory_and_its_files_are_made_private_and_said() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("data");
        std::fs::create_dir_all(dir.join("store/keyspaces")).expect("dirs");
        std::fs::write(dir.join("store/journal"), "run text").expect("journal");
        std::fs::write(dir.join("mcp-token"), "t").expect("token");
        std::fs::write(dir.join("tool"), "#!").expect("tool");
        chmod(&dir, 0o755);
        chmod(&dir.join("store"), 0o755);
        chmod(&dir.join("store/journal"), 0o644);
        chmod(&dir.join("mcp-token"), 0o600);
        chmod(&dir.join("tool"), 0o755);
        let loose = exposed(&dir).expect("walk");
        assert_eq!(loose.len(), 5, "the directory, store/, keyspaces/, the journal and the tool: {loose:?}");
        let changed = secure(&dir).expect("secure");
        assert!(warning(&dir, &changed).is_some_and(|w| w.contains("made 5 entries private")), "{changed:?}");
        assert_eq!(mode_of(&dir), 0o700);
        assert_eq!(mode_of(&dir.join("store/journal")), 0o600);
        assert_eq!(mode_of(&dir.join("tool")), 0o700, "the owner's execute bit is kept");
        assert_eq!(exposed(&dir).expect("walk"), vec![], "nothing left");
        assert_eq!(warning(&dir, &secure(&dir).expect("again")), None, "a private directory says nothing");
    }

    #[test]
    fn links_and_the_cli_sessions_own_files_are_left_alone() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("data");
        let home = dir.join("cli-executor/sessions/wrk-1/codex-home");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::write(home.join("rollout.jsonl"), "x").expect("rollout");
        chmod(&home.join("rollout.jsonl"), 0o644);
        let login = tmp.path().join("auth.json");
        std::fs::write(&login, "secret").expect("login");
        chmod(&login, 0o640);
        std::os::unix::fs::symlink(&login, dir.join("auth-link")).expect("link");
        for d in [&dir, &dir.join("cli-executor"), &dir.join("cli-executor/sessions")] {
            chmod(d, 0o700);
        }
        chmod(&dir.join("cli-executor/sessions/wrk-1"), 0o755);
        let changed = secure(&dir).expect("secure");
        let paths: Vec<_> = changed.iter().map(|e| e.path.clone()).collect();
        assert_eq!(paths, vec![dir.join("cli-executor/sessions/wrk-1")], "the session's directory only");
        assert_eq!(mode_of(&home.join("rollout.jsonl")), 0o644, "the CLI's own file, private by its directory");
        assert_eq!(mode_of(&login), 0o640, "a link's target is not ours to change");
    }

    #[test]
    fn a_missing_directory_has_nothing_exposed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert_eq!(exposed(&tmp.path().join("nope")).expect("walk"), vec![]);
    }
}
