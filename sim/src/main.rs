//! `sim`: the simulator's command line (`run`, `replay`, `matrix`). Thin: the work is in
//! the library.

#![allow(clippy::print_stdout)] // a command-line tool reports on stdout

use sim::faults::{Boundary, CrashAt};
use sim::knobs::{self, Knobs};
use sim::world;
use sim::{matrix, scenario, shrink};
use std::process::ExitCode;
use std::time::Instant;

fn usage() -> ExitCode {
    println!(
        "usage:\n  sim run --seeds N [--from S]     swarm seeds; exit 1 on the first failure\n  \
         sim replay --seed S [--crash BOUNDARY:K]  one run; prints its trace hash last\n  \
         sim replay --seed S --loss BOUNDARY:K:laneN:LENGTH  one executor-loss cell of the matrix\n  \
         sim replay --seed S --takeover BOUNDARY:K:laneN  one failover cell of the matrix\n  \
         sim replay --scenario FILE [--full [--crash BOUNDARY:K]]  one scenario run (its whole trace)\n  \
         sim scenario FILE...               named cases (scenarios/*.scn)\n  \
         sim matrix                        every boundary x occurrence, on every scenario\n  \
         sim hashes --seeds N              the trace hash of seeds 0..N, every matrix run and every scenario\n  \
         sim bench                         a 10-worker, 8-simulated-hour run, timed\n\nboundaries: {}",
        Boundary::ALL.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")
    );
    ExitCode::from(2)
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => {
            let Some(seeds) = flag(&args, "--seeds").and_then(|s| s.parse::<u64>().ok()) else { return usage() };
            let from = flag(&args, "--from").and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
            let jobs = flag(&args, "--jobs")
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u64))
                .max(1);
            swarm(from, seeds, jobs)
        }
        Some("replay") => {
            let full = args.iter().any(|a| a == "--full");
            let (knobs, plan) = if let Some(file) = flag(&args, "--scenario") {
                // With `--full`, the scenario's whole trace; without, its verdict.
                let scenario = std::fs::read_to_string(&file).ok().and_then(|t| scenario::parse(&file, &t).ok());
                // `--crash B:K` adds a matrix crash to the scenario's own plan (as the
                // crash matrix runs it).
                let crash = flag(&args, "--crash").and_then(|spec| parse_crash(&spec));
                match scenario {
                    Some(mut s) if full => {
                        s.plan.extend(crash);
                        (s.knobs, s.plan)
                    }
                    _ => return run_scenarios(std::slice::from_ref(&file)),
                }
            } else {
                let Some(seed) = flag(&args, "--seed").and_then(|s| s.parse::<u64>().ok()) else { return usage() };
                if let Some(spec) = flag(&args, "--loss") {
                    let Some(loss) = matrix::Loss::parse(&spec, seed) else { return usage() };
                    (matrix::knobs_for_loss(loss), Vec::new())
                } else if let Some(spec) = flag(&args, "--takeover") {
                    let Some(takeover) = matrix::Takeover::parse(&spec, seed) else { return usage() };
                    (matrix::knobs_for_takeover(takeover), Vec::new())
                } else {
                    let plan: Vec<CrashAt> = match flag(&args, "--crash") {
                        Some(spec) => match parse_crash(&spec) {
                            Some(c) => vec![c],
                            None => return usage(),
                        },
                        None => Vec::new(),
                    };
                    let knobs = match plan.first() {
                        Some(crash) => matrix::knobs_for(matrix::Cell { crash: *crash, seed }),
                        None => Knobs::swarm(seed),
                    };
                    (knobs, plan)
                }
            };
            println!("{}", knobs::describe(&knobs));
            let outcome = world::run(&knobs, &plan);
            let lines = if full { &outcome.trace } else { &outcome.trace_tail };
            for line in lines {
                println!("{line}");
            }
            for v in &outcome.violations {
                println!("VIOLATION {v}");
            }
            println!("trace hash {:016x}", outcome.trace_hash);
            if outcome.violations.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        Some("matrix") => run_matrix(),
        Some("hashes") => match flag(&args, "--seeds").and_then(|s| s.parse::<u64>().ok()) {
            Some(seeds) => hashes(seeds),
            None => usage(),
        },
        Some("scenario") => run_scenarios(&args[1..]),
        Some("bench") => bench(),
        _ => usage(),
    }
}

