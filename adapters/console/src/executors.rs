//! The executors a running daemon has connected now, as `/health` lists them, for
//! `orchestrator executor list`: which hosts with a token are connected, which are not,
//! and who else is connected with the shared token.

use crate::client::McpClient;
use address::{HEALTH_PATH, Health};
use std::time::Duration;

/// How long the daemon may take to answer, in ms (it answers `/health` at once).
const HEALTH_ANSWER_MS_MAX: u64 = 3_000;

/// One connected executor: its id and what a person calls the kinds it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connected {
    /// Its `hello`'s `executorId` (a host id for a CLI executor).
    pub id: String,
    /// `browser`, `Codex CLI`, `Claude Code CLI`, joined with `+`.
    pub kinds: String,
}

/// The executors connected to the daemon at `mcp_url` now; an error says why it could not
/// be asked (not running, a standby, a refused token).
pub async fn connected(mcp_url: &str, token: &str) -> anyhow::Result<Vec<Connected>> {
    let base = mcp_url.strip_suffix("/mcp").ok_or_else(|| anyhow::anyhow!("{mcp_url} is not an /mcp address"))?;
    let health_url = format!("{base}{HEALTH_PATH}");
    let ask = async {
        let mut client = McpClient::connect_raw(&health_url, Some(token)).await?;
        let answer = client.send(hyper::Method::GET, None, &[], None).await?;
        if let Some(leader) = crate::client::not_leader(answer.status, &answer.text) {
            anyhow::bail!("the daemon at {mcp_url} is a standby; the leader is {leader}");
        }
        anyhow::ensure!(answer.status == hyper::StatusCode::OK, "{health_url} answered HTTP {}", answer.status);
        let health: Health = serde_json::from_str(&answer.text)?;
        anyhow::Ok(health)
    };
    let health = tokio::time::timeout(Duration::from_millis(HEALTH_ANSWER_MS_MAX), ask)
        .await
        .map_err(|_| anyhow::anyhow!("the daemon at {mcp_url} did not answer within {HEALTH_ANSWER_MS_MAX} ms"))??;
    let kinds_of = |id: &str| -> String {
        let Some(view) = health.executor_kinds.iter().find(|e| e.executor_id == id) else {
            return "executor".to_string();
        };
        let named: Vec<String> = view
            .kinds
            .iter()
            .map(|k| {
                engine::ExecutorKind::parse(k).map_or(k.clone(), |k| caller_protocol::executor_kind_name(k).to_string())
            })
            .collect();
        if named.is_empty() { "executor".to_string() } else { named.join("+") }
    };
    Ok(health.executors.iter().map(|id| Connected { id: id.clone(), kinds: kinds_of(id) }).collect())
}
