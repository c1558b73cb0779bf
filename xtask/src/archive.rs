//! A ZIP writer and reader for stored (uncompressed) entries, deterministic by construction.
//!
//! The skill archive holds a handful of small text files, so it needs none of what makes a
//! ZIP library large: no compression, no encryption, no ZIP64, no data descriptors, no extra
//! fields. What it needs is that the same input always gives the same bytes, so every field
//! that usually varies is fixed here: entries in the caller's order, a constant DOS timestamp
//! ([`ENTRY_DOS_DATE`], [`ENTRY_DOS_TIME`]), one Unix mode ([`ENTRY_UNIX_MODE`]), no comment.
//!
//! [`read`] is deliberately strict: it accepts exactly the layout [`write()`] produces (local
//! headers back to back from offset 0, then the central directory, then the end record) and
//! checks every CRC, so a packaging bug cannot slip through as "some valid ZIP".
//!
//! Format reference: PKWARE APPNOTE.TXT, sections 4.3.7 (local file header), 4.3.12 (central
//! directory header) and 4.3.16 (end of central directory record).

use std::fmt;

/// Signature of a local file header.
const LOCAL_HEADER_SIGNATURE: u32 = 0x0403_4b50;
/// Signature of a central directory header.
const CENTRAL_HEADER_SIGNATURE: u32 = 0x0201_4b50;
/// Signature of the end of central directory record.
const END_SIGNATURE: u32 = 0x0605_4b50;

/// Fixed size of a local file header, before the name.
const LOCAL_HEADER_BYTES: usize = 30;
/// Fixed size of a central directory header, before the name.
const CENTRAL_HEADER_BYTES: usize = 46;
/// Size of the end of central directory record without a comment.
const END_RECORD_BYTES: usize = 22;

/// "Version needed to extract": 2.0, understood by every unzip in use.
const VERSION_NEEDED: u16 = 20;
/// "Version made by": host 3 (Unix) in the high byte, so readers honour the mode bits in the
/// external attributes; spec version 2.0 in the low byte.
const VERSION_MADE_BY: u16 = (3 << 8) | 20;
/// Compression method 0: stored.
const METHOD_STORED: u16 = 0;
/// No general-purpose flags: names are checked to be ASCII, so the UTF-8 flag is not needed.
const FLAGS_NONE: u16 = 0;

/// DOS date of every entry: 1980-01-01, the earliest date a ZIP can hold
/// (`(year - 1980) << 9 | month << 5 | day`).
pub const ENTRY_DOS_DATE: u16 = (1 << 5) | 1;
/// DOS time of every entry: 00:00:00.
pub const ENTRY_DOS_TIME: u16 = 0;
/// Unix mode of every entry: a regular file, `rw-r--r--`.
pub const ENTRY_UNIX_MODE: u32 = 0o100_644;

/// Most entries one archive may hold (the end record counts them in 16 bits).
pub const ENTRIES_COUNT_MAX: usize = u16::MAX as usize;
/// Longest entry name in bytes (a 16-bit length field).
pub const ENTRY_NAME_BYTES_MAX: usize = u16::MAX as usize;
/// Largest archive this writer produces: every offset and size must fit 32 bits without ZIP64.
pub const ARCHIVE_BYTES_MAX: usize = u32::MAX as usize;

/// Why bytes could not be written as, or read back as, a stored ZIP archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchiveError {
    /// More than [`ENTRIES_COUNT_MAX`] entries.
    TooManyEntries(usize),
    /// A name that is empty, longer than [`ENTRY_NAME_BYTES_MAX`], not ASCII, absolute, or
    /// holding a `..`, `.` or empty component.
    BadName(String),
    /// The archive would exceed [`ARCHIVE_BYTES_MAX`].
    TooLarge,
    /// The bytes end before a record does.
    Truncated,
    /// A record does not start with its signature; names the record.
    BadSignature(&'static str),
    /// A field holds something [`write()`] never writes (method, flags, extra field, comment,
    /// multi-disk, timestamp, mode); names the field.
    Unexpected(&'static str),
    /// A local header disagrees with its central directory header, or records do not follow
    /// each other exactly; names what disagrees.
    Inconsistent(&'static str),
    /// The stored data of an entry does not match its CRC-32.
    CrcMismatch(String),
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveError::TooManyEntries(count) => {
                write!(f, "{count} entries exceed the limit of {ENTRIES_COUNT_MAX}")
            }
            ArchiveError::BadName(name) => write!(f, "entry name {name:?} is not a plain relative ASCII path"),
            ArchiveError::TooLarge => write!(f, "the archive would exceed {ARCHIVE_BYTES_MAX} bytes"),
            ArchiveError::Truncated => f.write_str("the archive ends in the middle of a record"),
            ArchiveError::BadSignature(record) => write!(f, "bad signature for the {record}"),
            ArchiveError::Unexpected(field) => write!(f, "unexpected value in field `{field}`"),
            ArchiveError::Inconsistent(what) => write!(f, "inconsistent archive: {what}"),
            ArchiveError::CrcMismatch(name) => write!(f, "CRC-32 mismatch for entry {name:?}"),
        }
    }
}