/// Runs scenario files; exit 1 if any broke an invariant or an expectation.
fn run_scenarios(files: &[String]) -> ExitCode {
    if files.is_empty() {
        return usage();
    }
    let mut failed = 0;
    for file in files {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                println!("{file}: cannot read: {e}");
                failed += 1;
                continue;
            }
        };
        let scenario = match scenario::parse(file, &text) {
            Ok(s) => s,
            Err(e) => {
                println!("{file}: {e}");
                failed += 1;
                continue;
            }
        };
        let start = Instant::now();
        let outcome = world::run(&scenario.knobs, &scenario.plan);
        if std::env::var_os("SIM_FULL_TRACE").is_some() {
            for line in &outcome.trace {
                println!("{line}");
            }
        }
        let mut problems = outcome.violations.clone();
        problems.extend(scenario::verify(&scenario, &outcome));
        if problems.is_empty() {
            println!(
                "ok   {file}: {} ({} prompts, {} crashes, {:.1} simulated h, {:.2} s)",
                scenario.title,
                outcome.deliveries,
                outcome.crashes.len(),
                outcome.sim_ms as f64 / 3_600_000.0,
                start.elapsed().as_secs_f64()
            );
        } else {
            failed += 1;
            let replay = matrix::replay(&scenario.knobs, &scenario.plan);
            let report = matrix::report(&scenario.knobs, &scenario.plan, &outcome, &replay);
            let path = write_report(scenario.knobs.seed, &report);
            println!("FAIL {file}: {}\n  {}\n  report: {path}", scenario.title, problems.join("\n  "));
        }
    }
    println!("scenarios: {} run, {failed} failed", files.len());
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Times a 10-worker run over 8 simulated hours (agents that never finish).
fn bench() -> ExitCode {
    let mut knobs = Knobs::calm(42);
    knobs.workers = 10;
    knobs.agents.turns_min = 1_000;
    knobs.agents.turns_max = 1_000;
    knobs.safety_ms = knobs.horizon_ms;
    let start = Instant::now();
    let outcome = world::run(&knobs, &[]);
    let wall = start.elapsed().as_secs_f64();
    println!(
        "bench: {} workers, {:.1} simulated hours, {} steps, {} prompts delivered in {wall:.2} s wall = {:.0}x real time",
        knobs.workers,
        outcome.sim_ms as f64 / 3_600_000.0,
        outcome.steps,
        outcome.deliveries,
        outcome.sim_ms as f64 / 1000.0 / wall
    );
    ExitCode::SUCCESS
}

fn parse_crash(spec: &str) -> Option<CrashAt> {
    let (name, k) = spec.split_once(':')?;
    Some(CrashAt { boundary: Boundary::parse(name)?, occurrence: k.parse().ok()? })
}

