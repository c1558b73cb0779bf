//! One CLI child, kept in hand: spawned under a lease, in its own process group, with its
//! own config home and an environment cleared down to an allowlist; lines in and out;
//! stopped by ending its whole group.
//!
//! [`Spawn`] says what to run (`codex app-server` or `claude -p`; tests pass a stand-in).
//! Each CLI's room adds its own constructor (`Spawn::codex` in `codex/home.rs`,
//! `Spawn::claude` in `claude/cli.rs`): this module knows how to keep a child, not which.
//! [`Child::spawn`] takes the session's lease, creates the session's own config home
//! (`<data_dir>/sessions/<session>/codex-home` as `CODEX_HOME`, or `.../claude-config` as
//! `CLAUDE_CONFIG_DIR`; mode 0700, kept across children of the session so a later
//! `thread/resume` or `--resume` finds its record there) and, for Codex, writes its
//! `config.toml` (0600) and login link ([`link_auth`]). The child starts in the worker's
//! directory as the leader of a new process group, with only the variables named in [`Spawn::env_pass`] copied from the
//! executor, plus [`Spawn::env_set`], the home variable and a private `TMPDIR`
//! ([`crate::base::tmpdir`]: `<session>/tmp` when short enough for Claude Code's sandbox
//! sockets, else a short one under `/tmp/orc-<uid>`; never a prefix of `CODEX_HOME`;
//! made afresh at each spawn and removed when the child stops): a
//! user's `~/.codex` or `~/.claude` hooks, plugins, MCP servers or loops cannot reach it.
//! `HOME` is passed on because the agent's own tools (git, ssh) read it; each CLI reads its
//! config from its home variable only.
//!
//! Stdout is read line by line, at most [`LINE_BYTES_MAX`] a line ([`Error::LineTooLong`]
//! past it, and the rest of that line is skipped); stderr is drained by a task that keeps
//! the last [`STDERR_TAIL_BYTES_MAX`]. [`Child::stop`] ends the group (`SIGTERM`, grace,
//! `SIGKILL`), reaps the leader and releases the lease. A child dropped without a stop
//! gets `SIGKILL` to its group; its lease stays for the reaper.

use crate::Error;
use crate::base::group;
use crate::base::lease::{Lease, Leases};
use crate::base::limits::{LINE_BYTES_MAX, STDERR_DRAIN_MS, STDERR_TAIL_BYTES_MAX};
use crate::base::tmpdir::{self, SHORT_TMP_ROOT, TmpDir};
use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};

/// Variables copied from the executor's environment when set: what a CLI needs to find
/// programs, decode text and keep temporary files, and nothing of the user's agent setup.
pub const ENV_PASS_DEFAULT: [&str; 9] =
    ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"];

/// The name of the login file in a `CODEX_HOME`.
pub const AUTH_FILE_NAME: &str = "auth.json";

/// What to run for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawn {
    /// The session: names the lease and the session's directory.
    pub session: String,
    /// The program (`codex`, or a stand-in in tests), looked up on the passed `PATH`.
    pub program: PathBuf,
    /// Its arguments (`app-server`, then any `-c key=value`).
    pub args: Vec<String>,
    /// The worker's working directory.
    pub cwd: PathBuf,
    /// The executor's data dir: leases and session homes live under it.
    pub data_dir: PathBuf,
    /// Variables copied from the executor's environment when set.
    pub env_pass: Vec<String>,
    /// Variables set for the child (after `env_pass`; the home variable and a private
    /// `TMPDIR` cannot be overridden).
    pub env_set: Vec<(String, String)>,
    /// The text of the session's `config.toml` (Codex); empty: no file is written.
    pub config_toml: String,
    /// The variable naming the config home (one of [`crate::base::lease::HOME_VARS`]).
    pub home_var: &'static str,
    /// The config home's directory name in the session's directory.
    pub home_dir: &'static str,
    /// Gives the child its own `TMPDIR` ([`tmpdir::choose`]).
    pub private_tmp: bool,
    /// The person's login file, linked in as the session's `auth.json`
    /// ([`link_auth`]); `None` removes a link an earlier start made.
    pub auth_link: Option<PathBuf>,
}

impl Spawn {
    /// The session's own config home (`CODEX_HOME` or `CLAUDE_CONFIG_DIR`).
    pub fn home(&self) -> PathBuf {
        self.session_dir().join(self.home_dir)
    }

    /// The child's own `TMPDIR`, when it has one: `<session>/tmp`, or a short private
    /// directory when that is too long ([`tmpdir::choose`]).
    pub fn tmp(&self) -> Option<TmpDir> {
        let uid = rustix::process::geteuid().as_raw();
        self.private_tmp.then(|| tmpdir::choose(&self.session_dir(), Path::new(SHORT_TMP_ROOT), uid))
    }

    fn session_dir(&self) -> PathBuf {
        self.data_dir.join("sessions").join(&self.session)
    }
}

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// Its exit code, if it exited.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// The end of its stderr (lossy UTF-8, untrusted).
    pub stderr_tail: String,
}

