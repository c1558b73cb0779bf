//! Connection strings: parsed once, for the store's connection and the lease's, with the
//! same refusals and bounds, and named in messages without the password.

use crate::error::Error;
use std::str::FromStr;
use std::time::Duration;

/// Parses a connection string: refuses TLS (not built in), bounds connecting by
/// `connect_timeout_ms` unless the string says otherwise, and names the application.
/// Answers the config and its target for messages.
pub(crate) fn parse_url(url: &str, connect_timeout_ms: u64) -> Result<(postgres::Config, String), Error> {
    let mut config = postgres::Config::from_str(url).map_err(|e| Error::Config { problem: e.to_string() })?;
    if config.get_ssl_mode() == postgres::config::SslMode::Require {
        return Err(Error::Config {
            problem: "sslmode=require: this build has no TLS for Postgres yet; reach the database over a private network or a local socket (docs/scale-out.md)".into(),
        });
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_millis(connect_timeout_ms));
    }
    if config.get_application_name().is_none() {
        config.application_name("orchestrator");
    }
    let target = target(&config);
    Ok((config, target))
}

/// `user@host:port/database` (never the password), for messages.
fn target(config: &postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|host| match host {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
    format!(
        "{}@{}:{}/{}",
        config.get_user().unwrap_or("(default user)"),
        if hosts.is_empty() { "(default host)".to_string() } else { hosts.join(",") },
        if ports.is_empty() { "5432".to_string() } else { ports.join(",") },
        config.get_dbname().unwrap_or("(default database)")
    )
}
