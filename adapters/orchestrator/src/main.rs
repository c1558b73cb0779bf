//! `orchestrator`: the daemon binary. Parses flags and hands over to the library.

use anyhow::Context;
use clap::{Parser, Subcommand};
use orchestrator::paths::{URL_FILE_NAME, default_data_dir};
use orchestrator::serve::{ExecutorOptions, LISTEN_DEFAULT, ServeOptions};
use orchestrator::{NoExecutors, edge, token};
use std::net::SocketAddr;
use std::path::PathBuf;

/// The orchestrator: keeps AI workers going across turn boundaries until their job is
/// done, and serves its tools to agents over MCP.
#[derive(Parser, Debug)]
#[command(name = "orchestrator", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The edge's limits, for every route on the listener (/mcp, /executor); docs/limits.md.
#[derive(clap::Args, Debug)]
struct LimitFlags {
    /// A connection waiting for a request (a fresh one, or an idle keep-alive one) is closed unless
    /// that request's headers arrive within this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = edge::HEADER_READ_TIMEOUT_MS_DEFAULT)]
    header_read_timeout_ms: u64,
    /// A connection on which no byte moves in either direction for this many milliseconds is
    /// closed, except while a request is being answered (an events_wait long poll). Applies to the
    /// executor WebSocket too: keep it above twice the 20 s heartbeat.
    #[arg(long, value_name = "MS", default_value_t = edge::IDLE_TIMEOUT_MS_DEFAULT)]
    idle_timeout_ms: u64,
    /// A request body must arrive whole within this many milliseconds of its headers (408 otherwise).
    #[arg(long, value_name = "MS", default_value_t = edge::BODY_READ_TIMEOUT_MS_DEFAULT)]
    body_read_timeout_ms: u64,
    /// Connections open at once (MCP and executors together); past it a new connection gets a 503
    /// and is closed.
    #[arg(long, value_name = "N", default_value_t = edge::CONNECTIONS_MAX_DEFAULT)]
    connections_max: usize,
    /// Connections open at once from one IP address (all local clients share 127.0.0.1); past it, 503.
    #[arg(long, value_name = "N", default_value_t = edge::CONNECTIONS_PER_IP_MAX_DEFAULT)]
    connections_per_ip_max: usize,
}

