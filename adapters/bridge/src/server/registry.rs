//! The live connections by executor id, and [`BridgeSink`], the engine's executor sink
//! that routes each command to the connection of the executor it names.

use engine::ids::ExecutorId;
use engine::{ExecutorCommand, ExecutorKind};
use executor_protocol::encode;
use executor_protocol::{CommandWire, DaemonMessage};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// What goes to a connection's writer.
#[derive(Debug)]
pub(super) enum Outgoing {
    /// A text frame.
    Text(String),
    /// Another connection took over this executor id: say so and close.
    Replaced,
}

/// One live connection in the registry.
#[derive(Debug)]
struct Live {
    /// Distinguishes a connection from the one that replaced it.
    conn: u64,
    /// The connection's writer.
    tx: mpsc::Sender<Outgoing>,
    /// The worker kinds its `hello` said it runs.
    kinds: Vec<ExecutorKind>,
}

/// How many refused hellos the registry remembers (the newest), for `orchestrator doctor`.
pub const REFUSED_HELLOS_MAX: usize = 8;

/// A hello refused because the executor speaks another protocol version: what
/// `orchestrator doctor` reports as "update the extension or the daemon".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedHello {
    /// The protocol version the executor asked for.
    pub protocol: u32,
    /// When, in ms since the Unix epoch.
    pub at_ms: u64,
}

/// The live connections by executor id. Shared by the sink and the connections.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    live: Arc<Mutex<BTreeMap<ExecutorId, Live>>>,
    next_conn: Arc<AtomicU64>,
    /// The newest hellos refused for their protocol version, oldest first.
    refused: Arc<Mutex<VecDeque<RefusedHello>>>,
    /// The highest `hello.epoch` accepted per executor id since the daemon started: a
    /// hello below it is an older process of that id (a replaced host, a second copy).
    epochs: Arc<Mutex<BTreeMap<ExecutorId, u64>>>,
}

impl Registry {
    /// A number for a new connection, distinct from every other.
    pub(super) fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// The executors connected now (after their `hello`).
    pub fn connected(&self) -> Vec<ExecutorId> {
        self.lock().keys().cloned().collect()
    }

    /// The executors connected now, each with the worker kinds its `hello` said it runs
    /// (what `orchestrator doctor` names them by).
    pub fn connected_kinds(&self) -> Vec<(ExecutorId, Vec<ExecutorKind>)> {
        self.lock().iter().map(|(e, l)| (e.clone(), l.kinds.clone())).collect()
    }

    /// Remembers a hello refused for its protocol version (the newest REFUSED_HELLOS_MAX).
    pub(super) fn note_refused(&self, refused: RefusedHello) {
        let mut list = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        if list.len() == REFUSED_HELLOS_MAX {
            list.pop_front();
        }
        list.push_back(refused);
    }

    /// The newest hellos refused for their protocol version, oldest first.
    pub fn refused_hellos(&self) -> Vec<RefusedHello> {
        self.refused.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<ExecutorId, Live>> {
        // A panic while holding this lock cannot leave the map half-updated (every
        // update is one insert or remove), so a poisoned lock is still usable.
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `conn` for `executor`, which runs `kinds` and started at `epoch`; an older
    /// connection is told it was replaced. `Err(newer)`: a later start of this executor id
    /// connected before (its epoch `newer`), so this one is refused and registers nothing.
    pub(super) fn register(
        &self,
        executor: ExecutorId,
        conn: u64,
        kinds: Vec<ExecutorKind>,
        epoch: Option<u64>,
        tx: mpsc::Sender<Outgoing>,
    ) -> Result<(), u64> {
        let mut live = self.lock();
        if let Some(epoch) = epoch {
            let mut epochs = self.epochs.lock().unwrap_or_else(|e| e.into_inner());
            let highest = epochs.entry(executor.clone()).or_insert(epoch);
            if *highest > epoch {
                return Err(*highest);
            }
            *highest = epoch;
        }
        if let Some(old) = live.insert(executor.clone(), Live { conn, tx, kinds }) {
            tracing::info!(%executor, "a new connection replaces the executor's previous one");
            let _ = old.tx.try_send(Outgoing::Replaced);
        }
        Ok(())
    }

    /// Whether `conn` is the connection registered for `executor` now (a replaced
    /// connection's frames are refused, never fed to the engine).
    pub(super) fn holds(&self, executor: &ExecutorId, conn: u64) -> bool {
        self.lock().get(executor).is_some_and(|l| l.conn == conn)
    }

    /// Removes `conn`'s registration; false when another connection holds the id now.
    pub(super) fn unregister(&self, executor: &ExecutorId, conn: u64) -> bool {
        let mut live = self.lock();
        match live.get(executor) {
            Some(l) if l.conn == conn => {
                live.remove(executor);
                true
            }
            _ => false,
        }
    }
}

/// The engine's executor sink in the daemon: each command goes to the connection of the
/// executor it names, or is dropped when that executor is not connected (the engine
/// re-sends it after the executor's next `hello`).
#[derive(Clone, Debug, Default)]
pub struct BridgeSink {
    registry: Registry,
}

impl BridgeSink {
    /// A sink over `registry`.
    pub fn new(registry: Registry) -> BridgeSink {
        BridgeSink { registry }
    }
}

impl runtime::ExecutorSink for BridgeSink {
    fn send(&mut self, command: ExecutorCommand) {
        let text = encode(&DaemonMessage::Command(CommandWire::from(&command)));
        let mut live = self.registry.lock();
        let Some(l) = live.get(&command.executor) else {
            tracing::debug!(command = %command.id, executor = %command.executor, "executor not connected; the engine re-sends after its hello");
            return;
        };
        if let Err(e) = l.tx.try_send(Outgoing::Text(text)) {
            // A full queue means the executor stopped reading: drop the connection, so
            // that its next hello reconciles instead of commands silently going missing.
            tracing::warn!(executor = %command.executor, error = %e, "executor connection stuck; closing it");
            live.remove(&command.executor);
        }
    }
}
