//! Where the daemon keeps its data by default, what it records there for its commands,
//! and where a command finds the running daemon from it.

use crate::token;
use std::path::PathBuf;

/// The default listen address: loopback only.
pub const LISTEN_DEFAULT: &str = "127.0.0.1:7411";

/// `$XDG_DATA_HOME/orchestrator`, else `~/.local/share/orchestrator`, else `./orchestrator-data`.
pub fn default_data_dir() -> PathBuf {
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("orchestrator");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join(".local").join("share").join("orchestrator");
    }
    PathBuf::from("orchestrator-data")
}

/// The file in the data directory where a running `serve` records its MCP URL, so that
/// `orchestrator status --data-dir DIR` finds a daemon started with another `--listen`.
pub const URL_FILE_NAME: &str = "mcp-url";

/// The running daemon's MCP URL (given, or the data directory's record of it, or the
/// default address) and token (given, or the data directory's).
pub fn daemon_address(
    data_dir: Option<PathBuf>,
    url: Option<String>,
    mcp_token: Option<String>,
) -> anyhow::Result<(String, Option<String>)> {
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
    Ok((url, token))
}
