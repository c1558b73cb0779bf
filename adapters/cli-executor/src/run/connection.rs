//! The executor process's entry point: its options checked (a clear one-line error for
//! each), the kinds it runs chosen ([`choose_kinds`]: a private `TMPDIR` can be made for
//! the children ([`tmpdir::check`]), then each CLI whose binary is found and
//! passes its checks (for Codex the surface the core
//! relies on, [`crate::codex::surface`]), or exactly the ones `--kinds` asks for), then the daemon's
//! `/executor` WebSocket kept up: connect, `hello`, wait for `welcome`, heartbeat at the
//! interval it announces, serve commands through the [`Router`], and on any drop
//! reconnect with a doubling backoff. Several `--daemon` URLs (a leader and its standbys on
//! a shared PostgreSQL store) are tried in order; a standby's 503 `NOT_LEADER` to the
//! upgrade is followed to the leader it names (its `ws://HOST:PORT/executor`, at most
//! [`address::follow::LEADER_HOPS_MAX`] hops), and the list is tried again from the start
//! after a drop or when no URL led (after the backoff). A daemon that does not answer the
//! upgrade within [`UPGRADE_WAIT_MS`] is passed, and a connected one that sends nothing
//! (not even a pong to the pings) for [`DAEMON_SILENCE_MS_MAX`] is left: a stopped leader
//! keeps its sockets open. A refusal that reconnecting cannot fix (wrong token, replaced,
//! another protocol) ends [`run`].

use crate::Error;
use crate::base::limits::{
    DAEMON_PING_MS, DAEMON_SILENCE_MS_MAX, RECONNECT_BACKOFF_MS_MAX, RECONNECT_BACKOFF_MS_MIN, TOKEN_BYTES_MAX,
    UPGRADE_WAIT_MS, WELCOME_WAIT_MS,
};
use crate::base::settings::{ClaudeSandbox, Settings};
use crate::base::tmpdir;
use crate::base::worker::Out;
use crate::claude::cli::{self, CLAUDE_VERSION};
use crate::codex::{home, surface};
use crate::run::mcp_relay::{McpRelay, RELAY_LEADER_WAIT_MS};
use crate::run::router::{Intro, Reply, Router};
use crate::run::stream::open_stream;
use address::follow::{Follow, executor_url_of, leader_named};
use executor_protocol::ExecutorKindWire;
use futures_util::{SinkExt, StreamExt};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

/// The directory under the state directory where the surface check writes the schema.
const SURFACE_SCRATCH: &str = "surface-check";

/// The daemon's loopback executor endpoint (its default `--listen`).
pub const DAEMON_URL_DEFAULT: &str = "ws://127.0.0.1:7411/executor";

/// Everything [`run`] needs, as the command line gave it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The daemon's executor endpoints (`ws://127.0.0.1:PORT/executor`), in order: a leader
    /// and its standbys; at least one.
    pub urls: Vec<String>,
    /// The executor token file (`<daemon data dir>/executor-token`).
    pub token_file: PathBuf,
    /// This executor's stable name (1 to 128 printable ASCII characters): `--executor-id`,
    /// or the host id kept in the state directory ([`crate::base::identity::host_id`]).
    pub executor_id: String,
    /// How workers' children start, and where the state lives.
    pub settings: Settings,
    /// The kinds to run (`--kinds`): each must pass its checks. `None`: every CLI that does.
    pub kinds: Option<Vec<ExecutorKindWire>>,
    /// Extra trusted roots (PEM) for `wss://` daemons (`--daemon-ca`): a private CA or a
    /// self-signed certificate; Mozilla's roots are always trusted.
    pub daemon_ca: Option<PathBuf>,
    /// Workers' turns this host runs at once (`--turns-max`), announced in `hello`.
    pub turns_max: u32,
    /// The accounts this host's workers run under (`--account KIND=NAME:MAX`), each with
    /// its cap on turns at once across every host that names it, announced in `hello`.
    pub accounts: Vec<executor_protocol::AccountWire>,
    /// Give the children the MCP relay's loopback URL instead of `settings.mcp`'s, so
    /// their calls follow the daemon this executor follows (several `--daemon` URLs and
    /// no `--mcp-url`): [`crate::run::mcp_relay`].
    pub mcp_relay: bool,
}

