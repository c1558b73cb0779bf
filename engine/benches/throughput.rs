//! Engine throughput and memory benchmark: 10,000 workers, a mixed workload of progress
//! calls, idle and generating observations, command results, timers and root steering.
//!
//! Run with `cargo bench -p engine --bench throughput`. Figures go to docs/benchmarks.md.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use engine::ids::*;
use engine::model::*;
use engine::op::*;
use engine::policy::{Mode, PolicyPatch};
use engine::*;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Instant;

/// Resident set size of this process, in bytes (Linux `/proc/self/statm`).
fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm is readable");
    let pages: usize =
        statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("statm has a resident field");
    pages * 4096
}

const WORKERS: usize = 10_000;
const RUNS: usize = 10;
const INPUTS: usize = 2_000_000;

struct Bench {
    engine: Engine,
    now: u64,
    call: u64,
    executor: ExecutorId,
    /// Commands waiting for a result, by worker.
    outstanding: Vec<Option<CommandId>>,
    /// Workers with a fresh command, answered promptly like a live executor would.
    answer_queue: std::collections::VecDeque<usize>,
    /// Next state sequence per worker.
    seq: Vec<u64>,
    /// Whether the worker's conversation is generating.
    generating: Vec<bool>,
    workers: Vec<WorkerId>,
    index_of: std::collections::BTreeMap<WorkerId, usize>,
}

impl Bench {
    fn handle(&mut self, input: Input) {
        self.engine.handle(Timestamp(self.now), input);
        while let Some(effect) = self.engine.poll_effect() {
            if let Effect::Command(c) = effect
                && c.kind != CommandKind::Cancel
                && let Some(&i) = self.index_of.get(&c.worker)
            {
                self.outstanding[i] = Some(c.id);
                self.answer_queue.push_back(i);
            }
        }
    }

    fn call(&mut self, op: Operation) {
        self.call += 1;
        let call = CallId(self.call);
        self.handle(Input::Call { call, op });
    }

    fn state(&mut self, i: usize, state: ConversationState) -> Input {
        self.seq[i] += 1;
        Input::Executor(ExecutorInput::State {
            executor: self.executor.clone(),
            worker: self.workers[i],
            observation: Observation {
                state,
                seq: self.seq[i],
                block: None,
                until: None,
                detail: None,
                approval: None,
                retry: None,
            },
        })
    }
}

fn setup(spawn_start: bool) -> Bench {
    let mut b = Bench {
        engine: Engine::new(EngineConfig { seed: 1, ..EngineConfig::default() }),
        now: 1_700_000_000_000,
        call: 0,
        executor: ExecutorId::new("bench"),
        outstanding: vec![None; WORKERS],
        answer_queue: Default::default(),
        seq: vec![0; WORKERS],
        generating: vec![false; WORKERS],
        workers: Vec::with_capacity(WORKERS),
        index_of: Default::default(),
    };
    let hello = ExecutorInput::Hello {
        executor: b.executor.clone(),
        steering: true,
        kinds: vec![engine::ExecutorKind::Chatgpt],
        bindings: vec![],
        journal: vec![],
        turns_max: None,
        accounts: Vec::new(),
    };
    b.handle(Input::Executor(hello));
    for r in 0..RUNS {
        b.call(Operation::RunCreate {
            task_name: format!("Task {r}"),
            root_conversation_name: "Root".into(),
            context: String::new(),
            default_policy: Some(PolicyPatch::mode(Mode::Auto)),
            root_executor: Default::default(),
        });
        let run = RunId(r as u64 + 1);
        for i in 0..WORKERS / RUNS {
            let n = b.workers.len();
            b.call(Operation::WorkerSpawn(Box::new(SpawnArgs {
                run,
                name: format!("/root/w{i}"),
                display_name: None,
                task_summary: "t".into(),
                assignment: Assignment { objective: "o".into(), scope: String::new(), acceptance_criteria: vec![] },
                worktree: None,
                policy: None,
                start: spawn_start,
                executor: None,
                workspace: None,
            })));
            let id = b.engine.workers().last().expect("spawned").id;
            b.workers.push(id);
            b.index_of.insert(id, n);
        }
    }
    b
}

