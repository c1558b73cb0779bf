//! The MCP relay the children use when the executor follows a leader among several
//! daemons: every request reaches the daemon the executor follows now, with that daemon's
//! `Host` and the child's own token and body; a request made while no daemon is reachable
//! waits for the executor to follow one; a streamed answer (MCP's server-sent events)
//! comes through as it is written, not when it ends; with no daemon at all the child gets
//! a clear 503.
//!
//! The daemons are stand-ins that answer with what they received; the failover test
//! (`adapters/orchestrator/tests/failover.rs`) runs the relay under the real Codex across a
//! real takeover.

use cli_executor::run::mcp_relay::McpRelay;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// How long the relay under test waits for a daemon (long enough never to end a test that
/// passes; the 503 test uses a short one).
const WAIT: Duration = Duration::from_secs(20);

fn tls() -> Arc<tokio_rustls::rustls::ClientConfig> {
    address::tls::client_config(None).expect("a TLS client configuration")
}

/// A stand-in daemon on a free port: answers every request with
/// `NAME host=HOST auth=AUTHORIZATION path=PATH body=BODY`. Returns its executor URL.
async fn daemon(name: &'static str) -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/executor", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| async move {
                    let header =
                        |h: &str| request.headers().get(h).and_then(|v| v.to_str().ok()).unwrap_or("-").to_string();
                    let (host, auth, path) = (header("host"), header("authorization"), request.uri().to_string());
                    let body = request.into_body().collect().await?.to_bytes();
                    let text =
                        format!("{name} host={host} auth={auth} path={path} body={}", String::from_utf8_lossy(&body));
                    Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::from(text))))
                });
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    (url, task)
}

/// POSTs `body` to `url` with a bearer token: the status and the answer's body.
async fn post(url: &str, body: &str) -> (u16, String) {
    let response = send(url, body).await;
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.expect("the body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

async fn send(url: &str, body: &str) -> Response<Incoming> {
    let rest = url.strip_prefix("http://").expect("http");
    let (authority, path) = rest.split_once('/').expect("a path");
    let stream = tokio::net::TcpStream::connect(authority).await.expect("connect to the relay");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    let request = Request::post(format!("/{path}"))
        .header("host", authority)
        .header("authorization", "Bearer child-token")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a request");
    sender.send_request(request).await.expect("an answer")
}

#[tokio::test]
async fn requests_go_to_the_daemon_the_executor_follows_with_its_host() {
    let relay = McpRelay::start(tls(), WAIT).await.expect("the relay starts");
    assert!(relay.url().starts_with("http://127.0.0.1:") && relay.url().ends_with("/mcp"), "{}", relay.url());
    let (a, _a) = daemon("A").await;
    let (b, _b) = daemon("B").await;
    let authority = |url: &str| url.trim_start_matches("ws://").trim_end_matches("/executor").to_string();

    // Asked before any daemon welcomed the executor: the request waits for one.
    let url = relay.url().to_string();
    let early = tokio::spawn(async move { post(&url, r#"{"id":1}"#).await });
    tokio::task::yield_now().await;
    relay.follow(&a);
    let (status, answer) = early.await.expect("the early request");
    assert_eq!(status, 200);
    assert_eq!(answer, format!(r#"A host={} auth=Bearer child-token path=/mcp body={{"id":1}}"#, authority(&a)));

    relay.follow(&b);
    let (status, answer) = post(relay.url(), "two").await;
    assert_eq!((status, answer), (200, format!("B host={} auth=Bearer child-token path=/mcp body=two", authority(&b))));
}

#[tokio::test]
async fn a_request_to_a_dead_leader_waits_for_the_next_one() {
    let relay = McpRelay::start(tls(), WAIT).await.expect("the relay starts");
    let (a, a_task) = daemon("A").await;
    relay.follow(&a);
    assert!(post(relay.url(), "before").await.1.starts_with("A "));
    // The leader dies: its port refuses. The request waits until the executor follows B.
    a_task.abort();
    let _ = a_task.await;
    let url = relay.url().to_string();
    let waiting = tokio::spawn(async move { post(&url, "after").await });
    let (b, _b) = daemon("B").await;
    tokio::task::yield_now().await;
    relay.follow(&b);
    let (status, answer) = waiting.await.expect("the waiting request");
    assert_eq!(status, 200);
    assert!(answer.starts_with("B ") && answer.ends_with("body=after"), "{answer}");
}

#[tokio::test]
async fn with_no_daemon_to_take_it_the_child_gets_a_clear_503() {
    let relay = McpRelay::start(tls(), Duration::from_millis(300)).await.expect("the relay starts");
    let (status, answer) = post(relay.url(), "lost").await;
    assert_eq!(status, 503);
    assert!(
        answer.contains("MCP_RELAY_NO_DAEMON") && answer.contains("no daemon has welcomed this executor yet"),
        "{answer}"
    );
    // A leader whose port refuses: the answer names it.
    let (a, a_task) = daemon("A").await;
    a_task.abort();
    let _ = a_task.await;
    relay.follow(&a);
    let (status, answer) = post(relay.url(), "lost").await;
    assert_eq!(status, 503);
    let authority = a.trim_start_matches("ws://").trim_end_matches("/executor");
    assert!(answer.contains(&format!("the daemon at {authority} did not answer")), "{answer}");
}

/// A response body written chunk by chunk, as the test sends them.
struct Chunks(mpsc::Receiver<Bytes>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = hyper::Error;
    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}

#[tokio::test]
async fn a_streamed_answer_comes_through_as_it_is_written() {
    // A daemon that writes one event, and the second only once the test has read the
    // first through the relay: a relay that waited for the whole answer would never
    // deliver the first (the guard below turns that hang into a failure).
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/executor", listener.local_addr().expect("addr"));
    let (chunks, body) = mpsc::channel::<Bytes>(4);
    let body = Arc::new(std::sync::Mutex::new(Some(body)));
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("the relay connects");
        let service = hyper::service::service_fn(move |_request: Request<Incoming>| {
            let body = body.lock().expect("lock").take().expect("one request");
            async move { Ok::<_, hyper::Error>(Response::new(Chunks(body))) }
        });
        let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
    });
    let relay = McpRelay::start(tls(), WAIT).await.expect("the relay starts");
    relay.follow(&url);
    chunks.send(Bytes::from_static(b"data: one\n\n")).await.expect("the daemon writes");
    let mut answer = send(relay.url(), "{}").await.into_body();
    let first = tokio::time::timeout(WAIT, answer.frame()).await.expect("the first event, before the answer ends");
    assert_eq!(&first.expect("a frame").expect("data").into_data().expect("data")[..], b"data: one\n\n");
    chunks.send(Bytes::from_static(b"data: two\n\n")).await.expect("the daemon writes");
    drop(chunks);
    let rest = answer.collect().await.expect("the rest").to_bytes();
    assert_eq!(&rest[..], b"data: two\n\n");
}
