//! What survives a CLI executor's restarts: its journal, and on the same machine the
//! CLIs' own records of their sessions (a Codex thread's rollout, a Claude Code
//! transcript), the agents' work in their workspaces, and the CLIs' accounts at their
//! providers (a usage limit per kind, with or without a reset time). `cli.rs` drives it;
//! `cli_oracle.rs` reads it after the run (a record is what the session really took in).
//!
//! A record is appended to as the CLI takes a prompt in (before it acknowledges the line),
//! so after a crash it tells whether a prompt reached the session: found, provably absent,
//! or (a torn last line) unreadable.

use engine::ExecutorCommand;
use engine::ExecutorKind;
use engine::ids::{AttemptId, WorkerId};
use engine::input::JournalPhase;
use engine::model::{ApprovalDecision, ConversationState, PendingApproval};
use engine::time::Timestamp;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The executor's cap on turns at once unless a scenario sets one (`executor-cli
/// --turns-max`'s default).
pub const TURNS_MAX_DEFAULT: u32 = 16;

/// How the CLI executor's sessions behave (scenario files and swarm seeds).
#[derive(Clone, Debug, Default)]
pub struct CliKnobs {
    /// A CLI executor (`kinds: ["codex", "claude"]`) connects; without one the CLI lanes
    /// wait, unsent, for an executor of their kind.
    pub executor: bool,
    /// How many workers' turns the executor runs at once (`--turns-max`, its `hello`'s
    /// `concurrencyMax`): the daemon holds a turn beyond it. `None`: the executor's
    /// default, [`TURNS_MAX_DEFAULT`].
    pub turns_max: Option<u32>,
    /// The account each kind's workers run under (`--account KIND=NAME:MAX`, its `hello`'s
    /// `accounts`), with its cap on turns at once: the daemon holds a turn beyond it.
    pub accounts: Vec<engine::AccountCap>,
    /// Claude Code lanes spawned besides the Codex ones (`Knobs::cli_workers`).
    pub claude_workers: usize,
    /// Percent of submissions and of turns during which the session's child crashes (the
    /// session and its record survive; a new child resumes it).
    pub child_crash_pct: u64,
    /// Percent of Claude steers taken into the running turn (the rest run as the next turn).
    pub merge_pct: u64,
    /// Percent of turn ends after which a turn nobody commanded runs (a user's hook).
    pub foreign_pct: u64,
    /// Percent of turn ends at which the kind's account reaches its usage limit.
    pub limit_pct: u64,
    /// Percent of reconciliations after a crash that find the record's last line torn.
    pub torn_pct: u64,
    /// The executor runs with `--approvals ask`: a Codex turn may stop to ask a person
    /// before it leaves its sandbox (`cli_approval.rs`).
    pub approvals_ask: bool,
    /// Percent of Codex turns that raise an approval request (with `approvals_ask`).
    pub ask_pct: u64,
    /// Events a scenario plays at given times.
    pub events: Vec<CliEvent>,
}

impl CliKnobs {
    /// A swarm seed's CLI executor: every behaviour on or off, with a drawn rate when on
    /// (`pick(lo, hi)` draws from the seed).
    pub fn swarm(pick: &mut impl FnMut(u64, u64) -> u64) -> CliKnobs {
        CliKnobs {
            executor: true,
            turns_max: None,
            accounts: Vec::new(),
            claude_workers: pick(0, 2) as usize,
            child_crash_pct: if pick(0, 2) == 0 { pick(1, 8) } else { 0 },
            merge_pct: pick(0, 100),
            foreign_pct: if pick(0, 3) == 0 { pick(1, 5) } else { 0 },
            limit_pct: if pick(0, 3) == 0 { pick(1, 4) } else { 0 },
            torn_pct: if pick(0, 3) == 0 { pick(5, 30) } else { 0 },
            approvals_ask: pick(0, 2) == 0,
            ask_pct: pick(10, 60),
            events: Vec::new(),
        }
    }
}

/// Something a scenario makes happen to the CLI executor's sessions.
#[derive(Clone, Debug)]
pub struct CliEvent {
    /// Simulated ms after the start.
    pub at_ms: u64,
    /// What.
    pub what: CliEventKind,
}

/// The kinds of scenario events.
#[derive(Clone, Debug)]
pub enum CliEventKind {
    /// The kind's account reaches its usage limit for `length_ms`; the CLI names the reset
    /// time unless `names_time` is false.
    Limit { kind: ExecutorKind, length_ms: u64, names_time: bool },
    /// A turn nobody commanded starts in the worker's session (a user's hook).
    Foreign { worker: WorkerId },
    /// The worker's session's child crashes (mid-turn if one runs).
    ChildCrash { worker: WorkerId },
    /// The worker's session's child crashes while an approval request waits: now if one
    /// does, else 5 s into the next one.
    CrashWhileAsking { worker: WorkerId },
}

