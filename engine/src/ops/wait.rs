//! Explicit waits: human input ("Needs you") and dependencies (spec 000 §14), and how
//! they end: an answer (carried into the prompt that resumes the worker), the awaited
//! worker finishing in any way (completed: released; failed or stopped: released unmet,
//! the waiter woken with the outcome), an explicit release. A `blocked` end-of-response
//! block becomes the wait it names: a dependency wait when it names a lane of the run,
//! else a human wait.

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::limits::*;
use crate::model::*;
use crate::op::{Reply, shared};
use crate::reject::{Rejection, RejectionCode};
use crate::time::Timestamp;
use crate::validate;
use crate::wake::WakeReason;
use std::sync::Arc;

impl Engine {
    pub(crate) fn worker_await_human(
        &mut self,
        id: WorkerId,
        reason: &str,
        question: &str,
        choices: Vec<String>,
    ) -> Result<Reply, Rejection> {
        self.active_worker(id)?;
        validate::text("reason", reason, SUMMARY_BYTES_MAX)?;
        validate::text("question", question, SUMMARY_BYTES_MAX)?;
        if choices.len() > HUMAN_CHOICES_COUNT_MAX {
            return Err(Rejection::invalid("choices", &format!("at most {HUMAN_CHOICES_COUNT_MAX} choices")));
        }
        for c in &choices {
            validate::name("choices", c)?;
        }
        self.begin_human_wait(id, reason, question, choices, WaitSource::Call);
        self.worker_reply(id)
    }

    /// Records a human wait (from a call or a `blocked` block); a blocker is progress
    /// and an event wake for `/root`.
    pub(crate) fn begin_human_wait(
        &mut self,
        id: WorkerId,
        reason: &str,
        question: &str,
        choices: Vec<String>,
        source: WaitSource,
    ) {
        let now = self.now;
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.human = Some(Arc::new(HumanWait {
            reason: shared(reason),
            question: shared(question),
            choices: choices.iter().map(|c| shared(c)).collect(),
            requested_at: now,
            source,
        }));
        let run = w.run;
        let cursor = self.emit(run, Some(id), None, EventKind::WorkerAwaitingHuman { reason: shared(reason) });
        self.record_progress(id, Some(cursor));
        self.block_idle_turn(id);
        self.wake_root(id, WakeReason::LaneBlocked);
        self.evaluate(id);
    }

    pub(crate) fn worker_resolve_human(&mut self, id: WorkerId, answer: &str) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::text("answer", answer, MESSAGE_BYTES_MAX)?;
        if w.human.is_none() {
            return Err(Rejection::new(
                RejectionCode::NotAwaitingHuman,
                &format!("worker {id} is not waiting for a human"),
            ));
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        let asked = w.human.take().expect("checked above");
        w.human_answer = Some(shared(answer));
        let run = w.run;
        let cursor = self.emit(run, Some(id), None, EventKind::WorkerHumanResolved);
        self.record_progress(id, Some(cursor));
        // The prompt that resumes the worker carries the question, its choices and the
        // answer (the worker need not call worker_get to learn it).
        let choices: Vec<&str> = asked.choices.iter().map(|c| &**c).collect();
        let answered = crate::prompt::answered(&asked.question, &choices, answer);
        self.wake(id, WakeReason::HumanResolved, Origin::Root, IntentPayload::Answer(shared(&answered)));
        self.worker_reply(id)
    }

