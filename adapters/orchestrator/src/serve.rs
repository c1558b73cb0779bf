//! `orchestrator serve` (MCP over streamable HTTP) and `orchestrator mcp-stdio`.

use crate::engine_thread::EngineThread;
use crate::engine_thread::NotifyWiring;
pub use crate::engine_thread::{HistoryOptions, StoreChoice, TestTimers};
use crate::health;
use address::URL_FILE_NAME;
use address::token::{self, TokenSource};
use anyhow::Context;
use edge::EdgeLimits;
use edge::guard::{self, Guard, REQUEST_BODY_BYTES_MAX};
use mcp::{McpConfig, OrchestratorMcp};
use oauth::{OAuth, OAuthOptions};
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use runtime::ExecutorSink;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long in-flight HTTP requests may take to finish after a shutdown signal.
const DRAIN_MS_MAX: u64 = 10_000;
/// How long open event streams are left before they are closed at shutdown, so that
/// requests that are just being answered still get their answer out.
const STREAMS_GRACE_MS: u64 = 500;
/// How long a daemon that lost its lease waits for requests in flight and then for its
/// engine, each, before it exits anyway. What it waits for is a commit the database may
/// never answer (out of reach: `REQUEST_TIMEOUT_MS_DEFAULT`, 60 s), and whatever it would
/// commit is refused by the newer epoch's fence: exiting with it in flight is a kill -9,
/// which the store survives by design.
const LOST_LEASE_STOP_MS_MAX: u64 = 2_000;

/// Why the daemon could not listen, with a stable code.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Another daemon or program listens on the address.
    #[error(
        "cannot listen on {addr}: another orchestrator daemon or another program already listens there (see which \
         with `ss -ltnp 'sport = :{port}'` or `lsof -i :{port}`); stop it, or start this daemon on a free port with \
         --listen 127.0.0.1:PORT"
    )]
    AddressInUse {
        /// The address asked for.
        addr: SocketAddr,
        /// Its port.
        port: u16,
    },
    /// Any other failure to bind.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

impl ListenError {
    fn new(addr: SocketAddr, source: std::io::Error) -> ListenError {
        match source.kind() {
            std::io::ErrorKind::AddrInUse => ListenError::AddressInUse { addr, port: addr.port() },
            _ => ListenError::Bind { addr, source },
        }
    }

    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            ListenError::AddressInUse { .. } => "ADDRESS_IN_USE",
            ListenError::Bind { .. } => "LISTEN_FAILED",
        }
    }
}

/// Makes the data directory private (0700, files 0600), warning about what was not.
fn secure_data_dir(dir: &std::path::Path) {
    match address::private::secure(dir) {
        Ok(changed) => {
            if let Some(warning) = address::private::warning(dir, &changed) {
                tracing::warn!("{warning}");
            }
        }
        Err(e) => tracing::warn!(dir = %dir.display(), error = %e, "cannot make the data directory private"),
    }
}

/// What `serve` needs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The data directory (store, token, URL file).
    pub data_dir: PathBuf,
    /// Where to listen.
    pub listen: SocketAddr,
    /// A token given by flag or environment, overriding the token file.
    pub token: Option<String>,
    /// Host names accepted besides loopback (for use behind a tunnel).
    pub allow_hosts: Vec<String>,
    /// Timeouts and connection caps at the edge, for every route.
    pub limits: EdgeLimits,
    /// The OAuth authorization server (`--public-url`); `None`: off, as before.
    pub oauth: Option<OAuthOptions>,
    /// How many finished runs the history keeps, and for how long.
    pub history: HistoryOptions,
    /// Where the durable state lives (`--store`): fjall in the data directory, or Postgres.
    pub store: StoreChoice,
    /// Webhooks notified when a worker needs its person or a run ends (`--notify`,
    /// `docs/notifications.md`); empty: none.
    pub notify: Vec<String>,
    /// Extra trusted roots for `https://` targets (`--notify-ca`, PEM); Mozilla's are always in.
    pub notify_ca: Option<PathBuf>,
}

