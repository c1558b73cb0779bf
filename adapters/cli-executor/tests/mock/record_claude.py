#!/usr/bin/env python3
"""Records real `claude -p` stream-json transcripts against the loopback mock Messages API.

Stdlib only. Usage: `python3 record_claude.py CLAUDE_BIN OUT_DIR [SCENARIO...]`. It runs
`mock_messages.py` in a thread on a free loopback port, and each scenario runs one or
more `claude` processes with a fresh HOME (so a fresh `~/.claude`) and cwd under one
scratch directory. OUT_DIR/<scenario>.jsonl holds a header line `{"header":{...}}`, then
one line per event in the order seen:
- `{"proc":P,"dir":"spawn","args":[...]}`: process P started with these arguments;
- `{"proc":P,"dir":"send","at_ms":T,"msg":{...}}`: a line written to P's stdin;
- `{"proc":P,"dir":"recv","at_ms":T,"msg":{...}}`: a line P wrote to stdout;
- `{"proc":P,"dir":"close","at_ms":T}`: P's stdin closed;
- `{"proc":P,"dir":"exit","at_ms":T,"code":N,"stderr":"..."}`: P exited;
- `{"dir":"api","at_ms":T,"request":{...}}`: a request the mock model got (path, status,
  message count, user texts, MCP tool names; no system prompt).
`at_ms` counts from the scenario's start. Paths under the scratch directory are
`$SCRATCH` (`$SCRATCH_ENC` in Claude's encoded project directory name), this directory
`$MOCK`; the API key is
`x`; nothing else secret is in them. Some scenarios also copy the session transcript
(`~/.claude/projects/<encoded cwd>/<session>.jsonl`) to `<scenario>.transcript.jsonl`,
with long strings (the system prompt, tool schemas) elided.

The nonce: every user line carries `uuid`, derived from the command's idempotency key by
`nonce_uuid` (the same function as `cli_executor::claude::nonce::nonce_uuid`); the session
id is `session_uuid` of the create's key, as the core mints it. Each scenario's first
prompt is the create's (`conversation.create:exe-1`).
"""
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mock_messages  # noqa: E402

CLAUDE, OUT = sys.argv[1], sys.argv[2]
DATE = "2026-12-01"
VERSION = "2.1.332"
WAIT_S = 60
BASE_ARGS = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
             "--replay-user-messages", "--permission-mode", "dontAsk", "--permission-prompts", "none",
             "--strict-mcp-config"]
MCP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mock_mcp.py")
CURRENT = [None]

FNV_OFFSET = 0x6c62272e07bb014262b821756295c58d
FNV_PRIME = 0x0000000001000000000000000000013B


M64 = (1 << 64) - 1


def mix64(x):
    """The splitmix64 finalizer: every input bit reaches every output bit."""
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & M64
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & M64
    return x ^ (x >> 31)


def nonce_uuid(key):
    """FNV-1a 128 of the key, its halves mixed, shaped as an RFC 9562 version-8 UUID."""
    h = FNV_OFFSET
    for byte in key.encode():
        h = ((h ^ byte) * FNV_PRIME) % (1 << 128)
    hi = mix64((h >> 64) ^ mix64(h & M64))
    lo = mix64((h & M64) ^ hi)
    h = (hi << 64) | lo
    h = (h & ~(0xF << 76)) | (0x8 << 76)
    h = (h & ~(0x3 << 62)) | (0x2 << 62)
    s = "%032x" % h
    return "%s-%s-%s-%s-%s" % (s[:8], s[8:12], s[12:16], s[16:20], s[20:])


def session_uuid(key):
    """The session id a create with this key mints (`cli_executor::claude::nonce::session_uuid`)."""
    return nonce_uuid("session:" + key)


def user_line(key, text):
    return {"type": "user", "uuid": nonce_uuid(key), "message": {"role": "user", "content": text}}


ELIDE_CHARS = 1000


def elide(value):
    """The value with every string over ELIDE_CHARS characters replaced by a stub."""
    if isinstance(value, str) and len(value) > ELIDE_CHARS:
        return "<elided %d chars>" % len(value)
    if isinstance(value, list):
        return [elide(v) for v in value]
    if isinstance(value, dict):
        return {k: elide(v) for k, v in value.items()}
    return value


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT = free_port()


