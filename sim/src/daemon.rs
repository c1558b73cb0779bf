//! The simulated daemon host: the real runtime shell and engine over the simulated
//! store, serving executors and callers over turmoil TCP.

use crate::epoch::EPOCH_MS;
use crate::faults::{Boundary, Target};
use crate::lease::Lead;
use crate::ledger::SharedLedger;
use crate::wire::{
    DAEMON_PORT, EXECUTOR_PORT, EXECUTOR_TOKEN, FromDaemon, SimOp, ToDaemon, read_frame, read_text, write_frame,
    write_text,
};
use engine::event::EventKind;
use engine::ids::{ExecutorId, RunId, WorkerId};
use engine::model::{Assignment, AttemptReason, BindingStatus, Lifecycle, PauseReason};
use engine::op::{Operation, Reply, SpawnArgs};
use engine::policy::{Mode, PolicyPatch};
use engine::{Batch, Engine, EngineConfig, ExecutorCommand, Record};
use runtime::{Disk, ExecutorSink, Handle, MemStore, Shell, ShellConfig, TokioClock};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use tokio::sync::mpsc;
use turmoil::net::TcpListener;

/// Executor connections by executor id: (connection number, outgoing text frames).
type Registry = Rc<RefCell<BTreeMap<ExecutorId, (u64, mpsc::UnboundedSender<String>)>>>;

/// Routes engine commands, encoded in the executor protocol, to the connection of the
/// executor they name (dropped when it is not connected: `hello` reconciles).
struct RegistrySink {
    /// The connections.
    registry: Registry,
    /// For a leased daemon: its host, the epoch it leads under and the ledger that books
    /// every dispatch for the lease oracle.
    leased: Option<(Target, u64, SharedLedger)>,
}

impl ExecutorSink for RegistrySink {
    fn send(&mut self, command: ExecutorCommand) {
        if let Some((_, tx)) = self.registry.borrow().get(&command.executor) {
            let _ = tx.send(executor_protocol::encode(&executor_protocol::DaemonMessage::Command(
                executor_protocol::CommandWire::from(&command),
            )));
            if let Some((host, epoch, ledger)) = &self.leased {
                let (host, epoch, at_ms) = (host.host(), *epoch, crate::lease::now_ms());
                let key = command.idempotency_key.clone();
                ledger.borrow_mut().dispatches.push(crate::lease_oracle::Dispatch { host, epoch, at_ms, key });
            }
        }
    }
}

/// What survives a daemon crash: the disk.
#[derive(Clone)]
pub struct DaemonState {
    /// The simulated disk.
    pub disk: Rc<RefCell<Disk>>,
    /// The run's observations.
    pub ledger: SharedLedger,
    /// The engine configuration.
    pub config: EngineConfig,
    /// This host: `Target::Daemon`, or `Target::Standby` beside it.
    pub host: Target,
    /// Whether the disk is leased (`standby on`): the host stands by until it may lead.
    pub leased: bool,
}

