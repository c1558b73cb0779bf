//! The real daemon (`serve_with_executors`, in process, on loopback) with the test
//! executor: the guards, the protocol errors, auto resume, pauses, continue now, delivery
//! timeouts, keepalive steering and reconnection. (The operator channel: `operator.rs`.)

use engine::ids::WorkerId;
use engine::op::Operation;
use engine::policy::{Mode, PolicyPatch};
use engine::{Rejection, Reply};
use executor_protocol::{BindingWire, ExecutorMessage, OperatorQueryName, OperatorQueryWire};
use executor_protocol::{DaemonMessage, JournalWire, OutcomeWire, PhaseWire, ProtocolErrorCode, StateName};
use orchestrator::serve::{ExecutorOptions, ServeOptions, serve_with_executors};
use std::time::{Duration, Instant};
use test_executor::{ClientError, TestExecutor, hello};
use testkit::{Daemon, EXECUTOR_TOKEN, MCP_TOKEN, attached_root, binding_at};
use tokio::sync::oneshot;

mod testkit;

const GRACE_MS: u64 = 300;

impl Daemon {
    async fn call(&self, op: Operation) -> Result<Reply, Rejection> {
        self.handle.call(op).await.expect("the engine runs")
    }

    /// A run in auto mode with a short idle grace; its root attached to `url`.
    async fn auto_root(&self, url: &str) -> WorkerId {
        self.root(url, Mode::Auto).await
    }

    /// A run in `mode` with a short idle grace; its root attached to `url`.
    async fn root(&self, url: &str, mode: Mode) -> WorkerId {
        let patch = PolicyPatch { mode: Some(mode), idle_grace_ms: Some(GRACE_MS), ..PolicyPatch::default() };
        attached_root(&self.handle, "bridge test", patch, url).await
    }

