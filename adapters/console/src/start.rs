//! `orchestrator start`: a run whose `/root` is a Codex CLI or Claude Code worker in a
//! directory, started from a terminal through the running daemon's MCP tools
//! (`run_create` with the root's executor and workspace, then `worker_continue_now` for
//! its first turn, `worker_get` to say whether an executor of its kind is connected), so a
//! person needs no MCP client to leave a coding agent working.

use crate::client::ClientError;
use crate::reach::Target;
use anyhow::Context;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Longest objective accepted, in bytes: `run_create`'s context limit (32 KiB).
pub const OBJECTIVE_BYTES_MAX: usize = 32 * 1024;
/// Longest task name taken from the objective's first line, in characters.
pub const TASK_NAME_CHARS_MAX: usize = 80;

/// What `orchestrator start` was asked for.
#[derive(Clone, Debug)]
pub struct StartRequest {
    /// `codex` or `claude`.
    pub executor: String,
    /// The directory the worker works in (made absolute here; it must exist).
    pub directory: PathBuf,
    /// The branch, for provenance.
    pub branch: Option<String>,
    /// The job, free text: the run's context, which the root's first prompt carries.
    pub objective: String,
    /// The run's name; default: the objective's first line, cut.
    pub task_name: Option<String>,
    /// Auto Resume for the run's workers (on unless the person asked for manual).
    pub auto_resume: bool,
}

/// Checks the request before anything reaches the daemon: a known CLI kind, an existing
/// directory (made absolute), an objective that is neither empty nor too long.
pub fn validate(mut request: StartRequest) -> anyhow::Result<StartRequest> {
    if !matches!(request.executor.as_str(), "codex" | "claude") {
        anyhow::bail!("--executor must be codex or claude, not {:?}", request.executor);
    }
    let directory = std::fs::canonicalize(&request.directory)
        .with_context(|| format!("the workspace {} cannot be opened", request.directory.display()))?;
    if !directory.is_dir() {
        anyhow::bail!("the workspace {} is not a directory", directory.display());
    }
    request.directory = directory;
    if request.objective.trim().is_empty() {
        anyhow::bail!("the objective is empty: say what the worker is to do");
    }
    if request.objective.len() > OBJECTIVE_BYTES_MAX {
        anyhow::bail!("the objective is {} bytes; at most {OBJECTIVE_BYTES_MAX} are accepted", request.objective.len());
    }
    Ok(request)
}

/// The run's name: the one given, or the objective's first non-empty line, cut.
pub fn task_name(request: &StartRequest) -> String {
    if let Some(name) = &request.task_name {
        return name.clone();
    }
    let line = request.objective.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("CLI run");
    let mut name: String = line.chars().take(TASK_NAME_CHARS_MAX).collect();
    if line.chars().count() > TASK_NAME_CHARS_MAX {
        name.push('…');
    }
    name
}

/// What a failed `run_create` tells the person: refused (the run was certainly not made:
/// nothing answered, the token or the daemon said no), or not answered (the daemon took
/// the request and stopped or failed before it answered, e.g. a leader that lost its
/// database: the run may exist, and starting it again blindly could make it twice).
fn create_failed(error: anyhow::Error) -> anyhow::Error {
    let refused = match error.downcast_ref::<ClientError>() {
        Some(ClientError::Http { status, .. }) => status.is_client_error(),
        Some(_) => true,
        None => false,
    };
    if refused {
        error.context("the daemon refused the run")
    } else {
        error.context(
            "the daemon did not answer whether it made the run (it stopped or failed while making it): \
             `orchestrator status` shows whether it exists; start it again only if it does not",
        )
    }
}

/// The CLI's name for people.
fn product(executor: &str) -> &'static str {
    if executor == "codex" { "Codex CLI" } else { "Claude Code" }
}

/// Creates the run and asks for the root's first turn; returns what to tell the person.
pub async fn start(target: &Target, request: StartRequest) -> anyhow::Result<String> {
    let request = validate(request)?;
    let directory = request.directory.display().to_string();
    let mut client = target.connect().await?;
    let mut workspace = json!({ "directory": directory });
    if let Some(branch) = &request.branch {
        workspace["branch"] = json!(branch);
    }
    let mode = if request.auto_resume { "auto" } else { "manual" };
    let name = task_name(&request);
    let created = client
        .call_ok(
            "run_create",
            json!({
                "taskName": name,
                "rootConversationName": format!("{} in {}", product(&request.executor), leaf(&request.directory)),
                "context": request.objective,
                "defaultPolicy": { "mode": mode },
                "executor": request.executor,
                "workspace": workspace,
            }),
        )
        .await
        .map_err(create_failed)?;
    let run = text(&created, &["/runId", "/run/runId"]).context("run_create answered without a run id")?;
    let root = text(&created, &["/rootWorkerId", "/run/rootWorkerId"]).context("run_create answered without a root")?;
    client.call_ok("worker_continue_now", json!({ "workerId": root })).await.with_context(|| {
        format!(
            "the run {run} exists but its first turn was not asked for: ask for it with `orchestrator worker \
             continue {root}` or Continue now on the dashboard"
        )
    })?;
    // Whether an executor that runs this kind is connected now (the root's liveness).
    let root_view = client.call_ok("worker_get", json!({ "workerId": root })).await.ok();
    let capable = root_view.as_ref().and_then(|v| v.pointer("/liveness/capableExecutors")).and_then(Value::as_u64);
    // A turn held for a free slot (its host's or its account's) does not go in now.
    let waiting = root_view
        .as_ref()
        .and_then(|v| v.get("liveness"))
        .and_then(|l| serde_json::from_value::<caller_protocol::LivenessOut>(l.clone()).ok())
        .filter(|l| l.slot.is_some());
    let first_turn = if let Some(liveness) = waiting {
        format!(
            "A CLI executor running {} is connected, but its first turn waits: {}.",
            request.executor,
            liveness.line()
        )
    } else if capable.is_some_and(|n| n > 0) {
        format!("A CLI executor running {} is connected: its first turn goes in now.", request.executor)
    } else {
        format!(
            "Its first turn goes in once a CLI executor running {} is connected (`orchestrator executor-cli`).",
            request.executor
        )
    };
    let branch = request.branch.as_deref().map(|b| format!(" on {b}")).unwrap_or_default();
    let resume = if request.auto_resume { "Auto Resume on" } else { "Auto Resume off (manual)" };
    Ok(format!(
        "Started {run} \"{name}\": /root ({root}) is a {} worker in {directory}{branch}, {resume}.\n\
         {first_turn}\n\
         Follow it with `orchestrator run show {run}` or the dashboard; it ends when the worker reports its job \
         done.\n\
         Stop it with: orchestrator run stop {run}\n",
        product(&request.executor),
    ))
}

