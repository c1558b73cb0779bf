//! The OAuth edge cases of issue 30 against the real daemon: a registration asking for a
//! secret is registered public, client authentication a public client cannot have is
//! refused, a replayed code revokes its grant, `/token` and `/authorize` are rate limited,
//! and `state` is optional and echoed verbatim. Shares the flow helpers of `oauth.rs`.

use super::*;

/// Issue 30: a registration asking for a client secret (as Claude's hosted connector has
/// been seen to) is registered as a public client and told so (RFC 7591 §3.2.1); the
/// client then goes through the whole flow without a secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_asking_for_a_secret_is_registered_public_with_method_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(&dir.path().join("data"), free_port(), &[]);
    let mut clients = Vec::new();
    for asked in ["client_secret_post", "client_secret_basic"] {
        let body =
            json!({ "client_name": "Test <client>", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": asked });
        let a = http(&s.addr, "POST", "/oauth/register", &[JSON], &body.to_string()).await;
        assert_eq!(a.status, 201, "{asked}: {}", a.body);
        let registered = a.json();
        assert_eq!(registered["token_endpoint_auth_method"], "none", "{asked}: the answer says what was registered");
        assert!(registered.get("client_secret").is_none(), "{asked}: no secret is issued: {registered}");
        clients.push(registered["client_id"].as_str().expect("client_id").to_string());
    }
    for client in &clients {
        let (access, _) = s.tokens(client).await;
        assert_eq!(s.mcp_status(&access, &[]).await.0, 200, "the public client's token works");
    }
}

/// Issue 30: client authentication a public client cannot have is refused with `401
/// invalid_client` (RFC 6749 §5.2), at `/oauth/token` (the code is not spent by it) and
/// `/oauth/revoke`, whatever the secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_authentication_a_public_client_cannot_have_is_refused_with_invalid_client() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(&dir.path().join("data"), free_port(), &[]);
    let client = s.register(REDIRECT).await;
    let q = s.code(&client).await;
    let resource = format!("{}/mcp", s.public);
    let exchange = [
        ("grant_type", "authorization_code"),
        ("code", q["code"].as_str()),
        ("client_id", client.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("resource", resource.as_str()),
    ];
    let basic = format!("Basic {}", base64_basic(&client, "made-up-secret"));
    let a = http(&s.addr, "POST", "/oauth/token", &[FORM, ("authorization", &basic)], &form(&exchange)).await;
    assert_eq!((a.status, a.json()["error"].as_str()), (401, Some("invalid_client")), "{}", a.body);
    assert!(a.header("www-authenticate").starts_with("Basic "), "a challenge in the scheme used");
    let empty_secret = format!("Basic {}", base64_basic(&client, ""));
    let a = http(&s.addr, "POST", "/oauth/token", &[FORM, ("authorization", &empty_secret)], &form(&exchange)).await;
    assert_eq!((a.status, a.json()["error"].as_str()), (401, Some("invalid_client")), "Basic with no secret too");
    let mut with_secret = exchange.to_vec();
    with_secret.push(("client_secret", "made-up-secret"));
    let a = http(&s.addr, "POST", "/oauth/token", &[FORM], &form(&with_secret)).await;
    assert_eq!((a.status, a.json()["error"].as_str()), (401, Some("invalid_client")), "{}", a.body);
    assert_eq!(a.header("www-authenticate"), "", "no Basic challenge for a secret in the body");
    // The refused attempts did not spend the code: the public exchange still works.
    let good = s.exchange(&client, &q["code"], VERIFIER).await;
    assert_eq!(good.status, 200, "{}", good.body);
    let access = good.json()["access_token"].as_str().expect("access").to_string();
    let a =
        http(&s.addr, "POST", "/oauth/revoke", &[FORM, ("authorization", &basic)], &form(&[("token", &access)])).await;
    assert_eq!((a.status, a.json()["error"].as_str()), (401, Some("invalid_client")), "at /oauth/revoke too");
    assert_eq!(s.mcp_status(&access, &[]).await.0, 200, "and nothing was revoked by it");
    let log = s.d.stderr();
    assert!(!log.contains("made-up-secret") && !log.contains(&basic), "no secret in the log");
}

/// `client:secret` in base64, for `Authorization: Basic`.
fn base64_basic(client: &str, secret: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = format!("{client}:{secret}").into_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Issue 30: a code presented again after its exchange revokes the grant it produced
/// (OAuth 2.1 §4.1.3), with every token of it, refreshed or not; other grants stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_code_revokes_the_tokens_issued_from_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(&dir.path().join("data"), free_port(), &[]);
    let client = s.register(REDIRECT).await;
    let (other_access, _) = s.tokens(&client).await;
    let q = s.code(&client).await;
    let first = s.exchange(&client, &q["code"], VERIFIER).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let refresh = first.json()["refresh_token"].as_str().expect("refresh").to_string();
    let r = s.refresh(&client, &refresh).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let (access2, refresh2) = (
        r.json()["access_token"].as_str().expect("a").to_string(),
        r.json()["refresh_token"].as_str().expect("r").to_string(),
    );
    assert_eq!(s.mcp_status(&access2, &[]).await.0, 200);
    let replay = s.exchange(&client, &q["code"], VERIFIER).await;
    assert_eq!((replay.status, replay.json()["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(s.mcp_status(&access2, &[]).await.0, 401, "the refreshed access token is revoked");
    assert_eq!(s.refresh(&client, &refresh2).await.json()["error"], "invalid_grant", "and its refresh token");
    assert_eq!(s.mcp_status(&other_access, &[]).await.0, 200, "another grant of the client stays");
    let log = s.d.stderr();
    assert!(log.contains("a used authorization code was presented again"), "the revocation is logged");
    assert!(!log.contains(&q["code"]), "without the code");
}

/// Issue 30: `/oauth/token` and `/oauth/authorize` are paced per client: past the burst,
/// `429` with `Retry-After`; another client keeps its own budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_and_authorize_are_rate_limited_with_retry_after() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(&dir.path().join("data"), free_port(), &[]);
    let (flooder, bystander) = (s.register(REDIRECT).await, s.register(REDIRECT).await);
    let bad = form(&[
        ("grant_type", "authorization_code"),
        ("code", "oac_made-up"),
        ("client_id", &flooder),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ]);
    let mut statuses = Vec::new();
    let mut retry_after = String::new();
    for _ in 0..60 {
        let a = http(&s.addr, "POST", "/oauth/token", &[FORM], &bad).await;
        if a.status == 429 {
            retry_after = a.header("retry-after");
            assert_eq!(a.json()["error"], "temporarily_unavailable");
        }
        statuses.push(a.status);
    }
    let limit = oauth::rate::TOKEN_REQUESTS_BURST as usize;
    assert!(statuses[..limit].iter().all(|s| *s == 400), "the burst is answered: {statuses:?}");
    assert!(statuses[limit..].contains(&429), "then 429: {statuses:?}");
    let seconds: u64 = retry_after.parse().unwrap_or_else(|_| panic!("Retry-After in seconds: {retry_after:?}"));
    assert!((1..=oauth::rate::TOKEN_REQUEST_INTERVAL_MS.div_ceil(1000)).contains(&seconds), "{seconds}");
    // Unknown clients share one budget, apart from registered ones.
    let unknown = bad.replace(&flooder, "cli_unknown");
    let mut unknown_429 = false;
    for _ in 0..60 {
        unknown_429 |= http(&s.addr, "POST", "/oauth/token", &[FORM], &unknown).await.status == 429;
    }
    assert!(unknown_429, "requests naming no registered client are paced too");
    // The bystander's flow is untouched.
    let (access, _) = s.tokens(&bystander).await;
    assert_eq!(s.mcp_status(&access, &[]).await.0, 200);

    let mut statuses = Vec::new();
    let mut retry_after = String::new();
    for _ in 0..(oauth::rate::AUTHORIZE_REQUESTS_BURST + 25) {
        let a = http(&s.addr, "GET", &s.authorize_path(&flooder, &[("response_type", "token")]), &[], "").await;
        if a.status == 429 {
            retry_after = a.header("retry-after");
        }
        statuses.push(a.status);
    }
    let limit = oauth::rate::AUTHORIZE_REQUESTS_BURST as usize;
    assert!(statuses[..limit].iter().all(|s| *s == 303), "the burst is answered: {statuses:?}");
    assert!(statuses[limit..].contains(&429), "then 429: {statuses:?}");
    assert!(retry_after.parse::<u64>().is_ok_and(|s| s >= 1), "Retry-After in seconds: {retry_after:?}");
    let page = http(&s.addr, "GET", &s.authorize_path(&bystander, &[]), &[], "").await;
    assert_eq!(page.status, 200, "another client can still authorize");
}

/// Issue 30: `state` is optional (PKCE S256, which is not, protects the redirect); when
/// sent it comes back verbatim on the code and on an error, and one past 1,024 bytes is
/// refused on a page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_is_optional_and_echoed_verbatim() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(&dir.path().join("data"), free_port(), &[]);
    let client = s.register(REDIRECT).await;
    // Without state: the consent page; the error redirect carries no state.
    let page = http(&s.addr, "GET", &s.authorize_path(&client, &[("state", "")]), &[], "").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let a =
        http(&s.addr, "GET", &s.authorize_path(&client, &[("state", ""), ("response_type", "token")]), &[], "").await;
    assert_eq!(a.status, 303);
    let q = a.location_query();
    assert_eq!((q.get("error").map(String::as_str), q.get("state")), (Some("unsupported_response_type"), None));
    // With an odd state: back byte for byte.
    let odd = "a b&c=d/é+%";
    let a =
        http(&s.addr, "GET", &s.authorize_path(&client, &[("state", odd), ("response_type", "token")]), &[], "").await;
    assert_eq!(a.location_query().get("state").map(String::as_str), Some(odd));
    let long = "x".repeat(oauth::authority::STATE_BYTES_MAX + 1);
    let a = http(&s.addr, "GET", &s.authorize_path(&client, &[("state", &long)]), &[], "").await;
    assert_eq!((a.status, a.header("location")), (400, String::new()), "too long: a page, no redirect");
}
