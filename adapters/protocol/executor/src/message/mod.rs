//! The messages of protocol version 1 and their exact conversions to and from the
//! engine's executor types. Field names are camelCase; ids travel in their printed form
//! (`wrk-7`, `exe-12`, `cmd-12`); times are milliseconds since the Unix epoch.
//!
//! This file holds the two message enums, one per direction, and the serde helpers the
//! bodies share. The bodies, by direction and concern:
//! - `report.rs`, executor to daemon: `hello`, `binding`, the journal, `command.result`.
//! - `observation.rs`, executor to daemon: what an executor sees of a conversation (its
//!   coarse state, a page error's kind, a CLI approval request), in `conversation.state`
//!   and in the bindings of `hello` and `binding`; and the cleaning of page text.
//! - `command.rs`, daemon to executor: `welcome`, `command`, `protocol.error`.
//! - `operator.rs`: the operator channel's actions and queries with their answers;
//!   `summary.rs` its pushed `operator.summary`; `oauth.rs` its OAuth approval.
//! - `kind.rs`: the executor kinds and a CLI worker's workspace; `landing.rs`: where a
//!   CLI steer landed; `account.rs`: the accounts a CLI executor's workers run under.

mod account;
mod command;
mod kind;
mod landing;
mod oauth;
mod observation;
mod operator;
mod report;
mod summary;

pub use account::*;
pub use command::*;
pub use kind::*;
pub use landing::*;
pub use oauth::*;
pub use observation::*;
pub use operator::*;
pub use report::*;
pub use summary::*;

use engine::ExecutorInput;
use engine::ids::ExecutorId;
use engine::{BindingReport, CommandOutcome};
use serde::{Deserialize, Serialize};

/// The protocol version this crate speaks; every message carries it as `v`.
pub const PROTOCOL_VERSION: u32 = 1;

/// A message from an executor to the daemon.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ExecutorMessage {
    /// The first message of every connection: who the executor is and what it holds.
    #[serde(rename = "hello")]
    Hello(Hello),
    /// A binding was verified (a new conversation's URL settled) or closed.
    #[serde(rename = "binding")]
    Binding(BindingWire),
    /// A conversation's coarse state changed (coalesced by the executor).
    #[serde(rename = "conversation.state")]
    State(StateWire),
    /// The result of a command.
    #[serde(rename = "command.result")]
    Result(ResultWire),
    /// Keeps the connection (and the browser's background worker) alive.
    #[serde(rename = "heartbeat")]
    Heartbeat {},
    /// An operator action from the extension's UI (operator channel).
    #[serde(rename = "operator.action")]
    OperatorAction(OperatorActionWire),
    /// A read-only question from the extension's UI (operator channel).
    #[serde(rename = "operator.query")]
    OperatorQuery(OperatorQueryWire),
    /// Where a submitted steer landed in a CLI session (merged, or the next turn).
    #[serde(rename = "steer.landed")]
    SteerLanded(SteerLandedWire),
}

impl ExecutorMessage {
    /// The wire name (`type`).
    pub fn type_name(&self) -> &'static str {
        match self {
            ExecutorMessage::Hello(_) => "hello",
            ExecutorMessage::Binding(_) => "binding",
            ExecutorMessage::State(_) => "conversation.state",
            ExecutorMessage::Result(_) => "command.result",
            ExecutorMessage::Heartbeat {} => "heartbeat",
            ExecutorMessage::OperatorAction(_) => "operator.action",
            ExecutorMessage::OperatorQuery(_) => "operator.query",
            ExecutorMessage::SteerLanded(_) => "steer.landed",
        }
    }

    /// The engine input this message carries for `executor` (heartbeats and the operator
    /// channel carry none: actions are operations, see [`OperatorActionWire::to_request`],
    /// and queries are reads, see [`OperatorQueryWire::to_query`]).
    /// A `hello` names its own executor; `executor` is ignored for it.
    pub fn into_input(self, executor: &ExecutorId) -> Option<ExecutorInput> {
        match self {
            ExecutorMessage::Hello(hello) => Some(hello.into_input()),
            ExecutorMessage::Binding(b) => {
                Some(ExecutorInput::Binding { executor: executor.clone(), report: BindingReport::from(b) })
            }
            ExecutorMessage::State(s) => Some(ExecutorInput::State {
                executor: executor.clone(),
                worker: s.worker_id,
                observation: s.observation(),
            }),
            ExecutorMessage::Result(r) => Some(ExecutorInput::Result {
                executor: executor.clone(),
                command: r.command_id,
                outcome: CommandOutcome::from(r.outcome),
            }),
            ExecutorMessage::SteerLanded(l) => Some(l.into_input(executor)),
            ExecutorMessage::Heartbeat {} | ExecutorMessage::OperatorAction(_) | ExecutorMessage::OperatorQuery(_) => {
                None
            }
        }
    }
}

