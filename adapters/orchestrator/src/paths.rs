//! Where the daemon keeps its data by default.

use std::path::PathBuf;

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
