//! The checks of the CLI approval mode (issue 20), over the sessions' records (every
//! request raised and how it ended, every `approval.answer` the executor received) and the
//! operator's `approval_answer` calls with the engine's verdicts:
//!
//! - **nothing typed while a request waits**: no prompt went into a session while one of
//!   its approval requests waited for a person (`typed_while_asking`; one younger than
//!   `NOTICE_MS`, or a wait whose report a daemon restart may have lost, is excused);
//! - **one decision per request, to a waiting one**: each request got at most one written
//!   decision, written while it waited, and an answered request has exactly that decision
//!   (`one_decision`);
//! - **a handle names one waiting request**: no id was raised while a request under it
//!   still waited (handles are numbered per child, so one comes back once its request has
//!   ended, and the engine must take the new one for new) (`one_decision` too);
//! - **no answer invented**: every `approval.answer` the executor received matches an
//!   operator `approval_answer` the engine accepted, each accepted one at most once; a stale
//!   id or a second answer the engine accepted is broken unless the executor reconnected
//!   in between (its `hello` makes the request answerable again) (`answers_asked_for`).

use crate::cli_evidence::{LOST_REPORT_MS, NOTICE_MS};
use crate::cli_session::{ApprovalCall, Ask, AskEnd, CliDisk};
use engine::model::ApprovalDecision;

/// Request counts, for scenario expectations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApprovalCounts {
    /// Requests raised.
    pub asked: usize,
    /// Requests whose answer was approve.
    pub approved: usize,
    /// Requests whose answer was decline.
    pub declined: usize,
    /// Requests that went unanswered (a child crash, a restart, a closed session).
    pub gone: usize,
    /// Operator answers the engine refused (a stale id, a second answer, a gone request).
    pub refused: usize,
    /// Requests under a handle an earlier request of their session had (a new child
    /// numbering from `apr-1` again).
    pub reused: usize,
}

/// Counts the requests and the refusals.
pub fn counts(disk: &CliDisk, calls: &[ApprovalCall]) -> ApprovalCounts {
    let mut c = ApprovalCounts { refused: calls.iter().filter(|c| c.verdict.is_err()).count(), ..Default::default() };
    for record in disk.sessions.values() {
        c.reused +=
            record.asks.iter().enumerate().filter(|(i, a)| record.asks[..*i].iter().any(|k| k.id == a.id)).count();
    }
    for ask in disk.sessions.values().flat_map(|r| &r.asks) {
        c.asked += 1;
        match ask.end {
            Some((AskEnd::Answered(ApprovalDecision::Approve), _)) => c.approved += 1,
            Some((AskEnd::Answered(ApprovalDecision::Decline), _)) => c.declined += 1,
            Some((AskEnd::Gone, _)) => c.gone += 1,
            None => {}
        }
    }
    c
}

/// Whether the daemon restarted in `[from, to]` (simulated ms).
fn restarted(daemon_starts: &[u64], from: u64, to: u64) -> bool {
    daemon_starts.iter().skip(1).any(|s| (from..=to).contains(s))
}

/// Runs every approval check: what broke, and how many were excused.
pub fn check(disk: &CliDisk, calls: &[ApprovalCall], daemon_starts: &[u64]) -> (Vec<String>, usize) {
    let (mut broken, mut excused) = typed_while_asking(disk, daemon_starts);
    broken.extend(one_decision(disk));
    let (b, e) = answers_asked_for(disk, calls, daemon_starts);
    broken.extend(b);
    excused += e;
    (broken, excused)
}

/// No prompt went into a session while one of its requests waited (long enough to know).
pub fn typed_while_asking(disk: &CliDisk, daemon_starts: &[u64]) -> (Vec<String>, usize) {
    let (mut broken, mut excused) = (Vec::new(), 0);
    for (session, record) in &disk.sessions {
        for ask in &record.asks {
            let until = ask.end.map_or(u64::MAX, |(_, at)| at);
            for p in record.prompts.iter().filter(|p| ask.asked_ms < p.at_ms && p.at_ms < until) {
                if p.at_ms - ask.asked_ms <= NOTICE_MS {
                    continue; // already on its way when the request was reported
                }
                if restarted(daemon_starts, ask.asked_ms, p.at_ms) {
                    excused += 1;
                    continue;
                }
                broken.push(format!(
                    "CLI session {session} took {} in at {} ms while its request {} waited (since {} ms)",
                    p.key, p.at_ms, ask.id, ask.asked_ms
                ));
            }
        }
    }
    (broken, excused)
}

/// Whether `ask` waited at `at_ms` (raised, and not yet ended before it).
fn waited(ask: &Ask, at_ms: u64) -> bool {
    ask.asked_ms <= at_ms && ask.end.is_none_or(|(_, at)| at_ms <= at)
}

