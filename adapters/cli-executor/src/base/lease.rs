//! Leases: at most one child per session, and the reaper of children a crashed executor
//! left behind.
//!
//! A lease is the file `<data_dir>/leases/<session>.lease` (mode 0600, its directory 0700):
//!
//! ```text
//! session=<id>
//! pgid=<process group, 0 while the child is being spawned>
//! start=<the leader's start time, clock ticks since boot>
//! boot=<boot id>
//! home=<the session's config home (CODEX_HOME or CLAUDE_CONFIG_DIR)>
//! ```
//!
//! Every write is atomic: the text goes to a private temporary file, is synced, and then
//! either hard-linked to the lease name ([`Leases::acquire`]: the link fails if a lease
//! exists, so two acquirers cannot both win) or renamed over it ([`Lease::record`]). A
//! reader never sees half a lease.
//!
//! **Reaping at start** ([`Leases::open`]): every lease left in the directory belongs to a
//! previous executor (this one has none yet); a reaped session's child `TMPDIR`
//! ([`crate::base::tmpdir`]) is removed with its lease. A lease from another boot, or whose group
//! has no live member, is removed. Otherwise the group is ended ([`crate::base::group::end`])
//! before the lease is removed, but only when it is still ours. The pid-reuse risk: the
//! recorded group id may, after the old group died, have become another process's. Two
//! checks limit it. The leader `/proc/<pgid>` must have the recorded start time (a reused
//! pid starts later). If the leader is gone but members live, the id cannot have been
//! reused (Linux keeps a pid allocated while a group still carries it), and one member
//! must still carry the session's config home (`CODEX_HOME` or `CLAUDE_CONFIG_DIR`) in its
//! environment. What is left is a group id reused after a pid wraparound by a new leader
//! that died leaving members that carry our config home: not a realistic case.

use crate::Error;
use crate::base::group::{self, Stat};
use crate::base::limits::{LEASE_BYTES_MAX, LEASES_MAX, SESSION_ID_BYTES_MAX};
use crate::base::tmpdir::{self, SHORT_TMP_ROOT};
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The variables that name a session's config home, one per CLI: the reaper recognizes a
/// child of ours by one of them.
pub const HOME_VARS: [&str; 2] = ["CODEX_HOME", "CLAUDE_CONFIG_DIR"];

/// Distinguishes this process's temporary files from each other.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// The lease directory of one executor data dir.
#[derive(Debug, Clone)]
pub struct Leases {
    dir: PathBuf,
}

/// What the reaper did with one lease it found at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reaped {
    /// The group was still alive and ours: it was ended, the lease removed.
    Killed {
        /// The session.
        session: String,
        /// The group.
        pgid: i32,
    },
    /// Nothing of it was alive (or it was from another boot): the lease was removed.
    Gone {
        /// The session.
        session: String,
    },
    /// The group id now belongs to someone else: nothing was signalled, the lease removed.
    Reused {
        /// The session.
        session: String,
        /// The group id.
        pgid: i32,
    },
    /// The file did not parse (written by hand, or by something else): it was removed.
    Corrupt {
        /// Its path.
        path: String,
    },
}

/// One session's lease, held while its child lives. Dropping it keeps the file: only
/// [`Lease::release`] (after the child is gone) removes it, and an executor that crashed
/// leaves it for the reaper.
#[derive(Debug)]
pub struct Lease {
    dir: PathBuf,
    session: String,
    home: PathBuf,
}

/// A lease file's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    session: String,
    pgid: i32,
    start: u64,
    boot: String,
    home: String,
}

impl Leases {
    /// Opens `<data_dir>/leases` (creating it, mode 0700) and reaps what a previous
    /// executor left there: the report says what was done with each lease.
    pub async fn open(data_dir: &Path) -> Result<(Leases, Vec<Reaped>), Error> {
        let dir = data_dir.join("leases");
        DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(|e| Error::io("create", &dir, &e))?;
        let leases = Leases { dir };
        let mut reaped = Vec::new();
        let uid = rustix::process::geteuid().as_raw();
        for path in leases.files()? {
            let report = reap(&path).await?;
            if let Reaped::Killed { session, .. } | Reaped::Gone { session } | Reaped::Reused { session, .. } = &report
            {
                // The dead child's own TMPDIR (under /tmp when the session's own was too
                // long) goes with it; the next spawn would clear it anyway.
                let tmp = tmpdir::choose(&data_dir.join("sessions").join(session), Path::new(SHORT_TMP_ROOT), uid);
                if let Err(e) = tmpdir::remove(&tmp.path) {
                    tracing::warn!(code = e.code(), "{e}");
                }
            }
            reaped.push(report);
        }
        Ok((leases, reaped))
    }

    /// Takes the lease of `session`, whose child will get `home` as its config home;
    /// [`Error::Leased`] if the session has one.
    pub fn acquire(&self, session: &str, home: &Path) -> Result<Lease, Error> {
        check_session(session)?;
        let lease = Lease { dir: self.dir.clone(), session: session.to_string(), home: home.to_path_buf() };
        let temp = lease.write_temp(0, 0)?;
        let linked = fs::hard_link(&temp, lease.path());
        remove_quietly(&temp);
        match linked {
            Ok(()) => {
                sync_dir(&self.dir)?;
                Ok(lease)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let pgid = read(&lease.path()).ok().flatten().map_or(0, |r| r.pgid);
                Err(Error::Leased { session: session.to_string(), pgid })
            }
            Err(e) => Err(Error::io("link lease", &lease.path(), &e)),
        }
    }

