//! One simulated run: the hosts, the fault plan, the safety and liveness phases, and
//! the final checks. Everything is decided by the seed.

use crate::browser::{self, BrowserState, Storage};
use crate::chat::{self, AgentKnobs};
use crate::cli::{self, CliState};
use crate::cli_oracle;
use crate::cli_session::{CliDisk, CliKnobs};
use crate::daemon::{self, DaemonState, EPOCH_MS};
use crate::deadman_oracle;
use crate::faults::{CrashAt, Reaction, Target, Trigger};
use crate::kinds_oracle;
use crate::ledger::{Ledger, SharedLedger};
use crate::oracle;
use crate::wire::{DAEMON_PORT, FromDaemon, SimOp, ToDaemon, conversation_url, read_frame, write_frame};
use engine::model::Lifecycle;
use engine::{Engine, EngineConfig, Record};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use runtime::{Disk, MemStore, Store};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};

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
}

impl Action {
    /// How the scenario's checks name this action when it never happened.
    fn describe(&self) -> String {
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
        }
    }
}

/// What a run produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Broken invariants (empty when the run passed).
    pub violations: Vec<String>,
    /// Hash of the full trace: same seed, same hash.
    pub trace_hash: u64,
    /// The last trace lines, for reports.
    pub trace_tail: Vec<String>,
    /// The whole trace.
    pub trace: Vec<String>,
    /// Simulated time when the run ended.
    pub sim_ms: u64,
    /// Turmoil steps taken.
    pub steps: u64,
    /// Workers spawned, and how many reached `completed`.
    pub workers: usize,
    /// Workers the engine holds as completed at the end.
    pub completed: usize,
    /// CLI workers still waiting, unsent, for an executor of their kind at the end.
    pub cli_waiting: usize,
    /// Workers the engine holds as failed at the end (their agents gave up).
    pub failed: usize,
    /// Prompts accepted by conversations.
    pub deliveries: usize,
    /// Every delivery, with the conversation that took it.
    pub delivered: Vec<oracle::Delivery>,
    /// Fresh `continue` prompts delivered after delivery timeouts.
    pub fresh_continues: u32,
    /// Times a page showed the delivery-timeout card, whose Retry control is never to be
    /// clicked: what makes zero clicks meaningful.
    pub retry_offers: u32,
    /// Clicks on a Retry control (each one is also a violation).
    pub retry_clicks: usize,
    /// Workers left paused by the stall guard (a designed human checkpoint).
    pub stalled: usize,
    /// Blocks read from the agents' responses, by status (working, complete, blocked).
    pub blocks: [usize; 3],
    /// Attempts that used the completion-reconcile prompt (a `complete` block without
    /// `worker_complete`).
    pub reconciles: usize,
    /// Continuations scheduled while a worker's `blocked` block was unresolved (must be 0).
    pub scheduled_while_blocked: usize,
    /// Times the dead-man layer fired (`deadman.fired`).
    pub dead_man_fired: usize,
    /// Attempts that carried the dead-man wake (root recoveries).
    pub dead_man_recoveries: usize,
    /// Wakes deferred by the anti-spam floor (`execution.deferred`).
    pub deferrals: usize,
    /// Attempts withdrawn before they left or before their submission began.
    pub withdrawn: usize,
    /// Automatic attempts submitted while their worker was held (see `oracle`).
    pub submitted_while_held: Vec<String>,
    /// Times the executor reconnected and said `hello` again.
    pub reconnects: usize,
    /// Conversations the executor stopped managing on `conversation.close`.
    pub closes: usize,
    /// Workers held by a page (`worker.held`: a limit over their account, a dialog).
    pub holds: usize,
    /// Workers paused by a page for a person (a usage limit without a time, an account check).
    pub page_pauses: usize,
    /// Approval cards the pages showed (answered by a simulated person, never clicked).
    pub approvals: u32,
    /// Workers paused because of the app (`app_unavailable`, `app_not_selected`).
    pub app_pauses: usize,
    /// What the CLI executor's sessions did (`cli_oracle.rs`).
    pub cli: cli_oracle::CliCounts,
    /// Planned crashes and triggers that never happened.
    pub unreached: Vec<String>,
    /// Crashes performed.
    pub crashes: Vec<String>,
}

