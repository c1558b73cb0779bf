//! The tool catalog: every tool's name, description (written for the agent that calls
//! it), input and output JSON schemas and annotations.

use caller_protocol::*;
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::Value;
use std::sync::{Arc, LazyLock};

/// Every tool name, in catalog order: one per engine operation.
pub const TOOL_NAMES: [&str; 30] = [
    "run_create",
    "run_get",
    "run_list",
    "run_update_context",
    "run_cancel",
    "run_set_default_continuation",
    "run_pause_all",
    "run_resume_all",
    "worker_spawn",
    "worker_attach",
    "worker_get",
    "worker_list",
    "worker_progress",
    "worker_complete",
    "worker_fail",
    "worker_interrupt",
    "worker_followup",
    "worker_await_human",
    "worker_resolve_human",
    "worker_await_dependency",
    "worker_release_dependency",
    "worker_pause",
    "worker_resume",
    "worker_continue_now",
    "worker_continuation_get",
    "worker_continuation_set",
    "worker_steer",
    "worker_attempts",
    "message_send",
    "events_wait",
];

/// How a tool behaves, for the client's UI and approval prompts.
#[derive(Clone, Copy)]
enum Kind {
    /// Reads only.
    Read,
    /// Changes state; calling it twice may do more than once.
    Write,
    /// Changes state; repeating it with the same arguments changes nothing more.
    Idempotent,
    /// Ends something for good.
    Destructive,
}

fn tool<A: JsonSchema + 'static, O: JsonSchema + 'static>(name: &'static str, kind: Kind, description: &str) -> Tool {
    let input = schema_for_input::<A>().unwrap_or_else(|e| panic!("input schema of {name}: {e}"));
    let input = Arc::new(without_foreign_formats(&input));
    let output = Arc::new(without_foreign_formats(&schema_for_output::<O>()));
    let annotations = match kind {
        Kind::Read => ToolAnnotations::new().read_only(true),
        Kind::Write => ToolAnnotations::new().read_only(false).destructive(false).idempotent(false),
        Kind::Idempotent => ToolAnnotations::new().read_only(false).destructive(false).idempotent(true),
        Kind::Destructive => ToolAnnotations::new().read_only(false).destructive(true),
    }
    .open_world(false);
    Tool::new(name, description.to_string(), input).with_raw_output_schema(output).with_annotations(annotations)
}

/// The `format` values JSON Schema (2020-12) defines; clients' validators know them.
const JSON_SCHEMA_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `schema` without the `format`s schemars adds for Rust integer types (`uint64`, ...):
/// they constrain nothing (`minimum` already says non-negative), and a client's validator
/// that does not know them warns about each one every time it compiles a tool's schema
/// (the TypeScript SDK's AJV does, for every tool of the catalog).
/// Only a string `format` is a keyword: a property named `format` (an object under
/// `properties`) stays.
fn without_foreign_formats(schema: &JsonObject) -> JsonObject {
    fn strip_object(map: &mut JsonObject) {
        if map.get("format").and_then(Value::as_str).is_some_and(|f| !JSON_SCHEMA_FORMATS.contains(&f)) {
            map.remove("format");
        }
        map.values_mut().for_each(strip);
    }
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => strip_object(map),
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut schema = schema.clone();
    strip_object(&mut schema);
    schema
}

/// The catalog, built once.
pub fn catalog() -> &'static [Tool] {
    static CATALOG: LazyLock<Vec<Tool>> = LazyLock::new(build);
    &CATALOG
}

