//! `orchestrator`: the daemon binary. Parses flags and hands over to the library.
//!
//! - `flags.rs`: every subcommand and flag (clap).
//! - `usage.rs`: a mistyped command line as one line on stderr and status 1.
//! - `client_commands.rs`: `worker …`, `run …` and `oauth …` against the running daemon.
//! - `service_command.rs`: `service install|uninstall|status`, the daemon as a user service.
//! - `serve_flags.rs`: `serve`'s and `setup`'s flags; the configuration file under the flags.
//! - `setup_command.rs`: `setup`, the first run's questions, the file, the next steps.

mod client_commands;
mod executor_command;
mod flags;
mod serve_flags;
mod service_command;
mod setup_command;
mod usage;

use address::default_data_dir;
use address::token;
use anyhow::Context;
use flags::{AddressFlags, Cli, Command, NotifyCommand, StoreCommand};
use orchestrator::NoExecutors;
use orchestrator::serve::{ExecutorOptions, ServeOptions};
use std::time::Duration;

fn init_logs(level: &str) -> anyhow::Result<()> {
    orchestrator::logs::init(level).with_context(|| format!("bad --log-level {level}"))
}

/// A person's mistake (a short token, a locked data directory, a port in use) is one line
/// on stderr and exit status 1: never a stack trace, whatever `RUST_BACKTRACE` says.
fn main() -> std::process::ExitCode {
    let (cli, matches) = match usage::parse() {
        Ok(parsed) => parsed,
        Err(exit) => return exit,
    };
    match run(cli, &matches) {
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

/// The configuration file: the one named (which must exist), else the default one if it
/// exists; `None` when there is none.
pub(crate) fn read_config(
    named: Option<&std::path::Path>,
) -> anyhow::Result<(Option<std::path::PathBuf>, address::config::Config)> {
    let path = named.map_or_else(address::config::default_config_path, std::path::Path::to_path_buf);
    Ok(match address::config::load(&path, named.is_some())? {
        Some(config) => (Some(path), config),
        None => (None, address::config::Config::default()),
    })
}

fn run(cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(mut flags) => {
            let (config_file, config) = read_config(flags.config.as_deref())?;
            if let Some(serve) = matches.subcommand_matches("serve") {
                flags.apply_config(&config, serve);
            }
            if flags.print_config {
                print_out(&flags.describe(config_file.as_deref(), &config));
                return Ok(());
            }
            let serve_flags::ServeFlags {
                data_dir,
                store,
                listen,
                mcp_token,
                log_level,
                allow_hosts,
                executor_token,
                executor_allow_remote,
                executor_allow_origins,
                pair_code_ttl_ms,
                executor_absent_ms,
                dead_man_after_ms,
                lease_ttl_ms,
                lease_renew_ms,
                lease_poll_ms,
                notify,
                notify_ca,
                limits,
                oauth,
                history,
                ..
            } = flags;
            init_logs(&log_level)?;
            // The store's files and the tokens are created private (the daemon starts no programs).
            address::private::private_umask();
            let options = ServeOptions {
                data_dir: data_dir.unwrap_or_else(default_data_dir),
                listen,
                token: mcp_token,
                allow_hosts,
                limits: limits.limits(),
                oauth: oauth.options(),
                history: history.options(),
                store,
                notify,
                notify_ca,
            };
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            let executors = ExecutorOptions {
                token: executor_token,
                allow_remote: executor_allow_remote,
                allow_origins: executor_allow_origins,
                pair_code_ttl_ms,
                timers: orchestrator::serve::TestTimers {
                    executor_absent_ms,
                    dead_man_after_ms,
                    lease_ttl_ms,
                    lease_renew_ms,
                    lease_poll_ms,
                },
            };
            let served = runtime.block_on(orchestrator::serve::serve_with_executors(
                options,
                executors,
                orchestrator::serve::signals(),
                |listening, _| announce(listening),
            ));
            // A task still blocked on the database (a leader cut off from it) must not
            // hold the exit: dropping the runtime would wait for it without end.
            runtime.shutdown_timeout(Duration::from_millis(RUNTIME_SHUTDOWN_MS_MAX));
            served
        }
        Command::McpStdio { data_dir, log_level } => {
            init_logs(&log_level)?;
            address::private::private_umask();
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(orchestrator::serve::mcp_stdio(
                data_dir.unwrap_or_else(default_data_dir),
                NoExecutors,
                orchestrator::serve::signals(),
            ))
        }
        Command::Pair { address: AddressFlags { data_dir, url, mcp_token } } => {
            client_commands::pair_command(data_dir, url, mcp_token)
        }
        Command::Notify(NotifyCommand::Test { address: AddressFlags { data_dir, url, mcp_token } }) => {
            let target = console::reach::Target::new(data_dir, url, mcp_token)?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let (text, all_delivered) = runtime.block_on(console::notify_test::run(&target))?;
            print_out(&text);
            if !all_delivered {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Status { all, address: AddressFlags { data_dir, url, mcp_token } } => {
            let target = console::reach::Target::new(data_dir, url, mcp_token)?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            print_out(&runtime.block_on(console::status::report(&target, None, all))?);
            Ok(())
        }
        Command::Start { executor, workspace, branch, name, manual, address, objective } => {
            let AddressFlags { data_dir, url, mcp_token } = address;
            let target = console::reach::Target::new(data_dir, url, mcp_token)?;
            let request = console::start::StartRequest {
                executor,
                directory: workspace,
                branch,
                objective: objective.join(" "),
                task_name: name,
                auto_resume: !manual,
            };
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let text = runtime.block_on(console::start::start(&target, request))?;
            print_out(&text);
            Ok(())
        }
        Command::Setup(flags) => setup_command::setup(flags),
        Command::Doctor { data_dir, mcp_token, config } => {
            let config_file = config.unwrap_or_else(address::config::default_config_path);
            // The file's data directory when no flag names one (its errors are doctor's to report).
            let from_file = address::config::load(&config_file, false).ok().flatten().and_then(|c| c.data_dir);
            let options = console::doctor::DoctorOptions {
                data_dir: data_dir.or(from_file).unwrap_or_else(default_data_dir),
                mcp_token,
                executor_token_file_name: bridge::server::TOKEN_FILE_NAME,
                config_file,
            };
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let report = runtime.block_on(console::doctor::run(&options));
            print_out(&report.text(&options.data_dir));
            if !report.healthy() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Oauth(command) => client_commands::oauth_command(command),
        Command::Worker(command) => client_commands::worker_command(command),
        Command::Run(command) => client_commands::run_command(command),
        Command::Service(command) => service_command::service_command(command),
        Command::Executor(command) => executor_command::executor_command(command),
        Command::ExecutorCli {
            daemon,
            data_dir,
            token_file,
            pair,
            turns_max,
            accounts,
            daemon_ca,
            executor_id,
            codex,
            codex_args,
            claude,
            claude_args,
            claude_sandbox,
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
            let daemons = if daemon.is_empty() { vec![executor_url_of(&data_dir)] } else { daemon };
            let daemon = daemons.first().cloned().unwrap_or_else(|| executor_url_of(&data_dir));
            // Several daemons and no --mcp-url: the children's calls follow the leader
            // through the executor's loopback relay.
            let mcp_relay = mcp_url.is_none() && daemons.len() > 1;
            let mcp_url = match mcp_url {
                Some(url) => url,
                None => cli_executor::base::mcp::url_from_daemon(&daemon)
                    .with_context(|| format!("--daemon {daemon}: expected ws://HOST:PORT/executor"))?,
            };
            let token_path = data_dir.join(token::TOKEN_FILE_NAME);
            let token_file = token_file.unwrap_or_else(|| data_dir.join(bridge::server::TOKEN_FILE_NAME));
            let state_dir = state_dir.unwrap_or_else(|| data_dir.join("cli-executor"));
            let executor_id = cli_executor::base::identity::host_id(executor_id.as_deref(), &state_dir)?;
            if let Some(code) = pair {
                client_commands::pair_executor(
                    &daemon,
                    &code,
                    &executor_id,
                    &token_file,
                    mcp_token.is_none().then_some(&token_path),
                )?;
            }
            let mcp_token = match mcp_token {
                Some(t) => {
                    token::validate(&t)?;
                    t
                }
                None => token::read(&token_path)?.with_context(|| {
                    format!("no MCP token in {} (start the daemon once, or pass --mcp-token)", token_path.display())
                })?,
            };
            let settings = cli_executor::base::settings::Settings {
                program: codex,
                args: std::iter::once("app-server".to_string()).chain(codex_args).collect(),
                env_set: Vec::new(),
                state_dir,
                workspace: workspace.map(|w| w.display().to_string()),
                mcp: Some(cli_executor::base::mcp::McpServer { url: mcp_url, token: mcp_token }),
                claude: Some(cli_executor::base::settings::ClaudeSettings {
                    program: claude,
                    args: claude_args,
                    env_set: Vec::new(),
                    sandbox: claude_sandbox,
                }),
                kinds: Vec::new(),
                codex_auth,
                approvals,
            };
            let options = cli_executor::connection::Options {
                urls: daemons,
                token_file,
                executor_id,
                settings,
                kinds,
                daemon_ca,
                turns_max,
                accounts,
                mcp_relay,
            };
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(async {
                tokio::select! {
                    served = cli_executor::connection::run(options) => served.map_err(anyhow::Error::from),
                    () = orchestrator::serve::signals() => Ok(()),
                }
            })
        }
        Command::Store(StoreCommand::Verify { store: Some(url), .. }) if store_pg::is_postgres_url(&url) => {
            let report = store_pg::verify(&url)
                .map_err(|e| anyhow::anyhow!("cannot verify the Postgres store [{}]: {e}", e.code()))?;
            print_out(&report.text);
            if !report.intact {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Store(StoreCommand::Verify { store: Some(other), .. }) if other != "fjall" => {
            anyhow::bail!("--store {other}: expected fjall or a postgres:// URL")
        }
        Command::Store(StoreCommand::Verify { data_dir, .. }) => {
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
            for name in [token::TOKEN_FILE_NAME, bridge::server::TOKEN_FILE_NAME, bridge::server::HOSTS_FILE_NAME] {
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

/// The store's directory inside a data directory (as the engine thread opens it).
const STORE_DIR_NAME: &str = "store";
/// How long `serve`'s exit waits for tasks still running on its runtime (the engine and
/// the requests are done or abandoned by then: `serve.rs`), in ms.
const RUNTIME_SHUTDOWN_MS_MAX: u64 = 1_000;

/// The executor endpoint of the daemon serving `data_dir`: the host and port of the MCP URL
/// it recorded at start (`address::URL_FILE_NAME`), else the default address.
fn executor_url_of(data_dir: &std::path::Path) -> String {
    let recorded = std::fs::read_to_string(data_dir.join(address::URL_FILE_NAME)).unwrap_or_default();
    let authority = recorded.trim().strip_prefix("http://").and_then(|rest| rest.strip_suffix("/mcp"));
    match authority {
        Some(authority) if !authority.is_empty() && !authority.contains('/') => format!("ws://{authority}/executor"),
        _ => cli_executor::connection::DAEMON_URL_DEFAULT.to_string(),
    }
}

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
            "orchestrator: generated the executor token, for the browser extension's settings (stored in {file}, where `orchestrator executor-cli` reads it; shown only this once):\n{token}\n"
        ));
    } else if let Some(file) = &listening.executor_token_file {
        print_out(&format!("orchestrator: executor token in {}\n", file.display()));
    }
    if let Some(url) = &listening.executor_url {
        print_out(&format!("orchestrator: executor endpoint {url}\n"));
    }
    if let Some(code) = &listening.first_pair_code {
        let minutes = listening.pair_code_ttl_ms.div_ceil(60_000);
        print_out(&format!(
            "orchestrator: pairing code {code} (valid for {minutes} minutes, once): the extension's settings find this \
             daemon and ask for it; `orchestrator pair` prints a new one\n"
        ));
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
pub(crate) fn print_out(text: &str) {
    use std::io::Write;
    print!("{text}");
    let _ = std::io::stdout().flush();
}

#[allow(clippy::print_stderr, reason = "a failed command says why on stderr")]
pub(crate) fn print_err(text: &str) {
    eprint!("{text}");
}

#[cfg(test)]
mod tests {
    use super::executor_url_of;

    #[test]
    fn the_executor_finds_the_daemon_of_its_data_directory_whatever_its_port() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(executor_url_of(dir.path()), "ws://127.0.0.1:7411/executor", "no daemon recorded: the default");
        std::fs::write(dir.path().join(address::URL_FILE_NAME), "http://127.0.0.1:40123/mcp\n").expect("url");
        assert_eq!(executor_url_of(dir.path()), "ws://127.0.0.1:40123/executor");
        std::fs::write(dir.path().join(address::URL_FILE_NAME), "nonsense").expect("url");
        assert_eq!(executor_url_of(dir.path()), "ws://127.0.0.1:7411/executor", "unreadable: the default");
    }
}
