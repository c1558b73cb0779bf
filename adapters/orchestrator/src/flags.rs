//! The `orchestrator` binary's command line: every subcommand and flag, parsed by clap
//! (`main.rs` hands each to the library).

pub(crate) use crate::serve_flags::{ServeFlags, SetupFlags};
use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

/// The orchestrator: keeps AI workers going across turn boundaries until their job is
/// done, and serves its tools to agents over MCP.
#[derive(Parser, Debug)]
#[command(name = "orchestrator", version, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant, reason = "parsed once at start; boxing the flags buys nothing")]
pub(crate) enum Command {
    /// Run the daemon: the engine on its store, MCP over streamable HTTP at http://ADDR:PORT/mcp.
    /// Settings missing from the command line and the environment come from the configuration
    /// file (`orchestrator setup` writes it; docs/operator.md "First run").
    Serve(ServeFlags),
    /// Ask the questions a first run needs (data directory, worker kinds, public address,
    /// notification URLs), write the configuration file `serve` reads, and print the next
    /// three steps. Without a terminal, the flags answer (--yes takes the defaults).
    Setup(SetupFlags),
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
    /// Print a one-time pairing code from the running daemon: typed into the extension's
    /// settings or given to `executor-cli --pair`, it is exchanged for the executor token
    /// (once, within minutes). See docs/operator.md "Pairing".
    Pair {
        #[command(flatten)]
        address: AddressFlags,
    },
    /// Notifications: `notify test` has the running daemon post a test notification to each
    /// of its --notify targets and says per target whether it arrived (docs/notifications.md).
    #[command(subcommand)]
    Notify(NotifyCommand),
    /// Print runs, workers, dispositions and attempts of a running daemon (read-only).
    Status {
        /// Also list the finished runs the daemon keeps (completed, failed or stopped), the
        /// most recently ended first, with how each ended, when and how long it took.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        address: AddressFlags,
    },
    /// Start a run whose /root is a Codex CLI or Claude Code worker in DIR, working on
    /// OBJECTIVE with Auto Resume on, through the running daemon (a CLI executor carries
    /// it: `orchestrator executor-cli`). See docs/cli-agents.md.
    Start {
        /// Which command-line agent runs the worker: codex or claude.
        #[arg(long, value_name = "KIND")]
        executor: String,
        /// The directory the worker works in (it must exist).
        #[arg(long, value_name = "DIR")]
        workspace: PathBuf,
        /// The branch the worker works on, for provenance.
        #[arg(long, value_name = "NAME")]
        branch: Option<String>,
        /// The run's name. Default: the objective's first line.
        #[arg(long, value_name = "TEXT")]
        name: Option<String>,
        /// Leave Auto Resume off: each next turn waits for Continue now.
        #[arg(long)]
        manual: bool,
        #[command(flatten)]
        address: AddressFlags,
        /// What the worker is to do, in plain words (its first prompt carries it).
        #[arg(value_name = "OBJECTIVE", required = true, num_args = 1..)]
        objective: Vec<String>,
    },
    /// Check the installation in order (the daemon answers, the user service that keeps it
    /// running, its data directory, that only you can read it, its store lock, the tokens'
    /// permissions, the configuration file and its notification URLs, pairing, a connected
    /// browser extension speaking this daemon's protocol) and say
    /// what to do for each failing check. Exits 0 only when all pass.
    Doctor {
        /// Data directory of the daemon. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The MCP token, when the daemon was started with --mcp-token. Default: DIR/mcp-token.
        #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
        mcp_token: Option<String>,
        /// The configuration file to check. Default: as for `serve`.
        #[arg(long, value_name = "FILE", env = "ORCHESTRATOR_CONFIG")]
        config: Option<PathBuf>,
    },
    /// Run the command-line agent executor: Codex CLI and Claude Code workers (one `codex
    /// app-server` or `claude -p` child per worker), connected to the daemon's /executor as
    /// the browser extension is (the same protocol, the same exactly-once journal). See
    /// docs/cli-agents.md.
    ExecutorCli {
        /// The daemon's executor endpoint. Default: that of the daemon serving the data
        /// directory (the address it recorded at start, whatever its --listen), else
        /// ws://127.0.0.1:7411/executor. Repeat it for a leader and its standbys: they are
        /// tried in order, a standby's NOT_LEADER is followed to the leader it names, and
        /// after a drop the list is tried again.
        #[arg(long, value_name = "URL")]
        daemon: Vec<String>,
        /// Data directory of the daemon: its executor-token, and the executor's state under
        /// DIR/cli-executor. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The executor token file. Default: DIR/executor-token.
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// Pair first: exchange this one-time code (from `orchestrator pair` on the daemon's
        /// machine) at --daemon for the executor token and the MCP token, save them (0600) as
        /// the token file and DIR/mcp-token, then connect.
        #[arg(long, value_name = "CODE")]
        pair: Option<String>,
        /// How many workers' turns this host runs at once: a turn beyond it waits (on the
        /// daemon) until one of this host's turns ends.
        #[arg(long, value_name = "N", default_value_t = cli_executor::base::limits::TURNS_MAX_DEFAULT, value_parser = clap::value_parser!(u32).range(1..=1024))]
        turns_max: u32,
        /// An account this host's workers of KIND run under, shared with every host that
        /// names it: the daemon runs at most MAX turns under it at once, on all of them
        /// together (a Codex or Claude login with one rate limit). Repeat for each kind;
        /// e.g. --account codex=team:6.
        #[arg(long = "account", value_name = "KIND=NAME:MAX", value_parser = cli_executor::base::settings::parse_account)]
        accounts: Vec<executor_protocol::AccountWire>,
        /// A PEM file of extra trusted roots for a `wss://` --daemon (a private CA, or the
        /// daemon's proxy's self-signed certificate); Mozilla's roots are always trusted.
        #[arg(long, value_name = "FILE")]
        daemon_ca: Option<PathBuf>,
        /// This executor's stable name, its host id (1 to 128 printable ASCII characters).
        /// Default: the one kept in the state directory (`executor-id`), made from this
        /// machine's name at the first start.
        #[arg(long, value_name = "ID")]
        executor_id: Option<String>,
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
        /// Claude Code's sandbox around Claude workers' commands: required (every `claude
        /// -p` runs Bash commands in it: writes only in the workspace, no network; Claude
        /// workers are not run where bubblewrap or socat is missing) or off (commands run
        /// unconfined, with this user's rights).
        #[arg(long, value_name = "MODE", default_value = "required", value_parser = parse_claude_sandbox)]
        claude_sandbox: cli_executor::base::settings::ClaudeSandbox,
        /// The kinds of workers to run, comma-separated (codex, claude): each must be
        /// usable or the executor does not start. Default: each whose binary is found and
        /// passes its checks.
        #[arg(long, value_name = "KINDS", value_delimiter = ',', value_parser = parse_cli_kind)]
        kinds: Option<Vec<executor_protocol::ExecutorKindWire>>,
        /// Approval prompts: `never` (none; the CLI's sandbox guards the work) or `ask`
        /// (a Codex approval request waits in "Needs you" for Approve or Decline from the
        /// dashboard; refused for Claude Code workers).
        #[arg(long, value_name = "MODE", default_value = "never", value_parser = parse_approvals)]
        approvals: cli_executor::base::settings::Approvals,
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
        /// port with /mcp; with several --daemon, a loopback relay to whichever of them
        /// leads (the children follow a failover with the executor).
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
    /// Per-host executor tokens, for CLI executors on other machines: `executor add HOST`
    /// issues a token good for the executor id HOST only. See docs/scale-out.md.
    #[command(subcommand)]
    Executor(ExecutorCommand),
    /// Install, remove or show the daemon as a user service that starts at login and restarts
    /// on failure: a systemd user unit (Linux) or a launchd agent (macOS). See docs/operator.md.
    #[command(subcommand)]
    Service(ServiceCommand),
    /// Approve, deny, list and revoke OAuth connections of a daemon started with --public-url
    /// (through its loopback admin API, with the static MCP token). See docs/connect.md.
    #[command(subcommand)]
    Oauth(OauthCommand),
    /// Pause, resume, continue, stop, answer or release one worker of a running daemon (each
    /// one MCP tool call), e.g. `orchestrator worker pause wrk-2`.
    #[command(subcommand)]
    Worker(WorkerCommand),
    /// List, show, pause, resume or stop a whole run of a running daemon (the dashboard's
    /// run controls), e.g. `orchestrator run stop run-1`.
    #[command(subcommand)]
    Run(RunCommand),
}

/// `orchestrator notify ACTION`.
#[derive(Subcommand, Debug)]
pub(crate) enum NotifyCommand {
    /// Post one test notification to each target of the running daemon, now, and say per
    /// target whether the receiver took it (exit status 1 when one did not, or none is set).
    Test {
        #[command(flatten)]
        address: AddressFlags,
    },
}

/// `orchestrator run ACTION`: a whole run's controls.
#[derive(Subcommand, Debug)]
pub(crate) enum RunCommand {
    /// Every run, one line each: status, name, workers.
    List {
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// The run with its workers and their current attempts, as `status` shows it.
    Show {
        /// The run, e.g. run-1 (`orchestrator run list` lists them).
        run: String,
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// Pause all after current turns: every unfinished worker pauses once its running turn ends.
    Pause {
        /// The run, e.g. run-1.
        run: String,
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// Resume all unfinished: clears the pauses you made (a stall or a page the
    /// orchestrator could not read stays paused until you resume that worker).
    Resume {
        /// The run, e.g. run-1.
        run: String,
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// Stop run: every unfinished worker of the run is cancelled, for good (its /root too).
    Stop {
        /// The run, e.g. run-1.
        run: String,
        /// Why, in plain words (kept on every cancelled worker). Default: "Stopped by the operator".
        reason: Vec<String>,
        #[command(flatten)]
        daemon: AddressFlags,
    },
}

/// `orchestrator worker ACTION`: one worker's controls.
#[derive(Subcommand, Debug)]
pub(crate) enum WorkerCommand {
    /// Pause the worker now: nothing more is sent until `resume` (or, with
    /// --after-current-turn, once its running turn ends).
    Pause {
        /// The worker, e.g. wrk-2 (`orchestrator status` lists them).
        worker: String,
        /// Let the running turn finish first.
        #[arg(long)]
        after_current_turn: bool,
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// Lift the worker's pause: Auto Resume goes on where it was.
    Resume {
        /// The worker, e.g. wrk-2.
        worker: String,
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// Exactly one turn now (lifting a pause), as the dashboard's Continue now.
    Continue {
        /// The worker, e.g. wrk-2.
        worker: String,
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// Stop the worker for good (its session is closed; nothing more is sent). A run's /root
    /// is not stopped alone: `orchestrator run stop RUN` stops the whole run.
    Stop {
        /// The worker, e.g. wrk-2.
        worker: String,
        /// Why, in plain words (kept in its record).
        #[arg(required = true, num_args = 1..)]
        reason: Vec<String>,
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// Answer the worker's question (a human wait, shown as "needs you" by `status`); without
    /// an answer, show the question and its choices.
    Answer {
        /// The worker, e.g. wrk-2.
        worker: String,
        /// The answer, in plain words (or one of the choices); the worker goes on with it.
        answer: Vec<String>,
        #[command(flatten)]
        daemon: AddressFlags,
    },
    /// Release the worker from its wait for another worker (shown as "Waiting" by `status`):
    /// it goes on, as Release on the dashboard.
    Release {
        /// The worker, e.g. wrk-2.
        worker: String,
        /// A note for the worker: what changed (optional).
        note: Vec<String>,
        #[command(flatten)]
        daemon: AddressFlags,
    },
}

/// Where the running daemon's MCP endpoint is, for `status` and `start`: its data directory
/// or its URL.
#[derive(clap::Args, Debug)]
pub(crate) struct AddressFlags {
    /// Data directory of the daemon: its MCP URL and token are read from it. Default: as for `serve`.
    #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR", conflicts_with = "url")]
    pub(crate) data_dir: Option<PathBuf>,
    /// MCP endpoint of the daemon, e.g. http://127.0.0.1:7411/mcp (the token then comes from
    /// --mcp-token, ORCHESTRATOR_MCP_TOKEN or the default data directory). Repeat it for a
    /// leader and its standbys: they are tried in order, and a standby's NOT_LEADER answer is
    /// followed to the leader it names.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Vec<String>,
    /// Bearer token. Default: the data directory's mcp-token.
    #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
    pub(crate) mcp_token: Option<String>,
}

/// Where the running daemon is, for the `oauth` commands (its data directory: the grants file
/// is there too).
#[derive(clap::Args, Debug)]
pub(crate) struct DaemonFlags {
    /// Data directory of the daemon: its address and token are read from it. Default: as for `serve`.
    #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// Bearer token. Default: the data directory's mcp-token.
    #[arg(long, value_name = "TOKEN", env = "ORCHESTRATOR_MCP_TOKEN", hide_env_values = true)]
    pub(crate) mcp_token: Option<String>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum OauthCommand {
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

/// `orchestrator service ACTION`: the daemon as a user service.
#[derive(Subcommand, Debug)]
pub(crate) enum ServiceCommand {
    /// Write the unit (~/.config/systemd/user/orchestrator.service) or agent
    /// (~/Library/LaunchAgents/orchestrator.plist) running this binary's `serve`, enable and
    /// start it. Run it again after moving the binary or to change the data directory.
    Install {
        /// Data directory the service serves. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Address and port the service listens on. Default: as for `serve`.
        #[arg(long, value_name = "ADDR:PORT")]
        listen: Option<SocketAddr>,
        /// Print the file it would write and the commands it would run; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Stop and disable the service and remove its file (the data directory stays).
    Uninstall {
        /// Print what it would run and remove; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Whether the service is installed, enabled and running, and where its log is.
    Status,
}

#[derive(Subcommand, Debug)]
pub(crate) enum StoreCommand {
    /// Read-only check of DIR/store: the acknowledged-commit mark, the journals and every
    /// record (read from a private copy; nothing in DIR changes). With --store postgres://...
    /// the database instead, in one read-only snapshot (no lease taken: a running leader
    /// goes on). Prints what it found; exits 0 only if the store is intact.
    Verify {
        /// Data directory. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The store to check: `fjall` (DIR/store, the default) or a `postgres://` URL, as
        /// `serve --store` takes it.
        #[arg(long, value_name = "STORE", env = "ORCHESTRATOR_STORE", hide_env_values = true)]
        store: Option<String>,
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

/// `orchestrator executor ...`: the host book in the data directory (a running daemon reads
/// it again whenever it changes).
#[derive(Debug, Subcommand)]
pub(crate) enum ExecutorCommand {
    /// Issue a token for the executor id HOST (printed once; only its hash is kept) and print
    /// how to start `executor-cli` there with it.
    Add {
        /// The host id the token is good for (1 to 128 printable ASCII characters): the
        /// `--executor-id` that host's executor-cli says hello with.
        #[arg(value_name = "HOST")]
        host: String,
        /// Data directory. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// List the hosts that have a token, with when each was added.
    List {
        /// Data directory. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Take HOST's token out: the daemon refuses its next hello and cuts its connection.
    Remove {
        /// The host id.
        #[arg(value_name = "HOST")]
        host: String,
        /// Data directory. Default: as for `serve`.
        #[arg(long, value_name = "DIR", env = "ORCHESTRATOR_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
}

/// One kind of `--kinds`: a command-line agent the executor can run.
pub(crate) fn parse_cli_kind(text: &str) -> Result<executor_protocol::ExecutorKindWire, String> {
    match text.trim() {
        "codex" => Ok(executor_protocol::ExecutorKindWire::Codex),
        "claude" => Ok(executor_protocol::ExecutorKindWire::Claude),
        other => Err(format!("{other:?} is not a command-line agent (codex, claude)")),
    }
}

/// `--approvals`: `never` or `ask`.
pub(crate) fn parse_approvals(text: &str) -> Result<cli_executor::base::settings::Approvals, String> {
    match text {
        "never" => Ok(cli_executor::base::settings::Approvals::Never),
        "ask" => Ok(cli_executor::base::settings::Approvals::Ask),
        other => Err(format!("{other:?} is not an approval mode (never, ask)")),
    }
}

/// `--claude-sandbox`'s value: `required` or `off`.
pub(crate) fn parse_claude_sandbox(text: &str) -> Result<cli_executor::base::settings::ClaudeSandbox, String> {
    text.trim().parse()
}