/// Checks the options, then serves until the daemon refuses this executor for good.
pub async fn run(options: Options) -> Result<(), Error> {
    let token = read_token(&options.token_file)?;
    check_id(&options.executor_id)?;
    if options.urls.is_empty() {
        return Err(Error::BadOption { detail: "no --daemon URL".to_string() });
    }
    if let Some(url) = options.urls.iter().find(|u| !u.starts_with("ws://") && !u.starts_with("wss://")) {
        return Err(Error::BadOption { detail: format!("--daemon {url}: expected ws://HOST:PORT/executor") });
    }
    // Built once, before anything starts, so that a bad --daemon-ca stops the start.
    let tls = address::tls::client_config(options.daemon_ca.as_deref())
        .map_err(|e| Error::BadOption { detail: format!("--daemon-ca {e}") })?;
    let mut settings = options.settings.clone();
    // The children run in their workspaces, not here: a relative --state-dir (their
    // CODEX_HOME and sessions live under it) would name another place for them.
    settings.state_dir = std::path::absolute(&settings.state_dir).map_err(|e| Error::BadOption {
        detail: format!("--state-dir {}: cannot make it absolute: {e}", settings.state_dir.display()),
    })?;
    let relay = match (options.mcp_relay, settings.mcp.as_mut()) {
        (true, Some(mcp)) => {
            let relay = McpRelay::start(tls.clone(), Duration::from_millis(RELAY_LEADER_WAIT_MS)).await?;
            tracing::info!(url = relay.url(), "the children's MCP calls go through this relay to the leader");
            mcp.url = relay.url().to_string();
            Some(relay)
        }
        _ => None,
    };
    settings.kinds = choose_kinds(options.kinds.as_deref(), &mut settings).await?;
    tracing::info!(kinds = ?settings.kinds, "running these kinds of workers");
    let kinds: Vec<engine::ExecutorKind> = settings.kinds.iter().map(|k| engine::ExecutorKind::from(*k)).collect();
    if let Some(problem) = executor_protocol::accounts_problem(&options.accounts, &kinds) {
        return Err(Error::BadOption { detail: format!("--account: {problem}") });
    }
    if let Some(dir) = &settings.workspace {
        if !Path::new(dir).is_dir() {
            return Err(Error::BadOption { detail: format!("--workspace {dir}: not a directory") });
        }
        // Kept in the journal with each session: the same directory after a restart from
        // elsewhere.
        let absolute = std::path::absolute(dir)
            .map_err(|e| Error::BadOption { detail: format!("--workspace {dir}: cannot make it absolute: {e}") })?;
        settings.workspace = Some(absolute.display().to_string());
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let epoch = crate::base::identity::next_epoch(&settings.state_dir, now_ms)?;
    tracing::info!(
        executor_id = options.executor_id,
        epoch,
        "this start's epoch: an older process of this id is refused"
    );
    let intro = Intro {
        executor_id: options.executor_id.clone(),
        epoch,
        turns_max: options.turns_max,
        accounts: options.accounts.clone(),
    };
    let (mut router, mut reports) = Router::open(settings).await?;
    let mut backoff = RECONNECT_BACKOFF_MS_MIN;
    loop {
        let mut follow = Follow::new(options.urls.clone());
        let mut connected = false;
        while let Some(url) = follow.next_url() {
            match connect(&url, &tls, &intro, &token, (&mut router, &mut reports), relay.as_ref()).await {
                Ok(welcomed) => {
                    if welcomed {
                        backoff = RECONNECT_BACKOFF_MS_MIN;
                    }
                    tracing::info!(url, "disconnected from the daemon");
                    connected = true;
                    break;
                }
                Err(Error::NotLeader { url, leader }) => {
                    tracing::info!(url, leader, "a standby: following it to the leader");
                    follow.not_leader(&url, &leader, executor_url_of(&leader));
                }
                Err(e @ Error::Refused { .. }) => return Err(e),
                Err(e) => {
                    tracing::warn!(url, "connection: {e}");
                    follow.failed(&url, &e.to_string());
                }
            }
        }
        if !connected && follow.tried() > 1 {
            tracing::warn!("{}", follow.no_leader());
        }
        // Workers go on while disconnected: their results are journaled, the newest
        // state of each goes into the next hello.
        let wait = tokio::time::sleep(Duration::from_millis(backoff));
        tokio::pin!(wait);
        loop {
            tokio::select! {
                () = &mut wait => break,
                Some(_) = reports.recv() => {} // journaled; the next hello has it
            }
        }
        backoff = backoff.saturating_mul(2).min(RECONNECT_BACKOFF_MS_MAX);
    }
}

/// One connection to `url`, until it drops: `Ok(true)` if it was welcomed. A standby's
/// refusal of the upgrade is [`Error::NotLeader`].
async fn connect(
    url: &str,
    tls: &std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
    intro: &Intro,
    token: &str,
    (router, reports): (&mut Router, &mut mpsc::Receiver<Out>),
    relay: Option<&McpRelay>,
) -> Result<bool, Error> {
    let ws_error = |e: tokio_tungstenite::tungstenite::Error| Error::Io {
        op: "websocket",
        path: url.to_string(),
        detail: e.to_string(),
    };
    let upgrade = tokio::time::timeout(Duration::from_millis(UPGRADE_WAIT_MS), async {
        let stream = open_stream(url, tls).await?;
        tokio_tungstenite::client_async_with_config(url, stream, None).await.map_err(|e| match standby_refusal(&e) {
            Some(leader) => Error::NotLeader { url: url.to_string(), leader },
            None => ws_error(e),
        })
    });
    let (mut ws, _) = upgrade.await.map_err(|_| Error::Io {
        op: "websocket",
        path: url.to_string(),
        detail: format!("no answer to the upgrade within {UPGRADE_WAIT_MS} ms"),
    })??;
    ws.send(Message::Text(router.hello(token, intro).into())).await.map_err(ws_error)?;
    let welcome = tokio::time::timeout(Duration::from_millis(WELCOME_WAIT_MS), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(text))) => match router.daemon(text.as_str()).await {
                    Reply::Welcome { heartbeat_ms } => return Ok(heartbeat_ms),
                    Reply::Refused(e) => return Err(e),
                    Reply::Closing => return Err(closed(url)),
                    Reply::Send(_) => continue,
                },
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(ws_error(e)),
                None => return Err(closed(url)),
            }
        }
    })
    .await
    .map_err(|_| Error::Io {
        op: "welcome",
        path: url.to_string(),
        detail: "no welcome in time".to_string(),
    })??;
    tracing::info!(url = url, heartbeat_ms = welcome, "connected to the daemon");
    if let Some(relay) = relay {
        relay.follow(url);
    }
    for frame in router.landings() {
        ws.send(Message::Text(frame.into())).await.map_err(ws_error)?;
    }
    let mut heartbeat = tokio::time::interval(Duration::from_millis(welcome.max(1)));
    heartbeat.tick().await;
    let heartbeat_frame = executor_protocol::encode(&executor_protocol::ExecutorMessage::Heartbeat {});
    // The daemon's liveness: anything it sends (a pong at least, to the pings) within
    // DAEMON_SILENCE_MS_MAX. By the wall clock, and frames read first (`biased`), so a
    // pong that waited while a long command was handled counts.
    let mut ping = tokio::time::interval(Duration::from_millis(DAEMON_PING_MS));
    ping.tick().await;
    let mut heard = std::time::Instant::now();
    loop {
        tokio::select! {
            biased;
            frame = ws.next() => {
                if let Some(Ok(_)) = &frame {
                    heard = std::time::Instant::now();
                }
                match frame {
                    Some(Ok(Message::Text(text))) => match router.daemon(text.as_str()).await {
                        Reply::Send(frames) => {
                            for frame in frames {
                                ws.send(Message::Text(frame.into())).await.map_err(ws_error)?;
                            }
                        }
                        Reply::Refused(e) => return Err(e),
                        Reply::Closing | Reply::Welcome { .. } => {}
                    },
                    Some(Ok(Message::Close(_))) | None => return Ok(true),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        tracing::warn!("websocket: {e}");
                        return Ok(true);
                    }
                }
            }
            Some(out) = reports.recv() => {
                let frame = Router::report(out);
                if let Err(e) = ws.send(Message::Text(frame.into())).await {
                    tracing::warn!("websocket: {e}");
                    return Ok(true);
                }
            }
            _ = heartbeat.tick() => {
                if let Err(e) = ws.send(Message::Text(heartbeat_frame.clone().into())).await {
                    tracing::warn!("websocket: {e}");
                    return Ok(true);
                }
            }
            _ = ping.tick() => {
                if heard.elapsed() > Duration::from_millis(DAEMON_SILENCE_MS_MAX) {
                    tracing::warn!(url, "the daemon sent nothing for {DAEMON_SILENCE_MS_MAX} ms: leaving it");
                    return Ok(true);
                }
                if let Err(e) = ws.send(Message::Ping(Vec::new().into())).await {
                    tracing::warn!("websocket: {e}");
                    return Ok(true);
                }
            }
        }
    }
}