/// The directory's last component, for the root's readable name.
fn leaf(directory: &Path) -> String {
    directory.file_name().map_or_else(|| directory.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The first string among `pointers` in `value`.
fn text(value: &Value, pointers: &[&str]) -> Option<String> {
    pointers.iter().find_map(|p| value.pointer(p).and_then(Value::as_str)).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &Path, objective: &str) -> StartRequest {
        StartRequest {
            executor: "codex".into(),
            directory: dir.to_path_buf(),
            branch: None,
            objective: objective.into(),
            task_name: None,
            auto_resume: true,
        }
    }

    #[test]
    fn a_bad_request_is_refused_before_the_daemon_sees_it() {
        let dir = std::env::temp_dir();
        let wrong_kind = StartRequest { executor: "chatgpt".into(), ..request(&dir, "x") };
        assert!(validate(wrong_kind).unwrap_err().to_string().contains("codex or claude"));
        let missing = request(Path::new("/nonexistent/orchestrator-start"), "x");
        assert!(validate(missing).unwrap_err().to_string().contains("cannot be opened"));
        assert!(validate(request(&dir, "  \n ")).unwrap_err().to_string().contains("empty"));
        let long = "x".repeat(OBJECTIVE_BYTES_MAX + 1);
        assert!(validate(request(&dir, &long)).unwrap_err().to_string().contains("at most"));
        let file = dir.join(format!("orchestrator-start-{}", std::process::id()));
        std::fs::write(&file, "").expect("a file");
        let not_dir = validate(request(&file, "x")).unwrap_err().to_string();
        std::fs::remove_file(&file).expect("removed");
        assert!(not_dir.contains("not a directory"), "{not_dir}");
    }

    #[test]
    fn a_run_the_daemon_did_not_answer_for_is_not_called_refused() {
        let said = |error: ClientError| format!("{:#}", create_failed(error.into()));
        let unanswered = said(ClientError::Http {
            status: hyper::StatusCode::INTERNAL_SERVER_ERROR,
            body: "no response message received from handler".into(),
        });
        assert!(unanswered.starts_with("the daemon did not answer whether it made the run"), "{unanswered}");
        assert!(unanswered.contains("`orchestrator status`"), "{unanswered}");
        let dropped = format!("{:#}", create_failed(anyhow::anyhow!("connection closed before message completed")));
        assert!(dropped.starts_with("the daemon did not answer whether"), "{dropped}");
        let refused = said(ClientError::Refused {
            tool: "run_create".into(),
            code: "INVALID_ARGUMENT".into(),
            message: "bad".into(),
        });
        assert!(refused.starts_with("the daemon refused the run: "), "{refused}");
        let unauthorized = said(ClientError::Unauthorized);
        assert!(unauthorized.starts_with("the daemon refused the run: "), "{unauthorized}");
        let bad_request = said(ClientError::Http { status: hyper::StatusCode::BAD_REQUEST, body: String::new() });
        assert!(bad_request.starts_with("the daemon refused the run: "), "{bad_request}");
    }

    #[test]
    fn a_relative_workspace_becomes_absolute() {
        let ok = validate(request(Path::new("."), "fix the build")).expect("valid");
        assert!(ok.directory.is_absolute(), "{}", ok.directory.display());
    }

    #[test]
    fn the_task_name_is_the_objective_s_first_line_cut() {
        let dir = std::env::temp_dir();
        assert_eq!(task_name(&request(&dir, "\n  Fix the flaky test\nthen more")), "Fix the flaky test");
        let long = "y".repeat(TASK_NAME_CHARS_MAX + 5);
        let cut = task_name(&request(&dir, &long));
        assert_eq!(cut.chars().count(), TASK_NAME_CHARS_MAX + 1);
        assert!(cut.ends_with('…'));
        let named = StartRequest { task_name: Some("mine".into()), ..request(&dir, "objective") };
        assert_eq!(task_name(&named), "mine");
    }
}
