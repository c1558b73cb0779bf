//! The `serve` command's flags (the daemon's settings, the edge's limits, OAuth, the
//! history) and `setup`'s, and how the configuration file fills what the command line and
//! the environment left unsaid: flag > environment > file > built-in default
//! (`ServeFlags::apply_config`, by clap's `ValueSource`).

use address::LISTEN_DEFAULT;
use address::config::Config;
use clap::ArgMatches;
use clap::parser::ValueSource;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `orchestrator serve`'s flags.
#[derive(clap::Args, Debug)]
pub(crate) struct ServeFlags {
    /// The configuration file. Default: $XDG_CONFIG_HOME/orchestrator/config.toml or
    /// ~/.config/orchestrator/config.toml, when it exists.
    #[arg(long, value_name = "FILE", env = "ORCHESTRATOR_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Print the settings as resolved from the flags, the environment, the configuration file and
    /// the defaults, and exit (for checking a configuration; the daemon does not start).
    #[arg(long, hide = true)]
    pub(crate) print_config: bool,
    /// Data directory (store, MCP token). Default: $XDG_DATA_HOME/orchestrator or ~/.local/share/orchestrator.
    #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// Where the durable state lives: `fjall` (the embedded store in the data directory, the
    /// default) or a PostgreSQL database, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, every
    /// commit fenced so that only the daemon that opened it last can write (docs/scale-out.md).
    #[arg(long, value_name = "fjall|postgres://...", env = "ORCHESTRATOR_STORE", hide_env_values = true,
        default_value = "fjall", value_parser = orchestrator::serve::StoreChoice::parse)]
    pub(crate) store: orchestrator::serve::StoreChoice,
    /// Address and port to listen on. Keep it on loopback unless a tunnel or proxy fronts it.
    #[arg(long, value_name = "ADDR:PORT", default_value = LISTEN_DEFAULT)]
    pub(crate) listen: SocketAddr,
    /// Bearer token MCP clients must send (Authorization: Bearer TOKEN). Default: DIR/mcp-token,
    /// generated on first start and printed once.
    #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
    pub(crate) mcp_token: Option<String>,
    /// Log level or filter (error, warn, info, debug, trace, or e.g. "info,mcp=debug"). Logs go to stderr.
    #[arg(long, value_name = "LEVEL", default_value = "info,rmcp=warn")]
    pub(crate) log_level: String,
    /// Accept this host name in Host and Origin headers besides loopback (repeatable), e.g. for a tunnel.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub(crate) allow_hosts: Vec<String>,
    /// Token browser executors must send in their hello at ws://ADDR:PORT/executor (separate from
    /// the MCP token). Default: DIR/executor-token, generated on first start and printed once.
    #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_EXECUTOR_TOKEN", hide_env_values = true)]
    pub(crate) executor_token: Option<String>,
    /// Accept executor connections from peers that are not on loopback.
    #[arg(long)]
    pub(crate) executor_allow_remote: bool,
    /// Accept this Origin prefix at /executor besides chrome-extension:// and moz-extension:// (repeatable).
    #[arg(long = "executor-allow-origin", value_name = "PREFIX")]
    pub(crate) executor_allow_origins: Vec<String>,
    /// Test only: how long a pairing code is good, in milliseconds (default 10 minutes).
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) pair_code_ttl_ms: Option<u64>,
    /// Test only: how long a worker may have no executor of its kind before `worker.executor_absent`,
    /// in milliseconds (default 5 minutes).
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) executor_absent_ms: Option<u64>,
    /// Test only: the dead-man threshold of a run that turns the layer on without its own, in
    /// milliseconds (default 45 minutes).
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) dead_man_after_ms: Option<u64>,
    /// Test only: how long the Postgres lease lasts without renewal, in milliseconds (default 10 s).
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) lease_ttl_ms: Option<u64>,
    /// Test only: how often the leader renews the Postgres lease, in milliseconds (default 2 s).
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) lease_renew_ms: Option<u64>,
    /// Test only: how often a standby reads the Postgres lease, in milliseconds (default 1 s).
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) lease_poll_ms: Option<u64>,
    /// Post to this webhook when a worker needs you or a run ends (repeatable): http(s)://HOST[:PORT]/PATH,
    /// prefixed text: (ntfy), slack: or discord: for their forms; signed with DIR/notify-secret
    /// (docs/notifications.md).
    #[arg(long = "notify", value_name = "URL")]
    pub(crate) notify: Vec<String>,
    /// Trust the certificates in this PEM file for https --notify targets, besides Mozilla's roots
    /// (a private CA, a self-hosted ntfy's own certificate).
    #[arg(long, value_name = "FILE")]
    pub(crate) notify_ca: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) limits: LimitFlags,
    #[command(flatten)]
    pub(crate) oauth: OAuthFlags,
    #[command(flatten)]
    pub(crate) history: HistoryFlags,
}

