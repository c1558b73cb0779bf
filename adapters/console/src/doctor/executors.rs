//! The executor checks of `doctor`: the connected executors named by kind, and for each
//! worker kind an unfinished worker needs, a connected executor that runs it.

use super::{Check, HEALTH_ANSWER_MS_MAX, Reached, Verdict, fail};
use crate::client::McpClient;
use address::Health;
use serde_json::Value;
use std::time::Duration;

/// What a person calls an executor of a kind (`chatgpt`, `codex`, `claude`).
fn kind_name(kind: &str) -> &str {
    match engine::ExecutorKind::parse(kind) {
        Some(k) => caller_protocol::executor_kind_name(k),
        None => kind,
    }
}

/// The connected executors as a person names them: `browser chrome-1, Codex CLI cli-host`
/// (an executor running several kinds is named by each: `browser+Codex CLI both-1`).
fn executors_by_kind(health: &Health) -> String {
    let mut named: Vec<String> = health
        .executor_kinds
        .iter()
        .map(|e| {
            let kinds: Vec<&str> = e.kinds.iter().map(|k| kind_name(k)).collect();
            let kinds = if kinds.is_empty() { "executor".to_string() } else { kinds.join("+") };
            format!("{kinds} {}", e.executor_id)
        })
        .collect();
    // An older daemon lists ids only.
    let listed: Vec<&str> = health.executor_kinds.iter().map(|e| e.executor_id.as_str()).collect();
    named.extend(health.executors.iter().filter(|e| !listed.contains(&e.as_str())).map(|e| format!("executor {e}")));
    named.join(", ")
}

pub(super) fn check_executors(reached: &Reached, mcp_url: &str) -> Check {
    let name = "executors";
    let Reached::Answered(health) = reached else {
        return Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) };
    };
    let Some(protocol) = health.executor_protocol else {
        return Check { name, verdict: Verdict::Skip("this daemon serves no executor endpoint".into()) };
    };
    if !health.executors.is_empty() {
        let found =
            format!("{} connected ({}), protocol v{protocol}", health.executors.len(), executors_by_kind(health));
        return Check { name, verdict: Verdict::Pass(found) };
    }
    let endpoint = mcp_url.replacen("http://", "ws://", 1).replace("/mcp", "/executor");
    if let Some(refused) = health.refused_hellos.last() {
        return fail(
            name,
            format!(
                "an executor (a browser extension or a CLI executor) asked for protocol v{} and was refused; this \
                 daemon speaks v{protocol}",
                refused.protocol
            ),
            "update whichever of the two is older (the executor or the daemon) so that both speak the same version",
        );
    }
    fail(
        name,
        "no executor is connected (no browser extension, no CLI executor)".to_string(),
        format!(
            "for ChatGPT workers open the Orchestrator extension's settings in your browser and type the code \
             `orchestrator pair` prints (the settings find this daemon at {endpoint}; pasting the executor token from \
             the file executor-token in the data directory works too); for Codex or Claude Code workers run \
             orchestrator executor-cli"
        ),
    )
}

/// The executor kinds of the unfinished workers of every unfinished run, with how many
/// workers need each (`None` when the daemon could not be asked).
pub(super) async fn kinds_in_use(mcp_url: &str, token: &str) -> Option<std::collections::BTreeMap<String, usize>> {
    let ask = async {
        let mut client = McpClient::connect(mcp_url, Some(token)).await?;
        let runs = client.call_ok("run_list", serde_json::json!({ "includeTerminal": false })).await?;
        let mut kinds = std::collections::BTreeMap::new();
        for run in runs.get("runs").and_then(Value::as_array).cloned().unwrap_or_default() {
            let id = run.get("runId").and_then(Value::as_str).unwrap_or_default();
            let workers =
                client.call_ok("worker_list", serde_json::json!({ "runId": id, "includeTerminal": false })).await?;
            for w in workers.get("workers").and_then(Value::as_array).cloned().unwrap_or_default() {
                let kind = w.get("executor").and_then(Value::as_str).unwrap_or("chatgpt").to_string();
                *kinds.entry(kind).or_insert(0) += 1;
            }
        }
        anyhow::Ok(kinds)
    };
    tokio::time::timeout(Duration::from_millis(HEALTH_ANSWER_MS_MAX), ask).await.ok()?.ok()
}

