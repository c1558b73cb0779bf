//! OAuth approval over the executor bridge's operator channel (the extension's
//! dashboard), against the real `orchestrator serve --public-url` process: an operator
//! executor lists the waiting request, approves it by its code, the consent page
//! proceeds and the code exchange gives a working token, the grant is listed, and
//! revoking it makes `/mcp` refuse the token; deny sends the client back with
//! `access_denied`; executors without the operator UI are refused; without OAuth the
//! query says `enabled: false` and the actions fail with `OAUTH_OFF`. No request code
//! reaches the log.

mod support;

use axum::body::Bytes;
use executor_protocol::{
    DaemonMessage, ExecutorMessage, OAuthPendingOut, OperatorAction, OperatorActionWire, OperatorData,
    OperatorQueryName, OperatorQueryWire, OperatorResultWire, oauth_codes,
};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use oauth::form::{encode, parse_form};
use oauth::secrets::s256_challenge;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;
use support::{Daemon, TOKEN, free_port};
use test_executor::{TestExecutor, hello};

const EXECUTOR_TOKEN: &str = "executor-token-0123456789abcdef";
const VERIFIER: &str = "verifier-0123456789-0123456789-0123456789-abcdef";
const REDIRECT: &str = "http://127.0.0.1:1/callback";
/// How long one answer from the daemon may take.
const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// One HTTP exchange: status, `Location`, body.
async fn http(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    let mut request = hyper::Request::builder().method(method).uri(path).header("host", addr);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = sender
        .send_request(request.body(Full::new(Bytes::from(body.to_string()))).expect("request"))
        .await
        .expect("answer");
    let status = response.status().as_u16();
    let location = response.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    (status, location, String::from_utf8_lossy(&bytes).into_owned())
}

/// A daemon with OAuth on at its own `http://127.0.0.1:PORT`.
struct Server {
    d: Daemon,
    addr: String,
    public: String,
}

impl Server {
    fn start(dir: &std::path::Path) -> Server {
        let addr = format!("127.0.0.1:{}", free_port());
        let public = format!("http://{addr}");
        let args = ["--mcp-token", TOKEN, "--executor-token", EXECUTOR_TOKEN, "--public-url", &public];
        let d = Daemon::serve_on(dir, &addr, &[&args[..], &["--log-level", "trace"]].concat());
        Server { d, addr, public }
    }