/// The executor bridge's options (`/executor`, docs/protocol/executor.md).
#[derive(Clone, Debug, Default)]
pub struct ExecutorOptions {
    /// A token given by flag or environment, overriding `DIR/executor-token`.
    pub token: Option<String>,
    /// Accept executor connections from peers that are not on loopback.
    pub allow_remote: bool,
    /// Origin prefixes accepted besides `chrome-extension://` and `moz-extension://`.
    pub allow_origins: Vec<String>,
    /// How long a pairing code is good, in ms; `None`: [`crate::pair::PAIR_CODE_TTL_MS`]
    /// (tests shorten it to see a code expire without waiting minutes).
    pub pair_code_ttl_ms: Option<u64>,
    /// Test only: engine timers shortened (executor absence, the dead-man threshold), so
    /// that a test of the real daemon sees in seconds what takes minutes.
    pub timers: crate::engine_thread::TestTimers,
}

/// The bridge as `serve` mounts it.
struct ExecutorMount {
    config: bridge::server::BridgeConfig,
    registry: bridge::server::Registry,
    source: bridge::server::TokenSource,
    /// How long a pairing code is good, in ms.
    pair_code_ttl_ms: u64,
    /// Test only: engine timers shortened.
    timers: crate::engine_thread::TestTimers,
}

/// What `serve` reports once it listens (tests and the binary print from it).
#[derive(Clone, Debug)]
pub struct Listening {
    /// The bound address.
    pub addr: SocketAddr,
    /// The MCP endpoint URL.
    pub url: String,
    /// The token, when it was generated now (to print once).
    pub generated_token: Option<String>,
    /// Where the token lives, when it came from the file.
    pub token_file: Option<PathBuf>,
    /// The executor endpoint URL, when the bridge is mounted.
    pub executor_url: Option<String>,
    /// The executor token, when it was generated now (to print once).
    pub generated_executor_token: Option<String>,
    /// Where the executor token lives, when it came from the file.
    pub executor_token_file: Option<PathBuf>,
    /// The OAuth issuer, when OAuth is on.
    pub oauth_issuer: Option<String>,
    /// A pairing code issued at the first start (the executor token generated now), to
    /// print: a person pairs the extension with it (docs/operator.md "Pairing").
    pub first_pair_code: Option<String>,
    /// How long that code is good, in ms.
    pub pair_code_ttl_ms: u64,
}

/// Runs the daemon until `shutdown` completes (SIGINT/SIGTERM in the binary) or the
/// engine stops by itself (store failure: an error). `on_listening` is called once the
/// socket is bound.
pub async fn serve<X: ExecutorSink + Send + 'static>(
    options: ServeOptions,
    sink: X,
    shutdown: impl std::future::Future<Output = ()>,
    on_listening: impl FnOnce(&Listening, &runtime::Handle),
) -> anyhow::Result<()> {
    serve_inner(options, sink, None, shutdown, on_listening).await
}

/// Runs the daemon as [`serve`] does, with the executor bridge: browser executors
/// connect at `/executor` and the engine's commands reach them.
pub async fn serve_with_executors(
    options: ServeOptions,
    executors: ExecutorOptions,
    shutdown: impl std::future::Future<Output = ()>,
    on_listening: impl FnOnce(&Listening, &runtime::Handle),
) -> anyhow::Result<()> {
    std::fs::create_dir_all(&options.data_dir)
        .with_context(|| format!("cannot create data directory {}", options.data_dir.display()))?;
    let (token, source) = bridge::server::resolve_token(executors.token.as_deref(), &options.data_dir)?;
    let mut config = bridge::server::BridgeConfig::new(token);
    config.allow_remote = executors.allow_remote;
    config.origin_prefixes.extend(executors.allow_origins);
    // Per-host tokens (`orchestrator executor add HOST`), read again whenever the book changes.
    let book = bridge::server::HostBook::in_dir(&options.data_dir);
    config.session.hosts = Some(executor_protocol::HostBookRef(std::sync::Arc::new(book)));
    let registry = bridge::server::Registry::default();
    let sink = bridge::server::BridgeSink::new(registry.clone());
    let pair_code_ttl_ms = executors.pair_code_ttl_ms.unwrap_or(crate::pair::PAIR_CODE_TTL_MS);
    let mount = ExecutorMount { config, registry, source, pair_code_ttl_ms, timers: executors.timers };
    serve_inner(options, sink, Some(mount), shutdown, on_listening).await
}

