//! A child's own `TMPDIR`: private to its session, short enough for Claude Code's sandbox
//! sockets, never a prefix of Codex's `CODEX_HOME`; made afresh before each child starts
//! and removed when it stops.
//!
//! Both pinned CLIs constrain where it may be (`docs/cli-agents.md`, "A child's `TMPDIR`"):
//! - Claude Code 2.1.332's sandbox binds unix sockets `$TMPDIR/claude-http-<16 hex>.sock`
//!   and `$TMPDIR/claude-socks-<16 hex>.sock`, which must fit `sun_path`: with a `TMPDIR`
//!   longer than [`TMPDIR_BYTES_MAX`] every sandboxed command fails ("Sandbox is required
//!   but failed to initialize: Failed to create bridge sockets").
//! - Codex 0.169.0 (release builds, codex-rs `arg0`) refuses to install its sandbox helper
//!   when `CODEX_HOME` starts with its temp dir (`std::env::temp_dir()` in the child:
//!   `$TMPDIR`, else `/tmp`), and then every shell command fails (`bwrap: execvp
//!   codex-linux-sandbox`). A `TMPDIR` of the child's own that is not a prefix of
//!   `CODEX_HOME` avoids it wherever the data directory lives, `/tmp` included.
//!
//! [`choose`]: `<session>/tmp` when it fits in [`TMPDIR_BYTES_MAX`], otherwise
//! `<SHORT_TMP_ROOT>/orc-<uid>/<16 hex of the session's directory>` (at most 41 bytes):
//! the same name for every child of a session, so what a killed child left is cleared by
//! the next one. [`prepare`] makes it: the private root `orc-<uid>` is created 0700, and
//! one that is a symbolic link, not a directory, someone else's or open to others is
//! refused ([`Error::TmpUnavailable`]); the session's directory is removed if it exists
//! and created 0700. A child's stop removes it, as does the reaper for a session whose
//! lease it reaps (`crate::base::lease`). [`check`], at executor start, makes and removes one under the state
//! directory's worst case, so a place where no child could get a `TMPDIR` fails the start
//! with the fix, not every command of every worker.

use crate::Error;
use crate::base::limits::TMPDIR_BYTES_MAX;
use std::fs::DirBuilder;
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where short directories go when the session's own would be too long: `/tmp`, which
/// every Linux system has (world-writable, sticky: no one else can remove or rename our
/// directory in it).
pub const SHORT_TMP_ROOT: &str = "/tmp";

/// The directory name of a session's own `TMPDIR` in its session directory.
pub const SESSION_TMP_NAME: &str = "tmp";

/// The longest worker session name (`wrk-` and a `u64`): [`check`] tries its place.
pub const WORKER_SESSION_LONGEST: &str = "wrk-18446744073709551615";

/// A child's `TMPDIR`, as [`choose`] placed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmpDir {
    /// The directory itself, absolute.
    pub path: PathBuf,
    /// The private root it lives in (`<SHORT_TMP_ROOT>/orc-<uid>`), when it is a short one;
    /// `None`: it is `<session>/tmp`.
    pub root: Option<PathBuf>,
}

/// Where the `TMPDIR` of the session whose directory is `session_dir` goes:
/// `<session_dir>/tmp` when that is at most [`TMPDIR_BYTES_MAX`] bytes, otherwise
/// `<short_root>/orc-<uid>/<16 hex>` named by a hash of `session_dir` (made absolute
/// against the current directory, as the child would resolve it).
pub fn choose(session_dir: &Path, short_root: &Path, uid: u32) -> TmpDir {
    let session_dir = std::path::absolute(session_dir).unwrap_or_else(|_| session_dir.to_path_buf());
    let own = session_dir.join(SESSION_TMP_NAME);
    if own.as_os_str().len() <= TMPDIR_BYTES_MAX {
        return TmpDir { path: own, root: None };
    }
    let root = short_root.join(format!("orc-{uid}"));
    let name = format!("{:016x}", fnv1a(session_dir.as_os_str().as_encoded_bytes()));
    TmpDir { path: root.join(name), root: Some(root) }
}

/// Makes `tmp` for a child whose config home is `home`: its private root checked (or
/// created 0700), whatever an earlier child left removed, the directory created 0700.
/// Refused when `tmp` would not fit [`TMPDIR_BYTES_MAX`] or is a prefix of `home`.
pub fn prepare(tmp: &TmpDir, home: &Path) -> Result<(), Error> {
    let unavailable = |detail: String| unavailable(&tmp.path, detail);
    if tmp.path.as_os_str().len() > TMPDIR_BYTES_MAX {
        return Err(unavailable(format!("longer than {TMPDIR_BYTES_MAX} bytes")));
    }
    if home.starts_with(&tmp.path) {
        return Err(unavailable(format!("it holds the config home {} (Codex refuses that)", home.display())));
    }
    if let Some(root) = &tmp.root {
        private_root(root)?;
    }
    remove(&tmp.path)?;
    let mut builder = DirBuilder::new();
    builder.mode(0o700).recursive(tmp.root.is_none());
    builder.create(&tmp.path).map_err(|e| unavailable(e.to_string()))
}