/// Runs one simulation with the given knobs and crash plan.
pub fn run(knobs: &Knobs, plan: &[CrashAt]) -> Outcome {
    let ledger: SharedLedger = Rc::new(RefCell::new(Ledger {
        faults_on: true,
        crash_plan: plan.to_vec(),
        triggers: knobs.triggers.clone(),
        unattached: knobs
            .script
            .iter()
            .filter(|a| matches!(a.what, ActionKind::Attach))
            .map(Action::describe)
            .collect(),
        ..Ledger::default()
    }));
    let disk = Rc::new(RefCell::new(Disk::default()));
    let storage = Rc::new(RefCell::new(Storage::default()));
    let mut sim = turmoil::Builder::new()
        .rng_seed(knobs.seed)
        .enable_random_order()
        .epoch(UNIX_EPOCH + Duration::from_millis(EPOCH_MS))
        .simulation_duration(Duration::from_millis(knobs.horizon_ms + 60_000))
        .tick_duration(Duration::from_millis(knobs.tick_ms))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(50))
        .build();
    let engine_config = EngineConfig { seed: knobs.seed, ..EngineConfig::default() };
    let d = DaemonState { disk: disk.clone(), ledger: ledger.clone(), config: engine_config.clone() };
    sim.host("daemon", move || daemon::run(d.clone()));
    // One conversation per lane and root, spares for recoveries when faults can lose
    // conversations (every conversation host costs time on every tick).
    let faulty = knobs.agents.lost_pct > 0
        || knobs.daemon_crash_pct > 0
        || knobs.executor_crash_pct > 0
        || knobs.hold_pct > 0
        || knobs.partition_pct > 0
        || !knobs.partitions.is_empty()
        || !knobs.agents.deaths.is_empty()
        || !plan.is_empty();
    let spares = if faulty { knobs.workers + 4 } else { 3 };
    let chats: Vec<String> = (0..knobs.workers + spares).map(|i| format!("chat-{i}")).collect();
    // One fresh conversation for each scripted attach, never handed out for a create.
    let attaches = knobs.script.iter().filter(|a| matches!(a.what, ActionKind::Attach)).count();
    let fresh: Vec<String> = (0..attaches).map(|i| format!("fresh-{i}")).collect();
    for (i, name) in chats.iter().chain(&fresh).enumerate() {
        let (n, seed, agents, l) =
            (name.clone(), knobs.seed.wrapping_mul(31).wrapping_add(i as u64), knobs.agents.clone(), ledger.clone());
        sim.host(name.as_str(), move || chat::run(n.clone(), seed, agents.clone(), l.clone()));
    }
    let b = BrowserState {
        storage: storage.clone(),
        chats: chats.clone(),
        attachable: fresh.clone(),
        steering: knobs.steering,
        concurrency: knobs.concurrency,
        submit_delay_ms: knobs.submit_delay_ms,
        ledger: ledger.clone(),
    };
    sim.host("browser", move || browser::run(b.clone()));
    // The CLI executor's machine: its journal and the CLIs' records survive its restarts.
    let cli_disk = Rc::new(RefCell::new(CliDisk::default()));
    if knobs.cli.executor {
        let c = CliState {
            disk: cli_disk.clone(),
            knobs: knobs.cli.clone(),
            agents: knobs.agents.clone(),
            seed: knobs.seed,
            ledger: ledger.clone(),
        };
        sim.host("cli", move || cli::run(c.clone()));
    }
    let cli_lanes = cli_oracle::lane_kinds(knobs);
    let (workers, auto, root) = (knobs.workers, knobs.auto, knobs.root);
    let (dead_man, away) = (knobs.dead_man, knobs.away);
    let operator_ledger = ledger.clone();
    let operator_script = Script { actions: knobs.script.clone(), fresh };
    let approvals = (knobs.cli.executor && knobs.cli.approvals_ask).then_some(knobs.seed);
    let setup = Setup { workers, cli_lanes: cli_lanes.clone(), auto, root, dead_man, away, approvals };
    sim.client("operator", async move { operator(setup, operator_script, operator_ledger).await });

    let mut rng = ChaCha8Rng::seed_from_u64(knobs.seed ^ 0xFA_0175);
    let mut restart: Vec<(Target, u64)> = Vec::new();
    let mut link = Link::Up;
    let tick = knobs.tick_ms;
    let mut steps = 0u64;
    // When every agent finished and no fault was pending (the CLI oracle's settled checks).
    let mut settled_ms = None;
    let mut outcome = Outcome { workers, ..Outcome::default() };
    loop {
        if let Err(e) = sim.step() {
            ledger.borrow_mut().violation(format!("host failed: {e}"));
            break;
        }
        steps += 1;
        let now = sim.elapsed().as_millis() as u64;
        ledger.borrow_mut().now_ms = now;
        let faults_on = now < knobs.safety_ms;
        ledger.borrow_mut().faults_on = faults_on;
        // Planned crashes at named boundaries.
        let planned = ledger.borrow().crash_now.filter(|(_, at)| *at <= now).map(|(t, _)| t);
        if let Some(target) = planned {
            ledger.borrow_mut().crash_now = None;
            crash(&mut sim, target, &disk, &ledger);
            restart.push((target, now + 2_000 + rng.next_u64() % 20_000));
        }
        // Scripted executor outages (the browser is closed for a while) and partitions,
        // and the outages and link faults the scenario's triggers asked for.
        let mut reactions = std::mem::take(&mut ledger.borrow_mut().reactions);
        for &(at, length) in &knobs.outages {
            if at <= now && now < at + tick {
                reactions.push((Reaction::ExecutorDown(length), Target::Executor));
            }
        }
        for &(at, length) in &knobs.partitions {
            if at <= now && now < at + tick {
                reactions.push((Reaction::Partition(length), Target::Executor));
            }
        }
        for (reaction, executor) in reactions {
            match reaction {
                Reaction::ExecutorDown(length) => {
                    let exists = executor != Target::Cli || knobs.cli.executor;
                    let running = exists && !restart.iter().any(|(t, _)| *t == executor);
                    if running {
                        let host = executor.host();
                        ledger.borrow_mut().crashes.push(format!("{host} outage at t={now} for {length} ms"));
                        crash(&mut sim, executor, &disk, &ledger);
                        restart.push((executor, now + length));
                    }
                }
                Reaction::Hold(length) => link.set(&sim, Link::Held { until: now + length }, &ledger),
                Reaction::Partition(length) => link.set(&sim, Link::Partitioned { until: now + length }, &ledger),
                Reaction::Call(_) => {} // the daemon delivers calls itself
            }
        }
        // Random faults (swarm), once per simulated minute of the safety phase.
        if faults_on && now % 60_000 < tick {
            // The CLI executor crashes as often as the browser (drawn only when it runs, so
            // that other seeds' draws stay what they were).
            let cli_crash_pct = if knobs.cli.executor { knobs.executor_crash_pct } else { 0 };
            let targets = [(Target::Daemon, knobs.daemon_crash_pct), (Target::Executor, knobs.executor_crash_pct)];
            let cli_target = knobs.cli.executor.then_some((Target::Cli, cli_crash_pct));
            for (target, pct) in targets.into_iter().chain(cli_target) {
                let running = !restart.iter().any(|(t, _)| *t == target);
                if running && rng.next_u64() % 100 < pct {
                    ledger.borrow_mut().crashes.push(format!("{} at random t={now}", target.host()));
                    crash(&mut sim, target, &disk, &ledger);
                    restart.push((target, now + 1_000 + rng.next_u64() % 60_000));
                }
            }
            if link == Link::Up && rng.next_u64() % 100 < knobs.hold_pct {
                link.set(&sim, Link::Held { until: now + 1_000 + rng.next_u64() % 20_000 }, &ledger);
            }
            // A partition outlasts the heartbeat interval, so the connection breaks under
            // it (shorter ones are what TCP retransmission hides: holds).
            if knobs.partition_pct > 0 && link == Link::Up && rng.next_u64() % 100 < knobs.partition_pct {
                let until = now + PARTITION_MS_MIN + rng.next_u64() % (PARTITION_MS_MAX - PARTITION_MS_MIN);
                link.set(&sim, Link::Partitioned { until }, &ledger);
            }
        }
        if link.until().is_some_and(|t| t <= now) {
            link.set(&sim, Link::Up, &ledger);
        }
        restart.retain(|(target, at)| {
            if *at <= now {
                sim.bounce(target.host());
                false
            } else {
                true
            }
        });
        let done = {
            let l = ledger.borrow();
            let cli_agents = if knobs.cli.executor { cli_lanes.len() } else { 0 };
            let agents = workers + usize::from(knobs.root) + cli_agents;
            !faults_on
                && restart.is_empty()
                && link == Link::Up
                && l.finished_agents.len() >= agents
                && now > knobs.safety_ms + 60_000
        };
        if done || now >= knobs.horizon_ms {
            outcome.sim_ms = now;
            settled_ms = done.then_some(now);
            break;
        }
    }
    outcome.steps = steps;
    check(&mut outcome, &ledger, &disk, &engine_config, knobs);
    if let Some((engine, events)) = recovered(&disk, &engine_config) {
        let cli_disk = cli_disk.borrow();
        let daemon_starts = ledger.borrow().daemon_starts.clone();
        let approval_calls = ledger.borrow().approval_calls.clone();
        let limits = cli_oracle::limits_of(knobs, &cli_disk);
        let start = engine::time::Timestamp(EPOCH_MS);
        let src = cli_oracle::Sources {
            events: &events,
            engine: &engine,
            start,
            daemon_starts: &daemon_starts,
            limits,
            settled_ms,
            approval_calls: &approval_calls,
        };
        let facts = cli_oracle::check(knobs, &cli_disk, &src);
        outcome.cli = facts.counts;
        outcome.violations.extend(facts.violations);
    }
    outcome
}

