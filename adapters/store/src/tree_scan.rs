//! A read-only pre-scan of lsm-tree's version and table files, done before fjall opens
//! the database, so that a damaged one is a typed refusal and never a panic.
//!
//! lsm-tree 3.1 trusts what its open reads: a version file section it does not like
//! fails an `assert!` (`manifest.rs`: "level count should be 7", "filter_hash_type
//! should be XXH3"), a table's trailer points its table-of-contents reader anywhere
//! (whose entry count then sizes an allocation before any checksum is checked), and a
//! directory where a file belongs fails another. A panic inside fjall's open poisons a
//! lock that fjall's destructor then unwraps, and that second panic aborts the process:
//! nothing a caller does (not even `catch_unwind`) gets the daemon back.
//!
//! Every byte lsm-tree's open reads is covered by a checksum it writes, so the scan checks
//! those checksums itself, in the order the open reads, on lsm-tree 3.1's formats:
//! - `current` (25 bytes: version id u64 LE, the xxh3-128 of the version file u128 LE,
//!   checksum type 0), which lsm-tree reads without checking (a "TODO" in
//!   `version/recovery.rs`);
//! - the version file `vK` whole against that checksum, then its manifest sections (the
//!   values lsm-tree asserts on) and its `tables` section: the tables of the tree, each
//!   with the xxh3-128 of the whole table file;
//! - per table: the sfa trailer (magic `SFA!`, version 1, checksum type 0, the TOC's
//!   checksum and position), the table of contents read within the file's bounds against
//!   its xxh3-128, then every block the open reads (`meta`, `tli`, `filter_tli`, and
//!   `filter` when it is one block): magic `LSM\x03`, block type, the header's own 32-bit
//!   checksum and the xxh3-128 of the block's data.
//!
//! A file that passes is byte for byte what lsm-tree wrote, and what lsm-tree wrote it
//! reads without a panic. Data and index blocks are not read here: lsm-tree checks their
//! checksums whenever it reads them, and reports a mismatch as an error. `verify` asks for
//! the whole of every table file to be checked against its version's checksum as well.
//!
//! The scan only reads, and stops at the first damage: what it returns names the file.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// fjall's keyspace folder inside the database directory.
const KEYSPACES_DIR_NAME: &str = "keyspaces";
/// lsm-tree's pointer to the current version file.
const CURRENT_FILE_NAME: &str = "current";
/// lsm-tree's table folder inside a tree.
const TABLES_DIR_NAME: &str = "tables";
/// Length of `current`: id, checksum, checksum type.
const CURRENT_FILE_BYTES: usize = 8 + 16 + 1;
/// sfa's trailer: magic, version, checksum type, TOC checksum, TOC position, TOC length.
const SFA_TRAILER_BYTES: u64 = 4 + 1 + 1 + 16 + 8 + 8;
const SFA_TRAILER_MAGIC: &[u8; 4] = b"SFA!";
const SFA_TOC_MAGIC: &[u8; 4] = b"TOC!";
/// An sfa TOC entry without its name: position, length, name length.
const SFA_TOC_ENTRY_BYTES_MIN: u64 = 8 + 8 + 2;
/// lsm-tree's block header: magic, type, data checksum, two lengths, header checksum.
const BLOCK_HEADER_BYTES: usize = 4 + 1 + 16 + 4 + 4 + 4;
const BLOCK_MAGIC: [u8; 4] = [b'L', b'S', b'M', 3];
/// Largest block type lsm-tree knows (data 0, index 1, filter 2, meta 3).
const BLOCK_TYPE_MAX: u8 = 3;
/// lsm-tree's on-disk format version, and the level count it asserts.
const FORMAT_VERSION: u8 = 3;
const LEVEL_COUNT: u8 = 7;
/// Largest version file the scan reads into memory (a version lists tables, ~33 bytes
/// each: this is far above any real one, and bounds what a damaged `current` can make
/// the scan read).
const VERSION_FILE_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// Largest table of contents the scan reads (a table has about six sections).
const TOC_BYTES_MAX: u64 = 1024 * 1024;
/// Read size when a whole table file is hashed.
const HASH_READ_BYTES: usize = 1024 * 1024;

