//! One connection's rules, without IO or clocks: the transport (axum in the daemon,
//! turmoil TCP in the simulator) feeds it text frames with the time and performs the
//! [`Step`] it returns.

use crate::codec::{self, Error};
use crate::message::{
    ActionRequest, DaemonMessage, ExecutorMessage, GrantAction, OperatorDataWire, OperatorResultWire, PROTOCOL_VERSION,
    ProtocolError, ProtocolErrorCode, Query, Welcome, oauth_codes,
};
use engine::ExecutorInput;
use engine::ids::ExecutorId;
use engine::op::Operation;

/// The per-host executor tokens (`orchestrator executor add HOST`): a token good for one
/// executor id only. The daemon's implementation reads its book of hashed tokens; the
/// session only asks.
pub trait HostTokens: Send + Sync {
    /// Whether `token` is the token issued to the executor named `executor_id` (compared
    /// in constant time, or by its hash).
    fn accepts(&self, executor_id: &str, token: &str) -> bool;
}

/// A shared [`HostTokens`], printed without its contents.
#[derive(Clone)]
pub struct HostBookRef(pub std::sync::Arc<dyn HostTokens>);

impl std::fmt::Debug for HostBookRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostBookRef")
    }
}

/// Limits and secrets of a connection.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The shared executor token a `hello` may carry (any executor id).
    pub token: String,
    /// The per-host tokens a `hello` may carry instead (each for its own executor id).
    pub hosts: Option<HostBookRef>,
    /// The largest accepted frame, in bytes.
    pub message_bytes_max: usize,
    /// Sustained messages per second.
    pub messages_per_second_max: u32,
    /// Messages accepted in a burst above the sustained rate.
    pub messages_burst_max: u32,
    /// The heartbeat interval announced in `welcome`.
    pub heartbeat_ms: u64,
}

impl SessionConfig {
    /// Default limits with this token.
    pub fn new(token: impl Into<String>) -> SessionConfig {
        SessionConfig {
            token: token.into(),
            hosts: None,
            message_bytes_max: codec::MESSAGE_BYTES_MAX,
            messages_per_second_max: 1_000,
            messages_burst_max: 2_000,
            heartbeat_ms: 20_000,
        }
    }
}

/// A connection that sends nothing for this long is closed (a silent power loss): the
/// transport's timer, the same in the daemon and in the simulator.
pub const IDLE_MS_MAX: u64 = 60_000;
/// A connection that has not said `hello` this long after it opened is closed (the
/// extension says it at once; the slot is for executors that hold the token).
pub const HELLO_MS_MAX: u64 = 10_000;

/// The longest operator action id accepted, in bytes.
pub const ACTION_ID_BYTES_MAX: usize = 64;

/// The longest operator query id accepted, in bytes.
pub const QUERY_ID_BYTES_MAX: usize = 64;

/// The longest executor id accepted, in bytes.
pub const EXECUTOR_ID_BYTES_MAX: usize = 128;

/// What the transport must do after one frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Engine inputs, in order.
    pub inputs: Vec<ExecutorInput>,
    /// Messages to send back, in order.
    pub replies: Vec<DaemonMessage>,
    /// Close the connection after sending the replies.
    pub close: bool,
    /// The executor this connection now speaks for (set by an accepted `hello`).
    pub registered: Option<ExecutorId>,
    /// Operator actions to perform as engine operations, with their action ids; each
    /// answered with an `operator.result`.
    pub operations: Vec<(String, Operation)>,
    /// OAuth operator actions for the daemon's authorization server, with their action
    /// ids; each answered with an `operator.result`. Only from operator executors.
    pub grant_actions: Vec<(String, GrantAction)>,
    /// Operator queries to answer, with their query ids; each answered with an
    /// `operator.data`.
    pub queries: Vec<(String, Query)>,
    /// The protocol version of a hello refused for it (the registry remembers it for
    /// `orchestrator doctor`).
    pub refused_protocol: Option<u32>,
    /// The accepted hello's `epoch` (the transport refuses it with `SUPERSEDED` when a
    /// later start of the same executor id connected before).
    pub epoch: Option<u64>,
}

/// One connection.
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    /// Set once a `hello` was accepted.
    executor: Option<ExecutorId>,
    /// Closed sessions accept nothing more.
    closed: bool,
    /// The executor renders the operator UI (from its hello).
    operator: bool,
    /// The executor wants its heartbeats answered (`capabilities.heartbeatEcho`).
    heartbeat_echo: bool,
    /// The per-host token its hello carried, when it was one (checked again by
    /// [`Session::still_authorized`], so a removed host is cut off).
    host_token: Option<String>,
    /// Rate limiter: tokens left (in thousandths of a message) and when last refilled.
    bucket_milli: u64,
    bucket_at_ms: Option<u64>,
}