/// The engine as the store recovers it after the run, and every durable event by cursor.
fn recovered(disk: &Rc<RefCell<Disk>>, config: &EngineConfig) -> Option<(Engine, Vec<engine::event::Event>)> {
    let records = MemStore::open(disk.clone()).load().ok()?;
    let mut events: Vec<engine::event::Event> =
        records.iter().filter_map(|r| if let Record::Event(e) = r { Some(e.clone()) } else { None }).collect();
    events.sort_by_key(|e| e.cursor);
    Some((Engine::recover(config.clone(), records).ok()?, events))
}

/// Shortest partition of the bridge link: longer than the executor's heartbeat interval
/// (20 s), so the connection breaks under it. Turmoil drops segments without
/// retransmitting them, so a shorter one would stall a stream forever where real TCP
/// would retransmit: that is a hold.
pub const PARTITION_MS_MIN: u64 = 30_000;
/// Longest random partition of the bridge link.
const PARTITION_MS_MAX: u64 = 5 * 60_000;

/// The bridge link (browser <-> daemon): healthy, holding its messages (delivered late,
/// in order, when released) or partitioned (every message dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Up,
    Held { until: u64 },
    Partitioned { until: u64 },
}

impl Link {
    fn until(self) -> Option<u64> {
        match self {
            Link::Up => None,
            Link::Held { until } | Link::Partitioned { until } => Some(until),
        }
    }

