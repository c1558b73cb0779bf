//! A read-only pre-scan of fjall's journal files, done before fjall may touch them.
//!
//! fjall 3.1 replays its journals on open and, at the first entry it cannot decode
//! (anything but a checksum mismatch), takes the rest of that file for a torn tail and
//! cuts the file there (`set_len`) without an error. A flipped byte in the middle of a
//! journal therefore loses every commit behind it, on disk, silently. This scan walks the
//! same format (fjall 3.1's `journal/entry.rs`: `Start {count, seqno}`, `count` items or
//! clears, `End {xxh3 of the items, trailer magic}`) and reports where each file's last
//! whole batch ends, whether anything but zeros follows it, and the store's commit
//! counter (see [`crate::key::COMMITS_KEY`]) of every whole batch, so the store can
//! refuse to open before fjall cuts acknowledged commits away.
//!
//! The scan is at least as strict as fjall's reader: it stops wherever fjall would stop
//! or fail (and also at a checksum it computes over the bytes as stored, which equals
//! fjall's as long as the same fjall build wrote them). Stopping early only ever makes
//! the store refuse, never accept, a journal.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// fjall's trailer after every batch's checksum (`file::MAGIC_BYTES`).
const TRAILER_MAGIC: [u8; 4] = [b'F', b'J', b'L', 3];
/// fjall's entry tags (`journal::entry::Tag`).
const TAG_START: u8 = 1;
const TAG_ITEM: u8 = 2;
const TAG_END: u8 = 3;
const TAG_CLEAR: u8 = 4;
/// Largest tail (bytes from the last whole batch to the last non-zero byte) the scan
/// keeps in memory so that a refused open can put it back after fjall cut it.
pub const TAIL_KEEP_BYTES_MAX: u64 = 4 * 1024 * 1024;

/// What follows the last whole batch of a journal file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tail {
    /// Nothing, or only zeros (fjall pre-allocates journals with zeros).
    Clean,
    /// Bytes that are not a whole batch: a write torn by a crash, or damage.
    Data {
        /// Offset of the first non-zero byte after the last whole batch.
        first_nonzero: u64,
        /// Offset just past the last non-zero byte.
        last_nonzero_end: u64,
        /// Why the scan stopped at the batch there.
        reason: String,
        /// Whether a write torn by a crash can leave these bytes: they start right at
        /// the last whole batch's end with a batch start, and the batch breaks off where
        /// zeros or the file's end begin (or in its checksum). Anything else (a wrong
        /// tag, inconsistent lengths, stray bytes in the zero padding) is damage.
        torn_like: bool,
        /// The bytes from the last whole batch's end to `last_nonzero_end`, when at most
        /// [`TAIL_KEEP_BYTES_MAX`].
        kept: Option<Vec<u8>>,
    },
}

/// One journal file as scanned.
#[derive(Clone, Debug)]
pub struct JournalFile {
    /// Its path.
    pub path: PathBuf,
    /// fjall's journal id (the file name's number); files are replayed in this order.
    pub id: u64,
    /// Its length before anything opened it.
    pub len: u64,
    /// Offset just past its last whole batch: where fjall cuts it.
    pub valid_end: u64,
    /// Whole batches in it.
    pub batches: u64,
    /// What follows the last whole batch.
    pub tail: Tail,
}

/// Two consecutive whole batches whose commit counters are not consecutive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The file of the second batch.
    pub path: PathBuf,
    /// Offset of the second batch.
    pub offset: u64,
    /// Counter of the first batch.
    pub after: u64,
    /// Counter of the second batch.
    pub next: u64,
}

/// Every journal file of a database, in replay order.
#[derive(Clone, Debug, Default)]
pub struct JournalScan {
    /// The files, by id.
    pub files: Vec<JournalFile>,
    /// Counter of the first whole batch that carries one.
    pub commits_first: Option<u64>,
    /// Counter of the last whole batch that carries one: the newest commit the journals
    /// give back.
    pub commits_last: Option<u64>,
    /// The first break in the counter sequence, if any.
    pub gap: Option<Gap>,
}

impl JournalScan {
    /// The first sealed (not last) file with bytes after its last whole batch: a sealed
    /// journal was complete when fjall rotated away from it, so that is damage.
    pub fn damaged_sealed(&self) -> Option<&JournalFile> {
        let sealed = self.files.len().saturating_sub(1);
        self.files[..sealed].iter().find(|f| matches!(f.tail, Tail::Data { .. }))
    }