/// Where the scan found damage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The damaged file (or directory).
    pub file: PathBuf,
    /// What is wrong, in a sentence.
    pub detail: String,
}

/// What a scan that found nothing wrong checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeScan {
    /// Trees (fjall's meta keyspace and every keyspace) whose version file was checked.
    pub trees: usize,
    /// Tables checked.
    pub tables: usize,
    /// Bytes of table files hashed whole (only with `whole_tables`).
    pub table_bytes_hashed: u64,
}

/// Scans the database directory `db_path` (read-only). `Ok(Err(damage))` is damage;
/// `Err` an I/O error other than a missing or short file. With `whole_tables`, every
/// table file is also hashed whole against the checksum its version records.
pub fn scan(db_path: &Path, whole_tables: bool) -> io::Result<Result<TreeScan, Damage>> {
    let mut out = TreeScan::default();
    // fjall asserts that every `*.jnl` entry is a file.
    for entry in std::fs::read_dir(db_path)? {
        let entry = entry?;
        let name = entry.file_name();
        let is_journal = Path::new(&name).extension().is_some_and(|e| e.eq_ignore_ascii_case("jnl"));
        if is_journal && !entry.file_type()?.is_file() {
            return Ok(Err(Damage { file: entry.path(), detail: "a journal name that is not a file".into() }));
        }
    }
    let keyspaces = db_path.join(KEYSPACES_DIR_NAME);
    let entries = match std::fs::read_dir(&keyspaces) {
        Ok(entries) => entries,
        // fjall reports a missing folder as an error of its own.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Ok(out)),
        Err(e) => return Err(e),
    };
    let mut trees = Vec::new();
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue; // fjall skips stray files here
        }
        // fjall expects every folder here to be named by a number.
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.parse::<u64>().ok()) else {
            return Ok(Err(Damage {
                file: entry.path(),
                detail: "a keyspace folder whose name is not a keyspace id".into(),
            }));
        };
        trees.push((id, entry.path()));
    }
    trees.sort();
    for (_, tree) in trees {
        if !tree.join(CURRENT_FILE_NAME).try_exists()? {
            // fjall removes a keyspace folder without `current` as one whose creation
            // was interrupted: fine while it holds nothing, data lost if it does.
            if let Some(held) = tree_holds_data(&tree)? {
                return Ok(Err(Damage {
                    file: tree.join(CURRENT_FILE_NAME),
                    detail: format!(
                        "missing, but the keyspace folder holds {}: fjall would delete the folder",
                        held.display()
                    ),
                }));
            }
            continue;
        }
        if let Err(damage) = scan_tree(&tree, whole_tables, &mut out)? {
            return Ok(Err(damage));
        }
        out.trees += 1;
    }
    Ok(Ok(out))
}

