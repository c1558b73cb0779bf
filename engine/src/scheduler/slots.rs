//! The caps on CLI turns at once: a host runs as many of the daemon's turns as its `hello`
//! allows (`concurrencyMax`, `executor-cli --turns-max`), and an account several hosts share
//! (`executor-cli --account codex=team:6`) runs as many as the smallest cap they named, on
//! all of them together. After a restart, a host not heard from yet may run a turn under
//! any account of its kind (nobody here knows which until its `hello`): its turns count
//! against every one, so that no account runs past its cap meanwhile. A turn beyond either waits (`Wait::HostSlot`,
//! `Wait::AccountSlot`), is looked at again every [`limits::HOST_SLOT_RECHECK_MS`], and goes
//! out at the end of the input that freed a slot (`timers::fill_free_slots`). A steer into
//! a running turn needs no slot; a ChatGPT worker has none (a browser queues its own
//! commands).

use super::Wait;
use crate::engine::Engine;
use crate::ids::*;
use crate::limits;
use crate::model::*;
use crate::time::Timestamp;
use std::sync::Arc;

/// How an account's turns stand now, for the decision and for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AccountLoad {
    /// The account's name.
    pub name: Arc<str>,
    /// The other workers' turns running or on their way under it, on any of its hosts,
    /// and those of its kind on hosts not heard from since this process started.
    pub busy: u32,
    /// How many of `busy` run on hosts not heard from since this process started.
    pub unheard: u32,
    /// Its cap: the smallest its hosts named.
    pub max: u32,
}

impl Engine {
    /// A CLI turn's wait for a free slot: on the account it would run under (its hosts
    /// together run as many turns under it as it allows: no other host helps, so this is
    /// what people are told first), then on its host (the executor that would carry it runs
    /// as many turns as its `hello` allows), counting in-flight commands and running turns
    /// of the other workers.
    pub(crate) fn slot_at(&self, w: &Worker) -> Option<(Timestamp, Wait)> {
        if !w.spec.executor.is_cli() {
            return None;
        }
        let executor = self.target_executor(w.id)?;
        let again = self.now.plus_ms(limits::HOST_SLOT_RECHECK_MS);
        if self.account_load(&executor, w).is_some_and(|a| a.busy >= a.max) {
            return Some((again, Wait::AccountSlot));
        }
        let max = self.conn.turns_max(&executor)?;
        (self.turns_on(&executor, w.id) >= max).then_some((again, Wait::HostSlot))
    }

    /// How many workers other than `except` have a command in flight or a turn running on
    /// `executor`.
    pub(crate) fn turns_on(&self, executor: &ExecutorId, except: WorkerId) -> u32 {
        let on = |w: &&Worker| {
            w.id != except
                && (w.in_flight.is_some() || self.turn_running(w))
                && self.carrier_of(w).as_ref() == Some(executor)
        };
        u32::try_from(self.state.workers.values().filter(on).count()).unwrap_or(u32::MAX)
    }

    /// The account `w`'s turn would run under on `executor`, with how many other workers
    /// of its kind have a command in flight or a turn running on any host that named the
    /// same account, or on a host not heard from since this process started; `None` when
    /// that executor named no account for the kind.
    pub(crate) fn account_load(&self, executor: &ExecutorId, w: &Worker) -> Option<AccountLoad> {
        let kind = w.spec.executor;
        let name = self.conn.account_of(executor, kind)?.name.clone();
        let (hosts, max) = self.conn.account_hosts(kind, &name);
        let (mut busy, mut unheard) = (0u32, 0u32);
        for o in self.state.workers.values() {
            if o.id == w.id || o.spec.executor != kind || !(o.in_flight.is_some() || self.turn_running(o)) {
                continue;
            }
            match self.carrier_of(o) {
                Some(e) if hosts.contains(&&e) => busy = busy.saturating_add(1),
                Some(e) if !self.conn.heard(&e) => {
                    busy = busy.saturating_add(1);
                    unheard = unheard.saturating_add(1);
                }
                _ => {}
            }
        }
        Some(AccountLoad { name, busy, unheard, max })
    }

    /// Whether a CLI worker's command may not go to `executor` now: the host, or the
    /// account the worker would run under there, runs as many turns as allowed, counting
    /// the commands already handed over and the running turns (not the ones waiting, like
    /// this one, to be handed over: those go out one by one as slots free).
    pub(crate) fn host_full(&self, executor: &ExecutorId, worker: WorkerId) -> bool {
        let Some(w) = self.state.workers.get(&worker).filter(|w| w.spec.executor.is_cli()) else { return false };
        let handed = |o: &Worker, to: &dyn Fn(&ExecutorId) -> bool| {
            o.in_flight.and_then(|a| self.conn.sent_to(a)).is_some_and(to)
                || (self.turn_running(o) && self.carrier_of(o).is_some_and(|e| to(&e)))
        };
        let count = |keep: &dyn Fn(&Worker) -> bool| {
            u32::try_from(self.state.workers.values().filter(|o| o.id != worker && keep(o)).count()).unwrap_or(u32::MAX)
        };
        if let Some(max) = self.conn.turns_max(executor)
            && count(&|o| handed(o, &|e| e == executor)) >= max
        {
            return true;
        }
        let kind = w.spec.executor;
        let Some(account) = self.conn.account_of(executor, kind) else { return false };
        let (hosts, max) = self.conn.account_hosts(kind, &account.name);
        let under = |e: &ExecutorId| hosts.contains(&e) || !self.conn.heard(e);
        count(&|o| o.spec.executor == kind && handed(o, &under)) >= max
    }

    /// Whether `executor` could take `w`'s next turn now without waiting for a slot.
    pub(crate) fn has_free_slot(&self, executor: &ExecutorId, w: &Worker) -> bool {
        let host_free = self.conn.turns_max(executor).is_none_or(|max| self.turns_on(executor, w.id) < max);
        host_free && self.account_load(executor, w).is_none_or(|a| a.busy < a.max)
    }
}
