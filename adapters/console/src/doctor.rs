//! `orchestrator doctor`: the installation checked in order (the daemon answers, its data
//! directory and store lock, the tokens and their permissions, the connected executors
//! named by kind and speaking this daemon's protocol, for each worker kind in use a
//! capable executor, the public address's OAuth metadata), each failing check
//! with what to do. Read-only: it
//! changes nothing, and takes the store lock only for an instant when no daemon answers.

use crate::client::McpClient;
use address::token;
use address::{HEALTH_PATH, Health, LISTEN_DEFAULT, PublicUrl, URL_FILE_NAME};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::Value;
use std::fmt::Write;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the daemon has to answer `/health` or a metadata request.
const HEALTH_ANSWER_MS_MAX: u64 = 5_000;
/// The largest metadata document doctor reads.
const METADATA_BYTES_MAX: usize = 64 * 1024;
/// The store's lock file, as `FjallStore` takes it.
const STORE_LOCK_PATH: [&str; 2] = ["store", "store.lock"];

/// What `doctor` checks.
#[derive(Clone, Debug)]
pub struct DoctorOptions {
    /// The daemon's data directory.
    pub data_dir: PathBuf,
    /// The MCP token given by flag or environment (a daemon started with `--mcp-token`).
    pub mcp_token: Option<String>,
    /// The executor token's file name in the data directory (the bridge's
    /// `TOKEN_FILE_NAME`, given by the composition root: this crate does not link the bridge).
    pub executor_token_file_name: &'static str,
}

/// One check's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It holds; what was seen.
    Pass(String),
    /// It does not; what was seen and what to do.
    Fail {
        /// What is wrong.
        found: String,
        /// What the person should do.
        fix: String,
    },
    /// Not checked, and why (an earlier failure, or nothing to check).
    Skip(String),
}

/// A check by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// Short name ("daemon", "tokens", ...).
    pub name: &'static str,
    /// Its verdict.
    pub verdict: Verdict,
}

/// Every check, in order, and the text for a terminal.
#[derive(Clone, Debug)]
pub struct Report {
    /// The checks in the order they ran.
    pub checks: Vec<Check>,
}

impl Report {
    /// True when no check failed.
    pub fn healthy(&self) -> bool {
        !self.checks.iter().any(|c| matches!(c.verdict, Verdict::Fail { .. }))
    }

    /// The report as lines for a person.
    pub fn text(&self, data_dir: &Path) -> String {
        let mut out = format!("orchestrator doctor (data directory {})\n", data_dir.display());
        for check in &self.checks {
            let _ = match &check.verdict {
                Verdict::Pass(found) => writeln!(out, "  ok    {}: {found}", check.name),
                Verdict::Skip(why) => writeln!(out, "  skip  {}: {why}", check.name),
                Verdict::Fail { found, fix } => {
                    writeln!(out, "  FAIL  {}: {found}\n        what to do: {fix}", check.name)
                }
            };
        }
        let failed = self.checks.iter().filter(|c| matches!(c.verdict, Verdict::Fail { .. })).count();
        let _ =
            if failed == 0 { writeln!(out, "All checks passed.") } else { writeln!(out, "{failed} check(s) failed.") };
        out
    }
}

/// What the daemon check learned, for the checks after it.
enum Reached {
    /// It answered.
    Answered(Health),
    /// Nothing answers at the URL.
    Silent,
    /// Something answered, but not as a daemon this doctor can read.
    Refused,
}

/// Runs every check in order.
pub async fn run(options: &DoctorOptions) -> Report {
    let dir = &options.data_dir;
    let url_file = dir.join(URL_FILE_NAME);
    let recorded_url = std::fs::read_to_string(&url_file).ok().map(|s| s.trim().to_string());
    let mcp_url = recorded_url.clone().unwrap_or_else(|| format!("http://{LISTEN_DEFAULT}/mcp"));
    let token_file = dir.join(token::TOKEN_FILE_NAME);
    let token = options.mcp_token.clone().or_else(|| token::read(&token_file).ok().flatten());

    let mut checks = Vec::new();
    let (daemon, reached) = check_daemon(&mcp_url, token.as_deref(), recorded_url.is_some(), dir).await;
    checks.push(daemon);
    checks.push(check_data_dir(dir));
    checks.push(check_store_lock(dir, &reached));
    checks.push(check_tokens(dir, options.mcp_token.is_some(), options.executor_token_file_name));
    checks.push(check_executors(&reached, &mcp_url));
    let in_use = match (&reached, token.as_deref()) {
        (Reached::Answered(_), Some(token)) => kinds_in_use(&mcp_url, token).await,
        _ => None,
    };
    checks.push(check_kinds(&reached, in_use.as_ref()));
    checks.push(check_public(&reached, &mcp_url).await);
    checks.push(Check {
        name: "ChatGPT app",
        verdict: Verdict::Skip(
            "the daemon cannot see the name you gave its app in ChatGPT: check that the extension's \
             app name setting is that name (docs/connect.md)"
                .into(),
        ),
    });
    Report { checks }
}

