#!/usr/bin/env python3
"""Records real `codex app-server` JSON-RPC transcripts against the loopback mock model.

Stdlib only. Usage: `python3 record.py CODEX_BIN MOCK_PORT OUT_DIR` with
`mock_responses.py MOCK_PORT` running. Each scenario runs its own app-server with a fresh
CODEX_HOME and cwd, and writes OUT_DIR/<scenario>.jsonl: a header line
`{"header":{...}}`, then one line per message, `{"dir":"send"|"recv","msg":{...}}`, in the
order they crossed stdio. Paths under the scratch directory are replaced by `$SCRATCH`.

The `mcp-*` and `goal-*` scenarios give the session the `config.toml` the executor writes
(`SESSION_CONFIG`, the text of `cli_executor::codex::home::config_toml`) with the orchestrator's MCP
server at `$MCP_URL` (a running `orchestrator serve`; its token in
`$ORCHESTRATOR_MCP_TOKEN`, passed to the child only in that variable, never recorded), or at
a closed port for the `-down` ones. The URL's port is recorded as `MCPPORT`.
"""
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

CODEX, PORT, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
DATE = time.strftime("%Y-%m-%d", time.gmtime())
CONFIG = [
    "model_provider=mock",
    "model=mock-model",
    'model_providers.mock.name="mock"',
    'model_providers.mock.base_url="http://127.0.0.1:%s/v1"' % PORT,
    'model_providers.mock.env_key="MOCK_API_KEY"',
    'model_providers.mock.wire_api="responses"',
    "model_providers.mock.request_max_retries=0",
    "model_providers.mock.stream_max_retries=0",
]
ARGS = ["app-server"] + [a for c in CONFIG for a in ("-c", c)]
WAIT_S = 30
MCP_URL = os.environ.get("MCP_URL", "")
# A loopback port nothing listens on: the MCP server "down".
DOWN_URL = "http://127.0.0.1:9/mcp"
SESSION_CONFIG = """# Written by the orchestrator's cli-executor: this session's own CODEX_HOME.
approval_policy = "never"
sandbox_mode = "workspace-write"
cli_auth_credentials_store = "file"

[features]
goals = %(goals)s

[mcp_servers.orchestrator]
url = "%(url)s"
bearer_token_env_var = "ORCHESTRATOR_MCP_TOKEN"
required = true
default_tools_approval_mode = "approve"
"""