/// A running CLI child.
#[derive(Debug)]
pub struct Child {
    process: tokio::process::Child,
    /// `None` once closed: writes then fail with [`Error::ChildGone`].
    stdin: Option<ChildStdin>,
    stdout: Lines,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The task draining stderr: a stop waits for it (bounded) so the tail is complete.
    drain: tokio::task::JoinHandle<()>,
    /// The group id, the leader's pid.
    pgid: i32,
    /// `None` once released by a stop.
    lease: Option<Lease>,
    home: PathBuf,
    /// The child's own `TMPDIR`, removed when it stops.
    tmp: Option<PathBuf>,
}

impl Child {
    /// Spawns `spec` under a new lease of its session ([`Error::Leased`] if it has one).
    pub fn spawn(spec: &Spawn, leases: &Leases) -> Result<Child, Error> {
        let home = spec.home();
        let lease = leases.acquire(&spec.session, &home)?;
        match start(spec, &home) {
            Ok(mut child) => match lease.record(child.pgid) {
                Ok(()) => {
                    child.lease = Some(lease);
                    Ok(child)
                }
                Err(e) => {
                    // An unrecorded child must not outlive the failure: kill it now.
                    group::kill_now(child.pgid);
                    let _ = lease.release();
                    Err(e)
                }
            },
            Err(e) => {
                lease.release()?;
                Err(e)
            }
        }
    }

    /// The process group id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// The session's config home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Closes the child's stdin: a stream-json `claude` ends after its running turn.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Writes `line` and a newline to the child's stdin.
    pub async fn write_line(&mut self, line: &str) -> Result<(), Error> {
        let stdin = self.stdin.as_mut().ok_or(Error::ChildGone)?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let written = async { stdin.write_all(&bytes).await.and(stdin.flush().await) }.await;
        written.map_err(|_| {
            self.stdin = None;
            Error::ChildGone
        })
    }

    /// Writes some of `bytes` to the child's stdin and says how many. Cancel-safe: a
    /// dropped call wrote nothing, so a caller that keeps the rest loses no byte.
    pub async fn write_some(&mut self, bytes: &[u8]) -> Result<usize, Error> {
        let stdin = self.stdin.as_mut().ok_or(Error::ChildGone)?;
        match stdin.write(bytes).await {
            Ok(0) | Err(_) => {
                self.stdin = None;
                Err(Error::ChildGone)
            }
            Ok(n) => Ok(n),
        }
    }

    /// The next stdout line (without its newline); `None` at end of stream. Cancel-safe:
    /// a partial line survives a dropped call.
    pub async fn read_line(&mut self) -> Result<Option<String>, Error> {
        self.stdout.next().await
    }

    /// The last [`STDERR_TAIL_BYTES_MAX`] bytes of stderr so far.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().map(|tail| String::from_utf8_lossy(&tail).into_owned()).unwrap_or_default()
    }

    /// Ends the group, reaps the leader and releases the lease.
    pub async fn stop(mut self) -> Result<Exit, Error> {
        self.stdin = None;
        group::end(self.pgid).await?;
        let status = self.process.wait().await.map_err(|e| Error::io("wait", &self.home, &e))?;
        // The group is gone, so stderr is at its end unless a process that left the group
        // (`setsid`) still holds it: wait for the drain, but not for that one.
        let _ = tokio::time::timeout(Duration::from_millis(STDERR_DRAIN_MS), &mut self.drain).await;
        // The group is gone: its TMPDIR goes too. A failure here must not keep the lease
        // (the next spawn clears the directory anyway), so it is only logged.
        if let Some(tmp) = self.tmp.take()
            && let Err(e) = tmpdir::remove(&tmp)
        {
            tracing::warn!(code = e.code(), "{e}");
        }
        if let Some(lease) = self.lease.take() {
            lease.release()?;
        }
        Ok(Exit { code: status.code(), signal: status.signal(), stderr_tail: self.stderr_tail() })
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.lease.is_some() {
            group::kill_now(self.pgid);
        }
        if let Some(tmp) = self.tmp.take() {
            // Best effort: a member still dying may add a file; the next spawn clears it.
            let _ = tmpdir::remove(&tmp);
        }
        self.drain.abort();
    }
}