async fn check_daemon(mcp_url: &str, token: Option<&str>, recorded: bool, dir: &Path) -> (Check, Reached) {
    let name = "daemon";
    let start = format!("start it: orchestrator serve --data-dir {}", dir.display());
    let Some(token) = token else {
        let fix = format!(
            "{start} (it writes {}), or give the token it was started with: --mcp-token",
            dir.join(token::TOKEN_FILE_NAME).display()
        );
        return (fail(name, "no MCP token to ask it with", fix), Reached::Refused);
    };
    let health_url = mcp_url.strip_suffix("/mcp").map(|base| format!("{base}{HEALTH_PATH}"));
    let Some(health_url) = health_url else {
        return (fail(name, format!("{mcp_url} is not an /mcp address"), start), Reached::Refused);
    };
    let asked = tokio::time::timeout(Duration::from_millis(HEALTH_ANSWER_MS_MAX), ask_health(&health_url, token)).await;
    match asked {
        Ok(Ok(Asked::Health(health))) => {
            let found = format!("answers at {mcp_url} (version {})", health.version);
            (Check { name, verdict: Verdict::Pass(found) }, Reached::Answered(health))
        }
        Ok(Ok(Asked::Status(401))) => (
            fail(
                name,
                format!("the daemon at {mcp_url} refuses the MCP token"),
                "it was started with another --mcp-token: give that one to doctor (--mcp-token or ORCHESTRATOR_MCP_TOKEN)",
            ),
            Reached::Refused,
        ),
        Ok(Ok(Asked::Status(status))) => (
            fail(
                name,
                format!("{health_url} answered HTTP {status}"),
                "another program may hold this address, or the daemon is older than this doctor: \
                 check `orchestrator --version` and what listens there",
            ),
            Reached::Refused,
        ),
        Ok(Err(_)) if recorded => (
            fail(
                name,
                format!("nothing answers at {mcp_url}, the address the last daemon recorded: it did not stop cleanly"),
                start,
            ),
            Reached::Silent,
        ),
        Ok(Err(_)) => (fail(name, format!("not running (nothing answers at {mcp_url})"), start), Reached::Silent),
        Err(_) => (
            fail(
                name,
                format!("{health_url} gave no answer within {HEALTH_ANSWER_MS_MAX} ms"),
                "the daemon may be overloaded or stuck: look at its log, or restart it",
            ),
            Reached::Refused,
        ),
    }
}

/// What `/health` said.
enum Asked {
    Health(Health),
    Status(u16),
}

async fn ask_health(url: &str, token: &str) -> anyhow::Result<Asked> {
    let mut client = McpClient::connect_raw(url, Some(token)).await?;
    let answer = client.send(hyper::Method::GET, None, &[], None).await?;
    if answer.status != hyper::StatusCode::OK {
        return Ok(Asked::Status(answer.status.as_u16()));
    }
    match serde_json::from_str(&answer.text) {
        Ok(health) => Ok(Asked::Health(health)),
        Err(_) => Ok(Asked::Status(answer.status.as_u16())),
    }
}

fn check_data_dir(dir: &Path) -> Check {
    let name = "data directory";
    match std::fs::read_dir(dir) {
        Ok(_) => Check { name, verdict: Verdict::Pass(format!("{} is readable", dir.display())) },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => fail(
            name,
            format!("{} does not exist", dir.display()),
            format!("the daemon creates it on its first start: orchestrator serve --data-dir {}", dir.display()),
        ),
        Err(e) => fail(
            name,
            format!("{} cannot be read: {e}", dir.display()),
            format!(
                "run doctor as the user the daemon runs as, or fix the owner: chown -R \"$USER\" {}",
                dir.display()
            ),
        ),
    }
}

