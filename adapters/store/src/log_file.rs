//! The group log files: two files of the store's own, `group-log-a` and `group-log-b` in
//! the data directory, where every group commit is one frame, written in place and
//! fdatasynced before it is acknowledged. A file is reused from its start once a
//! checkpoint wrote its records into the keyspaces, so after its first cycle a commit
//! overwrites blocks the file already has and its `fdatasync` flushes no metadata
//! (SQLite's WAL and TigerBeetle's journal work the same way; `docs/store.md`).
//!
//! A frame: [`FRAME_MAGIC`], the value's length (`u32` big-endian), then the value, a
//! group log value (`group_log.rs`: version, commit number, records, CRC32 of all that).
//!
//! What a start reads back from a file is its *run*: the frames from offset 0 on, as long
//! as each is whole (magic, length within the file, checksum) and carries the commit after
//! the one before. A run ends at zeros, at a frame a crash tore, or at a stale frame of an
//! earlier cycle (whose commit is older: every earlier cycle was checkpointed before the
//! file was reused). A whole frame *after* the run's end that carries a commit newer than
//! the run and the checkpoint is no state the store writes (a flipped byte cut the run
//! short): [`FileRead::damage`] reports it, and the start is refused.

use crate::error::Error;
use crate::group_log::{self, LogRead};
use std::fs::{File, OpenOptions};
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The two group log files, in the data directory.
pub const LOG_FILE_NAMES: [&str; 2] = ["group-log-a", "group-log-b"];
/// The first bytes of every frame.
pub const FRAME_MAGIC: [u8; 4] = *b"OGL\x01";
/// Bytes of a frame before its value: the magic and the value's length.
const FRAME_HEADER_BYTES: usize = 8;
/// Bytes of zeros a file grows by when a frame would pass its end: the growth (new
/// blocks, a new size) costs one `fdatasync` that flushes metadata per this many bytes,
/// instead of every commit's.
pub const LOG_FILE_GROW_BYTES: u64 = 1024 * 1024;

/// One group log file, open for commits.
#[derive(Debug)]
pub(crate) struct LogFile {
    /// Its path, for errors.
    path: PathBuf,
    /// The file, opened for reading and writing.
    file: File,
    /// Where the next frame goes: the end of the current cycle's run.
    end: u64,
    /// The file's length: zeros or stale frames from `end` to it.
    len: u64,
}

impl LogFile {
    /// Opens (creating it empty if missing) the log file at `path`, the next frame going
    /// at `end` (the end of the run a start read, or 0 to start a new cycle).
    pub fn open(path: &Path, end: u64) -> io::Result<LogFile> {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        let len = file.metadata()?.len();
        Ok(LogFile { path: path.to_path_buf(), file, end: end.min(len), len })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the frame of one group log value and syncs its data: on `Ok` the commit is
    /// durable. The file grows by [`LOG_FILE_GROW_BYTES`] of zeros when the frame would
    /// pass its end.
    pub fn append(&mut self, value: &[u8]) -> io::Result<()> {
        let value_len = u32::try_from(value.len()).map_err(|_| io::Error::other("a group larger than 4 GiB"))?;
        let mut frame = Vec::with_capacity(FRAME_HEADER_BYTES + value.len());
        frame.extend_from_slice(&FRAME_MAGIC);
        frame.extend_from_slice(&value_len.to_be_bytes());
        frame.extend_from_slice(value);
        let frame_end = self.end + frame.len() as u64;
        if frame_end > self.len {
            self.grow(frame_end)?;
        }
        self.file.write_all_at(&frame, self.end)?;
        self.file.sync_data()?;
        self.end = frame_end;
        Ok(())
    }

    /// Starts a new cycle at offset 0. Only for a file whose every frame is checkpointed:
    /// the stale frames it overwrites, and those after its new run, carry older commits.
    pub fn restart(&mut self) {
        self.end = 0;
    }

    /// Writes zeros from the file's end until it holds `at_least` bytes, rounded up to
    /// [`LOG_FILE_GROW_BYTES`]. Written, not allocated: blocks that hold data already are
    /// overwritten later without metadata (an `fallocate`d block would be converted then).
    fn grow(&mut self, at_least: u64) -> io::Result<()> {
        let target = at_least.div_ceil(LOG_FILE_GROW_BYTES) * LOG_FILE_GROW_BYTES;
        let zeros = vec![0u8; LOG_FILE_GROW_BYTES as usize];
        let mut at = self.len;
        while at < target {
            let chunk = (target - at).min(LOG_FILE_GROW_BYTES) as usize;
            self.file.write_all_at(&zeros[..chunk], at)?;
            at += chunk as u64;
        }
        self.len = target;
        Ok(())
    }
}

/// One group log file as a start (or `store verify`) reads it, read-only.
#[derive(Debug)]
pub struct FileRead {
    /// Its path.
    pub path: PathBuf,
    /// Whether it exists (a store written before the log files has none).
    pub exists: bool,
    /// Its bytes.
    bytes: Vec<u8>,
    /// The run's frames in order: commit number and the value's range in `bytes`.
    frames: Vec<(u64, Range<usize>)>,
    /// Offset just past the run's last frame.
    pub end: u64,
    /// Why the run ended there: `None` at the file's end or at zeros.
    pub stop: Option<String>,
}

impl FileRead {
    /// The file's length.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Whether the file holds no byte.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Frames in the run.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// The first and last commit of the run.
    pub fn commits(&self) -> Option<(u64, u64)> {
        Some((self.frames.first()?.0, self.frames.last()?.0))
    }

