//! The real `orchestrator serve` process against slow, malformed and flooding clients on
//! loopback: header and idle timeouts, the connection caps, framing errors and malformed
//! JSON, and the size of the log a flood leaves behind. Every wait has an upper bound; a
//! close is observed by reading EOF, never by sleeping and looking.

mod support;

use console::client::McpClient;
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use std::time::{Duration, Instant};
use support::{Daemon, TOKEN};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The executor token the flood test's daemon accepts.
const EXECUTOR_TOKEN: &str = "executor-token-for-edge-tests-0123456789";
/// Upper bound on any close or answer the tests wait for: far above every configured
/// timeout, so that only a missing close fails a test, not a slow machine.
const WAIT_MS_MAX: u64 = 20_000;

fn authority(d: &Daemon) -> String {
    d.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string()
}

/// Reads until EOF (or a reset, which also ends the connection); returns what arrived and
/// how long it took. Panics past [`WAIT_MS_MAX`].
async fn read_to_close(tcp: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = Duration::from_millis(WAIT_MS_MAX).saturating_sub(started.elapsed());
        match tokio::time::timeout(left, tcp.read(&mut buf)).await {
            Err(_) => panic!("still open after {WAIT_MS_MAX} ms; got {:?}", String::from_utf8_lossy(&got)),
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&got).into_owned(), started.elapsed()),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// Sends `request` on a fresh connection and returns everything until the daemon closes.
async fn exchange(addr: &str, request: &[u8]) -> String {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(request).await.expect("write");
    read_to_close(&mut tcp).await.0
}

fn post_head(addr: &str, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nconnection: close\r\n{extra}\r\n"
    )
}

