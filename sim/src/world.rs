//! One simulated run: the hosts, the fault plan, the safety and liveness phases, and
//! the final checks. Everything is decided by the seed.
//!
//! The knobs are in `knobs.rs`, the operator client in `operator.rs`, the final checks
//! and the outcome in `outcome.rs`; this file builds the hosts and drives the run.

use crate::browser::{self, BrowserState, Storage};
use crate::chat;
use crate::cli::{self, CliState};
use crate::cli_oracle;
use crate::cli_session::CliDisk;
use crate::daemon::{self, DaemonState};
use crate::epoch::EPOCH_MS;
use crate::failover::{Failover, SUPERVISOR_RESTART_MS};
use crate::faults::{CrashAt, Reaction, Target};
use crate::knobs::{Action, ActionKind, Knobs};
use crate::ledger::{Ledger, SharedLedger};
use crate::operator::{self, Script, Setup};
use crate::outcome::{self, Outcome};
use engine::EngineConfig;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use runtime::Disk;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};

/// Runs one simulation with the given knobs and crash plan.
pub fn run(knobs: &Knobs, plan: &[CrashAt]) -> Outcome {
    let ledger: SharedLedger = Rc::new(RefCell::new(Ledger {
        faults_on: true,
        crash_plan: plan.to_vec(),
        triggers: knobs.triggers.clone(),
        uncommitted: knobs
            .script
            .iter()
            .filter(|a| matches!(a.what, ActionKind::Attach | ActionKind::Stop))
            .map(Action::describe)
            .collect(),
        standby: knobs.standby,
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
    let notify_targets = (0..knobs.notify_targets).map(|i| format!("https://receiver.sim/{i}").into()).collect();
    let engine_config = EngineConfig { seed: knobs.seed, notify_targets, ..EngineConfig::default() };
    ledger.borrow_mut().notify_down = knobs.notify_down.clone();
    let (leased, config) = (knobs.standby, engine_config.clone());
    let d = DaemonState { disk: disk.clone(), ledger: ledger.clone(), config, host: Target::Daemon, leased };
    if knobs.standby {
        let s = DaemonState { host: Target::Standby, ..d.clone() };
        sim.host(Target::Standby.host(), move || daemon::run(s.clone()));
    }
    sim.host(Target::Daemon.host(), move || daemon::run(d.clone()));
    // One conversation per lane and root, spares for recoveries when faults can lose
    // conversations (every conversation host costs time on every tick).
    let faulty = knobs.agents.lost_pct > 0
        || knobs.daemon_crash_pct > 0
        || knobs.executor_crash_pct > 0
        || knobs.hold_pct > 0
        || knobs.partition_pct > 0
        || !knobs.partitions.is_empty()
        || !knobs.agents.deaths.is_empty()
        || knobs.standby
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
    let mut others: Vec<String> = chats.iter().chain(&fresh).cloned().collect();
    others.extend(["browser", "operator"].map(String::from));
    others.extend(knobs.cli.executor.then(|| "cli".to_string()));
    let mut failover = Failover::new(knobs.standby, &knobs.leader_faults, others);
    let operator_script = Script { actions: knobs.script.clone(), fresh };
    let approvals = (knobs.cli.executor && knobs.cli.approvals_ask).then_some(knobs.seed);
    let setup = Setup { workers, cli_lanes: cli_lanes.clone(), auto, root, dead_man, away, approvals };
    sim.client("operator", async move { operator::operator(setup, operator_script, operator_ledger).await });

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
            let target = if target == Target::Daemon { failover.leader(&disk) } else { target };
            crash(&mut sim, target, &disk, &ledger);
            restart.push((target, now + 2_000 + rng.next_u64() % 20_000));
        }
        // The leader's death, pause or cut from the store; daemons that stepped down (their
        // supervisor restarts them).
        let mut down: Vec<(Target, u64)> = failover.step(&sim, &disk, &ledger, now).into_iter().collect();
        // A paused daemon whose commit the fence refused exits when it wakes.
        let exits = {
            let mut l = ledger.borrow_mut();
            let (now_exits, later) =
                std::mem::take(&mut l.exits).into_iter().partition(|(h, _)| !l.paused.contains_key(h));
            l.exits = later;
            now_exits
        };
        down.extend(exits.into_iter().map(|(host, _): (Target, String)| (host, SUPERVISOR_RESTART_MS)));
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
                Reaction::LeaderDown(length) => down.push((failover.leader(&disk), length)),
                Reaction::Call(_) => {} // the daemon delivers calls itself
            }
        }
        for (host, length) in down {
            if !restart.iter().any(|(t, _)| *t == host) {
                crash(&mut sim, host, &disk, &ledger);
                restart.push((host, now + length));
            }
        }
        // Random faults (swarm), once per simulated minute of the safety phase.
        if faults_on && now % 60_000 < tick {
            // The CLI executor crashes as often as the browser (drawn only when it runs, so
            // that other seeds' draws stay what they were).
            let cli_crash_pct = if knobs.cli.executor { knobs.executor_crash_pct } else { 0 };
            let leader = failover.leader(&disk);
            let targets = [(leader, knobs.daemon_crash_pct), (Target::Executor, knobs.executor_crash_pct)];
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
                && failover.calm()
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
    outcome::check(&mut outcome, &ledger, &disk, &engine_config, knobs);
    outcome::check_cli(&mut outcome, knobs, &ledger, &disk, &cli_disk.borrow(), &engine_config, settled_ms);
    outcome
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
    if matches!(target, Target::Daemon | Target::Standby) {
        disk.borrow_mut().crash();
    }
    ledger.borrow_mut().trace(target.host(), "CRASH");
}