    /// The run's frames of commits after `checkpointed` (older ones are in the keyspaces),
    /// as (commit, group log value).
    pub fn frames_after(&self, checkpointed: u64) -> impl Iterator<Item = (u64, &[u8])> {
        self.frames.iter().filter(move |(c, _)| *c > checkpointed).map(|(c, r)| (*c, &self.bytes[r.clone()]))
    }

    /// Damage no crash leaves: a whole frame after the run's end whose commit is newer
    /// than the run's last and than `checkpointed` (a commit the store wrote after the
    /// ones the run gives back, which the run lost). Its offset and what is wrong.
    pub fn damage(&self, checkpointed: u64) -> Option<(u64, String)> {
        let newest = self.frames.last().map_or(0, |f| f.0).max(checkpointed);
        let bytes = &self.bytes;
        let mut at = self.end as usize;
        while let Some(found) = bytes.get(at..).and_then(|rest| rest.iter().position(|&b| b == FRAME_MAGIC[0])) {
            let offset = at + found;
            at = offset + 1;
            let Some(Frame { commit, .. }) = frame_at(bytes, offset).filter(|f| f.commit > newest) else { continue };
            let why = self.stop.as_deref().unwrap_or("zeros");
            return Some((
                self.end,
                format!(
                    "the log's frames stop at offset {} ({why}), but a whole frame of commit {commit} follows at offset {offset}: the commits between are lost",
                    self.end
                ),
            ));
        }
        None
    }
}

/// A whole frame in a file's bytes.
struct Frame {
    /// Its commit number.
    commit: u64,
    /// Its value's range.
    value: Range<usize>,
}

/// The whole frame at `offset` (magic, a length within the bytes, a value whose checksum
/// holds), if there is one.
fn frame_at(bytes: &[u8], offset: usize) -> Option<Frame> {
    let header = bytes.get(offset..offset.checked_add(FRAME_HEADER_BYTES)?)?;
    if header[..4] != FRAME_MAGIC {
        return None;
    }
    let len = u32::from_be_bytes(header[4..].try_into().expect("four bytes")) as usize;
    let start = offset + FRAME_HEADER_BYTES;
    let value = start..start.checked_add(len)?;
    let commit = group_log::check_group(bytes.get(value.clone())?).ok()?;
    Some(Frame { commit, value })
}

/// Why no whole frame starts at `offset` (for the report), or `None` at zeros or the
/// file's end.
fn why_no_frame(bytes: &[u8], offset: usize) -> Option<String> {
    let rest = &bytes[offset.min(bytes.len())..];
    let header = &rest[..rest.len().min(FRAME_HEADER_BYTES)];
    if header.iter().all(|&b| b == 0) {
        return None;
    }
    if header.len() < FRAME_HEADER_BYTES {
        return Some(format!("{} bytes, shorter than a frame header", header.len()));
    }
    if header[..4] != FRAME_MAGIC {
        return Some(format!("no frame magic (0x{})", crate::error::hex(&header[..4])));
    }
    let len = u32::from_be_bytes(header[4..].try_into().expect("four bytes")) as usize;
    if rest.len() - FRAME_HEADER_BYTES < len {
        return Some(format!("a frame of {len} bytes runs past the file's end"));
    }
    group_log::check_group(&rest[FRAME_HEADER_BYTES..FRAME_HEADER_BYTES + len]).err()
}

/// Reads the log file at `path` (a missing file reads as empty) and finds its run.
pub fn read(path: &Path) -> io::Result<FileRead> {
    let (bytes, exists) = match std::fs::read(path) {
        Ok(bytes) => (bytes, true),
        Err(error) if error.kind() == io::ErrorKind::NotFound => (Vec::new(), false),
        Err(error) => return Err(error),
    };
    let mut frames: Vec<(u64, Range<usize>)> = Vec::new();
    let mut at = 0;
    let stop = loop {
        let Some(frame) = frame_at(&bytes, at) else { break why_no_frame(&bytes, at) };
        if let Some((last, _)) = frames.last()
            && frame.commit != last + 1
        {
            // An older commit is a stale frame of an earlier cycle: the run's end.
            break (frame.commit > *last).then(|| format!("commit {} follows commit {last}", frame.commit));
        }
        at = frame.value.end;
        frames.push((frame.commit, frame.value));
    };
    Ok(FileRead { path: path.to_path_buf(), exists, bytes, frames, end: at as u64, stop })
}

/// Reads both files' frames after `checkpointed` (older ones are in the keyspaces) into
/// overlays and tells which file is the active one (`group_log::order`). Every frame of a
/// run passed its checksum; a record in it that does not decode is refused, never skipped.
pub fn replay(reads: &[FileRead; 2], checkpointed: u64) -> Result<group_log::Replayed, Error> {
    let mut logs = [LogRead::default(), LogRead::default()];
    for (read, log) in reads.iter().zip(&mut logs) {
        for (_, value) in read.frames_after(checkpointed) {
            log.apply(None, value)?;
        }
    }
    group_log::order(logs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group_log::GroupWriter;
    use crate::key;
    use engine::RecordKey;
    use engine::ids::WorkerId;

    fn value(commit: u64) -> Vec<u8> {
        let mut group = GroupWriter::new(commit);
        group.push(key::encode(RecordKey::Worker(WorkerId(commit))), &[7; 40]);
        group.finish()
    }

    fn write(path: &Path, end: u64, commits: std::ops::RangeInclusive<u64>) -> u64 {
        let mut file = LogFile::open(path, end).expect("open");
        for commit in commits {
            file.append(&value(commit)).expect("append");
        }
        file.end
    }

    #[test]
    fn a_run_ends_at_zeros_and_a_reused_file_ends_at_its_stale_frames() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(LOG_FILE_NAMES[0]);
        let first_end = write(&path, 0, 1..=30);
        let read1 = read(&path).expect("read");
        assert_eq!((read1.commits(), read1.end, read1.stop.as_deref()), (Some((1, 30)), first_end, None));
        assert_eq!(read1.len(), LOG_FILE_GROW_BYTES, "grown by whole chunks of zeros");
        assert_eq!(read1.damage(0), None);
        // Checkpointed through 30, reused from the start for commits 61..=70.
        let second_end = write(&path, 0, 61..=70);
        let read2 = read(&path).expect("read");
        assert_eq!((read2.commits(), read2.end), (Some((61, 70)), second_end));
        assert_eq!(read2.stop, None, "a stale frame of an older commit ends the run quietly");
        assert_eq!(read2.damage(60), None, "the stale frames after the run are older");
        assert_eq!(read2.frames_after(65).map(|(c, _)| c).collect::<Vec<_>>(), vec![66, 67, 68, 69, 70]);
    }

    #[test]
    fn a_torn_last_frame_ends_the_run_and_a_flipped_byte_before_newer_frames_is_damage() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(LOG_FILE_NAMES[1]);
        write(&path, 0, 1..=10);
        let whole = std::fs::read(&path).expect("read");
        let ends: Vec<u64> = {
            let read = read(&path).expect("read");
            read.frames.iter().map(|(_, r)| r.end as u64).collect()
        };
        // Torn: the last frame's second half is zeros.
        let mut torn = whole.clone();
        torn[(ends[8] + (ends[9] - ends[8]) / 2) as usize..ends[9] as usize].fill(0);
        std::fs::write(&path, &torn).expect("write");
        let read_torn = read(&path).expect("read");
        assert_eq!(read_torn.commits(), Some((1, 9)));
        assert!(read_torn.stop.as_deref().is_some_and(|s| s.contains("checksum")), "{:?}", read_torn.stop);
        assert_eq!(read_torn.damage(0), None, "a torn write is what a crash leaves");
        // A flipped byte in frame 5: frames 6..=10 are whole and newer.
        let mut flipped = whole.clone();
        flipped[(ends[3] + 20) as usize] ^= 0x10;
        std::fs::write(&path, &flipped).expect("write");
        let read_flipped = read(&path).expect("read");
        assert_eq!(read_flipped.commits(), Some((1, 4)));
        let (offset, detail) = read_flipped.damage(0).expect("damage");
        assert_eq!(offset, ends[3]);
        assert!(detail.contains("commit 6"), "{detail}");
        // The same frames all checkpointed (a stale cycle): nothing is lost.
        assert_eq!(read_flipped.damage(10), None);
        // A missing frame: commit 7 written where 6 belongs.
        let gap = dir.path().join("gap");
        let end = write(&gap, 0, 1..=5);
        write(&gap, end, 7..=7);
        let read_gap = read(&gap).expect("read");
        assert_eq!(read_gap.commits(), Some((1, 5)));
        assert_eq!(read_gap.stop.as_deref(), Some("commit 7 follows commit 5"));
        assert!(read_gap.damage(0).is_some());
    }

    #[test]
    fn a_missing_file_reads_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let read = read(&dir.path().join("none")).expect("read");
        assert!(!read.exists && read.is_empty() && read.commits().is_none() && read.damage(0).is_none());
    }
}
