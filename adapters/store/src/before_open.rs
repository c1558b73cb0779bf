//! What a start refused after fjall's open puts back, so that a refused start leaves
//! every file of the data directory as it was.
//!
//! fjall's open changes the database even when the store then refuses to serve it:
//! it cuts a journal's torn tail (`set_len`), lsm-tree deletes every superseded version
//! file `vK` and every table the current version does not list, fjall removes keyspace
//! folders it cannot resolve, and its background workers may flush or compact (new
//! tables, a new version, `current` replaced by a rename, a sealed journal deleted).
//! Before the open, [`BeforeOpen::take`] hard-links every file of the database into
//! [`KEPT_DIR_NAME`] (a link per file, no data copied; a copy only on a file system
//! without hard links) and keeps the journal bytes the
//! scan found after each journal's last whole batch. A refused start, once fjall has
//! shut down, puts back every file that was removed or replaced, removes every file the
//! open made, and writes the journals' tails back. A start that serves discards the
//! links. A crash in between leaves the links behind; the next start removes them
//! (they only ever hold files the database already had).

use crate::journal_scan::{JournalScan, Tail};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where the links are kept, inside the data directory next to the database.
pub(crate) const KEPT_DIR_NAME: &str = "fjall.before-open";

/// The database's files as they were before fjall's open.
#[derive(Debug)]
pub(crate) struct BeforeOpen {
    /// The database directory.
    db_path: PathBuf,
    /// The links, mirroring the database's tree.
    kept: PathBuf,
    /// Every file by path relative to the database, with its inode.
    files: BTreeMap<PathBuf, u64>,
    /// Every directory by relative path.
    dirs: BTreeSet<PathBuf>,
    /// The journals as scanned, with their tails.
    journals: JournalScan,
}

impl BeforeOpen {
    /// Links every file of the database at `db_path` into `dir`/[`KEPT_DIR_NAME`].
    pub(crate) fn take(dir: &Path, db_path: &Path, journals: JournalScan) -> io::Result<BeforeOpen> {
        let kept = dir.join(KEPT_DIR_NAME);
        if kept.try_exists()? {
            std::fs::remove_dir_all(&kept)?;
        }
        let mut before = BeforeOpen {
            db_path: db_path.to_path_buf(),
            kept,
            files: BTreeMap::new(),
            dirs: BTreeSet::new(),
            journals,
        };
        std::fs::create_dir(&before.kept)?;
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            for entry in std::fs::read_dir(db_path.join(&rel))? {
                let entry = entry?;
                let rel = rel.join(entry.file_name());
                let meta = entry.metadata()?;
                if meta.is_dir() {
                    std::fs::create_dir(before.kept.join(&rel))?;
                    before.dirs.insert(rel.clone());
                    stack.push(rel);
                } else {
                    link_or_copy(&entry.path(), &before.kept.join(&rel))?;
                    before.files.insert(rel, meta.ino());
                }
            }
        }
        Ok(before)
    }

    /// The start serves: the links are not needed.
    pub(crate) fn discard(self) {
        let _ = std::fs::remove_dir_all(&self.kept);
    }

    /// The start was refused and fjall has shut down: puts every file back as it was.
    /// Best effort (this runs on a path that already fails); the links are removed only
    /// if everything was put back.
    pub(crate) fn put_back(self) {
        let mut complete = true;
        for rel in &self.dirs {
            let path = self.db_path.join(rel);
            if !path.is_dir() && std::fs::create_dir(&path).is_err() {
                complete = false;
            }
        }
        for (rel, ino) in &self.files {
            let path = self.db_path.join(rel);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.ino() == *ino => continue,
                _ => {}
            }
            // Removed or replaced: link the kept file beside it and rename it over, so
            // the name never points at nothing.
            let staging = path
                .with_file_name(format!("{}.restoring", rel.file_name().and_then(|n| n.to_str()).unwrap_or("file")));
            let _ = std::fs::remove_file(&staging);
            if link_or_copy(&self.kept.join(rel), &staging).and_then(|()| std::fs::rename(&staging, &path)).is_err() {
                complete = false;
            }
        }
        // Remove what the open made: files and folders that were not there before.
        let mut stack = vec![PathBuf::new()];
        let mut made_dirs = Vec::new();
        while let Some(rel) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(self.db_path.join(&rel)) else { continue };
            for entry in entries.flatten() {
                let rel = rel.join(entry.file_name());
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                if is_dir {
                    if !self.dirs.contains(&rel) {
                        made_dirs.push(rel.clone());
                    }
                    stack.push(rel);
                } else if !self.files.contains_key(&rel) && std::fs::remove_file(entry.path()).is_err() {
                    complete = false;
                }
            }
        }
        for rel in made_dirs.iter().rev() {
            let _ = std::fs::remove_dir(self.db_path.join(rel));
        }
        restore_journals(&self.journals);
        if complete {
            let _ = std::fs::remove_dir_all(&self.kept);
        }
    }
}

/// A hard link of `from` at `to`, or a copy where the file system has no hard links
/// (then a start costs a copy of the database: correct, but slow for a large store).
fn link_or_copy(from: &Path, to: &Path) -> io::Result<()> {
    match std::fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(_) => std::fs::copy(from, to).map(|_| ()),
    }
}

/// Puts back what fjall's open cut from the journals (it only ever shortens them), from
/// the bytes the scan kept.
fn restore_journals(scan: &JournalScan) {
    for file in &scan.files {
        let Ok(handle) = OpenOptions::new().write(true).open(&file.path) else { continue };
        let Ok(len) = handle.metadata().map(|m| m.len()) else { continue };
        if len == file.len {
            continue;
        }
        if let Tail::Data { kept: Some(bytes), .. } = &file.tail {
            let _ = handle.write_all_at(bytes, file.valid_end);
        }
        let _ = handle.set_len(file.len);
        let _ = handle.sync_all();
    }
}

/// A start in progress: put back on refusal, discarded once the store served.
#[derive(Debug, Default)]
pub(crate) struct StartGuard {
    /// The files as they were, while the start is neither accepted nor refused.
    before: Option<BeforeOpen>,
    /// Whether the start was refused (the files are put back when the guard drops,
    /// which the store arranges to be after fjall shut down).
    refused: bool,
}

impl StartGuard {
    pub(crate) fn new(before: BeforeOpen) -> StartGuard {
        StartGuard { before: Some(before), refused: false }
    }

    /// Whether the start is still undecided.
    pub(crate) fn pending(&self) -> bool {
        self.before.is_some() && !self.refused
    }

    /// The store served (or wrote): the files before the open are not needed any more.
    pub(crate) fn accept(&mut self) {
        if !self.refused
            && let Some(before) = self.before.take()
        {
            before.discard();
        }
    }

    /// The start is refused: the files are put back when the guard drops.
    pub(crate) fn refuse(&mut self) {
        self.refused = true;
    }
}

impl Drop for StartGuard {
    fn drop(&mut self) {
        if let Some(before) = self.before.take() {
            if self.refused { before.put_back() } else { before.discard() }
        }
    }
}