    /// Connects executor `chrome-1`, creates a run in `mode` whose root is bound (idle) to
    /// [`CONVERSATION`] and delivers the root's first command (the page's state is then at
    /// seq 2, generating): the executor, the root and that command.
    async fn delivered_root(&self, mode: Mode) -> (TestExecutor, WorkerId, executor_protocol::CommandWire) {
        let (mut x, _) = TestExecutor::hello(&self.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
        let root = self.root(CONVERSATION, mode).await;
        x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
        let first = x.command_within(Duration::from_secs(10)).await.expect("the root's first command");
        x.deliver(&first, 2).await.expect("delivered");
        (x, root, first)
    }
}

const CONVERSATION: &str = "https://chatgpt.com/c/bridge-test";

fn binding(worker: WorkerId, state: StateName, seq: u64) -> BindingWire {
    binding_at(worker, CONVERSATION, state, seq)
}

fn protocol_error(m: &DaemonMessage) -> Option<ProtocolErrorCode> {
    match m {
        DaemonMessage::ProtocolError(e) => Some(e.code),
        _ => None,
    }
}

/// Nothing arrives for `ms` (the connection stays open).
async fn quiet(x: &mut TestExecutor, ms: u64) {
    x.silent_for(Duration::from_millis(ms)).await.expect("silence");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_gets_unauthorized_and_is_closed() {
    let d = Daemon::start().await;
    let mut x = TestExecutor::connect(&d.url, Some("chrome-extension://abc")).await.expect("connect");
    x.send(&ExecutorMessage::Hello(hello("wrong-token-0123456789", "chrome-1"))).await.expect("send");
    let seen = x.until_closed(Duration::from_secs(5)).await.expect("closed");
    assert_eq!(seen.iter().map(protocol_error).collect::<Vec<_>>(), vec![Some(ProtocolErrorCode::Unauthorized)]);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_origin_is_refused_and_extension_origins_are_accepted() {
    let d = Daemon::start().await;
    match TestExecutor::connect(&d.url, Some("https://evil.example")).await {
        Err(ClientError::Ws(tokio_tungstenite::tungstenite::Error::Http(r))) => assert_eq!(r.status().as_u16(), 403),
        other => panic!("expected 403, got {other:?}"),
    }
    for origin in ["chrome-extension://abc", "moz-extension://def"] {
        let mut x = TestExecutor::connect(&d.url, Some(origin)).await.expect("extension origins connect");
        x.send(&ExecutorMessage::Hello(hello(EXECUTOR_TOKEN, "x-1"))).await.expect("send");
        assert!(matches!(x.recv().await.expect("welcome"), DaemonMessage::Welcome(_)));
        x.close().await;
    }
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_frames_get_malformed_and_change_nothing() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    for junk in ["garbage", "{}", "[1,2]", r#"{"v":1,"type":"nope"}"#, r#"{"v":1,"type":"conversation.state"}"#] {
        x.send_raw(junk).await.expect("send");
        let m = x.recv().await.expect("an answer");
        assert_eq!(protocol_error(&m), Some(ProtocolErrorCode::Malformed), "{junk}: {m:?}");
    }
    x.send_binary(vec![0, 159, 146, 150]).await.expect("send");
    assert_eq!(protocol_error(&x.recv().await.expect("an answer")), Some(ProtocolErrorCode::Malformed));
    // Still connected, and the engine still answers.
    x.send(&ExecutorMessage::Heartbeat {}).await.expect("heartbeat");
    quiet(&mut x, 200).await;
    assert!(matches!(d.call(Operation::RunList { include_terminal: true }).await, Ok(Reply::Runs(_))));
    // Garbage before a hello closes.
    let mut y = TestExecutor::connect(&d.url, None).await.expect("connect");
    y.send_raw("garbage").await.expect("send");
    let seen = y.until_closed(Duration::from_secs(5)).await.expect("closed");
    assert_eq!(seen.iter().map(protocol_error).collect::<Vec<_>>(), vec![Some(ProtocolErrorCode::HelloRequired)]);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_frame_gets_too_large_and_is_closed() {
    let d = Daemon::start().await;
    let (mut x, welcome) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let big = format!(r#"{{"v":1,"type":"heartbeat","pad":"{}"}}"#, "x".repeat(welcome.message_bytes_max as usize));
    x.send_raw(big).await.expect("send");
    let seen = x.until_closed(Duration::from_secs(5)).await.expect("closed");
    assert_eq!(seen.iter().map(protocol_error).collect::<Vec<_>>(), vec![Some(ProtocolErrorCode::TooLarge)]);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_then_exactly_one_auto_resume_after_the_grace() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = d.auto_root(CONVERSATION).await;
    x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
    // The freshly attached root's assignment comes first.
    let first = x.command_within(Duration::from_secs(10)).await.expect("the assignment");
    x.result(first.command_id, OutcomeWire::Accepted {}).await.expect("accepted");
    x.deliver(&first, 2).await.expect("delivered");
    quiet(&mut x, GRACE_MS * 2).await;
    let idle_at = Instant::now();
    x.state(root, StateName::Idle, 3).await.expect("idle");
    let c = x.command_within(Duration::from_secs(10)).await.expect("a resume");
    let waited = idle_at.elapsed();
    assert!(waited >= Duration::from_millis(GRACE_MS), "resumed after {waited:?}, before the grace");
    assert_eq!(
        (c.worker_id, c.kind, c.conversation_url.as_str()),
        (root, executor_protocol::KindWire::Send, CONVERSATION)
    );
    assert_ne!(c.command_id, first.command_id);
    assert!(c.prompt.contains("Wake reasons: idle"), "{}", c.prompt);
    // Exactly one: nothing more while it is unanswered, nor once the turn runs.
    quiet(&mut x, GRACE_MS * 3).await;
    x.deliver(&c, 4).await.expect("delivered");
    quiet(&mut x, GRACE_MS * 4).await;
    d.stop().await;
}

/// Gets the root's first command (its assignment), drops the connection, reconnects with `journal` and
/// returns the executor and the original command.
async fn reconnect_with(
    d: &Daemon,
    phase: Option<PhaseWire>,
) -> (TestExecutor, executor_protocol::CommandWire, WorkerId) {
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = d.auto_root(CONVERSATION).await;
    x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
    let c = x.command_within(Duration::from_secs(10)).await.expect("a resume");
    x.close().await;
    let mut again = hello(EXECUTOR_TOKEN, "chrome-1");
    // Once the page accepted the prompt it shows the turn generating; before that it is
    // still idle.
    let delivered = matches!(phase, Some(PhaseWire::Submitted | PhaseWire::Completed));
    again.bindings =
        vec![if delivered { binding(root, StateName::Generating, 2) } else { binding(root, StateName::Idle, 1) }];
    if let Some(phase) = phase {
        let state_seq = if delivered { 1 } else { 0 };
        again.journal = vec![JournalWire { command_id: c.command_id, phase, state_seq, conversation_url: None }];
    }
    let (x, _) = TestExecutor::hello(&d.url, again).await.expect("hello again");
    (x, c, root)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_without_the_command_in_the_journal_resends_it_unchanged() {
    let d = Daemon::start().await;
    let (mut x, c, _) = reconnect_with(&d, None).await;
    let again = x.command_within(Duration::from_secs(10)).await.expect("re-sent");
    assert_eq!(again, c, "same id, same key, same prompt");
    quiet(&mut x, 500).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_with_each_journal_phase_never_resends() {
    for phase in [PhaseWire::Received, PhaseWire::SubmissionStarted, PhaseWire::Submitted, PhaseWire::Completed] {
        let d = Daemon::start().await;
        let (mut x, c, root) = reconnect_with(&d, Some(phase)).await;
        quiet(&mut x, 800).await;
        match phase {
            PhaseWire::Received => {
                // The executor holds it and delivers it now.
                let outcome = OutcomeWire::Submitted { state_seq: 1, conversation_url: None };
                x.result(c.command_id, outcome).await.expect("submitted");
                x.state(root, StateName::Generating, 2).await.expect("generating");
            }
            PhaseWire::SubmissionStarted => {
                // A restart mid-submission: the executor cannot know, so it says so.
                let outcome = OutcomeWire::Failed {
                    code: "AMBIGUOUS_SUBMISSION".into(),
                    detail: "restarted after submission started".into(),
                };
                x.result(c.command_id, outcome).await.expect("ambiguous");
            }
            PhaseWire::Submitted | PhaseWire::Completed => {
                x.state(root, StateName::Generating, 3).await.expect("still generating");
            }
        }
        quiet(&mut x, 800).await;
        if phase == PhaseWire::SubmissionStarted {
            let Ok(Reply::Worker(view)) = d.call(Operation::WorkerGet { worker: root }).await else { panic!("get") };
            assert_eq!(
                view.disposition,
                engine::model::Disposition::Paused,
                "an ambiguous submission pauses the worker"
            );
            let text = format!("{view:?}").to_ascii_lowercase();
            assert!(text.contains("ambiguous"), "the pause says why: {text}");
        }
        d.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_executors_each_get_only_their_own_workers_commands() {
    let d = Daemon::start().await;
    let (mut a, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-a")).await.expect("hello a");
    let (mut b, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "firefox-b")).await.expect("hello b");
    let (url_a, url_b) = ("https://chatgpt.com/c/a", "https://chatgpt.com/c/b");
    let root_a = d.auto_root(url_a).await;
    let root_b = d.auto_root(url_b).await;
    a.send(&ExecutorMessage::Binding(binding_at(root_a, url_a, StateName::Idle, 1))).await.expect("binding a");
    b.send(&ExecutorMessage::Binding(binding_at(root_b, url_b, StateName::Idle, 1))).await.expect("binding b");
    let ca = a.command_within(Duration::from_secs(10)).await.expect("a's resume");
    let cb = b.command_within(Duration::from_secs(10)).await.expect("b's resume");
    assert_eq!((ca.worker_id, ca.conversation_url.as_str()), (root_a, url_a));
    assert_eq!((cb.worker_id, cb.conversation_url.as_str()), (root_b, url_b));
    a.deliver(&ca, 2).await.expect("delivered");
    b.deliver(&cb, 2).await.expect("delivered");
    quiet(&mut a, GRACE_MS * 3).await;
    quiet(&mut b, 100).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_connection_with_the_same_id_replaces_the_first() {
    let d = Daemon::start().await;
    let (mut old, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let (mut new, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello again");
    let seen = old.until_closed(Duration::from_secs(5)).await.expect("closed");
    assert_eq!(seen.iter().map(protocol_error).collect::<Vec<_>>(), vec![Some(ProtocolErrorCode::Replaced)]);
    // The old connection's end did not mark the executor gone: commands reach the new one.
    let root = d.auto_root(CONVERSATION).await;
    new.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
    let c = new.command_within(Duration::from_secs(10)).await.expect("the resume reaches the new connection");
    assert_eq!(c.worker_id, root);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_mode_waits_for_continue_now_and_sends_exactly_one() {
    let d = Daemon::start().await;
    // The freshly attached root gets its assignment once; after that turn, manual mode waits.
    let (mut x, root, first) = d.delivered_root(Mode::Manual).await;
    x.state(root, StateName::Idle, 3).await.expect("idle");
    quiet(&mut x, GRACE_MS * 3).await;
    let op = Operation::WorkerContinueNow { worker: root, override_wait: false, clear_pause: false };
    d.call(op).await.expect("continue now");
    let c = x.command_within(Duration::from_secs(10)).await.expect("one attempt");
    assert_eq!(c.worker_id, root);
    assert_ne!(c.command_id, first.command_id);
    x.deliver(&c, 4).await.expect("delivered");
    x.state(root, StateName::Idle, 5).await.expect("idle");
    quiet(&mut x, GRACE_MS * 3).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn re_attaching_a_worker_closes_its_old_conversation_on_the_executor() {
    const FRESH: &str = "https://chatgpt.com/c/bridge-test-fresh";
    let d = Daemon::start().await;
    let (mut x, root, first) = d.delivered_root(Mode::Manual).await;
    x.state(root, StateName::Idle, 3).await.expect("idle");
    quiet(&mut x, GRACE_MS * 2).await;
    d.call(Operation::WorkerAttach { worker: root, conversation: FRESH.into() }).await.expect("re-attached");
    let close = x.command_within(Duration::from_secs(10)).await.expect("a close");
    assert_eq!(
        (close.kind, close.worker_id, close.conversation_url.as_str(), close.prompt.as_str()),
        (executor_protocol::KindWire::Close, root, CONVERSATION, "")
    );
    assert_eq!(close.idempotency_key, format!("conversation.close:{}", first.attempt_id));
    // Reporting the old binding again (as after a reconnect) is released again, never adopted.
    x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 4))).await.expect("stale binding");
    let again = loop {
        let c = x.command_within(Duration::from_secs(10)).await.expect("released again");
        if c.kind == executor_protocol::KindWire::Close {
            break c;
        }
        assert_eq!(c.conversation_url, FRESH, "only the fresh conversation gets prompts: {c:?}");
    };
    assert_eq!(again.conversation_url, CONVERSATION);
    let Ok(Reply::Worker(view)) = d.call(Operation::WorkerGet { worker: root }).await else { panic!("worker_get") };
    assert_eq!(view.worker.binding.as_ref().map(|b| &*b.conversation), Some(FRESH));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_after_the_current_turn_sends_nothing_when_it_ends() {
    let d = Daemon::start().await;
    let (mut x, root, _) = d.delivered_root(Mode::Auto).await;
    // Answered once the engine took in the delivery: the pause comes after it.
    let attempts = OperatorQueryWire::about("settle", OperatorQueryName::WorkerAttempts, root);
    assert!(x.query(attempts).await.expect("operator.data").ok);
    d.call(Operation::WorkerPause { worker: root, after_current_turn: true }).await.expect("pause after turn");
    x.state(root, StateName::Idle, 3).await.expect("idle");
    quiet(&mut x, GRACE_MS * 4).await;
    let Ok(Reply::Worker(view)) = d.call(Operation::WorkerGet { worker: root }).await else { panic!("get") };
    assert_eq!(view.disposition, engine::model::Disposition::Paused);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_timeout_is_followed_by_a_fresh_continue() {
    let d = Daemon::start().await;
    let (mut x, root, c) = d.delivered_root(Mode::Auto).await;
    let timeout = executor_protocol::StateWire {
        worker_id: root,
        state: StateName::Error,
        error_kind: Some(executor_protocol::ErrorKindWire::DeliveryTimeout),
        seq: 3,
        block: None,
        until_ms: None,
        detail: None,
        approval: None,
        retry: None,
    };
    x.send(&ExecutorMessage::State(timeout)).await.expect("delivery timeout");
    let again = x.command_within(Duration::from_secs(10)).await.expect("a fresh continuation");
    assert_ne!(again.command_id, c.command_id, "a new attempt, never a Retry of the old one");
    assert_eq!(again.prompt, "continue");
    // Exactly one: nothing more while it is out, nor once it runs.
    quiet(&mut x, GRACE_MS * 3).await;
    x.deliver(&again, 4).await.expect("delivered");
    quiet(&mut x, GRACE_MS * 3).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_timeout_reported_as_a_result_is_followed_by_a_fresh_continue() {
    let d = Daemon::start().await;
    let (mut x, root, _) = d.delivered_root(Mode::Auto).await;
    x.state(root, StateName::Idle, 3).await.expect("idle");
    let resume = x.command_within(Duration::from_secs(10)).await.expect("a resume");
    let timeout =
        OutcomeWire::Failed { code: "MESSAGE_DELIVERY_TIMEOUT".into(), detail: "message delivery timed out".into() };
    x.result(resume.command_id, timeout).await.expect("failed");
    let again = x.command_within(Duration::from_secs(10)).await.expect("a fresh continuation");
    assert_ne!(again.command_id, resume.command_id, "a new attempt, never a retry of the old one");
    assert_eq!((again.kind, again.prompt.as_str()), (executor_protocol::KindWire::Send, "continue"));
    quiet(&mut x, GRACE_MS * 3).await;
    d.stop().await;
}

/// The engine's shortest keepalive and anti-spam floor are a minute
/// (`KEEPALIVE_MS_MIN`, `CONTINUATION_SPACING_MS_MIN`) and the daemon's clock is real,
/// so this test takes a minute.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_generating_past_its_keepalive_gets_exactly_one_steer() {
    use engine::limits::{CONTINUATION_SPACING_MS_MIN, KEEPALIVE_MS_MIN};
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let patch = PolicyPatch {
        mode: Some(Mode::Auto),
        active_keepalive_min_ms: Some(KEEPALIVE_MS_MIN),
        active_keepalive_max_ms: Some(KEEPALIVE_MS_MIN),
        min_continuation_spacing_ms: Some(CONTINUATION_SPACING_MS_MIN),
        ..PolicyPatch::default()
    };
    let root = attached_root(&d.handle, "keepalive test", patch, CONVERSATION).await;
    x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
    let first = x.command_within(Duration::from_secs(10)).await.expect("the assignment");
    let delivered_at = Instant::now();
    x.deliver(&first, 2).await.expect("delivered");
    // The turn stays generating: nothing until the keepalive, then one mid-turn checkpoint.
    let keepalive = Duration::from_millis(KEEPALIVE_MS_MIN);
    // Heartbeats as an extension sends them: the daemon closes connections silent for a minute.
    let deadline = delivered_at + keepalive + Duration::from_secs(15);
    let steer = loop {
        x.send(&ExecutorMessage::Heartbeat {}).await.expect("heartbeat");
        match x.recv_within(Duration::from_secs(10)).await {
            Ok(DaemonMessage::Command(c)) => break c,
            Err(ClientError::Timeout(_)) if Instant::now() < deadline => continue,
            other => panic!("expected a keepalive steer, got {other:?}"),
        }
    };
    let waited = delivered_at.elapsed();
    assert!(waited >= keepalive, "steered after {waited:?}, before the keepalive");
    assert_eq!(
        (steer.kind, steer.worker_id, steer.conversation_url.as_str()),
        (executor_protocol::KindWire::Steer, root, CONVERSATION)
    );
    x.deliver(&steer, 3).await.expect("steer submitted while generating");
    quiet(&mut x, GRACE_MS * 10).await;
    let attempts = x.query(OperatorQueryWire::about("q", OperatorQueryName::WorkerAttempts, root)).await.expect("data");
    let Some(executor_protocol::OperatorData::Attempts(attempts)) = attempts.data else {
        panic!("attempts: {attempts:?}")
    };
    let steers: Vec<_> = attempts.attempts.iter().filter(|a| a.delivery == "conversation.steer").collect();
    assert_eq!(steers.len(), 1, "{attempts:?}");
    // A root's keepalive is a mid-turn resume (a lane's would be a checkpoint prompt).
    let why = (steers[0].reason.as_str(), steers[0].wake_reasons.clone(), steers[0].sequence);
    assert_eq!(why, ("auto_resume", vec!["active_keepalive".to_string()], 2));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_token_is_generated_into_the_data_directory_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut printed = Vec::new();
    for _ in 0..2 {
        let options = ServeOptions {
            data_dir: data.clone(),
            listen: "127.0.0.1:0".parse().expect("addr"),
            token: Some(MCP_TOKEN.into()),
            allow_hosts: vec![],
            limits: Default::default(),
            oauth: None,
            history: Default::default(),
            store: Default::default(),
            notify: Vec::new(),
            notify_ca: None,
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, listening) = oneshot::channel();
        let serving = serve_with_executors(
            options,
            ExecutorOptions::default(),
            async move {
                let _ = stopped.await;
            },
            move |l, _| {
                let _ = ready.send((l.executor_url.clone(), l.generated_executor_token.clone()));
            },
        );
        let task = tokio::spawn(async move { serving.await.map_err(|e| e.to_string()) });
        let (url, generated) = listening.await.expect("listening");
        printed.push(generated);
        let token = std::fs::read_to_string(data.join("executor-token")).expect("token file").trim().to_string();
        assert_eq!(token.len(), 64, "32 random bytes in hex");
        assert_ne!(token, MCP_TOKEN);
        let url = url.expect("the bridge is mounted");
        TestExecutor::hello(&url, hello(&token, "chrome-1")).await.expect("the file's token works");
        let _ = stop.send(());
        task.await.expect("task").expect("clean stop");
    }
    assert!(printed[0].is_some() && printed[1].is_none(), "shown only when generated: {printed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_the_daemon_closes_executor_connections_at_once() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let t = Instant::now();
    d.stop().await;
    let seen = x.until_closed(Duration::from_secs(5)).await.expect("closed by the daemon");
    assert!(seen.is_empty(), "{seen:?}");
    assert!(t.elapsed() < Duration::from_secs(5), "closed after {:?}", t.elapsed());
}

/// A connection that upgrades and never says `hello` is closed at the hello deadline
/// (here 300 ms, served from a bridge of its own on the daemon's engine), while one that
/// says it in time stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_a_hello_is_closed_at_the_hello_deadline() {
    let d = Daemon::start().await;
    let mut config = bridge::server::BridgeConfig::new(EXECUTOR_TOKEN);
    config.hello_ms_max = 300;
    let endpoint = bridge::server::Bridge::new(config, bridge::server::Registry::default(), d.handle.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/executor", listener.local_addr().expect("addr"));
    let app = endpoint.router().into_make_service_with_connect_info::<std::net::SocketAddr>();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let mut mute = TestExecutor::connect(&url, Some("chrome-extension://x")).await.expect("upgrade");
    let started = Instant::now();
    mute.until_closed(Duration::from_secs(20)).await.expect("closed without a hello");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(250), "closed at the deadline, not before: {took:?}");
    let (mut x, _) = TestExecutor::hello(&url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello in time");
    x.silent_for(Duration::from_millis(600)).await.expect("a connection that said hello stays");
    server.abort();
    d.stop().await;
}