fn check_store_lock(dir: &Path, reached: &Reached) -> Check {
    let name = "store lock";
    let lock_path: PathBuf = STORE_LOCK_PATH.iter().fold(dir.to_path_buf(), |p, part| p.join(part));
    match reached {
        Reached::Answered(_) => {
            return Check { name, verdict: Verdict::Pass("held by the running daemon".into()) };
        }
        Reached::Refused => return Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) },
        Reached::Silent => {}
    }
    let Ok(file) = File::options().read(true).write(true).open(&lock_path) else {
        return Check { name, verdict: Verdict::Pass("no store yet (no daemon has started here)".into()) };
    };
    match file.try_lock() {
        // The operating system releases the lock of a process that died: a free lock is
        // the normal state of a stopped daemon. Dropping `file` releases it at once.
        Ok(()) => Check { name, verdict: Verdict::Pass("free (no process holds the store)".into()) },
        Err(TryLockError::WouldBlock) => fail(
            name,
            format!("another process holds {} but no daemon answers", lock_path.display()),
            format!(
                "an `orchestrator mcp-stdio` or a daemon on another address uses this directory: find it with \
                 `fuser {}` (or `lsof`) and stop it, or use its address",
                lock_path.display()
            ),
        ),
        Err(TryLockError::Error(e)) => fail(
            name,
            format!("cannot check {}: {e}", lock_path.display()),
            "check the file system and the directory's permissions",
        ),
    }
}

fn check_tokens(dir: &Path, mcp_given: bool, executor_token_file_name: &str) -> Check {
    let name = "tokens";
    let mut seen = Vec::new();
    for (file, what) in [(token::TOKEN_FILE_NAME, "MCP"), (executor_token_file_name, "executor")] {
        let path = dir.join(file);
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(_) if what == "MCP" && mcp_given => {
                seen.push("MCP token given by flag or environment".to_string());
                continue;
            }
            Err(_) => {
                return fail(
                    name,
                    format!("the {what} token file {} is missing", path.display()),
                    format!("the daemon writes it on its first start: orchestrator serve --data-dir {}", dir.display()),
                );
            }
        };
        if let Some(mode) = loose_mode(&meta) {
            return fail(
                name,
                format!("{} can be read by other users (mode {mode:o})", path.display()),
                format!("chmod 600 {}", path.display()),
            );
        }
        seen.push(format!("{} (0600)", path.display()));
    }
    Check { name, verdict: Verdict::Pass(seen.join(", ")) }
}

/// The file's permission bits when anyone but its owner may read or write it.
#[cfg(unix)]
fn loose_mode(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn loose_mode(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}

/// What a person calls an executor of a kind (`chatgpt`, `codex`, `claude`).
fn kind_name(kind: &str) -> &str {
    match engine::ExecutorKind::parse(kind) {
        Some(k) => caller_protocol::executor_kind_name(k),
        None => kind,
    }
}

/// The connected executors as a person names them: `browser chrome-1, Codex CLI cli-host`
/// (an executor running several kinds is named by each: `browser+Codex CLI both-1`).
fn executors_by_kind(health: &Health) -> String {
    let mut named: Vec<String> = health
        .executor_kinds
        .iter()
        .map(|e| {
            let kinds: Vec<&str> = e.kinds.iter().map(|k| kind_name(k)).collect();
            let kinds = if kinds.is_empty() { "executor".to_string() } else { kinds.join("+") };
            format!("{kinds} {}", e.executor_id)
        })
        .collect();
    // An older daemon lists ids only.
    let listed: Vec<&str> = health.executor_kinds.iter().map(|e| e.executor_id.as_str()).collect();
    named.extend(health.executors.iter().filter(|e| !listed.contains(&e.as_str())).map(|e| format!("executor {e}")));
    named.join(", ")
}

fn check_executors(reached: &Reached, mcp_url: &str) -> Check {
    let name = "executors";
    let Reached::Answered(health) = reached else {
        return Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) };
    };
    let Some(protocol) = health.executor_protocol else {
        return Check { name, verdict: Verdict::Skip("this daemon serves no executor endpoint".into()) };
    };
    if !health.executors.is_empty() {
        let found =
            format!("{} connected ({}), protocol v{protocol}", health.executors.len(), executors_by_kind(health));
        return Check { name, verdict: Verdict::Pass(found) };
    }
    let endpoint = mcp_url.replacen("http://", "ws://", 1).replace("/mcp", "/executor");
    if let Some(refused) = health.refused_hellos.last() {
        return fail(
            name,
            format!(
                "an executor (a browser extension or a CLI executor) asked for protocol v{} and was refused; this \
                 daemon speaks v{protocol}",
                refused.protocol
            ),
            "update whichever of the two is older (the executor or the daemon) so that both speak the same version",
        );
    }
    fail(
        name,
        "no executor is connected (no browser extension, no CLI executor)".to_string(),
        format!(
            "for ChatGPT workers open the browser with the Orchestrator extension and give it the daemon address \
             {endpoint} and the executor token (the file executor-token in the data directory); for Codex or Claude \
             Code workers run orchestrator executor-cli"
        ),
    )
}