async fn serve_inner<X: ExecutorSink + Send + 'static>(
    options: ServeOptions,
    sink: X,
    executors: Option<ExecutorMount>,
    shutdown: impl std::future::Future<Output = ()>,
    on_listening: impl FnOnce(&Listening, &runtime::Handle),
) -> anyhow::Result<()> {
    std::fs::create_dir_all(&options.data_dir)
        .with_context(|| format!("cannot create data directory {}", options.data_dir.display()))?;
    options.limits.validate()?;
    let (token, source) = token::resolve(options.token.as_deref(), &options.data_dir)?;
    // Before the engine: a bad --public-url or a damaged grants file stops the start here.
    // On Postgres the grants are the database's, loaded once this daemon leads.
    let mut oauth = match (&options.oauth, &options.store) {
        (Some(o), StoreChoice::Fjall) => {
            let backend = oauth::FileGrants::open(&options.data_dir).context("cannot turn OAuth on")?;
            oauth::grants::forget_elsewhere(&options.data_dir).context("cannot turn OAuth on")?;
            let started = OAuth::start(o, Box::new(backend), &token, options.limits.body_read_timeout_ms);
            Some(Arc::new(started.context("cannot turn OAuth on")?))
        }
        (Some(o), StoreChoice::Postgres(url)) => {
            o.validate().context("cannot turn OAuth on")?;
            let place = store_pg::target_name(url).map_err(|e| anyhow::anyhow!("[{}] {e}", e.code()))?;
            let place = format!("the PostgreSQL database {place}");
            oauth::grants::note_elsewhere(&options.data_dir, &place).context("cannot turn OAuth on")?;
            None
        }
        (None, _) => None,
    };
    // The pairing codes' hash key, before anything is started that would need stopping.
    let mut pair_key = [0u8; 32];
    getrandom::fill(&mut pair_key).map_err(|e| anyhow::anyhow!("the OS random source failed: {e}"))?;
    // Before the store opens: what it holds is private from the start.
    secure_data_dir(&options.data_dir);
    let (wiring, posts, tls_roots) = notify_wiring(&options)?;
    let timers = executors.as_ref().map(|m| m.timers).unwrap_or_default();
    let mut shutdown = std::pin::pin!(shutdown);
    let url_file = options.data_dir.join(URL_FILE_NAME);
    let times = crate::leader::LeaseTimes::from_timers(&timers);
    // On Postgres the listener is bound first: a standby answers on it until it leads.
    let tokens_saved = matches!(options.store, StoreChoice::Postgres(_));
    let (mut engine, keeper, early_listener) = match &options.store {
        StoreChoice::Postgres(url) => {
            let listener = edge::bind(options.listen).map_err(|e| ListenError::new(options.listen, e))?;
            let listener = listener.into_std().context("cannot take the listener")?;
            // A standby can be reached too: its tokens are written now (for `doctor`, and
            // for the day it leads).
            save_tokens(&token, &source, executors.as_ref())?;
            let my_url = match &options.oauth {
                Some(o) => format!("{}/mcp", o.public_url.trim_end_matches('/')),
                None => format!("http://{}/mcp", listener.local_addr()?),
            };
            let candidate = crate::leader::Candidate {
                url,
                me: crate::leader::daemon_id(&options.data_dir)?,
                my_url,
                times,
                listener: &listener,
                limits: options.limits.clone(),
                url_file: &url_file,
            };
            let Some((store, keeper)) = crate::leader::lead(candidate, shutdown.as_mut()).await? else {
                let _ = std::fs::remove_file(&url_file);
                tracing::info!("stopped while standing by");
                return Ok(());
            };
            if let Some(o) = options.oauth.clone() {
                let (url, epoch, dir) = (url.clone(), store.epoch(), options.data_dir.clone());
                let (token, body_ms) = (token.clone(), options.limits.body_read_timeout_ms);
                let started = tokio::task::spawn_blocking(move || {
                    crate::oauth_pg::start_oauth(&o, &url, epoch, &dir, &token, body_ms)
                });
                oauth = Some(started.await.context("the thread starting OAuth died")??);
            }
            let engine =
                EngineThread::start_on_postgres(&options.data_dir, store, options.history, sink, wiring, timers)
                    .await?;
            (engine, Some(keeper), Some(listener))
        }
        StoreChoice::Fjall => {
            let engine =
                EngineThread::start_timed(&options.data_dir, &options.store, options.history, sink, wiring, timers)
                    .await?;
            (engine, None, None)
        }
    };
    let notifications = posts.as_ref().map(|p| p.status.clone());
    let notify_test = Arc::new(crate::notify_test_route::TestState {
        targets: crate::notify::check_targets(&options.notify).unwrap_or_default(),
        secret: posts.as_ref().map(|p| p.secret.clone()),
        tls: tls_roots.clone(),
        mcp_token: token.clone(),
    });
    if let Some(Posts { notices, secret, tls, status }) = posts {
        tokio::spawn(crate::notify::poster(notices, engine.handle.clone(), secret, tls, status));
    }
    let bound = match early_listener {
        Some(listener) => tokio::net::TcpListener::from_std(listener),
        None => edge::bind(options.listen),
    };
    let listener = match bound {
        Ok(listener) => listener,
        Err(e) => {
            let _ = engine.stop().await;
            return Err(ListenError::new(options.listen, e).into());
        }
    };
    // Only now that the daemon can be reached: a first start that failed before this point
    // wrote no token that nobody was shown.
    if !tokens_saved && let Err(e) = save_tokens(&token, &source, executors.as_ref()) {
        let _ = engine.stop().await;
        return Err(e);
    }
    let addr = listener.local_addr()?;
    let url = format!("http://{addr}/mcp");
    if let Err(e) = std::fs::write(&url_file, format!("{url}\n")) {
        tracing::warn!(file = %url_file.display(), error = %e, "cannot record the MCP URL for `orchestrator status`");
    }
    // The files made since the first check (the store's, the tokens, the URL) too.
    secure_data_dir(&options.data_dir);

    let mut guard = Guard::new(&token, &options.allow_hosts, REQUEST_BODY_BYTES_MAX)
        .with_body_read_timeout_ms(options.limits.body_read_timeout_ms);
    if let Some(oauth) = &oauth {
        guard = guard.with_access_tokens(oauth.clone());
    }
    let guard = Arc::new(guard);
    let (stopping_tx, stopping_rx) = watch::channel(false);
    let streams = CancellationToken::new();
    let http_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(guard.hosts().to_vec())
        .with_max_request_body_bytes(REQUEST_BODY_BYTES_MAX)
        .with_cancellation_token(streams.clone())
        // Stateless, as MCP 2026-07-28 is for every client: no tool of ours sends anything
        // but its own answer, so no session or standing SSE stream is needed, and a plain
        // JSON answer skips the session task and the SSE framing (32-client worker_progress
        // from 6,790 to 11,804 calls/s; docs/benchmarks.md).
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let handle = engine.handle.clone();
    let mcp_config = McpConfig::new(stopping_rx.clone());
    let service = StreamableHttpService::new(
        move || Ok(OrchestratorMcp::new(handle.clone(), mcp_config.clone())),
        Arc::new(LocalSessionManager::default()),
        http_config,
    );
    let mut app = axum::Router::new();
    if let Some(oauth) = &oauth {
        if !oauth.public.prefix.is_empty() {
            app = app.nest_service(&format!("{}/mcp", oauth.public.prefix), service.clone());
        }
        app = app.merge(oauth.router());
    }
    let health = health::router(health::HealthState {
        token: token.clone(),
        registry: executors.as_ref().map(|mount| mount.registry.clone()),
        public_url: oauth.as_ref().map(|o| o.public.issuer()),
        notifications,
    });
    // `/health` checks its own caller (loopback, no Origin, the static token), so it is
    // merged after the MCP guard's layer.
    let mut app = app
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(guard, guard::guard))
        .merge(health)
        .merge(crate::notify_test_route::router(notify_test));
    // The executor endpoint has its own guard (peer, Origin, token in the hello), so it
    // is merged after the MCP guard's layer.
    let mut executor_listening = (None, None, None);
    let (mut first_pair_code, mut pair_code_ttl_ms) = (None, crate::pair::PAIR_CODE_TTL_MS);
    if let Some(mount) = executors {
        // Pairing hands out the executor token, so it is mounted with the bridge and follows
        // its peer and Origin rules; like `/health` it checks its own caller.
        let mut pair_hosts = options.allow_hosts.clone();
        if let Some(oauth) = &oauth {
            pair_hosts.push(oauth.public.host.clone());
        }
        let pair = Arc::new(crate::pair_route::PairState {
            book: std::sync::Mutex::new(crate::pair::PairBook::new(pair_key, mount.pair_code_ttl_ms)),
            executor_token: mount.config.session.token.clone(),
            mcp_token: token.clone(),
            mcp_url: url.clone(),
            allow_remote: mount.config.allow_remote,
            origin_prefixes: mount.config.origin_prefixes.clone(),
            hosts: pair_hosts,
            body_read_timeout_ms: options.limits.body_read_timeout_ms,
            host_book: Some(Arc::new(bridge::server::HostBook::in_dir(&options.data_dir))),
        });
        pair_code_ttl_ms = mount.pair_code_ttl_ms;
        if matches!(mount.source, bridge::server::TokenSource::Generated(_)) {
            first_pair_code = pair.issue(oauth::now_ms());
        }
        app = app.merge(crate::pair_route::router(pair));
        executor_listening = (
            Some(format!("ws://{addr}/executor")),
            matches!(mount.source, bridge::server::TokenSource::Generated(_))
                .then(|| mount.config.session.token.clone()),
            match &mount.source {
                bridge::server::TokenSource::File(p) | bridge::server::TokenSource::Generated(p) => Some(p.clone()),
                bridge::server::TokenSource::Given => None,
            },
        );
        let mut bridge = bridge::server::Bridge::new(mount.config, mount.registry, engine.handle.clone())
            .with_stopping(stopping_rx.clone());
        // The dashboard approves OAuth requests over the operator channel when OAuth is on.
        if let Some(oauth) = &oauth {
            bridge = bridge.with_grants(oauth.clone());
        }
        app = app.merge(bridge.router());
    }

    let listening = Listening {
        addr,
        url: url.clone(),
        generated_token: matches!(source, TokenSource::Generated(_)).then(|| token.clone()),
        token_file: match &source {
            TokenSource::File(p) | TokenSource::Generated(p) => Some(p.clone()),
            TokenSource::Given => None,
        },
        executor_url: executor_listening.0,
        generated_executor_token: executor_listening.1,
        executor_token_file: executor_listening.2,
        oauth_issuer: oauth.as_ref().map(|o| o.public.issuer()),
        first_pair_code,
        pair_code_ttl_ms,
    };
    on_listening(&listening, &engine.handle);
    tracing::info!(%url, data_dir = %options.data_dir.display(), "serving MCP");

    let accept = CancellationToken::new();
    // Every route on the listener gets the edge's timeouts and caps (the edge crate).
    let server = tokio::spawn(edge::serve(listener, app, options.limits, accept.clone()));
    let (engine_failure, lease_gone) = tokio::select! {
        () = shutdown.as_mut() => (None, false),
        result = engine.stopped() => (Some(result.err().unwrap_or_else(|| anyhow::anyhow!("the engine stopped"))), false),
        lost = lease_lost(keeper.as_ref(), &options.store, times) => (Some(lost), true),
    };
    let drain_ms_max = if lease_gone { LOST_LEASE_STOP_MS_MAX } else { DRAIN_MS_MAX };
    match &engine_failure {
        None => tracing::info!("shutting down: no new connections; finishing requests in flight"),
        Some(e) => tracing::error!(error = %e, "the engine stopped; shutting down"),
    }
    // Stop accepting, answer long polls at once, give answers in flight a moment to
    // leave, then close the remaining event streams.
    accept.cancel();
    let _ = stopping_tx.send(true);
    let drained = async {
        tokio::time::sleep(Duration::from_millis(STREAMS_GRACE_MS)).await;
        streams.cancel();
        server.await
    };
    match tokio::time::timeout(Duration::from_millis(drain_ms_max), drained).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "the HTTP server task failed"),
        Err(_) => tracing::warn!("requests still in flight after {drain_ms_max} ms; stopping anyway"),
    }
    let _ = std::fs::remove_file(&url_file);
    let stopped = if lease_gone {
        let bound = Duration::from_millis(LOST_LEASE_STOP_MS_MAX);
        tokio::time::timeout(bound, engine.stop()).await.unwrap_or_else(|_| {
            tracing::warn!(
                "the engine still waits for the database to answer a commit after {LOST_LEASE_STOP_MS_MAX} ms; \
                 exiting without it (a newer leader's epoch refuses it; with none, it may still land when the \
                 database answers, unacknowledged)"
            );
            Ok(())
        })
    } else {
        engine.stop().await
    };
    if let Some(e) = engine_failure {
        return Err(e);
    }
    stopped?;
    if let Some(keeper) = keeper {
        // A clean stop lets the lease lapse now: a standby takes over within its poll.
        let _ = tokio::task::spawn_blocking(move || keeper.release()).await;
    }
    tracing::info!("stopped cleanly");
    Ok(())
}

