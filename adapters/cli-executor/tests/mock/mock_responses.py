#!/usr/bin/env python3
"""A loopback mock of the OpenAI Responses API, enough for `codex app-server` turns offline.

Stdlib only. `python3 mock_responses.py PORT [--plan FILE] [--requests FILE]` serves
127.0.0.1:PORT. Every `POST .../responses` gets a streamed (SSE) answer, chosen by the
last user text (the prompt of the running turn):
- contains `LIMIT`: HTTP 429 with a `usage_limit_reached` body and rate-limit headers
  (the shape the ChatGPT backend sends a subscription that hit its cap), reset fixed;
- contains `SLOW`: the reply is held for 20 s before it completes (so a turn can be
  interrupted or steered while it runs);
- contains `CALL <tool> <json>`: one function call to the orchestrator's MCP tool, then
  a message once its output is in (how the recordings show a real MCP call);
- contains `RUN[<command>]`: one call of codex's shell tool `exec_command` with that
  command (run in codex's sandbox), then a message once its output is in; `RUNBG[...]`:
  the same with `yield_time_ms` 250, so a longer command goes on in the background;
- a line `Attempt N` and a plan (`--plan FILE`, JSON, read at every request) naming
  actions for attempt N: the scripted model of a worker (below);
- anything else: `mock reply N` at once.

The plan: `{"turns": {"1": ["progress"], "2": ["complete"]}}`. Each action is one model
response of the turn, in order; then a final message ends the turn:
- `progress`, `complete`, `await_human`: a function call to the orchestrator's MCP tool
  `worker_progress`, `worker_complete`, `worker_await_human` (namespace
  `mcp__orchestrator`, as codex 0.169.0 lists it in the request's `tools`) with the
  worker's id. The id comes from the prompt: the first call of a conversation that has
  none yet is `run_list`, and the worker is the root of the run whose task name the prompt
  names (`rootWorkerId`);
- `hold`: the response stays open (a keepalive event a second) for up to 60 s: a turn that
  runs until its process is killed;
- `wait`: the response stays open the same way until the plan's `"release"` list holds the
  attempt's number (the test rewrites the plan), then it ends the turn with a message: a
  turn held in flight while something else happens (a failover), then let go;
- `limit:S`: HTTP 429 `usage_limit_reached` whose primary window resets S seconds from
  now (headers `x-codex-primary-reset-at`, body `resets_at`); `limit`: HTTP 429 with no
  reset anywhere.

A plan's `"fail": {"count": N, "status": S}` answers the first N `/responses` requests
(counted from the mock's start, every turn) with HTTP S (default 500) and an `error` body,
before any action: a model that is down for a while, so the CLI retries (the tests start
codex with `stream_max_retries` above N). Each failed request is logged with the others.

`--requests FILE` appends every request body to FILE (JSON Lines): the tests read the
tools codex offered and the conversation it sent. Anything else (`GET /models` and so
on) is a 404, which codex tolerates.

ChatGPT login (`--auth`): `POST .../oauth/token` (codex's refresh, sent there through
`CODEX_REFRESH_TOKEN_URL_OVERRIDE`) rotates the tokens as the real issuer does: a refresh
token works once, again it is refused 401 `refresh_token_reused`; and `/responses` answers
401 unless the bearer is the access token of the latest refresh. `--refreshes FILE` logs
each refresh request (`{"refreshToken": ..., "status": ...}`).
`python3 mock_responses.py --write-auth FILE` writes a ChatGPT login whose tokens expired
(unsigned JWTs, as codex only reads their claims), mode 0600, and exits.
"""
import argparse
import base64
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNT = [0]
# How many `/responses` requests were failed by the plan's `fail`.
FAILED = [0]
LOCK = threading.Lock()
# A fixed reset time (2026-12-02T12:00:00Z, the day after the recording), so recordings do
# not depend on the clock.
RESETS_AT = 1796212800
NAMESPACE = "mcp__orchestrator"
TOOLS = {"progress": "worker_progress", "complete": "worker_complete", "await_human": "worker_await_human"}
HOLD_S = 60
ARGS = None
# The access token of the latest refresh (`--auth`), and the refresh tokens already used.
AUTH = {"access": None, "used": set(), "refreshes": 0}
ACCOUNT = {"chatgpt_plan_type": "plus", "chatgpt_account_id": "acc-mock-1", "chatgpt_user_id": "user-mock-1",
           "user_id": "user-mock-1"}


def jwt(claims):
    """An unsigned JWT with `claims`."""
    part = lambda o: base64.urlsafe_b64encode(json.dumps(o).encode()).rstrip(b"=").decode()
    return part({"alg": "none", "typ": "JWT"}) + "." + part(claims) + ".mock"