/// At most one decision per request, written while it waited; an answered request has
/// exactly it; a handle names one waiting request at a time (a new child numbers its
/// requests from `apr-1` again, so a handle may come back once its request has ended).
pub fn one_decision(disk: &CliDisk) -> Vec<String> {
    let mut broken = Vec::new();
    for (session, record) in &disk.sessions {
        for (i, ask) in record.asks.iter().enumerate() {
            if record.asks[..i].iter().any(|k| k.id == ask.id && waited(k, ask.asked_ms)) {
                broken.push(format!(
                    "CLI session {session} raised {} at {} ms while its earlier request {} still waited",
                    ask.id, ask.asked_ms, ask.id
                ));
            }
            let written: Vec<_> =
                record.answers.iter().filter(|a| a.written && a.id == ask.id && waited(ask, a.at_ms)).collect();
            if written.len() > 1 {
                broken.push(format!("CLI session {session} wrote {} decisions to {}", written.len(), ask.id));
            }
            for a in &written {
                if ask.end != Some((AskEnd::Answered(a.decision), a.at_ms)) {
                    broken.push(format!(
                        "CLI session {session} wrote {} to {} at {} ms, but the request ended {:?}",
                        a.decision.as_str(),
                        ask.id,
                        a.at_ms,
                        ask.end
                    ));
                }
            }
            if let Some((AskEnd::Answered(_), _)) = ask.end
                && written.is_empty()
            {
                broken
                    .push(format!("CLI session {session}'s request {} ended answered with no answer written", ask.id));
            }
        }
        for a in record
            .answers
            .iter()
            .filter(|a| a.written && !record.asks.iter().any(|k| k.id == a.id && waited(k, a.at_ms)))
        {
            broken.push(format!(
                "CLI session {session} wrote {} to {} at {} ms, when no request {} waited",
                a.decision.as_str(),
                a.id,
                a.at_ms,
                a.id
            ));
        }
    }
    broken
}

