//! Timers: each worker's next deadline (a deferred continuation, its keepalive, its stall
//! thresholds, an overdue command, an inspection, a wait on a finished worker, for a run's
//! root the run's dead-man check, and its liveness deadlines), filed in the index's heap,
//! recomputed for every worker an input
//! stale when it finishes, and handled by the tick.

use super::Decision;
use crate::dense::settle;
use crate::engine::Engine;
use crate::ids::*;
use crate::model::*;
use crate::policy::{ContinuationPolicy, DeadManMode, Mode};
use crate::time::Timestamp;
use crate::wake::WakeReason;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

impl Engine {
    /// Recomputes, when an input finishes, the timer of every worker whose deadline may
    /// have moved: those the scheduler evaluated, those whose row changed, those whose
    /// connection state changed (and every worker bound to an executor that connected or
    /// went away), the roots of runs whose dead-man record changed and of watched runs
    /// with any of those workers.
    pub(crate) fn refresh_stale_timers(&mut self) {
        let mut stale = self.index.take_stale();
        stale.extend_from_slice(self.state.workers.changed());
        let (executors, kinds) = self.conn.drain_stale(&mut stale);
        for executor in executors {
            // Timers depend on which executors are connected (mid-turn steering, overdue
            // commands): those of every worker bound to this one.
            let bound = self
                .state
                .workers
                .values()
                .filter(|w| w.binding.as_ref().is_some_and(|b| b.executor.as_ref() == Some(&executor)));
            stale.extend(bound.map(|w| w.id));
        }
        if !kinds.is_empty() {
            // A kind that gained or lost its last executor moves the absence deadline of
            // every unfinished worker of that kind.
            let of_kind =
                self.state.workers.values().filter(|w| !w.lifecycle.is_terminal() && kinds.contains(&w.spec.executor));
            stale.extend(of_kind.map(|w| w.id));
        }
        // A CLI worker's turn starting or ending takes or frees a slot on its host: the
        // timer of every CLI worker whose next turn may wait for one depends on it.
        if self.slots_may_have_moved(&stale) {
            stale.extend(self.waiting_cli_workers());
        }
        // A run's dead-man check rides on its root's timer.
        for run in self.state.dead_men.changed() {
            stale.extend(self.state.runs.get(run).map(|r| r.root));
        }
        self.add_watched_roots(&mut stale);
        settle(&mut stale);
        for id in stale.drain(..) {
            self.refresh_timer(id);
        }
        self.index.recycle_stale(stale);
        self.index.prune_timers();
    }

    /// Whether a host's slots may have moved in this input: some connected executor has a
    /// cap, and a CLI worker changed.
    fn slots_may_have_moved(&self, changed: &[WorkerId]) -> bool {
        self.conn.connected().any(|e| self.conn.turns_max(e).is_some())
            && changed.iter().any(|id| self.state.workers.get(id).is_some_and(|w| w.spec.executor.is_cli()))
    }

    /// The unfinished CLI workers with a pending continuation, in id order.
    fn waiting_cli_workers(&self) -> Vec<WorkerId> {
        let waiting = self
            .state
            .workers
            .values()
            .filter(|w| w.spec.executor.is_cli() && w.intent.is_some() && !w.lifecycle.is_terminal());
        waiting.map(|w| w.id).collect()
    }

    /// When an input freed a slot on a host (a CLI turn ended or its command was
    /// answered), the continuations that waited for one are evaluated now, in worker id
    /// order, each taking the slot it finds free (the next one then sees it taken).
    pub(crate) fn fill_free_slots(&mut self) {
        let changed: Vec<WorkerId> = self.state.workers.changed().to_vec();
        if !self.slots_may_have_moved(&changed) {
            return;
        }
        // First the commands already dispatched that no executor holds yet (they waited for
        // their host to connect, or for a slot on it), then the continuations.
        for id in self.unsent_cli_commands() {
            self.send_command(id);
        }
        for id in self.waiting_cli_workers() {
            let ready = self.state.workers.get(&id).is_some_and(|w| matches!(self.decide(w), Decision::Dispatch(_)));
            if ready {
                self.evaluate(id);
            }
        }
    }