/// How many finished runs the history keeps, and for how long (the dashboard's Finished,
/// `status --all`, `run_list` with includeTerminal).
#[derive(clap::Args, Debug)]
pub(crate) struct HistoryFlags {
    /// Finished runs the history shows at most, the most recently ended first.
    #[arg(long, value_name = "COUNT", env = "ORCHESTRATOR_HISTORY_RUNS",
        default_value_t = engine::limits::HISTORY_RUNS_COUNT_DEFAULT as u32,
        value_parser = clap::value_parser!(u32).range(0..=engine::limits::LIST_PAGE_COUNT_MAX as i64))]
    pub history_runs: u32,
    /// Days a finished run stays in the history after it ended.
    #[arg(long, value_name = "DAYS", env = "ORCHESTRATOR_HISTORY_DAYS",
        default_value_t = engine::limits::HISTORY_KEPT_MS_DEFAULT / DAY_MS,
        value_parser = clap::value_parser!(u64).range(0..=HISTORY_DAYS_MAX))]
    pub history_days: u64,
}

/// A day, in milliseconds.
const DAY_MS: u64 = 24 * 60 * 60 * 1000;
/// The longest history `--history-days` accepts, in days (ten years).
const HISTORY_DAYS_MAX: u64 = 3_650;

impl HistoryFlags {
    /// The engine's history retention.
    pub(crate) fn options(&self) -> orchestrator::serve::HistoryOptions {
        orchestrator::serve::HistoryOptions {
            runs_max: self.history_runs as usize,
            kept_ms: self.history_days * DAY_MS,
        }
    }
}

/// The edge's limits, for every route on the listener (/mcp, /executor); docs/limits.md.
#[derive(clap::Args, Debug)]
pub(crate) struct LimitFlags {
    /// A connection waiting for a request (a fresh one, or an idle keep-alive one) is closed unless
    /// that request's headers arrive within this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = edge::HEADER_READ_TIMEOUT_MS_DEFAULT)]
    pub(crate) header_read_timeout_ms: u64,
    /// A connection on which no byte moves in either direction for this many milliseconds is
    /// closed, except while a request is being answered (an events_wait long poll). Applies to the
    /// executor WebSocket too: keep it above twice the 20 s heartbeat.
    #[arg(long, value_name = "MS", default_value_t = edge::IDLE_TIMEOUT_MS_DEFAULT)]
    pub(crate) idle_timeout_ms: u64,
    /// A request body must arrive whole within this many milliseconds of its headers (408 otherwise).
    #[arg(long, value_name = "MS", default_value_t = edge::BODY_READ_TIMEOUT_MS_DEFAULT)]
    pub(crate) body_read_timeout_ms: u64,
    /// Connections open at once (MCP and executors together). When all are taken, a new connection
    /// takes the place of the longest idle pending one; only when every place is held by an
    /// authenticated client does it get a 503.
    #[arg(long, value_name = "N", default_value_t = edge::CONNECTIONS_MAX_DEFAULT)]
    pub(crate) connections_max: usize,
    /// Pending connections open at once: those no request authenticated yet (silent, headers on the
    /// way, an executor before its hello). Past it the longest idle of them is closed for the new one.
    /// Default: --connections-max (they may hold any place an authenticated client does not).
    #[arg(long, value_name = "N")]
    pub(crate) pending_connections_max: Option<usize>,
    /// Connections open at once from one client address; never applied to loopback (all local
    /// clients share 127.0.0.1) nor to a --trusted-proxy. Past it that address's longest idle
    /// pending connection is closed for the new one, or the new one gets a 503.
    /// Default: 64, or --connections-max if lower.
    #[arg(long, value_name = "N")]
    pub(crate) connections_per_ip_max: Option<usize>,
    /// The address of a proxy or tunnel client whose connections carry many clients (repeatable):
    /// no per-address cap for it, as for loopback.
    #[arg(long = "trusted-proxy", value_name = "IP")]
    pub(crate) trusted_proxies: Vec<std::net::IpAddr>,
}

impl LimitFlags {
    pub(crate) fn limits(&self) -> edge::EdgeLimits {
        edge::EdgeLimits {
            header_read_timeout_ms: self.header_read_timeout_ms,
            idle_timeout_ms: self.idle_timeout_ms,
            body_read_timeout_ms: self.body_read_timeout_ms,
            connections_max: self.connections_max,
            pending_connections_max: self.pending_connections_max.unwrap_or(self.connections_max),
            connections_per_ip_max: self
                .connections_per_ip_max
                .unwrap_or(edge::CONNECTIONS_PER_IP_MAX_DEFAULT.min(self.connections_max).max(1)),
            trusted_proxies: self.trusted_proxies.clone(),
        }
    }
}

