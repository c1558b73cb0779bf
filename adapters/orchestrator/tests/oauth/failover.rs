//! OAuth on two daemons sharing one PostgreSQL behind one public address (a loopback
//! forwarder, `support::forward`, `docs/scale-out.md`): the grants are kept in the database,
//! so a connector approved by the leader keeps working on the standby that takes over after
//! kill -9 of it (its access token on `/mcp`, its refresh token rotated), with nothing
//! redone by a person; the offline `oauth list` then says where the grants are. A grants
//! file from the fjall store is imported into an empty database once. Shares the flow
//! helpers of `oauth.rs`.

use super::*;
use store_pg::test_server::TestServer;
use support::Daemon;
use support::forward::{Forward, addr_of};
use support::lease::{leader, lease_args, serves_within, takeover_within};

/// The OAuth state as the database holds it (the grants' JSON).
fn stored_grants(server: &TestServer, url: &str) -> String {
    let rows =
        server.rows(url, "SELECT convert_from(value, 'UTF8') FROM orchestrator_blobs WHERE name = 'oauth-grants'");
    rows.first().and_then(|row| row[0].clone()).expect("the OAuth state is in the database")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connector_approved_by_the_leader_works_on_the_standby_after_kill_9() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut forward = Forward::bind();
    let public = forward.public_url();
    let extra = ["--public-url", public.as_str()];
    let a = leader(tmp.path(), "a", &url, &extra);
    // B's URL file names the public address: B is reached on its own port by the test.
    let b_addr = format!("127.0.0.1:{}", free_port());
    let mut args = lease_args(&url);
    args.extend_from_slice(&extra);
    let b = Daemon::serve_standby_on(&tmp.path().join("b"), &b_addr, &args);
    assert_eq!(b.url, format!("{public}/mcp"));
    let b_url = format!("http://{b_addr}/mcp");
    forward.start(vec![addr_of(&a.url), addr_of(&b_url)]);

    // The connector registers, is approved (on A, by A's operator) and gets its tokens.
    let mut s = Server { d: a, addr: forward.addr.to_string(), public: public.clone() };
    let client = s.register(REDIRECT).await;
    let (access, refresh) = s.tokens(&client).await;
    assert_eq!(s.mcp_status(&access, &[]).await.0, 200, "the token works on A");
    assert!(!s.d.dir.join("oauth-grants.json").exists(), "nothing in A's data directory");
    let stored = stored_grants(&server, &url);
    assert!(stored.contains(&client) && stored.contains(&oauth::secrets::sha256_hex(&access)), "{stored}");
    assert!(!stored.contains(&access) && !stored.contains(&refresh), "tokens only as SHA-256");

    s.d.kill9();
    serves_within(&b_url, takeover_within()).await;
    // The public address now reaches B: the same connector goes on, approved by nobody again.
    let mut s = Server { d: b, addr: forward.addr.to_string(), public };
    assert_eq!(s.mcp_status(&access, &[]).await.0, 200, "A's access token works on B");
    let rotated = s.refresh(&client, &refresh).await;
    assert_eq!(rotated.status, 200, "A's refresh token rotates on B: {}", rotated.body);
    let access2 = rotated.json()["access_token"].as_str().expect("access").to_string();
    assert_eq!(s.mcp_status(&access2, &[]).await.0, 200, "the rotated token works on B");
    assert!(stored_grants(&server, &url).contains(&oauth::secrets::sha256_hex(&access2)), "B stored the rotation");
    assert_eq!(s.refresh(&client, &refresh).await.json()["error"], "invalid_grant", "the old refresh token is spent");
    let (listed, ok) = s.cli(&["list"]);
    assert!(ok && listed.contains(&client), "`oauth list` against the new leader: {listed}");

    // No daemon running: the offline commands say where the grants are, in one line.
    s.d.kill9();
    for args in [&["list"][..], &["revoke", "--all"]] {
        let (out, ok) = s.cli(args);
        assert!(!ok && out.contains("OAUTH_GRANTS_ELSEWHERE") && out.contains("PostgreSQL"), "{args:?}: {out}");
        assert_eq!(out.trim().lines().count(), 1, "{args:?}: one line: {out}");
    }
    let log = s.d.stderr();
    for secret in [access.as_str(), &refresh, &access2, TOKEN] {
        assert!(!log.contains(secret), "a secret in B's log");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grants_file_is_imported_into_an_empty_database_once() {
    let server = TestServer::start();
    let url = server.fresh_database();
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("a");
    let listen = format!("127.0.0.1:{}", free_port());
    let mut forward = Forward::bind();
    let public = forward.public_url();
    forward.start(vec![listen.parse().expect("addr")]);

    // On the fjall store first: the grants go to the file.
    let fjall = Daemon::serve_on(&data, &listen, &["--mcp-token", TOKEN, "--public-url", &public]);
    let mut s = Server { d: fjall, addr: forward.addr.to_string(), public: public.clone() };
    let client = s.register(REDIRECT).await;
    let (access, refresh) = s.tokens(&client).await;
    assert!(s.d.terminate().success());

    // The same data directory on Postgres: the file's grants are imported, and said so.
    let mut args = lease_args(&url);
    args.extend_from_slice(&["--public-url", &public]);
    let pg = Daemon::serve_on(&data, &listen, &args);
    let s = Server { d: pg, addr: forward.addr.to_string(), public: public.clone() };
    assert_eq!(s.mcp_status(&access, &[]).await.0, 200, "the imported grant works");
    assert!(s.d.stderr().contains("imported the OAuth grants file into the database"), "{}", s.d.stderr());
    let rotated = s.refresh(&client, &refresh).await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    let access2 = rotated.json()["access_token"].as_str().expect("access").to_string();
    assert!(stored_grants(&server, &url).contains(&oauth::secrets::sha256_hex(&access2)));
    let file = std::fs::read_to_string(data.join("oauth-grants.json")).expect("the file is left alone");
    assert!(!file.contains(&oauth::secrets::sha256_hex(&access2)), "the rotation went to the database only");
    drop(s);

    // Started again: the database wins, nothing is imported a second time.
    let pg = Daemon::serve_on(&data, &listen, &args);
    let s = Server { d: pg, addr: forward.addr.to_string(), public };
    assert_eq!(s.mcp_status(&access2, &[]).await.0, 200, "the database's state, with the rotation");
    assert_eq!(s.mcp_status(&access, &[]).await.0, 401, "not the file's older one");
    assert!(!s.d.stderr().contains("imported the OAuth grants file"), "{}", s.d.stderr());
}