impl LimitFlags {
    fn limits(&self) -> edge::EdgeLimits {
        edge::EdgeLimits {
            header_read_timeout_ms: self.header_read_timeout_ms,
            idle_timeout_ms: self.idle_timeout_ms,
            body_read_timeout_ms: self.body_read_timeout_ms,
            connections_max: self.connections_max,
            connections_per_ip_max: self.connections_per_ip_max,
        }
    }
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant, reason = "parsed once at start; boxing the flags buys nothing")]
enum Command {
    /// Run the daemon: the engine on its store, MCP over streamable HTTP at http://ADDR:PORT/mcp.
    Serve {
        /// Data directory (store, MCP token). Default: $XDG_DATA_HOME/orchestrator or ~/.local/share/orchestrator.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Address and port to listen on. Keep it on loopback unless a tunnel or proxy fronts it.
        #[arg(long, value_name = "ADDR:PORT", default_value = LISTEN_DEFAULT)]
        listen: SocketAddr,
        /// Bearer token MCP clients must send (Authorization: Bearer TOKEN). Default: DIR/mcp-token,
        /// generated on first start and printed once.
        #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
        mcp_token: Option<String>,
        /// Log level or filter (error, warn, info, debug, trace, or e.g. "info,mcp=debug"). Logs go to stderr.
        #[arg(long, value_name = "LEVEL", default_value = "info,rmcp=warn")]
        log_level: String,
        /// Accept this host name in Host and Origin headers besides loopback (repeatable), e.g. for a tunnel.
        #[arg(long = "allow-host", value_name = "HOST")]
        allow_hosts: Vec<String>,
        /// Token browser executors must send in their hello at ws://ADDR:PORT/executor (separate from
        /// the MCP token). Default: DIR/executor-token, generated on first start and printed once.
        #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_EXECUTOR_TOKEN", hide_env_values = true)]
        executor_token: Option<String>,
        /// Accept executor connections from peers that are not on loopback.
        #[arg(long)]
        executor_allow_remote: bool,
        /// Accept this Origin prefix at /executor besides chrome-extension:// and moz-extension:// (repeatable).
        #[arg(long = "executor-allow-origin", value_name = "PREFIX")]
        executor_allow_origins: Vec<String>,
        #[command(flatten)]
        limits: LimitFlags,
        #[command(flatten)]
        oauth: OAuthFlags,
    },
    /// Serve the same MCP tools over stdin/stdout, for clients that start the server themselves.
    /// Uses the data directory exclusively: do not run it next to `serve` on the same directory.
    McpStdio {
        /// Data directory. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Log level or filter. Logs go to stderr (stdout carries the protocol).
        #[arg(long, value_name = "LEVEL", default_value = "warn")]
        log_level: String,
    },
    /// Print runs, workers, dispositions and attempts of a running daemon (read-only).
    Status {
        /// Data directory of the daemon: its MCP URL and token are read from it. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR", conflicts_with = "url")]
        data_dir: Option<PathBuf>,
        /// MCP endpoint of the daemon, e.g. http://127.0.0.1:7411/mcp (the token then comes from
        /// --mcp-token, ORCHESTRATOR_MCP_TOKEN or the default data directory).
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// Bearer token. Default: the data directory's mcp-token.
        #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
        mcp_token: Option<String>,
    },
    /// Check the installation in order (the daemon answers, its data directory and store
    /// lock, the tokens' permissions, a connected browser extension speaking this daemon's
    /// protocol) and say what to do for each failing check. Exits 0 only when all pass.
    Doctor {
        /// Data directory of the daemon. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The MCP token, when the daemon was started with --mcp-token. Default: DIR/mcp-token.
        #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
        mcp_token: Option<String>,
    },
    /// Run the command-line agent executor: Codex CLI and Claude Code workers (one `codex
    /// app-server` or `claude -p` child per worker), connected to the daemon's /executor as
    /// the browser extension is (the same protocol, the same exactly-once journal). See
    /// docs/cli-agents.md.
    ExecutorCli {
        /// The daemon's executor endpoint.
        #[arg(long, value_name = "URL", default_value = cli_executor::connection::DAEMON_URL_DEFAULT)]
        daemon: String,
        /// Data directory of the daemon: its executor-token, and the executor's state under
        /// DIR/cli-executor. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The executor token file. Default: DIR/executor-token.
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// This executor's stable name (1 to 128 printable ASCII characters).
        #[arg(long, value_name = "ID", default_value = "codex-cli")]
        executor_id: String,
        /// The codex binary (a path, or a name looked up on PATH).
        #[arg(long, value_name = "PATH", default_value = "codex")]
        codex: PathBuf,
        /// An argument added after `codex app-server` (repeatable), e.g. --codex-arg=-c
        /// --codex-arg=model=o4-mini.
        #[arg(long = "codex-arg", value_name = "ARG", allow_hyphen_values = true)]
        codex_args: Vec<String>,
        /// The claude binary (a path, or a name looked up on PATH); it must be Claude Code
        /// 2.1.332.
        #[arg(long, value_name = "PATH", default_value = "claude")]
        claude: PathBuf,
        /// An argument added after the executor's own to every `claude -p` (repeatable),
        /// e.g. --claude-arg=--model --claude-arg=sonnet.
        #[arg(long = "claude-arg", value_name = "ARG", allow_hyphen_values = true)]
        claude_args: Vec<String>,
        /// The kinds of workers to run, comma-separated (codex, claude): each must be
        /// usable or the executor does not start. Default: each whose binary is found and
        /// passes its checks.
        #[arg(long, value_name = "KINDS", value_delimiter = ',', value_parser = parse_cli_kind)]
        kinds: Option<Vec<bridge::ExecutorKindWire>>,
        /// Approval prompts: `never` (none; the CLI's sandbox guards the work) or `ask`
        /// (a Codex approval request waits in "Needs you" for Approve or Decline from the
        /// dashboard; refused for Claude Code workers).
        #[arg(long, value_name = "MODE", default_value = "never", value_parser = parse_approvals)]
        approvals: cli_executor::codex::Approvals,
        /// The executor's state directory (journal, leases, each session's CODEX_HOME or
        /// CLAUDE_CONFIG_DIR and TMPDIR).
        /// Default: DIR/cli-executor.
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
        /// The working directory of a worker whose conversation.create names none.
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// The daemon's MCP endpoint, which every CLI child is configured with (required:
        /// a worker finishes only through worker_complete). Default: --daemon's host and
        /// port with /mcp.
        #[arg(long, value_name = "URL")]
        mcp_url: Option<String>,
        /// The MCP token the children authenticate with (passed to them only in the
        /// ORCHESTRATOR_MCP_TOKEN variable). Default: DIR/mcp-token.
        #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
        mcp_token: Option<String>,
        /// Your Codex login file (e.g. ~/.codex/auth.json after `codex login`, or one holding
        /// an API key), linked into every session's CODEX_HOME so token refreshes reach all of
        /// them; it must be yours and mode 0600. Without it the sessions have no login.
        #[arg(long, value_name = "FILE")]
        codex_auth: Option<PathBuf>,
        /// Log level or filter. Logs go to stderr.
        #[arg(long, value_name = "LEVEL", default_value = "info")]
        log_level: String,
    },
    /// Check or rescue a data directory's store (the daemon must be stopped). See docs/store.md.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Approve, deny, list and revoke OAuth connections of a daemon started with --public-url
    /// (through its loopback admin API, with the static MCP token). See docs/connect.md.
    #[command(subcommand)]
    Oauth(OauthCommand),
}