    pub(crate) fn worker_await_dependency(
        &mut self,
        id: WorkerId,
        condition: DependencyCondition,
        reason: &str,
    ) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::text("reason", reason, SUMMARY_BYTES_MAX)?;
        match &condition {
            DependencyCondition::WorkerCompleted(other) => {
                let dep = self.find_worker(*other)?;
                if *other == id {
                    return Err(Rejection::invalid("dependency.workerId", "a worker cannot wait for itself"));
                }
                if dep.run != w.run {
                    return Err(Rejection::invalid(
                        "dependency.workerId",
                        "the dependency must belong to the same run",
                    ));
                }
                if dep.lifecycle == Lifecycle::Completed {
                    return Err(Rejection::invalid(
                        "dependency.workerId",
                        &format!("{} already completed; no need to wait", dep.spec.name),
                    ));
                }
                if dep.lifecycle.is_terminal() {
                    return Err(Rejection::invalid(
                        "dependency.workerId",
                        &format!("{} is {} and will never complete", dep.spec.name, dep.lifecycle.as_str()),
                    ));
                }
            }
            DependencyCondition::External(text) => validate::text("dependency.description", text, SUMMARY_BYTES_MAX)?,
        }
        self.begin_dependency_wait(id, condition, reason);
        self.worker_reply(id)
    }

    /// Records a dependency wait (from a call or a `blocked` block naming a lane); like a
    /// human wait it is progress and an event wake for `/root`.
    fn begin_dependency_wait(&mut self, id: WorkerId, condition: DependencyCondition, reason: &str) {
        let now = self.now;
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.dependency = Some(Arc::new(DependencyWait { condition, reason: shared(reason), requested_at: now }));
        let run = w.run;
        let cursor = self.emit(run, Some(id), None, EventKind::WorkerAwaitingDependency { reason: shared(reason) });
        self.record_progress(id, Some(cursor));
        self.block_idle_turn(id);
        self.wake_root(id, WakeReason::LaneBlocked);
        self.evaluate(id);
    }

    /// What an end-of-response block that says `status: blocked` waits for. A worker that
    /// already waits (it called `worker_await_human` or `worker_await_dependency`) gets
    /// nothing more: the block restates that wait. A block whose `next` names only a
    /// dependency (an unfinished worker of the run, by its `/root/...` name, its id or its
    /// lane label, and asks no question: no `?`) waits for that worker, never for a
    /// person; any other is a question for a person, asked with its `next` ("Needs you").
    pub(crate) fn blocked_by_block(&mut self, id: WorkerId, summary: &str, next: &str) {
        let w = &self.state.workers[&id];
        if w.human.is_some() || w.dependency.is_some() {
            return;
        }
        let reason = if summary.is_empty() { "The agent reported it is blocked." } else { summary };
        let lane = if next.contains('?') { None } else { self.lane_named(w.run, id, next) };
        match lane {
            Some(lane) => self.begin_dependency_wait(id, DependencyCondition::WorkerCompleted(lane), reason),
            None => self.begin_human_wait(id, reason, next, Vec::new(), WaitSource::Block),
        }
    }

    /// The first unfinished worker of `run` other than `asker` that `text` names: by
    /// hierarchical name (`/root/api`), id (`wrk-3`) or lane label (`Export Lane B`,
    /// whole words, any case).
    fn lane_named(&self, run: RunId, asker: WorkerId, text: &str) -> Option<WorkerId> {
        let candidate = |id: WorkerId| {
            self.state.workers.get(&id).filter(|w| w.run == run && w.id != asker && !w.lifecycle.is_terminal())
        };
        let mut found: Option<(usize, WorkerId)> = None;
        let mut consider = |at: usize, id: WorkerId| {
            if candidate(id).is_some() && found.is_none_or(|(first, _)| at < first) {
                found = Some((at, id));
            }
        };
        let is_name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_');
        for (at, token) in tokens(text, is_name_char) {
            let token = token.trim_end_matches('/');
            let id = match token.parse::<WorkerId>() {
                Ok(id) => Some(id),
                Err(_) if token.starts_with("/root/") => self.index.worker_named(run, token),
                Err(_) => None,
            };
            if let Some(id) = id {
                consider(at, id);
            }
        }
        let lower = text.to_ascii_lowercase();
        for id in self.index.workers_of(run) {
            let label = self.state.workers[&id].spec.lane_label.to_ascii_lowercase();
            if let Some(at) = whole_words_at(&lower, &label) {
                consider(at, id);
            }
        }
        found.map(|(_, id)| id)
    }

    pub(crate) fn worker_release_dependency(&mut self, id: WorkerId, note: &str) -> Result<Reply, Rejection> {
        let w = self.active_worker(id)?;
        validate::optional_text("note", note, SUMMARY_BYTES_MAX)?;
        if w.dependency.is_none() {
            return Err(Rejection::new(
                RejectionCode::NotAwaitingDependency,
                &format!("worker {id} is not waiting for a dependency"),
            ));
        }
        self.release_dependency(id, false, WakeReason::DependencyReleased, IntentPayload::Continue);
        self.worker_reply(id)
    }

    /// Clears a dependency wait; an automatic release (the awaited worker finished) is a
    /// scheduler wake, an explicit one a root action. `reason` is the waiter's wake and
    /// `payload` what its continuation carries.
    pub(crate) fn release_dependency(
        &mut self,
        id: WorkerId,
        automatic: bool,
        reason: WakeReason,
        payload: IntentPayload,
    ) {
        if self.state.workers[&id].dependency.is_none() {
            return;
        }
        let w = self.state.workers.get_mut(&id).expect("worker exists");
        w.dependency = None;
        let run = w.run;
        let cursor = self.emit(run, Some(id), None, EventKind::WorkerDependencyReleased { automatic });
        self.record_progress(id, Some(cursor));
        let origin = if automatic { Origin::Scheduler } else { Origin::Root };
        self.wake(id, reason, origin, payload);
    }

    /// The worker `waiter` waits for has finished (`outcome`): completed, the wait is met
    /// and released; failed or stopped, it never will be, so `worker.dependency_ended`
    /// records how it ended, the wait is released and the waiter woken
    /// (`event:dependency_ended`) to decide what now. Once per end: the wait is gone after.
    pub(crate) fn dependency_finished(&mut self, waiter: WorkerId, dependency: WorkerId, outcome: Lifecycle) {
        debug_assert!(outcome.is_terminal());
        // A waiter that ended in the same input (a stopped run ends every worker) is done.
        if self.state.workers[&waiter].lifecycle.is_terminal() {
            return;
        }
        if outcome == Lifecycle::Completed {
            self.release_dependency(waiter, true, WakeReason::DependencyReleased, IntentPayload::Continue);
            return;
        }
        let run = self.state.workers[&waiter].run;
        self.emit(run, Some(waiter), None, EventKind::WorkerDependencyEnded { dependency, outcome });
        // The continuation says which worker ended, how and why, so the waiter decides what
        // now without asking the orchestrator.
        let note = self.state.workers.get(&dependency).map_or_else(String::new, |d| {
            crate::prompt::dependency_ended_note(&d.spec.name, &d.spec.display_name, outcome, d.outcome.as_deref())
        });
        self.release_dependency(
            waiter,
            true,
            WakeReason::DependencyEnded,
            IntentPayload::DependencyEnded(shared(&note)),
        );
    }

    /// The finished worker an active worker still waits for, if any: never after
    /// `end_worker` (it settles every waiter in the same batch), only in a store written
    /// before that rule. Its timer falls due at once (`timers.rs`), and the tick settles it.
    pub(crate) fn finished_dependency(&self, w: &Worker) -> Option<(WorkerId, Lifecycle, Timestamp)> {
        if w.lifecycle.is_terminal() {
            return None;
        }
        let DependencyCondition::WorkerCompleted(dep) = &w.dependency.as_deref()?.condition else { return None };
        let d = self.state.workers.get(dep).filter(|d| d.lifecycle.is_terminal())?;
        Some((d.id, d.lifecycle, d.ended_at.unwrap_or(d.created_at)))
    }

    /// Clears both waits as part of an explicit transition (follow-up, continue-now override).
    pub(crate) fn clear_waits(&mut self, id: WorkerId) {
        let w = &self.state.workers[&id];
        let (run, had_human, had_dependency) = (w.run, w.human.is_some(), w.dependency.is_some());
        if had_human || had_dependency {
            let w = self.state.workers.get_mut(&id).expect("worker exists");
            w.human = None;
            w.dependency = None;
        }
        if had_human {
            self.emit(run, Some(id), None, EventKind::WorkerHumanResolved);
        }
        if had_dependency {
            self.emit(run, Some(id), None, EventKind::WorkerDependencyReleased { automatic: false });
        }
    }
}

