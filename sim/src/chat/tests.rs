//! The conversation host's Retry control and dialogs: a click on either is recorded and
//! breaks the run; a card left alone has no click.

use super::*;
use crate::knobs::Knobs;
use crate::ledger::Ledger;
use crate::oracle;

/// What the test's tab saw, in order.
type Seen = Rc<RefCell<Vec<FromChat>>>;

/// Reads frames into `seen` until one matches `until`.
async fn read_until(
    reader: &mut turmoil::net::tcp::OwnedReadHalf,
    seen: &Seen,
    until: impl Fn(&FromChat) -> bool,
) -> turmoil::Result {
    loop {
        let frame = read_frame::<_, FromChat>(reader).await?.ok_or("the conversation hung up")?;
        let stop = until(&frame);
        seen.borrow_mut().push(frame);
        if stop {
            return Ok(());
        }
    }
}

/// Runs one conversation host whose every submission times out, and a tab that submits
/// one message and sends `frames` either before it (`early`) or once the page answered
/// it with the delivery-timeout card. Returns the ledger and what the tab saw.
fn conversation(frames: Vec<ToChat>, early: bool) -> (Ledger, Vec<FromChat>) {
    let mut agents = Knobs::calm(1).agents;
    // No agent calls (there is no daemon here): no progress, nowhere near the end.
    (agents.turns_min, agents.turns_max, agents.progress_pct) = (100, 100, 0);
    agents.submit_timeout_pct = 100;
    let ledger: SharedLedger = Rc::new(RefCell::new(Ledger::default()));
    let seen: Seen = Rc::new(RefCell::new(Vec::new()));
    let mut sim = turmoil::Builder::new()
        .rng_seed(1)
        .simulation_duration(Duration::from_secs(120))
        .tick_duration(Duration::from_millis(100))
        .build();
    let (l, a) = (ledger.clone(), agents.clone());
    sim.host("chat-0", move || run("chat-0".into(), 7, a.clone(), l.clone()));
    let tab_seen = seen.clone();
    sim.client("tab", async move {
        let (mut reader, mut writer) = TcpStream::connect(("chat-0", CHAT_PORT)).await?.into_split();
        read_until(&mut reader, &tab_seen, |f| matches!(f, FromChat::State { .. })).await?;
        if early {
            for frame in &frames {
                write_frame(&mut writer, frame).await?;
            }
        }
        let key = "wrk-2-exe-1".to_string();
        let submit = ToChat::Submit { worker: WorkerId(2), key, prompt: "start".into(), steer: false };
        write_frame(&mut writer, &submit).await?;
        read_until(&mut reader, &tab_seen, |f| matches!(f, FromChat::TimedOut { .. })).await?;
        if !early {
            for frame in &frames {
                write_frame(&mut writer, frame).await?;
            }
        }
        // Let the page react, and keep reading what it shows meanwhile.
        let settle = tokio::time::sleep(Duration::from_secs(10));
        tokio::pin!(settle);
        loop {
            tokio::select! {
                _ = &mut settle => return Ok(()),
                frame = read_frame::<_, FromChat>(&mut reader) => {
                    tab_seen.borrow_mut().push(frame?.ok_or("the conversation hung up")?)
                }
            }
        }
    });
    while !sim.step().expect("the simulation runs") {
        ledger.borrow_mut().now_ms = sim.elapsed().as_millis() as u64;
    }
    let ledger = std::mem::take(&mut *ledger.borrow_mut());
    let seen = std::mem::take(&mut *seen.borrow_mut());
    (ledger, seen)
}

fn shown(seen: &[FromChat], state: ConversationState) -> bool {
    seen.iter().any(|f| matches!(f, FromChat::State { state: s, .. } if *s == state))
}

#[test]
fn clicking_retry_on_the_card_resends_the_last_message_and_breaks() {
    let (ledger, seen) = conversation(vec![ToChat::ClickRetry], false);
    assert!(shown(&seen, ConversationState::Error(ErrorKind::DeliveryTimeout)), "no card: {seen:?}");
    assert_eq!(ledger.retry_offers, 1);
    // The page took the click: the last message went in again and a turn started.
    assert!(shown(&seen, ConversationState::Generating), "Retry started no turn: {seen:?}");
    assert_eq!(ledger.deliveries.get("wrk-2-exe-1"), Some(&2));
    assert!(
        ledger.violations.iter().any(|v| v.ends_with("prompt wrk-2-exe-1 delivered 2 times")),
        "the duplicate was not caught: {:?}",
        ledger.violations
    );
    let broken = oracle::no_retry_clicks(&ledger.retry_clicks);
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(
        broken[0].starts_with("Retry clicked: chat-0 (wrk-2) at ")
            && broken[0].ends_with("re-sent wrk-2-exe-1, a turn the daemon never commanded"),
        "{broken:?}"
    );
}

#[test]
fn retry_without_the_card_sends_nothing_but_still_breaks() {
    let (ledger, seen) = conversation(vec![ToChat::ClickRetry], true);
    assert_eq!(ledger.deliveries.get("wrk-2-exe-1"), Some(&1), "{seen:?}");
    assert!(ledger.violations.is_empty(), "{:?}", ledger.violations);
    assert!(!shown(&seen, ConversationState::Generating), "{seen:?}");
    let broken = oracle::no_retry_clicks(&ledger.retry_clicks);
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].ends_with("with no delivery-timeout card showing"), "{broken:?}");
}

#[test]
fn any_click_on_a_dialog_breaks() {
    let (ledger, _) = conversation(vec![ToChat::ClickDialog], false);
    let clicked: Vec<_> = ledger.violations.iter().filter(|v| v.contains("the executor clicked a dialog")).collect();
    assert_eq!(clicked.len(), 1, "{:?}", ledger.violations);
}

#[test]
fn a_card_left_alone_has_no_click() {
    let (ledger, seen) = conversation(Vec::new(), false);
    assert!(shown(&seen, ConversationState::Error(ErrorKind::DeliveryTimeout)), "no card: {seen:?}");
    assert_eq!(ledger.retry_offers, 1);
    assert!(ledger.retry_clicks.is_empty() && ledger.violations.is_empty(), "{:?}", ledger.violations);
    assert!(!shown(&seen, ConversationState::Generating), "{seen:?}");
}