/// Every answer the executor received was an accepted operator answer; the engine
/// accepted no stale id and no second answer (without a reconnect in between).
pub fn answers_asked_for(disk: &CliDisk, calls: &[ApprovalCall], daemon_starts: &[u64]) -> (Vec<String>, usize) {
    let (mut broken, mut excused) = (Vec::new(), 0);
    let mut used = vec![false; calls.len()];
    let mut received: Vec<_> =
        disk.sessions.values().flat_map(|r| r.answers.iter().map(move |a| (r.worker, a))).collect();
    received.sort_by_key(|(_, a)| a.at_ms);
    for (worker, a) in received {
        let matching = calls.iter().enumerate().position(|(i, c)| {
            !used[i]
                && c.verdict.is_ok()
                && c.worker == worker
                && c.id == a.id
                && c.decision == a.decision
                && c.at_ms <= a.at_ms
        });
        match matching {
            Some(i) => used[i] = true,
            // The call's verdict died with the daemon before it was logged.
            None if restarted(daemon_starts, a.at_ms.saturating_sub(LOST_REPORT_MS), a.at_ms) => excused += 1,
            None => broken.push(format!(
                "the executor got approval.answer {} {} for {worker} at {} ms that no accepted approval_answer asked for",
                a.id,
                a.decision.as_str(),
                a.at_ms
            )),
        }
    }
    for (i, c) in calls.iter().enumerate().filter(|(_, c)| c.verdict.is_ok()) {
        let reconnected = calls[..i].iter().rev().find(|p| p.worker == c.worker && p.id == c.id && p.meant == "answer");
        let refusable = match c.meant {
            "stale" => true,
            "again" => reconnected.is_some_and(|p| p.hellos == c.hellos),
            _ => false,
        };
        if refusable {
            broken.push(format!(
                "the engine accepted a {} approval_answer {} {} for {} at {} ms",
                c.meant,
                c.id,
                c.decision.as_str(),
                c.worker,
                c.at_ms
            ));
        }
    }
    (broken, excused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli_session::{AnswerSeen, Ask, SessionRecord, Taken};
    use engine::ExecutorKind;
    use engine::ids::WorkerId;

    const W: WorkerId = WorkerId(2);
    const MINUTE: u64 = 60_000;

    fn disk(asks: Vec<Ask>, answers: Vec<AnswerSeen>, prompts: Vec<Taken>) -> CliDisk {
        let mut record = SessionRecord::new(ExecutorKind::Codex, W);
        (record.asks, record.answers, record.prompts) = (asks, answers, prompts);
        let mut disk = CliDisk::default();
        disk.sessions.insert("codex-2-1".into(), record);
        disk
    }

    fn ask(id: &str, at: u64, end: Option<(AskEnd, u64)>) -> Ask {
        Ask { id: id.into(), turn: 0, asked_ms: at, end }
    }

    fn seen(id: &str, at: u64, written: bool) -> AnswerSeen {
        let key = format!("approval.answer:exe-3:{id}");
        AnswerSeen { key, id: id.into(), decision: ApprovalDecision::Approve, at_ms: at, written }
    }

    fn call(id: &str, at: u64, meant: &'static str, verdict: Result<(), String>) -> ApprovalCall {
        ApprovalCall {
            worker: W,
            id: id.into(),
            decision: ApprovalDecision::Approve,
            at_ms: at,
            meant,
            verdict,
            hellos: 1,
        }
    }

    #[test]
    fn typing_while_a_request_waits_breaks() {
        let late = Taken { key: "conversation.steer:exe-4".into(), steer: true, at_ms: 5 * MINUTE, up_ms: 5 * MINUTE };
        let d = disk(vec![ask("apr-1", MINUTE, None)], vec![], vec![late.clone()]);
        assert_eq!(typed_while_asking(&d, &[0]).0.len(), 1);
        let answered = Some((AskEnd::Answered(ApprovalDecision::Approve), 2 * MINUTE));
        let d = disk(vec![ask("apr-1", MINUTE, answered)], vec![], vec![late]);
        assert!(typed_while_asking(&d, &[0]).0.is_empty());
    }

    #[test]
    fn a_decision_for_a_gone_request_or_twice_breaks() {
        let gone = disk(
            vec![ask("apr-1", MINUTE, Some((AskEnd::Gone, 2 * MINUTE)))],
            vec![seen("apr-1", 3 * MINUTE, true)],
            vec![],
        );
        assert_eq!(one_decision(&gone).len(), 1, "{:?}", one_decision(&gone));
        let answered = Some((AskEnd::Answered(ApprovalDecision::Approve), 2 * MINUTE));
        let once = disk(vec![ask("apr-1", MINUTE, answered)], vec![seen("apr-1", 2 * MINUTE, true)], vec![]);
        assert!(one_decision(&once).is_empty());
        let twice = disk(
            vec![ask("apr-1", MINUTE, answered), ask("apr-1", 90_000, None)],
            vec![seen("apr-1", 2 * MINUTE, true), seen("apr-1", 2 * MINUTE, true)],
            vec![],
        );
        assert!(one_decision(&twice).iter().any(|b| b.contains("while its earlier request apr-1 still waited")));
        assert!(one_decision(&twice).iter().any(|b| b.contains("wrote 2 decisions")));
    }

    #[test]
    fn a_handle_back_after_its_request_ended_names_a_new_request() {
        let answered = Some((AskEnd::Answered(ApprovalDecision::Approve), 2 * MINUTE));
        let later = Some((AskEnd::Answered(ApprovalDecision::Approve), 5 * MINUTE));
        let reused = disk(
            vec![ask("apr-1", MINUTE, answered), ask("apr-1", 4 * MINUTE, later)],
            vec![seen("apr-1", 2 * MINUTE, true), seen("apr-1", 5 * MINUTE, true)],
            vec![],
        );
        assert!(one_decision(&reused).is_empty(), "{:?}", one_decision(&reused));
        let unanswered = disk(
            vec![ask("apr-1", MINUTE, answered), ask("apr-1", 4 * MINUTE, later)],
            vec![seen("apr-1", 2 * MINUTE, true)],
            vec![],
        );
        assert!(one_decision(&unanswered).iter().any(|b| b.contains("ended answered with no answer written")));
    }

    #[test]
    fn an_answer_nobody_gave_or_a_stale_one_accepted_breaks() {
        let d = disk(vec![ask("apr-1", MINUTE, None)], vec![seen("apr-1", 2 * MINUTE, true)], vec![]);
        assert_eq!(answers_asked_for(&d, &[], &[0]).0.len(), 1);
        let accepted = [call("apr-1", 2 * MINUTE - 1_000, "answer", Ok(()))];
        assert!(answers_asked_for(&d, &accepted, &[0]).0.is_empty());
        let stale = [call("apr-0", MINUTE, "stale", Ok(())), accepted[0].clone()];
        assert_eq!(answers_asked_for(&d, &stale, &[0]).0.len(), 1);
        let refused = [call("apr-0", MINUTE, "stale", Err("NOT_AWAITING_APPROVAL".into())), accepted[0].clone()];
        assert!(answers_asked_for(&d, &refused, &[0]).0.is_empty());
    }
}
