//! The executor follows the leader (issue 32, `docs/scale-out.md`): given a URL where
//! nothing listens and a standby that refuses the `/executor` upgrade with 503 `NOT_LEADER`
//! naming the real daemon's MCP URL, it connects to the daemon's `ws://HOST:PORT/executor`
//! and serves it (a run started there gets its first prompt submitted); and when the leader
//! it followed to stops, it tries its list again and follows the standby to the new leader
//! it names. The standby is a loopback stand-in answering as `standby_route.rs` does. A
//! leader stopped while connected (SIGSTOP: its sockets stay open, nothing answers) is left
//! once it sent nothing for `DAEMON_SILENCE_MS_MAX`, and passed when it does not answer the
//! upgrade, so the executor reaches the daemon that leads now.

mod harness;

use futures_util::{SinkExt, StreamExt};
use harness::{Binary, Daemon, dirs, options, spawn_executor, submitted};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A stand-in standby on loopback naming `leader`: its `ws://` executor URL and how many
/// requests it answered.
async fn standby(leader: String) -> (String, Arc<AtomicUsize>) {
    let (url, answered, _) = standby_naming(leader).await;
    (url, answered)
}

/// The MCP URL of the daemon whose executor endpoint is `ws_url`.
fn mcp_of(ws_url: &str) -> String {
    ws_url.replace("ws://", "http://").replace("/executor", "/mcp")
}

/// Whether the daemon at `ws_url` lists the test executor as connected (`GET /health`).
async fn lists_the_executor(ws_url: &str) -> Option<()> {
    let authority = ws_url.trim_start_matches("ws://").trim_end_matches("/executor");
    let mut stream = tokio::net::TcpStream::connect(authority).await.ok()?;
    let request = format!(
        "GET /health HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        harness::MCP_TOKEN
    );
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.ok()?;
    answer.contains("\"cli-test\"").then_some(())
}

/// A stand-in daemon that welcomes the first connection and then stops, as under SIGSTOP:
/// it reads nothing more and sends nothing (no pong), its sockets open; it accepts later
/// connections (the kernel would) but never answers their upgrade. Its URL and how many
/// connections it accepted.
async fn stopped_after_welcome() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/executor", listener.local_addr().expect("addr"));
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        let (mut streams, mut sockets) = (Vec::new(), Vec::new());
        while let Ok((stream, _)) = listener.accept().await {
            if count.fetch_add(1, Ordering::SeqCst) > 0 {
                streams.push(stream);
                continue;
            }
            let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else { continue };
            let _hello = ws.next().await;
            let welcome = executor_protocol::DaemonMessage::Welcome(executor_protocol::Welcome {
                protocol: executor_protocol::PROTOCOL_VERSION,
                executor_id: "cli-test".to_string(),
                heartbeat_ms: 20_000,
                message_bytes_max: executor_protocol::MESSAGE_BYTES_MAX as u64,
                messages_per_second_max: 100,
            });
            let text = executor_protocol::encode(&welcome);
            let _ = ws.send(tokio_tungstenite::tungstenite::Message::Text(text.into())).await;
            sockets.push(ws);
        }
    });
    (url, accepted)
}

/// A stand-in standby whose named leader can change (a failover): its URL, how many
/// requests it answered, and the leader it names.
async fn standby_naming(leader: String) -> (String, Arc<AtomicUsize>, Arc<Mutex<String>>) {
    let named = Arc::new(Mutex::new(leader));
    let names = named.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/executor", listener.local_addr().expect("addr"));
    let answered = Arc::new(AtomicUsize::new(0));
    let count = answered.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let leader = names.lock().map(|l| l.clone()).unwrap_or_default();
            let body = serde_json::json!({
                "code": "NOT_LEADER",
                "message": format!("not the leader; the leader is {leader}"),
                "leader": leader,
                "epoch": 1,
            })
            .to_string();
            let answer = format!(
                "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    (url, answered, named)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_passes_a_dead_url_and_follows_a_standby_to_the_leader() {
    let d = Daemon::start().await;
    let leader_mcp = mcp_of(&d.url);
    let (standby_url, answered) = standby(leader_mcp).await;
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!("ws://{}/executor", listener.local_addr().expect("addr"))
    };
    let dirs = dirs();
    let mut options = options(&d.url, &dirs, &Binary::Sim(Vec::new()));
    options.urls = vec![dead, standby_url];
    let task = spawn_executor(options);
    let root = harness::start_run(&d, &dirs, engine::ExecutorKind::Codex).await;
    submitted(&d, root, 1).await;
    assert!(answered.load(Ordering::SeqCst) >= 1, "the standby was asked first");
    task.abort();
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_leader_stops_the_executor_tries_its_list_again_and_follows_to_the_new_leader() {
    let (a, c) = (Daemon::start().await, Daemon::start().await);
    let (standby_url, answered, named) = standby_naming(mcp_of(&a.url)).await;
    let dirs = dirs();
    let mut options = options(&a.url, &dirs, &Binary::Sim(Vec::new()));
    options.urls = vec![standby_url];
    let task = spawn_executor(options);
    harness::until("the executor follows the standby to A", || lists_the_executor(&a.url)).await;
    assert_eq!(answered.load(Ordering::SeqCst), 1, "one hop");

    // The failover: A stops, the standby names C.
    if let Ok(mut leader) = named.lock() {
        *leader = mcp_of(&c.url);
    }
    let c_url = c.url.clone();
    a.stop().await;
    harness::until("the executor follows the standby to C", || lists_the_executor(&c_url)).await;
    assert!(answered.load(Ordering::SeqCst) >= 2, "the list was tried again");
    task.abort();
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_stopped_while_connected_is_left_and_the_next_url_followed() {
    let d = Daemon::start().await;
    let (stopped, accepted) = stopped_after_welcome().await;
    let dirs = dirs();
    let mut options = options(&d.url, &dirs, &Binary::Sim(Vec::new()));
    options.urls = vec![stopped, d.url.clone()];
    let task = spawn_executor(options);
    harness::until("the stopped daemon welcomed the executor", || async {
        (accepted.load(Ordering::SeqCst) >= 1).then_some(())
    })
    .await;
    let left = std::time::Instant::now();
    harness::until("the executor reaches the daemon after the stopped one", || lists_the_executor(&d.url)).await;
    let took = left.elapsed();
    assert!(accepted.load(Ordering::SeqCst) >= 2, "the list was tried again from the stopped daemon");
    let silence = std::time::Duration::from_millis(cli_executor::base::limits::DAEMON_SILENCE_MS_MAX);
    assert!(took >= silence, "not before the silence limit: {took:?}");
    eprintln!("a stopped daemon left and the next one connected {} ms after its welcome", took.as_millis());
    task.abort();
    let _ = task.await;
}
