//! The CLI executor's checks (issue 20), run on every run that has a CLI executor, over
//! the CLIs' own records of their sessions (`cli_session.rs`: what each session really
//! took in and ran) and the daemon's durable event log:
//!
//! - **exactly once**: no session took one nonce in twice, across child and executor
//!   crashes (`taken_once`; the ledger also counts every key across sessions);
//! - **nothing typed while stopped**: no prompt went into a session while its worker was
//!   paused, held by its account's limit, waiting for a person, or ended (`typed_while_stopped`;
//!   a stop younger than `NOTICE_MS`, or one that began before a restart of the daemon or
//!   of the executor in that window, is the accepted race of a command already in flight);
//! - **a next-turn steer is booked as a turn**: a steer a session ran as its own turn has
//!   the engine's `execution.steer_landed` `next_turn`, every such event names a steer
//!   the session ran on its own (or that its dying child dropped), and nothing is
//!   scheduled for the worker between that event and the steer's turn starting
//!   (`steers_booked`);
//! - **a foreign turn pauses the worker** (`worker.paused` `foreign_turn`) and nothing
//!   goes in until a person resumes (`foreign_turns_paused`, and the windows above);
//! - **a finished worker's session is closed**: when a run settles, no CLI worker that
//!   completed, failed or was stopped at least `CLOSE_PATIENCE_MS` earlier still has a
//!   session bound at its executor (`finished_sessions_closed`: the daemon sends
//!   `conversation.close`, the executor ends the child);
//! - **accounts stay apart**: the workers one limit holds or pauses are of one kind, and a
//!   CLI worker is held or paused for a limit only while its own kind's account has one
//!   (`accounts_apart`): a Codex limit never holds a Claude worker, nor the reverse.
//!
//! - **approvals** (`cli_approval_oracle.rs`): nothing typed while a request waits, one
//!   decision per waiting request, a handle never waits twice, no answer invented.
//!
//! A report sent while the daemon was down is lost with its connection; the checks that
//! need one excuse a window in which the daemon restarted (and say how many they excused).

use crate::cli_evidence::{
    CLOSE_PATIENCE_MS, FOREIGN_PATIENCE_MS, LIMIT_SLACK_MS, LOST_REPORT_MS, NOTICE_MS, Sources, attempt_of,
    daemon_restarted, ms,
};
use crate::cli_session::{CliDisk, CliEventKind, Limit, TurnState};
use crate::knobs::Knobs;
use engine::event::{Event, EventKind};
use engine::ids::{AttemptId, WorkerId};
use engine::model::{HoldReason, Origin, PauseReason};
use engine::{ExecutorKind, SteerLanding};
use std::collections::{BTreeMap, BTreeSet};

/// What the CLI executor's sessions did, for scenario expectations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CliCounts {
    /// Turns our prompts started (creates, sends, steers run as their own turn).
    pub turns: usize,
    /// Steers run as the next turn.
    pub next_turn_steers: usize,
    /// Steers taken into a running turn.
    pub merged_steers: usize,
    /// Turns nobody here commanded.
    pub foreign_turns: usize,
    /// Turns whose child died (a child crash, an executor restart).
    pub interrupted: usize,
    /// Turns an account's usage limit ended.
    pub limited: usize,
    /// Checks excused because the daemon restarted right after a report.
    pub excused: usize,
    /// `submission-started` prompts a crash left, settled from the record: found
    /// (`submitted`), provably absent (`DEADLINE_EXCEEDED`), torn (`AMBIGUOUS_SUBMISSION`).
    pub reconciled: [usize; 3],
    /// Approval requests and the operator's refused answers (`cli-approvals-*`).
    pub approvals: crate::cli_approval_oracle::ApprovalCounts,
}

impl CliCounts {
    /// A count by its scenario name (`expect cli-turns >= 3`).
    pub fn named(&self, name: &str) -> Option<usize> {
        Some(match name {
            "cli-turns" => self.turns,
            "cli-next-turn-steers" => self.next_turn_steers,
            "cli-merged-steers" => self.merged_steers,
            "cli-foreign-turns" => self.foreign_turns,
            "cli-interrupted" => self.interrupted,
            "cli-limited" => self.limited,
            "cli-reconciled-found" => self.reconciled[0],
            "cli-reconciled-absent" => self.reconciled[1],
            "cli-reconciled-torn" => self.reconciled[2],
            "cli-approvals-asked" => self.approvals.asked,
            "cli-approvals-approved" => self.approvals.approved,
            "cli-approvals-declined" => self.approvals.declined,
            "cli-approvals-gone" => self.approvals.gone,
            "cli-approvals-refused" => self.approvals.refused,
            "cli-approvals-reused" => self.approvals.reused,
            _ => return None,
        })
    }
}