/// Writes the tokens generated now (the MCP token, the executor token when the bridge is
/// mounted), once the daemon can be reached: a start that failed before wrote no token that
/// nobody was shown.
fn save_tokens(token: &str, source: &TokenSource, executors: Option<&ExecutorMount>) -> anyhow::Result<()> {
    token::save(token, source)?;
    if let Some(mount) = executors {
        bridge::server::save_token(&mount.config.session.token, &mount.source)?;
    }
    Ok(())
}

/// Completes when the leader's lease is lost (never without a lease: the fjall store).
async fn lease_lost(
    keeper: Option<&store_pg::lease::Keeper>,
    store: &StoreChoice,
    times: crate::leader::LeaseTimes,
) -> anyhow::Error {
    match (keeper, store) {
        (Some(keeper), StoreChoice::Postgres(url)) => crate::leader::lost(keeper, url, times).await,
        _ => std::future::pending().await,
    }
}

/// What the poster takes: the notices, the secret it signs with, its TLS client and where
/// it books failures.
struct Posts {
    notices: tokio::sync::mpsc::UnboundedReceiver<engine::notify::Notice>,
    secret: Arc<[u8]>,
    tls: Arc<rustls::ClientConfig>,
    status: Arc<crate::notify::NotifyStatus>,
}