/// The runs of `part` characters in `text`, with their byte offsets.
fn tokens(text: &str, part: impl Fn(char) -> bool) -> impl Iterator<Item = (usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (part(c) && at < text.len(), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                out.push((from, &text[from..at]));
                start = None;
            }
            _ => {}
        }
    }
    out.into_iter()
}

/// Where `needle` first occurs in `haystack` as whole words (not inside a longer word).
fn whole_words_at(haystack: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    haystack
        .match_indices(needle)
        .map(|(at, _)| at)
        .find(|&at| !word(haystack[..at].chars().next_back()) && !word(haystack[at + needle.len()..].chars().next()))
}

#[cfg(test)]
mod tests {
    use super::{tokens, whole_words_at};

    #[test]
    fn tokens_keep_their_byte_offsets() {
        let found: Vec<_> =
            tokens("wait — for /root/api, wrk-3.", |c| c.is_ascii_alphanumeric() || "/-_".contains(c)).collect();
        assert_eq!(found, [(0, "wait"), (9, "for"), (13, "/root/api"), (24, "wrk-3")]);
    }

    #[test]
    fn lane_labels_match_whole_words_only() {
        assert_eq!(whole_words_at("wait for export lane b to land", "export lane b"), Some(9));
        assert_eq!(whole_words_at("export lane bc is done", "export lane b"), None);
        assert_eq!(whole_words_at("reexport lane b", "export lane b"), None);
        assert_eq!(whole_words_at("anything", ""), None);
    }
}
