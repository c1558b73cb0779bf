//! Executors on several hosts (docs/scale-out.md "Executors on several hosts"), against
//! the real daemon in process: a per-host token from the host book is good for its own
//! executor id only, and a removed host is refused at its next hello and cut off at its
//! connection's next message; a hello's `epoch` fences an older process of the same id
//! (a replaced host, or a second copy that lost its connection and comes back) with
//! `SUPERSEDED`, while a newer start replaces the older connection as before.

use bridge::server::HostBook;
use executor_protocol::{DaemonMessage, ExecutorMessage, ProtocolErrorCode};
use std::time::{Duration, Instant};
use test_executor::{TestExecutor, hello};
use testkit::{Daemon, EXECUTOR_TOKEN};

#[allow(dead_code, reason = "this test uses the daemon only, not the run helpers")]
mod testkit;

fn protocol_error(m: &DaemonMessage) -> Option<ProtocolErrorCode> {
    match m {
        DaemonMessage::ProtocolError(e) => Some(e.code),
        _ => None,
    }
}

/// Says `hello` and returns what the daemon answered until it closed (empty if it stayed open).
async fn refused(url: &str, h: executor_protocol::Hello) -> Vec<Option<ProtocolErrorCode>> {
    let mut x = TestExecutor::connect(url, None).await.expect("connect");
    x.send(&ExecutorMessage::Hello(h)).await.expect("send");
    let seen = x.until_closed(Duration::from_secs(5)).await.expect("closed");
    seen.iter().map(protocol_error).collect()
}

fn with_epoch(token: &str, id: &str, epoch: Option<u64>) -> executor_protocol::Hello {
    let mut h = hello(token, id);
    h.epoch = epoch;
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_token_is_good_for_its_own_host_until_it_is_removed() {
    let d = Daemon::start().await;
    let book = HostBook::in_dir(&d.data_dir());
    let token = book.add("build-2", 1).expect("add");
    // Its own id: welcomed. Another id with it: refused.
    let (mut x, welcome) = TestExecutor::hello(&d.url, hello(&token, "build-2")).await.expect("its own host");
    assert_eq!(welcome.executor_id, "build-2");
    assert_eq!(refused(&d.url, hello(&token, "build-3")).await, vec![Some(ProtocolErrorCode::Unauthorized)]);
    // The shared token still works for any id (the extension, the local executor).
    let (_local, _) = TestExecutor::hello(&d.url, hello(EXECUTOR_TOKEN, "chrome-1")).await.expect("shared token");

    book.remove("build-2").expect("remove");
    // The live connection is cut at one of its next messages (checked at most once a second).
    let deadline = Instant::now() + Duration::from_secs(10);
    let cut = loop {
        assert!(Instant::now() < deadline, "the removed host's connection was not cut off");
        if x.send(&ExecutorMessage::Heartbeat {}).await.is_err() {
            break Vec::new();
        }
        match x.recv_within(Duration::from_millis(200)).await {
            Ok(m) if protocol_error(&m).is_some() => break vec![protocol_error(&m)],
            _ => continue,
        }
    };
    assert!(cut.is_empty() || cut == vec![Some(ProtocolErrorCode::Unauthorized)], "{cut:?}");
    // And its next hello is refused.
    assert_eq!(refused(&d.url, hello(&token, "build-2")).await, vec![Some(ProtocolErrorCode::Unauthorized)]);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_start_of_an_executor_id_is_superseded_and_a_newer_one_replaces() {
    let d = Daemon::start().await;
    // The first start (epoch 200) connects, then loses its connection.
    let (first, _) = TestExecutor::hello(&d.url, with_epoch(EXECUTOR_TOKEN, "build-2", Some(200))).await.expect("200");
    drop(first);
    // A newer start (300) on the replacement host connects.
    let (mut newer, _) =
        TestExecutor::hello(&d.url, with_epoch(EXECUTOR_TOKEN, "build-2", Some(300))).await.expect("300");
    // The older process comes back: refused, and the newer keeps its connection.
    assert_eq!(
        refused(&d.url, with_epoch(EXECUTOR_TOKEN, "build-2", Some(200))).await,
        vec![Some(ProtocolErrorCode::Superseded)]
    );
    newer.send(&ExecutorMessage::Heartbeat {}).await.expect("the newer connection is open");
    assert!(newer.recv_within(Duration::from_millis(300)).await.is_err(), "nothing was said to the newer one");
    // A start newer still replaces it, as a reconnection always did.
    let (_newest, _) =
        TestExecutor::hello(&d.url, with_epoch(EXECUTOR_TOKEN, "build-2", Some(400))).await.expect("400");
    let seen = newer.until_closed(Duration::from_secs(5)).await.expect("closed");
    assert_eq!(seen.iter().map(protocol_error).collect::<Vec<_>>(), vec![Some(ProtocolErrorCode::Replaced)]);
    d.stop().await;
}