/// The daemon host's software (restartable: turmoil calls it again after a crash).
pub async fn run(state: DaemonState) -> turmoil::Result {
    let registry: Registry = Rc::default();
    let store = if state.leased {
        crate::lease::stand_by(&state.disk, state.host, &state.ledger).await
    } else {
        MemStore::open(state.disk.clone())
    };
    let lead = Lead { disk: state.disk.clone(), epoch: store.epoch() };
    let leased = state.leased.then(|| (state.host, lead.epoch, state.ledger.clone()));
    let config = ShellConfig { engine: state.config.clone(), ..ShellConfig::default() };
    // A restarted daemon reads the simulated wall clock anew, like a real one would.
    let started_ms = turmoil::sim_elapsed().map_or(0, |d| d.as_millis() as u64);
    let clock = TokioClock::new(EPOCH_MS + started_ms);
    let (mut shell, handle) = Shell::open(store, clock, RegistrySink { registry: registry.clone(), leased }, config)
        .map_err(|e| e.to_string())?;
    let ledger = state.ledger.clone();
    ledger.borrow_mut().trace(state.host.host(), "start");
    ledger.borrow_mut().daemon_starts.push(started_ms);
    let links = state.ledger.borrow().links.clone();
    links.daemon_started(started_ms);
    let (notices, posts) = mpsc::unbounded_channel();
    shell.notify_with(Box::new(crate::notifier::ChannelSink(notices)));
    tokio::task::spawn_local(crate::notifier::poster(posts, handle.clone(), state.ledger.clone()));
    let host = state.host;
    shell.observe(Box::new(move |engine, batches| {
        observe(&ledger, host, engine, batches);
        crate::liveness_oracle::observe(&ledger, engine);
    }));
    let (exit_ledger, leased) = (state.ledger.clone(), state.leased);
    tokio::task::spawn_local(async move {
        match shell.run(std::future::pending()).await {
            // A leased daemon's store error (the fence, the store out of reach) stops it.
            Err(e) if leased => crate::lease::step_down(&exit_ledger, host, e.to_string()),
            Err(e) => panic!("shell stopped: {e}"),
            Ok(()) => {}
        }
    });
    if state.leased {
        tokio::task::spawn_local(crate::lease::keep(lead.clone(), state.host, state.ledger.clone()));
    }
    tokio::task::spawn_local(triggered_calls(handle.clone(), state.ledger.clone()));
    let executors = TcpListener::bind(("0.0.0.0", EXECUTOR_PORT)).await?;
    let (h, r) = (handle.clone(), registry.clone());
    tokio::task::spawn_local(async move {
        let mut next_connection = 0;
        while let Ok((stream, _)) = executors.accept().await {
            next_connection += 1;
            let (links, lead) = (links.clone(), lead.clone());
            tokio::task::spawn_local(serve_executor(stream, next_connection, h.clone(), r.clone(), links, lead));
        }
    });
    let listener = TcpListener::bind(("0.0.0.0", DAEMON_PORT)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::task::spawn_local(serve_caller(stream, handle.clone(), state.ledger.clone()));
    }
}

/// Calls fired by a scenario's triggers: each arrives at the engine right where its
/// boundary was passed, standing in for an agent's or operator's request that lands at
/// that instant (the network would only blur the race). Queued calls survive a daemon
/// crash and arrive after the restart.
async fn triggered_calls(handle: Handle, ledger: SharedLedger) {
    loop {
        let ready = ledger.borrow().calls_ready.clone();
        let Some(op) = ledger.borrow_mut().calls.pop_front() else {
            ready.notified().await;
            continue;
        };
        let result = call_op(&handle, op.clone(), &ledger).await;
        let mut l = ledger.borrow_mut();
        l.trace("trigger", format!("{op:?} -> {result:?}"));
        let terminal = matches!(&result, Err(code) if code == "WORKER_TERMINAL");
        match op {
            SimOp::Complete { worker, summary } if result.is_ok() || terminal => {
                if result.is_ok() {
                    l.acked.push((worker, summary));
                }
                l.finished_agents.insert(worker);
            }
            SimOp::Fail { worker, .. } if result.is_ok() => {
                l.finished_agents.insert(worker);
                l.failed_agents.insert(worker);
            }
            _ => {}
        }
    }
}

