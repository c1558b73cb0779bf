//! A refusal as a person reads it. The engine's rejection is written for the calling
//! agent and may name an MCP tool (`run_cancel`, `worker_release_dependency`,
//! `overrideWait`), which a person at a terminal or a dashboard cannot call. Here the same
//! refusal, with the same stable code, says what to do with the command line's command and
//! the dashboard's control (the words of docs/operator.md). The one place for that wording:
//! the command line (`orchestrator worker …`, `orchestrator run …`) and the operator
//! channel (the extension's popup, overlay and dashboard) both use it.

use crate::error::ErrorOut;
use engine::RejectionCode;

/// What the refused action was about: the printed ids a person's command would name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subject<'a> {
    /// The worker acted on, e.g. `wrk-3`.
    pub worker: Option<&'a str>,
    /// Its run (or the run acted on), e.g. `run-1`.
    pub run: Option<&'a str>,
}

/// Whether a refusal with `code` needs the run's id to be worded for a person, when only
/// the worker is known (the caller then looks it up).
pub fn needs_run(code: &str) -> bool {
    code == RejectionCode::RootLifecycle.as_str()
}

/// The refusal `error` for a person acting on `subject`: the same code, a message that
/// names the command and the control to use instead of any MCP tool.
pub fn for_person(error: &ErrorOut, subject: Subject<'_>) -> ErrorOut {
    let worker = subject.worker.unwrap_or("WORKER");
    let run = subject.run;
    let code = |c: RejectionCode| c.as_str();
    let message = match error.code.as_str() {
        c if c == code(RejectionCode::RootLifecycle) => {
            let command = match run {
                Some(run) => format!("`orchestrator run stop {run}`"),
                None => "`orchestrator run stop RUN` (`orchestrator run list` names the run)".to_string(),
            };
            format!(
                "{worker} is its run's /root and cannot be stopped alone: stop the whole run with {command} or Stop \
                 run on the dashboard"
            )
        }
        c if c == code(RejectionCode::WorkerAwaitingDependency) => format!(
            "{worker} is waiting for another worker: release it with `orchestrator worker release {worker}` or \
             Release on the dashboard, and it goes on"
        ),
        c if c == code(RejectionCode::WorkerAwaitingHuman) => format!(
            "{worker} is waiting for your answer: give it with `orchestrator worker answer {worker} \"…\"` or Send \
             answer under Needs you on the dashboard"
        ),
        c if c == code(RejectionCode::NotAwaitingHuman) => {
            format!("{worker} asked no question, so there is nothing to answer (`orchestrator status` shows its state)")
        }
        c if c == code(RejectionCode::NotAwaitingDependency) => format!(
            "{worker} is not waiting for another worker, so there is nothing to release (`orchestrator status` \
             shows its state)"
        ),
        c if c == code(RejectionCode::UnknownWorker) => {
            format!("there is no worker {worker}: `orchestrator status` lists them")
        }
        c if c == code(RejectionCode::UnknownRun) => {
            format!("there is no run {}: `orchestrator run list` lists them", run.unwrap_or("RUN"))
        }
        _ => error.message.clone(),
    };
    ErrorOut::new(&error.code, &message)
}

/// Whether `text` names an MCP tool or one of its arguments (what a person cannot type):
/// a `run_`, `worker_`, `message_`, `events_` or `approval_` name, or `overrideWait`.
pub fn names_a_tool(text: &str) -> bool {
    const PREFIXES: [&str; 5] = ["run_", "worker_", "message_", "events_", "approval_"];
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| word == "overrideWait" || PREFIXES.iter().any(|p| word.starts_with(p) && word.len() > p.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(code: RejectionCode, message: &str) -> ErrorOut {
        ErrorOut::new(code.as_str(), message)
    }

    #[test]
    fn the_refusals_that_name_a_tool_name_the_command_and_the_control_instead() {
        let subject = Subject { worker: Some("wrk-1"), run: Some("run-2") };
        let root = for_person(
            &refused(RejectionCode::RootLifecycle, "stop the whole run with run_cancel instead of interrupting /root"),
            subject,
        );
        assert_eq!(root.code, "ROOT_LIFECYCLE", "the code is kept");
        assert!(root.message.contains("`orchestrator run stop run-2`") && root.message.contains("Stop run"));
        let waits =
            "worker wrk-1 waits for a dependency: release it with worker_release_dependency, or pass overrideWait";
        let dependency = for_person(&refused(RejectionCode::WorkerAwaitingDependency, waits), subject);
        assert!(dependency.message.contains("`orchestrator worker release wrk-1`"), "{}", dependency.message);
        assert!(dependency.message.contains("Release on the dashboard"), "{}", dependency.message);
        let asks = "worker wrk-1 needs a human answer: resolve it with worker_resolve_human, or pass overrideWait";
        let human = for_person(&refused(RejectionCode::WorkerAwaitingHuman, asks), subject);
        assert!(human.message.contains("`orchestrator worker answer wrk-1"), "{}", human.message);
        for person in [root, dependency, human] {
            assert!(!names_a_tool(&person.message), "{}", person.message);
        }
    }

    #[test]
    fn a_root_refusal_without_the_run_says_where_to_find_it() {
        let root =
            for_person(&refused(RejectionCode::RootLifecycle, "x"), Subject { worker: Some("wrk-1"), run: None });
        assert!(root.message.contains("`orchestrator run list`"), "{}", root.message);
        assert!(needs_run("ROOT_LIFECYCLE") && !needs_run("WORKER_TERMINAL"));
    }

    #[test]
    fn every_engine_code_reads_without_a_tool_name_when_its_message_has_none() {
        // A refusal the engine words without a tool passes through unchanged, or reworded.
        for code in RejectionCode::ALL {
            let plain = refused(code, "worker wrk-4 (/root/a) is already cancelled; nothing more can happen to it");
            let person = for_person(&plain, Subject { worker: Some("wrk-4"), run: Some("run-1") });
            assert_eq!(person.code, code.as_str());
            assert!(!names_a_tool(&person.message), "{}: {}", code.as_str(), person.message);
        }
    }

    #[test]
    fn tool_names_are_recognised_and_plain_words_are_not() {
        for named in ["use run_cancel", "worker_release_dependency,", "pass overrideWait", "(approval_answer)"] {
            assert!(names_a_tool(named), "{named}");
        }
        for plain in ["stop the run", "worker wrk-2 is paused", "`orchestrator run stop run-1`", "run_ alone"] {
            assert!(!names_a_tool(plain), "{plain}");
        }
    }
}