/// Removes `tmp` and everything in it (a symbolic link there is removed, never followed);
/// a missing one is fine.
pub fn remove(tmp: &Path) -> Result<(), Error> {
    match std::fs::remove_dir_all(tmp) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(unavailable(tmp, format!("cannot remove what an earlier child left: {e}"))),
    }
}

/// The start-up check for the state directory `state_dir`: a `TMPDIR` is made and removed
/// where the longest worker session would get one, so a place where none can be made
/// fails the start ([`Error::TmpUnavailable`], with the fix) rather than every command of
/// every worker.
pub fn check(state_dir: &Path) -> Result<(), Error> {
    let uid = rustix::process::geteuid().as_raw();
    let session_dir = state_dir.join("sessions").join(WORKER_SESSION_LONGEST);
    let mut tmp = choose(&session_dir, Path::new(SHORT_TMP_ROOT), uid);
    if tmp.root.is_none() {
        // The session's own place fits: nothing outside the state directory is needed.
        return Ok(());
    }
    tmp.path.set_file_name(format!("check-{}", std::process::id()));
    prepare(&tmp, &session_dir)?;
    remove(&tmp.path)
}

/// The longest state directory whose every worker session's own `tmp` fits
/// [`TMPDIR_BYTES_MAX`], in bytes (the fix an [`Error::TmpUnavailable`] names).
pub fn state_dir_bytes_max() -> usize {
    let tail = "/sessions/".len() + WORKER_SESSION_LONGEST.len() + 1 + SESSION_TMP_NAME.len();
    TMPDIR_BYTES_MAX.saturating_sub(tail)
}