/// One executor connection, through the executor protocol's own session logic (token, versions,
/// caps, typed protocol errors): the same rules as the daemon's `/executor`.
async fn serve_executor(
    stream: turmoil::net::TcpStream,
    connection: u64,
    handle: Handle,
    registry: Registry,
    links: crate::ledger::Links,
    lead: Lead,
) {
    let (mut reader, mut writer) = stream.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    tokio::task::spawn_local(async move {
        while let Some(text) = rx.recv().await {
            if write_text(&mut writer, &text).await.is_err() {
                break;
            }
        }
    });
    let mut session = executor_protocol::Session::new(executor_protocol::SessionConfig::new(EXECUTOR_TOKEN));
    // Like the bridge's server, close a connection that sent nothing (not even a
    // heartbeat) for `IDLE_MS_MAX`: the executor is gone, or the link broke under it.
    let idle = std::time::Duration::from_millis(executor_protocol::IDLE_MS_MAX);
    while let Ok(Ok(Some(text))) = tokio::time::timeout(idle, read_text(&mut reader)).await {
        let now_ms = turmoil::sim_elapsed().map_or(0, |d| d.as_millis() as u64);
        let step = session.on_text(&text, now_ms);
        if let Some(id) = &step.registered {
            registry.borrow_mut().insert(id.clone(), (connection, tx.clone()));
            // The liveness oracle's links are the leader's: a fenced daemon's are not.
            if lead.current() {
                links.opened(id);
            }
        }
        for reply in &step.replies {
            let _ = tx.send(executor_protocol::encode(reply));
        }
        for input in step.inputs {
            if handle.executor(input).await.is_err() {
                return;
            }
        }
        if step.close {
            break;
        }
    }
    // The connection ended: if it was the executor's current one, it is disconnected.
    let current = session.executor().is_some_and(|id| registry.borrow().get(id).is_some_and(|(c, _)| *c == connection));
    if current && let Some(id) = session.executor() {
        registry.borrow_mut().remove(id);
    }
    let gone = session.executor().cloned().filter(|_| current);
    if let Some(input) = session.on_close(current) {
        let _ = handle.executor(input).await;
    }
    if let Some(id) = gone.filter(|_| lead.current()) {
        links.closed(&id, turmoil::sim_elapsed().map_or(0, |d| d.as_millis() as u64));
    }
}

/// One caller connection (an agent or the operator).
async fn serve_caller(stream: turmoil::net::TcpStream, handle: Handle, ledger: SharedLedger) {
    let (mut reader, mut writer) = stream.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<FromDaemon>();
    tokio::task::spawn_local(async move {
        while let Some(frame) = rx.recv().await {
            if write_frame(&mut writer, &frame).await.is_err() {
                break;
            }
        }
    });
    while let Ok(Some(ToDaemon::Call { call, op })) = read_frame::<_, ToDaemon>(&mut reader).await {
        let (handle, ledger) = (handle.clone(), ledger.clone());
        let tx = tx.clone();
        tokio::task::spawn_local(async move {
            let result = call_op(&handle, op, &ledger).await;
            let _ = tx.send(FromDaemon::Reply { call, result });
        });
    }
}

