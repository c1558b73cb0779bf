//! Process groups, seen through Linux `/proc` and signalled with rustix: the one place the
//! executor kills anything.
//!
//! A child runs as the leader of its own group (`process_group(0)`), so whatever it forks
//! (the agent's shell commands, a stuck grandchild) shares the group id and is reached by
//! one `kill(-pgid, ..)`. [`end`] is the stop: `SIGTERM` to the group, up to
//! [`STOP_GRACE_MS`] for every member to end, then `SIGKILL`, up to [`STOP_KILL_WAIT_MS`].
//! A member "lives" while `/proc/<pid>/stat` names the group and its state is not zombie
//! (`Z`) or dead (`X`): a zombie runs nothing, and its reaping belongs to its parent (us,
//! for the leader; init or a subreaper for an orphaned grandchild).

use crate::Error;
use crate::base::limits::{GROUP_POLL_MS, STOP_GRACE_MS, STOP_KILL_WAIT_MS};
use rustix::process::{Pid, Signal, getpgid, kill_process_group};
use std::fs;
use std::time::{Duration, Instant};

/// What `/proc/<pid>/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The state letter (`R`, `S`, `D`, `T`, `Z`, ...).
    pub state: char,
    /// The process group.
    pub pgrp: i32,
    /// Start time in clock ticks since boot: with the boot id, a pid's identity (a reused
    /// pid starts later).
    pub start_ticks: u64,
}

impl Stat {
    /// Runs something: not a zombie, not dead.
    pub fn lives(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// Reads `/proc/<pid>/stat`; `None` when the process does not exist (or the file does not
/// parse, which the kernel does not produce).
pub fn stat(pid: i32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or parentheses: the
    // fields after the last `)` are plain.
    let rest = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), pgrp (5), ..., starttime (22).
    let state = fields.first()?.chars().next()?;
    let pgrp = fields.get(2)?.parse().ok()?;
    let start_ticks = fields.get(19)?.parse().ok()?;
    Some(Stat { state, pgrp, start_ticks })
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`): a lease from another boot names
/// groups that cannot exist any more.
pub fn boot_id() -> String {
    fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// The live members of group `pgid`, by scanning `/proc` (bounded by the process count).
pub fn members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| stat(pid).is_some_and(|s| s.pgrp == pgid && s.lives()))
        .collect()
}

/// Whether a process's initial environment holds exactly `NAME=value`.
pub fn environ_has(pid: i32, name: &str, value: &str) -> bool {
    let wanted = format!("{name}={value}");
    fs::read(format!("/proc/{pid}/environ"))
        .map(|bytes| bytes.split(|&b| b == 0).any(|entry| entry == wanted.as_bytes()))
        .unwrap_or(false)
}

/// Sends `signal` to every member of group `pgid`. A group that is already gone is fine.
fn signal(pgid: i32, signal: Signal) -> Result<(), Error> {
    let Some(pid) = Pid::from_raw(pgid) else { return Err(Error::StopFailed { pgid }) };
    // Never the init "group" (kill(-1) reaches every process we may signal) and never our
    // own group: a corrupt lease must not turn a stop into a massacre.
    let own = getpgid(None).map(Pid::as_raw_pid).unwrap_or(0);
    if pgid <= 1 || pgid == own {
        return Err(Error::StopFailed { pgid });
    }
    match kill_process_group(pid, signal) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
        Err(errno) => Err(Error::Io { op: "signal process group", path: pgid.to_string(), detail: errno.to_string() }),
    }
}

/// Ends group `pgid`: `SIGTERM`, then `SIGKILL` once [`STOP_GRACE_MS`] passed with members
/// alive; [`Error::StopFailed`] if some still live [`STOP_KILL_WAIT_MS`] later.
pub async fn end(pgid: i32) -> Result<(), Error> {
    signal(pgid, Signal::TERM)?;
    if gone_within(pgid, STOP_GRACE_MS).await {
        return Ok(());
    }
    signal(pgid, Signal::KILL)?;
    if gone_within(pgid, STOP_KILL_WAIT_MS).await {
        return Ok(());
    }
    Err(Error::StopFailed { pgid })
}

/// `SIGKILL` to the group without waiting: the last resort of a dropped child.
pub fn kill_now(pgid: i32) {
    // Best effort by design: nothing is left to report the error to.
    let _ = signal(pgid, Signal::KILL);
}

/// Polls `/proc` every [`GROUP_POLL_MS`] until group `pgid` has no live member, at most
/// `ms` milliseconds.
async fn gone_within(pgid: i32, ms: u64) -> bool {
    let deadline = Instant::now() + Duration::from_millis(ms);
    loop {
        if members(pgid).is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(GROUP_POLL_MS)).await;
    }
}