class Scenario:
    def __init__(self, name, session):
        self.name = name
        self.session = session
        self.scratch = tempfile.mkdtemp(prefix="claude-rec-")
        self.home = os.path.join(self.scratch, "home")
        self.cwd = os.path.join(self.scratch, "work")
        os.makedirs(self.home)
        os.makedirs(self.cwd)
        self.lines = []
        self.lock = threading.Lock()
        self.t0 = time.time()
        self.commands = []
        CURRENT[0] = self

    def at(self):
        return int((time.time() - self.t0) * 1000)

    def clean(self, text):
        enc = re.sub(r"[^A-Za-z0-9]", "-", self.scratch)
        mock_dir = os.path.dirname(MCP)
        return text.replace(self.scratch, "$SCRATCH").replace(enc, "$SCRATCH_ENC").replace(mock_dir, "$MOCK")

    def log(self, entry):
        with self.lock:
            self.lines.append(json.loads(self.clean(json.dumps(entry, ensure_ascii=False))))

    def spawn(self, proc, extra):
        args = BASE_ARGS + extra
        self.commands.append("claude " + " ".join(a if " " not in a and "{" not in a else "'%s'" % a for a in args))
        return Proc(self, proc, args)

    def transcript(self, suffix="transcript"):
        enc = re.sub(r"[^A-Za-z0-9]", "-", self.cwd)
        path = os.path.join(self.home, ".claude", "projects", enc, self.session + ".jsonl")
        out = []
        with open(path) as f:
            for line in f:
                entry = elide(json.loads(line))
                out.append(self.clean(json.dumps(entry, ensure_ascii=False)))
        with open(os.path.join(OUT, "%s.%s.jsonl" % (self.name, suffix)), "w") as f:
            f.write(json.dumps({"header": {"claude": "%s (Claude Code) (npm @anthropic-ai/claude-code@%s)" % (VERSION, VERSION),
                                           "file": "~/.claude/projects/$SCRATCH_ENC-work/%s.jsonl" % self.session,
                                           "recorded": DATE, "scenario": self.name,
                                           "note": "strings over %d characters elided (system prompt, tool schemas)" % ELIDE_CHARS,
                                           "by": "adapters/cli-executor/tests/mock/record_claude.py"}}) + "\n")
            for line in out:
                f.write(line + "\n")

    def finish(self):
        CURRENT[0] = None
        header = {"header": {"claude": "%s (Claude Code) (npm @anthropic-ai/claude-code@%s)" % (VERSION, VERSION),
                             "commands": self.commands, "session": self.session,
                             "env": "HOME=$SCRATCH/home ANTHROPIC_BASE_URL=http://127.0.0.1:PORT ANTHROPIC_API_KEY=x "
                                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, cwd $SCRATCH/work",
                             "recorded": DATE, "scenario": self.name,
                             "by": "adapters/cli-executor/tests/mock/record_claude.py"}}
        with open(os.path.join(OUT, self.name + ".jsonl"), "w") as f:
            f.write(json.dumps(header) + "\n")
            for line in self.lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        shutil.rmtree(self.scratch, ignore_errors=True)