/// OAuth for clients that cannot send the static token (ChatGPT); docs/connect.md.
#[derive(clap::Args, Debug)]
pub(crate) struct OAuthFlags {
    /// Turn the OAuth 2.1 authorization server on, for this public address:
    /// https://HOST[:PORT][/PREFIX] (what a tunnel or proxy serves this daemon as), or
    /// http://127.0.0.1:PORT / http://localhost:PORT for local clients. Never derived from
    /// request headers. Off without it.
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,
    /// Accept this exact redirect URI at client registration besides ChatGPT's, Claude's and
    /// loopback ones (repeatable).
    #[arg(long = "oauth-redirect-allow", value_name = "URL", requires = "public_url")]
    pub(crate) oauth_redirect_allow: Vec<String>,
    /// Test only: access token lifetime in milliseconds.
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) oauth_access_ttl_ms: Option<u64>,
    /// Test only: authorization code lifetime in milliseconds.
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) oauth_code_ttl_ms: Option<u64>,
    /// Test only: how long an authorization request waits for the operator, in milliseconds.
    #[arg(long, value_name = "MS", hide = true)]
    pub(crate) oauth_pending_ttl_ms: Option<u64>,
}

impl OAuthFlags {
    pub(crate) fn options(&self) -> Option<oauth::OAuthOptions> {
        let public_url = self.public_url.clone()?;
        let mut ttls = oauth::Ttls::default();
        ttls.access_ms = self.oauth_access_ttl_ms.unwrap_or(ttls.access_ms);
        ttls.code_ms = self.oauth_code_ttl_ms.unwrap_or(ttls.code_ms);
        ttls.pending_ms = self.oauth_pending_ttl_ms.unwrap_or(ttls.pending_ms);
        Some(oauth::OAuthOptions { public_url, redirect_allow: self.oauth_redirect_allow.clone(), ttls })
    }
}

impl ServeFlags {
    /// Fills each setting the command line and the environment left unsaid from the
    /// configuration file: flag > environment > file > built-in default. `matches` are the
    /// `serve` subcommand's, which know where each value came from.
    pub(crate) fn apply_config(&mut self, config: &Config, matches: &ArgMatches) {
        let given =
            |id: &str| matches!(matches.value_source(id), Some(ValueSource::CommandLine | ValueSource::EnvVariable));
        if !given("data_dir") && config.data_dir.is_some() {
            self.data_dir = config.data_dir.clone();
        }
        if let Some(listen) = config.listen.filter(|_| !given("listen")) {
            self.listen = listen;
        }
        if !given("allow_hosts") && !config.allow_hosts.is_empty() {
            self.allow_hosts = config.allow_hosts.clone();
        }
        if !given("trusted_proxies") && !config.trusted_proxies.is_empty() {
            self.limits.trusted_proxies = config.trusted_proxies.clone();
        }
        if !given("public_url") && config.public_url.is_some() {
            self.oauth.public_url = config.public_url.clone();
        }
        if !given("notify") && !config.notify.is_empty() {
            self.notify = config.notify.clone();
        }
        if !given("notify_ca") && config.notify_ca.is_some() {
            self.notify_ca = config.notify_ca.clone();
        }
    }

    /// The resolved settings, one per line (`serve --print-config`).
    pub(crate) fn describe(&self, config_file: Option<&std::path::Path>, config: &Config) -> String {
        let data_dir = self.data_dir.clone().unwrap_or_else(address::default_data_dir);
        let words = |items: Vec<String>| format!("[{}]", items.join(", "));
        format!(
            "config = {}\ndata_dir = {}\nstore = {}\nlisten = {}\npublic_url = {}\nallow_hosts = {}\ntrusted_proxies = {}\n\
             workers = {}\nnotify = {}\nnotify_ca = {}\n",
            config_file.map_or("none".to_string(), |p| p.display().to_string()),
            data_dir.display(),
            self.store.describe(),
            self.listen,
            self.oauth.public_url.as_deref().unwrap_or("none"),
            words(self.allow_hosts.clone()),
            words(self.limits.trusted_proxies.iter().map(|i| i.to_string()).collect()),
            words(config.workers.iter().map(|k| k.name().to_string()).collect()),
            words(self.notify.clone()),
            self.notify_ca.as_ref().map_or("none".to_string(), |p| p.display().to_string()),
        )
    }
}