/// A version file or table in the tree folder `tree`, if it has one.
fn tree_holds_data(tree: &Path) -> io::Result<Option<PathBuf>> {
    for entry in std::fs::read_dir(tree)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| n.starts_with('v')) && entry.file_type()?.is_file() {
            return Ok(Some(entry.path()));
        }
    }
    match std::fs::read_dir(tree.join(TABLES_DIR_NAME)) {
        Ok(mut tables) => tables.next().transpose().map(|e| e.map(|e| e.path())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads `len` bytes at `offset`, or `None` if the file is shorter.
fn read_at(file: &File, offset: u64, len: usize) -> io::Result<Option<Vec<u8>>> {
    let mut buf = vec![0; len];
    match file.read_exact_at(&mut buf, offset) {
        Ok(()) => Ok(Some(buf)),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("eight bytes"))
}

fn le_u128(bytes: &[u8]) -> u128 {
    u128::from_le_bytes(bytes[..16].try_into().expect("sixteen bytes"))
}

/// One section of an sfa archive.
struct Section {
    name: Vec<u8>,
    pos: u64,
    len: u64,
}

/// Reads an sfa archive's trailer and table of contents, checking the TOC's checksum.
/// `Ok(Err(detail))` is damage.
fn read_toc(file: &File, len: u64) -> io::Result<Result<Vec<Section>, String>> {
    if len < SFA_TRAILER_BYTES {
        return Ok(Err(format!("{len} bytes, shorter than an sfa trailer")));
    }
    let trailer_at = len - SFA_TRAILER_BYTES;
    let Some(trailer) = read_at(file, trailer_at, SFA_TRAILER_BYTES as usize)? else {
        return Ok(Err("the file ends inside its trailer".into()));
    };
    if &trailer[0..4] != SFA_TRAILER_MAGIC {
        return Ok(Err(format!("bad sfa trailer magic at offset {trailer_at}")));
    }
    if trailer[4] != 1 || trailer[5] != 0 {
        return Ok(Err(format!("unknown sfa version {} or checksum type {}", trailer[4], trailer[5])));
    }
    let toc_checksum = le_u128(&trailer[6..22]);
    let toc_pos = le_u64(&trailer[22..30]);
    // The TOC lies between its position and the trailer; lsm-tree would seek to any
    // position and size a vector by whatever count it finds there.
    if toc_pos >= trailer_at || trailer_at - toc_pos < 8 || trailer_at - toc_pos > TOC_BYTES_MAX {
        return Ok(Err(format!("the trailer puts the table of contents at offset {toc_pos}, outside the file")));
    }
    let Some(toc) = read_at(file, toc_pos, (trailer_at - toc_pos) as usize)? else {
        return Ok(Err("the file ends inside its table of contents".into()));
    };
    if &toc[0..4] != SFA_TOC_MAGIC {
        return Ok(Err(format!("bad table-of-contents magic at offset {toc_pos}")));
    }
    let count = u32::from_le_bytes(toc[4..8].try_into().expect("four bytes"));
    if u64::from(count) * SFA_TOC_ENTRY_BYTES_MIN > toc.len() as u64 - 8 {
        return Ok(Err(format!("the table of contents claims {count} entries, more than fit before the trailer")));
    }
    let mut at = 8;
    let mut sections = Vec::with_capacity(count as usize);
    for _ in 0..count {
        if toc.len() - at < SFA_TOC_ENTRY_BYTES_MIN as usize {
            return Ok(Err("the table of contents runs into the trailer".into()));
        }
        let pos = le_u64(&toc[at..]);
        let section_len = le_u64(&toc[at + 8..]);
        let name_len = usize::from(u16::from_le_bytes([toc[at + 16], toc[at + 17]]));
        at += SFA_TOC_ENTRY_BYTES_MIN as usize;
        if toc.len() - at < name_len {
            return Ok(Err("the table of contents runs into the trailer".into()));
        }
        sections.push(Section { name: toc[at..at + name_len].to_vec(), pos, len: section_len });
        at += name_len;
    }
    let computed = xxhash_rust::xxh3::xxh3_128(&toc[..at]);
    if computed != toc_checksum {
        return Ok(Err(format!(
            "table-of-contents checksum mismatch at offset {toc_pos}: stored {toc_checksum:#034x}, computed {computed:#034x}"
        )));
    }
    for s in &sections {
        if s.pos.checked_add(s.len).is_none_or(|end| end > len) {
            return Ok(Err(format!("section {:?} runs past the end of the file", String::from_utf8_lossy(&s.name))));
        }
    }
    Ok(Ok(sections))
}

fn section<'a>(sections: &'a [Section], name: &[u8]) -> Option<&'a Section> {
    sections.iter().find(|s| s.name == name)
}

