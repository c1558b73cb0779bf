//! A session's `CODEX_HOME` against the real codex-cli (`CODEX_BIN`, 0.169.0): the
//! `config.toml` the executor writes passes 0.169.0's strict config check (and one unknown
//! key does not), and the login mechanism: two sessions linked to one ChatGPT login file
//! both go on after their tokens are refreshed, against a mock backend that rotates refresh
//! tokens as the real issuer does (a refresh token works once), and the person's file holds
//! the new tokens. With copies instead of links the second session fails ("refresh token
//! was already used"), which is why the executor links.

mod harness;

use cli_executor::base::child::AUTH_FILE_NAME;
use cli_executor::base::mcp::McpServer;
use cli_executor::base::worker::Out;
use cli_executor::codex::home::{check_auth_file, config_toml};
use cli_executor::run::router::Router;
use engine::ids::WorkerId;
use executor_protocol::{KindWire, OutcomeWire, StateName};
use harness::{Binary, MockModel, dirs, frame, next_report, real_codex, settings};

/// Runs `codex app-server --strict-config --print-startup-config` on `home`.
fn strict_check(codex: &std::path::Path, home: &std::path::Path) -> std::process::Output {
    std::process::Command::new(codex)
        .args(["app-server", "--strict-config", "--print-startup-config"])
        .env("CODEX_HOME", home)
        .output()
        .expect("codex runs")
}

#[test]
fn the_session_config_passes_the_real_strict_config_check() {
    let Some(codex) = real_codex("strict config") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let server = McpServer { url: "http://127.0.0.1:7411/mcp".into(), token: "t".into() };
    let config = config_toml(Some(&server)).expect("config");
    std::fs::write(dir.path().join("config.toml"), &config).expect("write");
    let out = strict_check(&codex, dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"appServerVersion\":\"0.169.0\""));

    std::fs::write(dir.path().join("config.toml"), format!("{config}bogus_key = 1\n")).expect("write");
    let out = strict_check(&codex, dir.path());
    assert!(!out.status.success(), "an unknown key is refused, so the check can fail");
    assert!(String::from_utf8_lossy(&out.stdout).contains("unknown configuration field"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_linked_to_one_login_both_go_on_after_a_refresh() {
    let Some(path) = real_codex("linked login") else { return };
    let mock = MockModel::with_login();
    let dirs = dirs();
    let login = dirs.root.path().join("person-auth.json");
    MockModel::write_login(&login);
    let mut settings = settings(&dirs, &Binary::Real { path, port: mock.port });
    // The mock provider sends the login's access token (`requires_openai_auth`) instead of
    // an API key, and the ChatGPT endpoints codex calls go to the mock too.
    let base = format!("http://127.0.0.1:{}", mock.port);
    for arg in settings.args.iter_mut() {
        if arg.starts_with("model_providers.mock.env_key") {
            *arg = "model_providers.mock.requires_openai_auth=true".to_string();
        }
    }
    settings.args.extend(["-c".to_string(), format!("chatgpt_base_url=\"{base}/backend-api/\"")]);
    settings.env_set = vec![("CODEX_REFRESH_TOKEN_URL_OVERRIDE".to_string(), format!("{base}/oauth/token"))];
    settings.codex_auth = Some(check_auth_file(&login).expect("a private login file"));
    let (mut executor, mut reports) = Router::open(settings).await.expect("opens");

    let workers = [(WorkerId(11), 1), (WorkerId(12), 2)];
    for (worker, n) in workers {
        let _ = executor.daemon(&frame(worker, n, KindWire::Create, "", "first prompt")).await;
    }
    // The two sessions run at once: their reports come in any order.
    let mut results = std::collections::BTreeMap::new();
    let mut ends = std::collections::BTreeMap::new();
    while results.len() < workers.len() || ends.len() < workers.len() {
        match next_report(&mut reports, "the creates' results and turn ends", |_| true).await {
            Out::Result(r) => drop(results.insert(r.command_id.attempt.0, r.outcome)),
            Out::State(s) if matches!(s.state, StateName::Idle | StateName::Error) => drop(ends.insert(s.worker_id, s)),
            _ => {}
        }
    }
    for (worker, n) in workers {
        assert!(matches!(results[&n], OutcomeWire::Submitted { .. }), "{worker}: {:?}", results[&n]);
        assert_eq!(ends[&worker].state, StateName::Idle, "{worker} went on: {:?}", ends[&worker]);
    }

    let refreshes = mock.refreshes();
    assert_eq!(refreshes.iter().filter(|(_, status)| *status == 200).count(), 1, "{refreshes:?}");
    assert!(refreshes.iter().all(|(token, _)| token == "refresh-0"), "only the spent token was retried: {refreshes:?}");
    let text = std::fs::read_to_string(&login).expect("the person's login");
    assert!(text.contains("\"refresh-1\""), "the person's file holds the rotated token: {text}");
    assert!(!std::fs::symlink_metadata(&login).expect("meta").file_type().is_symlink());
    for (worker, _) in workers {
        let link = dirs.state.join("sessions").join(worker.to_string()).join("codex-home").join(AUTH_FILE_NAME);
        assert_eq!(std::fs::read_link(&link).expect("a link"), std::fs::canonicalize(&login).expect("path"));
    }
    drop(executor);
}
