//! The OAuth authorization server of the real `orchestrator serve --public-url` process:
//! the whole flow (registration, authorize, the operator's approval through
//! `orchestrator oauth approve`, token, tool calls, refresh) and its refusals, the
//! resource server's checks on `/mcp`, persistence across restarts, and logs free of
//! secrets. Time-based refusals use the test-only lifetime flags, never a guess.

mod support;

// The edge cases of issue 30 (secrets asked for, client authentication, replayed codes,
// rate limits, `state`), in a file of their own within this test binary.
#[path = "oauth/edges.rs"]
mod edges;

// Two daemons on one PostgreSQL behind one public address: the grants in the database.
#[path = "oauth/failover.rs"]
mod failover;

use axum::body::Bytes;
use console::client::McpClient;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use oauth::form::{encode, parse_form};
use oauth::secrets::s256_challenge;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use support::{Daemon, TOKEN, free_port, orchestrator_bin};

const VERIFIER: &str = "verifier-0123456789-0123456789-0123456789-abcdef";
const REDIRECT: &str = "http://127.0.0.1:1/callback";

/// One HTTP answer.
struct Answer {
    status: u16,
    headers: hyper::HeaderMap,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> String {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON ({}): {}", self.status, self.body))
    }
    /// The query of the `Location` redirect.
    fn location_query(&self) -> BTreeMap<String, String> {
        let location = self.header("location");
        let query = location.split_once('?').map(|(_, q)| q).unwrap_or_else(|| panic!("no query: {location:?}"));
        parse_form(query).expect("query")
    }
}

async fn http(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    let mut request = hyper::Request::builder().method(method).uri(path);
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request = request.header("host", addr);
    }
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let request = request.body(Full::new(Bytes::from(body.to_string()))).expect("request");
    let response = sender.send_request(request).await.expect("answer");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    Answer { status, headers, body: String::from_utf8_lossy(&bytes).into_owned() }
}

const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");
const JSON: (&str, &str) = ("content-type", "application/json");

fn form(pairs: &[(&str, &str)]) -> String {
    pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect::<Vec<_>>().join("&")
}

/// A daemon with OAuth on at `http://127.0.0.1:PORT`.
struct Server {
    d: Daemon,
    addr: String,
    public: String,
}

fn start(dir: &Path, port: u16, extra: &[&str]) -> Server {
    let addr = format!("127.0.0.1:{port}");
    let public = format!("http://{addr}");
    let mut args = vec!["--mcp-token", TOKEN, "--public-url", &public, "--log-level", "trace"];
    args.extend_from_slice(extra);
    let d = Daemon::serve_on(dir, &addr, &args);
    Server { d, addr, public }
}

impl Server {
    async fn register(&self, redirect: &str) -> String {
        let body = json!({ "client_name": "Test <client>", "redirect_uris": [redirect], "token_endpoint_auth_method": "none" });
        let a = http(&self.addr, "POST", "/oauth/register", &[JSON], &body.to_string()).await;
        assert_eq!(a.status, 201, "{}", a.body);
        a.json()["client_id"].as_str().expect("client_id").to_string()
    }

    fn authorize_path(&self, client: &str, extra: &[(&str, &str)]) -> String {
        let resource = format!("{}/mcp", self.public);
        let mut q: BTreeMap<&str, String> = BTreeMap::new();
        for (k, v) in [
            ("response_type", "code"),
            ("client_id", client),
            ("redirect_uri", REDIRECT),
            ("state", "st-123"),
            ("code_challenge_method", "S256"),
            ("resource", &resource),
            ("scope", "mcp"),
        ] {
            q.insert(k, v.to_string());
        }
        q.insert("code_challenge", s256_challenge(VERIFIER));
        for (k, v) in extra {
            if v.is_empty() {
                q.remove(k);
            } else {
                q.insert(k, v.to_string());
            }
        }
        let query: Vec<String> = q.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
        format!("/oauth/authorize?{}", query.join("&"))
    }