/// `orchestrator setup`'s flags: each answers one question (`--yes` takes the defaults for
/// the rest, so that a script or a test asks nothing).
#[derive(clap::Args, Debug)]
pub(crate) struct SetupFlags {
    /// The file to write. Default: $XDG_CONFIG_HOME/orchestrator/config.toml or
    /// ~/.config/orchestrator/config.toml.
    #[arg(long, value_name = "FILE", env = "ORCHESTRATOR_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Replace an existing file (the lines that change are shown).
    #[arg(long)]
    pub(crate) force: bool,
    /// Ask nothing: take the default for every question no flag answers.
    #[arg(long)]
    pub(crate) yes: bool,
    /// The daemon's data directory. Default: $XDG_DATA_HOME/orchestrator or ~/.local/share/orchestrator.
    #[arg(long, value_name = "DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// The worker kinds you want, comma-separated: chatgpt (the browser extension), codex,
    /// claude (`orchestrator executor-cli`). Default: chatgpt.
    #[arg(long, value_name = "KINDS", value_delimiter = ',', value_parser = parse_worker_kind)]
    pub(crate) workers: Option<Vec<address::config::WorkerKind>>,
    /// The public address a tunnel or proxy serves the daemon as (turns OAuth on, for
    /// ChatGPT's app), or `none`. Default: none.
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,
    /// A URL to notify when a run needs you (repeatable), or `none`. Default: none.
    #[arg(long, value_name = "URL")]
    pub(crate) notify: Vec<String>,
    /// The address and port the daemon listens on. Default: 127.0.0.1:7411.
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) listen: Option<SocketAddr>,
}

/// One kind of `setup --workers`.
fn parse_worker_kind(text: &str) -> Result<address::config::WorkerKind, String> {
    address::config::WorkerKind::parse(text)
        .ok_or_else(|| format!("{:?} is not a worker kind (chatgpt, codex, claude)", text.trim()))
}

#[cfg(test)]
mod tests {
    use crate::flags::{Cli, Command};
    use address::config::{Config, parse};
    use clap::{CommandFactory, FromArgMatches};
    use std::path::{Path, PathBuf};

    /// `serve ARGS` parsed with `env` standing for the environment, then the file applied.
    fn resolved(args: &[&str], env_data_dir: Option<&'static str>, file: &str) -> super::ServeFlags {
        let mut command = Cli::command();
        if let Some(dir) = env_data_dir {
            // What clap does with ORCHESTRATOR_DATA_DIR, without touching this process's environment.
            command = command.mut_subcommand("serve", |serve| {
                serve.mut_arg("data_dir", |arg| arg.env("ORCHESTRATOR_TEST_DATA_DIR").default_value(dir))
            });
        }
        let matches =
            command.try_get_matches_from(std::iter::once("orchestrator").chain(args.iter().copied())).expect("parse");
        let Command::Serve(mut flags) = Cli::from_arg_matches(&matches).expect("cli").command else { panic!("serve") };
        let config = parse(file, Path::new("/c.toml")).expect("file");
        flags.apply_config(&config, matches.subcommand_matches("serve").expect("serve"));
        flags
    }

    const FILE: &str = "data_dir = \"/from/file\"\nlisten = \"127.0.0.1:7500\"\npublic_url = \"https://file.example\"\n\
                        trusted_proxies = [\"10.0.0.9\"]\n";

    #[test]
    fn a_flag_beats_the_file_and_the_file_beats_the_default() {
        let flags = resolved(&["serve"], None, FILE);
        assert_eq!(flags.data_dir, Some(PathBuf::from("/from/file")));
        assert_eq!(flags.listen.to_string(), "127.0.0.1:7500");
        assert_eq!(flags.oauth.public_url.as_deref(), Some("https://file.example"));
        assert_eq!(flags.limits.trusted_proxies.len(), 1);
        let args =
            ["serve", "--data-dir", "/from/flag", "--listen", "127.0.0.1:7600", "--public-url", "https://flag.example"];
        let flags = resolved(&args, None, FILE);
        assert_eq!(flags.data_dir, Some(PathBuf::from("/from/flag")));
        assert_eq!(flags.listen.to_string(), "127.0.0.1:7600");
        assert_eq!(flags.oauth.public_url.as_deref(), Some("https://flag.example"));
        let flags = resolved(&["serve"], None, "");
        assert_eq!((flags.data_dir, flags.listen.to_string()), (None, address::LISTEN_DEFAULT.to_string()));
        assert_eq!(Config::default(), parse("", Path::new("/c")).expect("empty"));
    }

    #[test]
    fn a_default_value_is_not_mistaken_for_a_given_one() {
        // A clap default (here standing in for the environment's absence) loses to the file.
        let flags = resolved(&["serve"], Some("/from/default"), FILE);
        assert_eq!(flags.data_dir, Some(PathBuf::from("/from/file")));
    }
}
