//! The real daemon (`serve_with_executors`, in process, on loopback) with the test
//! executor: the guards, the protocol errors, auto resume and reconnection.

use bridge::client::{ClientError, TestExecutor, hello};
use bridge::{BindingWire, ExecutorMessage, ObservationWire};
use bridge::{DaemonMessage, JournalWire, OutcomeWire, PhaseWire, ProtocolErrorCode, StateName};
use engine::ids::WorkerId;
use engine::op::Operation;
use engine::policy::{Mode, PolicyPatch};
use engine::{Rejection, Reply};
use orchestrator::serve::{ExecutorOptions, ServeOptions, serve_with_executors};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

const EXECUTOR_TOKEN: &str = "executor-token-for-tests-0123456789";
const MCP_TOKEN: &str = "mcp-token-for-tests-0123456789";
const GRACE_MS: u64 = 300;

struct Daemon {
    url: String,
    handle: runtime::Handle,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), Box<dyn std::error::Error + Send + Sync>>>,
    _dir: tempfile::TempDir,
}

impl Daemon {
    async fn start() -> Daemon {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = ServeOptions {
            data_dir: dir.path().join("data"),
            listen: "127.0.0.1:0".parse().expect("addr"),
            token: Some(MCP_TOKEN.into()),
            allow_hosts: vec![],
        };
        let executors = ExecutorOptions { token: Some(EXECUTOR_TOKEN.into()), ..ExecutorOptions::default() };
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, listening) = oneshot::channel();
        let serving = serve_with_executors(
            options,
            executors,
            async move {
                let _ = stopped.await;
            },
            move |l, h| {
                let _ = ready.send((l.executor_url.clone().expect("the bridge is mounted"), h.clone()));
            },
        );
        let task = tokio::spawn(async move { serving.await.map_err(|e| e.to_string().into()) });
        let (url, handle) = listening.await.expect("the daemon listens");
        Daemon { url, handle, stop: Some(stop), task, _dir: dir }
    }

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
        let op = Operation::RunCreate {
            task_name: "bridge test".into(),
            root_conversation_name: "root".into(),
            context: "test the executor bridge".into(),
            default_policy: Some(patch),
        };
        let Ok(Reply::Run(view)) = self.call(op).await else { panic!("run_create") };
        let root = view.run.root;
        self.call(Operation::WorkerAttach { worker: root, conversation: url.into() }).await.expect("attach");
        root
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.await.expect("the daemon task").expect("the daemon stops cleanly");
    }
}

const CONVERSATION: &str = "https://chatgpt.com/c/bridge-test";

fn binding(worker: WorkerId, state: StateName, seq: u64) -> BindingWire {
    binding_at(worker, CONVERSATION, state, seq)
}

fn binding_at(worker: WorkerId, url: &str, state: StateName, seq: u64) -> BindingWire {
    BindingWire {
        worker_id: worker,
        conversation_url: url.into(),
        open: true,
        observation: Some(ObservationWire { state, error_kind: None, seq, block: None }),
    }
}

fn protocol_error(m: &DaemonMessage) -> Option<ProtocolErrorCode> {
    match m {
        DaemonMessage::ProtocolError(e) => Some(e.code),
        _ => None,
    }
}

/// Nothing arrives for `ms` (the connection stays open).
async fn quiet(x: &mut TestExecutor, ms: u64) {
    match x.recv_within(Duration::from_millis(ms)).await {
        Err(ClientError::Timeout(_)) => {}
        other => panic!("expected silence, got {other:?}"),
    }
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
    deliver(&mut x, &first, 2).await;
    quiet(&mut x, GRACE_MS * 2).await;
    let idle_at = Instant::now();
    x.state(root, StateName::Idle, 3).await.expect("idle");
    let c = x.command_within(Duration::from_secs(10)).await.expect("a resume");
    let waited = idle_at.elapsed();
    assert!(waited >= Duration::from_millis(GRACE_MS), "resumed after {waited:?}, before the grace");
    assert_eq!((c.worker_id, c.kind, c.conversation_url.as_str()), (root, bridge::KindWire::Send, CONVERSATION));
    assert_ne!(c.command_id, first.command_id);
    assert!(c.prompt.contains("Wake reasons: idle"), "{}", c.prompt);
    // Exactly one: nothing more while it is unanswered, nor once the turn runs.
    quiet(&mut x, GRACE_MS * 3).await;
    deliver(&mut x, &c, 4).await;
    quiet(&mut x, GRACE_MS * 4).await;
    d.stop().await;
}

