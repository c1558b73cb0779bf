//! The stand-in person's part in the CLI approval mode (issue 20): it looks at "Needs you"
//! (the workers held `awaiting_approval` with a request) every [`APPROVAL_LOOK_MS`] and
//! answers each request once its seeded delay has passed: most after seconds to minutes,
//! some only after a long while; approve or decline; sometimes first with a stale id
//! (an older request's) or twice in a row. The engine must refuse the stale and the
//! repeated answer (`NOT_AWAITING_APPROVAL`) and send nothing for them; every call and its
//! verdict is logged for `cli_approval_oracle.rs`.

use crate::cli_session::{ApprovalCall, roll};
use crate::epoch::EPOCH_MS;
use crate::ledger::SharedLedger;
use engine::ids::{RunId, WorkerId};
use engine::model::ApprovalDecision;
use engine::op::{Operation, Reply};
use runtime::Handle;

/// How often the operator looks at the waiting requests (with an `ask` executor).
pub const APPROVAL_LOOK_MS: u64 = 20_000;
/// Purpose of the seeded draw of a request's answer.
const ROLL_ANSWER: u64 = 21;

/// One look at "Needs you": answers the requests due. Returns how many the engine took.
pub async fn approval_sweep(handle: &Handle, seed: u64, ledger: &SharedLedger) -> Result<Option<WorkerId>, String> {
    let list = Operation::WorkerList { run: RunId(1), include_terminal: false };
    let Ok(Ok(Reply::Workers(views))) = handle.call(list).await else { return Err("UNAVAILABLE".into()) };
    let now = turmoil::sim_elapsed().map_or(0, |d| d.as_millis() as u64);
    let mut taken = 0;
    for v in views {
        let Some(hold) = v.hold else { continue };
        let Some(pending) = hold.approval else { continue };
        let worker = v.worker.id;
        let n: u64 = pending.id.trim_start_matches("apr-").parse().unwrap_or(0);
        let r = roll(seed, worker, n, ROLL_ANSWER);
        // Most within minutes; one in six left for a long while.
        let delay =
            if r.is_multiple_of(6) { 20 * 60_000 + (r >> 8) % (25 * 60_000) } else { 10_000 + (r >> 8) % 240_000 };
        if now < hold.since.0.saturating_sub(EPOCH_MS) + delay {
            continue;
        }
        let decision = if (r >> 40).is_multiple_of(3) { ApprovalDecision::Decline } else { ApprovalDecision::Approve };
        if (r >> 44).is_multiple_of(5) && n > 1 {
            answer(handle, ledger, worker, format!("apr-{}", n - 1), decision, "stale").await;
        }
        if answer(handle, ledger, worker, pending.id.to_string(), decision, "answer").await {
            taken += 1;
        }
        if (r >> 48).is_multiple_of(4) {
            let other = match decision {
                ApprovalDecision::Approve => ApprovalDecision::Decline,
                ApprovalDecision::Decline => ApprovalDecision::Approve,
            };
            answer(handle, ledger, worker, pending.id.to_string(), other, "again").await;
        }
    }
    Ok(Some(WorkerId(taken)))
}

/// One `approval_answer`, logged with the engine's verdict; whether it was accepted.
async fn answer(
    handle: &Handle,
    ledger: &SharedLedger,
    worker: WorkerId,
    id: String,
    decision: ApprovalDecision,
    meant: &'static str,
) -> bool {
    let op = Operation::WorkerApprovalAnswer { worker, approval: id.clone(), decision };
    let verdict = match handle.call(op).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(rejection)) => Err(rejection.code.as_str().to_string()),
        Err(_) => Err("UNAVAILABLE".into()),
    };
    let accepted = verdict.is_ok();
    let mut l = ledger.borrow_mut();
    let (at_ms, hellos) = (l.now_ms, l.hellos);
    l.trace("operator", format!("approval_answer {worker} {id} {} ({meant}) -> {verdict:?}", decision.as_str()));
    l.approval_calls.push(ApprovalCall { worker, id, decision, at_ms, meant, verdict, hellos });
    accepted
}
