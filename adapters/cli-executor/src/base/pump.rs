//! The pump: one session's child connected to its sans-IO core (either CLI's: anything
//! that is a [`Core`]). Named for what it does, not `Session`: a session is a CLI's (a
//! Codex thread's or a Claude Code session's), the bridge's protocol has its own, and the
//! simulator models one in `cli_session.rs`; a [`Pump`] is the executor's half of it.
//!
//! A [`Pump`] holds a core and, while one runs, its child. Every stdout line goes to
//! [`Core::line`] with the time, every [`Step::Write`] to stdin, every [`Step::Prompt`]
//! too once its [`Gate`] journaled it (a gate that fails writes nothing and the core fails
//! the command, definitely not submitted: [`Core::unsent`]), [`Core::tick`] runs at
//! [`Core::next_deadline`], and everything else the core says comes out of [`Pump::next`]
//! as [`Event::Effect`], in order (str0m's rule: all effects are drained after each
//! input).
//!
//! A Codex pump starts its child at once (`Pump::start`, in `codex/task.rs`); Claude's core
//! asks for each of its children ([`Step::Spawn`]): the pump stops there and hands the
//! request out as [`Event::Spawn`], so the owner can check what must hold first (the MCP
//! server answers) and then [`Pump::spawn`] it, or tell the core it was not started. The
//! child's end of stdout is the observation [`Event::Exited`] (its group ended and reaped,
//! the core told through [`Core::exited`]): the pump outlives its child, and its core
//! knows what to resume in the next one. A core that wants its child ended ([`Step::Stop`]:
//! a close) has it stopped in order, after every effect before it: the group ends, the
//! lease is released, and the same [`Event::Exited`] follows. Each room implements
//! [`Core`] for its core beside its task.
//!
//! The clock is read here, in the shell, and nowhere in the core.

use crate::Error;
use crate::base::child::{Child, Exit, Spawn};
use crate::base::lease::Leases;
use engine::effect::ExecutorCommand;
use engine::ids::{CommandId, WorkerId};
use engine::time::Timestamp;
use std::collections::VecDeque;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the pump needs of a sans-IO core.
pub trait Core: Send {
    /// What the core reports for the executor (its own effect type).
    type Report: std::fmt::Debug + Send;
    /// A command from the daemon.
    fn command(&mut self, now: Timestamp, command: ExecutorCommand) -> Result<(), Error>;
    /// A line of the child's stdout.
    fn line(&mut self, now: Timestamp, line: &str) -> Result<(), Error>;
    /// Time passed.
    fn tick(&mut self, now: Timestamp);
    /// When to tick next.
    fn next_deadline(&self) -> Option<Timestamp>;
    /// The next effect, sorted for the pump.
    fn step(&mut self) -> Option<Step<Self::Report>>;
    /// A prompt's gate failed: its line was not written.
    fn unsent(&mut self, command: CommandId, detail: &str);
    /// The child ended (its group is gone).
    fn exited(&mut self, now: Timestamp, exit: &Exit);
}

/// An effect of a core, as the pump sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Step<R> {
    /// A line for the child's stdin.
    Write(String),
    /// A line that carries a prompt: journaled through the [`Gate`] first.
    Prompt {
        /// The command whose prompt it is.
        command: CommandId,
        /// Whose conversation.
        worker: WorkerId,
        /// The conversation (thread or session) it goes to.
        conversation: String,
        /// The line.
        line: String,
    },
    /// Start a child with these arguments (the spec's are replaced).
    Spawn(Vec<String>),
    /// Close the child's stdin.
    CloseStdin,
    /// Stop the child now (`SIGTERM` to its group, `SIGKILL` after the grace, the lease
    /// released); [`Event::Exited`] follows, after the effects the core made before.
    Stop,
    /// Something for the owner.
    Report(R),
}

