//! The browser model against a conversation host: it types a command only into the
//! conversation it names, a closed conversation is never reported nor typed into, and a
//! page showing something the adapter cannot name is never typed into.

use super::*;
use crate::chat;
use crate::knobs::Knobs;
use crate::ledger::Ledger;
use crate::oracle::Closed;
use crate::wire::{EXECUTOR_PORT, conversation_url, read_text, write_text};
use engine::CommandKind;

const W: WorkerId = WorkerId(2);
/// How long a test watches after its last command (longer than any turn).
const BROWSE_AFTER_S: u64 = 900;

/// A command for `W` delivering `attempt` (`conversation` as a host name; empty for a
/// create).
fn command(attempt: u64, kind: CommandKind, conversation: &str) -> ExecutorCommand {
    let attempt = AttemptId(attempt);
    let url = if conversation.is_empty() { String::new() } else { conversation_url(conversation) };
    ExecutorCommand {
        executor: ExecutorId::new("browser-1"),
        id: CommandId { attempt },
        idempotency_key: format!("{}:{attempt}", kind.as_str()),
        worker: W,
        attempt,
        kind,
        conversation: Arc::from(url),
        prompt: "go on".into(),
        prompt_version: "test/v1".into(),
        deadline: Timestamp(EPOCH_MS + 3_600_000),
        executor_kind: engine::ExecutorKind::Chatgpt,
        workspace: None,
        approval: None,
    }
}

/// Runs the browser against a stand-in daemon that says nothing but `script` (each
/// command after its delay in seconds) and two conversations, `chat-0` (for creates)
/// and `fresh-0` (kept for attaches). Returns the ledger and every message the
/// browser sent the daemon.
fn browse(script: Vec<(u64, ExecutorCommand)>) -> (Ledger, Vec<String>) {
    browse_with(script, Vec::new())
}

/// [`browse`], with page stops shown over the conversations (`chat::PageEvent`).
fn browse_with(script: Vec<(u64, ExecutorCommand)>, page_events: Vec<chat::PageEvent>) -> (Ledger, Vec<String>) {
    let mut agents = Knobs::calm(1).agents;
    agents.page_events = page_events;
    // No agent calls (there is no caller port here): no progress, nowhere near the end.
    (agents.turns_min, agents.turns_max, agents.progress_pct) = (100, 100, 0);
    let ledger: SharedLedger = Rc::new(RefCell::new(Ledger::default()));
    let heard: Rc<RefCell<Vec<String>>> = Rc::default();
    let mut sim = turmoil::Builder::new()
        .rng_seed(1)
        .simulation_duration(Duration::from_secs(3_600))
        .tick_duration(Duration::from_millis(100))
        .build();
    for (seed, name) in ["chat-0", "fresh-0"].into_iter().enumerate() {
        let (l, a) = (ledger.clone(), agents.clone());
        sim.host(name, move || chat::run(name.into(), seed as u64, a.clone(), l.clone()));
    }
    let state = BrowserState {
        storage: Rc::default(),
        chats: vec!["chat-0".into()],
        attachable: vec!["fresh-0".into()],
        steering: true,
        concurrency: 8,
        submit_delay_ms: 0,
        ledger: ledger.clone(),
    };
    sim.host("browser", move || run(state.clone()));
    let daemon_heard = heard.clone();
    sim.client("daemon", async move {
        let listener = turmoil::net::TcpListener::bind(("0.0.0.0", EXECUTOR_PORT)).await?;
        let (mut reader, mut writer) = listener.accept().await?.0.into_split();
        tokio::task::spawn_local(async move {
            while let Ok(Some(text)) = read_text(&mut reader).await {
                daemon_heard.borrow_mut().push(text);
            }
        });
        for (after_s, c) in script {
            tokio::time::sleep(Duration::from_secs(after_s)).await;
            let text = executor_protocol::encode(&executor_protocol::DaemonMessage::Command(
                executor_protocol::CommandWire::from(&c),
            ));
            write_text(&mut writer, &text).await?;
        }
        // Let the pages and the browser play out what the commands started.
        tokio::time::sleep(Duration::from_secs(BROWSE_AFTER_S)).await;
        Ok(())
    });
    while !sim.step().expect("the simulation runs") {
        ledger.borrow_mut().now_ms = sim.elapsed().as_millis() as u64;
    }
    let ledger = std::mem::take(&mut *ledger.borrow_mut());
    let heard = std::mem::take(&mut *heard.borrow_mut());
    (ledger, heard)
}