/// Maps a simulated caller operation onto the engine's and runs it.
async fn call_op(handle: &Handle, op: SimOp, ledger: &SharedLedger) -> Result<Option<WorkerId>, String> {
    if let SimOp::OperatorSweep = op {
        return sweep(handle, ledger).await;
    }
    if let SimOp::ApprovalSweep { seed } = op {
        return crate::cli_operator::approval_sweep(handle, seed, ledger).await;
    }
    if let SimOp::RecoverLanes = op {
        return recover_lanes(handle).await;
    }
    let operation = match op {
        SimOp::OperatorSweep | SimOp::RecoverLanes | SimOp::ApprovalSweep { .. } => unreachable!("handled above"),
        SimOp::SetDeadMan { mode, after_ms } => Operation::RunSetDefaultContinuation {
            run: RunId(1),
            patch: PolicyPatch {
                dead_man: Some(mode),
                dead_man_after_ms: Some(Some(after_ms)),
                ..PolicyPatch::default()
            },
        },
        SimOp::CreateRun { auto } => Operation::RunCreate {
            task_name: "Simulated task".into(),
            root_conversation_name: "Simulated root".into(),
            context: "Simulate it.".into(),
            default_policy: Some(PolicyPatch::mode(if auto { Mode::Auto } else { Mode::Manual })),
            root_executor: Default::default(),
        },
        SimOp::Spawn { name } => lane(&name, format!("Lane {name}"), None),
        SimOp::SpawnCli { name, kind } => {
            let workspace = engine::Workspace { directory: format!("/sim/{name}"), branch: None };
            lane(&name, format!("CLI lane {name}"), Some((kind, workspace)))
        }
        SimOp::Progress { worker, summary } => Operation::WorkerProgress { worker, summary, commit: None },
        SimOp::Complete { worker, summary } => Operation::WorkerComplete { worker, summary },
        SimOp::Fail { worker, reason } => Operation::WorkerFail { worker, reason },
        SimOp::AwaitHuman { worker, question } => {
            Operation::WorkerAwaitHuman { worker, reason: question.clone(), question, choices: vec![] }
        }
        SimOp::Resolve { worker, answer } => Operation::WorkerResolveHuman { worker, answer },
        SimOp::MessageRoot { worker, body } => Operation::MessageSend { from: Some(worker), to: WorkerId(1), body },
        SimOp::AwaitWorker { worker, on } => Operation::WorkerAwaitDependency {
            worker,
            condition: engine::model::DependencyCondition::WorkerCompleted(on),
            reason: format!("needs {on}"),
        },
        SimOp::StartRoot => {
            Operation::WorkerContinueNow { worker: WorkerId(1), override_wait: false, clear_pause: false }
        }
        SimOp::Pause { worker, after_turn } => Operation::WorkerPause { worker, after_current_turn: after_turn },
        SimOp::Resume { worker } => Operation::WorkerResume { worker },
        SimOp::ContinueNow { worker } => {
            Operation::WorkerContinueNow { worker, override_wait: false, clear_pause: false }
        }
        SimOp::Steer { worker, outcome, message } => {
            let Some(outcome) = engine::model::SteeringOutcome::parse(&outcome) else {
                return Err("INVALID_ARGUMENT".into());
            };
            Operation::WorkerSteer { worker, outcome, message, material: None }
        }
        SimOp::Attach { worker, conversation } => Operation::WorkerAttach { worker, conversation },
        SimOp::Stop { worker } => Operation::WorkerInterrupt { worker, reason: "stopped by the operator".into() },
    };
    match handle.call(operation).await {
        Ok(Ok(Reply::Worker(view))) => Ok(Some(view.worker.id)),
        Ok(Ok(Reply::Run(view))) => Ok(Some(view.run.root)),
        Ok(Ok(Reply::ContinueNow { worker, .. })) => Ok(Some(worker.worker.id)),
        Ok(Ok(_)) => Ok(None),
        Ok(Err(rejection)) => Err(rejection.code.as_str().to_string()),
        Err(_) => Err("UNAVAILABLE".into()),
    }
}