    /// Heals the current fault, then applies `to` (turmoil cannot hold and partition one
    /// link at once).
    fn set(&mut self, sim: &turmoil::Sim<'_>, to: Link, ledger: &SharedLedger) {
        match *self {
            Link::Up => {}
            Link::Held { .. } => sim.release("browser", "daemon"),
            Link::Partitioned { .. } => sim.repair("browser", "daemon"),
        }
        match to {
            Link::Up => {}
            Link::Held { .. } => sim.hold("browser", "daemon"),
            Link::Partitioned { .. } => sim.partition("browser", "daemon"),
        }
        let mut l = ledger.borrow_mut();
        if let Link::Partitioned { until } = to {
            let now = l.now_ms;
            l.crashes.push(format!("bridge partition at t={now} for {} ms", until - now));
        }
        l.trace("network", format!("bridge link {to:?}"));
        *self = to;
    }
}

/// Crashes a host. A daemon crash loses everything not yet synced on its disk.
fn crash(sim: &mut turmoil::Sim<'_>, target: Target, disk: &Rc<RefCell<Disk>>, ledger: &SharedLedger) {
    sim.crash(target.host());
    if target == Target::Daemon {
        disk.borrow_mut().crash();
    }
    ledger.borrow_mut().trace(target.host(), "CRASH");
}

/// The operator's part of a scenario.
struct Script {
    /// Timed actions.
    actions: Vec<Action>,
    /// Fresh conversation hosts, one for each `Attach` in `actions`, in time order.
    fresh: Vec<String>,
}

/// How long the operator waits before trying an attach again that was refused while a
/// continuation was being delivered ("attach after it settles").
const ATTACH_RETRY_MS: u64 = 5_000;
/// Tries of one attach at most (ten minutes of deliveries in the way).
const ATTACH_TRIES_MAX: u32 = 120;

