//! The seeded agent inside a conversation: how the run's agents behave ([`AgentKnobs`]),
//! a turn (its length, its calls to the daemon, how it ends and the block it ends with),
//! the approval card before a write tool's first call, and one call with retries.

use super::{Conversation, Death, PageEvent, PageStop, cover};
use crate::ledger::SharedLedger;
use crate::wire::{DAEMON_PORT, FromDaemon, SimOp, ToDaemon, read_frame, write_frame};
use engine::ids::WorkerId;
use engine::model::{ConversationState, ErrorKind};
use rand_chacha::rand_core::Rng;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// How the agents of a run behave (drawn per seed).
#[derive(Clone, Debug)]
pub struct AgentKnobs {
    /// Turns an agent needs before it calls `worker_complete`.
    pub turns_min: u32,
    /// Upper bound of the same.
    pub turns_max: u32,
    /// Percent of turns that report durable progress.
    pub progress_pct: u64,
    /// Percent of turns longer than 20 minutes (past the keepalive).
    pub long_turn_pct: u64,
    /// Percent of turn ends shown as "Message delivery timed out".
    pub delivery_timeout_pct: u64,
    /// Percent of turns that end with a human wait.
    pub human_pct: u64,
    /// Every turn ends with the continuation-state block of the agent skill.
    pub blocks: bool,
    /// The agent says `status: complete` once without calling `worker_complete`.
    pub forget_complete: bool,
    /// Human waits are expressed only by `status: blocked`, never by the call.
    pub block_waits: bool,
    /// Percent of lane turns that wait for lane 0 to complete (a dependency).
    pub dependency_pct: u64,
    /// Percent of progress reports that also message `/root`.
    pub message_pct: u64,
    /// Percent of turn ends where the tab closes or the conversation fills up.
    pub lost_pct: u64,
    /// Percent of turn ends where the page's controls change for a few minutes.
    pub host_ui_pct: u64,
    /// Percent of lane turns where the agent gives up and calls `worker_fail`.
    pub fail_pct: u64,
    /// Percent of submissions the page answers with "Message delivery timed out" at
    /// once (the executor reports `MESSAGE_DELIVERY_TIMEOUT` as the command's result).
    pub submit_timeout_pct: u64,
    /// Percent of turn ends after which the page shows a random `PageStop`.
    pub page_stop_pct: u64,
    /// Page stops a scenario shows at given times.
    pub page_events: Vec<PageEvent>,
    /// Conversations a scenario kills at given times (tab closed, error card, full).
    pub deaths: Vec<Death>,
    /// `/root`'s agent recovers lanes without a live conversation at each of its turns.
    pub recover_lanes: bool,
    /// The orchestrator's app asks for approval: the agent's first call of each write
    /// tool in a conversation (and again after the page reloads) waits on the approval
    /// card until a simulated person answers it, after a seeded delay in this range (ms).
    pub approvals: Option<(u64, u64)>,
    /// `/root`'s agent waits for a lane (`worker_await_dependency`) at its first turn
    /// that starts at or after the time (simulated ms): a scenario's `root-awaits`.
    pub root_waits: Vec<(u64, WorkerId)>,
}

