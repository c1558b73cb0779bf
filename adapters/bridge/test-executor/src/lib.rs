//! A scriptable executor over tokio-tungstenite, for integration tests and benchmarks of
//! the daemon's `/executor` endpoint (the bridge's and the orchestrator's): connect, say
//! hello, read commands, report states and results, or send whatever bytes a test needs.
//!
//! A crate of its own, used only as a dev-dependency, so that no library carries a test
//! client in its public API and the protocol crate links no WebSocket.

use engine::ids::{CommandId, WorkerId};
use executor_protocol::{
    BindingWire, Capabilities, CommandWire, DaemonMessage, ExecutorMessage, Hello, JournalWire, OperatorDataWire,
    OperatorQueryWire, OutcomeWire, PROTOCOL_VERSION, ResultWire, StateName, StateWire, Welcome,
};
use executor_protocol::{Error, MESSAGE_BYTES_MAX, decode_daemon, encode};
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// What went wrong for the test executor.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The WebSocket failed (including an HTTP refusal of the upgrade).
    #[error("websocket: {0}")]
    Ws(#[from] tungstenite::Error),
    /// The daemon closed the connection.
    #[error("the daemon closed the connection")]
    Closed,
    /// Nothing arrived in time.
    #[error("nothing arrived within {0:?}")]
    Timeout(Duration),
    /// The daemon sent something this side cannot decode.
    #[error("undecodable daemon message: {0}")]
    Decode(#[from] Error),
    /// Something other than what the test expected arrived.
    #[error("unexpected message: {0:?}")]
    Unexpected(Box<DaemonMessage>),
}

/// A `hello` with no bindings, no journal, steering on and a concurrency of 4.
pub fn hello(token: &str, executor_id: &str) -> Hello {
    Hello {
        token: token.to_string(),
        executor_id: executor_id.to_string(),
        protocol: PROTOCOL_VERSION,
        capabilities: Capabilities { steering: true, operator: false, kinds: None, heartbeat_echo: false },
        concurrency_max: 4,
        bindings: Vec::<BindingWire>::new(),
        journal: Vec::<JournalWire>::new(),
        epoch: None,
        accounts: None,
    }
}

/// One executor connection.
#[derive(Debug)]
pub struct TestExecutor {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

/// How long [`TestExecutor::recv`] waits by default.
pub const RECV_MS_DEFAULT: u64 = 10_000;

impl TestExecutor {
    /// Connects to `url` (`ws://127.0.0.1:PORT/executor`), sending `origin` when given.
    pub async fn connect(url: &str, origin: Option<&str>) -> Result<TestExecutor, ClientError> {
        let mut request = url.into_client_request()?;
        if let Some(origin) = origin {
            let value =
                origin.parse().map_err(|_| tungstenite::Error::Url(tungstenite::error::UrlError::NoHostName))?;
            request.headers_mut().insert("Origin", value);
        }
        // Small frames back to back: without TCP_NODELAY, Nagle and the peer's delayed ACK
        // add about 40 ms to a round trip.
        let (ws, _) = tokio_tungstenite::connect_async_with_config(request, None, true).await?;
        Ok(TestExecutor { ws })
    }

    /// Connects with a `chrome-extension://` origin, says `hello` and waits for `welcome`.
    pub async fn hello(url: &str, hello: Hello) -> Result<(TestExecutor, Welcome), ClientError> {
        let mut x = TestExecutor::connect(url, Some("chrome-extension://testexecutor")).await?;
        x.send(&ExecutorMessage::Hello(hello)).await?;
        match x.recv().await? {
            DaemonMessage::Welcome(w) => Ok((x, w)),
            other => Err(ClientError::Unexpected(Box::new(other))),
        }
    }

    /// Sends one message.
    pub async fn send(&mut self, message: &ExecutorMessage) -> Result<(), ClientError> {
        self.send_raw(encode(message)).await
    }

    /// Sends one text frame as is.
    pub async fn send_raw(&mut self, text: impl Into<String>) -> Result<(), ClientError> {
        self.ws.send(Message::Text(text.into().into())).await?;
        Ok(())
    }

    /// Sends one binary frame.
    pub async fn send_binary(&mut self, bytes: Vec<u8>) -> Result<(), ClientError> {
        self.ws.send(Message::Binary(bytes.into())).await?;
        Ok(())
    }

    /// Reports a state.
    pub async fn state(&mut self, worker: WorkerId, state: StateName, seq: u64) -> Result<(), ClientError> {
        let message = StateWire {
            worker_id: worker,
            state,
            error_kind: None,
            seq,
            block: None,
            until_ms: None,
            detail: None,
            approval: None,
            retry: None,
        };
        self.send(&ExecutorMessage::State(message)).await
    }

    /// Reports a command's result.
    pub async fn result(&mut self, command: CommandId, outcome: OutcomeWire) -> Result<(), ClientError> {
        self.send(&ExecutorMessage::Result(ResultWire { command_id: command, outcome })).await
    }

    /// Reports `command` submitted at state sequence `seq - 1`, then its turn generating
    /// at `seq` (what the page shows once it accepted the prompt).
    pub async fn deliver(&mut self, command: &CommandWire, seq: u64) -> Result<(), ClientError> {
        let submitted = OutcomeWire::Submitted { state_seq: seq.saturating_sub(1), conversation_url: None };
        self.result(command.command_id, submitted).await?;
        self.state(command.worker_id, StateName::Generating, seq).await
    }

    /// Sends an `operator.query` and returns its `operator.data`. The daemon answers it
    /// after the engine took in everything this connection sent before, so it also
    /// orders a test's next step after the reports it just sent.
    pub async fn query(&mut self, query: OperatorQueryWire) -> Result<OperatorDataWire, ClientError> {
        self.send(&ExecutorMessage::OperatorQuery(query)).await?;
        match self.recv().await? {
            DaemonMessage::OperatorData(data) => Ok(data),
            other => Err(ClientError::Unexpected(Box::new(other))),
        }
    }

    /// Waits `wait`, failing with [`ClientError::Unexpected`] if anything arrives meanwhile
    /// (and with [`ClientError::Closed`] if the daemon closes the connection).
    pub async fn silent_for(&mut self, wait: Duration) -> Result<(), ClientError> {
        match self.recv_within(wait).await {
            Err(ClientError::Timeout(_)) => Ok(()),
            Ok(message) => Err(ClientError::Unexpected(Box::new(message))),
            Err(e) => Err(e),
        }
    }

    /// The next message, waiting up to [`RECV_MS_DEFAULT`].
    pub async fn recv(&mut self) -> Result<DaemonMessage, ClientError> {
        self.recv_within(Duration::from_millis(RECV_MS_DEFAULT)).await
    }

    /// The next message, waiting up to `wait`.
    pub async fn recv_within(&mut self, wait: Duration) -> Result<DaemonMessage, ClientError> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let frame =
                tokio::time::timeout_at(deadline, self.ws.next()).await.map_err(|_| ClientError::Timeout(wait))?;
            match frame {
                None | Some(Ok(Message::Close(_))) => return Err(ClientError::Closed),
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(Message::Text(text))) => return Ok(decode_daemon(text.as_str(), MESSAGE_BYTES_MAX)?),
                Some(Ok(_)) => continue,
            }
        }
    }

    /// The next command, within `wait`.
    pub async fn command_within(&mut self, wait: Duration) -> Result<CommandWire, ClientError> {
        match self.recv_within(wait).await? {
            DaemonMessage::Command(c) => Ok(c),
            other => Err(ClientError::Unexpected(Box::new(other))),
        }
    }

    /// Waits until the daemon closes the connection, returning what it sent before.
    pub async fn until_closed(&mut self, wait: Duration) -> Result<Vec<DaemonMessage>, ClientError> {
        let mut seen = Vec::new();
        loop {
            match self.recv_within(wait).await {
                Ok(m) => seen.push(m),
                Err(ClientError::Closed) => return Ok(seen),
                Err(ClientError::Ws(_)) => return Ok(seen),
                Err(e) => return Err(e),
            }
        }
    }

    /// Closes the connection cleanly.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}