/// What [`Pump::next`] observed.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<R> {
    /// The core reported something (never a line: those went to the child).
    Effect(R),
    /// The core asks for a child with these arguments. Nothing more is pumped until the
    /// owner calls [`Pump::spawn`] or tells the core it was not started.
    Spawn(Vec<String>),
    /// The child ended on its own (a crash, or it closed stdout), or was stopped as the
    /// core asked ([`Step::Stop`]): its group is gone and reaped, its lease released, the
    /// core told. The pump survives.
    Exited {
        /// How it ended.
        exit: Exit,
    },
}

/// Asked before a prompt's line is written to the child: the executor journals the
/// command's submission there (fsynced), so a crash after the write is never taken for
/// "not sent". An error keeps the line from being written.
pub trait Gate: Send {
    /// `command`'s prompt is about to go to `conversation` of `worker`.
    fn submitting(&mut self, command: CommandId, worker: WorkerId, conversation: &str) -> Result<(), Error>;
}

impl<F: FnMut(CommandId, WorkerId, &str) -> Result<(), Error> + Send> Gate for F {
    fn submitting(&mut self, command: CommandId, worker: WorkerId, conversation: &str) -> Result<(), Error> {
        self(command, worker, conversation)
    }
}

/// One session's pump: a core and, while it runs, its child.
pub struct Pump<C: Core> {
    core: C,
    /// Journals each prompt before its line is written.
    gate: Box<dyn Gate>,
    /// How children of this session start (a [`Step::Spawn`] replaces its arguments).
    spec: Spawn,
    /// Where their leases are taken.
    leases: Leases,
    /// `None` between children.
    child: Option<Child>,
    /// Events the core made while a command's lines were being written: `next` hands
    /// them out first, so the order is the core's.
    reports: VecDeque<Event<C::Report>>,
    /// A [`Event::Spawn`] was handed out and not answered: nothing is pumped meanwhile.
    spawning: bool,
    /// Bytes queued for stdin and not written yet: kept here, so a [`Pump::next`]
    /// dropped mid-write (it runs in a `select!`) loses no part of a line.
    outbox: Vec<u8>,
}

impl<C: Core> Pump<C> {
    /// A pump with no child yet: the core asks for one ([`Event::Spawn`]).
    pub fn new(spec: &Spawn, leases: &Leases, core: C, gate: Box<dyn Gate>) -> Pump<C> {
        Pump {
            core,
            gate,
            spec: spec.clone(),
            leases: leases.clone(),
            child: None,
            reports: VecDeque::new(),
            spawning: false,
            outbox: Vec::new(),
        }
    }

    /// The child, while it runs.
    pub fn child(&self) -> Option<&Child> {
        self.child.as_ref()
    }

    /// The core, to look at.
    pub fn core(&self) -> &C {
        &self.core
    }

    /// Starts a child under the session's lease, with `args` (after an [`Event::Spawn`]) or
    /// the spec's own; pumping goes on.
    pub fn spawn(&mut self, args: Option<Vec<String>>) -> Result<(), Error> {
        self.spawning = false;
        let mut spec = self.spec.clone();
        if let Some(args) = args {
            spec.args = args;
        }
        self.child = Some(Child::spawn(&spec, &self.leases)?);
        Ok(())
    }

    /// Runs `input` on the core with the time (a command, a respawn), then writes what it
    /// queued (up to a pending [`Event::Spawn`]: the rest waits for the child).
    pub async fn drive(&mut self, input: impl FnOnce(&mut C, Timestamp) -> Result<(), Error>) -> Result<(), Error> {
        input(&mut self.core, now())?;
        self.flush().await
    }

    /// Answers an [`Event::Spawn`] with no child: `refuse` tells the core (which drops what
    /// it queued for that child); pumping goes on.
    pub async fn refuse_spawn(&mut self, refuse: impl FnOnce(&mut C)) -> Result<(), Error> {
        self.spawning = false;
        refuse(&mut self.core);
        self.flush().await
    }