/// The operator's sweep over run 1.
async fn sweep(handle: &Handle, ledger: &SharedLedger) -> Result<Option<WorkerId>, String> {
    let list = Operation::WorkerList { run: RunId(1), include_terminal: true };
    let Ok(Ok(Reply::Workers(views))) = handle.call(list).await else { return Err("UNAVAILABLE".into()) };
    crate::liveness_oracle::record(ledger, &views);
    let gone: BTreeSet<WorkerId> = views
        .iter()
        .filter(|v| v.worker.lifecycle.is_terminal() && v.worker.lifecycle != Lifecycle::Completed)
        .map(|v| v.worker.id)
        .collect();
    let mut recoveries = 0;
    for v in views.into_iter().filter(|v| !v.worker.lifecycle.is_terminal()) {
        let id = v.worker.id;
        if v.worker.human.is_some() {
            let op = Operation::WorkerResolveHuman { worker: id, answer: "Proceed with the safe option.".into() };
            let _ = handle.call(op).await;
        }
        // A wait for a lane that failed can never be met: the operator releases it.
        let hopeless = v.worker.dependency.as_ref().is_some_and(|d| {
            matches!(d.condition, engine::model::DependencyCondition::WorkerCompleted(other) if gone.contains(&other))
        });
        if hopeless {
            let note = "The lane you waited for failed; go on without it.".to_string();
            let _ = handle.call(Operation::WorkerReleaseDependency { worker: id, note }).await;
        }
        let needs_look = v.worker.pause.as_ref().is_some_and(|p| {
            matches!(
                p.reason,
                PauseReason::AmbiguousSubmission
                    | PauseReason::DeliveryFailing
                    | PauseReason::HostUiChanged
                    // The stand-in person checked the browser (or waited out the limit).
                    | PauseReason::AccountCheck
                    | PauseReason::UsageLimit
                    // The app's name fixed in the settings; a lost app needs a fresh
                    // conversation (its binding is lost: the recovery below).
                    | PauseReason::AppNotSelected
                    | PauseReason::AppUnavailable
                    // The stand-in person looked at the session a foreign turn ran in.
                    | PauseReason::ForeignTurn
            )
        });
        let binding = v.worker.binding.as_ref();
        let live = binding.is_some_and(|b| b.status != BindingStatus::Lost && !b.conversation.is_empty());
        let lost = binding.is_none_or(|b| b.status == BindingStatus::Lost);
        // With a conversation: resume. Without one (an ambiguous create, a closed tab, a
        // full conversation): recover into a fresh conversation, an explicit operator act.
        let op = if needs_look && live {
            Some(Operation::WorkerResume { worker: id })
        } else if (needs_look || lost) && !live && v.worker.in_flight.is_none() {
            recoveries += 1;
            Some(Operation::WorkerContinueNow { worker: id, override_wait: false, clear_pause: true })
        } else {
            None
        };
        if let Some(op) = op {
            let _ = handle.call(op).await;
        }
    }
    Ok(Some(WorkerId(recoveries)))
}

/// `/root`'s agent, as the recovery prompt asks: every lane without a live conversation
/// and with nothing in flight gets `worker_continue_now`, which opens a fresh one.
async fn recover_lanes(handle: &Handle) -> Result<Option<WorkerId>, String> {
    let list = Operation::WorkerList { run: RunId(1), include_terminal: false };
    let Ok(Ok(Reply::Workers(views))) = handle.call(list).await else { return Err("UNAVAILABLE".into()) };
    let mut recovered = 0;
    for v in views.into_iter().filter(|v| v.worker.spec.name != "/root" && v.worker.in_flight.is_none()) {
        let dead = v.worker.binding.as_ref().is_none_or(|b| {
            b.status == BindingStatus::Lost || matches!(b.state, engine::model::ConversationState::Closed)
        });
        if dead && v.worker.pause.is_none() && v.worker.human.is_none() {
            let op = Operation::WorkerContinueNow { worker: v.worker.id, override_wait: false, clear_pause: false };
            if let Ok(Ok(_)) = handle.call(op).await {
                recovered += 1;
            }
        }
    }
    Ok(Some(WorkerId(recovered)))
}

/// Why a continuation just scheduled should not exist, if it should not: nothing goes to a
/// terminal, waiting, paused or manual worker unless an explicit action asked (spec 000
/// §10.2). Checked on the commit that created it; in-flight races after that are the
/// spec's accepted "already submitted" case.
fn unwanted(engine: &Engine, attempt: engine::ids::AttemptId) -> Option<String> {
    let a = engine.attempt(attempt)?;
    if a.state != engine::model::AttemptState::Scheduled {
        return None; // withdrawn in the same input
    }
    let w = engine.worker(a.worker)?;
    let view = engine.worker_view(a.worker)?;
    let operator = a.origin == engine::model::Origin::Operator;
    if w.lifecycle.is_terminal() {
        return Some(w.lifecycle.as_str().to_string());
    }
    if w.human.is_some() || w.dependency.is_some() {
        return Some("waiting".into());
    }
    if let Some(p) = &w.pause
        && !(operator && p.reason == PauseReason::Operator)
    {
        return Some(format!("paused ({})", p.reason.as_str()));
    }
    if view.policy.mode == engine::policy::Mode::Manual && a.origin == engine::model::Origin::Scheduler {
        return Some("manual".into());
    }
    None
}