/// `--notify`: the targets checked, the `--notify-ca` roots read and the secret read or
/// created, before the engine starts (a mistyped target or a bad CA file stops the start).
fn notify_wiring(options: &ServeOptions) -> anyhow::Result<(NotifyWiring, Option<Posts>, Arc<rustls::ClientConfig>)> {
    let coded = |e: crate::notify::NotifyError| anyhow::anyhow!("{}: {e}", e.code());
    let tls = crate::notify::tls::client_config(options.notify_ca.as_deref()).map_err(coded)?;
    if options.notify.is_empty() {
        return Ok((NotifyWiring::default(), None, tls));
    }
    let targets = crate::notify::check_targets(&options.notify).map_err(coded)?;
    let secret: Arc<[u8]> = crate::notify::secret(&options.data_dir).map_err(coded)?.into();
    let (tx, notices) = tokio::sync::mpsc::unbounded_channel();
    let sink: Box<dyn runtime::NotifySink> = Box::new(crate::notify::ChannelSink(tx));
    let status = crate::notify::NotifyStatus::new(targets.len());
    let wiring = NotifyWiring { targets, sink: Some(sink), status: Some(status.clone()) };
    Ok((wiring, Some(Posts { notices, secret, tls: tls.clone(), status }), tls))
}

/// Serves the same tools over stdin/stdout until the client closes the stream or
/// `shutdown` completes. Logs must go to stderr: stdout is the protocol.
pub async fn mcp_stdio<X: ExecutorSink + Send + 'static>(
    data_dir: PathBuf,
    sink: X,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let mut engine =
        EngineThread::start(&data_dir, &StoreChoice::Fjall, HistoryOptions::default(), sink, NotifyWiring::default())
            .await?;
    secure_data_dir(&data_dir);
    let (stopping_tx, stopping_rx) = watch::channel(false);
    let server = OrchestratorMcp::new(engine.handle.clone(), McpConfig::new(stopping_rx));
    let running = match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => running,
        Err(e) => {
            let _ = engine.stop().await;
            return Err(anyhow::anyhow!("MCP over stdio failed to start: {e}"));
        }
    };
    let cancel = running.cancellation_token();
    tracing::info!(data_dir = %data_dir.display(), "serving MCP over stdio");
    let mut waiting = std::pin::pin!(running.waiting());
    let engine_failure = tokio::select! {
        _ = &mut waiting => None,
        () = shutdown => {
            let _ = stopping_tx.send(true);
            cancel.cancel();
            let _ = waiting.await;
            None
        }
        result = engine.stopped() => Some(result.err().unwrap_or_else(|| anyhow::anyhow!("the engine stopped"))),
    };
    let stopped = engine.stop().await;
    if let Some(e) = engine_failure {
        return Err(e);
    }
    stopped
}

/// Completes on SIGINT or SIGTERM.
pub async fn signals() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