fn build() -> Vec<Tool> {
    use Kind::*;
    let tools = vec![
        tool::<RunCreateArgs, RunOut>(
            "run_create",
            Write,
            "Create a run: one orchestrated objective with its /root coordinator worker. Give a concise \
             taskName (lanes are labelled '<taskName> Lane A/B/...'), the rootConversationName and the plan \
             as context. Optionally set the run's defaultPolicy (e.g. {\"mode\": \"auto\"} so unfinished \
             workers are resumed automatically). Returns the run, including its id (run-N) and rootWorkerId.",
        ),
        tool::<RunIdArgs, RunOut>(
            "run_get",
            Read,
            "Read one run: names, context, status, default policy and worker counts (workers, unfinished).",
        ),
        tool::<RunListArgs, RunListOut>(
            "run_list",
            Read,
            "List the unfinished runs, oldest first; with includeTerminal, then the finished runs the daemon keeps (completed, failed or cancelled, with how each ended), the most recently ended first.",
        ),
        tool::<RunUpdateContextArgs, RunOut>(
            "run_update_context",
            Idempotent,
            "Replace a run's taskName, rootConversationName and/or context (give at least one). Use it when \
             the plan changes or names are unclear. Returns the updated run.",
        ),
        tool::<RunCancelArgs, RunOut>(
            "run_cancel",
            Destructive,
            "Stop a run for good: every unfinished worker is cancelled and no further turn is started. \
             Cannot be undone; to stop temporarily use run_pause_all. Returns the cancelled run.",
        ),
        tool::<RunSetDefaultContinuationArgs, RunOut>(
            "run_set_default_continuation",
            Idempotent,
            "Change the run's default continuation policy, inherited by every worker without an override \
             (e.g. {\"policy\": {\"mode\": \"auto\"}}). Returns the run with its new defaultPolicy.",
        ),
        tool::<RunIdArgs, RunOut>(
            "run_pause_all",
            Idempotent,
            "Pause every unfinished worker of the run after its current turn (nothing is interrupted \
             mid-turn). Undo with run_resume_all. Returns the run.",
        ),
        tool::<RunIdArgs, RunOut>(
            "run_resume_all",
            Idempotent,
            "Clear operator pauses on every unfinished worker of the run; each worker's policy then decides \
             whether it continues. Stall, host-UI and ambiguous-submission pauses stay (a person must look \
             at those workers: use worker_resume on each). Returns the run.",
        ),
        tool::<WorkerSpawnArgs, WorkerOut>(
            "worker_spawn",
            Write,
            "Create a worker (a lane) in a run, named under /root (e.g. /root/backend), with an assignment \
             (objective, scope, acceptanceCriteria) and a one-line taskSummary. With start=true (default) a \
             fresh managed conversation is opened and the bootstrap submitted; with start=false the worker \
             waits for worker_attach. executor picks who runs it: chatgpt (a ChatGPT conversation), codex \
             (Codex CLI) or claude (Claude Code); omitted, the parent's kind. A codex or claude worker needs \
             workspace.directory, an absolute path (a lane of a CLI parent inherits the parent's directory), \
             and optionally workspace.branch. Returns the worker, including its id (wrk-N) and disposition.",
        ),
        tool::<WorkerAttachArgs, WorkerOut>(
            "worker_attach",
            Write,
            "Bind an existing managed conversation (its URL) to a worker. A worker that never ran gets its \
             bootstrap as the initial attempt; one whose conversation was lost gets a recovery attempt. \
             Attaching the conversation it already has changes nothing. A chatgpt worker takes a ChatGPT URL, a \
             codex worker codex:thread/<threadId>, a claude worker claude:session/<sessionId>. Returns the worker.",
        ),
        tool::<WorkerIdArgs, WorkerOut>(
            "worker_get",
            Read,
            "Read one worker: lifecycle and disposition (running, awaiting_execution, awaiting_human, \
             awaiting_dependency, paused, completed, failed, cancelled), effective policy and whether it is \
             the run default or a worker override, current attempt, pending continuation with its wake \
             reasons, waits, pause with reason, conversation binding, progress/stall counters and inbox. \
             Call it at the start of every turn to recover authoritative state.",
        ),
        tool::<WorkerListArgs, WorkerListOut>(
            "worker_list",
            Read,
            "List a run's workers (/root first), with the same detail as worker_get. Unfinished workers only \
             unless includeTerminal is true.",
        ),
        tool::<WorkerProgressArgs, ProgressReportOut>(
            "worker_progress",
            Write,
            "Record durable progress for a worker: what was done since the last report and, if any, the \
             checkpoint commit. Resets the no-progress (stall) counters and wakes /root. Report after every \
             meaningful step. Returns a short acknowledgement: the worker's disposition (paused or waiting \
             means finish the turn and stop), its progress counters, any pause and how many messages wait \
             in its inbox; worker_get returns the whole worker.",
        ),
        tool::<WorkerCompleteArgs, WorkerOut>(
            "worker_complete",
            Destructive,
            "Mark a worker's assignment done, with its terminal handoff summary. This is the only way a \
             worker completes (going idle never does); no further turn is started for it. /root can complete \
             only after every other worker of the run finished. Returns the worker.",
        ),
        tool::<WorkerReasonArgs, WorkerOut>(
            "worker_fail",
            Destructive,
            "Mark a worker as failed for good (irrecoverable), with the reason. No further turn is started. \
             If a person or another worker could unblock it, use worker_await_human or \
             worker_await_dependency instead. Returns the worker.",
        ),
        tool::<WorkerReasonArgs, WorkerOut>(
            "worker_interrupt",
            Destructive,
            "Stop a worker for good (cancelled), with the reason: any pending continuation is withdrawn. \
             Unlike worker_pause this cannot be resumed; to stop a whole run use run_cancel. Returns the worker.",
        ),
        tool::<WorkerFollowupArgs, WorkerOut>(
            "worker_followup",
            Write,
            "Give a worker new instructions, optionally replacing its assignment; they are delivered as a \
             follow-up turn (opening a fresh conversation if the old one is lost). Returns the worker.",
        ),
        tool::<WorkerAwaitHumanArgs, WorkerOut>(
            "worker_await_human",
            Write,
            "Declare that a worker needs a person: the reason, the question and optional choices. No further \
             turn is started until worker_resolve_human answers it. Returns the worker (awaiting_human).",
        ),
        tool::<WorkerResolveHumanArgs, WorkerOut>(
            "worker_resolve_human",
            Write,
            "Answer a worker's open human wait. The answer is kept for the worker (humanAnswer) and it is \
             woken to continue. Fails with NOT_AWAITING_HUMAN when nothing is asked. Returns the worker.",
        ),
        tool::<WorkerAwaitDependencyArgs, WorkerOut>(
            "worker_await_dependency",
            Write,
            "Declare that a worker cannot progress until something else happens: another worker of the run \
             completes (dependency.workerId; released automatically) or an external condition \
             (dependency.description; released by worker_release_dependency). No turn is started meanwhile. \
             Returns the worker (awaiting_dependency).",
        ),
        tool::<WorkerReleaseDependencyArgs, WorkerOut>(
            "worker_release_dependency",
            Write,
            "Release a worker's dependency wait, with an optional note on what changed; the worker is woken \
             to continue. Returns the worker.",
        ),
        tool::<WorkerPauseArgs, WorkerOut>(
            "worker_pause",
            Idempotent,
            "Pause a worker: no automatic turn starts while paused. Now, or with afterCurrentTurn=true once \
             the running turn ends. Undo with worker_resume. Returns the worker.",
        ),
        tool::<WorkerIdArgs, WorkerOut>(
            "worker_resume",
            Idempotent,
            "Clear any pause of a worker (including a stall pause, whose counters reset) and let its policy \
             decide whether it continues. Returns the worker.",
        ),
        tool::<WorkerContinueNowArgs, ContinueNowOut>(
            "worker_continue_now",
            Write,
            "Ask for exactly one more turn of a worker now. Idle conversation: one manual attempt is \
             scheduled; generating: one resume is queued for when the turn ends; already pending or in \
             flight: nothing is added; conversation lost: a fresh one is opened (recovery). Refused for \
             terminal workers, and for human/dependency waits unless overrideWait. An operator pause stays \
             after this turn unless clearPause. Returns the outcome and the worker.",
        ),
        tool::<WorkerIdArgs, ContinuationPolicyOut>(
            "worker_continuation_get",
            Read,
            "Read a worker's effective continuation policy and its source (run_default, worker_override or \
             engine_default).",
        ),
        tool::<WorkerContinuationSetArgs, ContinuationPolicyOut>(
            "worker_continuation_set",
            Idempotent,
            "Change a worker's continuation policy: the fields given in policy are applied to its effective \
             policy and stored as a worker override (e.g. {\"policy\": {\"mode\": \"auto\"}}); inherit=true \
             drops the override. Returns the effective policy and its source.",
        ),
        tool::<WorkerSteerArgs, SteerOut>(
            "worker_steer",
            Write,
            "Root's review of a lane: an outcome (continue_as_planned, correct_direction, change_priority, \
             provide_dependency, request_evidence, pause, terminal_reconcile) and a message delivered \
             verbatim. Material corrections (correct_direction by default, or material=true) bypass the \
             15-minute anti-spam floor; an identical correction is coalesced, not resent. Returns whether it \
             coalesced and the lane.",
        ),
        tool::<WorkerAttemptsArgs, AttemptsOut>(
            "worker_attempts",
            Read,
            "List a worker's execution attempts (one per submitted turn or steer) in sequence order, with \
             reason, wake reasons, state, outcome and executor error codes. Page with afterSequence.",
        ),
        tool::<MessageSendArgs, MessageOut>(
            "message_send",
            Write,
            "Send a message to a worker of the same run (from another worker, or from the operator when \
             'from' is omitted). It lands in the recipient's inbox and wakes it; lanes report blockers and \
             handoffs to /root this way. Returns the message.",
        ),
        tool::<EventsWaitArgs, EventsOut>(
            "events_wait",
            Read,
            "Read durable events after a cursor, optionally only one run's or one worker's. If none match \
             yet, wait up to timeoutMs (capped at 25000) for one to commit, then return; an empty page just \
             means nothing happened yet. Always continue from the returned nextCursor.",
        ),
    ];
    debug_assert_eq!(tools.len(), TOOL_NAMES.len());
    tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::INSTRUCTIONS as INSTRUCTIONS_FOR_TEST;

    #[test]
    fn one_tool_per_name_with_schemas_and_descriptions() {
        let names: Vec<&str> = catalog().iter().map(|t| &*t.name).collect();
        assert_eq!(names, TOOL_NAMES.to_vec());
        for t in catalog() {
            assert!(t.name.len() <= 64 && t.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{}", t.name);
            assert!(t.description.as_deref().is_some_and(|d| d.len() > 60), "{} needs a real description", t.name);
            assert_eq!(t.input_schema.get("type").and_then(|v| v.as_str()), Some("object"), "{}", t.name);
            let output = t.output_schema.as_ref().unwrap_or_else(|| panic!("{} has no output schema", t.name));
            assert_eq!(output.get("type").and_then(|v| v.as_str()), Some("object"), "{}", t.name);
        }
    }

    #[test]
    fn schemas_use_only_formats_json_schema_defines() {
        fn formats<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
            match value {
                Value::Object(map) => {
                    if let Some(f) = map.get("format").and_then(Value::as_str) {
                        found.push(f);
                    }
                    map.values().for_each(|v| formats(v, found));
                }
                Value::Array(items) => items.iter().for_each(|v| formats(v, found)),
                _ => {}
            }
        }
        let mut raw = Vec::new();
        let value = Value::Object((*schema_for_output::<WorkerOut>()).clone());
        formats(&value, &mut raw);
        assert!(raw.contains(&"uint64"), "schemars still emits integer formats: {raw:?}");
        for t in catalog() {
            let input = Value::Object((*t.input_schema).clone());
            let output = Value::Object(t.output_schema.as_deref().cloned().unwrap_or_default());
            let mut found = Vec::new();
            formats(&input, &mut found);
            formats(&output, &mut found);
            let foreign: Vec<_> = found.iter().filter(|f| !JSON_SCHEMA_FORMATS.contains(f)).collect();
            assert!(foreign.is_empty(), "{}: {foreign:?}", t.name);
            assert!(t.output_schema.as_ref().is_some_and(|o| o.contains_key("properties")), "{}", t.name);
        }
    }

    /// Every tool's annotations, by hand: (name, readOnly, destructive, idempotent).
    /// A change of a tool's kind has to change this table too. `None`: not stated
    /// (meaningless for a read-only tool, or no claim made).
    const HINTS: [(&str, bool, Option<bool>, Option<bool>); 30] = [
        ("run_create", false, Some(false), Some(false)),
        ("run_get", true, None, None),
        ("run_list", true, None, None),
        ("run_update_context", false, Some(false), Some(true)),
        ("run_cancel", false, Some(true), None),
        ("run_set_default_continuation", false, Some(false), Some(true)),
        ("run_pause_all", false, Some(false), Some(true)),
        ("run_resume_all", false, Some(false), Some(true)),
        ("worker_spawn", false, Some(false), Some(false)),
        ("worker_attach", false, Some(false), Some(false)),
        ("worker_get", true, None, None),
        ("worker_list", true, None, None),
        ("worker_progress", false, Some(false), Some(false)),
        ("worker_complete", false, Some(true), None),
        ("worker_fail", false, Some(true), None),
        ("worker_interrupt", false, Some(true), None),
        ("worker_followup", false, Some(false), Some(false)),
        ("worker_await_human", false, Some(false), Some(false)),
        ("worker_resolve_human", false, Some(false), Some(false)),
        ("worker_await_dependency", false, Some(false), Some(false)),
        ("worker_release_dependency", false, Some(false), Some(false)),
        ("worker_pause", false, Some(false), Some(true)),
        ("worker_resume", false, Some(false), Some(true)),
        ("worker_continue_now", false, Some(false), Some(false)),
        ("worker_continuation_get", true, None, None),
        ("worker_continuation_set", false, Some(false), Some(true)),
        ("worker_steer", false, Some(false), Some(false)),
        ("worker_attempts", true, None, None),
        ("message_send", false, Some(false), Some(false)),
        // A cursor-based read: it changes no server state, so no approval prompt.
        ("events_wait", true, None, None),
    ];

    #[test]
    fn annotations_are_honest() {
        let names: Vec<&str> = HINTS.iter().map(|h| h.0).collect();
        assert_eq!(names, TOOL_NAMES.to_vec(), "the table names every tool, in order");
        for (t, (name, read_only, destructive, idempotent)) in catalog().iter().zip(HINTS) {
            let a = t.annotations.as_ref().unwrap_or_else(|| panic!("{name} has no annotations"));
            assert_eq!(a.read_only_hint, Some(read_only), "{name}: readOnlyHint");
            assert_eq!(a.destructive_hint, destructive, "{name}: destructiveHint");
            assert_eq!(a.idempotent_hint, idempotent, "{name}: idempotentHint");
            assert_eq!(a.open_world_hint, Some(false), "{name}: openWorldHint");
        }
        // What ChatGPT's "allow read actions" tier passes without asking: reads only.
        let reads: Vec<&str> = HINTS.iter().filter(|h| h.1).map(|h| h.0).collect();
        assert!(
            reads
                .iter()
                .all(|n| n.ends_with("_get") || n.ends_with("_list") || *n == "worker_attempts" || *n == "events_wait")
        );
    }

    #[test]
    fn descriptions_are_neutral() {
        // ChatGPT flags shouted imperatives in tool descriptions as suspicious instructions.
        const SHOUTED: [&str; 7] = ["ONLY", "NEVER", "MUST", "MANDATORY", "ALWAYS", "IMPORTANT", "CRITICAL"];
        for t in catalog() {
            let d = t.description.as_deref().unwrap_or_default();
            for word in d.split(|c: char| !c.is_ascii_alphabetic()) {
                assert!(!SHOUTED.contains(&word), "{}: shouted {word:?} in its description", t.name);
            }
        }
        assert!(INSTRUCTIONS_FOR_TEST.split(|c: char| !c.is_ascii_alphabetic()).all(|w| !SHOUTED.contains(&w)));
    }

    #[test]
    fn argument_names_are_camel_case() {
        let spawn = catalog().iter().find(|t| t.name == "worker_spawn").expect("worker_spawn");
        let props = spawn.input_schema.get("properties").and_then(|p| p.as_object()).expect("properties");
        for key in ["runId", "name", "displayName", "taskSummary", "assignment", "start", "executor", "workspace"] {
            assert!(props.contains_key(key), "worker_spawn lacks {key}");
        }
        let pause = catalog().iter().find(|t| t.name == "worker_pause").expect("worker_pause");
        let props = pause.input_schema.get("properties").and_then(|p| p.as_object()).expect("properties");
        assert!(props.contains_key("afterCurrentTurn"));
    }
}