/// The executor kinds of the unfinished workers of every unfinished run, with how many
/// workers need each (`None` when the daemon could not be asked).
async fn kinds_in_use(mcp_url: &str, token: &str) -> Option<std::collections::BTreeMap<String, usize>> {
    let ask = async {
        let mut client = McpClient::connect(mcp_url, Some(token)).await?;
        let runs = client.call_ok("run_list", serde_json::json!({ "includeTerminal": false })).await?;
        let mut kinds = std::collections::BTreeMap::new();
        for run in runs.get("runs").and_then(Value::as_array).cloned().unwrap_or_default() {
            let id = run.get("runId").and_then(Value::as_str).unwrap_or_default();
            let workers =
                client.call_ok("worker_list", serde_json::json!({ "runId": id, "includeTerminal": false })).await?;
            for w in workers.get("workers").and_then(Value::as_array).cloned().unwrap_or_default() {
                let kind = w.get("executor").and_then(Value::as_str).unwrap_or("chatgpt").to_string();
                *kinds.entry(kind).or_insert(0) += 1;
            }
        }
        anyhow::Ok(kinds)
    };
    tokio::time::timeout(Duration::from_millis(HEALTH_ANSWER_MS_MAX), ask).await.ok()?.ok()
}

/// For each worker kind in use, a connected executor that runs it.
fn check_kinds(reached: &Reached, in_use: Option<&std::collections::BTreeMap<String, usize>>) -> Check {
    let name = "worker kinds";
    let Reached::Answered(health) = reached else {
        return Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) };
    };
    let Some(in_use) = in_use else {
        return Check { name, verdict: Verdict::Skip("the daemon did not list its workers".into()) };
    };
    if in_use.is_empty() {
        return Check { name, verdict: Verdict::Skip("no unfinished worker".into()) };
    }
    let capable = |kind: &str| health.executor_kinds.iter().filter(|e| e.kinds.iter().any(|k| k == kind)).count();
    let (mut carried, mut missing) = (Vec::new(), Vec::new());
    for (kind, workers) in in_use {
        let workers =
            format!("{workers} unfinished {} worker{}", kind_name(kind), if *workers == 1 { "" } else { "s" });
        match capable(kind) {
            0 => missing.push((kind.as_str(), workers)),
            n => carried.push(format!("{workers}: {n} {} connected", kind_name(kind))),
        }
    }
    if missing.is_empty() {
        return Check { name, verdict: Verdict::Pass(carried.join("; ")) };
    }
    let found: Vec<String> = missing
        .iter()
        .map(|(kind, workers)| format!("{workers} and no {} executor connected", kind_name(kind)))
        .collect();
    let fixes: Vec<&str> = missing
        .iter()
        .map(|(kind, _)| match *kind {
            "chatgpt" => "open the browser profile with the Orchestrator extension",
            _ => "start orchestrator executor-cli on the machine that has the workers' directories",
        })
        .collect();
    let mut fixes = fixes;
    fixes.dedup();
    fail(name, found.join("; "), format!("{}: until then nothing runs them", fixes.join("; ")))
}