impl Session {
    /// A fresh connection awaiting its `hello`.
    pub fn new(config: SessionConfig) -> Session {
        let bucket_milli = u64::from(config.messages_burst_max) * 1_000;
        Session {
            config,
            executor: None,
            closed: false,
            operator: false,
            heartbeat_echo: false,
            host_token: None,
            bucket_milli,
            bucket_at_ms: None,
        }
    }

    /// The executor, once its `hello` was accepted.
    pub fn executor(&self) -> Option<&ExecutorId> {
        self.executor.as_ref()
    }

    /// Whether the executor asked for `operator.summary` pushes in its hello.
    pub fn wants_summaries(&self) -> bool {
        self.operator
    }

    /// Whether the credential of the accepted hello is still good: always for the shared
    /// token; for a per-host token, while the host's token is in the book.
    pub fn still_authorized(&self) -> bool {
        match (&self.host_token, &self.executor, &self.config.hosts) {
            (Some(token), Some(executor), Some(hosts)) => hosts.0.accepts(&executor.0, token),
            (Some(_), _, _) => false,
            (None, _, _) => true,
        }
    }

    /// Whether the session has asked for the connection to close.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Handles one text frame that arrived at `now_ms`.
    pub fn on_text(&mut self, text: &str, now_ms: u64) -> Step {
        if self.closed {
            return Step { close: true, ..Step::default() };
        }
        if !self.take_token(now_ms) {
            return self.error(ProtocolErrorCode::RateLimited, "too many messages; this one was dropped".into());
        }
        let message = match codec::decode_executor(text, self.config.message_bytes_max) {
            Ok(message) => message,
            Err(e @ Error::Malformed(_)) if self.executor.is_none() => {
                // Before a hello, anything undecodable ends the connection.
                let mut step = self.error(ProtocolErrorCode::HelloRequired, e.to_string());
                step.close = true;
                self.closed = true;
                return step;
            }
            Err(e) => return self.error(e.code(), e.to_string()),
        };
        match (&self.executor, message) {
            (None, ExecutorMessage::Hello(hello)) => {
                let shared = constant_time_eq(hello.token.as_bytes(), self.config.token.as_bytes());
                let host = !shared
                    && valid_executor_id(&hello.executor_id)
                    && self.config.hosts.as_ref().is_some_and(|h| h.0.accepts(&hello.executor_id, &hello.token));
                if !shared && !host {
                    let detail = match &self.config.hosts {
                        Some(_) if valid_executor_id(&hello.executor_id) => format!(
                            "wrong executor token: neither the shared executor token nor a host token for executor id {:?} \
                             (a token from `orchestrator executor add HOST` is good only with --executor-id HOST)",
                            hello.executor_id
                        ),
                        _ => "wrong executor token".to_string(),
                    };
                    return self.error(ProtocolErrorCode::Unauthorized, detail);
                }
                if hello.protocol != PROTOCOL_VERSION {
                    let mut step = self.error(
                        ProtocolErrorCode::UnsupportedVersion,
                        format!("protocol {} requested; this daemon speaks {PROTOCOL_VERSION}", hello.protocol),
                    );
                    step.refused_protocol = Some(hello.protocol);
                    return step;
                }
                if !valid_executor_id(&hello.executor_id) {
                    return self.error(
                        ProtocolErrorCode::InvalidExecutorId,
                        format!("executorId must be 1 to {EXECUTOR_ID_BYTES_MAX} printable ASCII characters"),
                    );
                }
                let kinds = crate::kinds_of(hello.capabilities.kinds.as_deref());
                if let Some(problem) = crate::accounts_problem(hello.accounts.as_deref().unwrap_or_default(), &kinds) {
                    return self.error(ProtocolErrorCode::InvalidAccount, problem);
                }
                let executor = ExecutorId::new(&hello.executor_id);
                let welcome = DaemonMessage::Welcome(Welcome {
                    protocol: PROTOCOL_VERSION,
                    executor_id: hello.executor_id.clone(),
                    heartbeat_ms: self.config.heartbeat_ms,
                    message_bytes_max: self.config.message_bytes_max as u64,
                    messages_per_second_max: self.config.messages_per_second_max,
                });
                self.executor = Some(executor.clone());
                self.operator = hello.capabilities.operator;
                self.heartbeat_echo = hello.capabilities.heartbeat_echo;
                self.host_token = host.then(|| hello.token.clone());
                let epoch = hello.epoch;
                Step {
                    inputs: vec![hello.into_input()],
                    replies: vec![welcome],
                    registered: Some(executor),
                    epoch,
                    ..Step::default()
                }
            }
            (None, other) => self.error(
                ProtocolErrorCode::HelloRequired,
                format!("the first message must be a hello, not {}", other.type_name()),
            ),
            (Some(_), ExecutorMessage::Hello(_)) => {
                self.error(ProtocolErrorCode::DuplicateHello, "this connection already said hello".into())
            }
            (Some(_), ExecutorMessage::OperatorAction(action)) => {
                if action.action_id.len() > ACTION_ID_BYTES_MAX {
                    return self.error(
                        ProtocolErrorCode::Malformed,
                        format!("actionId is longer than {ACTION_ID_BYTES_MAX} bytes"),
                    );
                }
                let refused = |action_id: String, error: caller_protocol::ErrorOut| Step {
                    replies: vec![DaemonMessage::OperatorResult(OperatorResultWire::refused(action_id, error))],
                    ..Step::default()
                };
                match action.to_request() {
                    // Binding a person's tab is the operator UI's alone, like the grants.
                    Ok(ActionRequest::Engine(op))
                        if !self.operator
                            && matches!(*op, Operation::RunStart { .. } | Operation::WorkerAttach { .. }) =>
                    {
                        refused(action.action_id, operator_required())
                    }
                    Ok(ActionRequest::Engine(op)) => {
                        Step { operations: vec![(action.action_id, *op)], ..Step::default() }
                    }
                    Ok(ActionRequest::Grants(_)) if !self.operator => refused(action.action_id, operator_required()),
                    Ok(ActionRequest::Grants(grant)) => {
                        Step { grant_actions: vec![(action.action_id, grant)], ..Step::default() }
                    }
                    Err(error) => refused(action.action_id, error),
                }
            }
            (Some(_), ExecutorMessage::OperatorQuery(query)) => {
                if query.query_id.len() > QUERY_ID_BYTES_MAX {
                    return self.error(
                        ProtocolErrorCode::Malformed,
                        format!("queryId is longer than {QUERY_ID_BYTES_MAX} bytes"),
                    );
                }
                match query.to_query() {
                    Ok(Query::OauthPending) if !self.operator => Step {
                        replies: vec![DaemonMessage::OperatorData(OperatorDataWire::new(
                            query.query_id,
                            Err(operator_required()),
                        ))],
                        ..Step::default()
                    },
                    Ok(q) => Step { queries: vec![(query.query_id, q)], ..Step::default() },
                    Err(error) => Step {
                        replies: vec![DaemonMessage::OperatorData(OperatorDataWire::new(query.query_id, Err(error)))],
                        ..Step::default()
                    },
                }
            }
            (Some(_), ExecutorMessage::Heartbeat {}) if self.heartbeat_echo => {
                Step { replies: vec![DaemonMessage::Heartbeat {}], ..Step::default() }
            }
            (Some(executor), message) => {
                let inputs = message.into_input(executor).into_iter().collect();
                Step { inputs, ..Step::default() }
            }
        }
    }

