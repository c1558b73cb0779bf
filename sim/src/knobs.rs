//! Every knob of a run: drawn from the seed (`Knobs::swarm`), fixed for the crash matrix
//! (`Knobs::calm`) or written by a scenario file, with the operator's timed actions, and
//! printed at the top of every report (`describe`).

use crate::chat::AgentKnobs;
use crate::cli_session::CliKnobs;
use crate::faults::Trigger;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use std::fmt::Write as _;

/// Every knob of a run. A seed draws them all (swarm testing); they are printed first.
#[derive(Clone, Debug)]
pub struct Knobs {
    /// The seed everything derives from.
    pub seed: u64,
    /// Lanes spawned under `/root`.
    pub workers: usize,
    /// Codex CLI lanes spawned besides them (`cli.claude_workers` Claude Code ones after
    /// them). Without a CLI executor (`cli.executor`) they wait, and nothing of theirs may
    /// reach the browser; with one it runs them (`cli.rs`).
    pub cli_workers: usize,
    /// The CLI executor and its sessions' behaviour.
    pub cli: CliKnobs,
    /// Whether the executor can steer mid-turn.
    pub steering: bool,
    /// The executor's concurrency limit (submissions in progress at once).
    pub concurrency: usize,
    /// Agent behaviour.
    pub agents: AgentKnobs,
    /// Percent chance per simulated minute of a random daemon crash (safety phase).
    pub daemon_crash_pct: u64,
    /// Percent chance per simulated minute of a random executor crash (safety phase).
    pub executor_crash_pct: u64,
    /// Percent chance per simulated minute of holding the bridge link for a while.
    pub hold_pct: u64,
    /// Percent chance per simulated minute of partitioning the bridge link (30 s-5 min).
    pub partition_pct: u64,
    /// How long the page needs after a command arrives before a submission starts.
    pub submit_delay_ms: u64,
    /// Length of the safety phase (faults on), in simulated ms.
    pub safety_ms: u64,
    /// Upper bound of the whole run, in simulated ms.
    pub horizon_ms: u64,
    /// Turmoil tick, in simulated ms.
    pub tick_ms: u64,
    /// Auto Resume on for the run.
    pub auto: bool,
    /// `/root` gets a conversation and a coordinating agent (otherwise it stays unbound).
    pub root: bool,
    /// Timed operator actions (scenario files).
    pub script: Vec<Action>,
    /// Executor outages: (start, length) in simulated ms (scenario files).
    pub outages: Vec<(u64, u64)>,
    /// Bridge link partitions: (start, length) in simulated ms (scenario files).
    pub partitions: Vec<(u64, u64)>,
    /// Reactions pinned to boundaries (scenario files' races).
    pub triggers: Vec<Trigger>,
    /// The run's dead-man mode and threshold, set right after the run is created
    /// (scenario files; `None` leaves the layer off, as before it existed).
    pub dead_man: Option<(engine::deadman::DeadManMode, u64)>,
    /// The operator is away in this window of simulated ms: no sweeps (scenario files).
    pub away: Option<(u64, u64)>,
    /// Notification targets the daemon posts to (`--notify`), all served by the model
    /// receiver; 0: notifications off (every drawn seed: their traces stay as they were).
    pub notify_targets: usize,
    /// Windows (from, until, simulated ms) in which the model receiver is down.
    pub notify_down: Vec<(u64, u64)>,
    /// A standby daemon host shares the store under a lease (scenario files' `standby
    /// on`, the matrix's failover cells); off for every drawn seed.
    pub standby: bool,
    /// Faults that hit the daemon that leads (scenario files).
    pub leader_faults: Vec<crate::faults::LeaderFault>,
}

/// A timed operator action from a scenario file.
#[derive(Clone, Debug)]
pub struct Action {
    /// Simulated milliseconds after the start.
    pub at_ms: u64,
    /// Which lane (spawn order, 0-based).
    pub lane: usize,
    /// What to do.
    pub what: ActionKind,
}