async fn check_public(reached: &Reached, mcp_url: &str) -> Check {
    let name = "public address";
    let Reached::Answered(health) = reached else {
        return Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) };
    };
    let Some(issuer) = &health.public_url else {
        return Check {
            name,
            verdict: Verdict::Skip(
                "none (--public-url not given): ChatGPT can reach this daemon only through OpenAI's Secure MCP \
                 Tunnel (docs/connect.md)"
                    .into(),
            ),
        };
    };
    let Ok(public) = PublicUrl::parse(issuer) else {
        return fail(
            name,
            format!("the daemon reports a public address it cannot parse: {issuer}"),
            "restart it with a valid --public-url",
        );
    };
    // Asked over the daemon's own loopback listener with the public Host header: what a
    // client that reaches the public address is told (doctor opens no TLS connections).
    let authority = mcp_url.strip_prefix("http://").and_then(|rest| rest.split('/').next()).unwrap_or_default();
    let origin_path = |url: &str| url.strip_prefix(&public.origin).unwrap_or(url).to_string();
    let resource_doc = get_json(authority, &public.host, &origin_path(&public.resource_metadata())).await;
    let server_path = format!("/.well-known/oauth-authorization-server{}", public.prefix);
    let server_doc = get_json(authority, &public.host, &server_path).await;
    let (resource_doc, server_doc) = match (resource_doc, server_doc) {
        (Ok(r), Ok(s)) => (r, s),
        (Err(e), _) | (_, Err(e)) => {
            return fail(
                name,
                format!("the OAuth metadata for {} cannot be read: {e}", public.host),
                "look at the daemon's log; restart it with --public-url",
            );
        }
    };
    if let Some(problem) = metadata_problem(&public, &resource_doc, &server_doc) {
        return fail(
            name,
            problem,
            "the metadata must name the public address exactly: restart the daemon with the --public-url clients use",
        );
    }
    let found = if public.is_loopback() {
        format!("{} serves consistent OAuth metadata", public.resource())
    } else {
        format!(
            "{} serves consistent OAuth metadata; doctor opens no TLS connections, so check from outside that the \
             address answers: curl -sf {}",
            public.resource(),
            public.resource_metadata()
        )
    };
    Check { name, verdict: Verdict::Pass(found) }
}

/// What is inconsistent between the public address and its two metadata documents.
fn metadata_problem(public: &PublicUrl, resource_doc: &Value, server_doc: &Value) -> Option<String> {
    let text = |doc: &Value, key: &str| doc.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let issuer = public.issuer();
    if text(resource_doc, "resource") != public.resource() {
        return Some(format!(
            "the protected-resource metadata names {:?}, not {}",
            text(resource_doc, "resource"),
            public.resource()
        ));
    }
    let servers = resource_doc.get("authorization_servers").and_then(Value::as_array).cloned().unwrap_or_default();
    if !servers.iter().any(|s| s.as_str() == Some(issuer.as_str())) {
        return Some(format!("the protected-resource metadata does not name the authorization server {issuer}"));
    }
    if text(server_doc, "issuer") != issuer {
        return Some(format!(
            "the authorization server metadata names issuer {:?}, not {issuer}",
            text(server_doc, "issuer")
        ));
    }
    for key in ["authorization_endpoint", "token_endpoint", "registration_endpoint"] {
        if !text(server_doc, key).starts_with(&issuer) {
            return Some(format!("{key} {:?} is not under {issuer}", text(server_doc, key)));
        }
    }
    let s256 = server_doc
        .get("code_challenge_methods_supported")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|v| v == "S256"));
    (!s256).then(|| "the authorization server metadata does not offer PKCE S256".to_string())
}

/// GET `path` from the daemon at `authority` (loopback) with `Host: host`, as JSON.
async fn get_json(authority: &str, host: &str, path: &str) -> anyhow::Result<Value> {
    let fetch = async {
        let stream = tokio::net::TcpStream::connect(authority).await?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        let request = hyper::Request::get(path).header("host", host).body(Full::new(Bytes::new()))?;
        let response = sender.send_request(request).await?;
        let status = response.status();
        let body = http_body_util::Limited::new(response.into_body(), METADATA_BYTES_MAX)
            .collect()
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .to_bytes();
        anyhow::ensure!(status == hyper::StatusCode::OK, "{path} answered HTTP {status}");
        Ok::<Value, anyhow::Error>(serde_json::from_slice(&body)?)
    };
    tokio::time::timeout(Duration::from_millis(HEALTH_ANSWER_MS_MAX), fetch)
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {HEALTH_ANSWER_MS_MAX} ms"))?
}