def token(exp_s, marker):
    return jwt({"exp": exp_s, "email": "person@example.org", "marker": marker,
                "https://api.openai.com/auth": ACCOUNT})


def write_auth(path):
    """A ChatGPT login refreshed 40 days ago whose tokens expired an hour ago."""
    past = int(time.time()) - 3600
    login = {"auth_mode": "chatgpt", "OPENAI_API_KEY": None, "last_refresh": "2026-10-01T00:00:00Z",
             "tokens": {"id_token": token(past, "id-0"), "access_token": token(past, "access-0"),
                        "refresh_token": "refresh-0", "account_id": ACCOUNT["chatgpt_account_id"]}}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(login, f, indent=2)


def text_of(item):
    return "".join(part.get("text", "") for part in item.get("content", []) if isinstance(part, dict))


def outputs_of(item):
    """The texts of a function call's output (a string, or a list of input_text parts)."""
    output = item.get("output")
    if isinstance(output, str):
        return [output]
    return [part.get("text", "") for part in output or [] if isinstance(part, dict)]


def split_turn(body):
    """(the prompt of the running turn, the items after it, every item)."""
    items = body.get("input", [])
    last = max((i for i, it in enumerate(items) if it.get("role") == "user"), default=-1)
    prompt = text_of(items[last]) if last >= 0 else ""
    return prompt, items[last + 1:], items


def worker_id(prompt, items):
    """The root worker of the run the prompt names, from a `run_list` output in the history."""
    for item in items:
        if item.get("type") != "function_call_output":
            continue
        for text in outputs_of(item):
            # Codex prefixes the tool's JSON with "Wall time: ...\nOutput:\n".
            start = text.find("{")
            try:
                runs = json.JSONDecoder().raw_decode(text[start:])[0].get("runs") if start >= 0 else None
            except (ValueError, AttributeError):
                continue
            if runs:
                named = [r for r in runs if r.get("taskName") and r["taskName"] in prompt]
                return (named or runs)[0].get("rootWorkerId")
    return None


def plan_actions(prompt):
    if not ARGS.plan:
        return None
    match = re.search(r"Attempt (\d+)", prompt)
    if not match:
        return None
    with open(ARGS.plan, encoding="utf-8") as f:
        plan = json.load(f)
    return plan.get("turns", {}).get(match.group(1), plan.get("otherwise"))