fn status(answer: &str) -> u16 {
    answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status line: {answer:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_and_slow_headers_are_closed_at_the_header_read_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Daemon::serve(&dir.path().join("data"), &["--mcp-token", TOKEN, "--header-read-timeout-ms", "500"]);
    let addr = authority(&d);
    let mut silent = Vec::new();
    for _ in 0..20 {
        silent.push(TcpStream::connect(&addr).await.expect("connect"));
    }
    // Slow headers: one header line every 100 ms, more lines than the timeout allows.
    let mut slow = Vec::new();
    for _ in 0..20 {
        let addr = addr.clone();
        slow.push(tokio::spawn(async move {
            let mut tcp = TcpStream::connect(&addr).await.expect("connect");
            let started = Instant::now();
            let _ = tcp.write_all(format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\n").as_bytes()).await;
            let mut buf = [0u8; 1024];
            for i in 0..(WAIT_MS_MAX / 100) {
                match tokio::time::timeout(Duration::from_millis(100), tcp.read(&mut buf)).await {
                    Ok(Ok(0)) | Ok(Err(_)) => return started.elapsed(),
                    Ok(Ok(_)) => {}
                    Err(_) => {
                        if tcp.write_all(format!("x-slow-{i}: 1\r\n").as_bytes()).await.is_err() {
                            return started.elapsed();
                        }
                    }
                }
            }
            panic!("a slow-header connection stayed open for {WAIT_MS_MAX} ms");
        }));
    }
    let mut closes = Vec::new();
    for tcp in &mut silent {
        closes.push(read_to_close(tcp).await.1);
    }
    let slowest_silent = closes.iter().max().copied().expect("some");
    let mut slowest_slow = Duration::ZERO;
    for task in slow {
        let took = task.await.expect("slow client");
        assert!(took >= Duration::from_millis(400), "not closed before the timeout: {took:?}");
        slowest_slow = slowest_slow.max(took);
    }
    eprintln!(
        "20 silent connections closed by {slowest_silent:?}, 20 slow-header ones by {slowest_slow:?} (timeout 500 ms)"
    );
    // The daemon still answers.
    let mut c = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect after the cleanup");
    c.call_ok("run_list", json!({})).await.expect("run_list");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idle_timeout_cuts_a_stalled_body_and_a_silent_websocket_but_not_a_long_poll_or_heartbeats() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Daemon::serve(
        &dir.path().join("data"),
        &["--mcp-token", TOKEN, "--executor-token", EXECUTOR_TOKEN, "--idle-timeout-ms", "700"],
    );
    let addr = authority(&d);

    // A body that stops halfway: nothing moves, so the idle timeout ends it.
    let mut tcp = TcpStream::connect(&addr).await.expect("connect");
    tcp.write_all(format!("{}{{\"jsonrpc\"", post_head(&addr, "content-length: 100\r\n")).as_bytes())
        .await
        .expect("write");
    let (answer, took) = read_to_close(&mut tcp).await;
    assert!(took >= Duration::from_millis(600), "closed at the idle timeout, not before: {took:?}");
    assert!(answer.is_empty() || (400..500).contains(&status(&answer)), "{answer}");

    // A long poll three times the idle timeout is answered, not cut.
    let mut c = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect");
    let page = c.call_ok("events_wait", json!({ "cursor": 0 })).await.expect("events");
    let cursor = page["nextCursor"].as_u64().expect("cursor");
    let started = Instant::now();
    let empty = c.call_ok("events_wait", json!({ "cursor": cursor, "timeoutMs": 2_100 })).await.expect("long poll");
    assert!(empty["events"].as_array().expect("events").is_empty());
    assert!(started.elapsed() >= Duration::from_millis(2_000), "it waited: {:?}", started.elapsed());

    // An executor that heartbeats every 200 ms stays for 2 s (three idle timeouts);
    // once it goes quiet it is closed.
    let ws_url = d.url.replace("http://", "ws://").replace("/mcp", "/executor");
    let (mut x, _) = test_executor::TestExecutor::hello(&ws_url, test_executor::hello(EXECUTOR_TOKEN, "chrome-1"))
        .await
        .expect("hello");
    for _ in 0..10 {
        x.silent_for(Duration::from_millis(200)).await.expect("nothing from the daemon, and still open");
        x.send(&executor_protocol::ExecutorMessage::Heartbeat {}).await.expect("heartbeat");
    }
    let started = Instant::now();
    x.until_closed(Duration::from_millis(WAIT_MS_MAX)).await.expect("closed once silent");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(600), "closed at the idle timeout: {took:?}");
    eprintln!("silent executor WebSocket closed {took:?} after its last heartbeat (idle timeout 700 ms)");
}

/// A connection from `ip` (any 127.0.0.0/8 address is loopback on Linux).
async fn connect_from(ip: &str, addr: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.bind(format!("{ip}:0").parse().expect("addr")).expect("bind");
    socket.connect(addr.parse().expect("addr")).await.expect("connect")
}

/// Sends an `initialize` on `tcp` and returns the status of the answer.
async fn initialize_on(tcp: &mut TcpStream, addr: &str) -> u16 {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } })
    .to_string();
    let request = format!("{}{body}", post_head(addr, &format!("content-length: {}\r\n", body.len())));
    // A refused connection may already be closed for writing: its 503 is what counts.
    let _ = tcp.write_all(request.as_bytes()).await;
    status(&read_to_close(tcp).await.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_caps_the_longest_idle_pending_connection_is_shed_and_only_established_ones_refuse() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Every local client shares loopback, which has no per-address cap: only the pools count.
    let d = Daemon::serve(
        &dir.path().join("data"),
        &["--mcp-token", TOKEN, "--connections-max", "3", "--pending-connections-max", "2"],
    );
    let addr = authority(&d);
    // One authenticated client (its connection established), then two silent connections
    // fill the pending pool.
    let mut client = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect");
    client.call_ok("run_list", json!({})).await.expect("the first client is answered");
    let mut oldest = connect_from("127.0.0.1", &addr).await;
    let mut second = connect_from("127.0.0.2", &addr).await;
    // A third pending connection takes the place of the one idle the longest (the daemon
    // accepts connections in the order they were made): the oldest is closed, unanswered.
    let mut third = connect_from("127.0.0.3", &addr).await;
    let (answer, _) = read_to_close(&mut oldest).await;
    assert!(answer.is_empty(), "a shed connection is closed without an answer: {answer:?}");
    // The newer pending ones were kept: each is answered once it sends its request.
    assert_eq!(initialize_on(&mut third, &addr).await, 200, "the newest pending connection is served");
    // The established client is answered as usual throughout.
    client.call_ok("run_list", json!({})).await.expect("the existing client is still answered");
    // Two more authenticated clients establish their connections, shedding what is pending:
    // every place is then held by an established connection, and only then is a new one refused.
    let mut more = Vec::new();
    for _ in 0..2 {
        let mut c = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect another client");
        c.call_ok("run_list", json!({})).await.expect("another client is answered");
        more.push(c);
    }
    let (answer, _) = read_to_close(&mut second).await;
    assert!(answer.is_empty(), "the idle pending connection made room: {answer:?}");
    let mut over = connect_from("127.0.0.1", &addr).await;
    assert_eq!(initialize_on(&mut over, &addr).await, 503, "every place is established: a new one is refused");
    client.call_ok("run_list", json!({})).await.expect("established clients are answered");
    // A freed place is taken again (bounded retries: the daemon sees the close shortly).
    drop(more.pop());
    let mut admitted = false;
    for _ in 0..500 {
        let mut again = connect_from("127.0.0.1", &addr).await;
        if initialize_on(&mut again, &addr).await == 200 {
            admitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(admitted, "a closed connection frees its place");
    let log = d.stderr();
    assert!(!log.contains(TOKEN), "no token in the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_break_their_framing_are_4xx_and_malformed_json_is_a_400_parse_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Daemon::serve(&dir.path().join("data"), &["--mcp-token", TOKEN, "--body-read-timeout-ms", "500"]);
    let addr = authority(&d);
    let chunked = post_head(&addr, "transfer-encoding: chunked\r\n");
    let cases: [(&str, String); 4] = [
        ("a bad chunk size", format!("{chunked}zz\r\n{{}}\r\n0\r\n\r\n")),
        ("chunked but not chunked", format!("{chunked}{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}")),
        ("a chunk longer than said", format!("{chunked}2\r\n{{\"jsonrpc\"}}\r\n0\r\n\r\n")),
        ("a garbled header", format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\nno colon here\r\n\r\n")),
    ];
    for (what, request) in cases {
        let answer = exchange(&addr, request.as_bytes()).await;
        assert!((400..500).contains(&status(&answer)), "{what}: {answer}");
    }
    // Shorter than its Content-Length, then EOF (the write side closed).
    let mut tcp = TcpStream::connect(&addr).await.expect("connect");
    tcp.write_all(format!("{}{{\"jsonrpc\"", post_head(&addr, "content-length: 100\r\n")).as_bytes())
        .await
        .expect("write");
    tcp.shutdown().await.expect("half-close");
    let (answer, _) = read_to_close(&mut tcp).await;
    assert_eq!(status(&answer), 400, "short body then EOF: {answer}");
    assert!(answer.contains("malformed request body"), "{answer}");
    // A body that trickles past the body read timeout: 408.
    let mut tcp = TcpStream::connect(&addr).await.expect("connect");
    tcp.write_all(format!("{}{{", post_head(&addr, "content-length: 100\r\n")).as_bytes()).await.expect("write");
    let (answer, took) = read_to_close(&mut tcp).await;
    assert_eq!(status(&answer), 408, "{answer}");
    assert!(took >= Duration::from_millis(400), "{took:?}");

    // JSON that does not parse: 400 with JSON-RPC's parse error; JSON that is no
    // JSON-RPC message: 400 with invalid request.
    for (body, code) in [("{\"jsonrpc\":", -32700), ("not json at all", -32700), ("{\"hello\":1}", -32600)] {
        let answer = exchange(
            &addr,
            format!("{}{body}", post_head(&addr, &format!("content-length: {}\r\n", body.len()))).as_bytes(),
        )
        .await;
        assert_eq!(status(&answer), 400, "{body}: {answer}");
        let json = answer.split("\r\n\r\n").nth(1).expect("a body");
        let error: serde_json::Value = serde_json::from_str(json).expect("a JSON-RPC error");
        assert_eq!(error["error"]["code"], code, "{body}: {error}");
        assert_eq!(error["jsonrpc"], "2.0");
    }
    // And the daemon is fine.
    let mut c = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect");
    c.call_ok("run_list", json!({})).await.expect("run_list");
}

/// Bytes a test may add to the log, whatever it sends.
const LOG_BYTES_ADDED_MAX: usize = 8 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mebibyte_tool_name_and_a_20000_frame_flood_add_a_few_kib_of_log_and_no_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Daemon::serve(&dir.path().join("data"), &["--mcp-token", TOKEN, "--executor-token", EXECUTOR_TOKEN]);
    let mut c = McpClient::connect(&d.url, Some(TOKEN)).await.expect("connect");

    let before = d.stderr().len();
    let name = "x".repeat(1 << 20);
    let err = c.call_tool(&name, json!({})).await.expect_err("no such tool");
    assert!(err.to_string().contains("-32602"), "{}", &err.to_string()[..200.min(err.to_string().len())]);
    let log = d.stderr();
    let added = log.len() - before;
    assert!(log[before..].contains("…[cut"), "rmcp's line about the tool is there, cut: {}", &log[before..]);
    assert!(added <= LOG_BYTES_ADDED_MAX, "a 1 MiB tool name added {added} bytes of log");
    eprintln!("a 1 MiB tool name added {added} bytes of log");

    // A wrong token that starts with the right one must not reach the log either.
    let ws_url = d.url.replace("http://", "ws://").replace("/mcp", "/executor");
    let near_miss = format!("{EXECUTOR_TOKEN}-not");
    let refused = test_executor::TestExecutor::hello(&ws_url, test_executor::hello(&near_miss, "chrome-9")).await;
    assert!(refused.is_err(), "a wrong token is refused");

    let before = d.stderr().len();
    let (mut ws, _) = tokio_tungstenite::connect_async(ws_url.as_str()).await.expect("connect");
    let hello = executor_protocol::encode(&executor_protocol::ExecutorMessage::Hello(test_executor::hello(
        EXECUTOR_TOKEN,
        "chrome-1",
    )));
    ws.send(tokio_tungstenite::tungstenite::Message::Text(hello.into())).await.expect("hello");
    let (mut tx, mut rx) = ws.split();
    // Read everything the daemon answers meanwhile, so neither side's buffers fill.
    let reader = tokio::spawn(async move {
        let mut rate_limited = 0u64;
        while let Some(Ok(message)) = rx.next().await {
            if message.to_text().is_ok_and(|t| t.contains("RATE_LIMITED")) {
                rate_limited += 1;
            }
        }
        rate_limited
    });
    let heartbeat = executor_protocol::encode(&executor_protocol::ExecutorMessage::Heartbeat {});
    let started = Instant::now();
    for _ in 0..20_000 {
        tx.feed(tokio_tungstenite::tungstenite::Message::Text(heartbeat.clone().into())).await.expect("send");
    }
    tx.flush().await.expect("flush");
    let flood_ms = started.elapsed().as_millis();
    tx.close().await.expect("close");
    let rate_limited =
        tokio::time::timeout(Duration::from_millis(WAIT_MS_MAX), reader).await.expect("closed").expect("reader");
    assert!(rate_limited > 10_000, "the flood was mostly over the rate cap ({rate_limited} refused in {flood_ms} ms)");
    // The summary is written when the connection ends: wait for it, boundedly.
    let deadline = Instant::now() + Duration::from_millis(WAIT_MS_MAX);
    let summary = loop {
        let log = d.stderr();
        if let Some(line) = log[before..].lines().find(|l| l.contains("RATE_LIMITED frames from executor chrome-1")) {
            break line.to_string();
        }
        assert!(Instant::now() < deadline, "no summary line after the flood: {}", &log[before..]);
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let log = d.stderr();
    let added = log.len() - before;
    assert!(added <= LOG_BYTES_ADDED_MAX, "a 20,000-frame flood added {added} bytes of log:\n{}", &log[before..]);
    let counted: u64 = log[before..]
        .lines()
        .filter(|l| l.contains("RATE_LIMITED frames from executor chrome-1"))
        .filter_map(|l| l.split("dropped ").nth(1)?.split(' ').next()?.parse::<u64>().ok())
        .sum();
    let in_full =
        log[before..].lines().filter(|l| l.contains("executor protocol error") && l.contains("RateLimited")).count();
    assert_eq!(
        counted + in_full as u64,
        rate_limited,
        "one line in full per interval, every other dropped frame counted: {summary}"
    );
    eprintln!("a 20,000-frame flood ({rate_limited} rate-limited, sent in {flood_ms} ms) added {added} bytes of log");

    let log = d.stderr();
    assert!(!log.contains(TOKEN) && !log.contains(EXECUTOR_TOKEN), "no token in the log:\n{log}");
    assert!(log.lines().all(|l| l.len() <= orchestrator::logs::LOG_LINE_BYTES_MAX), "every line is bounded");
}