/// The verdict of the CLI checks.
#[derive(Clone, Debug, Default)]
pub struct CliFacts {
    /// What the sessions did.
    pub counts: CliCounts,
    /// What broke.
    pub violations: Vec<String>,
}

/// The CLI lanes' kinds in spawn order: the Codex lanes, then the Claude Code ones.
pub fn lane_kinds(knobs: &Knobs) -> Vec<ExecutorKind> {
    let codex = std::iter::repeat_n(ExecutorKind::Codex, knobs.cli_workers);
    codex.chain(std::iter::repeat_n(ExecutorKind::Claude, knobs.cli.claude_workers)).collect()
}

/// Runs every CLI check of a run.
pub fn check(knobs: &Knobs, disk: &CliDisk, src: &Sources<'_>) -> CliFacts {
    let mut facts = CliFacts { counts: counts(disk), ..CliFacts::default() };
    if !knobs.cli.executor {
        return facts;
    }
    let v = &mut facts.violations;
    v.extend(taken_once(disk));
    v.extend(typed_while_stopped(disk, src));
    let (broken, excused) = steers_booked(disk, src);
    v.extend(broken);
    facts.counts.excused += excused;
    let (broken, excused) = foreign_turns_paused(disk, src);
    v.extend(broken);
    facts.counts.excused += excused;
    v.extend(accounts_apart(src));
    v.extend(crate::cli_cap_oracle::turns_within_cap(knobs, disk));
    v.extend(crate::cli_cap_oracle::accounts_within_cap(knobs, disk));
    v.extend(finished_sessions_closed(disk, src));
    let (broken, excused) = crate::cli_approval_oracle::check(disk, src.approval_calls, src.daemon_starts);
    v.extend(broken);
    facts.counts.excused += excused;
    facts.counts.approvals = crate::cli_approval_oracle::counts(disk, src.approval_calls);
    facts
}

/// When the run settled, every CLI worker that ended at least [`CLOSE_PATIENCE_MS`]
/// before has no session bound at the executor: its child was ended.
pub fn finished_sessions_closed(disk: &CliDisk, src: &Sources<'_>) -> Vec<String> {
    let Some(settled) = src.settled_ms else { return Vec::new() };
    let mut broken = Vec::new();
    for (worker, session) in &disk.bound {
        let Some(w) = src.engine.worker(*worker) else { continue };
        let Some(ended) = w.ended_at.map(|t| t.0.saturating_sub(src.start.0)) else { continue };
        if w.spec.executor.is_cli() && ended + CLOSE_PATIENCE_MS <= settled {
            broken.push(format!(
                "{worker} ended at {ended} ms ({:?}) but its session {session} was still open when the run settled at {settled} ms",
                w.lifecycle
            ));
        }
    }
    broken
}

/// Every limit the run's accounts reached: the scenario's and the seeded ones.
pub fn limits_of(knobs: &Knobs, disk: &CliDisk) -> Vec<Limit> {
    let scheduled = knobs.cli.events.iter().filter_map(|e| match e.what {
        CliEventKind::Limit { kind, length_ms, names_time } => {
            Some(Limit { kind, from_ms: e.at_ms, until_ms: e.at_ms + length_ms, names_time })
        }
        _ => None,
    });
    scheduled.chain(disk.limits.iter().copied()).collect()
}

fn counts(disk: &CliDisk) -> CliCounts {
    let verdict = |v| disk.reconciled.get(v).copied().unwrap_or(0);
    let mut c =
        CliCounts { reconciled: [verdict("found"), verdict("absent"), verdict("torn")], ..CliCounts::default() };
    for record in disk.sessions.values() {
        let steers: BTreeSet<&str> = record.prompts.iter().filter(|p| p.steer).map(|p| p.key.as_str()).collect();
        for t in &record.turns {
            match &t.starter {
                Some(k) if steers.contains(k.as_str()) => {
                    c.turns += 1;
                    c.next_turn_steers += 1;
                }
                Some(_) => c.turns += 1,
                None => c.foreign_turns += 1,
            }
            c.merged_steers += t.merged.iter().filter(|k| steers.contains(k.as_str())).count();
            c.interrupted += usize::from(t.state == TurnState::Interrupted);
            c.limited += usize::from(t.state == TurnState::Limited);
        }
    }
    c
}