/// The private root: created 0700, or, when it exists, a real directory (not a symbolic
/// link) of this user's that no one else may enter.
fn private_root(root: &Path) -> Result<(), Error> {
    match DirBuilder::new().mode(0o700).create(root) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(unavailable(root, e.to_string())),
    }
    let meta = std::fs::symlink_metadata(root).map_err(|e| unavailable(root, e.to_string()))?;
    let euid = rustix::process::geteuid().as_raw();
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(unavailable(root, "not a directory (a symbolic link or a file is never followed)".to_string()));
    }
    if meta.uid() != euid {
        return Err(unavailable(root, format!("owned by uid {}, not this user ({euid})", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(unavailable(
            root,
            format!("mode {:o}: others may enter it (it must be 0700)", meta.mode() & 0o777),
        ));
    }
    Ok(())
}

/// [`Error::TmpUnavailable`] for `path`.
fn unavailable(path: &Path, detail: String) -> Error {
    Error::TmpUnavailable { path: path.display().to_string(), detail, state_dir_bytes_max: state_dir_bytes_max() }
}

/// FNV-1a, 64 bits: a stable name for a session's short directory (not a secret: the
/// directory's privacy comes from its 0700 root).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A path of exactly `bytes` bytes under `/d`.
    fn dir_of(bytes: usize) -> PathBuf {
        PathBuf::from(format!("/d{}", "x".repeat(bytes - 2)))
    }

    #[test]
    fn the_sessions_own_tmp_when_it_fits_a_short_private_one_otherwise() {
        // `<session>/tmp` of exactly the limit: kept in the session.
        let session = dir_of(TMPDIR_BYTES_MAX - 4);
        let tmp = choose(&session, Path::new("/tmp"), 1000);
        assert_eq!(tmp, TmpDir { path: session.join("tmp"), root: None });
        assert_eq!(tmp.path.as_os_str().len(), TMPDIR_BYTES_MAX);

        // One byte more: a short one, under the user's private root.
        let session = dir_of(TMPDIR_BYTES_MAX - 3);
        let tmp = choose(&session, Path::new("/tmp"), 1000);
        assert_eq!(tmp.root.as_deref(), Some(Path::new("/tmp/orc-1000")));
        assert!(tmp.path.starts_with("/tmp/orc-1000"), "{tmp:?}");
        assert_eq!(tmp.path.file_name().expect("a name").len(), 16);
        assert!(tmp.path.as_os_str().len() <= TMPDIR_BYTES_MAX);

        // The longest uid, any session length: still short.
        let session = dir_of(4_000);
        let tmp = choose(&session, Path::new(SHORT_TMP_ROOT), u32::MAX);
        assert_eq!(tmp.path.as_os_str().len(), "/tmp/orc-4294967295/".len() + 16);
        assert!(tmp.path.as_os_str().len() <= 41);
    }

    #[test]
    fn a_short_name_is_stable_per_session_and_differs_between_sessions() {
        let root = Path::new("/tmp");
        let a = dir_of(100).join("sessions/wrk-1");
        let b = dir_of(100).join("sessions/wrk-2");
        assert_eq!(choose(&a, root, 7), choose(&a, root, 7), "every child of a session gets the same one");
        assert_ne!(choose(&a, root, 7).path, choose(&b, root, 7).path);
        assert_ne!(choose(&a, root, 7).path, choose(&a, root, 8).path, "one root per user");
        // A relative state directory is resolved as the child (in another cwd) could not.
        let relative = choose(Path::new("state/sessions/wrk-1"), root, 7);
        assert!(relative.path.is_absolute(), "{relative:?}");
    }

    #[test]
    fn the_codex_home_is_never_under_the_tmpdir() {
        for len in [20, 60, 100, 300] {
            let session = dir_of(len).join("sessions").join("wrk-3");
            let tmp = choose(&session, Path::new("/tmp"), 0);
            let home = session.join("codex-home");
            assert!(!home.starts_with(&tmp.path), "{len}: {tmp:?}");
        }
        // And a data directory under the system temp dir, too.
        let session = Path::new("/tmp/x/state/sessions/wrk-1");
        let tmp = choose(session, Path::new("/tmp"), 0);
        assert_eq!(tmp.path, session.join("tmp"));
        assert!(!session.join("codex-home").starts_with(&tmp.path));
    }

    #[test]
    fn prepare_refuses_a_foreign_or_open_root_and_clears_what_was_left() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("orc-test");
        let tmp = TmpDir { path: root.join("0123456789abcdef"), root: Some(root.clone()) };
        let home = dir.path().join("home");
        prepare(&tmp, &home).expect("made");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!((mode(&root), mode(&tmp.path)), (0o700, 0o700));
        std::fs::write(tmp.path.join("left.sock"), "").expect("a leftover");
        prepare(&tmp, &home).expect("made again");
        assert!(!tmp.path.join("left.sock").exists(), "an earlier child's files are cleared");
        remove(&tmp.path).expect("removed");
        assert!(!tmp.path.exists());
        remove(&tmp.path).expect("removing a missing one is fine");

        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let err = prepare(&tmp, &home).expect_err("open to others");
        assert_eq!(err.code(), "TMP_UNAVAILABLE");
        assert!(err.to_string().contains("0700"), "{err}");
        std::fs::remove_dir(&root).expect("rmdir");

        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("mkdir");
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        std::os::unix::fs::symlink(&elsewhere, &root).expect("a planted link");
        let err = prepare(&tmp, &home).expect_err("a symbolic link");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!elsewhere.join("0123456789abcdef").exists(), "nothing made through the link");
        std::fs::remove_file(&root).expect("unlink");

        std::fs::write(&root, "").expect("a file");
        assert_eq!(prepare(&tmp, &home).map_err(|e| e.code()), Err("TMP_UNAVAILABLE"));
    }

    #[test]
    fn prepare_refuses_a_root_owned_by_someone_else() {
        if rustix::process::geteuid().is_root() {
            // As root: a directory given to `nobody`.
            let dir = tempfile::tempdir().expect("tempdir");
            let root = dir.path().join("orc-other");
            std::fs::create_dir(&root).expect("mkdir");
            std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).expect("chmod");
            std::os::unix::fs::chown(&root, Some(65_534), None).expect("chown");
            let tmp = TmpDir { path: root.join("x"), root: Some(root.clone()) };
            let err = prepare(&tmp, dir.path()).expect_err("someone else's");
            assert!(err.to_string().contains("owned by uid 65534"), "{err}");
        } else {
            // As anyone else: `/` is root's.
            let tmp = TmpDir { path: PathBuf::from("/x"), root: Some(PathBuf::from("/")) };
            let err = prepare(&tmp, Path::new("/home")).expect_err("root's");
            assert!(err.to_string().contains("owned by uid 0"), "{err}");
        }
    }

    #[test]
    fn prepare_refuses_a_long_tmpdir_and_one_holding_the_home() {
        let long = TmpDir { path: dir_of(TMPDIR_BYTES_MAX + 1), root: None };
        assert_eq!(prepare(&long, Path::new("/h")).map_err(|e| e.code()), Err("TMP_UNAVAILABLE"));
        let dir = tempfile::tempdir().expect("tempdir");
        let tmp = TmpDir { path: dir.path().join("t"), root: None };
        let err = prepare(&tmp, &dir.path().join("t/codex-home")).expect_err("holds the home");
        assert!(err.to_string().contains("Codex refuses"), "{err}");
    }

    #[test]
    fn the_start_check_passes_for_short_and_long_state_dirs_and_names_the_fix() {
        let dir = tempfile::tempdir().expect("tempdir");
        check(dir.path()).expect("a short state dir");
        let long = dir.path().join("s".repeat(100));
        check(&long).expect("a long one gets a short TMPDIR under /tmp");
        let root = Path::new(SHORT_TMP_ROOT).join(format!("orc-{}", rustix::process::geteuid().as_raw()));
        let left: Vec<_> = std::fs::read_dir(&root)
            .expect("the root")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy() == format!("check-{}", std::process::id()))
            .collect();
        assert!(left.is_empty(), "the check removes its own directory");
        let err = unavailable(Path::new("/tmp/orc-1"), "mode 755".to_string());
        let text = err.to_string();
        assert!(text.contains(&format!("at most {} bytes", state_dir_bytes_max())), "{text}");
        assert_eq!(state_dir_bytes_max(), TMPDIR_BYTES_MAX - 38);
    }
}