class Session:
    def __init__(self, name, mcp_url=None, goals=False, scratch=None):
        self.name = name
        self.scratch = scratch or tempfile.mkdtemp(prefix="codex-rec-")
        self.home = os.path.join(self.scratch, "home")
        self.cwd = os.path.join(self.scratch, "work")
        os.makedirs(self.home, exist_ok=True)
        os.makedirs(self.cwd, exist_ok=True)
        self.config = None
        env = {"PATH": os.environ["PATH"], "HOME": self.home, "CODEX_HOME": self.home,
               "MOCK_API_KEY": "x", "RUST_LOG": "error"}
        if mcp_url is not None:
            self.config = SESSION_CONFIG % {"goals": "true" if goals else "false", "url": mcp_url}
            with open(os.path.join(self.home, "config.toml"), "w") as f:
                f.write(self.config)
            env["ORCHESTRATOR_MCP_TOKEN"] = os.environ["ORCHESTRATOR_MCP_TOKEN"]
        self.proc = subprocess.Popen([CODEX] + ARGS, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=self.cwd, env=env, text=True, start_new_session=True)
        self.lines = []
        self.inbox = queue.Queue()
        self.next_id = 0
        self.turns_ended = 0
        threading.Thread(target=self.reader, daemon=True).start()

    def reader(self):
        for line in self.proc.stdout:
            self.inbox.put(json.loads(line))

    def log(self, direction, msg):
        text = json.dumps(msg, ensure_ascii=False).replace(self.scratch, "$SCRATCH")
        self.lines.append(json.dumps({"dir": direction, "msg": json.loads(text)},
                                     ensure_ascii=False))

    def send(self, msg):
        self.log("send", msg)
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request(self, method, params, wait=True):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        if wait:
            return self.until(lambda m: m.get("id") == rid and "method" not in m)
        return rid

    def until(self, pred):
        deadline = time.time() + WAIT_S
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise SystemExit("%s: timed out waiting" % self.name)
            msg = self.inbox.get(timeout=left)
            self.log("recv", msg)
            if pred(msg):
                return msg

    def drain(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            try:
                self.log("recv", self.inbox.get(timeout=max(0.01, end - time.time())))
            except queue.Empty:
                pass

    def initialize(self):
        self.request("initialize", {"clientInfo": {"name": "orchestrator-cli-executor",
                                                   "title": None, "version": "0.0.0"},
                                    "capabilities": {"experimentalApi": True}})
        self.notify("initialized")

    def start(self):
        self.initialize()
        reply = self.request("thread/start", {"cwd": self.cwd, "approvalPolicy": "never",
                                              "sandbox": "workspace-write", "ephemeral": False})
        return reply["result"]["thread"]["id"] if "result" in reply else None

    def turn(self, thread, text, nonce):
        return self.request("turn/start", {"threadId": thread, "clientUserMessageId": nonce,
                                           "input": [{"type": "text", "text": text}]})

    def turn_end(self):
        """Waits for the next `turn/completed`, counting one already logged by a drain."""
        self.turns_ended += 1
        seen = sum(1 for line in self.lines if '"method": "turn/completed"' in line)
        if seen >= self.turns_ended:
            return None
        return self.until(lambda m: m.get("method") == "turn/completed")

    def finish(self, keep=False):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
        header = {"header": {"codex": "codex-cli 0.169.0 (npm @openai/codex@0.169.0)",
                             "command": "codex " + " ".join(ARGS).replace(PORT, "PORT"),
                             "recorded": DATE, "scenario": self.name,
                             "by": "adapters/cli-executor/tests/mock/record.py"}}
        if self.config is not None:
            header["header"]["configToml"] = self.config
        text = "\n".join([json.dumps(header)] + self.lines) + "\n"
        if MCP_URL:
            authority = MCP_URL.split("/")[2]
            text = text.replace(authority, authority.rsplit(":", 1)[0] + ":MCPPORT")
        with open(os.path.join(OUT, self.name + ".jsonl"), "w") as f:
            f.write(text)
        if not keep:
            shutil.rmtree(self.scratch, ignore_errors=True)


def two_turns():
    s = Session("two-turns")
    thread = s.start()
    s.turn(thread, "first prompt", "nonce-1")
    s.turn_end()
    s.turn(thread, "second prompt", "nonce-2")
    s.turn_end()
    s.drain(0.5)
    s.request("thread/read", {"threadId": thread, "includeTurns": True})
    s.finish()


def usage_limit():
    s = Session("usage-limit")
    thread = s.start()
    s.turn(thread, "LIMIT please", "nonce-limit")
    s.turn_end()
    s.drain(0.5)
    s.request("account/rateLimits/read", None)
    s.finish()


def steer():
    """A steer one second into a slow turn; then a steer after the turn ended."""
    s = Session("steer")
    thread = s.start()
    reply = s.turn(thread, "SLOW work", "nonce-slow")
    turn = reply["result"]["turn"]["id"]
    s.until(lambda m: m.get("method") == "turn/started")
    s.drain(1.0)
    s.request("turn/steer", {"threadId": thread, "expectedTurnId": turn,
                             "clientUserMessageId": "nonce-steer",
                             "input": [{"type": "text", "text": "a steer"}]})
    s.turn_end()
    s.drain(0.5)
    s.request("turn/steer", {"threadId": thread, "expectedTurnId": turn,
                             "clientUserMessageId": "nonce-late",
                             "input": [{"type": "text", "text": "too late"}]})
    s.request("thread/read", {"threadId": thread, "includeTurns": True})
    s.finish()


def interrupt():
    """`turn/interrupt` one second into a slow turn."""
    s = Session("interrupt")
    thread = s.start()
    reply = s.turn(thread, "SLOW work", "nonce-slow")
    turn = reply["result"]["turn"]["id"]
    s.until(lambda m: m.get("method") == "turn/started")
    s.drain(1.0)
    s.request("turn/interrupt", {"threadId": thread, "turnId": turn})
    s.turn_end()
    s.drain(0.5)
    s.request("thread/read", {"threadId": thread, "includeTurns": True})
    s.finish()


def checked_turn(s, prompt, nonce):
    """thread/start, its statuses, thread/goal/get, then one turn: the executor's order."""
    thread = s.start()
    s.drain(1.0)
    s.request("thread/goal/get", {"threadId": thread})
    s.turn(thread, prompt, nonce)
    s.turn_end()
    s.drain(0.5)
    return thread


def mcp_ready():
    """The MCP server required and up: its startup status after thread/start, the goal
    check refused because goals are off, and one real call to its tool `run_list`."""
    s = Session("mcp-ready", MCP_URL)
    checked_turn(s, 'CALL run_list {}', "nonce-tool")
    s.finish()


def mcp_down():
    """The MCP server required and down: thread/start is refused; the child stays up."""
    s = Session("mcp-down", DOWN_URL)
    s.start()
    s.drain(1.0)
    s.request("thread/read", {"threadId": "00000000-0000-0000-0000-000000000000"})
    s.finish()


def mcp_resume_down():
    """A thread started with the server up, resumed by a new child while it is down."""
    first = Session("mcp-resume-first", MCP_URL)
    thread = first.start()
    first.turn(thread, "first prompt", "nonce-1")
    first.turn_end()
    first.drain(0.5)
    first.proc.stdin.close()
    first.proc.wait(timeout=10)
    s = Session("mcp-resume-down", DOWN_URL, scratch=first.scratch)
    s.initialize()
    s.request("thread/resume", {"threadId": thread})
    s.drain(1.0)
    s.finish()


def goal_null():
    """Goals left on: thread/goal/get answers no goal after thread/start and after a
    resume by a new child (which also announces thread/goal/cleared)."""
    first = Session("goal-null-start", MCP_URL, goals=True)
    thread = checked_turn(first, "first prompt", "nonce-1")
    first.finish(keep=True)
    s = Session("goal-null-resume", MCP_URL, goals=True, scratch=first.scratch)
    s.initialize()
    s.request("thread/resume", {"threadId": thread})
    s.request("thread/goal/get", {"threadId": thread})
    s.drain(0.5)
    s.finish()


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for scenario in sys.argv[4:] or ["two-turns", "usage-limit", "steer", "interrupt"]:
        globals()[scenario.replace("-", "_")]()