/// Runs seeds `from..from+seeds` on `jobs` threads (one `Sim` per thread: turmoil is
/// single-threaded); stops at the first failure and prints its report.
fn swarm(from: u64, seeds: u64, jobs: u64) -> ExitCode {
    let start = Instant::now();
    let next = std::sync::atomic::AtomicU64::new(from);
    let failed = std::sync::Mutex::new(None::<u64>);
    let sim_ms = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if seed >= from + seeds || failed.lock().is_ok_and(|f| f.is_some()) {
                        return;
                    }
                    let knobs = Knobs::swarm(seed);
                    let outcome = world::run(&knobs, &[]);
                    sim_ms.fetch_add(outcome.sim_ms, std::sync::atomic::Ordering::Relaxed);
                    if !outcome.violations.is_empty() {
                        let report = matrix::report(&knobs, &[], &outcome, &matrix::replay(&knobs, &[]));
                        let path = write_report(seed, &report);
                        println!("{report}\nreport written to {path}");
                        let (small, plan, runs) =
                            shrink::shrink(&knobs, &[], |k, p| !world::run(k, p).violations.is_empty());
                        let file = format!("target/sim-reports/seed-{seed}.min.scn");
                        let _ = std::fs::write(&file, shrink::to_scenario(&format!("seed {seed}, shrunk"), &small, &plan));
                        println!("shrunk in {runs} runs to {file}: replay with `cargo run --release -p sim -- scenario {file}`");
                        if let Ok(mut f) = failed.lock() {
                            f.get_or_insert(seed);
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Ok(Some(seed)) = failed.lock().map(|f| *f) {
        println!("seed {seed} failed: replay with `cargo run --release -p sim -- replay --seed {seed}`");
        return ExitCode::FAILURE;
    }
    let wall = start.elapsed().as_secs_f64();
    let sim_s = sim_ms.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1000.0;
    println!(
        "{seeds} seeds passed in {wall:.1} s on {jobs} threads ({:.1} seeds/s, {:.0} simulated s per wall s)",
        seeds as f64 / wall,
        sim_s / wall
    );
    ExitCode::SUCCESS
}

/// One run of the crash matrix.
struct MatrixJob {
    /// The base it varies: `calm/<boundary>`, a scenario file, `loss/<boundary>`.
    name: String,
    /// The base's knobs (a loss cell's with its trigger).
    knobs: Knobs,
    /// What the run plans: a crash, or the loss of a lane's executor.
    fault: Fault,
}

/// What a matrix run plans at its boundary.
enum Fault {
    /// The boundary's host crashes.
    Crash(CrashAt),
    /// The executor that carries a lane goes down for a while, then comes back.
    Loss(matrix::Loss),
    /// The leading daemon dies and a standby takes over.
    Takeover(matrix::Takeover),
}

impl MatrixJob {
    /// What the job does, as its hash line and its failure line name it: `BOUNDARY#K`
    /// for a crash, `laneN down LENGTH at BOUNDARY#K` for a loss.
    fn what(&self) -> String {
        match &self.fault {
            Fault::Crash(c) => format!("{}#{}", c.boundary, c.occurrence),
            Fault::Loss(l) => {
                let lane = if l.lane == usize::MAX { "root".to_string() } else { format!("lane{}", l.lane) };
                format!("{lane} down {}m at {}#{}", l.length_ms / 60_000, l.at.boundary, l.at.occurrence)
            }
            Fault::Takeover(t) => {
                let lane = if t.lane == usize::MAX { "root".to_string() } else { format!("lane{}", t.lane) };
                format!("leader down at {}#{} of {lane}", t.at.boundary, t.at.occurrence)
            }
        }
    }

    /// The crash plan: the crash, or nothing (a loss is a trigger in the knobs).
    fn plan(&self) -> Vec<CrashAt> {
        match &self.fault {
            Fault::Crash(c) => vec![*c],
            Fault::Loss(_) | Fault::Takeover(_) => Vec::new(),
        }
    }

    /// Whether its crash happened, or its trigger fired (the boundary was reached that often).
    fn reached(&self, outcome: &sim::outcome::Outcome) -> bool {
        match &self.fault {
            Fault::Crash(c) => outcome.crashes.iter().any(|x| x.contains(c.boundary.name())),
            Fault::Loss(_) => !outcome.unreached.iter().any(|u| u.starts_with("ExecutorDown")),
            Fault::Takeover(_) => !outcome.unreached.iter().any(|u| u.starts_with("LeaderDown")),
        }
    }

    /// The command that replays it.
    fn replay(&self) -> String {
        match &self.fault {
            Fault::Crash(_) => matrix::replay(&self.knobs, &self.plan()),
            Fault::Loss(loss) => loss.replay(),
            Fault::Takeover(takeover) => takeover.replay(),
        }
    }
}

/// The crash matrix's runs: every boundary × occurrence (1..=3), on the built-in calm run
/// and on every scenario in `scenarios/`, then the executor-loss cells, then the failover
/// cells (`matrix::takeovers`), in a fixed order;
/// the base count beside them.
fn matrix_jobs() -> Result<(Vec<MatrixJob>, usize), String> {
    let mut bases: Vec<(String, Knobs)> = Vec::new();
    for cell in matrix::cells().iter().filter(|c| c.crash.occurrence == 1) {
        bases.push((format!("calm/{}", cell.crash.boundary), matrix::knobs_for(*cell)));
    }
    let mut files: Vec<_> = std::fs::read_dir("scenarios")
        .map(|d| {
            d.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "scn")).collect()
        })
        .unwrap_or_default();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let scenario =
            scenario::parse(&path.display().to_string(), &text).map_err(|e| format!("{}: {e}", path.display()))?;
        bases.push((path.display().to_string(), scenario.knobs));
    }
    let mut jobs = Vec::new();
    for (name, knobs) in &bases {
        for boundary in Boundary::ALL {
            // The calm bases each carry the boundary they were made for.
            if name.starts_with("calm/") && !name.ends_with(boundary.name()) {
                continue;
            }
            for occurrence in 1..=matrix::MATRIX_OCCURRENCES_MAX {
                let fault = Fault::Crash(CrashAt { boundary, occurrence });
                jobs.push(MatrixJob { name: name.clone(), knobs: knobs.clone(), fault });
            }
        }
    }
    for loss in matrix::losses() {
        let (name, knobs) = (format!("loss/{}", loss.at.boundary), matrix::knobs_for_loss(loss));
        jobs.push(MatrixJob { name, knobs, fault: Fault::Loss(loss) });
    }
    for takeover in matrix::takeovers() {
        let (name, knobs) = (format!("takeover/{}", takeover.at.boundary), matrix::knobs_for_takeover(takeover));
        jobs.push(MatrixJob { name, knobs, fault: Fault::Takeover(takeover) });
    }
    Ok((jobs, bases.len()))
}

