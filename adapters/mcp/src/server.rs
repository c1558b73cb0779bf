//! The rmcp `ServerHandler`: decode, call the engine through the shell, shape the reply.

use crate::catalog;
use caller_protocol::*;
use engine::Operation;
use engine::ids::Cursor;
use futures_util::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::time::Duration;
use tokio::sync::watch;

/// Knobs of the MCP server.
#[derive(Clone, Debug)]
pub struct McpConfig {
    /// Longest `events_wait` long poll; a caller asking for more gets this.
    pub events_wait_ms_max: u64,
    /// Becomes true when the daemon shuts down, so long polls answer at once.
    pub stopping: watch::Receiver<bool>,
}

impl McpConfig {
    /// The default cap (25 s) and a stop signal that never fires.
    pub fn new(stopping: watch::Receiver<bool>) -> McpConfig {
        McpConfig { events_wait_ms_max: EVENTS_WAIT_MS_MAX_DEFAULT, stopping }
    }
}

/// Default cap of one `events_wait` call: long enough to save polling, short enough
/// that no proxy or client timeout cuts it (no correctness depends on it). ChatGPT and
/// Codex give up on a tool call at about 60 s and ChatGPT runs calls one at a time, so
/// a wait stays well under half of that.
pub const EVENTS_WAIT_MS_MAX_DEFAULT: u64 = 25_000;

pub(crate) const INSTRUCTIONS: &str = "The orchestrator keeps AI workers going until their job is really done. \
A run (run_create) has a /root coordinator worker and lanes (worker_spawn). A worker is a durable job; \
each ChatGPT turn is one execution attempt of it. Workers report progress (worker_progress) and end \
explicitly: worker_complete, worker_fail, worker_await_human or worker_await_dependency; becoming idle \
never completes a worker. Read state with run_get, worker_get, worker_list and worker_attempts; follow \
what happens with events_wait (a bounded long poll: pass back nextCursor). Ids look like run-1, wrk-2, \
exe-3. Errors come back as results with isError whose text is {code, message}; the message says what to fix.";

/// The MCP service: cheap to clone, one per session.
#[derive(Clone, Debug)]
pub struct OrchestratorMcp {
    handle: runtime::Handle,
    config: McpConfig,
}

impl OrchestratorMcp {
    /// A server that reaches the engine through `handle`.
    pub fn new(handle: runtime::Handle, config: McpConfig) -> OrchestratorMcp {
        OrchestratorMcp { handle, config }
    }

    /// Runs one tool by name: `None` when no tool has that name. Errors the caller can
    /// act on (and panics, as `INTERNAL`) are `Err`.
    pub async fn call(&self, name: &str, arguments: Value) -> Option<Result<Value, ErrorOut>> {
        contain_panic(name, self.dispatch(name, arguments)).await
    }

