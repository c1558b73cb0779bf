//! Test world: the engine, a model store with latest-record-wins semantics, a scripted
//! executor, and a tiny line language so each test reads like a scenario.
//!
//! After every input the world checks the engine's invariants, proves that an engine
//! recovered from the store equals the live one, and that no idempotency key was
//! submitted twice.
//!
//! `script.rs` holds the line language; this file the world and the steps it is made of.
#![allow(dead_code)]

use engine::block::BlockStatus;
use engine::ids::*;
use engine::model::*;
use engine::op::*;
use engine::time::{MINUTE_MS, SECOND_MS};
use engine::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

mod script;

/// The world a scenario runs in.
pub struct World {
    pub engine: Engine,
    pub config: EngineConfig,
    pub now: u64,
    /// Latest record per key, as a store would keep them.
    pub store: BTreeMap<RecordKey, Record>,
    /// What the test prints and compares.
    pub trace: Vec<String>,
    pub run: Option<RunId>,
    pub names: BTreeMap<String, WorkerId>,
    /// Outstanding (unanswered) commands per worker.
    pub outstanding: BTreeMap<WorkerId, ExecutorCommand>,
    /// Per-worker state sequence the fake executor publishes.
    pub seqs: BTreeMap<WorkerId, u64>,
    /// Idempotency keys of every submitted prompt, to prove exactly-once.
    pub submitted: BTreeSet<String>,
    /// Every command ever emitted.
    pub commands: Vec<ExecutorCommand>,
    pub last_reply: Option<Result<Reply, Rejection>>,
    /// Every notification handed to the shell (`Effect::Notify`), in order.
    pub notified: Vec<engine::notify::Notice>,
    pub next_call: u64,
    /// Check recovery after every input (turn off for long property runs).
    pub check_recovery_every: usize,
    inputs: usize,
}

pub fn ms(text: &str) -> u64 {
    let (digits, unit): (String, String) = text.chars().partition(|c| c.is_ascii_digit());
    let n: u64 = digits.parse().unwrap_or_else(|_| panic!("bad duration {text}"));
    match unit.as_str() {
        "ms" => n,
        "s" => n * SECOND_MS,
        "m" => n * MINUTE_MS,
        "h" => n * 60 * MINUTE_MS,
        _ => panic!("bad duration unit in {text}"),
    }
}

impl World {
    pub fn new() -> World {
        World::with_config(|_| {})
    }

    /// A world whose engine runs with an adjusted configuration.
    pub fn with_config(adjust: impl FnOnce(&mut EngineConfig)) -> World {
        let mut config = EngineConfig { seed: 7, ..EngineConfig::default() };
        adjust(&mut config);
        World {
            engine: Engine::new(config.clone()),
            config,
            now: 1_000_000,
            store: BTreeMap::new(),
            trace: Vec::new(),
            run: None,
            names: BTreeMap::new(),
            outstanding: BTreeMap::new(),
            seqs: BTreeMap::new(),
            submitted: BTreeSet::new(),
            commands: Vec::new(),
            last_reply: None,
            notified: Vec::new(),
            next_call: 1,
            check_recovery_every: 1,
            inputs: 0,
        }
    }

    pub fn id(&self, name: &str) -> WorkerId {
        *self.names.get(name).unwrap_or_else(|| panic!("unknown worker name {name}"))
    }

    pub fn worker(&self, name: &str) -> &Worker {
        self.engine.worker(self.id(name)).expect("worker exists")
    }

    pub fn view(&self, name: &str) -> WorkerView {
        self.engine.worker_view(self.id(name)).expect("worker exists")
    }

    /// Workers with a command in flight or a turn running (submitted or generating), by
    /// name, sorted: what holds a slot on a host or an account.
    pub fn busy(&self) -> Vec<String> {
        let running = |w: &engine::model::Worker| {
            w.turn.and_then(|t| self.engine.attempt(t)).is_some_and(|a| {
                matches!(a.state, engine::model::AttemptState::Submitted | engine::model::AttemptState::Generating)
            })
        };
        let mut names: Vec<String> =
            self.engine.workers().filter(|w| w.in_flight.is_some() || running(w)).map(|w| self.name_of(w.id)).collect();
        names.sort();
        names
    }