/// The simulated operator: creates the run and its lanes, then sweeps every ten
/// minutes: answers human waits and resumes workers paused as ambiguous (after
/// "looking at the conversation"). It never asks for a manual continue.
/// What the operator sets up before it only watches.
struct Setup {
    workers: usize,
    /// The CLI lanes' kinds, in spawn order (after the browser's lanes).
    cli_lanes: Vec<engine::ExecutorKind>,
    auto: bool,
    root: bool,
    dead_man: Option<(engine::deadman::DeadManMode, u64)>,
    away: Option<(u64, u64)>,
    /// With an `ask` CLI executor: the run's seed, from which the operator draws how it
    /// answers approval requests (`cli_operator.rs`).
    approvals: Option<u64>,
}

async fn operator(setup: Setup, script: Script, ledger: SharedLedger) -> turmoil::Result {
    let Setup { workers, cli_lanes, auto, root, dead_man, away, approvals } = setup;
    let _ = call(SimOp::CreateRun { auto }, &ledger).await; // answers are in the trace
    if let Some((mode, after_ms)) = dead_man {
        let _ = call(SimOp::SetDeadMan { mode, after_ms }, &ledger).await;
    }
    if root {
        // Starting the coordinator in its own conversation is the operator's one explicit act.
        ledger.borrow_mut().operator_recoveries += 1;
        let _ = call(SimOp::StartRoot, &ledger).await;
    }
    let mut lanes = Vec::new();
    for i in 0..workers {
        if let Ok(Some(id)) = call(SimOp::Spawn { name: format!("lane{i}") }, &ledger).await {
            lanes.push(id);
        }
    }
    // CLI lanes come after the browser's: `laneN` past `workers` names them too.
    for (i, kind) in cli_lanes.into_iter().enumerate() {
        if let Ok(Some(id)) = call(SimOp::SpawnCli { name: format!("cli{i}"), kind }, &ledger).await {
            ledger.borrow_mut().cli_workers.insert(id);
            lanes.push(id);
        }
    }
    if let Some(seed) = approvals {
        tokio::task::spawn_local(approver(seed, away, ledger.clone()));
    }
    let Script { actions: mut script, fresh } = script;
    script.sort_by_key(|a| a.at_ms);
    let mut script = script.into_iter().peekable();
    let mut fresh = fresh.into_iter();
    let mut next_sweep = 600_000;
    loop {
        let now = ledger.borrow().now_ms;
        let next_action = script.peek().map_or(u64::MAX, |a| a.at_ms);
        let wake = next_sweep.min(next_action);
        tokio::time::sleep(Duration::from_millis(wake.saturating_sub(now).max(1))).await;
        let now = ledger.borrow().now_ms;
        while let Some(action) = script.next_if(|a| a.at_ms <= now) {
            // `usize::MAX` names `/root`, the run's first worker.
            let worker = match action.lane {
                usize::MAX => engine::ids::WorkerId(1),
                lane => match lanes.get(lane) {
                    Some(&id) => id,
                    None => continue,
                },
            };
            let op = match action.what {
                ActionKind::Pause { after_turn } => SimOp::Pause { worker, after_turn },
                ActionKind::Resume => SimOp::Resume { worker },
                ActionKind::ContinueNow => {
                    ledger.borrow_mut().operator_recoveries += 1;
                    SimOp::ContinueNow { worker }
                }
                ActionKind::Steer { outcome, message } => SimOp::Steer { worker, outcome, message },
                ActionKind::Attach => {
                    let Some(chat) = fresh.next() else { continue };
                    tokio::task::spawn_local(attach(action.describe(), worker, chat, ledger.clone()));
                    continue;
                }
            };
            let _ = call(op, &ledger).await;
        }
        if now >= next_sweep {
            match away {
                // Away: the next sweep is when the person is back (waking every tick until
                // then would cost the simulator forty times the run's other work).
                Some((from, until)) if (from..until).contains(&now) => next_sweep = until,
                _ => {
                    let _ = call(SimOp::OperatorSweep, &ledger).await;
                    next_sweep = now + 600_000;
                }
            }
        }
    }
}

/// Attaches a worker to the fresh conversation `chat` (`planned` names the scenario's
/// action), retrying while a delivery is in the way. Nobody opens that conversation in
/// the browser: the engine's next turn names it, and the browser opens it for that.
async fn attach(planned: String, worker: engine::ids::WorkerId, chat: String, ledger: SharedLedger) {
    let conversation = conversation_url(&chat);
    for _ in 0..ATTACH_TRIES_MAX {
        match call(SimOp::Attach { worker, conversation: conversation.clone() }, &ledger).await {
            Ok(_) => {
                ledger.borrow_mut().unattached.remove(&planned);
                return;
            }
            Err(code) if code == "INVALID_ARGUMENT" => {
                tokio::time::sleep(Duration::from_millis(ATTACH_RETRY_MS)).await;
            }
            Err(_) => return,
        }
    }
}

