//! What a start reads and refuses before the store serves: the journal pre-scan's
//! verdict (`precheck`, before fjall opens anything) and the logs (`read_logs`, after:
//! the checkpoint key, the log files and the old log keyspaces).

use crate::checkpoint::Found;
use crate::counters::{read_checkpointed, read_commits};
use crate::error::{Corruption, Error, StoredKey};
use crate::group_log;
use crate::journal_scan::{self, JournalScan, Tail};
use crate::key;
use crate::log_file::{self, LOG_FILE_NAMES};
use crate::mark;
use fjall::Keyspace;
use std::path::Path;

/// Reads what a start needs of the logs: the checkpoint key, the log files (refusing
/// damage no crash leaves, and a missing file the format marker says exists) and a
/// store's old log keyspaces; and the commit counter with its version.
pub(crate) fn read_logs(
    dir: &Path,
    state: &Keyspace,
    legacy: &[Keyspace; 2],
) -> Result<(Found, Option<(u8, u64)>), Error> {
    let counter = read_commits(dir, state)?;
    let checkpointed = read_checkpointed(dir, state)?;
    let legacy = group_log::replay_keyspaces(dir, [&legacy[0], &legacy[1]], checkpointed)?;
    let data_dir_error = |source| Error::DataDir { dir: dir.to_path_buf(), source };
    let reads = [
        log_file::read(&dir.join(LOG_FILE_NAMES[0])).map_err(data_dir_error)?,
        log_file::read(&dir.join(LOG_FILE_NAMES[1])).map_err(data_dir_error)?,
    ];
    let marked = counter.is_some_and(|(version, _)| version == key::COMMITS_VALUE_VERSION_LOG_FILES);
    for read in &reads {
        if marked && !read.exists {
            return Err(Error::JournalDamaged {
                dir: dir.to_path_buf(),
                file: read.path.clone(),
                offset: 0,
                detail: "the store's format marker says its group log files exist, but this one is missing: the commits in it since the last checkpoint are lost".into(),
            });
        }
        if let Some((offset, detail)) = read.damage(checkpointed) {
            return Err(Error::JournalDamaged { dir: dir.to_path_buf(), file: read.path.clone(), offset, detail });
        }
    }
    let replayed = log_file::replay(&reads, checkpointed)?;
    if legacy.is_some() && replayed.interrupted.is_some() {
        return Err(Error::Corrupt {
            key: StoredKey(key::CHECKPOINT_KEY.to_vec()),
            problem: Corruption::Payload {
                detail: "the old group log keyspaces and both group log files hold commits after the checkpoint, which no store leaves".into(),
            },
        });
    }
    let newest = [0, 1].map(|i| reads[i].commits().map_or(0, |(_, last)| last));
    let mut ends = [0, 0];
    if newest[replayed.active] > checkpointed {
        ends[replayed.active] = reads[replayed.active].end;
    }
    Ok((Found { replayed, ends, newest, legacy, checkpointed }, counter))
}

/// Refuses, before fjall opens anything, every journal that fjall would cut below what
/// was acknowledged or that holds damage no torn write explains.
pub(crate) fn precheck(
    dir: &Path,
    scan: &JournalScan,
    acknowledged: Option<u64>,
    log_files: bool,
) -> Result<(), Error> {
    let damaged = |file: &journal_scan::JournalFile, detail: String| Error::JournalDamaged {
        dir: dir.to_path_buf(),
        file: file.path.clone(),
        offset: file.valid_end,
        detail,
    };
    if let Some(file) = scan.damaged_sealed() {
        let Tail::Data { reason, .. } = &file.tail else { unreachable!("damaged_sealed returns a file with data") };
        return Err(damaged(
            file,
            format!(
                "a sealed journal holds undecodable bytes after its last whole batch ({reason}); opening would drop what follows"
            ),
        ));
    }
    if let Some(gap) = &scan.gap {
        return Err(Error::JournalDamaged {
            dir: dir.to_path_buf(),
            file: gap.path.clone(),
            offset: gap.offset,
            detail: format!("commit {} is followed by commit {}: the commits between are missing", gap.after, gap.next),
        });
    }
    if let Some(file) = scan.files.last()
        && let Tail::Data { first_nonzero, last_nonzero_end, reason, .. } = &file.tail
        && last_nonzero_end - file.valid_end > journal_scan::TAIL_KEEP_BYTES_MAX
    {
        return Err(damaged(
            file,
            format!(
                "{} bytes that do not decode follow the last whole batch (from offset {first_nonzero}: {reason}), more than one torn write leaves; opening would drop them",
                last_nonzero_end - file.valid_end
            ),
        ));
    }
    if let Some(file) = scan.files.last()
        && let Tail::Data { first_nonzero, reason, torn_like: false, .. } = &file.tail
    {
        return Err(damaged(
            file,
            format!(
                "bytes that no torn write leaves follow the last whole batch (from offset {first_nonzero}: {reason}); opening would drop them"
            ),
        ));
    }
    match (acknowledged, scan.commits_last) {
        (None, Some(recovered)) => Err(Error::MarkMissing { path: dir.join(mark::MARK_FILE_NAME), recovered }),
        (Some(acknowledged), Some(recovered)) if recovered < acknowledged && !log_files => {
            let (file, detail) = match scan.first_damaged() {
                Some(file @ journal_scan::JournalFile { tail: Tail::Data { reason, .. }, .. }) => {
                    (file.path.clone(), format!("the journal stops decoding at offset {}: {reason}", file.valid_end))
                }
                _ => (
                    scan.files.last().map(|f| f.path.clone()).unwrap_or_else(|| dir.to_path_buf()),
                    "the journal ends there".into(),
                ),
            };
            Err(Error::BehindAcknowledged { dir: dir.to_path_buf(), file, recovered, acknowledged, detail })
        }
        _ => Ok(()),
    }
}