    /// A command from the daemon.
    pub async fn command(&mut self, command: ExecutorCommand) -> Result<(), Error> {
        self.drive(|core, now| core.command(now, command)).await
    }

    /// Pumps until the core reports something, asks for a child, or the child ends. An
    /// error from one line (malformed, over-long, an unknown response id) is returned and
    /// the pump goes on at the next call. Between children it waits for the core's
    /// deadlines only. Cancel-safe.
    pub async fn next(&mut self) -> Result<Event<C::Report>, Error> {
        loop {
            // First what the core made while lines were written or a child was stopped.
            if let Some(event) = self.reports.pop_front() {
                return Ok(event);
            }
            if self.spawning {
                return std::future::pending().await;
            }
            if !self.outbox.is_empty() {
                match self.drain().await {
                    Ok(()) => {}
                    Err(Error::ChildGone) if self.child.is_some() => return self.exited().await,
                    Err(e) => return Err(e),
                }
            }
            match self.core.step() {
                Some(Step::Report(report)) => return Ok(Event::Effect(report)),
                Some(Step::Spawn(args)) => {
                    self.spawning = true;
                    return Ok(Event::Spawn(args));
                }
                Some(step) => {
                    self.perform(step).await?;
                    continue;
                }
                None => {}
            }
            let deadline = self.core.next_deadline();
            let Some(child) = self.child.as_mut() else {
                sleep_until(deadline).await;
                self.core.tick(now());
                continue;
            };
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

    /// Stops the child (the group, then the lease) and ends the pump.
    pub async fn stop(mut self) -> Result<Exit, Error> {
        self.child.take().ok_or(Error::ChildGone)?.stop().await
    }

    /// Writes what the core queued, up to a [`Step::Spawn`]; its reports wait for `next`.
    async fn flush(&mut self) -> Result<(), Error> {
        while !self.spawning
            && let Some(step) = self.core.step()
        {
            match step {
                Step::Report(report) => self.reports.push_back(Event::Effect(report)),
                Step::Spawn(args) => {
                    self.spawning = true;
                    self.reports.push_back(Event::Spawn(args));
                }
                step => self.perform(step).await?,
            }
        }
        Ok(())
    }

    /// Carries out a step for the child.
    async fn perform(&mut self, step: Step<C::Report>) -> Result<(), Error> {
        match step {
            Step::Write(line) => self.write(&line).await,
            Step::Prompt { command, worker, conversation, line } => {
                match self.gate.submitting(command, worker, &conversation) {
                    Ok(()) => self.write(&line).await,
                    Err(e) => {
                        self.core.unsent(command, &format!("the executor could not journal the prompt: {e}"));
                        Ok(())
                    }
                }
            }
            Step::CloseStdin => {
                if let Some(child) = self.child.as_mut() {
                    child.close_stdin();
                }
                Ok(())
            }
            Step::Stop => self.halt().await,
            Step::Spawn(_) | Step::Report(_) => Ok(()), // handed out by the callers
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

    /// The core asked for its child's end: the group is stopped and reaped, the lease
    /// released, bytes meant for the child dropped, the core told; [`Event::Exited`] is
    /// queued behind what the core said before. No child: nothing to do.
    async fn halt(&mut self) -> Result<(), Error> {
        let Some(child) = self.child.take() else { return Ok(()) };
        self.outbox.clear();
        let exit = child.stop().await?;
        self.core.exited(now(), &exit);
        self.reports.push_back(Event::Exited { exit });
        Ok(())
    }

    /// The child is gone: its group ended and reaped, bytes meant for it dropped (never
    /// the tail of a line into the next child), the core told.
    async fn exited(&mut self) -> Result<Event<C::Report>, Error> {
        let child = self.child.take().ok_or(Error::ChildGone)?;
        self.outbox.clear();
        let exit = child.stop().await?;
        self.core.exited(now(), &exit);
        Ok(Event::Exited { exit })
    }
}

/// Unix milliseconds, the engine's time.
pub fn now() -> Timestamp {
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