    /// The connection ended (by either side): the engine input, when a `hello` was
    /// accepted. `still_current` is false when another connection has since taken over
    /// this executor id; its `hello` stands and no `Disconnected` may undo it.
    pub fn on_close(&mut self, still_current: bool) -> Option<ExecutorInput> {
        self.closed = true;
        let executor = self.executor.take()?;
        still_current.then_some(ExecutorInput::Disconnected { executor })
    }

    /// A `protocol.error` reply; closes when the code says so.
    fn error(&mut self, code: ProtocolErrorCode, detail: String) -> Step {
        let close = code.closes();
        if close {
            self.closed = true;
        }
        Step { replies: vec![DaemonMessage::ProtocolError(ProtocolError { code, detail })], close, ..Step::default() }
    }

    /// Token-bucket rate limiting with time as an argument.
    fn take_token(&mut self, now_ms: u64) -> bool {
        let capacity = u64::from(self.config.messages_burst_max) * 1_000;
        if let Some(at) = self.bucket_at_ms {
            let refill = now_ms.saturating_sub(at).saturating_mul(u64::from(self.config.messages_per_second_max));
            self.bucket_milli = self.bucket_milli.saturating_add(refill).min(capacity);
        }
        self.bucket_at_ms = Some(now_ms.max(self.bucket_at_ms.unwrap_or(0)));
        if self.bucket_milli >= 1_000 {
            self.bucket_milli -= 1_000;
            true
        } else {
            false
        }
    }
}

/// The refusal of an OAuth action or query from an executor without the operator UI.
fn operator_required() -> caller_protocol::ErrorOut {
    caller_protocol::ErrorOut::new(
        oauth_codes::OPERATOR_REQUIRED,
        "OAuth approval is for executors whose hello set capabilities.operator",
    )
}

fn valid_executor_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= EXECUTOR_ID_BYTES_MAX && id.bytes().all(|b| b.is_ascii_graphic())
}

/// Compares secrets without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