/// The checkers' view of every commit: invariants, boundaries, trace.
fn observe(ledger: &SharedLedger, host: Target, engine: &Engine, batches: &[Batch]) {
    let mut l = ledger.borrow_mut();
    if let Err(v) = engine.check_invariants() {
        l.violation(format!("engine invariant: {v}"));
    }
    for record in batches.iter().flat_map(|b| &b.records) {
        if let Record::Event(e) = record
            && let (EventKind::ExecutionScheduled { .. }, Some(attempt)) = (&e.kind, e.attempt)
            && let Some(why) = unwanted(engine, attempt)
        {
            l.violation(format!("{attempt} was scheduled for a worker that is {why}"));
        }
    }
    for record in batches.iter().flat_map(|b| &b.records) {
        if let Record::Notice(n) = record
            && n.status == engine::notify::NoticeStatus::Pending
            && n.failures == 0
        {
            // Only its creation writes a pending notice that never failed.
            l.boundary(Boundary::NotifyCreated, n.worker.unwrap_or(WorkerId(0)), None);
            l.trace(host.host(), format!("notice {} {} created", n.id, n.kind.as_str()));
        }
        let Record::Event(e) = record else { continue };
        let id = e.worker.unwrap_or(WorkerId(0));
        let worker = e.worker.map(|w| w.to_string()).unwrap_or_default();
        match &e.kind {
            EventKind::ExecutionIdle => {
                l.boundary(Boundary::IdleBeforeScheduling, id, None);
                l.boundary(Boundary::IdleDuringGrace, id, None);
            }
            EventKind::ExecutionScheduled { reason: AttemptReason::AutoResume, .. } => {
                l.boundary(Boundary::ScheduledBeforeEnqueue, id, None)
            }
            EventKind::ExecutionSubmitted => l.boundary(Boundary::ResultBeforeGenerating, id, None),
            EventKind::ExecutionGenerating => l.boundary(Boundary::GeneratingBeforeIdle, id, None),
            EventKind::ContinuationWarning { .. } | EventKind::ContinuationPausedForStall { .. } => {
                l.boundary(Boundary::StallMutation, id, None)
            }
            EventKind::DeadManFired { .. } => l.boundary(Boundary::DeadmanFired, id, None),
            _ => {}
        }
        let attempt = e.attempt.map(|a| a.to_string()).unwrap_or_default();
        let detail = match &e.kind {
            EventKind::ResumeScheduled { reasons: wake, .. }
            | EventKind::ResumeCancelled { reasons: wake }
            | EventKind::ExecutionScheduled { wake, .. } => wake.labels().join("+"),
            EventKind::ExecutionEnded { outcome, .. } => outcome.as_str().to_string(),
            EventKind::WorkerPaused { reason, .. } => reason.as_str().to_string(),
            EventKind::WorkerHeld { reason, until, .. } => {
                format!("{} until {}", reason.as_str(), until.map_or("a later state".into(), |t| t.0.to_string()))
            }
            EventKind::WorkerHoldLifted { reason } => reason.as_str().to_string(),
            _ => String::new(),
        };
        let line = format!("#{} {} {worker} {attempt} {detail}", e.cursor, e.kind.name());
        l.trace(host.host(), line);
    }
}

/// `worker_spawn` of lane `/root/<name>`, started at once; `cli`: its executor kind and workspace.
fn lane(name: &str, task_summary: String, cli: Option<(engine::ExecutorKind, engine::Workspace)>) -> Operation {
    let (executor, workspace) = cli.map_or((None, None), |(kind, workspace)| (Some(kind), Some(workspace)));
    Operation::WorkerSpawn(Box::new(SpawnArgs {
        run: RunId(1),
        name: format!("/root/{name}"),
        display_name: None,
        task_summary,
        assignment: Assignment {
            objective: format!("Finish lane {name}"),
            scope: format!("lane {name}"),
            acceptance_criteria: vec!["tests pass".into()],
        },
        worktree: None,
        policy: None,
        start: true,
        executor,
        workspace,
    }))
}
