//! Where a submitted steer landed. A CLI session may take a mid-turn message into the
//! running turn (merged: it stays a steer, as today) or keep it queued and run it as the
//! next turn once that one ends (Claude Code without a tool boundary). A next-turn steer
//! is booked as a send: its attempt is the next turn's (submitted, generating, idle, with
//! its outcome at that turn's end), and nothing else is dispatched for the worker until
//! that turn is seen starting, so at most one continuation is ever on its way.

use crate::engine::Engine;
use crate::event::EventKind;
use crate::ids::*;
use crate::input::SteerLanding;
use crate::model::*;

impl Engine {
    /// The executor reports where the steer of `attempt` landed (`seq`: for the next
    /// turn, the sequence of the state that ends the turn it missed). Only the worker's
    /// current turn is re-booked; a late or repeated report changes nothing.
    pub(crate) fn steer_landed(&mut self, id: WorkerId, attempt: AttemptId, landed: SteerLanding, seq: u64) {
        let w = &self.state.workers[&id];
        let Some(a) = self.state.attempts.get(&attempt) else { return };
        if a.worker != id || a.delivery != Delivery::Steer || w.turn != Some(attempt) {
            return;
        }
        let binding_seq = w.binding.as_ref().map_or(0, |b| b.state_seq);
        // The steer's own turn has not visibly ended: the state that ended the running
        // turn is the one the report names (or one still to come).
        // Once another continuation is on its way the next turn was given away: nothing
        // can be re-booked honestly.
        let rebook = match a.state {
            AttemptState::Submitted | AttemptState::Generating => true,
            AttemptState::Idle => binding_seq <= seq && w.in_flight.is_none(),
            _ => false,
        };
        let run = a.run;
        if landed == SteerLanding::Merged || !rebook {
            if landed == SteerLanding::Merged {
                self.emit(run, Some(id), Some(attempt), EventKind::SteerLanded { landed });
            }
            return;
        }
        let a = self.state.attempts.get_mut(&attempt).expect("attempt exists");
        a.state = AttemptState::Submitted;
        a.generating_at = None;
        a.idle_at = None;
        a.submitted_state_seq = a.submitted_state_seq.max(seq);
        let state_seq = a.submitted_state_seq;
        self.emit(run, Some(id), Some(attempt), EventKind::SteerLanded { landed });
        // A state newer than the missed turn's end already came: it is this turn's.
        self.catch_up_turn(id, state_seq, false);
        self.evaluate(id);
    }

    /// Whether the worker's current turn is a steer the executor reported as the next
    /// turn (or accepted after the turn it was meant for had ended) and no state since
    /// shows that turn starting: it will run on its own, so nothing else goes in.
    pub(crate) fn steer_awaits_its_turn(&self, w: &Worker) -> bool {
        w.turn
            .and_then(|t| self.state.attempts.get(&t))
            .is_some_and(|a| a.delivery == Delivery::Steer && a.state == AttemptState::Submitted)
    }
}
