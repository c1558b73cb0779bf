//! The pump: one session's child connected to its sans-IO core.
//!
//! [`Session::start`] spawns the child ([`Child::spawn`]) and says `initialize`. From then
//! on, every stdout line goes to [`Codex::line`] with the time, every [`Effect::Write`] goes
//! to stdin, [`Codex::tick`] runs at [`Codex::next_deadline`], and everything else the core
//! says comes out of [`Session::next`] as [`Event::Effect`], in order (str0m's rule: all
//! effects are drained after each input). The child's end of stdout is the observation
//! [`Event::Exited`]: its group is ended and reaped, and the threads it hosted are listed,
//! because the session outlives its child. The core keeps those threads and their nonces;
//! the next slice starts a new child on the same lease-free session and sends
//! `thread/resume{threadId}` for each.
//!
//! The clock is read here, in the shell, and nowhere in the core.

use crate::Error;
use crate::child::{Child, Exit, Spawn};
use crate::codex::{Codex, Config, Effect};
use crate::lease::Leases;
use engine::effect::ExecutorCommand;
use engine::ids::WorkerId;
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

/// One session: a core and, while it runs, its child.
#[derive(Debug)]
pub struct Session {
    core: Codex,
    /// `None` after the child exited.
    child: Option<Child>,
    /// Reports the core made while a command's lines were being written: `next` hands
    /// them out first, so the order is the core's.
    reports: VecDeque<Effect>,
}

impl Session {
    /// Spawns `spec` under its lease and starts the core with `config`.
    pub async fn start(spec: &Spawn, leases: &Leases, config: Config) -> Result<Session, Error> {
        let child = Child::spawn(spec, leases)?;
        let mut session = Session { core: Codex::new(config), child: Some(child), reports: VecDeque::new() };
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
    /// the next call; [`Error::ChildGone`] once the child has exited.
    pub async fn next(&mut self) -> Result<Event, Error> {
        if let Some(report) = self.reports.pop_front() {
            return Ok(Event::Effect(report));
        }
        loop {
            if let Some(effect) = self.core.poll_effect() {
                match effect {
                    Effect::Write(line) => self.write(&line).await?,
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
                other => self.reports.push_back(other),
            }
        }
        Ok(())
    }

    async fn write(&mut self, line: &str) -> Result<(), Error> {
        self.child.as_mut().ok_or(Error::ChildGone)?.write_line(line).await
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
