//! The test world's line language: `World::script` runs one command per line (operations,
//! executor reports, time, crashes, views) and writes what happened to the trace.

use super::{World, ms};
use engine::deadman::DeadManMode;
use engine::ids::*;
use engine::model::*;
use engine::op::*;
use engine::policy::{Mode, PolicyPatch};
use engine::*;
use std::sync::Arc;

impl World {
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
            // `retry NAME REASON...`: still generating, and the CLI says it retries.
            "retry" => {
                let reason = words[2..].join(" ");
                self.observe_retry(arg(1), &reason)
            }
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
            // An input with nothing in it (a daemon's first tick after a restart).
            "tick" => self.input(Input::Tick),
            "crash" => self.crash(),
            "RUN_PAUSE_ALL" => {
                let _ = self.call(Operation::RunPauseAll { run: self.run.expect("run") });
            }
            "RUN_RESUME_ALL" => {
                let _ = self.call(Operation::RunResumeAll { run: self.run.expect("run") });
            }
            "show" => self.show(arg(1)),
            "live" => self.show_liveness(arg(1)),
            // `events KIND`: how many events of that kind the engine recorded so far.
            "events" => {
                let count = self.engine.recent_events().filter(|e| e.kind.name() == arg(1)).count();
                self.trace.push(format!("events {}: {count}", arg(1)));
            }
            "deadman" => self.show_dead_man(),
            op => self.operation(op, &words[1..]),
        }
    }

    /// `hello E [steering] [kinds=codex,...] [turns=N] [account=kind:name:max,...]
    /// [journal=name:phase,...] [bind=name:state,...]` (no `kinds=`: a ChatGPT executor, as
    /// today's extension).
    fn hello(&mut self, words: &[&str]) {
        let executor = ExecutorId::new(words[0]);
        let mut steering = false;
        let mut kinds = vec![ExecutorKind::Chatgpt];
        let mut journal = Vec::new();
        let mut bindings = Vec::new();
        let mut turns_max = None;
        let mut accounts = Vec::new();
        for w in &words[1..] {
            if *w == "steering" {
                steering = true;
            } else if let Some(n) = w.strip_prefix("turns=") {
                turns_max = Some(n.parse().expect("turns=N"));
            } else if let Some(list) = w.strip_prefix("account=") {
                for item in list.split(',') {
                    let mut parts = item.split(':');
                    let (Some(kind), Some(name), Some(max)) = (parts.next(), parts.next(), parts.next()) else {
                        panic!("account=kind:name:max, not {item}");
                    };
                    accounts.push(AccountCap {
                        kind: ExecutorKind::parse(kind).expect("a kind"),
                        name: name.into(),
                        turns_max: max.parse().expect("account=kind:name:max"),
                    });
                }
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
                            retry: None,
                        }),
                    });
                }
            } else {
                panic!("bad hello word {w}");
            }
        }
        self.input(Input::Executor(ExecutorInput::Hello {
            executor,
            steering,
            kinds,
            bindings,
            journal,
            turns_max,
            accounts,
        }));
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