/// The machine's disk: the executor's journal and what the CLIs keep.
#[derive(Debug, Default)]
pub struct CliDisk {
    /// The executor's journal of commands, by attempt.
    pub journal: BTreeMap<AttemptId, Entry>,
    /// The session bound to each worker (the conversation the daemon knows).
    pub bound: BTreeMap<WorkerId, String>,
    /// Every session's record, by session id (a closed one stays on disk).
    pub sessions: BTreeMap<String, SessionRecord>,
    /// Per-worker state sequence high-water (journaled before each state).
    pub seq: BTreeMap<WorkerId, u64>,
    /// The last state published per worker, republished in `hello`.
    pub shown: BTreeMap<WorkerId, Shown>,
    /// The agents' work (in their workspaces: it survives every crash).
    pub agents: BTreeMap<WorkerId, Agent>,
    /// Each kind's account at its provider: the limit in force, if any.
    pub accounts: BTreeMap<ExecutorKind, Limit>,
    /// Every limit an account reached, for the oracle.
    pub limits: Vec<Limit>,
    /// When the executor (re)started, simulated ms: its first start included.
    pub starts: Vec<u64>,
    /// Foreign turns started so far (their nonces are `foreign-N`).
    pub foreign_turns: u64,
    /// How the executor settled its `submission-started` prompts after crashes, by verdict
    /// (`found`, `absent`, `torn`).
    pub reconciled: BTreeMap<&'static str, usize>,
}

/// One journal line of the CLI executor.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The command (its prompt dropped once it was written, as the real journal does).
    pub command: ExecutorCommand,
    /// How far it got.
    pub phase: JournalPhase,
    /// The worker's state sequence at submission.
    pub state_seq: u64,
    /// A create's session (its conversation id), once bound.
    pub conversation: Option<Arc<str>>,
    /// A failure already answered (a repeated command gets the same answer).
    pub failed: Option<String>,
}

/// A state published for a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The coarse state.
    pub state: ConversationState,
    /// Its sequence.
    pub seq: u64,
    /// A limit's reset time.
    pub until: Option<Timestamp>,
    /// The CLI's words.
    pub detail: Option<Arc<str>>,
    /// With `awaiting_approval`: the request waiting (republished in `hello` as shown).
    pub approval: Option<PendingApproval>,
}

/// A CLI's own record of one session.
#[derive(Clone, Debug)]
pub struct SessionRecord {
    /// Codex or Claude.
    pub kind: ExecutorKind,
    /// The worker it was created for.
    pub worker: WorkerId,
    /// Every prompt the session took in, in order (a repeat would be a second entry).
    pub prompts: Vec<Taken>,
    /// Its turns, in order.
    pub turns: Vec<Turn>,
    /// Steers taken in mid-turn and not yet absorbed (Claude): keys, oldest first.
    pub queued: Vec<String>,
    /// Every approval request the session raised, in order (`cli_approval.rs`).
    pub asks: Vec<Ask>,
    /// Every `approval.answer` the executor received for this session, in order, written
    /// or refused: the oracle matches them against the operator's accepted answers.
    pub answers: Vec<AnswerSeen>,
}

/// One approval request a session raised.
#[derive(Clone, Debug)]
pub struct Ask {
    /// Its handle (`apr-N`).
    pub id: String,
    /// The turn it stopped (index into `turns`).
    pub turn: usize,
    /// When it was raised, simulated ms.
    pub asked_ms: u64,
    /// How it ended, and when; `None` while it waits.
    pub end: Option<(AskEnd, u64)>,
}

/// How an approval request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskEnd {
    /// A person's decision was written to it.
    Answered(ApprovalDecision),
    /// It went unanswered: its child died, its turn ended, its session closed.
    Gone,
}

/// One `approval_answer` the operator made, with the engine's verdict (logged by the
/// daemon host as the engine replied).
#[derive(Clone, Debug)]
pub struct ApprovalCall {
    /// The worker held.
    pub worker: WorkerId,
    /// The request named.
    pub id: String,
    /// The decision.
    pub decision: ApprovalDecision,
    /// When, simulated ms.
    pub at_ms: u64,
    /// What the operator meant: `answer` (the waiting request), `again` (a second answer
    /// right after it), `stale` (an older request's id): the last two must be refused.
    pub meant: &'static str,
    /// Accepted by the engine (else the rejection's code).
    pub verdict: Result<(), String>,
    /// The executor's `hello`s so far (a reconnect makes a request answerable again).
    pub hellos: usize,
}

