//! Connection strings: parsed once, for the store's connection and the lease's, with the
//! same refusals and bounds, and named in messages without the password.

use crate::error::Error;
use crate::tls::{RustlsConnect, client_for, take_tls_params};
use std::str::FromStr;
use std::time::Duration;

/// A parsed connection string: what to connect to, how, and its name for messages.
#[derive(Clone)]
pub(crate) struct Target {
    /// The parsed string (TLS parameters taken out: `tls.rs`).
    pub config: postgres::Config,
    /// Host, port, user and database (never the password), for messages.
    pub name: String,
    /// The TLS client when the string asked for TLS (`sslmode=require`).
    pub tls: Option<RustlsConnect>,
}

impl Target {
    /// One connection, over TLS when asked.
    pub fn connect(&self) -> Result<postgres::Client, Error> {
        crate::tls::connect(&self.config, self.tls.as_ref())
            .map_err(|source| Error::Connect { target: self.name.clone(), source })
    }
}

/// Parses a connection string: reads its TLS parameters (`tls.rs`), bounds connecting by
/// `connect_timeout_ms` unless the string says otherwise, and names the application.
pub(crate) fn parse_url(url: &str, connect_timeout_ms: u64) -> Result<Target, Error> {
    let (url, ask) = take_tls_params(url)?;
    let mut config = postgres::Config::from_str(&url).map_err(|e| Error::Config { problem: e.to_string() })?;
    let tls = client_for(&ask)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_millis(connect_timeout_ms));
    }
    if config.get_application_name().is_none() {
        config.application_name("orchestrator");
    }
    let name = target(&config);
    Ok(Target { config, name, tls })
}

/// The database `url` names, as `user@host:port/database` (never the password), for
/// messages and notes, without connecting.
pub fn target_name(url: &str) -> Result<String, Error> {
    parse_url(url, crate::CONNECT_TIMEOUT_MS_DEFAULT).map(|target| target.name)
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
