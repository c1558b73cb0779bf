//! Deterministic, engine-made mutations: the same seed gives the same batches, byte for
//! byte, in every process. The kill -9 test's child and parent, the golden fixture and
//! the benchmark all draw their mutations from here, so what they store is what the
//! engine really persists (state records plus the events of one operation).

use engine::ids::{CallId, RunId, WorkerId};
use engine::model::Assignment;
use engine::op::{Operation, SpawnArgs};
use engine::{Batch, Effect, Engine, EngineConfig, Input, Timestamp};

/// Virtual time between two mutations.
const STEP_MS: u64 = 10;
/// Virtual start time (any fixed instant works; time never comes from a clock here).
const START_MS: u64 = 1_700_000_000_000;

/// A generator of engine mutations: first `runs` runs, each with its root and
/// `spawned_per_run` spawned workers, then `worker_progress` on every worker in turn,
/// forever. Every call to [`Workload::next_mutation`] is one operation, one batch.
pub struct Workload {
    /// The engine that produces the batches.
    engine: Engine,
    /// Virtual time of the last mutation.
    now_ms: u64,
    /// Call ids handed out.
    calls: u64,
    /// Runs to create.
    runs: usize,
    /// Workers to spawn in each run, besides its root.
    spawned_per_run: usize,
    /// Runs created so far.
    runs_created: usize,
    /// Workers spawned in the newest run.
    spawned_in_run: usize,
    /// Every worker, roots included, in creation order.
    workers: Vec<WorkerId>,
    /// Progress reports so far.
    progress: u64,
}

impl Workload {
    /// A workload over a fresh engine seeded with `seed`.
    pub fn new(seed: u64, runs: usize, spawned_per_run: usize) -> Workload {
        assert!(runs > 0, "a workload needs at least one run");
        assert!(
            spawned_per_run < engine::limits::RUN_WORKERS_COUNT_MAX,
            "a run holds at most {} workers, its root included",
            engine::limits::RUN_WORKERS_COUNT_MAX
        );
        Workload {
            engine: Engine::new(EngineConfig { seed, ..EngineConfig::default() }),
            now_ms: START_MS,
            calls: 0,
            runs,
            spawned_per_run,
            runs_created: 0,
            spawned_in_run: 0,
            workers: Vec::new(),
            progress: 0,
        }
    }

    /// The engine after the mutations so far.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Mutations needed before the first `worker_progress`: run creations and spawns.
    pub fn setup_mutations(&self) -> usize {
        self.runs * (1 + self.spawned_per_run)
    }

    /// The next mutation's batch.
    pub fn next_mutation(&mut self) -> Batch {
        let op = if self.runs_created < self.runs
            && (self.runs_created == 0 || self.spawned_in_run == self.spawned_per_run)
        {
            self.runs_created += 1;
            self.spawned_in_run = 0;
            Operation::RunCreate {
                task_name: format!("Task {}", self.runs_created),
                root_conversation_name: "Root".into(),
                context: format!("Objective of run {}: keep the workers going until done.", self.runs_created),
                default_policy: None,
                root_executor: Default::default(),
            }
        } else if self.spawned_in_run < self.spawned_per_run {
            self.spawned_in_run += 1;
            Operation::WorkerSpawn(Box::new(SpawnArgs {
                run: RunId(self.runs_created as u64),
                name: format!("/root/lane{}", self.spawned_in_run),
                display_name: None,
                task_summary: format!("Lane {}", self.spawned_in_run),
                assignment: Assignment {
                    objective: "Implement the lane's part of the plan and report progress.".into(),
                    scope: "Its own folder.".into(),
                    acceptance_criteria: vec!["Tests pass.".into()],
                },
                worktree: None,
                policy: None,
                start: false,
                executor: None,
                workspace: None,
            }))
        } else {
            let worker = self.workers[(self.progress % self.workers.len() as u64) as usize];
            self.progress += 1;
            Operation::WorkerProgress {
                worker,
                summary: format!("Step {}: ran the tests, fixed one failure, committed.", self.progress),
                commit: None,
            }
        };
        self.apply(op)
    }

    /// Applies one operation and returns the records it persisted.
    fn apply(&mut self, op: Operation) -> Batch {
        let creates = matches!(op, Operation::RunCreate { .. } | Operation::WorkerSpawn(_));
        self.now_ms += STEP_MS;
        self.calls += 1;
        let call = CallId(self.calls);
        self.engine.handle(Timestamp(self.now_ms), Input::Call { call, op });
        let mut batch = Batch::default();
        let mut replied = false;
        while let Some(effect) = self.engine.poll_effect() {
            match effect {
                Effect::Persist(b) => batch.records.extend(b.records),
                Effect::Reply { call: c, result } => {
                    assert_eq!(c, call, "the engine answers the call it was given");
                    let reply = result.unwrap_or_else(|r| panic!("workload operation rejected: {r:?}"));
                    match (&reply, creates) {
                        (engine::op::Reply::Run(view), true) => self.workers.push(view.run.root),
                        (engine::op::Reply::Worker(view), true) => self.workers.push(view.worker.id),
                        _ => {}
                    }
                    replied = true;
                }
                Effect::Command(_) | Effect::Notify(_) => {}
            }
        }
        assert!(replied, "every workload operation gets a reply");
        assert!(!batch.records.is_empty(), "every workload operation persists records");
        batch
    }
}

/// Largest group commit of the kill -9 test's child, in mutations.
pub const CRASH_CHILD_GROUP_MUTATIONS_MAX: u64 = 8;

/// The workload of the kill -9 test's child (`store-crash-child`); the parent test
/// regenerates it to check that what survived a kill is exactly a prefix of it.
pub fn crash_child_workload() -> Workload {
    Workload::new(11, 2, 6)
}