    pub fn name_of(&self, id: WorkerId) -> String {
        self.names.iter().find(|(_, w)| **w == id).map(|(n, _)| n.clone()).unwrap_or_else(|| id.to_string())
    }

    /// Feeds one input and absorbs its effects.
    pub fn input(&mut self, input: Input) {
        self.engine.handle(engine::Timestamp(self.now), input);
        self.absorb();
        self.inputs += 1;
        if let Err(v) = self.engine.check_invariants() {
            panic!("invariant violated after input {}: {v}\ntrace:\n{}", self.inputs, self.trace.join("\n"));
        }
        if self.check_recovery_every > 0 && self.inputs.is_multiple_of(self.check_recovery_every) {
            self.check_recovery();
        }
    }

    fn absorb(&mut self) {
        while let Some(effect) = self.engine.poll_effect() {
            match effect {
                Effect::Persist(batch) => {
                    for record in batch.records {
                        self.store.insert(record.key(), record);
                    }
                }
                Effect::Command(c) => {
                    let name = self.name_of(c.worker);
                    let seq = self.engine.attempt(c.attempt).map(|a| a.sequence).unwrap_or(0);
                    let reason = self.engine.attempt(c.attempt).map(|a| a.reason.as_str()).unwrap_or("");
                    let kind = c.kind.as_str().rsplit('.').next().unwrap_or("").to_string();
                    if c.kind == CommandKind::Inspect {
                        // Not traced: a long turn is inspected every few minutes; tests
                        // that care read `commands`.
                    } else if matches!(c.kind, CommandKind::Cancel | CommandKind::Close) {
                        self.trace.push(format!("{} {kind} {name}#{seq}", c.executor));
                    } else {
                        self.trace.push(format!("{} {kind} {name}#{seq} {reason} {}", c.executor, c.prompt_version));
                        self.outstanding.insert(c.worker, c.clone());
                    }
                    self.commands.push(c);
                }
                Effect::Notify(notice) => self.notified.push(notice),
                Effect::Reply { result, .. } => {
                    if let Err(r) = &result {
                        self.trace.push(format!("reject {}", r.code.as_str()));
                    }
                    self.last_reply = Some(result);
                }
            }
        }
    }

    /// Rebuilds an engine from the store and compares it with the live one.
    pub fn check_recovery(&self) {
        let recovered = Engine::recover(self.config.clone(), self.store.values().cloned()).expect("store recovers");
        if !recovered.durable_eq(&self.engine) {
            panic!("recovered engine differs from the live one\ntrace:\n{}", self.trace.join("\n"));
        }
        recovered.check_invariants().expect("recovered engine keeps invariants");
    }

    pub fn call(&mut self, op: Operation) -> Result<Reply, Rejection> {
        let call = CallId(self.next_call);
        self.next_call += 1;
        self.input(Input::Call { call, op });
        self.last_reply.clone().expect("every call is answered")
    }

    /// Advances time, ticking at every deadline on the way (like the shell would).
    pub fn advance(&mut self, delta: u64) {
        let end = self.now + delta;
        let mut ticks = 0;
        while let Some(at) = self.engine.next_deadline() {
            if at.0 > end {
                break;
            }
            self.now = self.now.max(at.0);
            self.input(Input::Tick);
            ticks += 1;
            assert!(ticks < 100_000, "timer livelock at {}", self.now);
        }
        self.now = end;
    }

    /// The command of the worker's newest steer.
    fn last_steer(&self, id: WorkerId) -> CommandId {
        let steer = self.commands.iter().rev().find(|c| c.worker == id && c.kind == CommandKind::Steer);
        steer.map(|c| c.id).expect("the worker had a steer")
    }