/// One `approval.answer` the executor received.
#[derive(Clone, Debug)]
pub struct AnswerSeen {
    /// The command's id (the engine reuses the turn's; `key` tells answers apart).
    pub key: String,
    /// The request it names.
    pub id: String,
    /// The decision it carries.
    pub decision: ApprovalDecision,
    /// When, simulated ms.
    pub at_ms: u64,
    /// Whether it was written to a waiting request (else: `APPROVAL_GONE`).
    pub written: bool,
}

/// One prompt the session took in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taken {
    /// Its nonce: the command's idempotency key (`foreign-N` for a turn nobody commanded).
    pub key: String,
    /// Whether it was a steer (written mid-turn).
    pub steer: bool,
    /// When, simulated ms.
    pub at_ms: u64,
    /// How long the executor had been up then, ms (typing right after a restart may
    /// race the daemon's withdrawals).
    pub up_ms: u64,
}

/// One turn of a session.
#[derive(Clone, Debug)]
pub struct Turn {
    /// The nonce of the prompt that started it; `None`: nobody here started it.
    pub starter: Option<String>,
    /// Steers taken into it.
    pub merged: Vec<String>,
    /// Steers it dropped when its child died before they ran.
    pub dropped: Vec<String>,
    /// Where it stands.
    pub state: TurnState,
    /// When it started, simulated ms.
    pub started_ms: u64,
    /// When it stopped running (ended, limited or interrupted), simulated ms.
    pub ended_ms: Option<u64>,
}

/// How a turn stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnState {
    /// Its child is working on it.
    Running,
    /// It ended (an observation, never a completion).
    Ended,
    /// Its child died first.
    Interrupted,
    /// The account's limit ended it.
    Limited,
}

/// What the agent of a worker did so far (its work lives in the workspace).
#[derive(Clone, Copy, Debug)]
pub struct Agent {
    /// Turns the agent needs before it calls `worker_complete`.
    pub turns_needed: u32,
    /// Turns of its own it finished.
    pub turns_done: u32,
    /// It called `worker_complete` and was answered.
    pub finished: bool,
}

/// An account's usage limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// Whose account.
    pub kind: ExecutorKind,
    /// When it began, simulated ms.
    pub from_ms: u64,
    /// When it lifts, simulated ms.
    pub until_ms: u64,
    /// Whether the CLI says when (`untilMs`).
    pub names_time: bool,
}

impl SessionRecord {
    /// A new, empty session.
    pub fn new(kind: ExecutorKind, worker: WorkerId) -> SessionRecord {
        SessionRecord {
            kind,
            worker,
            prompts: Vec::new(),
            turns: Vec::new(),
            queued: Vec::new(),
            asks: Vec::new(),
            answers: Vec::new(),
        }
    }

    /// The request waiting for a person, if any.
    pub fn asking(&mut self) -> Option<&mut Ask> {
        self.asks.last_mut().filter(|a| a.end.is_none())
    }

    /// The waiting request (if any) is gone unanswered at `now_ms`.
    pub fn asks_gone(&mut self, now_ms: u64) {
        if let Some(a) = self.asking() {
            a.end = Some((AskEnd::Gone, now_ms));
        }
    }

    /// The running turn, if any.
    pub fn running(&mut self) -> Option<&mut Turn> {
        self.turns.last_mut().filter(|t| t.state == TurnState::Running)
    }

    /// Whether the session is busy: a turn runs, or a steer waits to run after it.
    pub fn busy(&self) -> bool {
        self.turns.last().is_some_and(|t| t.state == TurnState::Running) || !self.queued.is_empty()
    }

    /// Whether the session took this nonce in.
    pub fn took(&self, key: &str) -> bool {
        self.prompts.iter().any(|p| p.key == key)
    }

    /// The child died: the running turn is interrupted, and the steers queued behind it
    /// never run.
    pub fn interrupt(&mut self, now_ms: u64) {
        let queued = std::mem::take(&mut self.queued);
        if let Some(t) = self.turns.last_mut() {
            if t.state == TurnState::Running {
                t.state = TurnState::Interrupted;
                t.ended_ms = Some(now_ms);
            }
            t.dropped.extend(queued);
        }
    }
}

/// The conversation id of a session (`codex:thread/<id>`, `claude:session/<id>`).
pub fn conversation_of(kind: ExecutorKind, session: &str) -> String {
    kind.conversation_id(session).unwrap_or_default()
}

/// A seeded draw for one decision: the same seed, worker, counter and purpose give the
/// same number, whatever happened to the host in between.
pub fn roll(seed: u64, worker: WorkerId, n: u64, purpose: u64) -> u64 {
    let mixed = seed ^ worker.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ n.wrapping_mul(0xC2B2_AE3D_27D4_EB4F) ^ purpose;
    ChaCha8Rng::seed_from_u64(mixed).next_u64()
}