/// Starts a turn: generate for a while, make the agent's calls, then end the turn.
pub(super) fn start_turn(
    c: Rc<RefCell<Conversation>>,
    worker: WorkerId,
    name: String,
    knobs: AgentKnobs,
    ledger: SharedLedger,
) {
    let (turn, length_ms, report, finish, human, timeout) = {
        let mut cv = c.borrow_mut();
        cv.turn += 1;
        cv.show(ConversationState::Generating, None);
        let roll = cv.rng.next_u64() % 100;
        let length_ms = if roll < knobs.long_turn_pct {
            20 * 60_000 + cv.rng.next_u64() % (25 * 60_000)
        } else {
            30_000 + cv.rng.next_u64() % (10 * 60_000)
        };
        let report = cv.rng.next_u64() % 100 < knobs.progress_pct;
        let finish = !cv.finished && cv.turns_done + 1 >= cv.turns_needed;
        let human = !finish && cv.rng.next_u64() % 100 < knobs.human_pct;
        // The forgetful agent claims completion in its block once, without the call.
        let forget = finish && knobs.forget_complete && !cv.forgot_complete;
        if forget {
            cv.forgot_complete = true;
        }
        let finish = finish && !forget;
        let timeout = cv.rng.next_u64() % 100 < knobs.delivery_timeout_pct;
        (cv.turn, length_ms, report, finish, human, timeout)
    };
    let forgot = c.borrow().forgot_complete && !finish && c.borrow().turns_done + 1 >= c.borrow().turns_needed;
    let is_root = worker == WorkerId(1);
    let (waits, message, fault, fail, stop) = {
        let mut cv = c.borrow_mut();
        let now = turmoil::sim_elapsed().map_or(0, |d| d.as_millis() as u64);
        let due = knobs.root_waits.iter().filter(|(at_ms, _)| *at_ms <= now).count();
        let root_waits: Vec<WorkerId> = if is_root && due > cv.root_waits_made {
            let made = std::mem::replace(&mut cv.root_waits_made, due);
            knobs.root_waits[made..due].iter().map(|(_, on)| *on).collect()
        } else {
            Vec::new()
        };
        let depend = !is_root && worker != WorkerId(2) && !finish && cv.rng.next_u64() % 100 < knobs.dependency_pct;
        let message = cv.rng.next_u64() % 100 < knobs.message_pct;
        let roll = cv.rng.next_u64() % 100;
        let fault = if roll < knobs.lost_pct {
            Some(if roll.is_multiple_of(2) {
                ConversationState::Closed
            } else {
                ConversationState::Error(ErrorKind::ConversationFull)
            })
        } else if roll < knobs.lost_pct + knobs.host_ui_pct {
            Some(ConversationState::Error(ErrorKind::HostUiChanged))
        } else {
            None
        };
        // Rarely, a lane's agent gives up: `worker_fail` instead of more work.
        let fail =
            knobs.fail_pct > 0 && !is_root && !finish && !cv.finished && cv.rng.next_u64() % 100 < knobs.fail_pct;
        // Rarely, the page shows a stop after the turn (drawn only when enabled, so that
        // other seeds' draws stay what they were).
        let stop = if knobs.page_stop_pct > 0 && cv.rng.next_u64() % 100 < knobs.page_stop_pct {
            let stop = PageStop::ALL[(cv.rng.next_u64() % PageStop::ALL.len() as u64) as usize];
            let length_ms = if stop == PageStop::UsageLimit {
                10 * 60_000 + cv.rng.next_u64() % (30 * 60_000)
            } else {
                2 * 60_000 + cv.rng.next_u64() % (10 * 60_000)
            };
            Some((stop, length_ms, cv.rng.next_u64().is_multiple_of(2)))
        } else {
            None
        };
        // A lane waits for lane 0, the coordinator for the lanes its scenario names.
        let waits: Vec<WorkerId> = depend.then_some(WorkerId(2)).into_iter().chain(root_waits).collect();
        (waits, message, fault, fail, stop)
    };
    tokio::task::spawn_local(async move {
        let half = Duration::from_millis(length_ms / 2);
        if is_root && knobs.recover_lanes {
            let _ = agent_call(&name, SimOp::RecoverLanes, &ledger).await;
        }
        tokio::time::sleep(half).await;
        if report {
            let summary = format!("{worker}-turn{turn}-progress");
            approval(&c, "worker_progress", &knobs, &name, &ledger).await;
            if agent_call(&name, SimOp::Progress { worker, summary: summary.clone() }, &ledger).await.is_ok() {
                ledger.borrow_mut().acked.push((worker, summary));
            }
            if message && !is_root {
                let body = format!("{worker} turn {turn}: checkpoint");
                approval(&c, "message_send", &knobs, &name, &ledger).await;
                let _ = agent_call(&name, SimOp::MessageRoot { worker, body }, &ledger).await;
            }
        }
        for on in waits {
            let _ = agent_call(&name, SimOp::AwaitWorker { worker, on }, &ledger).await;
        }
        if human && !knobs.block_waits {
            let question = format!("{worker}-turn{turn}-question");
            let _ = agent_call(&name, SimOp::AwaitHuman { worker, question }, &ledger).await;
        }
        tokio::time::sleep(half).await;
        // The coordinator tries to close the run every turn; it is refused while lanes
        // are unfinished, and keeps coordinating.
        let finish = finish || is_root;
        if fail {
            let reason = format!("{worker}-gave-up");
            match agent_call(&name, SimOp::Fail { worker, reason }, &ledger).await {
                Err(code) if code != "WORKER_TERMINAL" => {}
                _ => {
                    let mut l = ledger.borrow_mut();
                    l.finished_agents.insert(worker);
                    l.failed_agents.insert(worker);
                }
            }
        } else if finish {
            let summary = format!("{worker}-done");
            approval(&c, "worker_complete", &knobs, &name, &ledger).await;
            match agent_call(&name, SimOp::Complete { worker, summary: summary.clone() }, &ledger).await {
                Ok(()) => {
                    ledger.borrow_mut().acked.push((worker, summary));
                    ledger.borrow_mut().finished_agents.insert(worker);
                }
                Err(code) if code == "WORKER_TERMINAL" => {
                    ledger.borrow_mut().finished_agents.insert(worker);
                }
                Err(_) => {}
            }
        }
        let mut cv = c.borrow_mut();
        if cv.turn != turn {
            return; // a newer turn took over
        }
        cv.turns_done += 1;
        if (finish || fail) && ledger.borrow().finished_agents.contains(&worker) {
            cv.finished = true;
        }
        let done = ledger.borrow().finished_agents.contains(&worker);
        let end = match fault {
            Some(state) if !done => state,
            _ if timeout => ConversationState::Error(ErrorKind::DeliveryTimeout),
            _ => ConversationState::Idle,
        };
        if end == ConversationState::Error(ErrorKind::DeliveryTimeout) {
            ledger.borrow_mut().retry_offers += 1; // the card comes with its Retry control
        }
        if end == ConversationState::Error(ErrorKind::HostUiChanged) {
            // The page's controls come back after a few minutes.
            let c2 = c.clone();
            tokio::task::spawn_local(async move {
                tokio::time::sleep(Duration::from_secs(180)).await;
                let mut cv = c2.borrow_mut();
                if cv.turn == turn && cv.under() == ConversationState::Error(ErrorKind::HostUiChanged) {
                    cv.show(ConversationState::Idle, None);
                }
            });
        }
        let failed = ledger.borrow().failed_agents.contains(&worker);
        let status = if failed {
            "blocked" // the agent could not finish: it says so
        } else if done || forgot {
            "complete"
        } else if human {
            "blocked"
        } else {
            "working"
        };
        let block = (knobs.blocks && end == ConversationState::Idle).then(|| {
            format!("Turn {turn} done.\n\nstatus: {status}\nsummary: turn {turn} of {worker}\ncurrent: lane work\nnext: keep going")
        });
        if knobs.blocks && status != "working" {
            ledger.borrow_mut().trace(&name, format!("turn {turn} block {status}"));
        }
        cv.show(end, block);
        drop(cv);
        ledger.borrow_mut().trace(&name, format!("turn {turn} ends {}", end.as_str()));
        if let Some((stop, length_ms, names_time)) = stop.filter(|_| end == ConversationState::Idle && !done) {
            cover(&c, stop, length_ms, names_time, &name, &ledger);
        }
    });
}