    fn executor_of(&self, id: WorkerId) -> ExecutorId {
        let w = self.engine.worker(id).expect("worker exists");
        w.binding.as_ref().and_then(|b| b.executor.clone()).unwrap_or_else(|| ExecutorId::new("e1"))
    }

    pub fn next_seq(&mut self, id: WorkerId) -> u64 {
        let s = self.seqs.entry(id).or_insert(0);
        *s += 1;
        *s
    }

    pub fn observe(&mut self, name: &str, state: ConversationState, block: Option<String>) {
        self.observe_page(name, state, block, None, None);
    }

    /// An observation with the page's reset time and words (limits, dialogs).
    pub fn observe_page(
        &mut self,
        name: &str,
        state: ConversationState,
        block: Option<String>,
        until: Option<u64>,
        detail: Option<&str>,
    ) {
        let id = self.id(name);
        let seq = self.next_seq(id);
        let executor = self.executor_of(id);
        let (until, detail) = (until.map(Timestamp), detail.map(Arc::from));
        self.input(Input::Executor(ExecutorInput::State {
            executor,
            worker: id,
            observation: Observation { state, seq, block, until, detail, approval: None, retry: None },
        }));
    }

    /// The worker's CLI reports it retries its model connection inside the running turn.
    pub fn observe_retry(&mut self, name: &str, reason: &str) {
        let id = self.id(name);
        let seq = self.next_seq(id);
        let executor = self.executor_of(id);
        let retry = Some(CliRetry { reason: Arc::from(reason), attempt: None });
        let state = ConversationState::Generating;
        let observation = Observation { state, seq, block: None, until: None, detail: None, approval: None, retry };
        self.input(Input::Executor(ExecutorInput::State { executor, worker: id, observation }));
    }

    /// Traces who carries the worker: `live a: offline e1 since=-60s capable=0`, then the
    /// absence alert and the CLI's retry when there are.
    pub fn show_liveness(&mut self, name: &str) {
        let now = self.now;
        let ago = |t: Timestamp| format!("-{}s", now.saturating_sub(t.0) / 1_000);
        let line = match self.view(name).liveness {
            None => format!("live {name}: ended"),
            Some(l) => {
                let mut parts = vec![format!("live {name}: {}", l.carrier.as_str())];
                parts.extend(l.executor.map(|e| e.to_string()));
                parts.extend(l.since.map(|t| format!("since={}", ago(t))));
                parts.push(format!("capable={}", l.capable));
                parts.extend(l.absent_since.map(|t| format!("absent={}", ago(t))));
                parts.extend(l.retry.map(|r| format!("retry={}({})", ago(r.since), r.reason)));
                parts.join(" ")
            }
        };
        self.trace.push(line);
    }

    /// The executor reports the worker's outstanding command submitted.
    /// Like [`World::submit`], but the result carries the sequence from before the last
    /// observation: that observation was published while the submission was under way.
    pub fn submit_stale(&mut self, name: &str) {
        let id = self.id(name);
        let seq = self.seqs.get(&id).copied().unwrap_or(0);
        self.seqs.insert(id, seq.saturating_sub(1));
        self.submit(name);
        self.seqs.insert(id, seq);
    }

    pub fn submit(&mut self, name: &str) {
        let id = self.id(name);
        let c = self.outstanding.remove(&id).unwrap_or_else(|| panic!("no outstanding command for {name}"));
        assert!(
            self.submitted.insert(c.idempotency_key.clone()),
            "idempotency key {} submitted twice",
            c.idempotency_key
        );
        let seq = *self.seqs.get(&id).unwrap_or(&0);
        let made = |session: String| {
            c.executor_kind.conversation_id(&session).unwrap_or_else(|| format!("https://chatgpt.com/c/{session}"))
        };
        let conversation = (c.kind == CommandKind::Create).then(|| Arc::from(made(format!("{name}-{}", c.attempt.0))));
        if c.kind == CommandKind::Create {
            self.seqs.insert(id, 0);
        }
        self.input(Input::Executor(ExecutorInput::Result {
            executor: c.executor.clone(),
            command: c.id,
            outcome: CommandOutcome::Submitted {
                state_seq: if c.kind == CommandKind::Create { 0 } else { seq },
                conversation,
            },
        }));
    }