    async fn dispatch(&self, name: &str, args: Value) -> Option<Result<Value, ErrorOut>> {
        Some(match name {
            "run_create" => self.op::<RunCreateArgs, RunOut>(args, ToOperation::to_operation).await,
            "run_get" => self.op::<RunIdArgs, RunOut>(args, |a| a.operation(RunVerb::Get)).await,
            "run_list" => self.op::<RunListArgs, RunListOut>(args, ToOperation::to_operation).await,
            "run_update_context" => self.op::<RunUpdateContextArgs, RunOut>(args, ToOperation::to_operation).await,
            "run_cancel" => self.op::<RunCancelArgs, RunOut>(args, ToOperation::to_operation).await,
            "run_set_default_continuation" => {
                self.op::<RunSetDefaultContinuationArgs, RunOut>(args, ToOperation::to_operation).await
            }
            "run_pause_all" => self.op::<RunIdArgs, RunOut>(args, |a| a.operation(RunVerb::PauseAll)).await,
            "run_resume_all" => self.op::<RunIdArgs, RunOut>(args, |a| a.operation(RunVerb::ResumeAll)).await,
            "worker_spawn" => self.op::<WorkerSpawnArgs, WorkerOut>(args, ToOperation::to_operation).await,
            "worker_attach" => self.op::<WorkerAttachArgs, WorkerOut>(args, ToOperation::to_operation).await,
            "worker_get" => self.op::<WorkerIdArgs, WorkerOut>(args, |a| a.operation(WorkerVerb::Get)).await,
            "worker_list" => self.op::<WorkerListArgs, WorkerListOut>(args, ToOperation::to_operation).await,
            "worker_progress" => {
                self.op::<WorkerProgressArgs, ProgressReportOut>(args, ToOperation::to_operation).await
            }
            "worker_complete" => self.op::<WorkerCompleteArgs, WorkerOut>(args, ToOperation::to_operation).await,
            "worker_fail" => self.op::<WorkerReasonArgs, WorkerOut>(args, WorkerReasonArgs::fail).await,
            "worker_interrupt" => self.op::<WorkerReasonArgs, WorkerOut>(args, WorkerReasonArgs::interrupt).await,
            "worker_followup" => self.op::<WorkerFollowupArgs, WorkerOut>(args, ToOperation::to_operation).await,
            "worker_await_human" => self.op::<WorkerAwaitHumanArgs, WorkerOut>(args, ToOperation::to_operation).await,
            "worker_resolve_human" => {
                self.op::<WorkerResolveHumanArgs, WorkerOut>(args, ToOperation::to_operation).await
            }
            "worker_await_dependency" => {
                self.op::<WorkerAwaitDependencyArgs, WorkerOut>(args, ToOperation::to_operation).await
            }
            "worker_release_dependency" => {
                self.op::<WorkerReleaseDependencyArgs, WorkerOut>(args, ToOperation::to_operation).await
            }
            "worker_pause" => self.op::<WorkerPauseArgs, WorkerOut>(args, ToOperation::to_operation).await,
            "worker_resume" => self.op::<WorkerIdArgs, WorkerOut>(args, |a| a.operation(WorkerVerb::Resume)).await,
            "worker_continue_now" => {
                self.op::<WorkerContinueNowArgs, ContinueNowOut>(args, ToOperation::to_operation).await
            }
            "worker_continuation_get" => {
                self.op::<WorkerIdArgs, ContinuationPolicyOut>(args, |a| a.operation(WorkerVerb::ContinuationGet)).await
            }
            "worker_continuation_set" => {
                self.op::<WorkerContinuationSetArgs, ContinuationPolicyOut>(args, ToOperation::to_operation).await
            }
            "worker_steer" => self.op::<WorkerSteerArgs, SteerOut>(args, ToOperation::to_operation).await,
            "worker_attempts" => self.op::<WorkerAttemptsArgs, AttemptsOut>(args, ToOperation::to_operation).await,
            "message_send" => self.op::<MessageSendArgs, MessageOut>(args, ToOperation::to_operation).await,
            "events_wait" => self.events_wait(args).await,
            _ => return None,
        })
    }

    /// Decode, convert, call, shape: the path of every tool but `events_wait`.
    async fn op<A, O>(
        &self,
        args: Value,
        to_op: impl FnOnce(A) -> Result<Operation, ErrorOut>,
    ) -> Result<Value, ErrorOut>
    where
        A: DeserializeOwned,
        O: FromReply + Serialize,
    {
        let op = to_op(decode::<A>(args)?)?;
        let out = O::from_reply(self.engine(op).await?)?;
        serde_json::to_value(out).map_err(|e| ErrorOut::internal(&format!("cannot encode the reply: {e}")))
    }