/// No session took one nonce in twice.
pub fn taken_once(disk: &CliDisk) -> Vec<String> {
    let mut broken = Vec::new();
    for (session, record) in &disk.sessions {
        let mut seen = BTreeSet::new();
        for p in &record.prompts {
            if !seen.insert(&p.key) {
                broken.push(format!("CLI session {session} took {} in twice (at {} ms)", p.key, p.at_ms));
            }
        }
    }
    broken
}

/// A span in which nothing may be typed for a worker.
#[derive(Clone, Copy, Debug)]
struct Stop {
    from_ms: u64,
    until_ms: u64,
    what: &'static str,
    /// An operator pause: an operator's own act passes it.
    operator: bool,
}

/// The spans in which each worker was paused, held by its account, waiting for a person,
/// or ended, from the log.
fn stops(src: &Sources<'_>) -> BTreeMap<WorkerId, Vec<Stop>> {
    let end = u64::MAX;
    let mut open: BTreeMap<(WorkerId, &'static str), (u64, bool)> = BTreeMap::new();
    let mut spans: BTreeMap<WorkerId, Vec<Stop>> = BTreeMap::new();
    let close = |spans: &mut BTreeMap<WorkerId, Vec<Stop>>, w, what, at, open: &mut BTreeMap<_, _>| {
        if let Some((from_ms, operator)) = open.remove(&(w, what)) {
            spans.entry(w).or_default().push(Stop { from_ms, until_ms: at, what, operator });
        }
    };
    for e in src.events {
        let Some(w) = e.worker else { continue };
        let at = ms(src, e);
        match &e.kind {
            EventKind::WorkerPaused { reason, after_turn: false } => {
                open.entry((w, "paused")).or_insert((at, *reason == PauseReason::Operator));
            }
            EventKind::WorkerResumed | EventKind::ContinuationStallAcknowledged => {
                close(&mut spans, w, "paused", at, &mut open)
            }
            EventKind::WorkerHeld { reason: HoldReason::UsageLimit | HoldReason::RateLimited, until, .. } => {
                let until_ms = until.map_or(end, |t| t.ms_since(src.start));
                spans.entry(w).or_default().push(Stop {
                    from_ms: at,
                    until_ms,
                    what: "held by its account",
                    operator: false,
                });
            }
            EventKind::WorkerAwaitingHuman { .. } => {
                open.entry((w, "waiting for a person")).or_insert((at, false));
            }
            EventKind::WorkerHumanResolved => close(&mut spans, w, "waiting for a person", at, &mut open),
            EventKind::WorkerCompleted { .. } | EventKind::WorkerFailed { .. } | EventKind::WorkerCancelled { .. } => {
                open.entry((w, "ended")).or_insert((at, false));
            }
            _ => {}
        }
    }
    for ((w, what), (from_ms, operator)) in open {
        spans.entry(w).or_default().push(Stop { from_ms, until_ms: end, what, operator });
    }
    // A hold lifts early when the engine says so.
    for e in src.events {
        if let (Some(w), EventKind::WorkerHoldLifted { reason: HoldReason::UsageLimit | HoldReason::RateLimited }) =
            (e.worker, &e.kind)
        {
            let at = ms(src, e);
            for s in spans.entry(w).or_default().iter_mut().filter(|s| s.what == "held by its account") {
                if s.from_ms <= at && at < s.until_ms {
                    s.until_ms = at;
                }
            }
        }
    }
    spans
}

/// No prompt went into a session while its worker was stopped (long enough to know).
pub fn typed_while_stopped(disk: &CliDisk, src: &Sources<'_>) -> Vec<String> {
    let stops = stops(src);
    let mut broken = Vec::new();
    for (session, record) in &disk.sessions {
        for p in &record.prompts {
            let operator =
                attempt_of(&p.key).and_then(|a| src.engine.attempt(a)).is_some_and(|a| a.origin == Origin::Operator);
            let executor_start = p.at_ms.saturating_sub(p.up_ms);
            for s in stops.get(&record.worker).into_iter().flatten() {
                let inside = s.from_ms <= p.at_ms && p.at_ms < s.until_ms;
                let known_since = s.from_ms.max(executor_start);
                let raced = p.at_ms.saturating_sub(known_since) <= NOTICE_MS
                    || daemon_restarted(src, s.from_ms.saturating_sub(1_000), p.at_ms);
                if inside && !raced && !(operator && s.operator) {
                    broken.push(format!(
                        "CLI session {session} took {} in at {} ms while {} was {} (since {} ms)",
                        p.key, p.at_ms, record.worker, s.what, s.from_ms
                    ));
                }
            }
        }
    }
    broken
}

/// A steer a session ran as its own turn is booked as that turn, and the reverse; and
/// nothing is scheduled for its worker while it waits for that turn. Returns what broke
/// and how many were excused (the report lost to a daemon restart).
pub fn steers_booked(disk: &CliDisk, src: &Sources<'_>) -> (Vec<String>, usize) {
    let booked: BTreeMap<AttemptId, &Event> = src
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::SteerLanded { landed: SteerLanding::NextTurn }))
        .filter_map(|e| Some((e.attempt?, e)))
        .collect();
    let (mut broken, mut excused) = (Vec::new(), 0);
    let mut own_turns: BTreeSet<AttemptId> = BTreeSet::new();
    let mut dropped: BTreeSet<AttemptId> = BTreeSet::new();
    for (session, record) in &disk.sessions {
        let steers: BTreeSet<&str> = record.prompts.iter().filter(|p| p.steer).map(|p| p.key.as_str()).collect();
        for t in &record.turns {
            dropped.extend(t.dropped.iter().filter_map(|k| attempt_of(k)));
            let Some(key) = t.starter.as_deref().filter(|k| steers.contains(k)) else { continue };
            let Some(attempt) = attempt_of(key) else { continue };
            own_turns.insert(attempt);
            // An attempt the engine had closed by then (its worker finished, a newer steer
            // took the turn over) is not the turn to give back.
            let closed = src.events.iter().any(|e| {
                e.attempt == Some(attempt)
                    && matches!(e.kind, EventKind::ExecutionEnded { .. })
                    && ms(src, e) <= t.started_ms
            });
            if booked.contains_key(&attempt) || closed {
                continue;
            }
            if daemon_restarted(src, t.started_ms, t.started_ms + LOST_REPORT_MS) {
                excused += 1;
            } else {
                broken.push(format!(
                    "CLI session {session} ran steer {key} as its own turn at {} ms, but the engine never booked it as one",
                    t.started_ms
                ));
            }
        }
    }
    for (attempt, e) in &booked {
        if !own_turns.contains(attempt) && !dropped.contains(attempt) {
            broken
                .push(format!("the engine booked {attempt} as a next turn (event #{}) that no session ran", e.cursor));
        }
        // Nothing else goes in until the steer's own turn shows.
        let worker = e.worker;
        let after = src.events.iter().skip_while(|x| x.cursor <= e.cursor);
        for x in after.filter(|x| x.worker == worker) {
            let own = x.attempt == Some(*attempt);
            match &x.kind {
                EventKind::ExecutionGenerating | EventKind::ExecutionIdle | EventKind::ExecutionEnded { .. } if own => {
                    break;
                }
                EventKind::BindingLost { .. } | EventKind::WorkerResumed => break,
                EventKind::ExecutionScheduled { .. } => {
                    broken.push(format!(
                        "{} was scheduled (event #{}) while steer {attempt} waited for its turn (event #{})",
                        x.attempt.map(|a| a.to_string()).unwrap_or_default(),
                        x.cursor,
                        e.cursor
                    ));
                    break;
                }
                _ => {}
            }
        }
    }
    (broken, excused)
}