    pub fn fail(&mut self, name: &str, code: &str) {
        self.fail_with(name, code, "test")
    }

    /// Fails the worker's outstanding command with a code and a detail.
    pub fn fail_with(&mut self, name: &str, code: &str, detail: &str) {
        let id = self.id(name);
        let c = self.outstanding.remove(&id).unwrap_or_else(|| panic!("no outstanding command for {name}"));
        self.input(Input::Executor(ExecutorInput::Result {
            executor: c.executor.clone(),
            command: c.id,
            outcome: CommandOutcome::Failed { code: ExecErrorCode::parse(code), detail: detail.into() },
        }));
    }

    /// Recovers from the store as after a daemon crash: connections are gone.
    pub fn crash(&mut self) {
        self.engine = Engine::recover(self.config.clone(), self.store.values().cloned()).expect("store recovers");
        self.trace.push("crash".into());
    }

    pub fn show(&mut self, name: &str) {
        let v = self.view(name);
        let w = &v.worker;
        let mut parts = vec![format!("{name}: {}", v.disposition.as_str())];
        if let Some(a) = &v.current_attempt {
            parts.push(format!("#{} {} {}", a.sequence, a.reason.as_str(), a.state.as_str()));
        }
        if let Some(i) = &w.intent {
            parts.push(format!("intent[{}]", i.reasons.labels().join(",")));
        }
        if let Some(p) = &w.pause {
            parts.push(format!("paused:{}", p.reason.as_str()));
        }
        if let Some(h) = &v.hold {
            let until = h.until.map(|t| format!("@{}", t.0.saturating_sub(self.now) / 1_000)).unwrap_or_default();
            let detail = h.detail.as_deref().map(|d| format!("({d})")).unwrap_or_default();
            parts.push(format!("held:{}{until}{detail}", h.reason.as_str()));
        }
        if w.pause_after_turn {
            parts.push("pause-after-turn".into());
        }
        if w.progress.stall != StallState::Clear {
            parts.push(format!("stall:{:?}", w.progress.stall).to_lowercase());
        }
        if w.auto_resumes > 0 {
            parts.push(format!("auto={}", w.auto_resumes));
        }
        self.trace.push(parts.join(" "));
    }

    /// Traces the run's dead-man alert and how many times the layer fired.
    pub fn show_dead_man(&mut self) {
        let view = self.engine.run_view(self.run.expect("run first")).expect("run exists");
        let fired = self.engine.recent_events().filter(|e| e.kind.name() == "deadman.fired").count();
        let alert = match &view.dead_man.alert {
            Some(a) => format!("alert {} {} quiet={}s", a.condition.as_str(), a.action.as_str(), a.quiet_ms / 1_000),
            None => "no alert".into(),
        };
        self.trace.push(format!("deadman: {alert} fired={fired}"));
    }

    /// How many prompts (create/send/steer) were issued for a worker.
    pub fn prompts_for(&self, name: &str) -> usize {
        let id = self.id(name);
        self.commands
            .iter()
            .filter(|c| {
                c.worker == id && matches!(c.kind, CommandKind::Create | CommandKind::Send | CommandKind::Steer)
            })
            .map(|c| c.attempt)
            .collect::<BTreeSet<_>>()
            .len()
    }

    pub fn block_status(&self, name: &str) -> Option<BlockStatus> {
        self.worker(name).last_block
    }
}

/// Runs a script on a fresh world and compares its trace with `expected`.
pub fn check(script: &str, expected: &str) -> World {
    let mut world = World::new();
    let actual = world.script(script);
    let expected: Vec<&str> = expected.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let actual_lines: Vec<&str> = actual.lines().collect();
    assert_eq!(actual_lines, expected, "\n--- actual trace ---\n{actual}\n");
    world
}