    async fn engine(&self, op: Operation) -> Result<engine::Reply, ErrorOut> {
        match self.handle.call(op).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(rejection)) => Err(rejection.into()),
            Err(runtime::ShellGone) => Err(ErrorOut::unavailable()),
        }
    }

    /// A bounded long poll: answers as soon as a matching event is durable, or with an
    /// empty page and the cursor to resume from when the (capped) timeout passes.
    async fn events_wait(&self, args: Value) -> Result<Value, ErrorOut> {
        let args: EventsWaitArgs = decode(args)?;
        let timeout = Duration::from_millis(args.timeout_ms.min(self.config.events_wait_ms_max));
        let deadline = tokio::time::Instant::now() + timeout;
        let mut durable = self.handle.durable_cursor();
        let mut stopping = self.config.stopping.clone();
        let mut cursor = Cursor(args.cursor);
        loop {
            // Mark the current durable cursor seen before reading, so a commit that
            // lands between the read and the wait still wakes the wait.
            durable.borrow_and_update();
            let page = EventsOut::from_reply(self.engine(args.page(cursor)?).await?)?;
            cursor = cursor.max(Cursor(page.next_cursor));
            if !page.events.is_empty() || tokio::time::Instant::now() >= deadline || *stopping.borrow() {
                let page = EventsOut { next_cursor: cursor.0, ..page };
                return serde_json::to_value(page).map_err(|e| ErrorOut::internal(&e.to_string()));
            }
            let woke = tokio::select! {
                biased;
                _ = stopping.changed() => false,
                changed = tokio::time::timeout_at(deadline, durable.wait_for(|c| *c > cursor)) => {
                    match changed {
                        Ok(Ok(_)) => true,
                        Ok(Err(_)) => return Err(ErrorOut::unavailable()),
                        Err(_elapsed) => false,
                    }
                }
            };
            if !woke {
                let page = EventsOut { events: Vec::new(), next_cursor: cursor.0 };
                return serde_json::to_value(page).map_err(|e| ErrorOut::internal(&e.to_string()));
            }
        }
    }
}

impl ServerHandler for OrchestratorMcp {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("orchestrator", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(catalog::catalog().to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        catalog::catalog().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let result = self.call(&request.name, arguments).await;
        let elapsed_us = started.elapsed().as_micros() as u64;
        match result {
            None => Err(ErrorData::invalid_params(format!("unknown tool: {}", request.name), None)),
            Some(Ok(value)) => {
                tracing::debug!(tool = %request.name, elapsed_us, "tool call");
                Ok(CallToolResult::structured(value).into())
            }
            Some(Err(error)) => {
                tracing::debug!(tool = %request.name, elapsed_us, code = %error.code, "tool call refused");
                // No `structuredContent` on a refusal: clients check it against the tool's
                // output schema even when `isError` is set (the TypeScript SDK turns the
                // mismatch into a protocol error that hides the message), so `{code,
                // message}` travels as the text content, JSON like every answer's text.
                let text = serde_json::to_string(&error).unwrap_or_else(|_| error.message.clone());
                Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into())
            }
        }
    }
}

/// Runs one tool handler; a panic inside it becomes `INTERNAL` (logged) instead of
/// unwinding into the server, so one bad call never takes the daemon down.
async fn contain_panic(
    name: &str,
    handler: impl std::future::Future<Output = Option<Result<Value, ErrorOut>>>,
) -> Option<Result<Value, ErrorOut>> {
    match AssertUnwindSafe(handler).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(tool = name, panic = %what, "tool handler panicked; the daemon stays up");
            Some(Err(ErrorOut::internal("the server failed while handling this call; it had no known effect")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_handler_becomes_internal_and_the_next_call_still_works() {
        let panicked = contain_panic("boom", async {
            let index = std::hint::black_box(7usize);
            let empty: Vec<u8> = Vec::new();
            Some(Ok(Value::from(empty[index])))
        })
        .await;
        let error = panicked.expect("a result").expect_err("the panic is an error");
        assert_eq!(error.code, "INTERNAL");
        let fine = contain_panic("fine", async { Some(Ok(Value::from(1))) }).await;
        assert_eq!(fine, Some(Ok(Value::from(1))));
    }
}