/// Every foreign turn a session ran is followed by its worker's `foreign_turn` pause
/// (unless the worker ended, or its session was no longer the one bound, first).
pub fn foreign_turns_paused(disk: &CliDisk, src: &Sources<'_>) -> (Vec<String>, usize) {
    let (mut broken, mut excused) = (Vec::new(), 0);
    let end_ms = src.events.last().map_or(0, |e| ms(src, e));
    for (session, record) in &disk.sessions {
        let w = Some(record.worker);
        for t in record.turns.iter().filter(|t| t.starter.is_none()) {
            let within = |e: &&Event, patience_ms: u64| {
                e.worker == w && (t.started_ms..=t.started_ms + patience_ms).contains(&ms(src, e))
            };
            let paused = src
                .events
                .iter()
                .filter(|e| within(e, FOREIGN_PATIENCE_MS))
                .any(|e| matches!(e.kind, EventKind::WorkerPaused { reason: PauseReason::ForeignTurn, .. }))
                || paused_for_foreign_turn(src, record.worker, t.started_ms);
            // The worker ended, or moved to another conversation, as the turn began.
            let gone = src.events.iter().filter(|e| within(e, NOTICE_MS)).any(|e| {
                matches!(
                    e.kind,
                    EventKind::WorkerCompleted { .. }
                        | EventKind::WorkerFailed { .. }
                        | EventKind::WorkerCancelled { .. }
                        | EventKind::WorkerAttached { .. }
                )
            });
            if paused || gone || end_ms.saturating_sub(t.started_ms) < FOREIGN_PATIENCE_MS {
                continue;
            }
            if daemon_restarted(src, t.started_ms, t.started_ms + LOST_REPORT_MS) {
                excused += 1;
            } else {
                broken.push(format!(
                    "a foreign turn ran in CLI session {session} at {} ms, but {} was not paused for it",
                    t.started_ms, record.worker
                ));
            }
        }
    }
    (broken, excused)
}