/// Gets the root's first command (its assignment), drops the connection, reconnects with `journal` and
/// returns the executor and the original command.
async fn reconnect_with(d: &Daemon, phase: Option<PhaseWire>) -> (TestExecutor, bridge::CommandWire, WorkerId) {
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

/// Submits `c` and reports the turn generating at `seq`.
async fn deliver(x: &mut TestExecutor, c: &bridge::CommandWire, seq: u64) {
    x.result(c.command_id, OutcomeWire::Submitted { state_seq: seq - 1, conversation_url: None })
        .await
        .expect("submitted");
    x.state(c.worker_id, StateName::Generating, seq).await.expect("generating");
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
    deliver(&mut a, &ca, 2).await;
    deliver(&mut b, &cb, 2).await;
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
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = d.root(CONVERSATION, Mode::Manual).await;
    x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
    // The freshly attached root gets its assignment once; after that turn, manual mode waits.
    let first = x.command_within(Duration::from_secs(10)).await.expect("the assignment");
    deliver(&mut x, &first, 2).await;
    x.state(root, StateName::Idle, 3).await.expect("idle");
    quiet(&mut x, GRACE_MS * 3).await;
    let op = Operation::WorkerContinueNow { worker: root, override_wait: false, clear_pause: false };
    d.call(op).await.expect("continue now");
    let c = x.command_within(Duration::from_secs(10)).await.expect("one attempt");
    assert_eq!(c.worker_id, root);
    assert_ne!(c.command_id, first.command_id);
    deliver(&mut x, &c, 4).await;
    x.state(root, StateName::Idle, 5).await.expect("idle");
    quiet(&mut x, GRACE_MS * 3).await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_after_the_current_turn_sends_nothing_when_it_ends() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = d.auto_root(CONVERSATION).await;
    x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
    let c = x.command_within(Duration::from_secs(10)).await.expect("a resume");
    deliver(&mut x, &c, 2).await;
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
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = d.auto_root(CONVERSATION).await;
    x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
    let c = x.command_within(Duration::from_secs(10)).await.expect("a resume");
    deliver(&mut x, &c, 2).await;
    let timeout = bridge::StateWire {
        worker_id: root,
        state: StateName::Error,
        error_kind: Some(bridge::ErrorKindWire::DeliveryTimeout),
        seq: 3,
        block: None,
    };
    x.send(&ExecutorMessage::State(timeout)).await.expect("delivery timeout");
    let again = x.command_within(Duration::from_secs(10)).await.expect("a fresh continuation");
    assert_ne!(again.command_id, c.command_id, "a new attempt, never a Retry of the old one");
    assert_eq!(again.prompt, "continue");
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
async fn operator_actions_are_engine_operations_with_typed_rejections() {
    let d = Daemon::start().await;
    let (mut x, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("hello");
    let root = d.auto_root(CONVERSATION).await;
    x.send(&ExecutorMessage::Binding(binding(root, StateName::Idle, 1))).await.expect("binding");
    let first = x.command_within(Duration::from_secs(10)).await.expect("the assignment");
    deliver(&mut x, &first, 2).await;
    let action = |id: &str, action, worker| {
        ExecutorMessage::OperatorAction(bridge::OperatorActionWire {
            action_id: id.into(),
            action,
            worker_id: worker,
            run_id: None,
            text: None,
        })
    };
    x.send(&action("a-1", bridge::OperatorAction::PauseAfterTurn, Some(root))).await.expect("pause");
    match x.recv().await.expect("a result") {
        DaemonMessage::OperatorResult(r) => assert_eq!((r.action_id.as_str(), r.ok, r.error), ("a-1", true, None)),
        other => panic!("{other:?}"),
    }
    x.state(root, StateName::Idle, 3).await.expect("idle");
    quiet(&mut x, GRACE_MS * 3).await;
    let Ok(Reply::Worker(view)) = d.call(Operation::WorkerGet { worker: root }).await else { panic!("get") };
    assert_eq!(view.disposition, engine::model::Disposition::Paused, "the action paused the worker");

    x.send(&action("a-2", bridge::OperatorAction::Resume, Some(WorkerId(999)))).await.expect("resume");
    match x.recv().await.expect("a result") {
        DaemonMessage::OperatorResult(r) => {
            assert_eq!((r.action_id.as_str(), r.ok), ("a-2", false));
            assert_eq!(r.error.expect("an error").code, "UNKNOWN_WORKER");
        }
        other => panic!("{other:?}"),
    }
    x.send(&action("a-3", bridge::OperatorAction::ContinueNow, None)).await.expect("continue");
    match x.recv().await.expect("a result") {
        DaemonMessage::OperatorResult(r) => assert_eq!(r.error.expect("an error").code, "INVALID_ARGUMENT"),
        other => panic!("{other:?}"),
    }
    x.send(&action("a-4", bridge::OperatorAction::ContinueAnyway, Some(root))).await.expect("continue anyway");
    let mut got_result = false;
    let mut got_command = false;
    for _ in 0..2 {
        match x.recv().await.expect("a result and a command") {
            DaemonMessage::OperatorResult(r) => got_result = r.ok,
            DaemonMessage::Command(c) => got_command = c.worker_id == root && c.command_id != first.command_id,
            other => panic!("{other:?}"),
        }
    }
    assert!(got_result && got_command, "continue anyway sends exactly one attempt");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_executors_get_summaries_when_they_change() {
    let d = Daemon::start().await;
    let root = d.auto_root(CONVERSATION).await;
    let mut h = hello(EXECUTOR_TOKEN, "popup-1");
    h.capabilities.operator = true;
    let (mut x, _) = TestExecutor::hello(&d.url, h).await.expect("hello");
    let summary = |m: DaemonMessage| match m {
        DaemonMessage::OperatorSummary(s) => s,
        other => panic!("expected a summary, got {other:?}"),
    };
    let first = summary(x.recv().await.expect("a summary after welcome"));
    assert_eq!(first.runs.len(), 1);
    let w = &first.runs[0].workers[0];
    assert_eq!((w.worker_id.clone(), w.name.as_str(), w.auto_resume), (root.to_string(), "/root", true));
    assert!(!w.pause_after_turn);
    d.call(Operation::WorkerPause { worker: root, after_current_turn: true }).await.expect("pause");
    let next = summary(x.recv().await.expect("a summary after the change"));
    let w = &next.runs[0].workers[0];
    assert!(w.pause_after_turn || w.disposition == "paused", "{w:?}");
    // Plain executors get none.
    let (mut plain, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-2")).await.expect("hello");
    quiet(&mut plain, 300).await;
    d.stop().await;
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