/// OAuth for clients that cannot send the static token (ChatGPT); docs/connect.md.
#[derive(clap::Args, Debug)]
struct OAuthFlags {
    /// Turn the OAuth 2.1 authorization server on, for this public address:
    /// https://HOST[:PORT][/PREFIX] (what a tunnel or proxy serves this daemon as), or
    /// http://127.0.0.1:PORT / http://localhost:PORT for local clients. Never derived from
    /// request headers. Off without it.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Accept this exact redirect URI at client registration besides ChatGPT's, Claude's and
    /// loopback ones (repeatable).
    #[arg(long = "oauth-redirect-allow", value_name = "URL", requires = "public_url")]
    oauth_redirect_allow: Vec<String>,
    /// Test only: access token lifetime in milliseconds.
    #[arg(long, value_name = "MS", hide = true)]
    oauth_access_ttl_ms: Option<u64>,
    /// Test only: authorization code lifetime in milliseconds.
    #[arg(long, value_name = "MS", hide = true)]
    oauth_code_ttl_ms: Option<u64>,
    /// Test only: how long an authorization request waits for the operator, in milliseconds.
    #[arg(long, value_name = "MS", hide = true)]
    oauth_pending_ttl_ms: Option<u64>,
}

impl OAuthFlags {
    fn options(&self) -> Option<orchestrator::oauth::OAuthOptions> {
        let public_url = self.public_url.clone()?;
        let mut ttls = orchestrator::oauth::Ttls::default();
        ttls.access_ms = self.oauth_access_ttl_ms.unwrap_or(ttls.access_ms);
        ttls.code_ms = self.oauth_code_ttl_ms.unwrap_or(ttls.code_ms);
        ttls.pending_ms = self.oauth_pending_ttl_ms.unwrap_or(ttls.pending_ms);
        Some(orchestrator::oauth::OAuthOptions { public_url, redirect_allow: self.oauth_redirect_allow.clone(), ttls })
    }
}

/// Where the running daemon is, for the `oauth` commands.
#[derive(clap::Args, Debug)]
struct DaemonFlags {
    /// Data directory of the daemon: its address and token are read from it. Default: as for `serve`.
    #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Bearer token. Default: the data directory's mcp-token.
    #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
    mcp_token: Option<String>,
}

#[derive(Subcommand, Debug)]
enum OauthCommand {
    /// List the authorization requests waiting for approval (code, client, redirect host).
    Pending {
        #[command(flatten)]
        daemon: DaemonFlags,
    },
    /// Approve the waiting request whose consent page shows CODE (e.g. K7QH-2MPD).
    Approve {
        /// The code on the consent page.
        code: String,
        #[command(flatten)]
        daemon: DaemonFlags,
    },
    /// Deny the waiting request whose consent page shows CODE.
    Deny {
        /// The code on the consent page.
        code: String,
        #[command(flatten)]
        daemon: DaemonFlags,
    },
    /// List grants and registered clients (from the daemon, or from the file when it is stopped).
    List {
        #[command(flatten)]
        daemon: DaemonFlags,
    },
    /// Revoke one grant, or all: at once in the running daemon (or in the file when it is stopped).
    Revoke {
        /// The grant id (from `oauth list`).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        grant_id: Option<String>,
        /// Revoke every grant.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        daemon: DaemonFlags,
    },
}