/// For each worker kind in use, a connected executor that runs it.
pub(super) fn check_kinds(reached: &Reached, in_use: Option<&std::collections::BTreeMap<String, usize>>) -> Check {
    let name = "worker kinds";
    let Reached::Answered(health) = reached else {
        return Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) };
    };
    let Some(in_use) = in_use else {
        return Check { name, verdict: Verdict::Skip("the daemon did not list its workers".into()) };
    };
    if in_use.is_empty() {
        return Check { name, verdict: Verdict::Skip("no unfinished worker".into()) };
    }
    let capable = |kind: &str| health.executor_kinds.iter().filter(|e| e.kinds.iter().any(|k| k == kind)).count();
    let (mut carried, mut missing) = (Vec::new(), Vec::new());
    for (kind, workers) in in_use {
        let workers =
            format!("{workers} unfinished {} worker{}", kind_name(kind), if *workers == 1 { "" } else { "s" });
        match capable(kind) {
            0 => missing.push((kind.as_str(), workers)),
            n => carried.push(format!("{workers}: {n} {} connected", kind_name(kind))),
        }
    }
    if missing.is_empty() {
        return Check { name, verdict: Verdict::Pass(carried.join("; ")) };
    }
    let found: Vec<String> = missing
        .iter()
        .map(|(kind, workers)| format!("{workers} and no {} executor connected", kind_name(kind)))
        .collect();
    let fixes: Vec<&str> = missing
        .iter()
        .map(|(kind, _)| match *kind {
            "chatgpt" => "open the browser profile with the Orchestrator extension",
            _ => "start orchestrator executor-cli on the machine that has the workers' directories",
        })
        .collect();
    let mut fixes = fixes;
    fixes.dedup();
    fail(name, found.join("; "), format!("{}: until then nothing runs them", fixes.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use address::ExecutorKindsView;
    use std::collections::BTreeMap;

    fn health(executors: &[(&str, &[&str])]) -> Reached {
        Reached::Answered(Box::new(Health {
            version: "0".into(),
            executor_protocol: Some(1),
            executors: executors.iter().map(|(e, _)| e.to_string()).collect(),
            executor_kinds: executors
                .iter()
                .map(|(e, kinds)| ExecutorKindsView {
                    executor_id: e.to_string(),
                    kinds: kinds.iter().map(|k| k.to_string()).collect(),
                })
                .collect(),
            refused_hellos: Vec::new(),
            public_url: None,
            notifications: None,
        }))
    }

    fn in_use(kinds: &[(&str, usize)]) -> BTreeMap<String, usize> {
        kinds.iter().map(|(k, n)| (k.to_string(), *n)).collect()
    }

    #[test]
    fn executors_are_named_by_kind() {
        let reached = health(&[("chrome-1", &["chatgpt"]), ("cli-host", &["codex", "claude"])]);
        let check = check_executors(&reached, "http://127.0.0.1:7411/mcp");
        assert_eq!(
            check.verdict,
            Verdict::Pass("2 connected (browser chrome-1, Codex CLI+Claude Code CLI cli-host), protocol v1".into())
        );
    }

    #[test]
    fn a_kind_in_use_without_a_capable_executor_fails_even_when_another_kind_is_connected() {
        let reached = health(&[("cli-host", &["codex"])]);
        let check = check_kinds(&reached, Some(&in_use(&[("chatgpt", 1), ("codex", 2)])));
        let Verdict::Fail { found, fix } = check.verdict else { panic!("{check:?}") };
        assert_eq!(found, "1 unfinished browser worker and no browser executor connected");
        assert!(fix.starts_with("open the browser profile with the Orchestrator extension"), "{fix}");
        let carried = check_kinds(&reached, Some(&in_use(&[("codex", 2)])));
        assert_eq!(carried.verdict, Verdict::Pass("2 unfinished Codex CLI workers: 1 Codex CLI connected".into()));
    }

    #[test]
    fn no_unfinished_worker_needs_no_executor() {
        let reached = health(&[]);
        assert!(matches!(check_kinds(&reached, Some(&in_use(&[]))).verdict, Verdict::Skip(_)));
        assert!(matches!(check_kinds(&reached, None).verdict, Verdict::Skip(_)));
    }
}
