"""MCP client tests with the official Python `mcp` SDK against real daemon processes.

Over streamable HTTP against `fake_executor` (the daemon with an in-process simulated
executor, so the C15.4 workflow needs no browser and no WebSocket client in Python) and
against the production `orchestrator serve`; over stdio against `orchestrator mcp-stdio`.

Run by run.sh, which builds the binaries and passes their paths in ORCHESTRATOR_BIN and
FAKE_EXECUTOR_BIN. Prints one line per test and a final `N passed, N failed` line.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ORCHESTRATOR = os.environ["ORCHESTRATOR_BIN"]
FAKE_EXECUTOR = os.environ["FAKE_EXECUTOR_BIN"]
TOKEN = "python-test-token-0123456789"

TOOLS = """run_create run_get run_list run_update_context run_cancel run_set_default_continuation
run_pause_all run_resume_all worker_spawn worker_attach worker_get worker_list worker_progress
worker_complete worker_fail worker_interrupt worker_followup worker_await_human
worker_resolve_human worker_await_dependency worker_release_dependency worker_pause worker_resume
worker_continue_now worker_continuation_get worker_continuation_set worker_steer worker_attempts
message_send events_wait""".split()


class Daemon:
    """A daemon process on a free loopback port with a fresh data directory."""

    def __init__(self, binary, args):
        self.dir = tempfile.mkdtemp(prefix="orchestrator-py-")
        self.log = open(os.path.join(self.dir, "stderr.log"), "w")
        self.proc = subprocess.Popen(
            [binary, *args, "--data-dir", os.path.join(self.dir, "data"), "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=self.log, text=True,
            env={k: v for k, v in os.environ.items() if k != "ORCHESTRATOR_MCP_TOKEN"},
        )
        deadline = time.time() + 30
        self.url = None
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith("orchestrator: MCP endpoint "):
                self.url = line.split()[-1]
                break
        if self.url is None:
            self.proc.kill()
            raise RuntimeError("daemon did not start: " + open(self.log.name).read())

    def stop(self):
        self.proc.terminate()
        code = self.proc.wait(timeout=20)
        self.log.close()
        return code


def http(url, token=TOKEN):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.AsyncClient(headers=headers, timeout=60)


async def session_call(session, name, args):
    return await session.call_tool(name, args)


async def ok(session, name, args):
    result = await session.call_tool(name, args)
    assert not result.is_error, f"{name} failed: {result.structured_content}"
    return result.structured_content


async def refused(session, name, args, code):
    result = await session.call_tool(name, args)
    assert result.is_error, f"{name} should be refused: {result.content}"
    # A refusal carries no structuredContent (clients check that against the success
    # schema); its text content is the JSON {code, message}.
    assert result.structured_content is None, result.structured_content
    got = json.loads(result.content[0].text)
    assert got["code"] == code, f"{name}: expected {code}, got {got}"
    return got["message"]


class Follower:
    """Follows one worker's events with events_wait."""

    def __init__(self, session, worker):
        self.session, self.worker, self.cursor, self.queue, self.seen = session, worker, 0, [], []

    async def until(self, what, pred, seconds=20):
        deadline = time.time() + seconds
        while True:
            while self.queue:
                event = self.queue.pop(0)
                self.seen.append(event["name"])
                if pred(event):
                    return event
            assert time.time() < deadline, f"timed out waiting for {what}; seen {self.seen}"
            page = await ok(self.session, "events_wait",
                            {"cursor": self.cursor, "workerId": self.worker, "timeoutMs": 2000})
            self.cursor = page["nextCursor"]
            self.queue.extend(page["events"])


def scheduled(reason, sequence):
    return lambda e: e["name"] == "execution.scheduled" and e["data"]["reason"] == reason \
        and e["data"]["sequence"] == sequence


def named(name):
    return lambda e: e["name"] == name


async def synthetic_workflow(session):
    """Spec 001 C15.4: run.create worker.spawn worker.attach initial attempt idle event auto
    resume progress idle event auto resume worker.complete idle event, assert no resume."""
    run = await ok(session, "run_create", {"taskName": "Synthetic", "rootConversationName": "Synthetic root",
                                           "defaultPolicy": {"mode": "auto", "idleGraceMs": 0}})
    lane = await ok(session, "worker_spawn", {"runId": run["runId"], "name": "/root/lane",
                                              "taskSummary": "Multi-turn job",
                                              "assignment": {"objective": "Needs several turns"}, "start": False})
    worker = lane["workerId"]
    assert lane["currentAttempt"] is None
    follow = Follower(session, worker)
    await ok(session, "worker_attach", {"workerId": worker, "conversationUrl": "https://chatgpt.example/c/py"})
    await follow.until("the initial attempt", scheduled("initial", 1))
    await follow.until("idle", named("execution.idle"))
    await follow.until("auto resume 1", scheduled("auto_resume", 2))
    await follow.until("generating", named("execution.generating"))
    await ok(session, "worker_progress", {"workerId": worker, "summary": "half way", "commit": "deadbeef"})
    await follow.until("idle", named("execution.idle"))
    await follow.until("auto resume 2", scheduled("auto_resume", 3))
    await follow.until("generating", named("execution.generating"))
    done = await ok(session, "worker_complete", {"workerId": worker, "summary": "all done"})
    assert done["disposition"] == "completed"
    await follow.until("completion", named("worker.completed"))
    await asyncio.sleep(1.5)
    page = await ok(session, "events_wait", {"cursor": follow.cursor, "workerId": worker, "timeoutMs": 500})
    later = follow.queue + page["events"]
    assert not any(e["name"] in ("execution.scheduled", "execution.resume_scheduled") for e in later), \
        f"a resume after worker_complete: {[e['name'] for e in later]}"
    attempts = await ok(session, "worker_attempts", {"workerId": worker})
    assert [a["reason"] for a in attempts["attempts"]] == ["initial", "auto_resume", "auto_resume"]