    /// `orchestrator oauth CMD ARGS --data-dir DIR`: stdout and success.
    fn cli(&self, args: &[&str]) -> (String, bool) {
        let out = std::process::Command::new(orchestrator_bin())
            .arg("oauth")
            .args(args)
            .args(["--data-dir", self.d.dir.to_str().expect("utf-8")])
            .env_remove("ORCHESTRATOR_DATA_DIR")
            .env("ORCHESTRATOR_MCP_TOKEN", TOKEN)
            .output()
            .expect("run the CLI");
        (
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
            out.status.success(),
        )
    }

    /// Authorize, read the human code off the consent page, approve it as the operator,
    /// poll the page until it redirects: the redirect's query.
    async fn code(&self, client: &str) -> BTreeMap<String, String> {
        let page = http(&self.addr, "GET", &self.authorize_path(client, &[]), &[], "").await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.header("content-security-policy").contains("frame-ancestors 'none'"));
        assert_eq!(page.header("cache-control"), "no-store");
        assert!(page.body.contains("self-registered") && page.body.contains("Test &lt;client&gt;"), "{}", page.body);
        assert!(page.body.contains("<b>127.0.0.1</b>"), "the redirect host is shown");
        let human = page.body.split("id=\"human-code\">").nth(1).and_then(|r| r.split('<').next()).expect("code");
        let poll = page.body.split("url=").nth(1).and_then(|r| r.split('"').next()).expect("refresh url");
        let poll = poll.replace("&amp;", "&").trim_start_matches(&self.public).to_string();
        let again = http(&self.addr, "GET", &poll, &[], "").await;
        assert_eq!(again.status, 200, "still waiting before approval");
        let (pending, ok) = self.cli(&["pending"]);
        assert!(ok && pending.contains(human), "{pending}");
        let (out, ok) = self.cli(&["approve", &human.to_lowercase()]);
        assert!(ok, "approve: {out}");
        let done = http(&self.addr, "GET", &poll, &[], "").await;
        assert_eq!(done.status, 303, "{}", done.body);
        assert!(done.header("location").starts_with(REDIRECT));
        done.location_query()
    }

    async fn exchange(&self, client: &str, code: &str, verifier: &str) -> Answer {
        let resource = format!("{}/mcp", self.public);
        let body = form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier),
            ("resource", &resource),
        ]);
        http(&self.addr, "POST", "/oauth/token", &[FORM], &body).await
    }

    async fn tokens(&self, client: &str) -> (String, String) {
        let q = self.code(client).await;
        let a = self.exchange(client, &q["code"], VERIFIER).await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.header("cache-control"), "no-store");
        let t = a.json();
        (t["access_token"].as_str().expect("access").into(), t["refresh_token"].as_str().expect("refresh").into())
    }

    async fn refresh(&self, client: &str, refresh: &str) -> Answer {
        let body = form(&[("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", client)]);
        http(&self.addr, "POST", "/oauth/token", &[FORM], &body).await
    }

    /// An `initialize` on `/mcp` with this bearer: the status and `WWW-Authenticate`.
    async fn mcp_status(&self, token: &str, extra: &[(&str, &str)]) -> (u16, String) {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let auth = format!("Bearer {token}");
        let mut headers = vec![JSON, ("accept", "application/json, text/event-stream")];
        if !token.is_empty() {
            headers.push(("authorization", &auth));
        }
        headers.extend_from_slice(extra);
        let a = http(&self.addr, "POST", "/mcp", &headers, &init.to_string()).await;
        (a.status, a.header("www-authenticate"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_flow_and_its_refusals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(&dir.path().join("data"), free_port(), &[]);
    let prm = http(&s.addr, "GET", "/.well-known/oauth-protected-resource/mcp", &[], "").await.json();
    assert_eq!(prm["resource"], format!("{}/mcp", s.public));
    let meta = http(&s.addr, "GET", "/.well-known/oauth-authorization-server", &[], "").await.json();
    assert_eq!(meta["issuer"], s.public.as_str());
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(meta["authorization_response_iss_parameter_supported"], json!(true));

    // Registration: only allowlisted redirects, public clients, a capped body.
    let evil = json!({ "redirect_uris": ["https://evil.example/cb"] }).to_string();
    let a = http(&s.addr, "POST", "/oauth/register", &[JSON], &evil).await;
    assert_eq!((a.status, a.json()["error"].as_str()), (400, Some("invalid_redirect_uri")));
    let jwt = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt" });
    let a = http(&s.addr, "POST", "/oauth/register", &[JSON], &jwt.to_string()).await;
    assert_eq!((a.status, a.json()["error"].as_str()), (400, Some("invalid_client_metadata")));
    let huge = json!({ "redirect_uris": [REDIRECT], "client_name": "x".repeat(20_000) }).to_string();
    assert_eq!(http(&s.addr, "POST", "/oauth/register", &[JSON], &huge).await.status, 413);
    let client = s.register(REDIRECT).await;

    // Authorize refusals: a page for an unknown client or redirect, a redirect with iss otherwise.
    let iss = |q: &BTreeMap<String, String>| q.get("iss").cloned();
    for bad in [vec![("client_id", "cli_unknown")], vec![("redirect_uri", "http://127.0.0.1:2/callback")]] {
        let a = http(&s.addr, "GET", &s.authorize_path(&client, &bad), &[], "").await;
        assert_eq!((a.status, a.header("location")), (400, String::new()), "{bad:?}: no redirect");
    }
    for (bad, error) in [
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("code_challenge_method", ""), ("code_challenge", "")], "invalid_request"),
        (vec![("resource", "https://other.example/mcp")], "invalid_target"),
        (vec![("resource", "")], "invalid_target"),
        (vec![("response_type", "token")], "unsupported_response_type"),
    ] {
        let a = http(&s.addr, "GET", &s.authorize_path(&client, &bad), &[], "").await;
        assert_eq!(a.status, 303, "{bad:?}: {}", a.body);
        let q = a.location_query();
        assert_eq!(q.get("error").map(String::as_str), Some(error), "{bad:?}");
        assert_eq!((q.get("state").map(String::as_str), iss(&q)), (Some("st-123"), Some(s.public.clone())));
    }

    // The admin API: loopback with the static token only.
    let a = http(&s.addr, "GET", "/oauth/admin/pending", &[], "").await;
    assert_eq!(a.status, 401);
    let a = http(&s.addr, "GET", "/oauth/admin/pending", &[("authorization", "Bearer oat_nope")], "").await;
    assert_eq!(a.status, 401);

    // A wrong verifier fails, and the code is gone after that one attempt.
    let q = s.code(&client).await;
    assert_eq!((q.get("state").map(String::as_str), iss(&q)), (Some("st-123"), Some(s.public.clone())));
    let wrong = s.exchange(&client, &q["code"], "wrong-verifier-0123456789-0123456789-0123456789").await;
    assert_eq!(wrong.json()["error"], "invalid_grant");
    assert_eq!(s.exchange(&client, &q["code"], VERIFIER).await.json()["error"], "invalid_grant");

    // A good exchange; its code replayed is refused.
    let q = s.code(&client).await;
    let first = s.exchange(&client, &q["code"], VERIFIER).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let replay = s.exchange(&client, &q["code"], VERIFIER).await;
    assert_eq!((replay.status, replay.json()["error"].as_str()), (400, Some("invalid_grant")));
    // (The replay revoked what the first exchange gave: a_replayed_code_revokes_its_grant.)
    let (access, refresh) = s.tokens(&client).await;

    // The resource server: the token works for tools; garbage does not.
    let url = format!("{}/mcp", s.public);
    let mut mcp = McpClient::connect(&url, Some(&access)).await.expect("connect with the access token");
    let run =
        mcp.call_ok("run_create", json!({"taskName": "OAuth", "rootConversationName": "Root"})).await.expect("run");
    let root = run["rootWorkerId"].as_str().expect("root").to_string();
    mcp.call_ok("worker_progress", json!({"workerId": root, "summary": "via OAuth"})).await.expect("progress");
    assert_eq!(s.mcp_status(TOKEN, &[]).await.0, 200, "the static token still works");
    let (status, challenge) = s.mcp_status("oat_garbage", &[]).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("resource_metadata=\"") && challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(challenge.contains(&format!("{}/.well-known/oauth-protected-resource/mcp", s.public)), "{challenge}");
    let (status, challenge) = s.mcp_status("", &[]).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("scope=\"mcp\"") && !challenge.contains("invalid_token"), "{challenge}");

    // Origins: missing, ChatGPT's and Claude's pass; any other is 403.
    assert_eq!(s.mcp_status(&access, &[("origin", "https://chatgpt.com")]).await.0, 200);
    assert_eq!(s.mcp_status(&access, &[("origin", "https://claude.ai")]).await.0, 200);
    assert_eq!(s.mcp_status(&access, &[("origin", "https://evil.example")]).await.0, 403);
    let a = http(&s.addr, "POST", "/oauth/register", &[JSON, ("origin", "https://evil.example")], &evil).await;
    assert_eq!(a.status, 403);

    // Refresh rotates; the old access token is gone; reusing the old refresh revokes the family.
    let r = s.refresh(&client, &refresh).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let (access2, refresh2) = (
        r.json()["access_token"].as_str().expect("a").to_string(),
        r.json()["refresh_token"].as_str().expect("r").to_string(),
    );
    assert_eq!(s.mcp_status(&access, &[]).await.0, 401);
    assert_eq!(s.mcp_status(&access2, &[]).await.0, 200);
    assert_eq!(s.refresh(&client, &refresh).await.json()["error"], "invalid_grant", "reuse refused");
    assert_eq!(s.refresh(&client, &refresh2).await.json()["error"], "invalid_grant", "the family is revoked");
    assert_eq!(s.mcp_status(&access2, &[]).await.0, 401, "so is its access token");

    // RFC 7009 revocation takes effect at once.
    let (access3, refresh3) = s.tokens(&client).await;
    assert_eq!(s.mcp_status(&access3, &[]).await.0, 200);
    let a = http(&s.addr, "POST", "/oauth/revoke", &[FORM], &form(&[("token", &refresh3)])).await;
    assert_eq!(a.status, 200);
    assert_eq!(s.mcp_status(&access3, &[]).await.0, 401);

    // Registration is rate-limited: within one window, the eleventh is refused at the latest.
    let mut refused = false;
    for _ in 0..11 {
        let body = json!({ "redirect_uris": [REDIRECT] }).to_string();
        if http(&s.addr, "POST", "/oauth/register", &[JSON], &body).await.status == 429 {
            refused = true;
            break;
        }
    }
    assert!(refused, "registrations are capped per minute");

    // No secret in any log line, even at trace level.
    let log = s.d.stderr();
    assert!(log.contains("OAuth grant issued"), "the log was captured");
    for secret in [access.as_str(), &refresh, &access2, &refresh2, &access3, &refresh3, &q["code"], VERIFIER, TOKEN] {
        assert!(!log.contains(secret), "a secret in the log: {secret}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_survive_a_restart_stored_hashed_and_private() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let port = free_port();
    let mut s = start(&data, port, &[]);
    let client = s.register(REDIRECT).await;
    let (access, refresh) = s.tokens(&client).await;
    assert!(s.d.terminate().success());
    let file = data.join("oauth-grants.json");
    let text = std::fs::read_to_string(&file).expect("grants file");
    assert!(!text.contains(&access) && !text.contains(&refresh), "no raw token on disk");
    assert!(text.contains(&oauth::secrets::sha256_hex(&access)), "the hash is");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777, 0o600);
    }
    // Stopped: `oauth list` reads the file.
    let (listed, ok) = s.cli(&["list"]);
    assert!(ok && listed.contains(&client), "{listed}");
    drop(s);

    let s = start(&data, port, &[]);
    assert_eq!(s.mcp_status(&access, &[]).await.0, 200, "the grant survived the restart");
    let (out, ok) = s.cli(&["revoke", "--all"]);
    assert!(ok && out.contains("\"revoked\": 1"), "{out}");
    assert_eq!(s.mcp_status(&access, &[]).await.0, 401, "revoked at once in the running daemon");
    assert_eq!(s.refresh(&client, &refresh).await.json()["error"], "invalid_grant");
    drop(s);

    // A damaged file stops the start with a clear, typed message.
    std::fs::write(&file, b"{\"version\": 1, \"clients\": [").expect("damage");
    let out = std::process::Command::new(orchestrator_bin())
        .args(["serve", "--data-dir", data.to_str().expect("utf-8"), "--listen", "127.0.0.1:0"])
        .args(["--mcp-token", TOKEN, "--public-url", &format!("http://127.0.0.1:{port}")])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("oauth-grants.json is damaged") && !stderr.contains("panicked"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_tokens_and_codes_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(&dir.path().join("a"), free_port(), &["--oauth-access-ttl-ms", "1000"]);
    let client = s.register(REDIRECT).await;
    let (access, refresh) = s.tokens(&client).await;
    let issued = Instant::now();
    let (status, _) = s.mcp_status(&access, &[]).await;
    assert!(status == 200 || issued.elapsed() >= Duration::from_millis(1000), "{status}");
    // Past the lifetime (measured, not guessed): refused, and a refresh gives a new one.
    tokio::time::sleep(Duration::from_millis(1000).saturating_sub(issued.elapsed()) + Duration::from_millis(50)).await;
    let (status, challenge) = s.mcp_status(&access, &[]).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("invalid_token"), "{challenge}");
    assert_eq!(s.refresh(&client, &refresh).await.status, 200);

    let s = start(&dir.path().join("b"), free_port(), &["--oauth-code-ttl-ms", "1"]);
    let client = s.register(REDIRECT).await;
    let q = s.code(&client).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(s.exchange(&client, &q["code"], VERIFIER).await.json()["error"], "invalid_grant");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_only_for_the_public_host_and_loopback_keeps_the_plain_challenge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = Daemon::serve(
        &dir.path().join("data"),
        &["--mcp-token", TOKEN, "--public-url", "https://orch.example.com/team"],
    );
    let addr = d.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let public = [("host", "orch.example.com")];
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"] {
        assert_eq!(http(&addr, "GET", path, &[], "").await.status, 404, "{path} on loopback");
    }
    let prm = http(&addr, "GET", "/.well-known/oauth-protected-resource/team/mcp", &public, "").await;
    assert_eq!(prm.json()["resource"], "https://orch.example.com/team/mcp");
    let meta = http(&addr, "GET", "/.well-known/oauth-authorization-server/team", &public, "").await;
    assert_eq!(meta.json()["token_endpoint"], "https://orch.example.com/team/oauth/token");
    let under = http(&addr, "GET", "/team/.well-known/oauth-authorization-server", &public, "").await;
    assert_eq!(under.status, 200, "also under the prefix");
    // 401 on loopback: the plain challenge; on the public host: the metadata hint.
    let loopback = http(&addr, "POST", "/mcp", &[JSON], "{}").await;
    assert_eq!((loopback.status, loopback.header("www-authenticate")), (401, "Bearer realm=\"orchestrator\"".into()));
    let remote = http(&addr, "POST", "/team/mcp", &[JSON, public[0]], "{}").await;
    assert_eq!(remote.status, 401);
    assert!(
        remote
            .header("www-authenticate")
            .contains("resource_metadata=\"https://orch.example.com/.well-known/oauth-protected-resource/team/mcp\"")
    );
    // The static bearer passes on either host; a foreign host is still 403.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let auth = format!("Bearer {TOKEN}");
    let accept = ("accept", "application/json, text/event-stream");
    let a = http(&addr, "POST", "/team/mcp", &[JSON, accept, public[0], ("authorization", &auth)], &init).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a =
        http(&addr, "POST", "/mcp", &[JSON, accept, ("host", "evil.example"), ("authorization", &auth)], &init).await;
    assert_eq!(a.status, 403);

    // Without --public-url nothing of OAuth exists.
    let plain = Daemon::serve_with_token(&dir.path().join("plain"));
    let addr = plain.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let a = http(&addr, "GET", "/.well-known/oauth-authorization-server", &[], "").await;
    assert_eq!((a.status, a.body.as_str()), (404, ""), "no such route, as before");
    let a = http(&addr, "POST", "/mcp", &[JSON], "{}").await;
    assert_eq!((a.status, a.header("www-authenticate")), (401, "Bearer realm=\"orchestrator\"".into()));
}

#[test]
fn a_bad_public_url_is_a_clear_startup_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    for bad in ["http://orch.example.com", "ftp://x", "https://a@b.example"] {
        let out = std::process::Command::new(orchestrator_bin())
            .args(["serve", "--data-dir", dir.path().to_str().expect("utf-8"), "--listen", "127.0.0.1:0"])
            .args(["--mcp-token", TOKEN, "--public-url", bad])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains("bad --public-url"), "{bad}: {stderr}");
    }
}