def released(attempt):
    """Whether the plan's `"release"` list (re-read at every call) holds `attempt`."""
    with open(ARGS.plan, encoding="utf-8") as f:
        return attempt in json.load(f).get("release", [])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("mock: " + (fmt % args) + "\n")

    def do_GET(self):
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        if ARGS.auth and self.path.endswith("/oauth/token"):
            return self.refresh(body)
        if not self.path.endswith("/responses"):
            return self.do_GET()
        if ARGS.auth and self.headers.get("authorization") != "Bearer %s" % AUTH["access"]:
            return self.json(401, {"error": {"code": "invalid_token", "message": "stale or missing access token"}})
        if ARGS.requests:
            with LOCK, open(ARGS.requests, "a", encoding="utf-8") as f:
                f.write(json.dumps(body) + "\n")
        if self.failing():
            return
        prompt, turn, items = split_turn(body)
        calls = [it for it in turn if it.get("type") == "function_call"]
        actions = plan_actions(prompt)
        if actions is not None:
            return self.scripted(prompt, items, calls, actions)
        if "LIMIT" in prompt:
            return self.limit(RESETS_AT)
        direct = re.search(r"CALL (\w+) (\{.*\})", prompt)
        if direct and not calls:
            return self.answer([self.call(direct.group(1), json.loads(direct.group(2)))])
        background = re.search(r"RUNBG\[(.*)\]", prompt)
        if background and not calls:
            return self.answer([self.shell(background.group(1), yield_ms=250)])
        shell = re.search(r"RUN\[(.*)\]", prompt)
        if shell and not calls:
            return self.answer([self.shell(shell.group(1))])
        self.answer([], slow="SLOW" in prompt)

    def failing(self):
        """The plan's `fail`: while fewer than `count` requests failed, this one fails too."""
        if not ARGS.plan:
            return False
        with open(ARGS.plan, encoding="utf-8") as f:
            fail = json.load(f).get("fail")
        if not fail:
            return False
        with LOCK:
            if FAILED[0] >= fail.get("count", 0):
                return False
            FAILED[0] += 1
        status = fail.get("status", 500)
        self.json(status, {"error": {"type": "server_error", "code": "server_error",
                                     "message": "the mock model is down (%d)" % status}})
        return True

    def scripted(self, prompt, items, calls, actions):
        """The plan's next action for this turn, once the worker's id is known."""
        worker = worker_id(prompt, items)
        if worker is None:
            return self.answer([self.call("run_list", {})])
        step = len([c for c in calls if c.get("name") != "run_list"])
        if step >= len(actions):
            return self.answer([])
        action = actions[step]
        if action == "hold":
            return self.answer([], hold=True)
        if action == "wait":
            return self.answer([], release=int(re.search(r"Attempt (\d+)", prompt).group(1)))
        if action.startswith("limit"):
            seconds = action.partition(":")[2]
            return self.limit(int(time.time()) + int(seconds) if seconds else None)
        args = {"workerId": worker, "summary": "attempt step %d done" % (step + 1)}
        if action == "await_human":
            args = {"workerId": worker, "reason": "a decision only a person can make",
                    "question": "Which database should the service use?"}
        return self.answer([self.call(TOOLS[action], args)])

    def refresh(self, body):
        """A refresh token works once; the latest access token is the only good one."""
        with LOCK:
            spent = body.get("refresh_token") in AUTH["used"]
            AUTH["used"].add(body.get("refresh_token"))
            if not spent:
                AUTH["refreshes"] += 1
                n = AUTH["refreshes"]
                AUTH["access"] = token(int(time.time()) + 864000, "access-%d" % n)
        if ARGS.refreshes:
            with LOCK, open(ARGS.refreshes, "a", encoding="utf-8") as f:
                f.write(json.dumps({"refreshToken": body.get("refresh_token"), "status": 401 if spent else 200}) + "\n")
        if spent:
            return self.json(401, {"error": {"code": "refresh_token_reused"}})
        self.json(200, {"access_token": AUTH["access"], "refresh_token": "refresh-%d" % n,
                        "id_token": token(int(time.time()) + 864000, "id-%d" % n)})

    def shell(self, command, yield_ms=10000):
        """A call of codex's own shell tool (`exec_command`, 0.169.0), run in its sandbox;
        a command still running after `yield_ms` goes on in the background."""
        n = COUNT[0] + 1
        return {"type": "function_call", "id": "fc_mock_%d" % n, "call_id": "call_mock_%d" % n,
                "name": "exec_command", "arguments": json.dumps({"cmd": command, "yield_time_ms": yield_ms})}

    def json(self, status, value):
        payload = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def call(self, tool, args):
        n = COUNT[0] + 1
        return {"type": "function_call", "id": "fc_mock_%d" % n, "call_id": "call_mock_%d" % n,
                "name": tool, "namespace": NAMESPACE, "arguments": json.dumps(args)}

    def answer(self, calls, slow=False, hold=False, release=None):
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        rid = "resp_mock_%d" % n
        self.event({"type": "response.created", "response": {"id": rid}})
        if slow or hold or release is not None:
            # Keep the stream open with a harmless event every second; a `wait` checks its
            # release every 50 ms.
            until = time.time() + (HOLD_S if hold or release is not None else 20)
            beat = time.time()
            while time.time() < until:
                if release is not None and released(release):
                    break
                time.sleep(1 if release is None else 0.05)
                if time.time() - beat < 1:
                    continue
                beat = time.time()
                try:
                    self.event({"type": "response.in_progress", "response": {"id": rid}})
                except (BrokenPipeError, ConnectionResetError):
                    return
        items = calls or [{
            "type": "message",
            "role": "assistant",
            "id": "msg_mock_%d" % n,
            "content": [{"type": "output_text", "text": "mock reply %d" % n}],
        }]
        for item in items:
            self.event({"type": "response.output_item.done", "item": item})
        usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 3,
                 "output_tokens_details": None, "total_tokens": 13}
        self.event({"type": "response.completed", "response": {"id": rid, "usage": usage}})

    def event(self, data):
        chunk = "event: %s\ndata: %s\n\n" % (data["type"], json.dumps(data))
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    def limit(self, resets_at):
        """A 429 `usage_limit_reached`; with `resets_at`, the headers that say when it lifts."""
        error = {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                 "plan_type": "plus"}
        if resets_at is not None:
            error.update({"resets_at": resets_at, "resets_in_seconds": max(0, resets_at - int(time.time()))})
        payload = json.dumps({"error": error}).encode()
        self.send_response(429)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        if resets_at is not None:
            self.send_header("x-codex-primary-used-percent", "100.0")
            self.send_header("x-codex-primary-window-minutes", "300")
            self.send_header("x-codex-primary-reset-at", str(resets_at))
            self.send_header("x-codex-secondary-used-percent", "40.0")
            self.send_header("x-codex-secondary-window-minutes", "10080")
            self.send_header("x-codex-secondary-reset-at", str(resets_at + 86400))
        self.end_headers()
        self.wfile.write(payload)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write-auth"]:
        write_auth(sys.argv[2])
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--plan")
    parser.add_argument("--requests")
    parser.add_argument("--auth", action="store_true")
    parser.add_argument("--refreshes")
    ARGS = parser.parse_args()
    ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler).serve_forever()