/// A message from the daemon to an executor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum DaemonMessage {
    /// The answer to an accepted `hello`.
    #[serde(rename = "welcome")]
    Welcome(Welcome),
    /// Something to do.
    #[serde(rename = "command")]
    Command(CommandWire),
    /// The executor sent something the daemon could not accept.
    #[serde(rename = "protocol.error")]
    ProtocolError(ProtocolError),
    /// The answer to an `operator.action`.
    #[serde(rename = "operator.result")]
    OperatorResult(OperatorResultWire),
    /// Compact run and worker summaries for the operator UI, pushed when they change.
    #[serde(rename = "operator.summary")]
    OperatorSummary(OperatorSummaryWire),
    /// The answer to an `operator.query`.
    #[serde(rename = "operator.data")]
    OperatorData(OperatorDataWire),
    /// The answer to an executor's `heartbeat`, when its `hello` asked for one
    /// (`capabilities.heartbeatEcho`): the daemon is alive and reads its socket.
    #[serde(rename = "heartbeat")]
    Heartbeat {},
}

impl DaemonMessage {
    /// The wire name (`type`).
    pub fn type_name(&self) -> &'static str {
        match self {
            DaemonMessage::Welcome(_) => "welcome",
            DaemonMessage::Command(_) => "command",
            DaemonMessage::ProtocolError(_) => "protocol.error",
            DaemonMessage::OperatorResult(_) => "operator.result",
            DaemonMessage::OperatorSummary(_) => "operator.summary",
            DaemonMessage::OperatorData(_) => "operator.data",
            DaemonMessage::Heartbeat {} => "heartbeat",
        }
    }
}

mod approval_id {
    //! An approval id on decode: 1 to 64 printable ASCII characters, or the message is
    //! malformed (it is echoed back in `approval.answer`, so it must be safe to show).
    use serde::{Deserialize, Deserializer, de::Error};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        let id = String::deserialize(d)?;
        let printable = id.bytes().all(|b| b.is_ascii_graphic());
        if id.is_empty() || id.len() > 64 || !printable {
            return Err(D::Error::custom("approval id: 1 to 64 printable ASCII characters"));
        }
        Ok(id)
    }
}

/// Serde for ids in their printed form (`wrk-7`, `exe-12`).
mod printed {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::fmt::Display;
    use std::str::FromStr;

    pub fn serialize<T: Display, S: Serializer>(id: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    pub fn deserialize<'de, T: FromStr, D: Deserializer<'de>>(d: D) -> Result<T, D::Error>
    where
        T::Err: Display,
    {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Serde for command ids (`cmd-N`, N the attempt number).
mod command_id {
    use engine::ids::{AttemptId, CommandId};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(id: &CommandId, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CommandId, D::Error> {
        let text = String::deserialize(d)?;
        let attempt = text
            .strip_prefix("cmd-")
            .and_then(|n| format!("exe-{n}").parse::<AttemptId>().ok())
            .ok_or_else(|| serde::de::Error::custom("expected a command id of the form cmd-<number>"))?;
        Ok(CommandId { attempt })
    }
}