/// The leader a standby names when it refuses the upgrade (HTTP 503 and a `NOT_LEADER`
/// body); `None` for any other failure.
fn standby_refusal(error: &tokio_tungstenite::tungstenite::Error) -> Option<String> {
    let tokio_tungstenite::tungstenite::Error::Http(response) = error else { return None };
    if response.status().as_u16() != 503 {
        return None;
    }
    let body = response.body().as_deref().unwrap_or_default();
    leader_named(&String::from_utf8_lossy(body))
}

fn closed(url: &str) -> Error {
    Error::Io { op: "websocket", path: url.to_string(), detail: "the daemon closed the connection".to_string() }
}

/// The executor token: the file's first line, trimmed, non-empty, printable ASCII.
pub fn read_token(path: &Path) -> Result<String, Error> {
    let bad = |detail: String| Error::Token { path: path.display().to_string(), detail };
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(TOKEN_BYTES_MAX).read_to_string(&mut text))
        .map_err(|e| bad(e.to_string()))?;
    let token = text.trim();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad("the file holds no token (start the daemon once, or check the path)".to_string()));
    }
    Ok(token.to_string())
}

/// The executor id's rule: 1 to 128 printable ASCII characters.
fn check_id(id: &str) -> Result<(), Error> {
    if id.is_empty() || id.len() > 128 || !id.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::BadOption {
            detail: format!("--executor-id {id:?}: expected 1 to 128 printable ASCII characters"),
        });
    }
    Ok(())
}