    /// The in-flight commands of unfinished CLI workers that no executor holds, still
    /// wanted, whose host is connected and has a free slot now, by worker id (a command
    /// no longer wanted is left for the paths that withdraw it).
    fn unsent_cli_commands(&self) -> Vec<AttemptId> {
        let unsent = self.state.workers.values().filter(|w| w.spec.executor.is_cli() && !w.lifecycle.is_terminal());
        unsent
            .filter_map(|w| w.in_flight)
            .filter(|a| self.conn.sent_to(*a).is_none())
            .filter(|a| {
                self.state.attempts.get(a).is_some_and(|at| {
                    at.state == AttemptState::Scheduled
                        && self.in_flight_wanted(at)
                        && self.target_executor(at.worker).is_some_and(|e| !self.host_full(&e, at.worker))
                })
            })
            .collect()
    }

    /// Adds the root of every watched run with a stale worker: the run's dead-man check
    /// rides on its root's timer and depends on every worker of the run. Runs the layer
    /// does not watch add nothing, so their timers stay exactly as before it.
    fn add_watched_roots(&self, stale: &mut Vec<WorkerId>) {
        let n = stale.len();
        for i in 0..n {
            let Some(w) = self.state.workers.get(&stale[i]) else { continue };
            if self.dead_man_policy(w.run).mode != DeadManMode::Off
                && let Some(r) = self.state.runs.get(&w.run)
            {
                stale.push(r.root);
            }
        }
    }

    /// The keepalive deadline of the current submission sequence: uniform in
    /// [min, max] after the last delivery, from the draw taken at that submission.
    pub(crate) fn keepalive_at(&self, w: &Worker, policy: &ContinuationPolicy) -> Option<Timestamp> {
        if !self.keepalive_armed(w, policy) {
            return None;
        }
        self.keepalive_time(w, policy)
    }

    /// When the current submission's keepalive falls due, armed or not.
    pub(crate) fn keepalive_time(&self, w: &Worker, policy: &ContinuationPolicy) -> Option<Timestamp> {
        let base = w.last_delivery_at?;
        let span = policy.active_keepalive_max_ms - policy.active_keepalive_min_ms;
        let jitter = w.keepalive_draw % (span + 1);
        Some(base.plus_ms(policy.active_keepalive_min_ms + jitter))
    }

    /// Keepalives run for active, runnable, auto workers with a live conversation, and
    /// never while an approval card waits for a person (its clock stands still).
    fn keepalive_armed(&self, w: &Worker, policy: &ContinuationPolicy) -> bool {
        policy.mode == Mode::Auto
            && !w.keepalive_fired
            && self.runnable(w)
            && w.binding.as_ref().is_some_and(|b| b.status != BindingStatus::Lost)
            && self.conversation_hold(w) != Some(HoldReason::AwaitingApproval)
    }

    /// Active, in an active run, not waiting and not paused.
    pub(crate) fn runnable(&self, w: &Worker) -> bool {
        w.lifecycle == Lifecycle::Active
            && self.state.runs.get(&w.run).is_some_and(|r| !r.status.is_terminal())
            && w.human.is_none()
            && w.dependency.is_none()
            && w.pause.is_none()
            && !w.pause_after_turn
    }

    /// When an in-flight command handed to a connected executor is overdue.
    fn command_overdue_at(&self, w: &Worker) -> Option<Timestamp> {
        let id = w.in_flight?;
        let executor = self.conn.sent_to(id)?;
        if !self.conn.is_connected(executor) {
            return None;
        }
        let a = self.state.attempts.get(&id)?;
        Some(a.deadline.plus_ms(self.config.command_result_grace_ms))
    }

    /// When the worker's submitted turn has gone unreported long enough that its
    /// conversation should be inspected: only while the turn is open (submitted or
    /// generating) on a binding that is not lost and whose executor is connected.
    pub(crate) fn inspect_at(&self, w: &Worker) -> Option<Timestamp> {
        if self.held(w) {
            return None; // nothing goes to a held worker
        }
        let b = w.binding.as_ref().filter(|b| b.status != BindingStatus::Lost)?;
        if !self.conn.is_connected(b.executor.as_ref()?) {
            return None;
        }
        let a = self.state.attempts.get(&w.turn?)?;
        if !matches!(a.state, AttemptState::Submitted | AttemptState::Generating) {
            return None;
        }
        let since = [a.submitted_at, self.conn.reported_at(w.id)].into_iter().flatten().max()?;
        Some(since.plus_ms(self.config.inspect_after_ms))
    }