async def bad_input(session):
    run = await ok(session, "run_create", {"taskName": "Bad input", "rootConversationName": "Root"})
    root = run["rootWorkerId"]
    msg = await refused(session, "worker_progress", {"workerId": 12, "summary": "s"}, "INVALID_ARGUMENT")
    assert msg.startswith("workerId:"), msg
    msg = await refused(session, "worker_progress", {"summary": "s"}, "INVALID_ARGUMENT")
    assert "workerId" in msg, msg
    msg = await refused(session, "worker_pause", {"workerId": root, "afterCurrentTurn": "soon"}, "INVALID_ARGUMENT")
    assert msg.startswith("afterCurrentTurn:"), msg
    await refused(session, "worker_get", {"workerId": "wrk-4242"}, "UNKNOWN_WORKER")
    await refused(session, "run_get", {"runId": "run-4242"}, "UNKNOWN_RUN")
    msg = await refused(session, "worker_get", {"workerId": "banana"}, "INVALID_ARGUMENT")
    assert msg == "workerId: expected an id of the form wrk-<number>", msg
    msg = await refused(session, "worker_progress", {"workerId": root, "summary": "x" * 10_000}, "INVALID_ARGUMENT")
    assert msg.startswith("summary: must be at most"), msg
    msg = await refused(session, "message_send", {"to": root, "body": "y" * 100_000}, "INVALID_ARGUMENT")
    assert msg.startswith("body:"), msg
    await ok(session, "worker_complete", {"workerId": root, "summary": "done"})
    await refused(session, "worker_continue_now", {"workerId": root}, "WORKER_TERMINAL")


async def with_http_session(url, body, token=TOKEN):
    async with http(url, token) as client, streamable_http_client(url, http_client=client) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


async def test_http_tools_list_has_every_tool_with_schemas():
    d = Daemon(FAKE_EXECUTOR, ["--mcp-token", TOKEN])
    try:
        async def body(session):
            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == TOOLS, [t.name for t in tools]
            for t in tools:
                assert t.description and len(t.description) > 60, t.name
                assert t.input_schema["type"] == "object", t.name
                assert t.output_schema and t.output_schema["type"] == "object", t.name
        await with_http_session(d.url, body)
    finally:
        assert d.stop() == 0


async def test_http_synthetic_workflow():
    d = Daemon(FAKE_EXECUTOR, ["--mcp-token", TOKEN, "--turn-ms", "400"])
    try:
        await with_http_session(d.url, synthetic_workflow)
    finally:
        assert d.stop() == 0, "SIGTERM exits 0"


async def test_http_bad_input_is_a_tool_error_naming_the_field():
    d = Daemon(ORCHESTRATOR, ["serve", "--mcp-token", TOKEN])
    try:
        await with_http_session(d.url, bad_input)
    finally:
        assert d.stop() == 0


async def test_http_missing_or_wrong_token_is_refused():
    d = Daemon(ORCHESTRATOR, ["serve", "--mcp-token", TOKEN])
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "py", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient() as raw:
            r = await raw.post(d.url, json=init, headers=headers)
            assert r.status_code == 401, r.status_code
            r = await raw.post(d.url, json=init, headers={**headers, "Authorization": "Bearer wrong-token-123456789"})
            assert r.status_code == 401, r.status_code
            r = await raw.post(d.url, json=init, headers={**headers, "Authorization": f"Bearer {TOKEN}",
                                                          "Host": "evil.example"})
            assert r.status_code == 403, r.status_code
        for token in (None, "wrong-token-123456789"):
            try:
                await asyncio.wait_for(with_http_session(d.url, lambda s: s.list_tools(), token=token), 20)
            except Exception:
                pass
            else:
                raise AssertionError(f"the SDK connected with token {token!r}")
        await with_http_session(d.url, lambda s: s.list_tools())
    finally:
        assert d.stop() == 0


async def test_stdio_tools_and_bad_input():
    data = tempfile.mkdtemp(prefix="orchestrator-py-stdio-")
    params = StdioServerParameters(command=ORCHESTRATOR, args=["mcp-stdio", "--data-dir", data])
    with open(os.path.join(data, "stderr.log"), "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                assert [t.name for t in tools] == TOOLS
                await bad_input(session)
                run = await ok(session, "run_create", {"taskName": "Stdio", "rootConversationName": "Root"})
                lane = await ok(session, "worker_spawn", {"runId": run["runId"], "name": "/root/a",
                                                          "taskSummary": "t", "assignment": {"objective": "o"}})
                assert lane["currentAttempt"]["reason"] == "initial"
                page = await ok(session, "events_wait", {"cursor": 0, "runId": run["runId"]})
                assert page["events"][0]["name"] == "run.created"
    # The store is durable across processes: a second stdio server sees the runs.
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            runs = await ok(session, "run_list", {"includeTerminal": True})
            # Unfinished runs first, then the finished ones, the most recently ended first.
            assert [r["taskName"] for r in runs["runs"]] == ["Stdio", "Bad input"], runs


async def run_tests(namespace):
    """Runs every `test_*` coroutine function of a module's globals, one line each, then a summary."""
    tests = [(name, fn) for name, fn in namespace.items() if name.startswith("test_") and callable(fn)]
    passed = failed = 0
    for name, fn in tests:
        started = time.time()
        try:
            await asyncio.wait_for(fn(), 120)
        except BaseException:
            failed += 1
            print(f"FAIL {name} ({time.time() - started:.1f}s)")
            traceback.print_exc()
        else:
            passed += 1
            print(f"ok   {name} ({time.time() - started:.1f}s)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(run_tests(globals())))
