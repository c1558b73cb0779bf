//! Scenario files: a small line language for named cases (`scenarios/*.scn`), parsed
//! into knobs, a crash plan, scripted operator actions and expectations.
//!
//! ```text
//! # pause after the current turn, then continue now: exactly one manual attempt
//! workers 1
//! turns 4 4
//! at 5m pause lane0 after-turn
//! at 60m continue-now lane0
//! at 120m resume lane0
//! expect delivered lane0 between 60m 120m = 1
//! expect completed all
//! ```
//!
//! `at TIME attach laneN` attaches the lane to a fresh conversation (one kept for it,
//! never used for a create); nobody opens it in the browser: the engine's next turn for
//! the lane names it, and the browser opens it for that command.

use crate::chat::{Death, PageEvent, PageStop};
use crate::cli_oracle::CliCounts;
use crate::cli_session::{CliEvent, CliEventKind};
use crate::faults::{Boundary, Call, CrashAt, Reaction, Trigger};
use crate::knobs::{Action, ActionKind, Knobs};
use crate::outcome::Outcome;
use crate::world::PARTITION_MS_MIN;
use engine::ExecutorKind;
use engine::ids::WorkerId;
use engine::model::{ConversationState, ErrorKind, Lifecycle};

/// A parsed scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file's first comment line, or its name.
    pub title: String,
    /// Knobs (a calm base, changed by the file).
    pub knobs: Knobs,
    /// Crashes at named boundaries.
    pub plan: Vec<CrashAt>,
    /// What must hold at the end.
    pub expectations: Vec<Expectation>,
}

/// One expectation on a run's outcome.
#[derive(Clone, Debug)]
pub enum Expectation {
    /// Every lane completed (`all`), or exactly this many.
    Completed(Option<usize>),
    /// At least this many completion-reconcile turns.
    ReconcilesAtLeast(usize),
    /// At least this many fresh `continue` prompts after delivery timeouts.
    FreshContinuesAtLeast(u32),
    /// The delivery-timeout card (with its Retry control) showed at least this many
    /// times; every run checks that Retry was never clicked.
    RetryOffersAtLeast(u32),
    /// No continuation was scheduled while a `blocked` block was unresolved.
    NothingWhileBlocked,
    /// At least this many wakes waited for the anti-spam floor.
    DeferralsAtLeast(usize),
    /// Exactly this many lanes left paused by the stall guard.
    Stalled(usize),
    /// Exactly this many (or, `at_least`, at least this many) prompts delivered to a lane
    /// in a time window.
    DeliveredBetween {
        lane: usize,
        from_ms: u64,
        to_ms: u64,
        count: usize,
        at_least: bool,
    },
    /// At least this many lanes failed (their agents called `worker_fail`).
    FailedAtLeast(usize),
    /// Every lane finished: completed, failed by its own agent, or stopped by the operator.
    FinishedAll,
    /// At least this many attempts were withdrawn before they left or were submitted.
    WithdrawnAtLeast(usize),
    /// The executor reconnected at least this many times.
    ReconnectsAtLeast(usize),
    /// Exactly this many CLI workers still wait, unsent, for an executor of their kind.
    CliWaiting(usize),
    /// No attempt was submitted while its worker waited (human, dependency) or was
    /// paused, except explicit operator acts.
    NothingWhileHeld,
    /// The executor stopped managing at least this many conversations on
    /// `conversation.close` (an attach releases the old one).
    ClosesAtLeast(usize),
    HoldsAtLeast(usize),
    PagePausesAtLeast(usize),
    /// The dead-man layer fired exactly this many times (`deadman.fired`).
    DeadManFired(usize),
    /// Exactly this many attempts carried the dead-man wake (root recoveries).
    DeadManRecoveries(usize),
    /// Approval cards shown at least this often.
    ApprovalsAtLeast(u32),
    /// At least this many notifications created (one per episode and target).
    NoticesAtLeast(usize),
    /// At least this many notifications delivered.
    NoticesDeliveredAtLeast(usize),
    /// Workers paused because of the app at least this often.
    AppPausesAtLeast(usize),
    /// Exactly `count` `worker.dependency_ended` events woke this worker (`usize::MAX`:
    /// `/root`) for a worker it waited on that ended with `outcome` (failed, cancelled),
    /// and, when any did, an attempt carrying that wake reached its conversation.
    Woken {
        lane: usize,
        outcome: Lifecycle,
        count: usize,
    },
    /// At least this many leases taken (`standby on`: the first, then each takeover).
    LeaseTakesAtLeast(usize),
    /// At least this many daemons stepped down (fenced, lease lost, store out of reach).
    StepDownsAtLeast(usize),
    /// At least this many times the browser left a daemon silent since its last answer.
    SilentLeavesAtLeast(usize),
    /// A CLI count (`cli-turns`, `cli-next-turn-steers`, ...) at least this high.
    Cli {
        name: String,
        at_least: usize,
    },
}

