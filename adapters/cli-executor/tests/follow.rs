//! The executor follows the leader (issue 32, `docs/scale-out.md`): given a URL where
//! nothing listens and a standby that refuses the `/executor` upgrade with 503 `NOT_LEADER`
//! naming the real daemon's MCP URL, it connects to the daemon's `ws://HOST:PORT/executor`
//! and serves it (a run started there gets its first prompt submitted). The standby is a
//! loopback stand-in answering as `standby_route.rs` does.

mod harness;

use harness::{Binary, Daemon, dirs, options, spawn_executor, submitted};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A stand-in standby on loopback naming `leader`: its `ws://` executor URL and how many
/// requests it answered.
async fn standby(leader: String) -> (String, Arc<AtomicUsize>) {
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
    (url, answered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_passes_a_dead_url_and_follows_a_standby_to_the_leader() {
    let d = Daemon::start().await;
    let leader_mcp = d.url.replace("ws://", "http://").replace("/executor", "/mcp");
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
