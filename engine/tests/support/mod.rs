//! Test world: the engine, a model store with latest-record-wins semantics, a scripted
//! executor, and a tiny line language so each test reads like a scenario.
//!
//! After every input the world checks the engine's invariants, proves that an engine
//! recovered from the store equals the live one, and that no idempotency key was
//! submitted twice.

#![allow(dead_code)]

use engine::block::BlockStatus;
use engine::deadman::DeadManMode;
use engine::ids::*;
use engine::model::*;
use engine::op::*;
use engine::policy::{Mode, PolicyPatch};
use engine::time::{MINUTE_MS, SECOND_MS};
use engine::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

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
            observation: Observation { state, seq, block, until, detail, approval: None },
        }));
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

    /// Runs a script (one command per line) and returns the trace it produced.
    pub fn script(&mut self, text: &str) -> String {
        let start = self.trace.len();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.step(line);
        }
        self.trace[start..].join("\n")
    }

    fn step(&mut self, line: &str) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let arg = |i: usize| -> &str { words.get(i).copied().unwrap_or("") };
        match words[0] {
            "run" => {
                let mut patch = PolicyPatch::default();
                let mut root_executor = RootExecutor::default();
                for w in &words[1..] {
                    match *w {
                        "auto" => patch.mode = Some(Mode::Auto),
                        "manual" => patch.mode = Some(Mode::Manual),
                        // `root=codex dir=PATH`: a CLI root working in PATH.
                        other if other.starts_with("root=") => {
                            root_executor.executor = Some(ExecutorKind::parse(&other[5..]).expect("a kind"))
                        }
                        other if other.starts_with("dir=") => {
                            root_executor.workspace =
                                Some(Workspace { directory: other[4..].to_string(), branch: None })
                        }
                        other => set_policy_field(&mut patch, other),
                    }
                }
                let reply = self.call(Operation::RunCreate {
                    task_name: "Task".into(),
                    root_conversation_name: "Root chat".into(),
                    context: "Build it".into(),
                    default_policy: Some(patch),
                    root_executor: Box::new(root_executor),
                });
                if let Ok(Reply::Run(v)) = reply {
                    self.run = Some(v.run.id);
                    self.names.insert("root".into(), v.run.root);
                }
            }
            "spawn" => {
                let name = arg(1).to_string();
                let start_line = self.trace.len();
                let mut patch = None;
                let mut start = true;
                let (mut executor, mut workspace) = (None, None);
                for w in &words[2..] {
                    match *w {
                        "auto" => patch = Some(PolicyPatch::mode(Mode::Auto)),
                        "manual" => patch = Some(PolicyPatch::mode(Mode::Manual)),
                        "detached" => start = false,
                        // `dir=PATH`: a CLI worker's directory.
                        other if other.starts_with("dir=") => {
                            workspace = Some(Workspace { directory: other[4..].to_string(), branch: None })
                        }
                        // `chatgpt`, `codex` or `claude`: the worker's executor kind.
                        other => {
                            executor =
                                Some(ExecutorKind::parse(other).unwrap_or_else(|| panic!("bad spawn flag {other}")))
                        }
                    }
                }
                let reply = self.call(Operation::WorkerSpawn(Box::new(SpawnArgs {
                    run: self.run.expect("run first"),
                    name: format!("/root/{name}"),
                    display_name: None,
                    task_summary: format!("Do {name}"),
                    assignment: Assignment {
                        objective: format!("Objective of {name}"),
                        scope: "its files".into(),
                        acceptance_criteria: vec!["tests pass".into()],
                    },
                    worktree: None,
                    policy: patch,
                    start,
                    executor,
                    workspace,
                })));
                if let Ok(Reply::Worker(v)) = reply {
                    let raw = format!(" {}#", v.worker.id);
                    for line in &mut self.trace[start_line..] {
                        *line = line.replace(&raw, &format!(" {name}#"));
                    }
                    self.names.insert(name, v.worker.id);
                }
            }
            "executor" | "hello" => self.hello(&words[1..]),
            "disconnect" => {
                self.input(Input::Executor(ExecutorInput::Disconnected { executor: ExecutorId::new(arg(1)) }))
            }
            "submit" if words.get(2) == Some(&"stale") => self.submit_stale(arg(1)),
            "submit" => self.submit(arg(1)),
            "accept" => {
                let id = self.id(arg(1));
                let c = self.outstanding[&id].clone();
                self.input(Input::Executor(ExecutorInput::Result {
                    executor: c.executor,
                    command: c.id,
                    outcome: CommandOutcome::Accepted,
                }));
            }
            "fail" => match line.split_once("detail=") {
                Some((_, detail)) => self.fail_with(arg(1), arg(2), detail),
                None => self.fail(arg(1), arg(2)),
            },
            "gen" => self.observe(arg(1), ConversationState::Generating, None),
            "idle" => {
                let block = line.split_once("block=").map(|(_, b)| b.replace("\\n", "\n"));
                self.observe(arg(1), ConversationState::Idle, block)
            }
            "ready" => self.observe(arg(1), ConversationState::Ready, None),
            "closed" => self.observe(arg(1), ConversationState::Closed, None),
            // `approval NAME [detail=APP]`: a tool-approval card waits in the conversation.
            "approval" => {
                let detail = line.split_once("detail=").map(|(_, d)| d.to_string());
                self.observe_page(arg(1), ConversationState::AwaitingApproval, None, None, detail.as_deref())
            }
            // `unrecognized NAME [detail=TEXT...]`: the page shows something its executor
            // does not recognize (on the wire: `unknown` with what, in `detail`).
            "unrecognized" => {
                let detail = line.split_once("detail=").map(|(_, d)| d.to_string());
                self.observe_page(arg(1), ConversationState::Unrecognized, None, None, detail.as_deref())
            }
            "error" => {
                let kind = match arg(2) {
                    "delivery_timeout" => ErrorKind::DeliveryTimeout,
                    "full" => ErrorKind::ConversationFull,
                    "host_ui" => ErrorKind::HostUiChanged,
                    "usage" => ErrorKind::UsageLimit,
                    "rate" => ErrorKind::RateLimited,
                    "suspicious" => ErrorKind::SuspiciousActivity,
                    "challenge" => ErrorKind::Challenge,
                    "login" => ErrorKind::LoginRequired,
                    "dialog" => ErrorKind::BlockedByDialog,
                    "app_unavailable" => ErrorKind::AppUnavailable,
                    "foreign" => ErrorKind::ForeignTurn,
                    _ => ErrorKind::Generic,
                };
                // `until=DURATION` (from now; `until=-5m` is in the past), `detail=TEXT...`.
                let until = words.iter().find_map(|w| w.strip_prefix("until=")).map(|d| match d.strip_prefix('-') {
                    Some(past) => self.now.saturating_sub(ms(past)),
                    None => self.now + ms(d),
                });
                let detail = line.split_once("detail=").map(|(_, d)| d.to_string());
                self.observe_page(arg(1), ConversationState::Error(kind), None, until, detail.as_deref())
            }
            "attach" => {
                let id = self.id(arg(1));
                let _ = self.call(Operation::WorkerAttach { worker: id, conversation: arg(2).into() });
            }
            "bind" => {
                let id = self.id(arg(1));
                let executor = ExecutorId::new(if arg(3).is_empty() { "e1" } else { arg(3) });
                let report =
                    BindingReport { worker: id, conversation: Arc::from(arg(2)), open: true, observation: None };
                self.input(Input::Executor(ExecutorInput::Binding { executor, report }));
            }
            // `landed NAME merged|next_turn [seq=N]`: where the worker's last steer landed;
            // a next turn names the sequence the state ending the running turn will carry
            // (the next one) unless `seq=` says otherwise.
            "landed" => {
                let id = self.id(arg(1));
                let steer = self.last_steer(id);
                let current = self.seqs.get(&id).copied().unwrap_or(0);
                let landed = match arg(2) {
                    "merged" => SteerLanding::Merged,
                    "next_turn" => SteerLanding::NextTurn,
                    other => panic!("bad landing {other}"),
                };
                let seq = words
                    .iter()
                    .find_map(|w| w.strip_prefix("seq="))
                    .map_or(if landed == SteerLanding::NextTurn { current + 1 } else { current }, |n| {
                        n.parse().expect("seq=N")
                    });
                let executor = self.executor_of(id);
                self.input(Input::Executor(ExecutorInput::SteerLanded {
                    executor,
                    worker: id,
                    command: steer,
                    landed,
                    seq,
                }));
            }
            "advance" => self.advance(ms(arg(1))),
            "crash" => self.crash(),
            "RUN_PAUSE_ALL" => {
                let _ = self.call(Operation::RunPauseAll { run: self.run.expect("run") });
            }
            "RUN_RESUME_ALL" => {
                let _ = self.call(Operation::RunResumeAll { run: self.run.expect("run") });
            }
            "show" => self.show(arg(1)),
            "deadman" => self.show_dead_man(),
            op => self.operation(op, &words[1..]),
        }
    }

    /// `hello E [steering] [kinds=codex,...] [journal=name:phase,...] [bind=name:state,...]`
    /// (no `kinds=`: a ChatGPT executor, as today's extension).
    fn hello(&mut self, words: &[&str]) {
        let executor = ExecutorId::new(words[0]);
        let mut steering = false;
        let mut kinds = vec![ExecutorKind::Chatgpt];
        let mut journal = Vec::new();
        let mut bindings = Vec::new();
        for w in &words[1..] {
            if *w == "steering" {
                steering = true;
            } else if let Some(list) = w.strip_prefix("kinds=") {
                kinds = list.split(',').map(|k| ExecutorKind::parse(k).expect("a kind")).collect();
            } else if let Some(list) = w.strip_prefix("journal=") {
                for item in list.split(',') {
                    let (name, phase) = item.split_once(':').expect("journal=name:phase");
                    let id = self.id(name);
                    let attempt =
                        self.engine.worker(id).and_then(|w| w.in_flight).expect("journal names an in-flight attempt");
                    let phase = match phase {
                        "received" => JournalPhase::Received,
                        "started" => JournalPhase::SubmissionStarted,
                        "submitted" => JournalPhase::Submitted,
                        "completed" => JournalPhase::Completed,
                        other => panic!("bad phase {other}"),
                    };
                    if phase >= JournalPhase::Submitted {
                        let key = self.engine.attempt(attempt).map(|a| a.idempotency_key()).expect("attempt");
                        assert!(self.submitted.insert(key.clone()), "idempotency key {key} submitted twice");
                        self.outstanding.remove(&id);
                    }
                    let seq = *self.seqs.get(&id).unwrap_or(&0);
                    journal.push(JournalEntry {
                        command: CommandId { attempt },
                        phase,
                        state_seq: seq,
                        conversation: None,
                    });
                }
            } else if let Some(list) = w.strip_prefix("bind=") {
                for item in list.split(',') {
                    let (name, state) = item.split_once(':').expect("bind=name:state");
                    let id = self.id(name);
                    let conversation = self
                        .engine
                        .worker(id)
                        .and_then(|w| w.binding.as_ref())
                        .map(|b| b.conversation.clone())
                        .expect("binding");
                    let state = match state {
                        "idle" => ConversationState::Idle,
                        "generating" => ConversationState::Generating,
                        "ready" => ConversationState::Ready,
                        "approval" => ConversationState::AwaitingApproval,
                        other => panic!("bad state {other}"),
                    };
                    let seq = self.next_seq(id);
                    bindings.push(BindingReport {
                        worker: id,
                        conversation,
                        open: true,
                        observation: Some(Observation {
                            state,
                            seq,
                            block: None,
                            until: None,
                            detail: None,
                            approval: None,
                        }),
                    });
                }
            } else {
                panic!("bad hello word {w}");
            }
        }
        self.input(Input::Executor(ExecutorInput::Hello { executor, steering, kinds, bindings, journal }));
    }

    fn operation(&mut self, op: &str, args: &[&str]) {
        let (name, verb) = op.split_once('.').unwrap_or_else(|| panic!("unknown command {op}"));
        let id = self.id(name);
        let text = args.join(" ");
        let text = if text.is_empty() { "something".to_string() } else { text };
        let op = match verb {
            "progress" => Operation::WorkerProgress { worker: id, summary: text, commit: None },
            "complete" => Operation::WorkerComplete { worker: id, summary: text },
            "fail" => Operation::WorkerFail { worker: id, reason: text },
            "interrupt" => Operation::WorkerInterrupt { worker: id, reason: text },
            "await_human" => {
                Operation::WorkerAwaitHuman { worker: id, reason: text.clone(), question: text, choices: vec![] }
            }
            "resolve" => Operation::WorkerResolveHuman { worker: id, answer: text },
            "await_dep" => {
                let condition = match args.first() {
                    Some(other) if self.names.contains_key(*other) => {
                        DependencyCondition::WorkerCompleted(self.id(other))
                    }
                    _ => DependencyCondition::External(Arc::from("CI green")),
                };
                Operation::WorkerAwaitDependency { worker: id, condition, reason: "waiting".into() }
            }
            "release" => Operation::WorkerReleaseDependency { worker: id, note: text },
            "pause" => Operation::WorkerPause { worker: id, after_current_turn: false },
            "pause_after" => Operation::WorkerPause { worker: id, after_current_turn: true },
            "resume" => Operation::WorkerResume { worker: id },
            "continue_now" => Operation::WorkerContinueNow {
                worker: id,
                override_wait: args.contains(&"override"),
                clear_pause: args.contains(&"clear_pause"),
            },
            "auto" => {
                Operation::WorkerContinuationSet { worker: id, patch: PolicyPatch::mode(Mode::Auto), inherit: false }
            }
            "manual" => {
                Operation::WorkerContinuationSet { worker: id, patch: PolicyPatch::mode(Mode::Manual), inherit: false }
            }
            "inherit" => Operation::WorkerContinuationSet { worker: id, patch: PolicyPatch::default(), inherit: true },
            "followup" => Operation::WorkerFollowup { worker: id, instructions: text, assignment: None },
            "steer" => {
                let outcome = SteeringOutcome::parse(args[0]).expect("steering outcome");
                let material = args.iter().find_map(|a| a.strip_prefix("material=")).map(|v| v == "true");
                let message =
                    args[1..].iter().filter(|a| !a.starts_with("material=")).copied().collect::<Vec<_>>().join(" ");
                Operation::WorkerSteer { worker: id, outcome, message, material }
            }
            "message" => {
                let to = self.id(args[0]);
                Operation::MessageSend { from: Some(id), to, body: args[1..].join(" ") }
            }
            other => panic!("unknown verb {other}"),
        };
        let result = self.call(op);
        if let Ok(Reply::ContinueNow { outcome, .. }) = &result {
            self.trace.push(format!("continue_now {}", outcome.as_str()));
        }
        if let Ok(Reply::Steer { coalesced: true, .. }) = &result {
            self.trace.push("steer coalesced".into());
        }
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

fn set_policy_field(patch: &mut PolicyPatch, field: &str) {
    if field == "no_time_stall" {
        patch.stall_warning_after_no_progress_ms = Some(None);
        patch.stall_pause_after_no_progress_ms = Some(None);
        return;
    }
    let (key, value) = field.split_once('=').unwrap_or_else(|| panic!("bad policy field {field}"));
    match key {
        "grace" => patch.idle_grace_ms = Some(ms(value)),
        "warn_attempts" => patch.stall_warning_after_no_progress_attempts = Some(Some(value.parse().expect("number"))),
        "pause_attempts" => patch.stall_pause_after_no_progress_attempts = Some(Some(value.parse().expect("number"))),
        "warn_ms" => patch.stall_warning_after_no_progress_ms = Some(Some(ms(value))),
        "pause_ms" => patch.stall_pause_after_no_progress_ms = Some(Some(ms(value))),
        "idle_bypass" => patch.idle_may_bypass_min_spacing = Some(value == "true"),
        "deadman" => {
            patch.dead_man = Some(match value {
                "off" => DeadManMode::Off,
                "notify" => DeadManMode::Notify,
                "recover" => DeadManMode::Recover,
                other => panic!("bad dead-man mode {other}"),
            })
        }
        "deadman_after" if value == "null" => patch.dead_man_after_ms = Some(None),
        "deadman_after" => patch.dead_man_after_ms = Some(Some(ms(value))),
        other => panic!("bad policy field {other}"),
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