    /// The lease files, at most [`LEASES_MAX`].
    fn files(&self) -> Result<Vec<PathBuf>, Error> {
        let entries = fs::read_dir(&self.dir).map_err(|e| Error::io("list", &self.dir, &e))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "lease"))
            .take(LEASES_MAX)
            .collect();
        files.sort();
        Ok(files)
    }
}

impl Lease {
    /// The session it is for.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Records the child's group (its leader's pid), atomically replacing the lease text.
    pub fn record(&self, pgid: i32) -> Result<(), Error> {
        let start = group::stat(pgid).map_or(0, |s| s.start_ticks);
        let temp = self.write_temp(pgid, start)?;
        let renamed = fs::rename(&temp, self.path());
        if renamed.is_err() {
            remove_quietly(&temp);
        }
        renamed.map_err(|e| Error::io("replace lease", &self.path(), &e))?;
        sync_dir(&self.dir)
    }

    /// Gives the lease up: call only once the child's group is gone.
    pub fn release(self) -> Result<(), Error> {
        let path = self.path();
        fs::remove_file(&path).map_err(|e| Error::io("remove lease", &path, &e))?;
        sync_dir(&self.dir)
    }

    fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.lease", self.session))
    }

    /// Writes the lease text to a new private file (0600, synced) and returns its path.
    fn write_temp(&self, pgid: i32, start: u64) -> Result<PathBuf, Error> {
        let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let temp = self.dir.join(format!(".{}.{}.{seq}.tmp", self.session, std::process::id()));
        let text = format!(
            "session={}\npgid={pgid}\nstart={start}\nboot={}\nhome={}\n",
            self.session,
            group::boot_id(),
            self.home.display()
        );
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)
            .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_all()));
        if let Err(e) = written {
            remove_quietly(&temp);
            return Err(Error::io("write lease", &temp, &e));
        }
        Ok(temp)
    }
}

/// A session id names files: `[A-Za-z0-9_.-]`, no leading dot, at most
/// [`SESSION_ID_BYTES_MAX`] bytes.
pub fn check_session(session: &str) -> Result<(), Error> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let good = !session.is_empty()
        && session.len() <= SESSION_ID_BYTES_MAX
        && !session.starts_with('.')
        && session.chars().all(allowed);
    if good { Ok(()) } else { Err(Error::BadSession { session: session.to_string() }) }
}

/// Reaps one lease left by a previous executor (see the module doc).
async fn reap(path: &Path) -> Result<Reaped, Error> {
    let report = match read(path)? {
        None => Reaped::Corrupt { path: path.display().to_string() },
        Some(record) if record.pgid <= 1 || record.boot != group::boot_id() => Reaped::Gone { session: record.session },
        Some(record) => match ours(&record) {
            Ownership::Dead => Reaped::Gone { session: record.session },
            Ownership::Other => Reaped::Reused { session: record.session, pgid: record.pgid },
            Ownership::Ours => {
                group::end(record.pgid).await?;
                Reaped::Killed { session: record.session, pgid: record.pgid }
            }
        },
    };
    fs::remove_file(path).map_err(|e| Error::io("remove lease", path, &e))?;
    Ok(report)
}

/// Whose the recorded group is now.
enum Ownership {
    /// No live member.
    Dead,
    /// Live, but not the session's child (a reused id).
    Other,
    /// Live and the session's child.
    Ours,
}

fn ours(record: &Record) -> Ownership {
    let members = group::members(record.pgid);
    if members.is_empty() {
        return Ownership::Dead;
    }
    let identified = match group::stat(record.pgid) {
        Some(Stat { pgrp, start_ticks, .. }) if pgrp == record.pgid => start_ticks == record.start,
        Some(_) => false,
        None => members.iter().any(|&pid| HOME_VARS.iter().any(|var| group::environ_has(pid, var, &record.home))),
    };
    if identified { Ownership::Ours } else { Ownership::Other }
}

/// Reads a lease; `Ok(None)` when it does not parse.
fn read(path: &Path) -> Result<Option<Record>, Error> {
    let mut text = String::new();
    File::open(path)
        .and_then(|file| file.take(LEASE_BYTES_MAX).read_to_string(&mut text))
        .map_err(|e| Error::io("read lease", path, &e))?;
    let field =
        |name: &str| text.lines().find_map(|line| line.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')));
    let parsed = (|| {
        Some(Record {
            session: field("session")?.to_string(),
            pgid: field("pgid")?.parse().ok()?,
            start: field("start")?.parse().ok()?,
            boot: field("boot")?.to_string(),
            home: field("home")?.to_string(),
        })
    })();
    Ok(parsed.filter(|record| check_session(&record.session).is_ok()))
}

fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io("sync", dir, &e))
}

fn remove_quietly(path: &Path) {
    // A leftover temporary file is harmless (not `*.lease`); there is nothing to report.
    let _ = fs::remove_file(path);
}
