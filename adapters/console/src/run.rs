//! `orchestrator run list|show|pause|resume|stop`: a person's controls over a whole run from
//! a terminal, the dashboard's run controls by the same names (Pause all after current
//! turns, Resume all unfinished, Stop run), each one MCP tool call on the running daemon.
//! A run started with `orchestrator start` is stopped here: its `/root` is not stopped alone.

use crate::reach::Target;
use crate::refused;
use crate::status;
use serde_json::{Value, json};

/// The reason recorded on every worker a `run stop` cancels when the person gives none
/// (the dashboard's own default).
pub const STOP_REASON_DEFAULT: &str = "Stopped by the operator";
/// Longest stop reason accepted, in bytes (the tool's own limit, checked again by the daemon).
pub const REASON_BYTES_MAX: usize = 4 * 1024;

/// What a person asks of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunAction {
    /// Every run, one line each (`run_list`).
    List,
    /// The run with its workers and their attempts, as `status` shows it.
    Show(String),
    /// Pause every unfinished worker once its running turn ends (`run_pause_all`).
    Pause(String),
    /// Clear the pauses a person made (`run_resume_all`).
    Resume(String),
    /// Stop the run for good: every unfinished worker is cancelled (`run_cancel`).
    Stop {
        /// The run.
        run: String,
        /// Why (recorded on every cancelled worker).
        reason: String,
    },
}

/// Checks a run id's shape (`run-3`) before anything reaches the daemon.
pub fn validate_run(run: &str) -> anyhow::Result<()> {
    let digits = run.strip_prefix("run-").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        anyhow::bail!("{run:?} is not a run id (e.g. run-2; `orchestrator run list` lists them)");
    }
    Ok(())
}

/// Performs `action` through the daemon; returns what to tell the person.
pub async fn perform(target: &Target, action: RunAction) -> anyhow::Result<String> {
    let (run, tool, arguments, done) = match &action {
        RunAction::List => return list(target).await,
        RunAction::Show(run) => {
            validate_run(run)?;
            return status::report(target, Some(run), false).await;
        }
        RunAction::Pause(run) => (
            run,
            "run_pause_all",
            json!({ "runId": run }),
            format!(
                "{run}: every unfinished worker pauses once its running turn ends. Undo: orchestrator run resume {run}"
            ),
        ),
        RunAction::Resume(run) => (
            run,
            "run_resume_all",
            json!({ "runId": run }),
            format!(
                "{run}: the pauses you made are cleared. A worker the orchestrator paused for a reason (a stall, a \
                 page it could not read) stays paused until you resume it: orchestrator worker resume WRK"
            ),
        ),
        RunAction::Stop { run, reason } => {
            if reason.len() > REASON_BYTES_MAX {
                anyhow::bail!("the reason is {} bytes; at most {REASON_BYTES_MAX} are accepted", reason.len());
            }
            (
                run,
                "run_cancel",
                json!({ "runId": run, "reason": reason }),
                format!("{run} stopped: every unfinished worker is cancelled and nothing more is sent to it."),
            )
        }
    };
    validate_run(run)?;
    let mut client = target.connect().await?;
    match client.call_ok(tool, arguments).await {
        Ok(_) => Ok(format!("{done}\n")),
        Err(error) => Err(refused::for_person(&mut client, error, None, Some(run)).await),
    }
}

/// Every run in one line each, with what to type next.
async fn list(target: &Target) -> anyhow::Result<String> {
    let mut client = target.connect().await?;
    let runs = client.call_ok("run_list", json!({ "includeTerminal": true })).await?;
    let runs = runs.get("runs").and_then(Value::as_array).cloned().unwrap_or_default();
    if runs.is_empty() {
        return Ok(format!("No runs yet ({}).\n", client.url()));
    }
    let mut out: String = runs.iter().map(|r| format!("{}\n", status::run_line(r))).collect();
    out.push_str("Its workers: orchestrator run show RUN. Stop one: orchestrator run stop RUN.\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_run_id_is_refused_before_the_daemon_sees_it() {
        assert!(validate_run("run-12").is_ok());
        for bad in ["12", "run-", "wrk-1", "run-1a"] {
            assert!(validate_run(bad).unwrap_err().to_string().contains("not a run id"), "{bad}");
        }
    }
}