/// Which kinds of workers this executor runs. Each kind asked for (`--kinds`) must pass
/// its checks, else the start fails with that check's error; without `--kinds`, each CLI
/// that passes (a Claude binary found but refused by its surface check is one error line
/// in the log, and Claude workers are not run). No kind at all is one error naming why.
pub async fn choose_kinds(
    asked: Option<&[ExecutorKindWire]>,
    settings: &mut Settings,
) -> Result<Vec<ExecutorKindWire>, Error> {
    if asked.is_some_and(|kinds| kinds.contains(&ExecutorKindWire::Chatgpt)) {
        return Err(Error::NoKind {
            detail: "--kinds chatgpt: ChatGPT workers run in the browser extension".to_string(),
        });
    }
    // Every child of either kind gets a private TMPDIR: where none can be made, no worker runs.
    tmpdir::check(&settings.state_dir)?;
    let wanted = |kind: ExecutorKindWire| asked.is_none_or(|kinds| kinds.contains(&kind));
    let mut kinds = Vec::new();
    let mut skipped = Vec::new();
    if wanted(ExecutorKindWire::Codex) {
        match check_codex(settings).await {
            Ok(()) => kinds.push(ExecutorKindWire::Codex),
            Err(e) if asked.is_some() => return Err(e),
            Err(e) => skipped.push(e),
        }
    }
    if wanted(ExecutorKindWire::Claude) {
        match check_claude(settings).await {
            Ok(()) => kinds.push(ExecutorKindWire::Claude),
            Err(e) if asked.is_some() => return Err(e),
            Err(e) => skipped.push(e),
        }
    }
    if kinds.is_empty() {
        let why: Vec<String> = skipped.iter().map(Error::to_string).collect();
        return Err(Error::NoKind { detail: format!("no command-line agent to run: {}", why.join("; ")) });
    }
    for e in skipped {
        match e {
            Error::ClaudeSurface { .. }
            | Error::ClaudeSandboxUnavailable { .. }
            | Error::ClaudeSettingsReplaced { .. } => {
                tracing::error!("Claude workers are not run: {e}")
            }
            Error::CodexSurface { .. } => tracing::error!("Codex workers are not run: {e}"),
            e => tracing::info!("not run: {e}"),
        }
    }
    Ok(kinds)
}