#[derive(Subcommand, Debug)]
enum StoreCommand {
    /// Read-only check of DIR/store: the acknowledged-commit mark, the journals and every
    /// record (read from a private copy; nothing in DIR changes). Prints what it found;
    /// exits 0 only if the store is intact.
    Verify {
        /// Data directory. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Copy what is intact in DIR into the new data directory NEWDIR (never modifying DIR):
    /// the journals up to their first damage and every readable record, plus the token
    /// files. Then start with `orchestrator serve --data-dir NEWDIR`.
    Salvage {
        /// The damaged data directory.
        #[arg(long, value_name = "DIR")]
        from: PathBuf,
        /// A new data directory (must not exist or be empty).
        #[arg(long, value_name = "NEWDIR")]
        to: PathBuf,
    },
}

/// One kind of `--kinds`: a command-line agent the executor can run.
fn parse_cli_kind(text: &str) -> Result<bridge::ExecutorKindWire, String> {
    match text.trim() {
        "codex" => Ok(bridge::ExecutorKindWire::Codex),
        "claude" => Ok(bridge::ExecutorKindWire::Claude),
        other => Err(format!("{other:?} is not a command-line agent (codex, claude)")),
    }
}

/// `--approvals`: `never` or `ask`.
fn parse_approvals(text: &str) -> Result<cli_executor::codex::Approvals, String> {
    match text {
        "never" => Ok(cli_executor::codex::Approvals::Never),
        "ask" => Ok(cli_executor::codex::Approvals::Ask),
        other => Err(format!("{other:?} is not an approval mode (never, ask)")),
    }
}

fn init_logs(level: &str) -> anyhow::Result<()> {
    orchestrator::logs::init(level).with_context(|| format!("bad --log-level {level}"))
}

/// A person's mistake (a short token, a locked data directory, a port in use) is one line
/// on stderr and exit status 1: never a stack trace, whatever `RUST_BACKTRACE` says.
fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            print_err(&format!("orchestrator: {}\n", one_line(&e)));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line ("cannot listen on ...: address in use").
fn one_line(error: &anyhow::Error) -> String {
    let text = format!("{error:#}");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve {
            data_dir,
            listen,
            mcp_token,
            log_level,
            allow_hosts,
            executor_token,
            executor_allow_remote,
            executor_allow_origins,
            limits,
            oauth,
        } => {
            init_logs(&log_level)?;
            let options = ServeOptions {
                data_dir: data_dir.unwrap_or_else(default_data_dir),
                listen,
                token: mcp_token,
                allow_hosts,
                limits: limits.limits(),
                oauth: oauth.options(),
            };
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            let executors = ExecutorOptions {
                token: executor_token,
                allow_remote: executor_allow_remote,
                allow_origins: executor_allow_origins,
            };
            runtime.block_on(orchestrator::serve::serve_with_executors(
                options,
                executors,
                orchestrator::serve::signals(),
                |listening, _| announce(listening),
            ))
        }
        Command::McpStdio { data_dir, log_level } => {
            init_logs(&log_level)?;
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(orchestrator::serve::mcp_stdio(
                data_dir.unwrap_or_else(default_data_dir),
                NoExecutors,
                orchestrator::serve::signals(),
            ))
        }
        Command::Status { data_dir, url, mcp_token } => {
            let dir = data_dir.unwrap_or_else(default_data_dir);
            let url = match url {
                Some(url) => url,
                None => std::fs::read_to_string(dir.join(URL_FILE_NAME))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_else(|_| format!("http://{LISTEN_DEFAULT}/mcp")),
            };
            let token = match mcp_token {
                Some(t) => Some(t),
                None => token::read(&dir.join(token::TOKEN_FILE_NAME))?,
            };
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let text = runtime.block_on(orchestrator::status::report(&url, token.as_deref())).with_context(|| {
                format!("cannot read the daemon's state at {url} (is `orchestrator serve` running?)")
            })?;
            print_out(&text);
            Ok(())
        }
        Command::Doctor { data_dir, mcp_token } => {
            let options =
                orchestrator::doctor::DoctorOptions { data_dir: data_dir.unwrap_or_else(default_data_dir), mcp_token };
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let report = runtime.block_on(orchestrator::doctor::run(&options));
            print_out(&report.text(&options.data_dir));
            if !report.healthy() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Oauth(command) => oauth_command(command),
        Command::ExecutorCli {
            daemon,
            data_dir,
            token_file,
            executor_id,
            codex,
            codex_args,
            claude,
            claude_args,
            kinds,
            approvals,
            state_dir,
            workspace,
            mcp_url,
            mcp_token,
            codex_auth,
            log_level,
        } => {
            init_logs(&log_level)?;
            let data_dir = data_dir.unwrap_or_else(default_data_dir);
            let mcp_url = match mcp_url {
                Some(url) => url,
                None => cli_executor::mcp::url_from_daemon(&daemon)
                    .with_context(|| format!("--daemon {daemon}: expected ws://HOST:PORT/executor"))?,
            };
            let token_path = data_dir.join(token::TOKEN_FILE_NAME);
            let mcp_token = match mcp_token {
                Some(t) => {
                    token::validate(&t)?;
                    t
                }
                None => token::read(&token_path)?.with_context(|| {
                    format!("no MCP token in {} (start the daemon once, or pass --mcp-token)", token_path.display())
                })?,
            };
            let settings = cli_executor::worker::Settings {
                program: codex,
                args: std::iter::once("app-server".to_string()).chain(codex_args).collect(),
                env_set: Vec::new(),
                state_dir: state_dir.unwrap_or_else(|| data_dir.join("cli-executor")),
                workspace: workspace.map(|w| w.display().to_string()),
                mcp: Some(cli_executor::mcp::McpServer { url: mcp_url, token: mcp_token }),
                claude: Some(cli_executor::claude_cli::ClaudeSettings {
                    program: claude,
                    args: claude_args,
                    env_set: Vec::new(),
                }),
                kinds: Vec::new(),
                codex_auth,
                approvals,
            };
            let options = cli_executor::connection::Options {
                url: daemon,
                token_file: token_file.unwrap_or_else(|| data_dir.join(bridge::server::TOKEN_FILE_NAME)),
                executor_id,
                settings,
                kinds,
            };
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(async {
                tokio::select! {
                    served = cli_executor::connection::run(options) => served.map_err(anyhow::Error::from),
                    () = orchestrator::serve::signals() => Ok(()),
                }
            })
        }
        Command::Store(StoreCommand::Verify { data_dir }) => {
            let dir = data_dir.unwrap_or_else(default_data_dir);
            let report = store::verify(&dir.join(STORE_DIR_NAME))
                .with_context(|| format!("cannot verify the store in {}", dir.display()))?;
            print_out(&report.text);
            if !report.intact {
                print_out(&format!(
                    "to copy what is intact: orchestrator store salvage --from {} --to NEWDIR\n",
                    dir.display()
                ));
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Store(StoreCommand::Salvage { from, to }) => {
            let report = store::salvage(&from.join(STORE_DIR_NAME), &to.join(STORE_DIR_NAME))
                .with_context(|| format!("cannot salvage {} into {}", from.display(), to.display()))?;
            for name in [token::TOKEN_FILE_NAME, bridge::server::TOKEN_FILE_NAME] {
                let source = from.join(name);
                if source.exists() {
                    std::fs::copy(&source, to.join(name))
                        .with_context(|| format!("cannot copy {} into {}", source.display(), to.display()))?;
                }
            }
            print_out(&report.text);
            print_out(&format!(
                "{} is left as it was. Start the daemon on the copy with: orchestrator serve --data-dir {}\n",
                from.display(),
                to.display()
            ));
            Ok(())
        }
    }
}

/// Runs an `oauth` command against the running daemon's admin API; `list` and `revoke`
/// fall back to the grants file (under its lock) when no daemon answers.
fn oauth_command(command: OauthCommand) -> anyhow::Result<()> {
    use axum::http::Method;
    use orchestrator::oauth;
    use serde_json::json;
    let (daemon, method, verb, body) = match command {
        OauthCommand::Pending { daemon } => (daemon, Method::GET, "pending", None),
        OauthCommand::Approve { code, daemon } => (daemon, Method::POST, "approve", Some(json!({ "code": code }))),
        OauthCommand::Deny { code, daemon } => (daemon, Method::POST, "deny", Some(json!({ "code": code }))),
        OauthCommand::List { daemon } => (daemon, Method::GET, "grants", None),
        OauthCommand::Revoke { grant_id, all, daemon } => {
            let body = if all { json!({ "all": true }) } else { json!({ "grantId": grant_id }) };
            (daemon, Method::POST, "revoke", Some(body))
        }
    };
    let dir = daemon.data_dir.unwrap_or_else(default_data_dir);
    let token = match daemon.mcp_token {
        Some(t) => t,
        None => token::read(&dir.join(token::TOKEN_FILE_NAME))?
            .with_context(|| format!("no MCP token in {} (give --mcp-token)", dir.display()))?,
    };
    let url = std::fs::read_to_string(dir.join(URL_FILE_NAME)).map(|s| s.trim().to_string()).ok();
    let addr = url.as_deref().and_then(|u| orchestrator::client::parse_url(u).ok()).map(|(a, _)| a);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let answer =
        addr.as_ref().map(|addr| runtime.block_on(oauth::admin::call(addr, &token, method, verb, body.clone())));
    let offline = matches!(answer, None | Some(Err(oauth::admin::AdminCallError::Unreachable { .. })));
    if offline {
        // No daemon: only the durable commands make sense, on the file, under its lock.
        let value = match (verb, &body) {
            ("grants", _) => oauth::offline_list(&dir)?,
            ("revoke", Some(b)) => {
                let id = b.get("grantId").and_then(|v| v.as_str());
                match oauth::offline_revoke(&dir, id)? {
                    Ok(n) => json!({ "revoked": n, "note": "the daemon is not running: revoked in the grants file" }),
                    Err(why) => anyhow::bail!("{why}"),
                }
            }
            _ => anyhow::bail!(
                "no daemon answers for {} (is `orchestrator serve --public-url ...` running?)",
                dir.display()
            ),
        };
        print_out(&format!("{}\n", serde_json::to_string_pretty(&value)?));
        return Ok(());
    }
    let (status, value) = answer.expect("online").map_err(|e| anyhow::anyhow!("{e} ({})", e.code()))?;
    print_out(&format!("{}\n", serde_json::to_string_pretty(&value)?));
    if status == 404 && value.get("error").is_none_or(|e| e == "not_found") && value.get("error_description").is_none()
    {
        anyhow::bail!("the daemon has no OAuth admin API: start it with --public-url");
    }
    if !(200..300).contains(&status) {
        anyhow::bail!("refused ({status})");
    }
    Ok(())
}

/// The store's directory inside a data directory (as the engine thread opens it).
const STORE_DIR_NAME: &str = "store";

/// Tells the operator where the daemon listens and, once, the generated token.
fn announce(listening: &orchestrator::serve::Listening) {
    if let Some(token) = &listening.generated_token {
        let file = listening.token_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        print_out(&format!(
            "orchestrator: generated the MCP bearer token (stored in {file}; shown only this once):\n{token}\n"
        ));
    } else if let Some(file) = &listening.token_file {
        print_out(&format!("orchestrator: MCP bearer token in {}\n", file.display()));
    }
    if let Some(token) = &listening.generated_executor_token {
        let file = listening.executor_token_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        print_out(&format!(
            "orchestrator: generated the executor token for the browser extension's settings (stored in {file}; shown only this once):\n{token}\n"
        ));
    } else if let Some(file) = &listening.executor_token_file {
        print_out(&format!("orchestrator: executor token in {}\n", file.display()));
    }
    if let Some(url) = &listening.executor_url {
        print_out(&format!("orchestrator: executor endpoint {url}\n"));
    }
    if let Some(issuer) = &listening.oauth_issuer {
        print_out(&format!(
            "orchestrator: OAuth on for {issuer} (approve connections with `orchestrator oauth approve CODE`)\n"
        ));
    }
    // Last, so that a script waiting for this line has seen everything before it.
    print_out(&format!("orchestrator: MCP endpoint {}\n", listening.url));
}

#[allow(clippy::print_stdout, reason = "printing the endpoint, the token and the status report is this binary's job")]
fn print_out(text: &str) {
    use std::io::Write;
    print!("{text}");
    let _ = std::io::stdout().flush();
}

#[allow(clippy::print_stderr, reason = "a failed command says why on stderr")]
fn print_err(text: &str) {
    eprint!("{text}");
}
