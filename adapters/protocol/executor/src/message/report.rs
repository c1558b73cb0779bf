//! Executor to daemon: `hello` (who the executor is, its bindings and journal), `binding`,
//! the journal lines and `command.result`, with their exact conversions to the engine's
//! types. The observed conversation state inside a binding is in `observation.rs`.

use super::{AccountWire, ExecutorKindWire, ObservationWire, command_id, kinds_of, printed};
use engine::ids::{CommandId, ExecutorId, WorkerId};
use engine::{BindingReport, CommandOutcome, ExecErrorCode, ExecutorInput, JournalEntry, JournalPhase, Observation};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `hello`: the executor introduces itself and republishes its bindings and journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// The executor token (`DIR/executor-token`), separate from the MCP token.
    pub token: String,
    /// The executor's own stable name (1 to 128 printable ASCII characters).
    pub executor_id: String,
    /// The protocol version the executor speaks.
    pub protocol: u32,
    /// What it can do.
    pub capabilities: Capabilities,
    /// How many commands it works on at once (at most one per worker).
    pub concurrency_max: u32,
    /// The managed bindings it holds, with their observed state.
    pub bindings: Vec<BindingWire>,
    /// Its journal of recent commands.
    pub journal: Vec<JournalWire>,
    /// When this executor process started, in ms since the Unix epoch (never less than
    /// its previous start's): a newer start of the same executor id fences an older one,
    /// which the daemon refuses with `SUPERSEDED`. Absent: no fence (the extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
    /// The accounts its CLI workers run under, each with a cap on turns at once that every
    /// executor naming the same account shares (`account.rs`). Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounts: Option<Vec<AccountWire>>,
}

impl Hello {
    /// The engine's `Hello` (the token, protocol and epoch stay with the bridge). An
    /// executor that runs CLI workers has `concurrencyMax` as its host's cap on turns at
    /// once; a browser's is its own queue's (informational to the daemon).
    pub fn into_input(self) -> ExecutorInput {
        let kinds = kinds_of(self.capabilities.kinds.as_deref());
        let turns_max = kinds.iter().any(|k| k.is_cli()).then_some(self.concurrency_max);
        ExecutorInput::Hello {
            executor: ExecutorId::new(&self.executor_id),
            steering: self.capabilities.steering,
            kinds,
            bindings: self.bindings.into_iter().map(BindingReport::from).collect(),
            journal: self.journal.into_iter().map(JournalEntry::from).collect(),
            turns_max,
            accounts: self.accounts.iter().flatten().map(engine::AccountCap::from).collect(),
        }
    }
}

/// What an executor can do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// It can submit mid-turn steering while a turn is generating.
    pub steering: bool,
    /// It renders the operator UI: the daemon pushes `operator.summary` messages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub operator: bool,
    /// The executor kinds whose workers it runs (`["codex"]` for the CLI executor);
    /// absent means `["chatgpt"]`, what the browser extension runs. Only workers of these
    /// kinds get commands through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<ExecutorKindWire>>,
    /// It wants each of its `heartbeat`s answered with one (the browser extension: a
    /// browser's WebSocket cannot ping, so a daemon stopped without closing the socket
    /// is known only by the echoes stopping). Absent: no echo (older executors, which
    /// would not know the message).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub heartbeat_echo: bool,
}

/// A binding: the worker's managed tab and its conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingWire {
    /// The worker the managed tab belongs to.
    #[serde(with = "printed")]
    pub worker_id: WorkerId,
    /// The conversation URL.
    pub conversation_url: String,
    /// Still open (`false`: closed).
    pub open: bool,
    /// The current observed state, when the tab is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<ObservationWire>,
}

impl From<BindingWire> for BindingReport {
    fn from(b: BindingWire) -> BindingReport {
        BindingReport {
            worker: b.worker_id,
            conversation: Arc::from(b.conversation_url),
            open: b.open,
            observation: b.observation.map(Observation::from),
        }
    }
}

impl From<&BindingReport> for BindingWire {
    fn from(b: &BindingReport) -> BindingWire {
        BindingWire {
            worker_id: b.worker,
            conversation_url: b.conversation.to_string(),
            open: b.open,
            observation: b.observation.as_ref().map(ObservationWire::from),
        }
    }
}