fn fail(name: &'static str, found: impl Into<String>, fix: impl Into<String>) -> Check {
    Check { name, verdict: Verdict::Fail { found: found.into(), fix: fix.into() } }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_must_name_the_public_address() {
        let public = PublicUrl::parse("https://orch.example.com").expect("public url");
        let resource = json!({ "resource": "https://orch.example.com/mcp", "authorization_servers": ["https://orch.example.com"] });
        let server = json!({
            "issuer": "https://orch.example.com",
            "authorization_endpoint": "https://orch.example.com/oauth/authorize",
            "token_endpoint": "https://orch.example.com/oauth/token",
            "registration_endpoint": "https://orch.example.com/oauth/register",
            "code_challenge_methods_supported": ["S256"],
        });
        assert_eq!(metadata_problem(&public, &resource, &server), None);
        let wrong_resource =
            json!({ "resource": "http://127.0.0.1:7411/mcp", "authorization_servers": ["https://orch.example.com"] });
        assert!(metadata_problem(&public, &wrong_resource, &server).is_some_and(|p| p.contains("127.0.0.1")));
        let mut foreign = server.clone();
        foreign["token_endpoint"] = json!("https://evil.example/token");
        assert!(metadata_problem(&public, &resource, &foreign).is_some_and(|p| p.starts_with("token_endpoint")));
        let mut plain = server.clone();
        plain["code_challenge_methods_supported"] = json!(["plain"]);
        assert!(metadata_problem(&public, &resource, &plain).is_some_and(|p| p.contains("S256")));
    }
}

#[cfg(test)]
mod kind_tests {
    use super::*;
    use address::ExecutorKindsView;
    use std::collections::BTreeMap;

    fn health(executors: &[(&str, &[&str])]) -> Reached {
        Reached::Answered(Health {
            version: "0".into(),
            executor_protocol: Some(1),
            executors: executors.iter().map(|(e, _)| e.to_string()).collect(),
            executor_kinds: executors
                .iter()
                .map(|(e, kinds)| ExecutorKindsView {
                    executor_id: e.to_string(),
                    kinds: kinds.iter().map(|k| k.to_string()).collect(),
                })
                .collect(),
            refused_hellos: Vec::new(),
            public_url: None,
        })
    }

    fn in_use(kinds: &[(&str, usize)]) -> BTreeMap<String, usize> {
        kinds.iter().map(|(k, n)| (k.to_string(), *n)).collect()
    }

    #[test]
    fn executors_are_named_by_kind() {
        let reached = health(&[("chrome-1", &["chatgpt"]), ("cli-host", &["codex", "claude"])]);
        let check = check_executors(&reached, "http://127.0.0.1:7411/mcp");
        assert_eq!(
            check.verdict,
            Verdict::Pass("2 connected (browser chrome-1, Codex CLI+Claude Code CLI cli-host), protocol v1".into())
        );
    }

    #[test]
    fn a_kind_in_use_without_a_capable_executor_fails_even_when_another_kind_is_connected() {
        let reached = health(&[("cli-host", &["codex"])]);
        let check = check_kinds(&reached, Some(&in_use(&[("chatgpt", 1), ("codex", 2)])));
        let Verdict::Fail { found, fix } = check.verdict else { panic!("{check:?}") };
        assert_eq!(found, "1 unfinished browser worker and no browser executor connected");
        assert!(fix.starts_with("open the browser profile with the Orchestrator extension"), "{fix}");
        let carried = check_kinds(&reached, Some(&in_use(&[("codex", 2)])));
        assert_eq!(carried.verdict, Verdict::Pass("2 unfinished Codex CLI workers: 1 Codex CLI connected".into()));
    }

    #[test]
    fn no_unfinished_worker_needs_no_executor() {
        let reached = health(&[]);
        assert!(matches!(check_kinds(&reached, Some(&in_use(&[]))).verdict, Verdict::Skip(_)));
        assert!(matches!(check_kinds(&reached, None).verdict, Verdict::Skip(_)));
    }
}