    async fn register(&self) -> String {
        let body = json!({ "client_name": "Dashboard test", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
        let (status, _, text) =
            http(&self.addr, "POST", "/oauth/register", &[("content-type", "application/json")], &body.to_string())
                .await;
        assert_eq!(status, 201, "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        v["client_id"].as_str().expect("client_id").to_string()
    }

    /// Starts an authorization: the consent page's code and its poll path.
    async fn authorize(&self, client: &str) -> (String, String) {
        let resource = format!("{}/mcp", self.public);
        let challenge = s256_challenge(VERIFIER);
        let q = [
            ("response_type", "code"),
            ("client_id", client),
            ("redirect_uri", REDIRECT),
            ("state", "st-1"),
            ("code_challenge_method", "S256"),
            ("code_challenge", &challenge),
            ("resource", &resource),
            ("scope", "mcp"),
        ];
        let query: Vec<String> = q.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
        let (status, _, page) =
            http(&self.addr, "GET", &format!("/oauth/authorize?{}", query.join("&")), &[], "").await;
        assert_eq!(status, 200, "{page}");
        let human = page.split("id=\"human-code\">").nth(1).and_then(|r| r.split('<').next()).expect("code");
        let poll = page.split("url=").nth(1).and_then(|r| r.split('"').next()).expect("refresh url");
        (human.to_string(), poll.replace("&amp;", "&").trim_start_matches(&self.public).to_string())
    }

    /// The consent page's next poll: its status and the redirect's query, if any.
    async fn poll(&self, path: &str) -> (u16, BTreeMap<String, String>) {
        let (status, location, _) = http(&self.addr, "GET", path, &[], "").await;
        let query = location.split_once('?').map(|(_, q)| parse_form(q).expect("query")).unwrap_or_default();
        (status, query)
    }

    async fn exchange(&self, client: &str, code: &str) -> String {
        let resource = format!("{}/mcp", self.public);
        let pairs = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("resource", &resource),
        ];
        let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
        let form = ("content-type", "application/x-www-form-urlencoded");
        let (status, _, text) = http(&self.addr, "POST", "/oauth/token", &[form], &body.join("&")).await;
        assert_eq!(status, 200, "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        v["access_token"].as_str().expect("access token").to_string()
    }

    /// The status of an MCP `initialize` with this bearer token.
    async fn mcp_status(&self, token: &str) -> u16 {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let auth = format!("Bearer {token}");
        let headers = [
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("authorization", auth.as_str()),
        ];
        http(&self.addr, "POST", "/mcp", &headers, &init.to_string()).await.0
    }
}

/// An executor connection; `operator` as its hello says.
async fn executor(addr: &str, id: &str, operator: bool) -> TestExecutor {
    let mut h = hello(EXECUTOR_TOKEN, id);
    h.capabilities.operator = operator;
    TestExecutor::hello(&format!("ws://{addr}/executor"), h).await.expect("hello").0
}

/// The next `operator.data` or `operator.result`, skipping the summaries pushed meanwhile.
async fn answer(x: &mut TestExecutor) -> DaemonMessage {
    let deadline = tokio::time::Instant::now() + ANSWER_WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match x.recv_within(left).await.expect("an answer in time") {
            DaemonMessage::OperatorSummary(_) => continue,
            other => return other,
        }
    }
}

/// `oauth_pending`: the data, or the refusal's code.
async fn pending(x: &mut TestExecutor) -> Result<OAuthPendingOut, String> {
    let query = OperatorQueryWire {
        query_id: "q-oauth".into(),
        query: OperatorQueryName::OauthPending,
        worker_id: None,
        after_sequence: None,
        limit: None,
    };
    x.send(&ExecutorMessage::OperatorQuery(query)).await.expect("send");
    match answer(x).await {
        DaemonMessage::OperatorData(d) if d.ok => match d.data {
            Some(OperatorData::OAuth(out)) => Ok(out),
            other => panic!("not the OAuth shape: {other:?}"),
        },
        DaemonMessage::OperatorData(d) => Err(d.error.expect("an error").code),
        other => panic!("{other:?}"),
    }
}

/// An OAuth action: its `operator.result`.
async fn act(
    x: &mut TestExecutor,
    action: OperatorAction,
    code: Option<&str>,
    grant: Option<&str>,
) -> OperatorResultWire {
    let wire = OperatorActionWire {
        code: code.map(String::from),
        grant_id: grant.map(String::from),
        ..OperatorActionWire::new("a-oauth", action)
    };
    x.send(&ExecutorMessage::OperatorAction(wire)).await.expect("send");
    match answer(x).await {
        DaemonMessage::OperatorResult(r) => r,
        other => panic!("{other:?}"),
    }
}

fn error_code(r: &OperatorResultWire) -> Option<&str> {
    r.error.as_ref().map(|e| e.code.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_approves_lists_revokes_and_denies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Server::start(&dir.path().join("data"));
    let mut x = executor(&s.addr, "dashboard-1", true).await;
    let mut plain = executor(&s.addr, "plain-1", false).await;

    let empty = pending(&mut x).await.expect("answered");
    assert!(empty.enabled && empty.pending.is_empty() && empty.grants.is_empty(), "{empty:?}");

    let client = s.register().await;
    let (human, poll) = s.authorize(&client).await;
    let listed = pending(&mut x).await.expect("answered");
    assert_eq!(listed.pending.len(), 1, "{listed:?}");
    let request = &listed.pending[0];
    assert_eq!(request.code, human);
    assert_eq!((request.client_name.as_str(), request.self_registered), ("Dashboard test", true));
    assert_eq!((request.redirect_host.as_str(), request.scopes.clone()), ("127.0.0.1", vec!["mcp".to_string()]));
    assert!(request.expires_at_ms > oauth::now_ms(), "expires in the future");
    assert_eq!(s.poll(&poll).await.0, 200, "the consent page still waits");

    // Executors without the operator UI may neither read nor decide.
    assert_eq!(pending(&mut plain).await.err().as_deref(), Some(oauth_codes::OPERATOR_REQUIRED));
    let refused = act(&mut plain, OperatorAction::OauthApprove, Some(&human), None).await;
    assert_eq!(error_code(&refused), Some(oauth_codes::OPERATOR_REQUIRED));
    assert_eq!(s.poll(&poll).await.0, 200, "still waiting after the refused approval");

    // A malformed code is refused before the desk; an unknown one by the desk.
    let bad = act(&mut x, OperatorAction::OauthApprove, Some("not a code"), None).await;
    assert_eq!(error_code(&bad), Some("INVALID_ARGUMENT"));
    let unknown = act(&mut x, OperatorAction::OauthApprove, Some("2222-2222"), None).await;
    assert_eq!(error_code(&unknown), Some(oauth_codes::OAUTH_NOT_FOUND));

    // Approve, typed as a person might: lower case, no dash.
    let approved = act(&mut x, OperatorAction::OauthApprove, Some(&human.replace('-', "").to_lowercase()), None).await;
    assert!(approved.ok, "{approved:?}");
    let (status, redirect) = s.poll(&poll).await;
    assert_eq!(status, 303, "the consent page proceeds once approved");
    assert_eq!(redirect.get("state").map(String::as_str), Some("st-1"));
    let access = s.exchange(&client, &redirect["code"]).await;
    assert_eq!(s.mcp_status(&access).await, 200, "the approved client's token works");
    let again = act(&mut x, OperatorAction::OauthApprove, Some(&human), None).await;
    assert_eq!(error_code(&again), Some(oauth_codes::OAUTH_NOT_FOUND), "a decided request is no longer waiting");

    let listed = pending(&mut x).await.expect("answered");
    assert!(listed.pending.is_empty(), "{listed:?}");
    assert_eq!(listed.grants.len(), 1, "{listed:?}");
    let grant = listed.grants[0].clone();
    assert_eq!(grant.client_name, "Dashboard test");
    assert!(grant.grant_id.starts_with("grt-") && grant.last_used_at_ms >= grant.created_at_ms, "{grant:?}");

    // Revoke: the token is refused at once.
    let bad = act(&mut x, OperatorAction::OauthRevoke, None, Some("grt-nope")).await;
    assert_eq!(error_code(&bad), Some("INVALID_ARGUMENT"));
    let revoked = act(&mut x, OperatorAction::OauthRevoke, None, Some(&grant.grant_id)).await;
    assert!(revoked.ok, "{revoked:?}");
    assert_eq!(s.mcp_status(&access).await, 401, "a revoked grant's token is refused");
    assert!(pending(&mut x).await.expect("answered").grants.is_empty());
    let twice = act(&mut x, OperatorAction::OauthRevoke, None, Some(&grant.grant_id)).await;
    assert_eq!(error_code(&twice), Some(oauth_codes::OAUTH_NOT_FOUND));

    // Deny: the client is sent back with access_denied.
    let (denied_code, denied_poll) = s.authorize(&client).await;
    let denied = act(&mut x, OperatorAction::OauthDeny, Some(&denied_code), None).await;
    assert!(denied.ok, "{denied:?}");
    let (status, redirect) = s.poll(&denied_poll).await;
    assert_eq!((status, redirect.get("error").map(String::as_str)), (303, Some("access_denied")));

    let log = s.d.stderr();
    assert!(log.contains("operator OAuth action"), "the actions are logged");
    for code in [&human, &denied_code] {
        assert!(!log.contains(code.as_str()), "a request code in the log: {code}");
    }
    assert!(!log.contains(&access), "a token in the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_public_url_the_query_says_off_and_actions_fail_with_oauth_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _d = Daemon::serve(&dir.path().join("data"), &["--mcp-token", TOKEN, "--executor-token", EXECUTOR_TOKEN]);
    let addr = _d.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let mut x = executor(&addr, "dashboard-2", true).await;
    assert_eq!(pending(&mut x).await.expect("answered"), OAuthPendingOut::default());
    let off = act(&mut x, OperatorAction::OauthApprove, Some("K7QH-2MPD"), None).await;
    assert_eq!(error_code(&off), Some(oauth_codes::OAUTH_OFF));
    let grant = format!("grt-{}", "0".repeat(12));
    let off = act(&mut x, OperatorAction::OauthRevoke, None, Some(&grant)).await;
    assert_eq!(error_code(&off), Some(oauth_codes::OAUTH_OFF));
}