/// Checks `current`, the version file it names and every table of the tree in `tree`.
fn scan_tree(tree: &Path, whole_tables: bool, out: &mut TreeScan) -> io::Result<Result<(), Damage>> {
    let current_path = tree.join(CURRENT_FILE_NAME);
    let damage = |file: &Path, detail: String| Ok(Err(Damage { file: file.to_path_buf(), detail }));
    let current = std::fs::read(&current_path)?;
    if current.len() != CURRENT_FILE_BYTES || current[24] != 0 {
        return damage(&current_path, format!("{} bytes that are not a version pointer", current.len()));
    }
    let version_id = le_u64(&current[0..8]);
    let version_checksum = le_u128(&current[8..24]);
    let version_path = tree.join(format!("v{version_id}"));
    let version = match File::open(&version_path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return damage(&current_path, format!("names version file v{version_id}, which does not exist"));
        }
        Err(e) => return Err(e),
    };
    let version_len = version.metadata()?.len();
    if version_len > VERSION_FILE_BYTES_MAX {
        return damage(&version_path, format!("{version_len} bytes, larger than any version file"));
    }
    let Some(bytes) = read_at(&version, 0, version_len as usize)? else {
        return damage(&version_path, "the file shrank while it was read".into());
    };
    let computed = xxhash_rust::xxh3::xxh3_128(&bytes);
    if computed != version_checksum {
        return damage(
            &version_path,
            format!(
                "does not match the checksum {} records for it (stored {version_checksum:#034x}, computed {computed:#034x})",
                current_path.display()
            ),
        );
    }
    // From here the version file is byte for byte what lsm-tree wrote; what follows
    // checks what lsm-tree asserts on, so that a file from another writer is refused too.
    let sections = match read_toc(&version, version_len)? {
        Ok(sections) => sections,
        Err(detail) => return damage(&version_path, detail),
    };
    let byte = |name: &[u8]| section(&sections, name).filter(|s| s.len == 1).map(|s| bytes[s.pos as usize]);
    if byte(b"format_version") != Some(FORMAT_VERSION) {
        return damage(&version_path, format!("not an lsm-tree format version {FORMAT_VERSION} file"));
    }
    if byte(b"level_count") != Some(LEVEL_COUNT)
        || byte(b"filter_hash_type") != Some(0)
        || byte(b"tree_type") != Some(0)
    {
        return damage(
            &version_path,
            "a manifest lsm-tree 3.1 does not accept (levels, filter hash or tree type)".into(),
        );
    }
    let Some(tables) = section(&sections, b"tables") else {
        return damage(&version_path, "no tables section".into());
    };
    let listed = match parse_tables(&bytes[tables.pos as usize..(tables.pos + tables.len) as usize]) {
        Some(listed) => listed,
        None => return damage(&version_path, "a tables section that does not parse".into()),
    };
    let tables_dir = tree.join(TABLES_DIR_NAME);
    if let Ok(entries) = std::fs::read_dir(&tables_dir) {
        // lsm-tree asserts that nothing in the table folder is a directory.
        for entry in entries {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                return damage(&entry.path(), "a directory among the tables".into());
            }
        }
    }
    for (id, checksum) in listed {
        let path = tables_dir.join(id.to_string());
        match scan_table(&path, whole_tables.then_some(checksum), out)? {
            Ok(()) => out.tables += 1,
            Err(detail) => return damage(&path, detail),
        }
    }
    Ok(Ok(()))
}