/// What a scripted operator action does.
#[derive(Clone, Debug)]
pub enum ActionKind {
    /// Pause now, or after the current turn.
    Pause { after_turn: bool },
    /// Resume.
    Resume,
    /// Continue now (a manual continue).
    ContinueNow,
    /// Root steering with an outcome and a message.
    Steer { outcome: String, message: String },
    /// Attach the lane to a fresh conversation (`worker_attach`), then open that
    /// conversation in the browser for it.
    Attach,
    /// Stop the lane for good (`worker_interrupt`: the command line's `orchestrator
    /// worker stop`, the dashboard's "Stop worker").
    Stop,
}

impl Action {
    /// How the scenario's checks name this action when it never happened.
    pub(crate) fn describe(&self) -> String {
        format!("{:?} of lane{} at {} ms", self.what, self.lane, self.at_ms)
    }
}

impl Knobs {
    /// Draws every knob from the seed.
    pub fn swarm(seed: u64) -> Knobs {
        let mut r = ChaCha8Rng::seed_from_u64(seed ^ 0x005E_ED0F_5A1A);
        let mut pick = |lo: u64, hi: u64| lo + r.next_u64() % (hi - lo + 1);
        let mut knobs = Knobs {
            seed,
            workers: pick(1, 4) as usize,
            cli_workers: 0,
            cli: CliKnobs::default(),
            steering: pick(0, 1) == 1,
            concurrency: pick(1, 3) as usize,
            agents: AgentKnobs {
                turns_min: 2,
                turns_max: pick(2, 6) as u32,
                progress_pct: pick(70, 100),
                long_turn_pct: pick(0, 25),
                delivery_timeout_pct: if pick(0, 1) == 1 { pick(1, 15) } else { 0 },
                human_pct: if pick(0, 3) == 0 { pick(1, 10) } else { 0 },
                blocks: pick(0, 1) == 1,
                forget_complete: pick(0, 3) == 0,
                block_waits: pick(0, 1) == 1,
                dependency_pct: if pick(0, 2) == 0 { pick(5, 30) } else { 0 },
                message_pct: pick(0, 50),
                lost_pct: if pick(0, 3) == 0 { pick(1, 5) } else { 0 },
                host_ui_pct: if pick(0, 3) == 0 { pick(1, 5) } else { 0 },
                fail_pct: 0,
                submit_timeout_pct: 0,
                page_stop_pct: 0,
                page_events: Vec::new(),
                deaths: Vec::new(),
                recover_lanes: false,
                approvals: None,
                root_waits: Vec::new(),
            },
            root: pick(0, 1) == 1,
            // Each fault class is on or off per seed, with a drawn rate when on.
            daemon_crash_pct: if pick(0, 1) == 1 { pick(1, 8) } else { 0 },
            executor_crash_pct: if pick(0, 1) == 1 { pick(1, 8) } else { 0 },
            hold_pct: if pick(0, 2) == 0 { pick(1, 5) } else { 0 },
            partition_pct: 0,
            submit_delay_ms: 0,
            safety_ms: pick(30, 120) * 60_000,
            horizon_ms: 8 * 3_600_000,
            tick_ms: 1_000,
            auto: true,
            script: Vec::new(),
            outages: Vec::new(),
            partitions: Vec::new(),
            triggers: Vec::new(),
            dead_man: None,
            away: None,
            notify_targets: 0,
            notify_down: Vec::new(),
            standby: false,
            leader_faults: Vec::new(),
        };
        // Drawn after the others, so a seed's earlier knobs stay what they were.
        knobs.agents.fail_pct = if pick(0, 2) == 0 { pick(2, 10) } else { 0 };
        knobs.partition_pct = if pick(0, 2) == 0 { pick(1, 4) } else { 0 };
        knobs.submit_delay_ms = if pick(0, 1) == 1 { pick(1, 8) * 1_000 } else { 0 };
        knobs.agents.submit_timeout_pct = if pick(0, 3) == 0 { pick(2, 10) } else { 0 };
        knobs.agents.page_stop_pct = if pick(0, 3) == 0 { pick(1, 3) } else { 0 };
        // Some seeds run Codex and Claude lanes on a CLI executor besides the browser's.
        if pick(0, 2) == 0 {
            knobs.cli = CliKnobs::swarm(&mut pick);
            knobs.cli_workers = pick(0, 2) as usize;
            if knobs.cli_workers + knobs.cli.claude_workers == 0 {
                knobs.cli.claude_workers = 1;
            }
        }
        knobs
    }

