//! The acknowledged high-water mark: `DIR/commits.mark`, kept outside fjall's journal.
//!
//! After every durable group commit the store writes the commit counter it just made
//! durable into this file. On open, a recovered state that is older than the mark is
//! refused: fjall cut acknowledged commits, and the store says so instead of serving less.
//!
//! The file holds two 32-byte slots; commit `n` goes to slot `n % 2`, so a write torn by
//! a power loss damages at most one slot and the other still holds `n - 1`. A slot is
//! magic `OCMK`, format version (u16 LE), two zero bytes, the count (u64 LE) and the
//! CRC32 of those 16 bytes (LE), then zeros.
//!
//! Why the mark is safe after a power loss: it is written only after fjall's fsync of the
//! commit it names returned, so it is never ahead of what is durable. It is not fsynced
//! per commit (that would double the commit path's fsyncs): after a power loss it may be
//! behind what was acknowledged (down to the last value the OS wrote back), and a mark
//! that is behind only weakens the check, it never refuses an intact store. It is synced
//! when it is created and when the store closes.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The mark's file name inside the data directory.
pub const MARK_FILE_NAME: &str = "commits.mark";
/// Bytes of one slot.
const SLOT_BYTES: usize = 32;
/// Slots in the file.
const SLOT_COUNT: usize = 2;
/// The file's length.
pub const MARK_FILE_BYTES: usize = SLOT_BYTES * SLOT_COUNT;
/// Magic at the start of every slot.
const SLOT_MAGIC: [u8; 4] = *b"OCMK";
/// Format version of a slot.
const SLOT_VERSION: u16 = 1;

/// The mark as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// The highest acknowledged commit a valid slot holds.
    pub commits: u64,
    /// Slots that failed their checks (a torn write or damage), by index.
    pub bad_slots: Vec<usize>,
}

/// Why the mark cannot be read.
#[derive(Debug)]
pub enum MarkProblem {
    /// There is no mark file.
    Missing,
    /// The file exists but no slot is valid.
    Unreadable(String),
    /// The file could not be read.
    Io(io::Error),
}

fn encode_slot(commits: u64) -> [u8; SLOT_BYTES] {
    let mut slot = [0; SLOT_BYTES];
    slot[0..4].copy_from_slice(&SLOT_MAGIC);
    slot[4..6].copy_from_slice(&SLOT_VERSION.to_le_bytes());
    slot[8..16].copy_from_slice(&commits.to_le_bytes());
    let crc = crc32fast::hash(&slot[0..16]);
    slot[16..20].copy_from_slice(&crc.to_le_bytes());
    slot
}

fn decode_slot(slot: &[u8]) -> Result<u64, String> {
    if slot[0..4] != SLOT_MAGIC {
        return Err("bad magic".into());
    }
    let crc = u32::from_le_bytes(slot[16..20].try_into().expect("four bytes"));
    let computed = crc32fast::hash(&slot[0..16]);
    if crc != computed {
        return Err(format!("checksum mismatch (stored {crc:#010x}, computed {computed:#010x})"));
    }
    let version = u16::from_le_bytes([slot[4], slot[5]]);
    if version != SLOT_VERSION {
        return Err(format!("unknown version {version}"));
    }
    if slot[6..8] != [0, 0] || slot[20..].iter().any(|&b| b != 0) {
        return Err("non-zero padding".into());
    }
    Ok(u64::from_le_bytes(slot[8..16].try_into().expect("eight bytes")))
}

/// Reads the mark in `dir`.
pub fn read(dir: &Path) -> Result<Mark, MarkProblem> {
    let path = dir.join(MARK_FILE_NAME);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(MarkProblem::Missing),
        Err(e) => return Err(MarkProblem::Io(e)),
    };
    if bytes.len() != MARK_FILE_BYTES {
        return Err(MarkProblem::Unreadable(format!("{} bytes instead of {MARK_FILE_BYTES}", bytes.len())));
    }
    let mut best: Option<u64> = None;
    let mut bad_slots = Vec::new();
    let mut problems = Vec::new();
    for (i, slot) in bytes.chunks_exact(SLOT_BYTES).enumerate() {
        match decode_slot(slot) {
            Ok(commits) => best = Some(best.map_or(commits, |b| b.max(commits))),
            Err(problem) => {
                bad_slots.push(i);
                problems.push(format!("slot {i}: {problem}"));
            }
        }
    }
    match best {
        Some(commits) => Ok(Mark { commits, bad_slots }),
        None => Err(MarkProblem::Unreadable(problems.join("; "))),
    }
}

/// Creates the mark file holding `commits` in both slots and syncs it and its directory.
pub fn create(dir: &Path, commits: u64) -> io::Result<()> {
    let path = dir.join(MARK_FILE_NAME);
    let staging = dir.join(format!("{MARK_FILE_NAME}.creating"));
    let mut bytes = [0; MARK_FILE_BYTES];
    bytes[..SLOT_BYTES].copy_from_slice(&encode_slot(commits));
    bytes[SLOT_BYTES..].copy_from_slice(&encode_slot(commits));
    {
        let file = File::create(&staging)?;
        file.write_all_at(&bytes, 0)?;
        file.sync_all()?;
    }
    std::fs::rename(&staging, &path)?;
    File::open(dir)?.sync_all()
}

/// The open mark file, written after every durable commit.
#[derive(Debug)]
pub struct MarkWriter {
    /// The file's path, for errors.
    path: PathBuf,
    /// The open file.
    file: File,
}

impl MarkWriter {
    /// Opens the existing mark file in `dir` for writing.
    pub fn open(dir: &Path) -> io::Result<MarkWriter> {
        let path = dir.join(MARK_FILE_NAME);
        let file = OpenOptions::new().write(true).open(&path)?;
        Ok(MarkWriter { path, file })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records that commit `commits` is durable (one `pwrite` of one slot, no fsync).
    pub fn record(&self, commits: u64) -> io::Result<()> {
        let offset = (commits % SLOT_COUNT as u64) * SLOT_BYTES as u64;
        self.file.write_all_at(&encode_slot(commits), offset)
    }

    /// Makes what was recorded durable.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_valid_slot_wins_and_a_torn_slot_falls_back_to_the_other() {
        let dir = tempfile::tempdir().expect("tempdir");
        create(dir.path(), 0).expect("create");
        assert_eq!(read(dir.path()).expect("read").commits, 0);
        let writer = MarkWriter::open(dir.path()).expect("open");
        for n in 1..=5 {
            writer.record(n).expect("record");
        }
        assert_eq!(read(dir.path()).expect("read"), Mark { commits: 5, bad_slots: vec![] });
        // Tear slot 1 (commit 5): the mark falls back to commit 4, behind, never ahead.
        let path = dir.path().join(MARK_FILE_NAME);
        let mut bytes = std::fs::read(&path).expect("read file");
        bytes[SLOT_BYTES + 9] ^= 0x40;
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(read(dir.path()).expect("read"), Mark { commits: 4, bad_slots: vec![1] });
        bytes[3] ^= 0x01;
        std::fs::write(&path, &bytes).expect("write");
        assert!(matches!(read(dir.path()), Err(MarkProblem::Unreadable(_))));
        std::fs::write(&path, &bytes[..10]).expect("write");
        assert!(matches!(read(dir.path()), Err(MarkProblem::Unreadable(_))));
        std::fs::remove_file(&path).expect("remove");
        assert!(matches!(read(dir.path()), Err(MarkProblem::Missing)));
    }
}