impl std::error::Error for ArchiveError {}

/// One file as read back from an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The entry name, `/`-separated, exactly as stored.
    pub name: String,
    /// The stored bytes; their CRC has been checked.
    pub data: Vec<u8>,
    /// The CRC-32 recorded for the entry.
    pub crc32: u32,
    /// The Unix mode from the external attributes.
    pub unix_mode: u32,
}

/// Whether `name` is a plain relative path: ASCII, no empty, `.` or `..` component, no
/// leading `/`, no backslash. Every unzip then extracts it inside the target folder.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= ENTRY_NAME_BYTES_MAX
        && name.is_ascii()
        && !name.contains('\\')
        && !name.chars().any(|c| c.is_ascii_control())
        && name.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
}

/// The archive holding `entries` (name, data) as stored files, in the given order.
pub fn write(entries: &[(&str, &[u8])]) -> Result<Vec<u8>, ArchiveError> {
    if entries.len() > ENTRIES_COUNT_MAX {
        return Err(ArchiveError::TooManyEntries(entries.len()));
    }
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        if !is_plain_name(name) {
            return Err(ArchiveError::BadName((*name).to_string()));
        }
        let offset = small(out.len())?;
        let size = small(data.len())?;
        let crc = crc32fast::hash(data);
        let name_len = u16::try_from(name.len()).map_err(|_| ArchiveError::BadName((*name).to_string()))?;

        put_u32(&mut out, LOCAL_HEADER_SIGNATURE);
        put_u16(&mut out, VERSION_NEEDED);
        put_common(&mut out, crc, size, name_len);
        out.extend_from_slice(name.as_bytes());
        assert_eq!(out.len() - offset as usize, LOCAL_HEADER_BYTES + name.len(), "local header layout");
        out.extend_from_slice(data);

        let central_start = central.len();
        put_u32(&mut central, CENTRAL_HEADER_SIGNATURE);
        put_u16(&mut central, VERSION_MADE_BY);
        put_u16(&mut central, VERSION_NEEDED);
        put_common(&mut central, crc, size, name_len);
        put_u16(&mut central, 0); // file comment length
        put_u16(&mut central, 0); // disk number start
        put_u16(&mut central, 0); // internal attributes
        put_u32(&mut central, ENTRY_UNIX_MODE << 16);
        put_u32(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
        assert_eq!(central.len() - central_start, CENTRAL_HEADER_BYTES + name.len(), "central header layout");
    }
    let central_offset = small(out.len())?;
    let central_size = small(central.len())?;
    out.extend_from_slice(&central);
    let count = u16::try_from(entries.len()).map_err(|_| ArchiveError::TooManyEntries(entries.len()))?;
    put_u32(&mut out, END_SIGNATURE);
    put_u16(&mut out, 0); // number of this disk
    put_u16(&mut out, 0); // disk where the central directory starts
    put_u16(&mut out, count);
    put_u16(&mut out, count);
    put_u32(&mut out, central_size);
    put_u32(&mut out, central_offset);
    put_u16(&mut out, 0); // comment length
    assert_eq!(out.len() - central_offset as usize - central.len(), END_RECORD_BYTES, "end record layout");
    small(out.len())?;
    Ok(out)
}

/// The fields shared by local and central headers, from "flags" through "extra field length".
fn put_common(out: &mut Vec<u8>, crc: u32, size: u32, name_len: u16) {
    put_u16(out, FLAGS_NONE);
    put_u16(out, METHOD_STORED);
    put_u16(out, ENTRY_DOS_TIME);
    put_u16(out, ENTRY_DOS_DATE);
    put_u32(out, crc);
    put_u32(out, size); // compressed size: stored, so the same
    put_u32(out, size);
    put_u16(out, name_len);
    put_u16(out, 0); // extra field length
}

fn small(len: usize) -> Result<u32, ArchiveError> {
    u32::try_from(len).map_err(|_| ArchiveError::TooLarge)
}