    /// The first file with bytes after its last whole batch.
    pub fn first_damaged(&self) -> Option<&JournalFile> {
        self.files.iter().find(|f| matches!(f.tail, Tail::Data { .. }))
    }
}

/// Scans every `*.jnl` file in the database directory `db_path`, read-only.
pub fn scan(db_path: &Path) -> io::Result<JournalScan> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(db_path)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(id) = name.strip_suffix(".jnl").and_then(|b| b.parse::<u64>().ok()) else { continue };
        files.push((id, entry.path()));
    }
    files.sort_by_key(|(id, _)| *id);
    let mut out = JournalScan::default();
    let mut last: Option<u64> = None;
    let mut last_seqno: Option<u64> = None;
    for (id, path) in files {
        let mut counters = Vec::new();
        let file = scan_file(&path, id, &mut counters, &mut last_seqno)?;
        for (offset, commits) in counters {
            if let Some(prev) = last
                && commits != prev + 1
                && out.gap.is_none()
            {
                out.gap = Some(Gap { path: path.clone(), offset, after: prev, next: commits });
            }
            out.commits_first.get_or_insert(commits);
            last = Some(commits);
        }
        out.files.push(file);
    }
    out.commits_last = last;
    Ok(out)
}

/// Bytes the scan reads at a time into a buffer it reuses: a fresh 64 MiB buffer per
/// journal cost more in page faults than the parse (a whole-file read of 64 MB took
/// 32-67 ms against 3-10 ms in 1 MiB chunks on this project's machine).
const READ_CHUNK_BYTES: u64 = 1024 * 1024;

/// A position in one journal file, read through a window that holds at least the batch
/// being read, so that a batch's items can be hashed in one pass.
struct Cursor<'f> {
    file: &'f File,
    /// The file's length: reading stops cleanly there.
    len: u64,
    /// Bytes of the file from `base` on.
    window: Vec<u8>,
    base: u64,
    /// The next byte to read.
    pos: u64,
    /// The start of the batch being read: the window keeps everything from here.
    batch: u64,
}

impl<'f> Cursor<'f> {
    fn new(file: &'f File, len: u64) -> Cursor<'f> {
        Cursor { file, len, window: Vec::new(), base: 0, pos: 0, batch: 0 }
    }

    /// Makes the window hold `[self.batch, end)`; an error if the file ends first.
    fn fill(&mut self, end: u64) -> Result<(), String> {
        if end > self.len {
            return Err(format!("the file ends inside an entry at offset {}", self.pos));
        }
        let have = self.base + self.window.len() as u64;
        if end <= have {
            return Ok(());
        }
        // Drop what precedes the batch, then read at least a chunk more.
        let keep_from = (self.batch - self.base) as usize;
        self.window.drain(..keep_from);
        self.base = self.batch;
        let old = self.window.len();
        let target = end.max(have + READ_CHUNK_BYTES).min(self.len);
        self.window.resize((target - self.base) as usize, 0);
        let at = self.base + old as u64;
        self.file.read_exact_at(&mut self.window[old..], at).map_err(|e| format!("read error at offset {at}: {e}"))
    }

    /// The bytes `[from, to)`, which must be in the window.
    fn slice(&self, from: u64, to: u64) -> &[u8] {
        &self.window[(from - self.base) as usize..(to - self.base) as usize]
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        self.fill(self.pos + N as u64)?;
        let out = self.slice(self.pos, self.pos + N as u64).try_into().expect("N bytes");
        self.pos += N as u64;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take()?))
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take()?))
    }
}

/// Why a batch does not read: the reason, and whether a torn write can cause it.
struct Stop(String, bool);

impl From<String> for Stop {
    /// Running into the end of the file: what a torn write leaves.
    fn from(reason: String) -> Stop {
        Stop(reason, true)
    }
}