/// Whether the worker was paused for a foreign turn (an earlier one) at `at_ms`: another
/// foreign turn then keeps that pause, with no new event.
fn paused_for_foreign_turn(src: &Sources<'_>, worker: WorkerId, at_ms: u64) -> bool {
    let mut paused = false;
    for e in src.events.iter().filter(|e| e.worker == Some(worker) && ms(src, e) <= at_ms) {
        match &e.kind {
            EventKind::WorkerPaused { reason, after_turn: false } => paused = *reason == PauseReason::ForeignTurn,
            EventKind::WorkerResumed | EventKind::ContinuationStallAcknowledged => paused = false,
            _ => {}
        }
    }
    paused
}

/// One limit holds or pauses workers of one kind, and a CLI worker only while its own
/// account has a limit.
pub fn accounts_apart(src: &Sources<'_>) -> Vec<String> {
    let kind_of = |w: WorkerId| src.engine.worker(w).map_or(ExecutorKind::Chatgpt, |w| w.spec.executor);
    let mut groups: BTreeMap<(u64, &'static str), BTreeSet<ExecutorKind>> = BTreeMap::new();
    let mut broken = Vec::new();
    for e in src.events {
        let Some(w) = e.worker else { continue };
        let what = match &e.kind {
            EventKind::WorkerHeld { reason: HoldReason::UsageLimit | HoldReason::RateLimited, .. } => "held",
            EventKind::WorkerPaused { reason: PauseReason::UsageLimit | PauseReason::AccountCheck, .. } => "paused",
            _ => continue,
        };
        let kind = kind_of(w);
        groups.entry((e.at.0, what)).or_default().insert(kind);
        let at = ms(src, e);
        let own = |l: &&Limit| l.kind == kind && l.from_ms <= at && at <= l.until_ms + LIMIT_SLACK_MS;
        if kind.is_cli() && !src.limits.iter().any(|l| own(&l)) {
            broken.push(format!(
                "{w} ({kind}) was {what} for a limit at {at} ms (event #{}) while its account had none",
                e.cursor
            ));
        }
    }
    for ((at, what), kinds) in groups.into_iter().filter(|(_, k)| k.len() > 1) {
        broken.push(format!("one limit {what} workers of several accounts at {at}: {kinds:?}"));
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli_session::{SessionRecord, Taken, Turn};
    use engine::ids::{Cursor, RunId};
    use engine::time::Timestamp;
    use engine::{Engine, EngineConfig};

    const W: WorkerId = WorkerId(2);
    const MINUTE: u64 = 60_000;

    fn taken(key: &str, at_ms: u64, steer: bool) -> Taken {
        Taken { key: key.into(), steer, at_ms, up_ms: at_ms }
    }

    fn turn(starter: Option<&str>, started_ms: u64) -> Turn {
        Turn {
            starter: starter.map(String::from),
            merged: Vec::new(),
            dropped: Vec::new(),
            state: TurnState::Ended,
            started_ms,
            ended_ms: Some(started_ms + 1),
        }
    }

    fn disk(prompts: Vec<Taken>, turns: Vec<Turn>) -> CliDisk {
        let mut record = SessionRecord::new(ExecutorKind::Claude, W);
        (record.prompts, record.turns) = (prompts, turns);
        let mut disk = CliDisk::default();
        disk.sessions.insert("claude-2-1".into(), record);
        disk
    }

    fn event(cursor: u64, at_ms: u64, attempt: Option<u64>, kind: EventKind) -> Event {
        let at = Timestamp(at_ms);
        Event { cursor: Cursor(cursor), at, run: RunId(1), worker: Some(W), attempt: attempt.map(AttemptId), kind }
    }

    fn check_with<T>(events: &[Event], f: impl FnOnce(&Sources<'_>) -> T) -> T {
        let engine = Engine::new(EngineConfig::default());
        let src = Sources {
            events,
            engine: &engine,
            start: Timestamp(0),
            daemon_starts: &[0],
            limits: Vec::new(),
            settled_ms: None,
            approval_calls: &[],
        };
        f(&src)
    }

    #[test]
    fn a_nonce_taken_in_twice_breaks() {
        let twice = disk(
            vec![taken("conversation.send:exe-3", MINUTE, false), taken("conversation.send:exe-3", 2 * MINUTE, false)],
            vec![],
        );
        assert_eq!(taken_once(&twice).len(), 1);
        assert!(taken_once(&disk(vec![taken("conversation.send:exe-3", MINUTE, false)], vec![])).is_empty());
    }

    #[test]
    fn typing_into_a_paused_worker_breaks_unless_it_raced_the_pause() {
        let paused =
            [event(1, MINUTE, None, EventKind::WorkerPaused { reason: PauseReason::ForeignTurn, after_turn: false })];
        let late = disk(vec![taken("conversation.send:exe-4", 5 * MINUTE, false)], vec![]);
        let broken = check_with(&paused, |src| typed_while_stopped(&late, src));
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].contains("while wrk-2 was paused"), "{broken:?}");
        let raced = disk(vec![taken("conversation.send:exe-4", MINUTE + 5_000, false)], vec![]);
        assert!(check_with(&paused, |src| typed_while_stopped(&raced, src)).is_empty());
        // The executor had just restarted: a command it held may beat the daemon's cancel.
        let mut restarted = disk(vec![taken("conversation.send:exe-4", 5 * MINUTE, false)], vec![]);
        restarted.sessions.values_mut().for_each(|r| r.prompts[0].up_ms = 2_000);
        assert!(check_with(&paused, |src| typed_while_stopped(&restarted, src)).is_empty());
    }

    #[test]
    fn a_steer_run_as_its_own_turn_must_be_booked_and_keep_the_worker_waiting() {
        let key = "conversation.steer:exe-5";
        let ran = disk(vec![taken(key, MINUTE, true)], vec![turn(Some("x"), 0), turn(Some(key), 3 * MINUTE)]);
        let (broken, _) = check_with(&[], |src| steers_booked(&ran, src));
        assert_eq!(broken.len(), 1, "{broken:?}");
        let landed = EventKind::SteerLanded { landed: SteerLanding::NextTurn };
        let booked = [
            event(1, 3 * MINUTE, Some(5), landed.clone()),
            event(2, 4 * MINUTE, Some(5), EventKind::ExecutionGenerating),
        ];
        assert!(check_with(&booked, |src| steers_booked(&ran, src)).0.is_empty());
        let scheduled = EventKind::ExecutionScheduled {
            reason: engine::model::AttemptReason::AutoResume,
            wake: engine::wake::WakeSet::EMPTY,
            sequence: 6,
        };
        let jumped = [event(1, 3 * MINUTE, Some(5), landed), event(2, 3 * MINUTE + 5_000, Some(6), scheduled)];
        let (broken, _) = check_with(&jumped, |src| steers_booked(&ran, src));
        assert!(broken.iter().any(|b| b.contains("while steer exe-5 waited for its turn")), "{broken:?}");
    }

    #[test]
    fn a_foreign_turn_without_its_pause_breaks() {
        let ran = disk(vec![], vec![turn(None, MINUTE)]);
        let later = [event(1, 30 * MINUTE, None, EventKind::WorkerResumed)];
        assert_eq!(check_with(&later, |src| foreign_turns_paused(&ran, src)).0.len(), 1);
        let paused = [
            event(
                1,
                MINUTE + 1_000,
                None,
                EventKind::WorkerPaused { reason: PauseReason::ForeignTurn, after_turn: false },
            ),
            event(2, 30 * MINUTE, None, EventKind::WorkerResumed),
        ];
        assert!(check_with(&paused, |src| foreign_turns_paused(&ran, src)).0.is_empty());
    }
}