    /// A calm run for the crash matrix: two workers, three turns, no random faults.
    pub fn calm(seed: u64) -> Knobs {
        Knobs {
            seed,
            workers: 2,
            cli_workers: 0,
            cli: CliKnobs::default(),
            steering: true,
            concurrency: 8,
            agents: AgentKnobs {
                turns_min: 3,
                turns_max: 3,
                progress_pct: 100,
                long_turn_pct: 0,
                delivery_timeout_pct: 0,
                human_pct: 0,
                blocks: false,
                forget_complete: false,
                block_waits: false,
                dependency_pct: 0,
                message_pct: 0,
                lost_pct: 0,
                host_ui_pct: 0,
                fail_pct: 0,
                submit_timeout_pct: 0,
                page_stop_pct: 0,
                page_events: Vec::new(),
                deaths: Vec::new(),
                recover_lanes: false,
                approvals: None,
                root_waits: Vec::new(),
            },
            root: false,
            daemon_crash_pct: 0,
            executor_crash_pct: 0,
            hold_pct: 0,
            partition_pct: 0,
            submit_delay_ms: 0,
            safety_ms: 3 * 3_600_000,
            horizon_ms: 8 * 3_600_000,
            tick_ms: 1_000,
            auto: true,
            script: Vec::new(),
            outages: Vec::new(),
            partitions: Vec::new(),
            triggers: Vec::new(),
            dead_man: None,
            away: None,
            notify_targets: 0,
            notify_down: Vec::new(),
            standby: false,
            leader_faults: Vec::new(),
        }
    }
}

/// The knobs as printed at the top of a report.
pub fn describe(k: &Knobs) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "seed={} workers={} steering={} concurrency={} turns={}..{} progress={}% long_turns={}% delivery_timeouts={}% submit_timeouts={}% human={}% \
         blocks={} forget_complete={} block_waits={} dependency={}% message={}% lost={}% host_ui={}% fail={}% page_stops={}% root={} \
         daemon_crash={}%/min executor_crash={}%/min hold={}%/min partition={}%/min submit_delay={}ms safety={}min tick={}ms",
        k.seed,
        k.workers,
        k.steering,
        k.concurrency,
        k.agents.turns_min,
        k.agents.turns_max,
        k.agents.progress_pct,
        k.agents.long_turn_pct,
        k.agents.delivery_timeout_pct,
        k.agents.submit_timeout_pct,
        k.agents.human_pct,
        k.agents.blocks,
        k.agents.forget_complete,
        k.agents.block_waits,
        k.agents.dependency_pct,
        k.agents.message_pct,
        k.agents.lost_pct,
        k.agents.host_ui_pct,
        k.agents.fail_pct,
        k.agents.page_stop_pct,
        k.root,
        k.daemon_crash_pct,
        k.executor_crash_pct,
        k.hold_pct,
        k.partition_pct,
        k.submit_delay_ms,
        k.safety_ms / 60_000,
        k.tick_ms
    );
    let c = &k.cli;
    if c.executor || k.cli_workers > 0 || c.claude_workers > 0 {
        let _ = write!(
            s,
            " cli_executor={} codex_workers={} claude_workers={} cli_child_crash={}% cli_merge={}% cli_foreign={}% \
             cli_limits={}% cli_torn={}%",
            c.executor,
            k.cli_workers,
            c.claude_workers,
            c.child_crash_pct,
            c.merge_pct,
            c.foreign_pct,
            c.limit_pct,
            c.torn_pct
        );
        if c.approvals_ask {
            let _ = write!(s, " cli_approvals=ask cli_ask={}%", c.ask_pct);
        }
    }
    if k.notify_targets > 0 {
        let _ = write!(s, " notify={} receiver_down={:?}", k.notify_targets, k.notify_down);
    }
    if k.standby {
        let _ = write!(s, " standby=on leader_faults={:?}", k.leader_faults);
    }
    s
}
