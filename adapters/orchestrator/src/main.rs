//! `orchestrator`: the daemon binary. Parses flags and hands over to the library.

mod flags;

use address::token;
use address::{URL_FILE_NAME, daemon_address, default_data_dir};
use anyhow::Context;
use clap::Parser;
use flags::{AddressFlags, Cli, Command, DaemonFlags, OauthCommand, StoreCommand, WorkerCommand};
use orchestrator::NoExecutors;
use orchestrator::serve::{ExecutorOptions, ServeOptions};

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
            history,
        } => {
            init_logs(&log_level)?;
            let options = ServeOptions {
                data_dir: data_dir.unwrap_or_else(default_data_dir),
                listen,
                token: mcp_token,
                allow_hosts,
                limits: limits.limits(),
                oauth: oauth.options(),
                history: history.options(),
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
        Command::Status { all, address: AddressFlags { data_dir, url, mcp_token } } => {
            let (url, token) = daemon_address(data_dir, url, mcp_token)?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let text = runtime.block_on(console::status::report(&url, token.as_deref(), all)).with_context(|| {
                format!("cannot read the daemon's state at {url} (is `orchestrator serve` running?)")
            })?;
            print_out(&text);
            Ok(())
        }
        Command::Start { executor, workspace, branch, name, manual, address, objective } => {
            let AddressFlags { data_dir, url, mcp_token } = address;
            let (url, token) = daemon_address(data_dir, url, mcp_token)?;
            let request = console::start::StartRequest {
                executor,
                directory: workspace,
                branch,
                objective: objective.join(" "),
                task_name: name,
                auto_resume: !manual,
            };
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let text = runtime.block_on(console::start::start(&url, token.as_deref(), request))?;
            print_out(&text);
            Ok(())
        }
        Command::Doctor { data_dir, mcp_token } => {
            let options = console::doctor::DoctorOptions {
                data_dir: data_dir.unwrap_or_else(default_data_dir),
                mcp_token,
                executor_token_file_name: bridge::server::TOKEN_FILE_NAME,
            };
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let report = runtime.block_on(console::doctor::run(&options));
            print_out(&report.text(&options.data_dir));
            if !report.healthy() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Oauth(command) => oauth_command(command),
        Command::Worker(command) => worker_command(command),
        Command::ExecutorCli {
            daemon,
            data_dir,
            token_file,
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
            let mcp_url = match mcp_url {
                Some(url) => url,
                None => cli_executor::base::mcp::url_from_daemon(&daemon)
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
            let settings = cli_executor::base::settings::Settings {
                program: codex,
                args: std::iter::once("app-server".to_string()).chain(codex_args).collect(),
                env_set: Vec::new(),
                state_dir: state_dir.unwrap_or_else(|| data_dir.join("cli-executor")),
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
fn worker_command(command: WorkerCommand) -> anyhow::Result<()> {
    use console::control::Action;
    let (worker, action, daemon) = match command {
        WorkerCommand::Pause { worker, after_current_turn: false, daemon } => (worker, Action::Pause, daemon),
        WorkerCommand::Pause { worker, after_current_turn: true, daemon } => (worker, Action::PauseAfterTurn, daemon),
        WorkerCommand::Resume { worker, daemon } => (worker, Action::Resume, daemon),
        WorkerCommand::Continue { worker, daemon } => (worker, Action::Continue, daemon),
        WorkerCommand::Stop { worker, reason, daemon } => (worker, Action::Stop(reason.join(" ")), daemon),
        WorkerCommand::Answer { worker, answer, daemon } => (worker, Action::Answer(answer.join(" ")), daemon),
    };
    let DaemonFlags { data_dir, mcp_token } = daemon;
    let (url, token) = daemon_address(data_dir, None, mcp_token)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    print_out(&runtime.block_on(console::control::perform(&url, token.as_deref(), &worker, action))?);
    Ok(())
}

fn oauth_command(command: OauthCommand) -> anyhow::Result<()> {
    use axum::http::Method;
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
    let addr = url.as_deref().and_then(|u| console::client::parse_url(u).ok()).map(|(a, _)| a);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let answer = addr
        .as_ref()
        .map(|addr| runtime.block_on(console::oauth_admin::call(addr, &token, method, verb, body.clone())));
    let offline = matches!(answer, None | Some(Err(console::oauth_admin::AdminCallError::Unreachable { .. })));
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