/// Before the agent's first call of a write tool in this page load: ChatGPT shows the
/// approval card, the turn waits, and a simulated person answers it after a seeded delay
/// (the executor never clicks it). Nothing when the app asks for no approvals, or when
/// another stop already covers the page (the call waits on that instead).
async fn approval(
    c: &Rc<RefCell<Conversation>>,
    tool: &'static str,
    knobs: &AgentKnobs,
    name: &str,
    ledger: &SharedLedger,
) {
    let Some((min_ms, max_ms)) = knobs.approvals else { return };
    let wait_ms = {
        let mut cv = c.borrow_mut();
        if cv.approved.contains(tool) || cv.overlay.is_some() {
            return;
        }
        min_ms + cv.rng.next_u64() % (max_ms.saturating_sub(min_ms) + 1)
    };
    ledger.borrow_mut().approvals += 1;
    cover(c, PageStop::Approval, wait_ms, false, name, ledger);
    tokio::time::sleep(Duration::from_millis(wait_ms + 1)).await;
    c.borrow_mut().approved.insert(tool);
    ledger.borrow_mut().trace(name, format!("a person approved {tool}"));
}

/// One agent call with retries: the daemon may be down or restarting.
pub(crate) async fn agent_call(name: &str, op: SimOp, ledger: &SharedLedger) -> Result<(), String> {
    for attempt in 0..20u64 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(5 * attempt.min(6))).await;
        }
        let standby = ledger.borrow().standby;
        let Ok(mut stream) = crate::wire::connect_daemon(DAEMON_PORT, standby).await else { continue };
        if write_frame(&mut stream, &ToDaemon::Call { call: attempt, op: op.clone() }).await.is_err() {
            continue;
        }
        match read_frame::<_, FromDaemon>(&mut stream).await {
            Ok(Some(FromDaemon::Reply { result: Ok(answer), .. })) => {
                if let (SimOp::RecoverLanes, Some(recovered)) = (&op, answer) {
                    ledger.borrow_mut().root_recoveries += recovered.0 as usize;
                }
                return Ok(());
            }
            Ok(Some(FromDaemon::Reply { result: Err(code), .. })) if code != "UNAVAILABLE" => return Err(code),
            _ => continue,
        }
    }
    ledger.borrow_mut().trace(name, format!("agent gave up on {op:?}"));
    Err("GAVE_UP".into())
}