    /// Recomputes the worker's next deadline and files it in the timer wheel.
    pub(crate) fn refresh_timer(&mut self, id: WorkerId) {
        let Some(w) = self.state.workers.get(&id) else {
            return;
        };
        let timer = self.compute_timer(w);
        self.index.refresh_keys(w, Some(timer));
    }

    /// The worker's next deadline: the earliest of a deferred continuation, its
    /// keepalive, its stall thresholds, an overdue command, an inspection, a wait on a
    /// finished worker (due at once), for a run's root the run's dead-man check, and its
    /// liveness deadlines (no executor of its kind for too long, a CLI retrying for too long).
    pub(crate) fn compute_timer(&self, w: &Worker) -> Option<Timestamp> {
        let (policy, _) = self.effective_policy(w);
        let intent_at = match self.decide(w) {
            Decision::WaitUntil(at, _) => Some(at),
            _ => None,
        };
        let timers = [
            intent_at,
            self.keepalive_at(w, &policy),
            self.stall_at(w, &policy),
            self.command_overdue_at(w),
            self.inspect_at(w),
            self.dead_man_at(w),
            self.finished_dependency(w).map(|(_, _, ended_at)| ended_at),
            self.executor_absent_at(w),
            self.retry_pause_at(w),
        ];
        timers.into_iter().flatten().min()
    }

    /// Handles every timer due at `now`.
    pub(crate) fn handle_tick(&mut self) {
        let now = self.now;
        self.notify_overdue();
        self.lift_due_holds();
        let due = self.index.take_due(now);
        for id in due {
            self.on_timer(id);
            self.refresh_timer(id);
            debug_assert!(self.index.timer_of(id).is_none_or(|t| t > now), "timer of {id} did not advance past {now}");
        }
    }

    /// One worker's due timers: overdue command, inspection, keepalive, stall thresholds, intent.
    fn on_timer(&mut self, id: WorkerId) {
        // First, so that a root recovered now has its other due timers (a keepalive that
        // fell due while its conversation was lost) handled in this same tick.
        self.check_dead_man(id);
        let now = self.now;
        let Some(w) = self.state.workers.get(&id) else {
            return;
        };
        // A wait on a worker that finished before its waiters were settled with it (a
        // store written before that rule): settled now, as `end_worker` would have.
        if let Some((dependency, outcome, _)) = self.finished_dependency(w) {
            self.dependency_finished(id, dependency, outcome);
        }
        let w = self.state.workers.get(&id).expect("worker exists");
        if self.inspect_at(w).is_some_and(|t| t <= now) {
            self.inspect(id);
        }
        let w = self.state.workers.get(&id).expect("worker exists");
        let (policy, _) = self.effective_policy(w);
        if self.command_overdue_at(w).is_some_and(|t| t <= now) {
            let attempt = w.in_flight.expect("overdue command has an attempt");
            self.command_unanswered(attempt);
        }
        let w = self.state.workers.get(&id).expect("worker exists");
        if self.keepalive_at(w, &policy).is_some_and(|t| t <= now) {
            self.state.workers.get_mut(&id).expect("worker exists").keepalive_fired = true;
            self.wake(id, WakeReason::ActiveKeepalive, Origin::Scheduler, IntentPayload::Continue);
        }
        self.on_liveness_timer(id);
        let w = self.state.workers.get(&id).expect("worker exists");
        if self.stall_at(w, &policy).is_some_and(|t| t <= now) {
            let quiet_ms = self.quiet_ms(w);
            if policy.stall_pause_after_no_progress_ms.is_some_and(|ms| quiet_ms >= ms) {
                self.pause_for_stall(id);
            } else {
                self.warn_stall(id);
            }
        }
        self.evaluate(id);
    }
}

/// The keepalive jitter draw for one submission: a ChaCha stream seeded from the data
/// directory's seed, the worker and the submission sequence, so a restart (or a replay)
/// draws the same value.
pub(crate) fn keepalive_draw(seed: u64, worker: WorkerId, sequence: u32) -> u64 {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&worker.0.to_le_bytes());
    key[16..20].copy_from_slice(&sequence.to_le_bytes());
    ChaCha8Rng::from_seed(key).next_u64()
}