class Proc:
    def __init__(self, scenario, name, args):
        self.s = scenario
        self.name = name
        env = {"PATH": os.environ["PATH"], "HOME": scenario.home,
               "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % PORT, "ANTHROPIC_API_KEY": "x",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        scenario.log({"proc": name, "dir": "spawn", "args": args})
        self.p = subprocess.Popen([CLAUDE] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd=scenario.cwd, env=env, text=True,
                                  start_new_session=True)
        self.inbox = queue.Queue()
        self.stderr = []
        threading.Thread(target=self.reader, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.append(self.p.stderr.read()), daemon=True).start()

    def reader(self):
        for line in self.p.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = {"unparsed": line.rstrip("\n")}
            self.s.log({"proc": self.name, "dir": "recv", "at_ms": self.s.at(), "msg": msg})
            self.inbox.put(msg)
        self.inbox.put(None)

    def send(self, msg):
        self.s.log({"proc": self.name, "dir": "send", "at_ms": self.s.at(), "msg": msg})
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def until(self, pred, wait=WAIT_S):
        deadline = time.time() + wait
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise SystemExit("%s/%s: timed out waiting" % (self.s.name, self.name))
            msg = self.inbox.get(timeout=left)
            if msg is None:
                return None
            if pred(msg):
                return msg

    def results(self, n):
        for _ in range(n):
            self.until(lambda m: m.get("type") == "result")

    def drain(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            try:
                if self.inbox.get(timeout=max(0.01, end - time.time())) is None:
                    return
            except queue.Empty:
                pass

    def close(self, wait=20):
        self.s.log({"proc": self.name, "dir": "close", "at_ms": self.s.at()})
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        self.exit(wait)

    def exit(self, wait=20):
        try:
            code = self.p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, 9)
            code = self.p.wait()
        self.until(lambda m: False, wait=5) if not self.inbox.empty() else None
        time.sleep(0.2)
        stderr = "".join(self.stderr)
        self.s.log({"proc": self.name, "dir": "exit", "at_ms": self.s.at(), "code": code, "stderr": stderr})


CREATE = "conversation.create:exe-1"
SESSION = session_uuid(CREATE)


def two_turns():
    """Two turns in one process; nothing is sent for 2 s first (is `init` emitted before input?)."""
    s = Scenario("two-turns", SESSION)
    p = s.spawn("a", ["--session-id", SESSION])
    p.drain(2.0)
    p.send(user_line(CREATE, "first prompt"))
    p.results(1)
    p.drain(0.5)
    p.send(user_line("conversation.send:exe-2", "second prompt"))
    p.results(1)
    p.drain(0.5)
    p.close()
    s.transcript()
    s.finish()


def mid_turn():
    """A user line written 1.5 s after the turn started (`command_lifecycle started`), while the
    model answers slowly (no tool in the turn)."""
    s = Scenario("mid-turn", SESSION)
    p = s.spawn("a", ["--session-id", SESSION])
    p.send(user_line(CREATE, "SLOW work"))
    p.until(lambda m: m.get("type") == "command_lifecycle" and m.get("state") == "started")
    p.drain(1.5)
    p.send(user_line("conversation.steer:exe-2", "a steer"))
    p.until(lambda m: m.get("type") == "result" and nonce_uuid("conversation.steer:exe-2") in
            (m.get("user_message_uuids") or []))
    p.drain(1.0)
    p.close()
    s.transcript()
    s.finish()


def mid_turn_tool():
    """A user line written while an MCP tool call of the turn runs (a tool boundary ahead)."""
    s = Scenario("mid-turn-tool", SESSION)
    config = json.dumps({"mcpServers": {"orch": {"type": "stdio", "command": "python3", "args": [MCP]}}})
    p = s.spawn("a", ["--session-id", SESSION, "--mcp-config", config, "--allowedTools", "mcp__orch"])
    p.send(user_line(CREATE, "TOOL please"))
    p.until(lambda m: m.get("type") == "assistant" and any(
        c.get("type") == "tool_use" for c in m.get("message", {}).get("content", [])))
    p.drain(1.0)
    p.send(user_line("conversation.steer:exe-2", "a steer"))
    p.until(lambda m: m.get("type") == "result" and nonce_uuid("conversation.steer:exe-2") in
            (m.get("user_message_uuids") or []))
    p.drain(1.0)
    p.close()
    s.transcript()
    s.finish()


def usage_limit():
    """A 429 `rate_limit_error` with the subscription headers; then a plain prompt."""
    s = Scenario("usage-limit", SESSION)
    p = s.spawn("a", ["--session-id", SESSION])
    p.send(user_line(CREATE, "LIMIT please"))
    p.results(1)
    p.drain(0.5)
    p.send(user_line("conversation.send:exe-2", "after the limit"))
    p.results(1)
    p.drain(0.5)
    p.close()
    s.finish()


def server_error():
    """An HTTP 500 `api_error` on every request: what retries, what result."""
    s = Scenario("server-error", SESSION)
    p = s.spawn("a", ["--session-id", SESSION])
    p.send(user_line(CREATE, "FAIL500 please"))
    p.until(lambda m: m.get("type") == "result", wait=240)
    p.drain(0.5)
    p.close()
    s.finish()


def duplicate_session():
    """A retried create: a second process with the same `--session-id` and the same first
    line while the first process lives, and again after it exited."""
    s = Scenario("duplicate-session", SESSION)
    a = s.spawn("a", ["--session-id", SESSION])
    a.send(user_line(CREATE, "first prompt"))
    a.results(1)
    b = s.spawn("b", ["--session-id", SESSION])
    b.send(user_line(CREATE, "first prompt"))
    b.drain(5.0)
    b.close()
    a.close()
    c = s.spawn("c", ["--session-id", SESSION])
    c.send(user_line(CREATE, "first prompt"))
    c.drain(5.0)
    c.close()
    s.finish()


def resume():
    """`--resume <id>` after the process exited: the same session id? The old nonce again?"""
    s = Scenario("resume", SESSION)
    a = s.spawn("a", ["--session-id", SESSION])
    a.send(user_line(CREATE, "first prompt"))
    a.results(1)
    a.drain(0.5)
    a.close()
    b = s.spawn("b", ["--resume", SESSION])
    b.send(user_line(CREATE, "first prompt"))
    b.drain(3.0)
    b.send(user_line("conversation.send:exe-2", "after resume"))
    b.until(lambda m: m.get("type") == "result")
    b.drain(0.5)
    b.close()
    s.transcript()
    s.finish()


def duplicate_uuid():
    """The same nonce twice in one process (a resend after a lost acknowledgment)."""
    s = Scenario("duplicate-uuid", SESSION)
    p = s.spawn("a", ["--session-id", SESSION])
    p.send(user_line(CREATE, "first prompt"))
    p.results(1)
    p.drain(0.5)
    p.send(user_line(CREATE, "first prompt"))
    p.drain(3.0)
    p.close()
    s.finish()


def on_request(summary):
    scenario = CURRENT[0]
    if scenario is not None:
        scenario.log({"dir": "api", "at_ms": scenario.at(), "request": summary})


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    mock_messages.serve(PORT, on_request)
    names = sys.argv[3:] or ["two-turns", "mid-turn", "mid-turn-tool", "usage-limit", "server-error",
                             "duplicate-session", "resume", "duplicate-uuid"]
    for scenario in names:
        print("recording", scenario, flush=True)
        globals()[scenario.replace("-", "_")]()