/// The `(table id, whole-file checksum)` pairs of a version's `tables` section.
fn parse_tables(mut bytes: &[u8]) -> Option<Vec<(u64, u128)>> {
    fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (head, rest) = bytes.split_at_checked(n)?;
        *bytes = rest;
        Some(head)
    }
    let mut out = Vec::new();
    let levels = take(&mut bytes, 1)?[0];
    for _ in 0..levels {
        let runs = take(&mut bytes, 1)?[0];
        for _ in 0..runs {
            let count = u32::from_le_bytes(take(&mut bytes, 4)?.try_into().ok()?);
            for _ in 0..count {
                let id = le_u64(take(&mut bytes, 8)?);
                if take(&mut bytes, 1)?[0] != 0 {
                    return None;
                }
                let checksum = le_u128(take(&mut bytes, 16)?);
                take(&mut bytes, 8)?; // global sequence number
                out.push((id, checksum));
            }
        }
    }
    Some(out)
}

/// Checks one table: its trailer, table of contents and the blocks lsm-tree's open
/// reads; with `whole`, the whole file against that checksum. `Ok(Err)` is damage.
fn scan_table(path: &Path, whole: Option<u128>, out: &mut TreeScan) -> io::Result<Result<(), String>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Err("listed by the current version but missing".into()));
        }
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let sections = match read_toc(&file, len)? {
        Ok(sections) => sections,
        Err(detail) => return Ok(Err(detail)),
    };
    let filter_tli = section(&sections, b"filter_tli");
    let mut blocks = vec![("meta", section(&sections, b"meta")), ("tli", section(&sections, b"tli"))];
    blocks.push(("filter_tli", filter_tli));
    if filter_tli.is_none() {
        blocks.push(("filter", section(&sections, b"filter")));
    }
    for (name, s) in blocks {
        let Some(s) = s else {
            if matches!(name, "meta" | "tli") {
                return Ok(Err(format!("no {name} section")));
            }
            continue;
        };
        if let Err(detail) = check_block(&file, s)? {
            return Ok(Err(format!("{name} block at offset {}: {detail}", s.pos)));
        }
    }
    if let Some(expected) = whole {
        let mut hasher = xxhash_rust::xxh3::Xxh3Default::new();
        let mut buf = vec![0; HASH_READ_BYTES];
        let mut at = 0;
        while at < len {
            let n = (len - at).min(HASH_READ_BYTES as u64) as usize;
            file.read_exact_at(&mut buf[..n], at)?;
            hasher.update(&buf[..n]);
            at += n as u64;
        }
        out.table_bytes_hashed += len;
        let computed = hasher.digest128();
        if computed != expected {
            return Ok(Err(format!(
                "the file does not match the checksum its version records (stored {expected:#034x}, computed {computed:#034x}): some block in it is damaged"
            )));
        }
    }
    Ok(Ok(()))
}

/// Checks one block as lsm-tree's `Block::from_file` would read it.
fn check_block(file: &File, s: &Section) -> io::Result<Result<(), String>> {
    if s.len > u64::from(u32::MAX) || s.len < BLOCK_HEADER_BYTES as u64 {
        return Ok(Err(format!("{} bytes, not a block", s.len)));
    }
    let Some(buf) = read_at(file, s.pos, s.len as usize)? else {
        return Ok(Err("the file ends inside the block".into()));
    };
    if buf[0..4] != BLOCK_MAGIC {
        return Ok(Err("bad block magic".into()));
    }
    if buf[4] > BLOCK_TYPE_MAX {
        return Ok(Err(format!("unknown block type {}", buf[4])));
    }
    let header_checksum = u32::from_le_bytes(buf[29..33].try_into().expect("four bytes"));
    let computed = xxhash_rust::xxh3::xxh3_128(&buf[0..29]) as u32;
    if header_checksum != computed {
        return Ok(Err(format!(
            "block header checksum mismatch: stored {header_checksum:#010x}, computed {computed:#010x}"
        )));
    }
    let data_checksum = le_u128(&buf[5..21]);
    let computed = xxhash_rust::xxh3::xxh3_128(&buf[BLOCK_HEADER_BYTES..]);
    if data_checksum != computed {
        return Ok(Err(format!("block checksum mismatch: stored {data_checksum:#034x}, computed {computed:#034x}")));
    }
    Ok(Ok(()))
}
