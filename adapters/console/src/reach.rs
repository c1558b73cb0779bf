//! How a command reaches the running daemon (`status`, `start`, `run …`, `worker …`), and
//! what it says when it cannot: nothing answers (start the daemon), the data directory has
//! no token (no daemon was started with it: a mistyped `--data-dir`), or the daemon refuses
//! the token (it belongs to another data directory). Each is one sentence that names what
//! to do, never a bare "HTTP 401". Given several URLs (`--url` repeated), a command tries
//! them in order and follows a standby's `NOT_LEADER` to the leader it names
//! ([`address::follow::Follow`]).

use crate::client::{ClientError, McpClient};
use address::follow::Follow;
use address::token::TOKEN_FILE_NAME;
use std::path::PathBuf;

/// Where the daemon is, and where its address and token came from.
#[derive(Clone, Debug)]
pub struct Target {
    /// The MCP endpoint (the first given).
    pub url: String,
    /// Every MCP endpoint given, in order (`url` first); a command tries them in turn.
    pub urls: Vec<String>,
    /// The bearer token, if any was found or given.
    pub token: Option<String>,
    /// The data directory the address and token were read from.
    pub data_dir: PathBuf,
    /// The token came from `--mcp-token` or `ORCHESTRATOR_MCP_TOKEN`.
    pub token_given: bool,
}

/// Why a command could not talk to the daemon, with a stable code.
#[derive(Debug, thiserror::Error)]
pub enum ReachError {
    /// Nothing listens at the address.
    #[error("nothing answers at {url}: start the daemon with `orchestrator serve --data-dir {dir}`")]
    NotRunning {
        /// The MCP endpoint.
        url: String,
        /// The data directory.
        dir: String,
    },
    /// The data directory has no token and the daemon asks for one.
    #[error(
        "{dir} holds no MCP token, so no daemon was started with this data directory (check --data-dir), yet a \
         daemon answers at {url}: give the --data-dir it was started with, or its --mcp-token"
    )]
    NoToken {
        /// The MCP endpoint.
        url: String,
        /// The data directory.
        dir: String,
    },
    /// The daemon refuses the token read from the data directory.
    #[error(
        "the daemon at {url} refuses the MCP token in {file}: it was started with another data directory or \
         token; give its --data-dir (or its --mcp-token)"
    )]
    TokenRefused {
        /// The MCP endpoint.
        url: String,
        /// The token file.
        file: String,
    },
    /// The daemon refuses the token given by flag or environment.
    #[error(
        "the daemon at {url} refuses the given MCP token (--mcp-token or ORCHESTRATOR_MCP_TOKEN): give the one it was started with"
    )]
    GivenTokenRefused {
        /// The MCP endpoint.
        url: String,
    },
}

impl ReachError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            ReachError::NotRunning { .. } => "DAEMON_NOT_RUNNING",
            ReachError::NoToken { .. } => "NO_TOKEN",
            ReachError::TokenRefused { .. } | ReachError::GivenTokenRefused { .. } => "TOKEN_REFUSED",
        }
    }
}

impl Target {
    /// The daemon of `data_dir` (default: the platform's), at `urls` (default: the one the
    /// running daemon recorded there, else the default address), with `mcp_token` (default:
    /// the directory's).
    pub fn new(data_dir: Option<PathBuf>, urls: Vec<String>, mcp_token: Option<String>) -> anyhow::Result<Target> {
        let token_given = mcp_token.is_some();
        let data_dir = data_dir.unwrap_or_else(address::default_data_dir);
        let (url, token) = address::daemon_address(Some(data_dir.clone()), urls.first().cloned(), mcp_token)?;
        let urls = if urls.is_empty() { vec![url.clone()] } else { urls };
        Ok(Target { url, urls, token, data_dir, token_given })
    }