/// One whole batch read from `cursor`, or why there is none: `Ok(None)` at a clean end.
/// `counter` receives the batch's commit counter if it carries one.
///
/// fjall's batch checksum is the xxh3 of the items exactly as they are laid out in the
/// file (tag, fields, key, value), so the scan walks the items to check their structure
/// and then hashes their bytes in one pass, without copying them.
fn read_batch(cursor: &mut Cursor<'_>, last_seqno: &mut Option<u64>) -> Result<Option<Option<u64>>, Stop> {
    if cursor.pos == cursor.len {
        return Ok(None);
    }
    cursor.batch = cursor.pos;
    let at = cursor.pos;
    let tag = cursor.u8()?;
    if tag == 0 {
        return Err(Stop(format!("zero tag at offset {at}"), true));
    }
    if tag != TAG_START {
        return Err(Stop(format!("entry tag {tag} at offset {at} where a batch should start"), false));
    }
    let count = cursor.u32()?;
    let seqno = cursor.u64()?;
    // fjall's batch checksum covers the items, not the start entry: a flipped sequence
    // number would reorder versions silently. Every batch gets a newer one.
    if let Some(previous) = *last_seqno
        && seqno <= previous
    {
        return Err(Stop(
            format!("batch at offset {at} has sequence number {seqno}, not after the previous batch's {previous}"),
            false,
        ));
    }
    let items_start = cursor.pos;
    let mut counter = None;
    let mut only_clears = true;
    for _ in 0..count {
        let at = cursor.pos;
        match cursor.u8()? {
            TAG_ITEM => {
                only_clears = false;
                let value_type = cursor.u8()?;
                if !matches!(value_type, 0..=2) {
                    return Err(Stop(format!("bad value type {value_type} at offset {at}"), value_type == 0));
                }
                let compression = cursor.u8()?;
                if compression > 1 {
                    return Err(Stop(format!("bad compression tag {compression} at offset {at}"), false));
                }
                let _keyspace = cursor.u64()?;
                let key_len = cursor.u16()?;
                let value_len = cursor.u32()?;
                let stored_len = cursor.u32()?;
                if compression == 0 && value_len != stored_len {
                    return Err(Stop(format!("uncompressed item at offset {at} with two lengths"), false));
                }
                let body = u64::from(key_len) + u64::from(stored_len);
                if cursor.len - cursor.pos < body {
                    return Err(Stop(format!("item at offset {at} runs past the end of the file"), true));
                }
                cursor.fill(cursor.pos + body)?;
                let key_end = cursor.pos + u64::from(key_len);
                let key = cursor.slice(cursor.pos, key_end);
                let value = cursor.slice(key_end, cursor.pos + body);
                if compression == 0
                    && value_type == 0
                    && key == crate::key::COMMITS_KEY
                    && let Some(commits) = crate::key::decode_commits_per_commit(value)
                {
                    counter = Some(commits);
                }
                cursor.pos += body;
            }
            TAG_CLEAR => {
                let _keyspace = cursor.u64()?;
            }
            tag => return Err(Stop(format!("entry tag {tag} at offset {at} inside a batch of {count}"), tag == 0)),
        }
    }
    let at = cursor.pos;
    let tag = cursor.u8()?;
    if tag != TAG_END {
        return Err(Stop(format!("entry tag {tag} at offset {at} where the batch should end"), tag == 0));
    }
    let stored = cursor.u64()?;
    if cursor.take::<4>()? != TRAILER_MAGIC {
        return Err(Stop(format!("bad batch trailer at offset {}", at + 9), true));
    }
    let computed = xxhash_rust::xxh3::xxh3_64(cursor.slice(items_start, at));
    if stored != computed {
        return Err(Stop(
            format!("batch checksum mismatch at offset {at}: stored {stored:#018x}, computed {computed:#018x}"),
            true,
        ));
    }
    // fjall's recovery takes its next sequence number from the items and tables it
    // recovers, never from a clear: a batch written after a restart may carry a smaller
    // number than a clear before it (the store clears its group log at every
    // checkpoint, `group_log.rs`). So a batch of clears only is checked against the
    // batch before it but does not raise the bar for the next one.
    if !(only_clears && count > 0) {
        *last_seqno = Some(seqno);
    }
    Ok(Some(counter))
}

fn scan_file(
    path: &Path,
    id: u64,
    counters: &mut Vec<(u64, u64)>,
    last_seqno: &mut Option<u64>,
) -> io::Result<JournalFile> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut cursor = Cursor::new(&file, len);
    let mut batches = 0;
    let mut valid_end = 0;
    let stop = loop {
        let start = cursor.pos;
        match read_batch(&mut cursor, last_seqno) {
            Ok(None) => break None,
            Ok(Some(counter)) => {
                batches += 1;
                valid_end = cursor.pos;
                if let Some(commits) = counter {
                    counters.push((start, commits));
                }
            }
            Err(stop) => break Some(stop),
        }
    };
    let tail = match stop {
        None => Tail::Clean,
        Some(Stop(reason, torn_like)) => tail_after(&file, valid_end, len, reason, torn_like)?,
    };
    Ok(JournalFile { path: path.to_path_buf(), id, len, valid_end, batches, tail })
}