/// Creates the session home and starts the process (the lease is already held).
fn start(spec: &Spawn, home: &Path) -> Result<Child, Error> {
    DirBuilder::new().recursive(true).mode(0o700).create(home).map_err(|e| Error::io("create", home, &e))?;
    let tmp = spec.tmp();
    if let Some(tmp) = &tmp {
        tmpdir::prepare(tmp, home)?;
    }
    if !spec.config_toml.is_empty() {
        let config = home.join("config.toml");
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&config)
            .and_then(|mut file| file.write_all(spec.config_toml.as_bytes()))
            .map_err(|e| Error::io("write", &config, &e))?;
    }
    if spec.home_var == "CODEX_HOME" {
        link_auth(home, spec.auth_link.as_deref())?;
    }
    let mut command = Command::new(&spec.program);
    command.args(&spec.args).current_dir(&spec.cwd).env_clear().process_group(0);
    for name in &spec.env_pass {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command.envs(spec.env_set.iter().map(|(k, v)| (k, v))).env(spec.home_var, home);
    if let Some(tmp) = &tmp {
        command.env("TMPDIR", &tmp.path);
    }
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let spawn_error = |detail: String| Error::Spawn { program: spec.program.display().to_string(), detail };
    let tmp = tmp.map(|t| t.path);
    let mut process = match command.spawn() {
        Ok(process) => process,
        Err(e) => {
            if let Some(tmp) = &tmp {
                let _ = tmpdir::remove(tmp);
            }
            return Err(spawn_error(e.to_string()));
        }
    };
    let pipes = (process.id(), process.stdin.take(), process.stdout.take(), process.stderr.take());
    let (Some(pid), Some(stdin), Some(stdout), Some(stderr)) = pipes else {
        return Err(spawn_error("no pid or pipes".to_string()));
    };
    let pgid = i32::try_from(pid).map_err(|_| spawn_error(format!("pid {pid} out of range")))?;
    let tail = Arc::new(Mutex::new(Vec::new()));
    let drain = tokio::spawn(drain(stderr, Arc::clone(&tail)));
    Ok(Child {
        process,
        stdin: Some(stdin),
        stdout: Lines::new(stdout),
        stderr: tail,
        drain,
        pgid,
        lease: None,
        home: home.to_path_buf(),
        tmp,
    })
}

/// Makes `home/auth.json` a link to `target` (a file `codex::home::check_auth_file` accepted), or,
/// with no target, removes a link left by an earlier start (a regular file Codex wrote is
/// left alone). The link is made aside and renamed into place, so a child never sees a
/// half-made one.
pub fn link_auth(home: &Path, target: Option<&Path>) -> Result<(), Error> {
    let link = home.join(AUTH_FILE_NAME);
    let Some(target) = target else {
        return match std::fs::symlink_metadata(&link) {
            Ok(meta) if meta.file_type().is_symlink() => {
                std::fs::remove_file(&link).map_err(|e| Error::io("remove", &link, &e))
            }
            _ => Ok(()),
        };
    };
    let aside = home.join(".auth.json.link");
    let _ = std::fs::remove_file(&aside);
    std::os::unix::fs::symlink(target, &aside).map_err(|e| Error::io("link", &aside, &e))?;
    std::fs::rename(&aside, &link).map_err(|e| Error::io("rename", &link, &e))
}

/// Reads stderr to its end, keeping the last [`STDERR_TAIL_BYTES_MAX`] bytes.
async fn drain(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut chunk = vec![0u8; 8 * 1024];
    while let Ok(n @ 1..) = stderr.read(&mut chunk).await {
        let Ok(mut kept) = tail.lock() else { return };
        kept.extend_from_slice(&chunk[..n]);
        let over = kept.len().saturating_sub(STDERR_TAIL_BYTES_MAX);
        kept.drain(..over);
    }
}

/// Stdout split into lines of at most [`LINE_BYTES_MAX`] bytes.
#[derive(Debug)]
struct Lines {
    reader: BufReader<ChildStdout>,
    /// The line read so far: kept here, not in a future, so reading is cancel-safe.
    line: Vec<u8>,
    /// An over-long line was reported; its rest is skipped up to the next newline.
    skipping: bool,
}

impl Lines {
    fn new(stdout: ChildStdout) -> Lines {
        Lines { reader: BufReader::new(stdout), line: Vec::new(), skipping: false }
    }

    async fn next(&mut self) -> Result<Option<String>, Error> {
        loop {
            let buf = self.reader.fill_buf().await.map_err(|_| Error::ChildGone)?;
            if buf.is_empty() {
                // End of stream: a last line without a newline still counts.
                if self.line.is_empty() || self.skipping {
                    return Ok(None);
                }
                return Ok(Some(finish(std::mem::take(&mut self.line))));
            }
            let (take, newline) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            if !self.skipping {
                self.line.extend_from_slice(&buf[..take]);
            }
            self.reader.consume(take + usize::from(newline));
            if !self.skipping && self.line.len() > LINE_BYTES_MAX {
                let bytes = self.line.len();
                self.line = Vec::new();
                self.skipping = !newline;
                return Err(Error::LineTooLong { bytes });
            }
            if newline {
                if std::mem::take(&mut self.skipping) {
                    continue;
                }
                return Ok(Some(finish(std::mem::take(&mut self.line))));
            }
        }
    }
}

/// A line's text: lossy UTF-8 (the decoder refuses what is not JSON), no trailing `\r`.
fn finish(mut line: Vec<u8>) -> String {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8_lossy(&line).into_owned()
}