/// The codex binary found, its surface checked ([`surface::check`]), the person's login
/// file (`--codex-auth`) and the session configuration checked.
async fn check_codex(settings: &mut Settings) -> Result<(), Error> {
    settings.program = find_program(&settings.program)?;
    // A stand-in's script comes before `app-server` and before the check's own arguments.
    let prefix: Vec<String> = settings.args.iter().take_while(|a| *a != "app-server").cloned().collect();
    surface::check(&settings.program, &prefix, &settings.state_dir.join(SURFACE_SCRATCH)).await?;
    if let Some(file) = &settings.codex_auth {
        settings.codex_auth = Some(home::check_auth_file(file)?);
    }
    home::config_toml(settings.mcp.as_ref())?;
    Ok(())
}

/// The Claude binary found, its sandbox's programs found unless it is off
/// ([`cli::check_sandbox`]; off: one warning), and its surface checked
/// ([`cli::check`]).
async fn check_claude(settings: &mut Settings) -> Result<(), Error> {
    let state_dir = settings.state_dir.clone();
    let Some(claude) = settings.claude.as_mut() else {
        return Err(Error::NoKind { detail: "--kinds claude: no claude binary is configured".to_string() });
    };
    let missing = || Error::ClaudeMissing { program: claude.program.display().to_string(), version: CLAUDE_VERSION };
    claude.program = locate(&claude.program).ok_or_else(missing)?;
    cli::check_sandbox(claude)?;
    if claude.sandbox == ClaudeSandbox::Off {
        tracing::warn!(
            "--claude-sandbox off: Claude workers' allowed commands (Bash) run unconfined, with this user's rights"
        );
    }
    cli::check(&claude.program, &state_dir.join("claude-surface")).await
}

/// `program` as a path to an executable file: as given when it names a path, else looked
/// up on `PATH` ([`Error::CodexMissing`] when nothing fits).
pub fn find_program(program: &Path) -> Result<PathBuf, Error> {
    locate(program).ok_or_else(|| Error::CodexMissing { program: program.display().to_string() })
}

/// `program` as a path to an executable file, if there is one.
fn locate(program: &Path) -> Option<PathBuf> {
    let executable =
        |path: &Path| std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.components().count() > 1 || program.is_absolute() {
        return executable(program).then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused upgrade: `status` and `body`, as tungstenite reports it.
    fn refused(status: u16, body: &str) -> tokio_tungstenite::tungstenite::Error {
        use tokio_tungstenite::tungstenite::http::Response;
        let response = Response::builder().status(status).body(Some(body.as_bytes().to_vec())).expect("response");
        tokio_tungstenite::tungstenite::Error::Http(Box::new(response))
    }

    #[test]
    fn a_standby_refusing_the_upgrade_names_the_leader_to_follow() {
        let body = r#"{"code":"NOT_LEADER","message":"not the leader; the leader is http://10.0.0.5:7411/mcp","leader":"http://10.0.0.5:7411/mcp","epoch":2}"#;
        let leader = standby_refusal(&refused(503, body)).expect("a standby");
        assert_eq!(leader, "http://10.0.0.5:7411/mcp");
        assert_eq!(executor_url_of(&leader).as_deref(), Some("ws://10.0.0.5:7411/executor"));
        assert_eq!(standby_refusal(&refused(401, body)), None, "only a 503");
        assert_eq!(standby_refusal(&refused(503, "busy")), None, "only NOT_LEADER");
        assert_eq!(standby_refusal(&tokio_tungstenite::tungstenite::Error::ConnectionClosed), None);
        let error = Error::NotLeader { url: "ws://s/executor".into(), leader };
        assert_eq!(error.code(), "NOT_LEADER");
    }

    #[test]
    fn tokens_ids_and_programs_are_checked_with_clear_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("executor-token");
        assert_eq!(read_token(&file).map_err(|e| e.code()), Err("TOKEN"));
        std::fs::write(&file, "  \n").expect("write");
        assert_eq!(read_token(&file).map_err(|e| e.code()), Err("TOKEN"));
        std::fs::write(&file, "abcdef0123456789\n").expect("write");
        assert_eq!(read_token(&file).as_deref(), Ok("abcdef0123456789"));
        assert_eq!(check_id("").map_err(|e| e.code()), Err("BAD_OPTION"));
        assert_eq!(check_id("cli 1").map_err(|e| e.code()), Err("BAD_OPTION"));
        assert!(check_id("cli-1").is_ok());
        let err = find_program(Path::new("/nonexistent/codex")).expect_err("missing");
        assert_eq!(err.code(), "CODEX_MISSING");
        assert!(err.to_string().contains("/nonexistent/codex"), "{err}");
        assert!(find_program(Path::new("sh")).is_ok(), "found on PATH");
    }
}
