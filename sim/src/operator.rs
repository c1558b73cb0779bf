//! The simulated operator, a client of the daemon: it creates the run and its lanes,
//! performs a scenario's timed actions (pause, resume, continue, steer, attach, stop), sweeps
//! "Needs you" every ten minutes and, with an `ask` CLI executor, looks at approval
//! requests. It never asks for a manual continue on its own.

use crate::knobs::{Action, ActionKind};
use crate::ledger::SharedLedger;
use crate::wire::{DAEMON_PORT, FromDaemon, SimOp, ToDaemon, conversation_url, read_frame, write_frame};
use std::time::Duration;

/// The operator's part of a scenario.
pub(crate) struct Script {
    /// Timed actions.
    pub(crate) actions: Vec<Action>,
    /// Fresh conversation hosts, one for each `Attach` in `actions`, in time order.
    pub(crate) fresh: Vec<String>,
}

/// How long the operator waits before trying an attach again that was refused while a
/// continuation was being delivered ("attach after it settles").
const ATTACH_RETRY_MS: u64 = 5_000;
/// Tries of one attach at most (ten minutes of deliveries in the way).
const ATTACH_TRIES_MAX: u32 = 120;

/// What the operator sets up before it only watches.
pub(crate) struct Setup {
    pub(crate) workers: usize,
    /// The CLI lanes' kinds, in spawn order (after the browser's lanes).
    pub(crate) cli_lanes: Vec<engine::ExecutorKind>,
    pub(crate) auto: bool,
    pub(crate) root: bool,
    pub(crate) dead_man: Option<(engine::deadman::DeadManMode, u64)>,
    pub(crate) away: Option<(u64, u64)>,
    /// With an `ask` CLI executor: the run's seed, from which the operator draws how it
    /// answers approval requests (`cli_operator.rs`).
    pub(crate) approvals: Option<u64>,
}

/// The simulated operator: creates the run and its lanes, then sweeps every ten
/// minutes: answers human waits and resumes workers paused as ambiguous (after
/// "looking at the conversation"). It never asks for a manual continue.
pub(crate) async fn operator(setup: Setup, script: Script, ledger: SharedLedger) -> turmoil::Result {
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
                ActionKind::Stop => {
                    stop(action.describe(), worker, &ledger).await;
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
                ledger.borrow_mut().uncommitted.remove(&planned);
                return;
            }
            Err(code) if code == "INVALID_ARGUMENT" => {
                tokio::time::sleep(Duration::from_millis(ATTACH_RETRY_MS)).await;
            }
            Err(_) => return,
        }
    }
}

/// Stops a lane for good (`worker_interrupt`, as `orchestrator worker stop` and the
/// dashboard's "Stop worker" do); `planned` names the scenario's action. A lane refused
/// as already terminal was stopped by an earlier try whose answer a crash lost, or ended
/// on its own first (then the scenario's stop stays uncommitted, and it fails).
async fn stop(planned: String, worker: engine::ids::WorkerId, ledger: &SharedLedger) {
    let result = call(SimOp::Stop { worker }, ledger).await;
    let mut l = ledger.borrow_mut();
    if result.is_ok() {
        l.uncommitted.remove(&planned);
    }
    if result.is_ok() || result.as_ref().is_err_and(|code| code == "WORKER_TERMINAL") {
        // Its agent has nothing more to do: the run may end without it.
        l.stopped.insert(worker);
        l.finished_agents.insert(worker);
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
        let standby = ledger.borrow().standby;
        if let Ok(mut s) = crate::wire::connect_daemon(DAEMON_PORT, standby).await
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
