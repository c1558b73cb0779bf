//! The pump: one session's child connected to its sans-IO core.
//!
//! [`Session::start`] spawns the child ([`Child::spawn`]) and says `initialize`. From then
//! on, every stdout line goes to [`Codex::line`] with the time, every [`Effect::Write`] goes
//! to stdin, every [`Effect::Prompt`] too once its [`Gate`] journaled it (a gate that fails
//! writes nothing and the command fails, definitely not submitted), [`Codex::tick`] runs at [`Codex::next_deadline`], and everything else the core
//! says comes out of [`Session::next`] as [`Event::Effect`], in order (str0m's rule: all
//! effects are drained after each input). The child's end of stdout is the observation
//! [`Event::Exited`]: its group is ended and reaped, and the threads it hosted are listed,
//! because the session outlives its child: the executor starts a new child on the same
//! session with a [`Codex::resuming`] core, which sends `thread/resume{threadId}` for each.
//!
//! The clock is read here, in the shell, and nowhere in the core.

use crate::Error;
use crate::child::{Child, Exit, Spawn};
use crate::codex::{Codex, Effect};
use crate::lease::Leases;
use engine::effect::ExecutorCommand;
use engine::ids::{CommandId, WorkerId};
use engine::time::Timestamp;
use std::collections::VecDeque;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What [`Session::next`] observed.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The core reported something (never a [`Effect::Write`]: those went to the child).
    Effect(Effect),
    /// The child ended on its own (a crash, or it closed stdout): its group is gone and
    /// reaped, its lease released. The session and its threads survive.
    Exited {
        /// How it ended.
        exit: Exit,
        /// The threads it hosted, with their workers: to be resumed in a new child.
        threads: Vec<(WorkerId, String)>,
    },
}

/// Asked before a prompt's line is written to the child: the executor journals the
/// command's submission there (fsynced), so a crash after the write is never taken for
/// "not sent". An error keeps the line from being written.
pub trait Gate: Send {
    /// `command`'s prompt is about to go to `thread` of `worker`.
    fn submitting(&mut self, command: CommandId, worker: WorkerId, thread: &str) -> Result<(), Error>;
}

impl<F: FnMut(CommandId, WorkerId, &str) -> Result<(), Error> + Send> Gate for F {
    fn submitting(&mut self, command: CommandId, worker: WorkerId, thread: &str) -> Result<(), Error> {
        self(command, worker, thread)
    }
}

/// One session: a core and, while it runs, its child.
pub struct Session {
    core: Codex,
    /// Journals each prompt before its line is written.
    gate: Box<dyn Gate>,
    /// `None` after the child exited.
    child: Option<Child>,
    /// Reports the core made while a command's lines were being written: `next` hands
    /// them out first, so the order is the core's.
    reports: VecDeque<Effect>,
    /// Bytes queued for stdin and not written yet: kept here, so a [`Session::next`]
    /// dropped mid-write (it runs in a `select!`) loses no part of a line.
    outbox: Vec<u8>,
}

impl Session {
    /// Spawns `spec` under its lease and starts `core` (fresh, or [`Codex::resuming`]).
    pub async fn start(spec: &Spawn, leases: &Leases, core: Codex, gate: Box<dyn Gate>) -> Result<Session, Error> {
        let child = Child::spawn(spec, leases)?;
        let mut session = Session { core, gate, child: Some(child), reports: VecDeque::new(), outbox: Vec::new() };
        session.core.start(now())?;
        session.flush().await?;
        Ok(session)
    }

    /// The child, while it runs.
    pub fn child(&self) -> Option<&Child> {
        self.child.as_ref()
    }

    /// A command from the daemon.
    pub async fn command(&mut self, command: ExecutorCommand) -> Result<(), Error> {
        self.core.command(now(), command)?;
        self.flush().await
    }

    /// Pumps until the core reports something or the child ends. An error from one line
    /// (malformed, over-long, an unknown response id) is returned and the pump goes on at
    /// the next call; [`Error::ChildGone`] once the child has exited. Cancel-safe.
    pub async fn next(&mut self) -> Result<Event, Error> {
        if let Some(report) = self.reports.pop_front() {
            return Ok(Event::Effect(report));
        }
        loop {
            if !self.outbox.is_empty() {
                match self.drain().await {
                    Ok(()) => {}
                    Err(Error::ChildGone) => return self.exited().await,
                    Err(e) => return Err(e),
                }
            }
            if let Some(effect) = self.core.poll_effect() {
                match effect {
                    Effect::Write(line) => self.write(&line).await?,
                    Effect::Prompt { command, worker, thread, line } => {
                        self.prompt(command, worker, &thread, &line).await?
                    }
                    other => return Ok(Event::Effect(other)),
                }
                continue;
            }
            let child = self.child.as_mut().ok_or(Error::ChildGone)?;
            let deadline = self.core.next_deadline();
            let line = tokio::select! {
                line = child.read_line() => line?,
                () = sleep_until(deadline) => {
                    self.core.tick(now());
                    continue;
                }
            };
            match line {
                Some(line) => self.core.line(now(), &line)?,
                None => return self.exited().await,
            }
        }
    }

    /// Stops the child (the group, then the lease) and ends the session.
    pub async fn stop(mut self) -> Result<Exit, Error> {
        self.child.take().ok_or(Error::ChildGone)?.stop().await
    }

    /// Writes what the core queued; its reports wait in `reports` for `next`.
    async fn flush(&mut self) -> Result<(), Error> {
        while let Some(effect) = self.core.poll_effect() {
            match effect {
                Effect::Write(line) => self.write(&line).await?,
                Effect::Prompt { command, worker, thread, line } => {
                    self.prompt(command, worker, &thread, &line).await?
                }
                other => self.reports.push_back(other),
            }
        }
        Ok(())
    }

    /// Journals a prompt through the gate, then writes it; if the gate fails, the core
    /// fails the command and nothing is written.
    async fn prompt(&mut self, command: CommandId, worker: WorkerId, thread: &str, line: &str) -> Result<(), Error> {
        match self.gate.submitting(command, worker, thread) {
            Ok(()) => self.write(line).await,
            Err(e) => {
                self.core.unsent(command, &format!("the executor could not journal the prompt: {e}"));
                Ok(())
            }
        }
    }

    /// Queues `line` and writes the queue.
    async fn write(&mut self, line: &str) -> Result<(), Error> {
        self.outbox.extend_from_slice(line.as_bytes());
        self.outbox.push(b'\n');
        self.drain().await
    }

    /// Writes the queue, keeping whatever is not written yet.
    async fn drain(&mut self) -> Result<(), Error> {
        let child = self.child.as_mut().ok_or(Error::ChildGone)?;
        while !self.outbox.is_empty() {
            let n = child.write_some(&self.outbox).await?;
            self.outbox.drain(..n);
        }
        Ok(())
    }

    async fn exited(&mut self) -> Result<Event, Error> {
        let child = self.child.take().ok_or(Error::ChildGone)?;
        let exit = child.stop().await?;
        let threads = self.core.threads().map(|(worker, thread)| (worker, thread.to_string())).collect();
        Ok(Event::Exited { exit, threads })
    }
}

/// Unix milliseconds, the engine's time.
fn now() -> Timestamp {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    Timestamp(u64::try_from(ms).unwrap_or(u64::MAX))
}

/// Resolves at `deadline` (at once if it passed); never without one.
async fn sleep_until(deadline: Option<Timestamp>) {
    match deadline {
        Some(at) => tokio::time::sleep(Duration::from_millis(at.ms_since(now()))).await,
        None => std::future::pending().await,
    }
}