fn put_u16(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Reads back an archive in exactly the layout [`write()`] produces, checking every field and CRC.
pub fn read(bytes: &[u8]) -> Result<Vec<Entry>, ArchiveError> {
    let end_at = bytes.len().checked_sub(END_RECORD_BYTES).ok_or(ArchiveError::Truncated)?;
    let mut end = Cursor { bytes, at: end_at };
    expect_signature(&mut end, END_SIGNATURE, "end of central directory record")?;
    expect_zero(end.u16()?, "number of this disk")?;
    expect_zero(end.u16()?, "central directory disk")?;
    let count = end.u16()?;
    if end.u16()? != count {
        return Err(ArchiveError::Unexpected("total entries"));
    }
    let central_size = end.u32()? as usize;
    let central_offset = end.u32()? as usize;
    expect_zero(end.u16()?, "archive comment length")?;
    if central_offset.checked_add(central_size) != Some(end_at) {
        return Err(ArchiveError::Inconsistent("the central directory does not end at the end record"));
    }

    let mut central = Cursor { bytes, at: central_offset };
    let mut local_expected_at = 0;
    let mut entries = Vec::with_capacity(usize::from(count));
    for _ in 0..count {
        let header = CentralHeader::read(&mut central)?;
        if header.local_offset != local_expected_at {
            return Err(ArchiveError::Inconsistent("local headers are not back to back from offset 0"));
        }
        let mut local = Cursor { bytes, at: header.local_offset };
        let data = read_local(&mut local, &header)?;
        if crc32fast::hash(data) != header.crc32 {
            return Err(ArchiveError::CrcMismatch(header.name));
        }
        local_expected_at = local.at;
        entries.push(Entry {
            name: header.name,
            data: data.to_vec(),
            crc32: header.crc32,
            unix_mode: header.unix_mode,
        });
    }
    if central.at != end_at {
        return Err(ArchiveError::Inconsistent("the central directory holds more than its entries"));
    }
    if local_expected_at != central_offset {
        return Err(ArchiveError::Inconsistent("bytes between the last entry and the central directory"));
    }
    Ok(entries)
}

/// What a central directory header says about one entry.
struct CentralHeader {
    name: String,
    crc32: u32,
    size: usize,
    unix_mode: u32,
    local_offset: usize,
}

impl CentralHeader {
    fn read(cursor: &mut Cursor<'_>) -> Result<CentralHeader, ArchiveError> {
        expect_signature(cursor, CENTRAL_HEADER_SIGNATURE, "central directory header")?;
        if cursor.u16()? != VERSION_MADE_BY {
            return Err(ArchiveError::Unexpected("version made by"));
        }
        let (crc32, size, name_len) = read_common(cursor)?;
        expect_zero(cursor.u16()?, "file comment length")?;
        expect_zero(cursor.u16()?, "disk number start")?;
        expect_zero(cursor.u16()?, "internal attributes")?;
        let attributes = cursor.u32()?;
        if attributes != ENTRY_UNIX_MODE << 16 {
            return Err(ArchiveError::Unexpected("external attributes"));
        }
        let unix_mode = attributes >> 16;
        let local_offset = cursor.u32()? as usize;
        let name = read_name(cursor, name_len)?;
        Ok(CentralHeader { name, crc32, size, unix_mode, local_offset })
    }
}

/// Checks a local header against its central header and returns the entry's data.
fn read_local<'b>(cursor: &mut Cursor<'b>, header: &CentralHeader) -> Result<&'b [u8], ArchiveError> {
    expect_signature(cursor, LOCAL_HEADER_SIGNATURE, "local file header")?;
    let (crc32, size, name_len) = read_common(cursor)?;
    if crc32 != header.crc32 || size != header.size {
        return Err(ArchiveError::Inconsistent("a local header disagrees with the central directory"));
    }
    if read_name(cursor, name_len)? != header.name {
        return Err(ArchiveError::Inconsistent("a local name differs from the central directory name"));
    }
    cursor.take(size)
}