/// The end of the file's last data region (`SEEK_DATA`/`SEEK_HOLE`): every byte after it
/// is in a hole and reads as zero. The file's length where the file system cannot say.
fn data_end(file: &File, len: u64) -> u64 {
    use rustix::fs::{SeekFrom, seek};
    let mut end = 0;
    let mut pos = 0;
    while pos < len {
        match seek(file, SeekFrom::Data(pos)) {
            Ok(data) => match seek(file, SeekFrom::Hole(data)) {
                Ok(hole) if hole > data => {
                    end = hole;
                    pos = hole;
                }
                _ => return len,
            },
            Err(rustix::io::Errno::NXIO) => break,
            Err(_) => return len,
        }
    }
    end.min(len)
}

/// Bytes per word of the zero check (wide words let the loop vectorize).
const ZERO_CHECK_CHUNK_BYTES: usize = 64;

/// Whether every byte of `bytes` is zero.
fn all_zero(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(ZERO_CHECK_CHUNK_BYTES);
    let wide = chunks.by_ref().fold(0u8, |acc, c| acc | c.iter().fold(0u8, |a, &b| a | b));
    wide == 0 && chunks.remainder().iter().all(|&b| b == 0)
}

/// What follows the last whole batch: zeros only, or data. fjall extends every new
/// journal to 64 MiB with `set_len`, a hole that reads as zeros: only the bytes up to the
/// end of the file's last data region are read.
fn tail_after(file: &File, valid_end: u64, len: u64, reason: String, torn_like: bool) -> io::Result<Tail> {
    let end = data_end(file, len).max(valid_end);
    let mut buf = vec![0; READ_CHUNK_BYTES as usize];
    let mut first_nonzero = None;
    let mut last_nonzero_end = valid_end;
    let mut at = valid_end;
    while at < end {
        let n = (end - at).min(READ_CHUNK_BYTES) as usize;
        file.read_exact_at(&mut buf[..n], at)?;
        if !all_zero(&buf[..n]) {
            let first = buf[..n].iter().position(|&b| b != 0).expect("a non-zero byte");
            let last = buf[..n].iter().rposition(|&b| b != 0).expect("a non-zero byte");
            first_nonzero.get_or_insert(at + first as u64);
            last_nonzero_end = at + last as u64 + 1;
        }
        at += n as u64;
    }
    let Some(first_nonzero) = first_nonzero else { return Ok(Tail::Clean) };
    let mut head = [0; 1];
    file.read_exact_at(&mut head, valid_end)?;
    // A torn write begins where the last whole batch ends, with a batch start.
    let torn_like = torn_like && first_nonzero == valid_end && head[0] == TAG_START;
    let kept = if last_nonzero_end - valid_end <= TAIL_KEEP_BYTES_MAX {
        let mut bytes = vec![0; (last_nonzero_end - valid_end) as usize];
        file.read_exact_at(&mut bytes, valid_end)?;
        Some(bytes)
    } else {
        None
    };
    Ok(Tail::Data { first_nonzero, last_nonzero_end, reason, torn_like, kept })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn the_data_end_never_misses_a_written_byte_and_skips_only_holes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("0.jnl");
        let file =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).expect("create");
        let len = 64 * 1024 * 1024;
        file.write_all_at(&[7; 100], 0).expect("write");
        file.set_len(len).expect("extend");
        let end = data_end(&file, len);
        assert!((100..=len).contains(&end), "data end {end}");
        // A byte far in the hole: the data end must lie past it, and the scan must see it.
        let far = 40 * 1024 * 1024;
        file.write_all_at(&[1], far).expect("write far");
        assert!(data_end(&file, len) > far, "the data end covers the far byte");
        let scan = scan(dir.path()).expect("scan");
        match &scan.files[0].tail {
            Tail::Data { last_nonzero_end, .. } => assert_eq!(*last_nonzero_end, far + 1),
            Tail::Clean => panic!("the far byte was missed"),
        }
        assert!(all_zero(&[0; 130]));
        let mut bytes = [0; 130];
        bytes[129] = 1;
        assert!(!all_zero(&bytes));
        bytes[129] = 0;
        bytes[3] = 1;
        assert!(!all_zero(&bytes));
    }
}
