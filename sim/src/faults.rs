//! Named crash boundaries (spec 000 §26.2 plus the executor journal phases), the
//! schedule that says where a run crashes which host, and the triggers that pin a race
//! (a call, an outage, a held or partitioned link) to one of those boundaries.

use engine::ids::WorkerId;
use std::fmt;

/// A point in the submission pipeline where a host may die.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Boundary {
    /// 26.2.1: the idle report is durable, the resume not yet scheduled.
    IdleBeforeScheduling,
    /// 26.2.2: the resume attempt is durable, the command not yet with the executor.
    ScheduledBeforeEnqueue,
    /// 26.2.3: the executor journaled the command as received, no ACK yet.
    EnqueuedBeforeAck,
    /// 26.2.4: the executor journaled `submission-started`.
    SubmissionStarted,
    /// 26.2.5: the executor journaled `submitted`, the result not yet sent.
    SubmittedBeforeResult,
    /// 26.2.6: the daemon recorded the submission, generation not yet observed.
    ResultBeforeGenerating,
    /// 26.2.7: generation observed, idle not yet.
    GeneratingBeforeIdle,
    /// 26.2.8: one second into the idle grace.
    IdleDuringGrace,
    /// 26.2.9: a stall warning or stall pause was recorded.
    StallMutation,
    /// Executor journal: the command finished and its result is stored.
    JournalCompleted,
    /// Issue 19: the dead-man layer's firing is durable (`deadman.fired`, the run's alert,
    /// the root's recovery wake), the recovery not yet with an executor.
    DeadmanFired,
    /// Issue 31: a notification is durable in the outbox, not yet posted to its receiver.
    NotifyCreated,
    /// Issue 31: the receiver took a notification, the daemon has not yet booked the
    /// acknowledgement (after a restart it posts it again, same id).
    NotifySentBeforeAck,
}

impl Boundary {
    /// Every boundary, in pipeline order.
    pub const ALL: [Boundary; 13] = [
        Boundary::IdleBeforeScheduling,
        Boundary::ScheduledBeforeEnqueue,
        Boundary::EnqueuedBeforeAck,
        Boundary::SubmissionStarted,
        Boundary::SubmittedBeforeResult,
        Boundary::ResultBeforeGenerating,
        Boundary::GeneratingBeforeIdle,
        Boundary::IdleDuringGrace,
        Boundary::StallMutation,
        Boundary::JournalCompleted,
        Boundary::DeadmanFired,
        Boundary::NotifyCreated,
        Boundary::NotifySentBeforeAck,
    ];

    /// The host that dies at this boundary: the daemon, or the executor of the worker
    /// that passed it (`Target::Executor`, the browser; the ledger reads it as the CLI
    /// executor for a CLI worker, `Ledger::executor_of`).
    pub fn host(self) -> Target {
        match self {
            Boundary::EnqueuedBeforeAck
            | Boundary::SubmissionStarted
            | Boundary::SubmittedBeforeResult
            | Boundary::JournalCompleted => Target::Executor,
            _ => Target::Daemon,
        }
    }

    /// The stable name used in scenario files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Boundary::IdleBeforeScheduling => "idle-before-scheduling",
            Boundary::ScheduledBeforeEnqueue => "scheduled-before-enqueue",
            Boundary::EnqueuedBeforeAck => "enqueued-before-ack",
            Boundary::SubmissionStarted => "submission-started",
            Boundary::SubmittedBeforeResult => "submitted-before-result",
            Boundary::ResultBeforeGenerating => "result-before-generating",
            Boundary::GeneratingBeforeIdle => "generating-before-idle",
            Boundary::IdleDuringGrace => "idle-during-grace",
            Boundary::StallMutation => "stall-mutation",
            Boundary::JournalCompleted => "journal-completed",
            Boundary::DeadmanFired => "deadman-fired",
            Boundary::NotifyCreated => "notify-created",
            Boundary::NotifySentBeforeAck => "notify-sent-before-ack",
        }
    }

    /// Parses a stable name.
    pub fn parse(name: &str) -> Option<Boundary> {
        Boundary::ALL.into_iter().find(|b| b.name() == name)
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which simulated host a fault hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// The daemon (engine, shell, store).
    Daemon,
    /// The browser extension.
    Executor,
    /// The CLI executor (`orchestrator executor-cli`'s model, `cli.rs`) with its children.
    Cli,
    /// The second daemon host, beside `Daemon` on the same store (`standby on`); either
    /// may lead.
    Standby,
}

impl Target {
    /// The turmoil host name.
    pub fn host(self) -> &'static str {
        match self {
            Target::Daemon => "daemon",
            Target::Executor => "browser",
            Target::Cli => "cli",
            Target::Standby => "daemon-2",
        }
    }
}

/// Crash `boundary`'s host at its `occurrence`-th occurrence (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashAt {
    /// Where.
    pub boundary: Boundary,
    /// Which occurrence.
    pub occurrence: u32,
}

/// A call that arrives at the daemon the moment a trigger fires (a race: the agent's or
/// the operator's request lands exactly at that point of the pipeline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// The agent's `worker_complete`.
    Complete,
    /// The agent's `worker_fail`.
    Fail,
    /// The agent's `worker_await_human`.
    Human,
    /// The operator's `worker_pause` (now, or after the current turn).
    Pause { after_turn: bool },
    /// The operator's `worker_resume`.
    Resume,
}

/// What happens when a trigger's boundary is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reaction {
    /// A call for the trigger's worker arrives.
    Call(Call),
    /// The worker's executor (the browser, or the CLI executor for a CLI worker) is down
    /// for this many ms (its storage survives).
    ExecutorDown(u64),
    /// The bridge link holds every message for this many ms.
    Hold(u64),
    /// The bridge link drops every message for this many ms.
    Partition(u64),
    /// The daemon that leads (`standby on`) dies and stays down this many ms: past the
    /// lease's lapse the standby takes over, mid-submission when the boundary says so.
    LeaderDown(u64),
}

/// React when a lane passes `at.boundary` for the `at.occurrence`-th time (scenario
/// files' `on` lines: races pinned to a point of one worker's submission pipeline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// Where.
    pub at: CrashAt,
    /// Whose pipeline: a lane (spawn order, 0-based), `usize::MAX` for `/root`.
    pub lane: usize,
    /// What.
    pub reaction: Reaction,
}

impl Trigger {
    /// The lane's worker: `/root` is the run's first worker, lanes follow it in order.
    pub fn worker(&self) -> WorkerId {
        if self.lane == usize::MAX { WorkerId(1) } else { WorkerId(self.lane as u64 + 2) }
    }
}

/// A fault that hits the daemon that leads when it fires (`standby on`; scenario files'
/// `at TIME kill|pause leader DURATION`, `at TIME partition leader store DURATION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaderFault {
    /// When, simulated ms.
    pub at_ms: u64,
    /// What.
    pub kind: LeaderFaultKind,
    /// For how long.
    pub length_ms: u64,
}

/// What a [`LeaderFault`] does to the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaderFaultKind {
    /// Its host dies, and its supervisor restarts it after the fault's length.
    Kill,
    /// Its process stops (a zombie): every link of its host holds its messages and its
    /// lease goes unrenewed; it wakes when the fault ends.
    Pause,
    /// The store is out of its reach: takes, renewals and commits fail.
    StoreCut,
}