fn typed(ledger: &Ledger) -> Vec<(&str, &str)> {
    ledger.delivered.iter().map(|d| (d.conversation.as_str(), d.key.as_str())).collect()
}

#[test]
fn a_send_is_typed_only_into_the_conversation_it_names() {
    let (ledger, heard) = browse(vec![
        (5, command(1, CommandKind::Create, "")),
        (60, command(2, CommandKind::Send, "fresh-0")),
        (5, command(3, CommandKind::Steer, "chat-0")),
    ]);
    // The send opened its conversation (never the tab the worker had), and was
    // reported as the worker's binding there; the steer named a conversation no
    // longer managed here: nothing typed, STEERING_UNAVAILABLE.
    let create = "conversation.create:exe-1";
    assert_eq!(typed(&ledger), vec![("chat-0", create), ("fresh-0", "conversation.send:exe-2")]);
    assert!(heard.iter().any(|m| m.contains(r#""type":"binding""#) && m.contains("/c/fresh-0")), "{heard:?}");
    let refused = heard.iter().find(|m| m.contains(r#""commandId":"cmd-3""#)).expect("a result for the steer");
    assert!(refused.contains("STEERING_UNAVAILABLE"), "{refused}");
}

#[test]
fn a_closed_conversation_is_never_reported_nor_typed_into_again() {
    let (ledger, heard) = browse(vec![
        (5, command(1, CommandKind::Create, "")),
        (5, command(1, CommandKind::Close, "chat-0")),
        (1_200, command(2, CommandKind::Send, "fresh-0")),
    ]);
    let closed = &ledger.closes[..];
    assert!(matches!(closed, [Closed { conversation, released: true, .. }] if conversation == "chat-0"));
    // The bootstrap turn ran on in its page (left alone) and ended unreported.
    let after = closed[0].at_ms;
    assert!(ledger.trace.iter().any(|l| l.contains("chat-0   turn 1 ends idle")), "{:?}", ledger.trace);
    let late: Vec<_> = ledger.published.iter().filter(|p| p.conversation == "chat-0" && p.at_ms > after).collect();
    assert!(late.is_empty(), "{late:?}");
    assert!(!heard.iter().any(|m| m.contains(r#""commandId":"cmd-1""#) && m.contains("failed")), "{heard:?}");
    assert_eq!(typed(&ledger), vec![("chat-0", "conversation.create:exe-1"), ("fresh-0", "conversation.send:exe-2")]);
}

#[test]
fn a_send_waits_while_the_page_shows_something_the_adapter_cannot_name() {
    // The page turns unrecognized during the create's first turn; a send arrives while it
    // shows; the page is known again 10 minutes later (issue 27).
    let (shown_s, length_s) = (30, 600);
    let page = chat::PageEvent {
        at_ms: shown_s * 1_000,
        worker: W,
        stop: chat::PageStop::Unrecognized,
        length_ms: length_s * 1_000,
        names_time: false,
    };
    let (ledger, heard) = browse_with(
        vec![(5, command(1, CommandKind::Create, "")), (55, command(2, CommandKind::Send, "chat-0"))],
        vec![page],
    );
    assert!(ledger.violations.is_empty(), "{:?}", ledger.violations);
    // On the wire an unrecognized page is `unknown` with the page-shape report's line.
    let reported = |m: &String| m.contains(r#""state":"unknown""#) && m.contains("cannot name");
    assert!(heard.iter().any(reported), "the page's state is reported: {heard:?}");
    let send =
        ledger.delivered.iter().find(|d| d.key == "conversation.send:exe-2").expect("typed once the page is known");
    assert!(send.at_ms >= (shown_s + length_s) * 1_000, "typed at {} ms, while the page was unrecognized", send.at_ms);
}
