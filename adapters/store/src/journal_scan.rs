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
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

/// Read buffer of the scan: large sequential reads keep it at the disk's speed.
const READ_BUFFER_BYTES: usize = 1024 * 1024;
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

/// A reader that counts its position and stops cleanly at the end of the file.
struct Cursor {
    reader: BufReader<File>,
    pos: u64,
    len: u64,
}

impl Cursor {
    fn bytes(&mut self, buf: &mut [u8]) -> Result<(), String> {
        if self.len - self.pos < buf.len() as u64 {
            return Err(format!("the file ends inside an entry at offset {}", self.pos));
        }
        self.reader.read_exact(buf).map_err(|e| format!("read error at offset {}: {e}", self.pos))?;
        self.pos += buf.len() as u64;
        Ok(())
    }

    fn u8(&mut self) -> Result<u8, String> {
        let mut b = [0; 1];
        self.bytes(&mut b)?;
        Ok(b[0])
    }

    fn u16(&mut self) -> Result<u16, String> {
        let mut b = [0; 2];
        self.bytes(&mut b)?;
        Ok(u16::from_le_bytes(b))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let mut b = [0; 4];
        self.bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let mut b = [0; 8];
        self.bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
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
fn read_batch(
    cursor: &mut Cursor,
    scratch: &mut Vec<u8>,
    last_seqno: &mut Option<u64>,
) -> Result<Option<Option<u64>>, Stop> {
    if cursor.pos == cursor.len {
        return Ok(None);
    }
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
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut counter = None;
    for _ in 0..count {
        let at = cursor.pos;
        match cursor.u8()? {
            TAG_ITEM => {
                let value_type = cursor.u8()?;
                if !matches!(value_type, 0..=2) {
                    return Err(Stop(format!("bad value type {value_type} at offset {at}"), value_type == 0));
                }
                let compression = cursor.u8()?;
                if compression > 1 {
                    return Err(Stop(format!("bad compression tag {compression} at offset {at}"), false));
                }
                let keyspace = cursor.u64()?;
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
                scratch.clear();
                scratch.push(TAG_ITEM);
                scratch.push(value_type);
                scratch.push(compression);
                scratch.extend_from_slice(&keyspace.to_le_bytes());
                scratch.extend_from_slice(&key_len.to_le_bytes());
                scratch.extend_from_slice(&value_len.to_le_bytes());
                scratch.extend_from_slice(&stored_len.to_le_bytes());
                let head = scratch.len();
                scratch.resize(head + body as usize, 0);
                cursor.bytes(&mut scratch[head..])?;
                hasher.update(scratch);
                let key = &scratch[head..head + usize::from(key_len)];
                let value = &scratch[head + usize::from(key_len)..];
                if compression == 0
                    && value_type == 0
                    && key == crate::key::COMMITS_KEY
                    && let Some(commits) = crate::key::decode_commits(value)
                {
                    counter = Some(commits);
                }
            }
            TAG_CLEAR => {
                let keyspace = cursor.u64()?;
                let mut bytes = [0; 9];
                bytes[0] = TAG_CLEAR;
                bytes[1..].copy_from_slice(&keyspace.to_le_bytes());
                hasher.update(&bytes);
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
    let mut magic = [0; 4];
    cursor.bytes(&mut magic)?;
    if magic != TRAILER_MAGIC {
        return Err(Stop(format!("bad batch trailer at offset {}", at + 9), true));
    }
    let computed = hasher.digest();
    if stored != computed {
        return Err(Stop(
            format!("batch checksum mismatch at offset {at}: stored {stored:#018x}, computed {computed:#018x}"),
            true,
        ));
    }
    *last_seqno = Some(seqno);
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
    let mut cursor = Cursor { reader: BufReader::with_capacity(READ_BUFFER_BYTES, file), pos: 0, len };
    let mut scratch = Vec::new();
    let mut batches = 0;
    let mut valid_end = 0;
    let reason = loop {
        let start = cursor.pos;
        match read_batch(&mut cursor, &mut scratch, last_seqno) {
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
    let tail = match reason {
        None => Tail::Clean,
        Some(Stop(reason, torn_like)) => tail_after(path, valid_end, len, reason, torn_like)?,
    };
    Ok(JournalFile { path: path.to_path_buf(), id, len, valid_end, batches, tail })
}

/// Reads the rest of the file after the last whole batch: zeros only, or data.
fn tail_after(path: &Path, valid_end: u64, len: u64, reason: String, torn_like: bool) -> io::Result<Tail> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(valid_end))?;
    let mut reader = BufReader::with_capacity(READ_BUFFER_BYTES, file);
    let mut buf = vec![0; READ_BUFFER_BYTES];
    let mut pos = valid_end;
    let mut first_nonzero = None;
    let mut last_nonzero_end = valid_end;
    while pos < len {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
            first_nonzero.get_or_insert(pos + i as u64);
            let j = buf[..n].iter().rposition(|&b| b != 0).unwrap_or(i);
            last_nonzero_end = pos + j as u64 + 1;
        }
        pos += n as u64;
    }
    let Some(first_nonzero) = first_nonzero else { return Ok(Tail::Clean) };
    // A torn write begins where the last whole batch ends, with a batch start.
    let mut first = [0; 1];
    {
        use std::os::unix::fs::FileExt;
        File::open(path)?.read_exact_at(&mut first, valid_end)?;
    }
    let torn_like = torn_like && first_nonzero == valid_end && first[0] == TAG_START;
    let kept = if last_nonzero_end - valid_end <= TAIL_KEEP_BYTES_MAX {
        use std::os::unix::fs::FileExt;
        let mut bytes = vec![0; (last_nonzero_end - valid_end) as usize];
        File::open(path)?.read_exact_at(&mut bytes, valid_end)?;
        Some(bytes)
    } else {
        None
    };
    Ok(Tail::Data { first_nonzero, last_nonzero_end, reason, torn_like, kept })
}