/// One journal line republished in `hello`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalWire {
    /// The command.
    #[serde(with = "command_id")]
    pub command_id: CommandId,
    /// How far the executor got.
    pub phase: PhaseWire,
    /// The binding's state sequence at submission (0 before).
    #[serde(default)]
    pub state_seq: u64,
    /// The URL a `conversation.create` produced, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_url: Option<String>,
}

impl From<JournalWire> for JournalEntry {
    fn from(j: JournalWire) -> JournalEntry {
        JournalEntry {
            command: j.command_id,
            phase: j.phase.into(),
            state_seq: j.state_seq,
            conversation: j.conversation_url.map(Arc::from),
        }
    }
}

impl From<&JournalEntry> for JournalWire {
    fn from(j: &JournalEntry) -> JournalWire {
        JournalWire {
            command_id: j.command,
            phase: j.phase.into(),
            state_seq: j.state_seq,
            conversation_url: j.conversation.as_ref().map(|c| c.to_string()),
        }
    }
}

/// Journal phases on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseWire {
    /// Received and queued; nothing typed yet.
    Received,
    /// Typing or clicking began; delivery unknown without proof.
    SubmissionStarted,
    /// The page accepted the prompt.
    Submitted,
    /// The command finished and its result was stored.
    Completed,
}

impl From<PhaseWire> for JournalPhase {
    fn from(p: PhaseWire) -> JournalPhase {
        match p {
            PhaseWire::Received => JournalPhase::Received,
            PhaseWire::SubmissionStarted => JournalPhase::SubmissionStarted,
            PhaseWire::Submitted => JournalPhase::Submitted,
            PhaseWire::Completed => JournalPhase::Completed,
        }
    }
}

impl From<JournalPhase> for PhaseWire {
    fn from(p: JournalPhase) -> PhaseWire {
        match p {
            JournalPhase::Received => PhaseWire::Received,
            JournalPhase::SubmissionStarted => PhaseWire::SubmissionStarted,
            JournalPhase::Submitted => PhaseWire::Submitted,
            JournalPhase::Completed => PhaseWire::Completed,
        }
    }
}

/// `command.result`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultWire {
    /// Which command.
    #[serde(with = "command_id")]
    pub command_id: CommandId,
    /// What happened.
    pub outcome: OutcomeWire,
}

/// A command's outcome, tagged by `status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum OutcomeWire {
    /// Queued; nothing submitted yet.
    #[serde(rename = "accepted")]
    Accepted {},
    /// Submitted and accepted by the page; a send is complete here.
    #[serde(rename = "submitted", rename_all = "camelCase")]
    Submitted {
        /// The binding's state sequence at submission.
        state_seq: u64,
        /// For `conversation.create`: the new conversation's URL, once settled.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conversation_url: Option<String>,
    },
    /// Failed with a stable code (`AMBIGUOUS_SUBMISSION`, `HOST_UI_CHANGED`, ...).
    #[serde(rename = "failed")]
    Failed {
        /// The stable code; unknown codes are kept and treated as ambiguous.
        code: String,
        /// Free-form detail for people.
        detail: String,
    },
}

impl From<OutcomeWire> for CommandOutcome {
    fn from(o: OutcomeWire) -> CommandOutcome {
        match o {
            OutcomeWire::Accepted {} => CommandOutcome::Accepted,
            OutcomeWire::Submitted { state_seq, conversation_url } => {
                CommandOutcome::Submitted { state_seq, conversation: conversation_url.map(Arc::from) }
            }
            OutcomeWire::Failed { code, detail } => {
                CommandOutcome::Failed { code: ExecErrorCode::parse(&code), detail }
            }
        }
    }
}

impl From<&CommandOutcome> for OutcomeWire {
    fn from(o: &CommandOutcome) -> OutcomeWire {
        match o {
            CommandOutcome::Accepted => OutcomeWire::Accepted {},
            CommandOutcome::Submitted { state_seq, conversation } => OutcomeWire::Submitted {
                state_seq: *state_seq,
                conversation_url: conversation.as_ref().map(|c| c.to_string()),
            },
            CommandOutcome::Failed { code, detail } => {
                OutcomeWire::Failed { code: code.as_str().to_string(), detail: detail.clone() }
            }
        }
    }
}
