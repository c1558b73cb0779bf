//! The stall guard (spec 000 §16): execution time and attempts without durable progress,
//! the warning and the pause they lead to, and the progress signals that reset them.
//! Only a running turn's time counts, and not while something holds the worker nor while
//! no executor carries it (its executor offline, the daemon restarting): waiting for an
//! executor is never a stall.

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::model::*;
use crate::policy::{ContinuationPolicy, Mode};
use crate::time::Timestamp;

impl Engine {
    /// Start of the running turn's part of the current no-progress window, if a turn runs,
    /// nothing holds the worker and its executor carries it (the stall clock stands still
    /// otherwise, and starts again from the executor's `hello`).
    fn running_segment_start(&self, w: &Worker) -> Option<Timestamp> {
        if self.held(w) {
            return None;
        }
        let carried_since = self.carried_since(w)?;
        let a = w.turn.and_then(|id| self.state.attempts.get(&id))?;
        if !matches!(a.state, AttemptState::Submitted | AttemptState::Generating) {
            return None;
        }
        Some(a.submitted_at?.max(w.progress.baseline_at).max(carried_since))
    }

    /// Execution time without durable progress, as of now.
    pub(crate) fn quiet_ms(&self, w: &Worker) -> u64 {
        w.progress.quiet_ms + self.running_segment_start(w).map_or(0, |start| self.now.ms_since(start))
    }

    /// Adds the running turn's segment to the quiet time when that turn stops running.
    pub(crate) fn end_running_segment(&mut self, id: WorkerId) {
        let Some(w) = self.state.workers.get(&id) else { return };
        let Some(start) = self.running_segment_start(w) else { return };
        let elapsed = self.now.ms_since(start);
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.progress.quiet_ms += elapsed;
        w.progress.baseline_at = w.progress.baseline_at.max(self.now);
    }

    /// When the time-based stall guard next fires: only while a turn runs, since only
    /// execution time counts.
    pub(super) fn stall_at(&self, w: &Worker, policy: &ContinuationPolicy) -> Option<Timestamp> {
        if policy.mode != Mode::Auto || !self.runnable(w) {
            return None;
        }
        let start = self.running_segment_start(w)?;
        let warn = match w.progress.stall {
            StallState::Clear => policy.stall_warning_after_no_progress_ms,
            _ => None,
        };
        let pause = policy.stall_pause_after_no_progress_ms;
        let threshold = [warn, pause].into_iter().flatten().min()?;
        Some(start.plus_ms(threshold.saturating_sub(w.progress.quiet_ms)))
    }

    /// Step 7 / time threshold: pause for stall, keeping the pending intent held.
    pub(crate) fn pause_for_stall(&mut self, id: WorkerId) {
        let now = self.now;
        let w = &self.state.workers[&id];
        if w.progress.stall == StallState::Paused && w.pause.as_ref().is_some_and(|p| p.reason == PauseReason::Stall) {
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.progress.stall = StallState::Paused;
        w.pause = Some(Pause {
            reason: PauseReason::Stall,
            at: now,
            detail: Some(
                "No durable progress: continue anyway, pause, open the conversation or stop the worker.".into(),
            ),
        });
        let (run, attempts) = (w.run, w.progress.attempts_without);
        let quiet_ms = self.quiet_ms(&self.state.workers[&id]);
        self.emit(run, Some(id), None, EventKind::ContinuationPausedForStall { attempts, quiet_ms });
        self.emit(run, Some(id), None, EventKind::WorkerPaused { reason: PauseReason::Stall, after_turn: false });
        self.block_idle_turn(id);
    }

    /// Warns once per no-progress period when a threshold is crossed.
    pub(super) fn warn_stall(&mut self, id: WorkerId) {
        if self.state.workers[&id].progress.stall != StallState::Clear {
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.progress.stall = StallState::Warned;
        let (run, attempts) = (w.run, w.progress.attempts_without);
        let quiet_ms = self.quiet_ms(&self.state.workers[&id]);
        self.emit(run, Some(id), None, EventKind::ContinuationWarning { attempts, quiet_ms });
    }

    /// Before an automatic dispatch: warn if the attempt threshold is crossed.
    pub(super) fn warn_if_stalling(&mut self, id: WorkerId) {
        let w = self.state.workers.get(&id).expect("worker exists");
        let (policy, _) = self.effective_policy(w);
        let scheduler = w.intent.as_ref().is_some_and(|i| i.origin == Origin::Scheduler);
        if scheduler
            && policy.stall_warning_after_no_progress_attempts.is_some_and(|n| w.progress.attempts_without >= n)
        {
            self.warn_stall(id);
        }
    }

    /// A durable progress signal (spec 000 §16.1): resets the no-progress counters.
    pub(crate) fn record_progress(&mut self, id: WorkerId, cursor: Option<Cursor>) {
        let now = self.now;
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.progress.last_at = Some(now);
        if cursor.is_some() {
            w.progress.last_cursor = cursor;
        }
        w.progress.baseline_at = now;
        w.progress.quiet_ms = 0;
        w.progress.attempts_without = 0;
        w.progress.since_submission = true;
        if w.progress.stall == StallState::Warned {
            w.progress.stall = StallState::Clear;
        }
        w.last_steering_digest = None;
    }

    /// "Continue anyway": acknowledges a stall pause, keeps history, resets the counters.
    pub(crate) fn acknowledge_stall(&mut self, id: WorkerId) -> bool {
        let now = self.now;
        let stalled = self.state.workers[&id].pause.as_ref().is_some_and(|p| p.reason == PauseReason::Stall);
        if !stalled {
            return false;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.pause = None;
        w.progress.stall = StallState::Clear;
        w.progress.attempts_without = 0;
        w.progress.baseline_at = now;
        w.progress.quiet_ms = 0;
        let run = w.run;
        self.emit(run, Some(id), None, EventKind::ContinuationStallAcknowledged);
        true
    }
}