/// Runs `count` jobs on every core, `run(i)` each; the results in job order.
fn on_all_cores<T: Send>(count: usize, run: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= count {
                        return;
                    }
                    let result = run(i);
                    if let Ok(mut r) = results.lock() {
                        r.push((i, result));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|r| r.0);
    results.into_iter().map(|(_, r)| r).collect()
}

/// The trace hash of every swarm seed `0..seeds`, every crash-matrix run and every
/// scenario, one line each, in a fixed order: two commits that should behave the same
/// print the same lines (`diff` them; ARCHITECTURE.md, "Behaviour-preserving moves").
fn hashes(seeds: u64) -> ExitCode {
    let (jobs, _) = match matrix_jobs() {
        Ok(j) => j,
        Err(e) => {
            println!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let swarm = on_all_cores(seeds as usize, |i| world::run(&Knobs::swarm(i as u64), &[]).trace_hash);
    for (seed, hash) in swarm.iter().enumerate() {
        println!("seed {seed} {hash:016x}");
    }
    let matrix = on_all_cores(jobs.len(), |i| world::run(&jobs[i].knobs, &jobs[i].plan()).trace_hash);
    for (job, hash) in jobs.iter().zip(matrix) {
        println!("matrix {} {} {hash:016x}", job.name, job.what());
    }
    let mut files: Vec<_> = std::fs::read_dir("scenarios")
        .map(|d| {
            d.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "scn")).collect()
        })
        .unwrap_or_default();
    files.sort();
    for path in files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        match scenario::parse(&name, &text) {
            Ok(s) => println!("scenario {name} {:016x}", world::run(&s.knobs, &s.plan).trace_hash),
            Err(e) => {
                println!("{name}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// The crash matrix: every boundary × occurrence (1..=3), on the built-in calm run and on
/// every scenario in `scenarios/`, and the loss of a lane's executor at every boundary ×
/// occurrence (`matrix::losses`), on all cores. Expectations are the scenarios' own
/// business; here every run must keep the invariants and converge.
fn run_matrix() -> ExitCode {
    let start = Instant::now();
    let (jobs, bases) = match matrix_jobs() {
        Ok(j) => j,
        Err(e) => {
            println!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let results = on_all_cores(jobs.len(), |i| world::run(&jobs[i].knobs, &jobs[i].plan()));
    let (mut failed, mut reached, mut losses, mut losses_reached) = (0, 0, 0, 0);
    let (mut takeovers, mut takeovers_reached) = (0, 0);
    for (job, outcome) in jobs.iter().zip(&results) {
        let hit = usize::from(job.reached(outcome));
        match job.fault {
            Fault::Loss(_) => (losses, losses_reached) = (losses + 1, losses_reached + hit),
            Fault::Takeover(_) => (takeovers, takeovers_reached) = (takeovers + 1, takeovers_reached + hit),
            Fault::Crash(_) => reached += hit,
        }
        if !outcome.violations.is_empty() {
            failed += 1;
            let replay = job.replay();
            let report = matrix::report(&job.knobs, &job.plan(), outcome, &replay);
            let path = write_report(job.knobs.seed, &report);
            match job.fault {
                Fault::Crash(_) => {
                    println!("FAIL {} crash {}: {} (report {path})", job.name, job.what(), outcome.violations[0])
                }
                // A loss or failover cell's knobs are no crash cell's: its replay command is its own.
                Fault::Loss(_) | Fault::Takeover(_) => println!(
                    "FAIL {} {}: {} (report {path})\n  replay: {replay}",
                    job.name,
                    job.what(),
                    outcome.violations[0]
                ),
            }
        }
    }
    println!(
        "matrix: {} runs over {bases} bases, {failed} failed, {reached} reached their crash boundary, \
         {losses} executor losses ({losses_reached} reached their boundary), {takeovers} takeovers ({takeovers_reached} \
         reached their boundary), {:.1} s",
        results.len(),
        start.elapsed().as_secs_f64()
    );
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

fn write_report(seed: u64, report: &str) -> String {
    let dir = std::path::Path::new("target/sim-reports");
    let _ = std::fs::create_dir_all(dir);
    let path = dir.join(format!("seed-{seed}.txt"));
    let _ = std::fs::write(&path, report);
    path.display().to_string()
}
