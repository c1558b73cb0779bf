//! `steer.landed`: where a submitted steer went in a CLI session. Claude Code takes a
//! mid-turn line into the running turn at a tool boundary (merged), or keeps it queued and
//! runs it as the next turn once the running one ends; the executor says which, and the
//! engine books a next-turn steer as that turn (docs/protocol/executor.md, "Command-line
//! executors").

use engine::ids::{CommandId, ExecutorId, WorkerId};
use engine::{ExecutorInput, SteerLanding};
use serde::{Deserialize, Serialize};

/// `steer.landed`: the executor reports where a steer it reported `submitted` landed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SteerLandedWire {
    /// Whose conversation.
    #[serde(with = "super::printed")]
    pub worker_id: WorkerId,
    /// The steer's command (`conversation.steer`, already `submitted`).
    #[serde(with = "super::command_id")]
    pub command_id: CommandId,
    /// `merged` or `next_turn`.
    pub landed: LandedWire,
    /// For `next_turn`: the `seq` of the `conversation.state` that ends the turn the steer
    /// missed (sent right after this message); for `merged`: the binding's sequence when
    /// the executor saw it merged.
    pub seq: u64,
}

impl SteerLandedWire {
    /// The engine input for `executor`.
    pub fn into_input(self, executor: &ExecutorId) -> ExecutorInput {
        ExecutorInput::SteerLanded {
            executor: executor.clone(),
            worker: self.worker_id,
            command: self.command_id,
            landed: self.landed.into(),
            seq: self.seq,
        }
    }
}

/// Where the steer landed, on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LandedWire {
    /// Taken into the running turn: it stays a steer.
    #[serde(rename = "merged")]
    Merged,
    /// Runs as the next turn once the running one ends: booked as a send.
    #[serde(rename = "next_turn")]
    NextTurn,
}

impl From<LandedWire> for SteerLanding {
    fn from(l: LandedWire) -> SteerLanding {
        match l {
            LandedWire::Merged => SteerLanding::Merged,
            LandedWire::NextTurn => SteerLanding::NextTurn,
        }
    }
}

impl From<SteerLanding> for LandedWire {
    fn from(l: SteerLanding) -> LandedWire {
        match l {
            SteerLanding::Merged => LandedWire::Merged,
            SteerLanding::NextTurn => LandedWire::NextTurn,
        }
    }
}
