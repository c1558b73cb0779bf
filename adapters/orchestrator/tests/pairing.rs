//! Pairing against a real daemon process (docs/operator.md "Pairing"): the first start
//! prints a code that is exchanged once for the executor token; `orchestrator pair` prints
//! a fresh one; wrong, expired (a daemon started with a code lifetime of 0 ms: expired the
//! moment it is issued, no waiting) and reused codes are refused with their stable codes;
//! `pair` with nothing listening or a wrong token is one line saying what to do;
//! a flood is answered 429 with `Retry-After`; a foreign `Host`, a web page's `Origin` and
//! a large body are refused; `executor-cli --pair` saves the tokens 0600 and the saved
//! executor token is welcomed; neither a code nor a token reaches the log.

mod support;

use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use support::{Daemon, orchestrator_bin};
use test_executor::{TestExecutor, hello};

/// One raw HTTP/1.1 exchange: (status, head, JSON body or Null).
fn http(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, Value) {
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status");
    (status, head.to_string(), serde_json::from_str(body).unwrap_or(Value::Null))
}

fn addr_of(daemon: &Daemon) -> String {
    daemon.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string()
}

fn try_code(addr: &str, code: &str) -> (u16, String, Value) {
    http(addr, "POST", "/pair", &[], &format!("{{\"code\":\"{code}\"}}"))
}

/// `orchestrator pair --data-dir DIR`: (exit code, stdout, stderr).
fn pair(dir: &Path) -> (i32, String, String) {
    let out = Command::new(orchestrator_bin())
        .args(["pair", "--data-dir", dir.to_str().expect("utf-8 path")])
        .env_remove("ORCHESTRATOR_MCP_TOKEN")
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .output()
        .expect("run pair");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The code in "Pairing code 4821-7730, valid ..." or "pairing code 4821-7730 (valid ...".
fn code_in(text: &str) -> String {
    let at = text.to_lowercase().find("pairing code ").unwrap_or_else(|| panic!("no code in {text:?}"));
    text[at + "pairing code ".len()..].chars().take(9).collect()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).expect(name).trim().to_string()
}

#[test]
fn the_first_start_prints_a_code_that_works_once_and_pair_prints_another() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let daemon = Daemon::serve(&dir, &[]);
    let addr = addr_of(&daemon);
    let printed = daemon.stdout.join("\n");
    let first = code_in(&printed);
    assert!(printed.contains("(valid for 10 minutes, once)"), "{printed}");

    let (status, _, answer) = http(&addr, "GET", "/pair", &[], "");
    assert_eq!(
        (status, answer["product"].as_str(), answer["pairing"].as_bool()),
        (200, Some("orchestrator"), Some(true))
    );

    let (status, _, answer) = try_code(&addr, &first);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["executorToken"].as_str(), Some(read(&dir, "executor-token").as_str()));
    assert_eq!(answer["mcpUrl"].as_str(), Some(daemon.url.as_str()));
    assert!(answer.get("mcpToken").is_none(), "the extension gets no MCP token: {answer}");
    let (status, _, answer) = try_code(&addr, &first);
    assert_eq!((status, answer["code"].as_str()), (410, Some("PAIR_CODE_USED")), "{answer}");

    let (code, out, err) = pair(&dir);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Pairing code ") && out.contains(", valid for 10 minutes, once.\n"), "{out}");
    assert!(out.contains(&format!("--daemon ws://{addr}/executor")), "{out}");
    let second = code_in(&out);
    assert_ne!(second, first);
    // As the extension sends it: text/plain (no preflight), its origin answered with CORS.
    let origin = "chrome-extension://abcdefghijklmnop";
    let body = format!("{{\"code\":\"{}\"}}", second.replace('-', " "));
    let (status, head, answer) =
        http(&addr, "POST", "/pair", &[("Origin", origin), ("Content-Type", "text/plain")], &body);
    assert_eq!(status, 200, "{answer}");
    assert!(head.to_lowercase().contains(&format!("access-control-allow-origin: {origin}")), "{head}");

    // Neither a code nor a token is logged.
    let log = daemon.stderr();
    for secret in [first.as_str(), second.as_str(), &read(&dir, "executor-token"), &read(&dir, "mcp-token")] {
        assert!(!log.contains(secret) && !log.contains(&secret.replace('-', "")), "{secret} in the log:\n{log}");
    }
    assert!(log.contains("paired a client"), "{log}");
}

#[test]
fn wrong_expired_and_refused_callers() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    // A code good for 0 ms is expired the moment it is issued.
    let daemon = Daemon::serve(&dir, &["--pair-code-ttl-ms", "0"]);
    let addr = addr_of(&daemon);
    let (status, _, answer) = try_code(&addr, &code_in(&daemon.stdout.join("\n")));
    assert_eq!((status, answer["code"].as_str()), (410, Some("PAIR_CODE_EXPIRED")), "{answer}");
    let (status, _, answer) = try_code(&addr, "0000-0000");
    assert_eq!((status, answer["code"].as_str()), (401, Some("PAIR_CODE_WRONG")), "{answer}");

    // Callers that may not pair at all, refused before any code is looked at.
    let evil = http(&addr, "POST", "/pair", &[("Host", "evil.example")], "{\"code\":\"00000000\"}");
    assert_eq!((evil.0, evil.2["code"].as_str()), (403, Some("PAIR_HOST")));
    let page = http(&addr, "POST", "/pair", &[("Origin", "http://127.0.0.1:8000")], "{\"code\":\"00000000\"}");
    assert_eq!((page.0, page.2["code"].as_str()), (403, Some("PAIR_ORIGIN")));
    let large = format!("{{\"code\":\"{}\"}}", "1".repeat(4096));
    let (status, _, answer) = http(&addr, "POST", "/pair", &[], &large);
    assert_eq!((status, answer["code"].as_str()), (413, Some("BODY_TOO_LARGE")), "{answer}");
    let (status, _, answer) = http(&addr, "POST", "/pair", &[], "{\"cod\":1}");
    assert_eq!((status, answer["code"].as_str()), (400, Some("PAIR_BAD_REQUEST")), "{answer}");

    // A fresh code needs the MCP token, on loopback, from no web page.
    let (status, _, _) = http(&addr, "POST", "/pair/code", &[], "");
    assert_eq!(status, 401);
    let bearer = format!("Bearer {}", read(&dir, "mcp-token"));
    let (status, _, _) =
        http(&addr, "POST", "/pair/code", &[("Authorization", &bearer), ("Origin", "chrome-extension://x")], "");
    assert_eq!(status, 403);
    let (status, _, issued) = http(&addr, "POST", "/pair/code", &[("Authorization", &bearer)], "");
    assert_eq!((status, issued["expiresInMs"].as_u64()), (200, Some(0)), "{issued}");
}