/// Reads "version needed" through "extra field length", checking the fixed values; returns
/// (CRC-32, size, name length).
fn read_common(cursor: &mut Cursor<'_>) -> Result<(u32, usize, usize), ArchiveError> {
    if cursor.u16()? != VERSION_NEEDED {
        return Err(ArchiveError::Unexpected("version needed"));
    }
    if cursor.u16()? != FLAGS_NONE {
        return Err(ArchiveError::Unexpected("general purpose flags"));
    }
    if cursor.u16()? != METHOD_STORED {
        return Err(ArchiveError::Unexpected("compression method"));
    }
    if cursor.u16()? != ENTRY_DOS_TIME || cursor.u16()? != ENTRY_DOS_DATE {
        return Err(ArchiveError::Unexpected("last modification time"));
    }
    let crc32 = cursor.u32()?;
    let compressed = cursor.u32()?;
    let size = cursor.u32()?;
    if compressed != size {
        return Err(ArchiveError::Unexpected("compressed size"));
    }
    let name_len = usize::from(cursor.u16()?);
    expect_zero(cursor.u16()?, "extra field length")?;
    Ok((crc32, size as usize, name_len))
}

fn read_name(cursor: &mut Cursor<'_>, len: usize) -> Result<String, ArchiveError> {
    let raw = cursor.take(len)?;
    let name = String::from_utf8_lossy(raw).into_owned();
    if !is_plain_name(&name) {
        return Err(ArchiveError::BadName(name));
    }
    Ok(name)
}

fn expect_signature(cursor: &mut Cursor<'_>, signature: u32, record: &'static str) -> Result<(), ArchiveError> {
    if cursor.u32()? == signature { Ok(()) } else { Err(ArchiveError::BadSignature(record)) }
}

fn expect_zero<T: Into<u32>>(value: T, field: &'static str) -> Result<(), ArchiveError> {
    if value.into() == 0 { Ok(()) } else { Err(ArchiveError::Unexpected(field)) }
}

/// A bounds-checked little-endian reader over the archive bytes.
struct Cursor<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Cursor<'b> {
    fn take(&mut self, len: usize) -> Result<&'b [u8], ArchiveError> {
        let end = self.at.checked_add(len).ok_or(ArchiveError::Truncated)?;
        let slice = self.bytes.get(self.at..end).ok_or(ArchiveError::Truncated)?;
        self.at = end;
        Ok(slice)
    }

    fn u16(&mut self) -> Result<u16, ArchiveError> {
        let raw = self.take(2)?;
        Ok(u16::from_le_bytes([raw[0], raw[1]]))
    }

    fn u32(&mut self) -> Result<u32, ArchiveError> {
        let raw = self.take(4)?;
        Ok(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        write(&[("skill/SKILL.md", b"hello\n"), ("skill/b/c.txt", b"")]).expect("sample archive")
    }

    #[test]
    fn round_trip_keeps_names_order_and_data() {
        let entries = read(&sample()).expect("reads back");
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["skill/SKILL.md", "skill/b/c.txt"]);
        assert_eq!(entries[0].data, b"hello\n");
        assert_eq!(entries[0].crc32, crc32fast::hash(b"hello\n"));
        assert!(entries[1].data.is_empty());
        assert!(entries.iter().all(|e| e.unix_mode == ENTRY_UNIX_MODE));
    }

    #[test]
    fn empty_archive_is_just_the_end_record() {
        let bytes = write(&[]).expect("empty archive");
        assert_eq!(bytes.len(), END_RECORD_BYTES);
        assert_eq!(read(&bytes), Ok(Vec::new()));
    }

    #[test]
    fn layout_sizes_add_up() {
        let bytes = sample();
        let names = "skill/SKILL.md".len() + "skill/b/c.txt".len();
        let expected = 2 * LOCAL_HEADER_BYTES + 2 * CENTRAL_HEADER_BYTES + END_RECORD_BYTES + 2 * names + 6;
        assert_eq!(bytes.len(), expected);
    }

    #[test]
    fn bad_names_are_refused() {
        for name in ["", "/abs", "a/../b", "a//b", "./a", "a\\b", "é", "a/\n"] {
            assert_eq!(write(&[(name, b"x")]), Err(ArchiveError::BadName(name.to_string())), "{name:?}");
        }
    }

    #[test]
    fn a_flipped_data_byte_fails_the_crc() {
        let mut bytes = sample();
        bytes[LOCAL_HEADER_BYTES + "skill/SKILL.md".len()] ^= 1;
        assert_eq!(read(&bytes), Err(ArchiveError::CrcMismatch("skill/SKILL.md".to_string())));
    }

    #[test]
    fn truncation_and_garbage_are_errors_not_panics() {
        let bytes = sample();
        for len in 0..bytes.len() {
            assert!(read(&bytes[..len]).is_err(), "prefix of {len} bytes was accepted");
        }
        for at in 0..bytes.len() {
            let mut corrupt = bytes.clone();
            corrupt[at] ^= 0x5a;
            assert!(read(&corrupt).is_err(), "corruption at byte {at} was accepted");
        }
    }
}