fn submit(b: &mut Bench, i: usize) -> Option<Input> {
    let command = b.outstanding[i].take()?;
    let create = b.engine.attempt(command.attempt).is_some_and(|a| a.delivery == Delivery::Create);
    let conversation = create.then(|| Arc::from(format!("https://chatgpt.com/c/{i}-{}", command.attempt.0)));
    Some(Input::Executor(ExecutorInput::Result {
        executor: b.executor.clone(),
        command,
        outcome: CommandOutcome::Submitted { state_seq: b.seq[i], conversation },
    }))
}

fn throughput() {
    let mut b = setup(true);
    // The creates went out while the workers were being spawned (before the bench knew
    // their index): pick them up from the engine.
    let scheduled: Vec<(WorkerId, CommandId)> = b
        .engine
        .attempts()
        .filter(|a| a.state == AttemptState::Scheduled)
        .map(|a| (a.worker, a.command_id()))
        .collect();
    for (worker, command) in scheduled {
        let i = b.index_of[&worker];
        b.outstanding[i] = Some(command);
    }
    b.answer_queue.clear();
    // Bring every worker to a generating first turn.
    for i in 0..WORKERS {
        if let Some(input) = submit(&mut b, i) {
            b.handle(input);
        }
        let input = b.state(i, ConversationState::Generating);
        b.handle(input);
        b.generating[i] = true;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let outcomes =
        [SteeringOutcome::ContinueAsPlanned, SteeringOutcome::CorrectDirection, SteeringOutcome::RequestEvidence];
    let mut counts = [0u64; 5];
    let start = Instant::now();
    for n in 0..INPUTS {
        let i = (rng.next_u64() % WORKERS as u64) as usize;
        let roll = rng.next_u64() % 100;
        let input = if roll < 35 {
            counts[0] += 1;
            Input::Call {
                call: CallId(n as u64),
                op: Operation::WorkerProgress { worker: b.workers[i], summary: "checkpoint".into(), commit: None },
            }
        } else if roll < 70 {
            counts[1] += 1;
            let answer = b.answer_queue.pop_front().and_then(|j| submit(&mut b, j));
            match answer {
                Some(result) => result,
                None => {
                    b.generating[i] = !b.generating[i];
                    let state = if b.generating[i] { ConversationState::Generating } else { ConversationState::Idle };
                    b.state(i, state)
                }
            }
        } else if roll < 90 {
            counts[2] += 1;
            b.now += 10;
            Input::Tick
        } else {
            counts[3] += 1;
            let outcome = outcomes[(rng.next_u64() % 3) as usize];
            Input::Call {
                call: CallId(n as u64),
                op: Operation::WorkerSteer {
                    worker: b.workers[i],
                    outcome,
                    message: "stay in scope".into(),
                    material: None,
                },
            }
        };
        b.handle(input);
    }
    let elapsed = start.elapsed();
    let per_second = INPUTS as f64 / elapsed.as_secs_f64();
    let attempts = b.engine.attempts().count();
    let paused = b.engine.workers().filter(|w| w.pause.is_some()).count();

    println!(
        "throughput: {INPUTS} inputs over {WORKERS} workers in {:.3} s = {:.0} inputs/s \
         (progress {}, observations/results {}, ticks {}, steering {}); {attempts} attempts, {} events, {paused} paused",
        elapsed.as_secs_f64(),
        per_second,
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        b.engine.last_cursor().0,
    );
}

fn memory() {
    let before = rss_bytes();
    let b = setup(false);
    let after = rss_bytes();
    let per_worker = (after - before) as f64 / WORKERS as f64;
    println!(
        "memory: {WORKERS} idle workers (engine state, indexes, retained events) add {:.1} MiB RSS = {:.0} bytes per worker",
        (after - before) as f64 / (1024.0 * 1024.0),
        per_worker
    );
    drop(b);
}

fn main() {
    memory();
    throughput();
}
