//! Who this executor is across restarts (docs/scale-out.md "Executors on several hosts"):
//! its host id, made once from the machine's name and kept in the state directory
//! (`executor-id`), so that a restart, or a renamed machine, says `hello` under the same
//! id and the workers pinned to it find it again; and its epoch, the time this process
//! started (ms since the Unix epoch, never below the previous start's, kept in
//! `executor-epoch`), so that the daemon can tell a newer start of the same id from an
//! older process still running (a replaced host, a second copy) and refuse the older one.

use crate::Error;
use std::path::Path;

/// The host id's file in the state directory.
pub const HOST_ID_FILE: &str = "executor-id";
/// The epoch's file in the state directory.
pub const EPOCH_FILE: &str = "executor-epoch";
/// The longest host id, in bytes (the protocol's executor id rule).
pub const HOST_ID_BYTES_MAX: usize = 128;

/// The executor id to say `hello` with: `given` (`--executor-id`), else the one kept in
/// `state_dir`, else the machine's name (as `uname -n`, cut to the id rule), kept there
/// for next time.
pub fn host_id(given: Option<&str>, state_dir: &Path) -> Result<String, Error> {
    if let Some(id) = given {
        return Ok(id.to_string());
    }
    let path = state_dir.join(HOST_ID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) if valid(text.trim()) => return Ok(text.trim().to_string()),
        Ok(_) => {
            return Err(Error::BadOption {
                detail: format!(
                    "{} does not hold a host id (1 to {HOST_ID_BYTES_MAX} printable ASCII characters): fix it, or pass --executor-id",
                    path.display()
                ),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("read host id", &path, e)),
    }
    let id = from_machine_name(&rustix::system::uname().nodename().to_string_lossy());
    write_synced(state_dir, &path, &id)?;
    tracing::debug!(id, path = %path.display(), "this executor's host id, kept for its next starts");
    Ok(id)
}

/// This start's epoch: `now_ms`, or one above the previous start's when the clock is
/// behind it; kept in `state_dir` before the first `hello`.
pub fn next_epoch(state_dir: &Path, now_ms: u64) -> Result<u64, Error> {
    let path = state_dir.join(EPOCH_FILE);
    let previous = match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse::<u64>().unwrap_or(0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => return Err(io("read epoch", &path, e)),
    };
    let epoch = now_ms.max(previous.saturating_add(1));
    write_synced(state_dir, &path, &epoch.to_string())?;
    Ok(epoch)
}

/// The machine's name as an id: printable ASCII kept, anything else `-`, at most
/// [`HOST_ID_BYTES_MAX`] bytes; `executor` when nothing is left.
fn from_machine_name(name: &str) -> String {
    let id: String =
        name.trim().chars().map(|c| if c.is_ascii_graphic() { c } else { '-' }).take(HOST_ID_BYTES_MAX).collect();
    let id = id.trim_matches('-').to_string();
    if id.is_empty() { "executor".to_string() } else { id }
}

fn valid(id: &str) -> bool {
    !id.is_empty() && id.len() <= HOST_ID_BYTES_MAX && id.bytes().all(|b| b.is_ascii_graphic())
}

fn write_synced(dir: &Path, path: &Path, text: &str) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| io("create state directory", dir, e))?;
    let beside = path.with_extension("new");
    std::fs::write(&beside, format!("{text}\n")).map_err(|e| io("write", &beside, e))?;
    std::fs::File::open(&beside).and_then(|f| f.sync_all()).map_err(|e| io("sync", &beside, e))?;
    std::fs::rename(&beside, path).map_err(|e| io("rename", path, e))?;
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io("sync", dir, e))
}

fn io(op: &'static str, path: &Path, e: std::io::Error) -> Error {
    Error::Io { op, path: path.display().to_string(), detail: e.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_id_is_made_once_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = host_id(None, dir.path()).expect("made");
        assert!(valid(&first), "{first}");
        std::fs::write(dir.path().join(HOST_ID_FILE), "build-7\n").expect("renamed by hand");
        assert_eq!(host_id(None, dir.path()).expect("kept"), "build-7", "the kept id wins over the machine's name");
        assert_eq!(host_id(Some("given"), dir.path()).expect("given"), "given");
        std::fs::write(dir.path().join(HOST_ID_FILE), "two words\n").expect("broken");
        let err = host_id(None, dir.path()).expect_err("refused");
        assert!(err.to_string().contains("--executor-id"), "{err}");
    }

    #[test]
    fn machine_names_become_ids() {
        assert_eq!(from_machine_name("build-3.internal\n"), "build-3.internal");
        assert_eq!(from_machine_name("my laptop"), "my-laptop");
        assert_eq!(from_machine_name("  "), "executor");
        assert_eq!(from_machine_name(&"x".repeat(300)).len(), HOST_ID_BYTES_MAX);
    }

    #[test]
    fn every_start_has_a_higher_epoch_even_when_the_clock_went_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(next_epoch(dir.path(), 5_000).expect("first"), 5_000);
        assert_eq!(next_epoch(dir.path(), 4_000).expect("clock back"), 5_001);
        assert_eq!(next_epoch(dir.path(), 9_000).expect("later"), 9_000);
    }
}