/// The operator's eye on "Needs you" for CLI approval requests (unless away).
async fn approver(seed: u64, away: Option<(u64, u64)>, ledger: SharedLedger) {
    loop {
        tokio::time::sleep(Duration::from_millis(crate::cli_operator::APPROVAL_LOOK_MS)).await;
        let now = ledger.borrow().now_ms;
        if !away.is_some_and(|(from, until)| (from..until).contains(&now)) {
            let _ = call(SimOp::ApprovalSweep { seed }, &ledger).await;
        }
    }
}

/// One operator call, retried until the daemon answers.
async fn call(op: SimOp, ledger: &SharedLedger) -> Result<Option<engine::ids::WorkerId>, String> {
    loop {
        if let Ok(mut s) = turmoil::net::TcpStream::connect(("daemon", DAEMON_PORT)).await
            && write_frame(&mut s, &ToDaemon::Call { call: 0, op: op.clone() }).await.is_ok()
            && let Ok(Some(FromDaemon::Reply { result, .. })) = read_frame::<_, FromDaemon>(&mut s).await
            && result.as_ref().err().is_none_or(|e| e != "UNAVAILABLE")
        {
            if let (SimOp::OperatorSweep, Ok(Some(recoveries))) = (&op, &result) {
                ledger.borrow_mut().operator_recoveries += recoveries.0 as usize;
            }
            let idle_sweep = matches!(
                (&op, &result),
                (SimOp::OperatorSweep | SimOp::ApprovalSweep { .. }, Ok(Some(n))) if n.0 == 0
            );
            if !idle_sweep {
                ledger.borrow_mut().trace("operator", format!("{op:?} -> {result:?}"));
            }
            return result;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
}

/// The final checks: everything the oracle proves about a run.
fn check(outcome: &mut Outcome, ledger: &SharedLedger, disk: &Rc<RefCell<Disk>>, config: &EngineConfig, knobs: &Knobs) {
    let mut l = ledger.borrow_mut();
    let mut store = MemStore::open(disk.clone());
    let records = store.load().unwrap_or_default();
    match Engine::recover(config.clone(), records.clone()) {
        Err(e) => l.violation(format!("store does not recover: {e}")),
        Ok(engine) => {
            if let Err(v) = engine.check_invariants() {
                l.violation(format!("recovered engine: {v}"));
            }
            // Acknowledged writes survive every crash.
            let summaries: BTreeSet<String> = records
                .iter()
                .filter_map(|r| match r {
                    Record::Event(e) => match &e.kind {
                        engine::event::EventKind::WorkerProgress { summary, .. }
                        | engine::event::EventKind::WorkerCompleted { summary } => Some(summary.to_string()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            let lost: Vec<String> =
                l.acked.iter().filter(|(_, s)| !summaries.contains(s)).map(|(_, s)| s.clone()).collect();
            for s in lost {
                l.violation(format!("acknowledged write {s} lost"));
            }
            // What must follow: a fresh `continue` after each delivery timeout, and every
            // due keepalive delivered or superseded.
            let mut events: Vec<engine::event::Event> =
                records.iter().filter_map(|r| if let Record::Event(e) = r { Some(e.clone()) } else { None }).collect();
            events.sort_by_key(|e| e.cursor);
            let log = oracle::Log {
                events: &events,
                auto: knobs.auto,
                start: engine::time::Timestamp(EPOCH_MS),
                end: engine::time::Timestamp(EPOCH_MS + outcome.sim_ms),
            };
            for broken in oracle::delivery_timeouts_followed(log).into_iter().chain(oracle::keepalives_kept(log)) {
                l.violation(broken);
            }
            let seen = oracle::Seen {
                deliveries: &l.delivered,
                managed: &l.managed,
                closes: &l.closes,
                published: &l.published,
            };
            for broken in oracle::attachments_honoured(log, seen) {
                l.violation(broken);
            }
            let kinds = engine.workers().map(|w| (w.id, w.spec.executor)).collect();
            let holds = oracle::account_holds_honoured(log, &kinds);
            for broken in holds.into_iter().chain(oracle::approvals_honoured(log)) {
                l.violation(broken);
            }
            let after_ms = knobs.dead_man.map_or(engine::limits::DEADMAN_AFTER_MS_DEFAULT, |(_, ms)| ms);
            for broken in deadman_oracle::dead_man_honoured(log, after_ms) {
                l.violation(broken);
            }
            outcome.dead_man_fired = events.iter().filter(|e| e.kind.name() == "deadman.fired").count();
            outcome.dead_man_recoveries =
                engine.attempts().filter(|a| a.wake.contains(engine::wake::WakeReason::DeadMan)).count();
            for e in &events {
                match &e.kind {
                    engine::event::EventKind::WorkerHeld { .. } => outcome.holds += 1,
                    engine::event::EventKind::WorkerPaused {
                        reason: engine::model::PauseReason::UsageLimit | engine::model::PauseReason::AccountCheck,
                        ..
                    } => outcome.page_pauses += 1,
                    engine::event::EventKind::WorkerPaused {
                        reason: engine::model::PauseReason::AppUnavailable | engine::model::PauseReason::AppNotSelected,
                        ..
                    } => outcome.app_pauses += 1,
                    _ => {}
                }
            }
            outcome.submitted_while_held = oracle::held_submissions(log);
            outcome.withdrawn =
                engine.attempts().filter(|a| a.outcome == Some(engine::model::AttemptOutcome::Withdrawn)).count();
            // Event cursors are dense from 1.
            let cursors: Vec<u64> =
                records.iter().filter_map(|r| if let Record::Event(e) = r { Some(e.cursor.0) } else { None }).collect();
            if cursors.iter().enumerate().any(|(i, c)| *c != i as u64 + 1) {
                l.violation("event cursors have a gap");
            }
            // Exactly once: no delivered prompt is one the engine believes was never sent.
            let late = oracle::scheduled_after_end(log);
            let delivered = l.delivered.clone();
            for oracle::Delivery { key, .. } in &delivered {
                let id = key.rsplit("exe-").next().and_then(|n| n.parse::<u64>().ok());
                let attempt = id.and_then(|n| engine.attempt(engine::ids::AttemptId(n)));
                let undelivered = attempt.is_some_and(|a| {
                    matches!(
                        a.outcome,
                        Some(engine::model::AttemptOutcome::Withdrawn | engine::model::AttemptOutcome::NotDelivered)
                    )
                });
                if attempt.is_none() || undelivered {
                    let what = format!("delivered {key} but the engine holds it as {:?}", attempt.map(|a| a.outcome));
                    l.violations.push(what);
                }
                // Nothing new for a finished worker: a prompt that reaches a completed or
                // failed worker's conversation was in flight before it ended (spec 000
                // §21.3), never scheduled after.
                if let Some(a) = attempt
                    && let Some(cursor) = late.get(&a.id)
                {
                    l.violations.push(format!("delivered {key}, scheduled (event #{cursor}) after {} ended", a.worker));
                }
            }
            // Liveness: every lane whose agent finished is completed, with zero manual continues.
            // The coordinator can only complete after every lane: a stalled lane (a designed
            // human checkpoint) keeps it open legitimately.
            let lane_stalled = engine.workers().any(|w| {
                w.spec.name != "/root"
                    && w.pause.as_ref().is_some_and(|p| p.reason == engine::model::PauseReason::Stall)
            });
            let with_root = knobs.root && !lane_stalled;
            // Without a CLI executor, CLI lanes wait for one: checked apart, never live here.
            let served = knobs.cli.executor;
            let facts = kinds_oracle::cli_workers_untouched(&engine, &l.cli_workers, &l.browser_commands, served);
            outcome.cli_waiting = facts.waiting;
            l.violations.extend(facts.violations);
            let with_root = with_root && (l.cli_workers.is_empty() || served);
            let lanes: Vec<_> = engine
                .workers()
                .filter(|w| (with_root || w.spec.name != "/root") && (served || !l.cli_workers.contains(&w.id)))
                .collect();
            outcome.workers = lanes.len();
            outcome.completed = lanes.iter().filter(|w| w.lifecycle == Lifecycle::Completed).count();
            outcome.failed = lanes.iter().filter(|w| w.lifecycle == Lifecycle::Failed).count();
            for w in &lanes {
                // An agent that gave up (`worker_fail`) finished too: its worker is failed.
                let gave_up = l.failed_agents.contains(&w.id);
                let expected = if gave_up { Lifecycle::Failed } else { Lifecycle::Completed };
                if l.finished_agents.contains(&w.id) && w.lifecycle != expected {
                    l.violation(format!("{} finished its work but is {}", w.id, w.lifecycle.as_str()));
                }
                // A stall pause is the policy's designed human checkpoint, not a bug: the
                // engine only sets it past the no-progress thresholds.
                let stalled = w.pause.as_ref().is_some_and(|p| p.reason == engine::model::PauseReason::Stall);
                if stalled {
                    outcome.stalled += 1;
                } else if w.lifecycle != expected {
                    l.violation(format!("{} never finished (liveness): {}", w.id, w.lifecycle.as_str()));
                }
            }
            // Zero manual continues, except the operator's recoveries of conversations lost
            // to an ambiguous create (the spec's fail-closed path).
            // An attempt that definitely never reached the page hands its wake to the next
            // one (a redelivery): count the operator's act once, where it may have landed.
            let reached = |a: &engine::model::Attempt| {
                use engine::model::AttemptOutcome::{Ambiguous, DeliveryTimeout};
                a.submitted_at.is_some() || matches!(a.outcome, Some(Ambiguous | DeliveryTimeout))
            };
            let manual = engine
                .attempts()
                .filter(|a| a.wake.contains(engine::wake::WakeReason::ContinueNow) && reached(a))
                .count();
            block_facts(outcome, &engine, &records);
            // `/root`'s own recoveries of its lanes are coordination, not a person's act.
            let recoveries = l.operator_recoveries + l.root_recoveries;
            if manual > recoveries {
                l.violation(format!("{manual} manual continues were needed ({recoveries} recoveries)"));
            }
        }
    }
    // Nobody clicks Retry. The message a click re-sent was also counted a second time
    // for its idempotency key when the page took it (`Ledger::delivered`).
    for broken in oracle::no_retry_clicks(&l.retry_clicks) {
        l.violation(broken);
    }
    outcome.deliveries = l.deliveries.len();
    outcome.delivered = l.delivered.clone();
    outcome.fresh_continues = l.fresh_continues;
    outcome.retry_offers = l.retry_offers;
    outcome.approvals = l.approvals;
    outcome.retry_clicks = l.retry_clicks.len();
    outcome.violations = l.violations.clone();
    outcome.crashes = l.crashes.clone();
    outcome.reconnects = l.hellos.saturating_sub(1);
    outcome.closes = l.closes.iter().filter(|c| c.released).count();
    outcome.unreached = l.crash_plan.iter().map(|c| format!("crash at {} #{}", c.boundary, c.occurrence)).collect();
    let triggers = l
        .triggers
        .iter()
        .map(|t| format!("{:?} at {} #{} of {}", t.reaction, t.at.boundary, t.at.occurrence, t.worker()));
    outcome.unreached.extend(triggers);
    outcome.unreached.extend(l.unattached.iter().cloned());
    let mut hasher = Fnv::default();
    for line in &l.trace {
        hasher.write(line.as_bytes());
        hasher.write(b"\n");
    }
    outcome.trace_hash = hasher.0;
    outcome.trace_tail = l.trace.iter().rev().take(40).rev().cloned().collect();
    outcome.trace = l.trace.clone();
}

/// What the agents' end-of-response blocks made the backend do (spec 000 §27.3).
fn block_facts(outcome: &mut Outcome, engine: &Engine, records: &[Record]) {
    use engine::block::BlockStatus;
    use engine::event::EventKind;
    let mut events: Vec<&engine::event::Event> =
        records.iter().filter_map(|r| if let Record::Event(e) = r { Some(e) } else { None }).collect();
    events.sort_by_key(|e| e.cursor);
    let mut blocked = BTreeSet::new();
    for e in events {
        let Some(worker) = e.worker else { continue };
        match &e.kind {
            EventKind::BlockReported { status } => {
                let i = match status {
                    BlockStatus::Working => 0,
                    BlockStatus::Complete => 1,
                    BlockStatus::Blocked => 2,
                };
                outcome.blocks[i] += 1;
                if *status == BlockStatus::Blocked {
                    blocked.insert(worker);
                }
            }
            EventKind::WorkerHumanResolved => {
                blocked.remove(&worker);
            }
            EventKind::ExecutionScheduled { .. } if blocked.contains(&worker) => outcome.scheduled_while_blocked += 1,
            EventKind::ExecutionDeferred { .. } => outcome.deferrals += 1,
            _ => {}
        }
    }
    outcome.reconciles =
        engine.attempts().filter(|a| a.prompt == engine::model::PromptKind::CompletionReconcile).count();
}

/// FNV-1a, for trace hashes that are stable across processes and platforms.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
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
    s
}