/// A scenario file error, with its line number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parses a duration like `90s`, `15m`, `2h`.
fn duration_ms(text: &str) -> Option<u64> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().ok()?;
    match unit {
        "s" => Some(n * 1_000),
        "m" => Some(n * 60_000),
        "h" => Some(n * 3_600_000),
        _ => None,
    }
}

/// `laneN`, or `root` (as `usize::MAX`).
fn lane(text: &str) -> Option<usize> {
    if text == "root" {
        return Some(usize::MAX);
    }
    text.strip_prefix("lane")?.parse().ok()
}

fn on_off(text: &str) -> Option<bool> {
    match text {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

/// Parses a scenario file.
pub fn parse(name: &str, text: &str) -> Result<Scenario, ParseError> {
    let mut knobs = Knobs::calm(1);
    let mut plan = Vec::new();
    let mut expectations = Vec::new();
    let mut title = None;
    // The first `root-awaits` line, refused at the end without `root on`.
    let mut root_awaits_line = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let err = |message: &str| ParseError { line: i + 1, message: format!("{message}: `{line}`") };
        if let Some(comment) = line.strip_prefix('#') {
            title.get_or_insert_with(|| comment.trim().to_string());
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let num = |k: usize| w.get(k).and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| err("expected a number"));
        let flag = |k: usize| w.get(k).and_then(|v| on_off(v)).ok_or_else(|| err("expected on or off"));
        let partition = |ms: u64| {
            if ms < PARTITION_MS_MIN {
                return Err(err("a partition lasts at least 30s (shorter ones are holds)"));
            }
            Ok(ms)
        };
        if let Some(parsed) = failover::parse(&w, &mut knobs) {
            expectations.extend(parsed.map_err(err)?);
            continue;
        }
        match w[0] {
            "seed" => knobs.seed = num(1)?,
            "workers" => knobs.workers = num(1)? as usize,
            "cli-workers" => knobs.cli_workers = num(1)? as usize,
            "claude-workers" => knobs.cli.claude_workers = num(1)? as usize,
            "cli-executor" => knobs.cli.executor = flag(1)?,
            "cli-turns-max" => knobs.cli.turns_max = Some(num(1)?.clamp(1, 1_024) as u32),
            "cli-account" => {
                let kind = w.get(1).and_then(|k| engine::ExecutorKind::parse(k)).filter(|k| k.is_cli());
                let (Some(kind), Some(name)) = (kind, w.get(2)) else {
                    return Err(err("cli-account KIND NAME MAX: a CLI kind (codex, claude), a name and a cap"));
                };
                knobs.cli.accounts.retain(|a| a.kind != kind);
                let turns_max = num(3)?.clamp(1, 4_096) as u32;
                knobs.cli.accounts.push(engine::AccountCap { kind, name: (*name).into(), turns_max });
            }
            "cli-child-crashes" => knobs.cli.child_crash_pct = num(1)?.min(100),
            "cli-merge" => knobs.cli.merge_pct = num(1)?.min(100),
            "cli-foreign" => knobs.cli.foreign_pct = num(1)?.min(100),
            "cli-limits" => knobs.cli.limit_pct = num(1)?.min(100),
            "cli-torn" => knobs.cli.torn_pct = num(1)?.min(100),
            "cli-approvals" => {
                // cli-approvals ask|never [PCT]: the executor's approval mode, and the
                // percent of Codex turns that ask (default 40)
                knobs.cli.approvals_ask = match w.get(1).copied() {
                    Some("ask") => true,
                    Some("never") => false,
                    _ => return Err(err("expected ask or never")),
                };
                knobs.cli.ask_pct = if w.len() > 2 { num(2)?.min(100) } else { 40 };
            }
            "at" if w.get(2) == Some(&"cli") => {
                // at TIME cli limit codex|claude DURATION [no-time] | cli foreign laneN
                //   | cli child-crash laneN [asking]
                let at_ms = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                let worker = || {
                    let lane = w.get(4).and_then(|v| lane(v)).filter(|l| *l != usize::MAX);
                    lane.map(|l| WorkerId(l as u64 + 2)).ok_or_else(|| err("expected laneN"))
                };
                let what = match w.get(3).copied() {
                    Some("limit") => {
                        let kind = w.get(4).and_then(|k| ExecutorKind::parse(k)).filter(|k| k.is_cli());
                        let kind = kind.ok_or_else(|| err("expected codex or claude"))?;
                        let length_ms =
                            w.get(5).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a duration"))?;
                        let names_time = match w.get(6).copied() {
                            None => true,
                            Some("no-time") => false,
                            Some(_) => return Err(err("expected no-time or nothing")),
                        };
                        CliEventKind::Limit { kind, length_ms, names_time }
                    }
                    Some("foreign") => CliEventKind::Foreign { worker: worker()? },
                    Some("child-crash") if w.get(5) == Some(&"asking") => {
                        CliEventKind::CrashWhileAsking { worker: worker()? }
                    }
                    Some("child-crash") => CliEventKind::ChildCrash { worker: worker()? },
                    _ => return Err(err("expected limit, foreign or child-crash")),
                };
                knobs.cli.events.push(CliEvent { at_ms, what });
            }
            "turns" => {
                knobs.agents.turns_min = num(1)? as u32;
                knobs.agents.turns_max = num(2)? as u32;
                if knobs.agents.turns_min == 0 || knobs.agents.turns_min > knobs.agents.turns_max {
                    return Err(err("turns needs 1 <= min <= max"));
                }
            }
            "progress" => knobs.agents.progress_pct = num(1)?.min(100),
            "long-turns" => knobs.agents.long_turn_pct = num(1)?.min(100),
            "delivery-timeouts" => knobs.agents.delivery_timeout_pct = num(1)?.min(100),
            "submit-timeouts" => knobs.agents.submit_timeout_pct = num(1)?.min(100),
            "human" => knobs.agents.human_pct = num(1)?.min(100),
            "blocks" => knobs.agents.blocks = flag(1)?,
            "forget-complete" => knobs.agents.forget_complete = flag(1)?,
            "block-waits" => knobs.agents.block_waits = flag(1)?,
            "steering" => knobs.steering = flag(1)?,
            "concurrency" => knobs.concurrency = num(1)?.max(1) as usize,
            "auto" => knobs.auto = flag(1)?,
            "root" => knobs.root = flag(1)?,
            "away" => {
                // away FROM UNTIL: the operator makes no sweeps in that window
                let from = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                let until = w.get(2).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                knobs.away = Some((from, until));
            }
            "notify" => {
                // notify TARGETS: the daemon posts notifications to that many targets
                let n = w.get(1).and_then(|v| v.parse::<usize>().ok()).filter(|n| (1..=4).contains(n));
                knobs.notify_targets = n.ok_or_else(|| err("expected 1 to 4 targets"))?;
            }
            "receiver-down" => {
                // receiver-down FROM UNTIL: the notification receiver refuses connections
                let from = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                let until = w.get(2).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                knobs.notify_down.push((from, until));
            }
            "deadman" => {
                // deadman notify|recover [DURATION]
                let mode = match w.get(1).copied() {
                    Some("off") => engine::deadman::DeadManMode::Off,
                    Some("notify") => engine::deadman::DeadManMode::Notify,
                    Some("recover") => engine::deadman::DeadManMode::Recover,
                    _ => return Err(err("expected off, notify or recover")),
                };
                let after_ms = match w.get(2) {
                    Some(v) => duration_ms(v).ok_or_else(|| err("expected a duration"))?,
                    None => engine::limits::DEADMAN_AFTER_MS_DEFAULT,
                };
                knobs.dead_man = Some((mode, after_ms));
                // The coordinator recovers its lanes, as the recovery prompt asks.
                knobs.agents.recover_lanes = true;
            }
            "dependencies" => knobs.agents.dependency_pct = num(1)?.min(100),
            "messages" => knobs.agents.message_pct = num(1)?.min(100),
            "lost-conversations" => knobs.agents.lost_pct = num(1)?.min(100),
            "host-ui-changes" => knobs.agents.host_ui_pct = num(1)?.min(100),
            "daemon-crash" => knobs.daemon_crash_pct = num(1)?.min(100),
            "executor-crash" => knobs.executor_crash_pct = num(1)?.min(100),
            "hold" => knobs.hold_pct = num(1)?.min(100),
            "partition" => knobs.partition_pct = num(1)?.min(100),
            "fails" => knobs.agents.fail_pct = num(1)?.min(100),
            "page-stops" => knobs.agents.page_stop_pct = num(1)?.min(100),
            "approvals" => {
                // approvals MIN MAX: a person answers each card after MIN..MAX
                let min = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a duration"))?;
                let max = w.get(2).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a duration"))?;
                if max < min {
                    return Err(err("the longest wait is shorter than the shortest"));
                }
                knobs.agents.approvals = Some((min, max));
            }
            "submit-delay" => {
                knobs.submit_delay_ms =
                    w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a duration"))?
            }
            "on" => {
                // on BOUNDARY K laneN REACTION [ARGS]
                let boundary = w.get(1).and_then(|b| Boundary::parse(b)).ok_or_else(|| err("unknown boundary"))?;
                let at = CrashAt { boundary, occurrence: num(2)? as u32 };
                let lane = w.get(3).and_then(|v| lane(v)).ok_or_else(|| err("expected laneN or root"))?;
                let length = || w.get(5).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a duration"));
                let reaction = match w.get(4).copied() {
                    Some("complete") => Reaction::Call(Call::Complete),
                    Some("fail") => Reaction::Call(Call::Fail),
                    Some("human") => Reaction::Call(Call::Human),
                    Some("pause") => Reaction::Call(Call::Pause { after_turn: w.get(5) == Some(&"after-turn") }),
                    Some("resume") => Reaction::Call(Call::Resume),
                    Some("executor-down") => Reaction::ExecutorDown(length()?),
                    Some("hold") => Reaction::Hold(length()?),
                    Some("partition") => Reaction::Partition(partition(length()?)?),
                    Some("leader-down") => Reaction::LeaderDown(length()?),
                    _ => return Err(err("unknown reaction")),
                };
                knobs.triggers.push(Trigger { at, lane, reaction });
            }
            "safety" => {
                knobs.safety_ms = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a duration"))?
            }
            "crash" => {
                let boundary = w.get(1).and_then(|b| Boundary::parse(b)).ok_or_else(|| err("unknown boundary"))?;
                plan.push(CrashAt { boundary, occurrence: num(2)? as u32 });
            }
            "at" if matches!(w.get(2), Some(&"executor-down" | &"partition")) => {
                let at_ms = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                let length = w.get(3).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a duration"))?;
                if w[2] == "partition" {
                    knobs.partitions.push((at_ms, partition(length)?));
                } else {
                    knobs.outages.push((at_ms, length));
                }
            }
            "at" if w.get(2) == Some(&"lose") => {
                // at TIME lose laneN|root|all closed|error|full
                let at_ms = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                let worker = match w.get(3).copied() {
                    Some("all") => None,
                    other => {
                        let lane = other.and_then(lane).ok_or_else(|| err("expected laneN, root or all"))?;
                        Some(if lane == usize::MAX { WorkerId(1) } else { WorkerId(lane as u64 + 2) })
                    }
                };
                let state = match w.get(4).copied() {
                    Some("closed") => ConversationState::Closed,
                    Some("error") => ConversationState::Error(ErrorKind::Generic),
                    Some("full") => ConversationState::Error(ErrorKind::ConversationFull),
                    _ => return Err(err("expected closed, error or full")),
                };
                knobs.agents.deaths.push(Death { at_ms, worker, state });
            }
            "at" if w.get(2) == Some(&"root-awaits") => {
                // at TIME root-awaits laneN: `/root`'s agent waits for the lane at its
                // first turn from TIME on (worker_await_dependency)
                let at_ms = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                let lane = w.get(3).and_then(|v| lane(v)).ok_or_else(|| err("expected laneN"))?;
                if lane == usize::MAX {
                    return Err(err("root cannot wait for itself"));
                }
                if w.len() > 4 {
                    return Err(err("root-awaits takes no arguments after the lane"));
                }
                knobs.agents.root_waits.push((at_ms, WorkerId(lane as u64 + 2)));
                root_awaits_line.get_or_insert(i + 1);
            }
            "at" if w.get(2) == Some(&"page") => {
                // at TIME page laneN KIND DURATION [no-time]
                let at_ms = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                let lane = w.get(3).and_then(|v| lane(v)).ok_or_else(|| err("expected laneN or root"))?;
                let stop = w.get(4).and_then(|v| PageStop::parse(v)).ok_or_else(|| err("unknown page state"))?;
                let length_ms = w.get(5).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a duration"))?;
                let names_time = match w.get(6).copied() {
                    None => true,
                    Some("no-time") => false,
                    Some(_) => return Err(err("expected no-time or nothing")),
                };
                let worker = if lane == usize::MAX { WorkerId(1) } else { WorkerId(lane as u64 + 2) };
                if lane != usize::MAX && lane >= knobs.workers {
                    return Err(err("the lane is beyond `workers`"));
                }
                knobs.agents.page_events.push(PageEvent { at_ms, worker, stop, length_ms, names_time });
            }
            "at" => {
                let at_ms = w.get(1).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                let lane = w.get(3).and_then(|v| lane(v)).ok_or_else(|| err("expected laneN or root"))?;
                let what = match w.get(2).copied() {
                    Some("pause") => ActionKind::Pause { after_turn: w.get(4) == Some(&"after-turn") },
                    Some("resume") => ActionKind::Resume,
                    Some("continue-now") => ActionKind::ContinueNow,
                    Some("attach") if lane == usize::MAX => return Err(err("attach takes a lane, not root")),
                    Some("attach") if w.len() > 4 => return Err(err("attach takes no arguments after the lane")),
                    Some("attach") => ActionKind::Attach,
                    Some("stop") if lane == usize::MAX => {
                        return Err(err("stop takes a lane, not root (a run is stopped as a whole)"));
                    }
                    Some("stop") if w.len() > 4 => return Err(err("stop takes no arguments after the lane")),
                    Some("stop") => ActionKind::Stop,
                    Some("steer") => {
                        let outcome = w.get(4).ok_or_else(|| err("expected an outcome"))?.to_string();
                        ActionKind::Steer { outcome, message: w[5..].join(" ") }
                    }
                    _ => return Err(err("unknown action")),
                };
                knobs.script.push(Action { at_ms, lane, what });
            }
            "expect" => expectations.push(match w.get(1).copied() {
                Some("completed") if w.get(2) == Some(&"all") => Expectation::Completed(None),
                Some("completed") => Expectation::Completed(Some(num(2)? as usize)),
                Some("reconciles") => Expectation::ReconcilesAtLeast(num(3)? as usize),
                Some("fresh-continues") => Expectation::FreshContinuesAtLeast(num(3)? as u32),
                Some("retry-offers") => Expectation::RetryOffersAtLeast(num(3)? as u32),
                Some("nothing-while-blocked") => Expectation::NothingWhileBlocked,
                Some("deferrals") => Expectation::DeferralsAtLeast(num(3)? as usize),
                Some("stalled") => Expectation::Stalled(num(2)? as usize),
                Some("failed") => Expectation::FailedAtLeast(num(3)? as usize),
                Some("finished") if w.get(2) == Some(&"all") => Expectation::FinishedAll,
                Some("withdrawn") => Expectation::WithdrawnAtLeast(num(3)? as usize),
                Some("nothing-while-held") => Expectation::NothingWhileHeld,
                Some("reconnects") => Expectation::ReconnectsAtLeast(num(3)? as usize),
                Some("cli-waiting") => Expectation::CliWaiting(num(2)? as usize),
                Some("closes") => Expectation::ClosesAtLeast(num(3)? as usize),
                Some("holds") => Expectation::HoldsAtLeast(num(3)? as usize),
                Some("page-pauses") => Expectation::PagePausesAtLeast(num(3)? as usize),
                Some("approvals") => Expectation::ApprovalsAtLeast(num(3)? as u32),
                Some("app-pauses") => Expectation::AppPausesAtLeast(num(3)? as usize),
                Some("deadman-fired") => Expectation::DeadManFired(num(3)? as usize),
                Some("deadman-recoveries") => Expectation::DeadManRecoveries(num(3)? as usize),
                Some("notices") => Expectation::NoticesAtLeast(num(3)? as usize),
                Some("notices-delivered") => Expectation::NoticesDeliveredAtLeast(num(3)? as usize),
                Some("delivered") => {
                    let lane = w.get(2).and_then(|v| lane(v)).ok_or_else(|| err("expected laneN or root"))?;
                    let from_ms = w.get(4).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                    let to_ms = w.get(5).and_then(|v| duration_ms(v)).ok_or_else(|| err("expected a time"))?;
                    let at_least = match w.get(6).copied() {
                        Some("=") => false,
                        Some(">=") => true,
                        _ => return Err(err("expected = or >=")),
                    };
                    Expectation::DeliveredBetween { lane, from_ms, to_ms, count: num(7)? as usize, at_least }
                }
                Some("woken") => {
                    // expect woken laneN|root cancelled|failed = K
                    let lane = w.get(2).and_then(|v| lane(v)).ok_or_else(|| err("expected laneN or root"))?;
                    let outcome = match w.get(3).copied() {
                        Some("cancelled") => Lifecycle::Cancelled,
                        Some("failed") => Lifecycle::Failed,
                        _ => return Err(err("expected cancelled or failed")),
                    };
                    if w.get(4) != Some(&"=") {
                        return Err(err("expected ="));
                    }
                    if w.len() > 6 {
                        return Err(err("expected nothing after the count"));
                    }
                    Expectation::Woken { lane, outcome, count: num(5)? as usize }
                }
                Some(name) if CliCounts::default().named(name).is_some() => {
                    Expectation::Cli { name: name.to_string(), at_least: num(3)? as usize }
                }
                _ => return Err(err("unknown expectation")),
            }),
            _ => return Err(err("unknown directive")),
        }
    }
    let trigger_lanes = knobs.triggers.iter().map(|t| t.lane);
    let awaited_lanes = knobs.agents.root_waits.iter().map(|(_, on)| on.0 as usize - 2);
    let lanes = knobs.workers + knobs.cli_workers + knobs.cli.claude_workers;
    let mut named = knobs.script.iter().map(|a| a.lane).chain(trigger_lanes).chain(awaited_lanes);
    if named.any(|l| l >= lanes && l != usize::MAX) {
        return Err(ParseError { line: 0, message: "an action names a lane beyond `workers`".into() });
    }
    if let Some(line) = root_awaits_line.filter(|_| !knobs.root) {
        let message = "root-awaits needs `root on` (a coordinating agent that can wait)".into();
        return Err(ParseError { line, message });
    }
    failover::check(&knobs).map_err(|message| ParseError { line: 0, message: message.into() })?;
    knobs.agents.root_waits.sort_by_key(|(at_ms, _)| *at_ms);
    Ok(Scenario { title: title.unwrap_or_else(|| name.to_string()), knobs, plan, expectations })
}

/// Checks the expectations; returns the failed ones.
pub fn verify(scenario: &Scenario, outcome: &Outcome) -> Vec<String> {
    let mut failed = Vec::new();
    for e in &scenario.expectations {
        if let Expectation::Woken { lane, outcome: ended, count } = e {
            failed.extend(woken(outcome, *lane, *ended, *count));
            continue;
        }
        let ok = match e {
            Expectation::Completed(None) => outcome.completed == outcome.workers,
            Expectation::Completed(Some(n)) => outcome.completed == *n,
            Expectation::ReconcilesAtLeast(n) => outcome.reconciles >= *n,
            Expectation::FreshContinuesAtLeast(n) => outcome.fresh_continues >= *n,
            Expectation::RetryOffersAtLeast(n) => outcome.retry_offers >= *n,
            Expectation::NothingWhileBlocked => outcome.scheduled_while_blocked == 0,
            Expectation::DeferralsAtLeast(n) => outcome.deferrals >= *n,
            Expectation::Stalled(n) => outcome.stalled == *n,
            Expectation::FailedAtLeast(n) => outcome.failed >= *n,
            Expectation::FinishedAll => outcome.completed + outcome.failed + outcome.cancelled == outcome.workers,
            Expectation::WithdrawnAtLeast(n) => outcome.withdrawn >= *n,
            Expectation::NothingWhileHeld => outcome.submitted_while_held.is_empty(),
            Expectation::ReconnectsAtLeast(n) => outcome.reconnects >= *n,
            Expectation::CliWaiting(n) => outcome.cli_waiting == *n,
            Expectation::ClosesAtLeast(n) => outcome.closes >= *n,
            Expectation::HoldsAtLeast(n) => outcome.holds >= *n,
            Expectation::PagePausesAtLeast(n) => outcome.page_pauses >= *n,
            Expectation::ApprovalsAtLeast(n) => outcome.approvals >= *n,
            Expectation::AppPausesAtLeast(n) => outcome.app_pauses >= *n,
            Expectation::DeadManFired(n) => outcome.dead_man_fired == *n,
            Expectation::DeadManRecoveries(n) => outcome.dead_man_recoveries == *n,
            Expectation::NoticesAtLeast(n) => outcome.notices >= *n,
            Expectation::NoticesDeliveredAtLeast(n) => outcome.notices_delivered >= *n,
            Expectation::DeliveredBetween { lane, from_ms, to_ms, count, at_least } => {
                // Lanes are spawned in order right after the root (wrk-1), CLI lanes last.
                let worker = if *lane == usize::MAX { WorkerId(1) } else { WorkerId(*lane as u64 + 2) };
                let n = outcome
                    .delivered
                    .iter()
                    .filter(|d| d.worker == worker && (*from_ms..*to_ms).contains(&d.at_ms))
                    .count();
                if *at_least { n >= *count } else { n == *count }
            }
            Expectation::LeaseTakesAtLeast(n) => outcome.lease_takes >= *n,
            Expectation::StepDownsAtLeast(n) => outcome.step_downs.len() >= *n,
            Expectation::SilentLeavesAtLeast(n) => outcome.silent_leaves >= *n,
            Expectation::Cli { name, at_least } => outcome.cli.named(name).is_some_and(|n| n >= *at_least),
            Expectation::Woken { .. } => unreachable!("checked above"),
        };
        if !ok {
            failed.push(format!("expectation {e:?} does not hold"));
        }
    }
    // A scenario proves nothing about a crash or a race that never happened.
    failed.extend(outcome.unreached.iter().map(|what| format!("planned but never reached: {what}")));
    if scenario.expectations.iter().any(|e| matches!(e, Expectation::NothingWhileHeld)) {
        failed.extend(outcome.submitted_while_held.iter().cloned());
    }
    failed
}

/// Why `expect woken` does not hold, if it does not: how often `worker.dependency_ended`
/// woke the worker for a dependency that ended `ended`, and whether that wake reached its
/// conversation.
fn woken(outcome: &Outcome, lane: usize, ended: Lifecycle, count: usize) -> Option<String> {
    let worker = if lane == usize::MAX { WorkerId(1) } else { WorkerId(lane as u64 + 2) };
    let n = outcome.dependency_ended.iter().filter(|(w, o)| *w == worker && *o == ended).count();
    let ended = ended.as_str();
    if n != count {
        return Some(format!(
            "expect woken: {worker} was woken {n} times by a {ended} dependency (worker.dependency_ended), expected {count}"
        ));
    }
    (count > 0 && !outcome.woken_by_dependency_ended.contains(&worker)).then(|| {
        format!("expect woken: {worker} got worker.dependency_ended ({ended}), but no attempt carrying that wake reached its conversation")
    })
}

mod failover;
#[cfg(test)]
mod tests;