#[test]
fn a_flood_of_codes_is_answered_429_with_retry_after_and_the_good_code_waits_too() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let daemon = Daemon::serve(&dir, &[]);
    let addr = addr_of(&daemon);
    let good = code_in(&daemon.stdout.join("\n"));
    let mut statuses = Vec::new();
    for i in 0..8 {
        let (status, head, answer) = try_code(&addr, &format!("{:08}", 10_000_000 + i));
        statuses.push(status);
        if status == 429 {
            assert_eq!(answer["code"].as_str(), Some("PAIR_RATE_LIMITED"), "{answer}");
            let retry = head.lines().find_map(|l| l.to_lowercase().strip_prefix("retry-after: ").map(String::from));
            let retry: u64 = retry.expect("Retry-After").trim().parse().expect("seconds");
            assert!((1..=12).contains(&retry), "{retry}");
        }
    }
    assert_eq!(statuses, [401, 401, 401, 401, 401, 429, 429, 429], "5 tries, then paced");
    // Even the right code waits: a guesser cannot go on, whatever it guesses.
    let (status, _, _) = try_code(&addr, &good);
    assert_eq!(status, 429);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executor_cli_pairs_saves_its_tokens_private_and_is_welcomed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let daemon = Daemon::serve(&dir, &[]);
    let addr = addr_of(&daemon);
    let executor_url = format!("ws://{addr}/executor");
    let code = code_in(&daemon.stdout.join("\n"));
    // The executor's own data directory, as on another machine.
    let own = tmp.path().join("elsewhere");
    let run = |code: &str| {
        Command::new(orchestrator_bin())
            .args(["executor-cli", "--pair", code, "--daemon", &executor_url])
            .args(["--data-dir", own.to_str().expect("utf-8 path")])
            // Stops right after pairing, before any child: the pairing is what is tested.
            .args(["--kinds", "codex", "--codex", "/nonexistent/codex"])
            .env_remove("ORCHESTRATOR_MCP_TOKEN")
            .env_remove("ORCHESTRATOR_DATA_DIR")
            .output()
            .expect("run executor-cli")
    };
    let out = run(&code);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("the codex binary /nonexistent/codex was not found"), "paired, then its own checks: {err}");
    let token = read(&own, "executor-token");
    // Its own token, good for its host id only (kept in its state directory, made from
    // this machine's name), never the shared one.
    let host = read(&own.join("cli-executor"), "executor-id");
    assert_ne!(token, read(&dir, "executor-token"), "a per-host token");
    let book = std::fs::read_to_string(dir.join("executor-hosts")).expect("the daemon's host book");
    assert!(book.contains(&format!("\"host\": \"{host}\"")) && !book.contains(&token), "{book}");
    assert_eq!(read(&own, "mcp-token"), read(&dir, "mcp-token"), "its children call the tools with it");
    #[cfg(unix)]
    for name in ["executor-token", "mcp-token"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(own.join(name)).expect(name).permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}");
    }
    assert!(!err.contains(&token) && !err.contains(&code.replace('-', "")), "no secret on stderr: {err}");
    let (_executor, _) = TestExecutor::hello(&executor_url, hello(&token, &host)).await.expect("welcomed");
    assert!(
        TestExecutor::hello(&executor_url, hello(&token, "another-host")).await.is_err(),
        "its token is not another host's"
    );

    // The same code again: one line saying it was used.
    let again = run(&code);
    let err = String::from_utf8_lossy(&again.stderr).into_owned();
    assert_eq!(again.status.code(), Some(1));
    assert!(err.contains("PAIR_CODE_USED") && err.lines().count() == 1, "{err}");
}

#[test]
fn pair_says_in_one_line_when_nothing_answers_or_the_token_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let run = |args: &[&str]| {
        let out = Command::new(orchestrator_bin())
            .arg("pair")
            .args(args)
            .env_remove("ORCHESTRATOR_MCP_TOKEN")
            .env_remove("ORCHESTRATOR_DATA_DIR")
            .output()
            .expect("run pair");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let dead = format!("http://127.0.0.1:{}/mcp", support::free_port());
    let (code, out, err) = run(&["--url", &dead, "--mcp-token", "some-token-0123456789"]);
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert!(
        err.contains("nothing answers at") && err.contains("orchestrator serve") && err.lines().count() == 1,
        "{err}"
    );

    let daemon = Daemon::serve(&dir, &[]);
    let (code, out, err) = run(&["--url", &daemon.url, "--mcp-token", "wrong-token-0123456789"]);
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert!(err.contains("refuses the given MCP token") && err.lines().count() == 1, "{err}");
}