    /// An MCP session with the leader: the URLs tried in order, a standby's `NOT_LEADER`
    /// followed to the leader it names. With one URL and no standby on the way, a daemon
    /// that is not there or refuses the token is a [`ReachError`] saying what to do; else,
    /// when none answers as the leader, [`address::follow::FollowError::NoLeader`] names
    /// what each said. A refused token ends the attempt at once (every URL gets the same).
    pub async fn connect(&self) -> anyhow::Result<McpClient> {
        let mut follow = Follow::new(self.urls.clone());
        let mut last = None;
        while let Some(url) = follow.next_url() {
            let error = match McpClient::connect(&url, self.token.as_deref()).await {
                Ok(client) => return Ok(client),
                Err(error) => error,
            };
            match error.downcast_ref::<ClientError>() {
                Some(ClientError::NotLeader { leader }) => {
                    let named = if leader == "unknown" { "" } else { leader.as_str() };
                    let next = Some(named.to_string()).filter(|l| l.starts_with("http://"));
                    follow.not_leader(&url, named, next);
                    last = None;
                }
                Some(ClientError::Unauthorized) => return Err(self.explain_at(&url, error)),
                _ => {
                    follow.failed(&url, &error.to_string());
                    last = Some(self.explain_at(&url, error));
                }
            }
        }
        match last {
            Some(error) if follow.tried() == 1 => Err(error),
            _ => Err(follow.no_leader().into()),
        }
    }

    /// This target narrowed to the leader: its URLs tried and a standby followed as by
    /// [`Target::connect`], for the commands that make plain HTTP calls (`pair`, `notify
    /// test`) and print the daemon's address.
    pub async fn leader(&self) -> anyhow::Result<Target> {
        let url = self.connect().await?.url();
        Ok(Target { url: url.clone(), urls: vec![url], ..self.clone() })
    }

    /// `error` in a person's words when it is about reaching the daemon; else unchanged.
    pub fn explain(&self, error: anyhow::Error) -> anyhow::Error {
        self.explain_at(&self.url, error)
    }

    /// `error` at `url` in a person's words when it is about reaching the daemon; else
    /// unchanged.
    fn explain_at(&self, url: &str, error: anyhow::Error) -> anyhow::Error {
        let (url, dir) = (url.to_string(), self.data_dir.display().to_string());
        let reach = match error.downcast_ref::<ClientError>() {
            Some(ClientError::Unreachable { .. }) => ReachError::NotRunning { url, dir },
            Some(ClientError::Unauthorized) if self.token_given => ReachError::GivenTokenRefused { url },
            Some(ClientError::Unauthorized) if self.token.is_none() => ReachError::NoToken { url, dir },
            Some(ClientError::Unauthorized) => {
                ReachError::TokenRefused { url, file: self.data_dir.join(TOKEN_FILE_NAME).display().to_string() }
            }
            _ => return error,
        };
        reach.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(token: Option<&str>, given: bool) -> Target {
        Target {
            url: "http://127.0.0.1:7411/mcp".into(),
            urls: vec!["http://127.0.0.1:7411/mcp".into()],
            token: token.map(String::from),
            data_dir: PathBuf::from("/home/me/typo"),
            token_given: given,
        }
    }

    fn said(target: &Target, error: ClientError) -> String {
        target.explain(error.into()).to_string()
    }

    #[test]
    fn a_refused_token_blames_the_data_directory_not_a_stopped_daemon() {
        let none = said(&target(None, false), ClientError::Unauthorized);
        assert!(none.contains("/home/me/typo holds no MCP token") && none.contains("--data-dir"), "{none}");
        assert!(!none.contains("running"), "the daemon runs: {none}");
        let other = said(&target(Some("t"), false), ClientError::Unauthorized);
        assert!(other.contains("refuses the MCP token in /home/me/typo/mcp-token"), "{other}");
        let given = said(&target(Some("t"), true), ClientError::Unauthorized);
        assert!(given.contains("--mcp-token"), "{given}");
    }

    #[test]
    fn nothing_listening_says_how_to_start_the_daemon() {
        let source = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let down = said(&target(Some("t"), false), ClientError::Unreachable { addr: "127.0.0.1:7411".into(), source });
        assert!(down.contains("orchestrator serve --data-dir /home/me/typo"), "{down}");
        let refused = ClientError::Refused { tool: "worker_pause".into(), code: "X".into(), message: "m".into() };
        assert!(said(&target(Some("t"), false), refused).contains("worker_pause refused"), "others pass unchanged");
    }
}
