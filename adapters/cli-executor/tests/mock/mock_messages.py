#!/usr/bin/env python3
"""A loopback mock of the Anthropic Messages API, enough for `claude -p` turns offline.

Stdlib only. `python3 mock_messages.py PORT` serves 127.0.0.1:PORT; `record_claude.py`
imports it and runs it in a thread (`serve(port, on_request)`), so every request the CLI
made can be logged beside its stdio.

`POST /v1/messages` is answered by the last user message's text (a `tool_result` block
counts as text `TOOL_RESULT` followed by the result's own text), streamed as the real API streams (SSE events
`message_start`, `content_block_start`, `ping`, `content_block_delta`,
`content_block_stop`, `message_delta`, `message_stop`), or as one JSON message when the
request has no `"stream": true`:
- contains `LIMIT`: HTTP 429, body `{"type":"error","error":{"type":"rate_limit_error",
  "message":...},"request_id":...}` with `retry-after` and the subscription headers
  `anthropic-ratelimit-unified-status: rejected`, `anthropic-ratelimit-unified-reset`
  (Unix seconds), `anthropic-ratelimit-unified-5h-*`, `...-representative-claim`;
- contains `FAIL500`: HTTP 500 `api_error`;
- contains `SLOW`: the stream opens at once, then holds with a `ping` every second for
  `SLOW_S` seconds before the text (so a user line can be written mid-turn);
- contains `TOOL` (and no tool result yet): a `tool_use` of the first tool whose name
  starts with `mcp__orch__` (`mcp__orch__wait` when none is offered), `stop_reason:"tool_use"`;
- `TOOL_RESULT` (the last user message is a tool result): `tool done N`;
- anything else: `mock reply N`.
`POST /v1/messages/count_tokens` answers `{"input_tokens": 10}`; anything else is a 404.

With `--script FILE` (`python3 mock_messages.py PORT --script FILE [--log FILE]`) the
answers to prompts come from FILE instead, a JSON object `{"workerId": "wrk-1", "turns":
[ACTION, ...]}` read at each prompt (so a test may write it late): the N-th prompt (a
request whose last user message is not a tool result) gets the N-th action, `text` once
they run out; the request after a tool result gets `tool done N`. Actions:
- `text`: `mock reply N`;
- `slow`: the stream holds for `SLOW_S` seconds first; with `--release FILE`, the k-th
  `slow` answer holds (a `ping` each second) until FILE holds a number >= k instead, at
  most `RELEASE_MAX_S` seconds, so a test ends held turns one by one without a race;
- `progress`, `complete`, `await_human`: a `tool_use` of `mcp__orchestrator__worker_progress`,
  `..._worker_complete` or `..._worker_await_human` with the script's `workerId` (the
  engine's prompts name the worker, the attempt and the run, but not the worker's id);
- `{"tool": NAME, "input": {...}}`: a `tool_use` of the built-in tool NAME (`Write`,
  `Edit`, `Bash`, ...) with that input: what the CLI's permissions let through;
- `{"say": TEXT}`: TEXT as the whole answer (a hook's or a goal check's verdict);
- `limit`: the 429 above; `limit_lisbon`: the same with the message "You've hit your limit
  · resets 1pm (Europe/Lisbon)" (the CLI shows the API's message in its `result`);
  `limit:S`: the 429 whose unified reset headers name S seconds from now (what a
  subscription's limit looks like to the CLI; with API-key auth it shows none of it, and
  2.1.332 retries the request itself once `retry-after` has passed, within the same turn);
  `limit_epoch:S`: the 429 with the message "Claude AI usage limit reached|<epoch S
  seconds from now>" (a reset the executor reads from the text the CLI passes on) and
  `retry-after: 3600`, so the CLI does not retry it itself.
`--log FILE` appends one line per Messages request: `{"n", "action", "last"}` (the tail of
the last user text), the tests' view of what the model was asked.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# A fixed reset time (2026-12-02T12:00:00Z, the day after the recording), so recordings do
# not depend on the clock.
RESETS_AT = 1796212800
SLOW_S = 6
RELEASE_MAX_S = 120
RELEASE = {"path": None, "slow": 0}
COUNT = [0]
LOCK = threading.Lock()
ON_REQUEST = [None]
SCRIPT = {"path": None, "log": None, "prompts": 0}
LISBON = "You've hit your limit \u00b7 resets 1pm (Europe/Lisbon)"
TOOLS = {"progress": ("worker_progress", {"summary": "progress from the mock model"}),
         "complete": ("worker_complete", {"summary": "done: the mock model's handoff"}),
         "await_human": ("worker_await_human", {"reason": "a choice only a person can make",
                                                "question": "Which way?"})}


def scripted(text):
    """The action for this request under `--script`: `None` without a script."""
    if SCRIPT["path"] is None:
        return None, {}
    with open(SCRIPT["path"], encoding="utf-8") as f:
        script = json.load(f)
    if text.startswith("TOOL_RESULT"):
        return "after_tool", script
    with LOCK:
        SCRIPT["prompts"] += 1
        n = SCRIPT["prompts"]
    turns = script.get("turns", [])
    return (turns[n - 1] if n <= len(turns) else "text"), script


def log_request(action, text):
    if SCRIPT["log"] is not None:
        with LOCK, open(SCRIPT["log"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"n": SCRIPT["prompts"], "action": action, "last": text[-300:]}) + "\n")


def last_user_text(body):
    """The text of the last user message; a tool result reads as `TOOL_RESULT`."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = []
        for block in content or []:
            if block.get("type") == "tool_result":
                result = block.get("content")
                if isinstance(result, list):
                    result = " ".join(b.get("text", "") for b in result if isinstance(b, dict))
                return "TOOL_RESULT " + " ".join(texts + [str(result or "")])
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
        return " ".join(texts)
    return ""


def user_texts(body):
    """Every user text block of the request, in order (to see where mid-turn input landed)."""
    out = []
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                out.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                out.append("<tool_result>")
    return out


def summary(path, body, status):
    """What the recorder logs for one request: no system prompt, no tool schemas."""
    return {"path": path, "status": status, "model": body.get("model"), "stream": bool(body.get("stream")),
            "messages": len(body.get("messages", [])),
            "user_texts": [t[-200:] for t in user_texts(body)],
            "tools": sorted(t.get("name", "") for t in body.get("tools", []) if t.get("name", "").startswith("mcp__"))}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        if ON_REQUEST[0] is None:
            sys.stderr.write("mock: " + (fmt % args) + "\n")

    def do_GET(self):
        self.plain(404, {"type": "error", "error": {"type": "not_found_error", "message": "not found"}})

    def do_HEAD(self):
        self.plain(200, {})

    def plain(self, status, obj, headers=None):
        payload = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", "req_mock")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self.plain(200, {"input_tokens": 10})
        if not path.endswith("/v1/messages"):
            return self.do_GET()
        text = last_user_text(body)
        action, script = scripted(text)
        log_request(action, text)
        if action is not None:
            return self.act(body, action, script)
        status = 429 if "LIMIT" in text else 500 if "FAIL500" in text else 200
        if ON_REQUEST[0] is not None:
            ON_REQUEST[0](summary(path, body, status))
        if status == 429:
            return self.limit()
        if status == 500:
            return self.plain(500, {"type": "error", "error": {"type": "api_error", "message": "Internal server error"},
                                    "request_id": "req_mock_500"})
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        tools = [t.get("name", "") for t in body.get("tools", [])]
        if text.startswith("TOOL_RESULT"):
            blocks = [("text", "tool done %d" % n)]
        elif "TOOL" in text:
            name = next((t for t in tools if t.startswith("mcp__orch__")), "mcp__orch__wait")
            blocks = [("text", "calling the tool"), ("tool_use", name)]
        else:
            blocks = [("text", "mock reply %d" % n)]
        stop = "tool_use" if blocks[-1][0] == "tool_use" else "end_turn"
        if not body.get("stream"):
            content = [{"type": "text", "text": v} if k == "text" else
                       {"type": "tool_use", "id": "toolu_mock_%d" % n, "name": v, "input": {}} for k, v in blocks]
            return self.plain(200, {"id": "msg_mock_%d" % n, "type": "message", "role": "assistant",
                                    "model": body.get("model"), "content": content, "stop_reason": stop,
                                    "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 3}})
        self.answer(body, n, blocks, stop, slow="SLOW" in text)

    def act(self, body, action, script):
        """A scripted answer (`--script`)."""
        if action in ("limit", "limit_lisbon"):
            return self.limit(LISBON if action == "limit_lisbon" else None)
        if isinstance(action, str) and action.startswith("limit:"):
            return self.limit(None, int(time.time()) + int(action.partition(":")[2]))
        if isinstance(action, str) and action.startswith("limit_epoch:"):
            resets_at = int(time.time()) + int(action.partition(":")[2])
            return self.limit("Claude AI usage limit reached|%d" % resets_at, resets_at, retry_after=3600)
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        if action == "after_tool":
            return self.answer(body, n, [("text", "tool done %d" % n)], "end_turn", slow=False)
        if isinstance(action, dict) and "say" in action:
            return self.answer(body, n, [("text", action["say"])], "end_turn", slow=False)
        if isinstance(action, dict) and "tool" in action:
            name = action["tool"]
            call = action.get("input", {})
            return self.answer(body, n, [("text", "calling %s" % name), ("tool_use", name, call)], "tool_use",
                               slow=False)
        if action in TOOLS:
            name, args = TOOLS[action]
            tool = next((t.get("name") for t in body.get("tools", []) if t.get("name", "").endswith("__" + name)),
                        "mcp__orchestrator__" + name)
            call = dict(args, workerId=script.get("workerId", ""))
            return self.answer(body, n, [("text", "calling %s" % name), ("tool_use", tool, call)], "tool_use",
                               slow=False)
        return self.answer(body, n, [("text", "mock reply %d" % n)], "end_turn", slow=action == "slow")

    def answer(self, body, n, blocks, stop, slow):
        """Streams an answer made of text and tool_use blocks."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_mock_%d" % n)
        self.send_header("connection", "close")
        self.end_headers()
        try:
            self.stream(body, n, blocks, stop, slow=slow)
        except (BrokenPipeError, ConnectionResetError):
            return
        self.close_connection = True

    def stream(self, body, n, blocks, stop, slow):
        self.event("message_start", {"type": "message_start", "message": {
            "id": "msg_mock_%d" % n, "type": "message", "role": "assistant", "model": body.get("model"),
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "output_tokens": 1}}})
        if slow and RELEASE["path"]:
            with LOCK:
                RELEASE["slow"] += 1
                k = RELEASE["slow"]
            deadline = time.time() + RELEASE_MAX_S
            while released(RELEASE["path"]) < k and time.time() < deadline:
                for _ in range(10):
                    time.sleep(0.1)
                    if released(RELEASE["path"]) >= k:
                        break
                self.event("ping", {"type": "ping"})
        elif slow:
            for _ in range(SLOW_S):
                time.sleep(1)
                self.event("ping", {"type": "ping"})
        for index, (kind, value, *rest) in enumerate(blocks):
            call = rest[0] if rest else {}
            if kind == "text":
                self.event("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}})
                self.event("ping", {"type": "ping"})
                self.event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "text_delta", "text": value}})
            else:
                self.event("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                    "type": "tool_use", "id": "toolu_mock_%d" % n, "name": value, "input": {}}})
                self.event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(call)}})
            self.event("content_block_stop", {"type": "content_block_stop", "index": index})
        self.event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 3}})
        self.event("message_stop", {"type": "message_stop"})

    def event(self, name, data):
        self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
        self.wfile.flush()

    def limit(self, message=None, resets_at=RESETS_AT, retry_after=None):
        message = message or "This request would exceed your account's rate limit. Please try again later."
        if retry_after is None:
            retry_after = max(1, resets_at - int(time.time())) if resets_at != RESETS_AT else 3600
        self.plain(429, {"type": "error", "error": {"type": "rate_limit_error", "message": message},
                         "request_id": "req_mock_429"}, {
            "retry-after": str(retry_after),
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(resets_at),
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
            "anthropic-ratelimit-unified-5h-status": "rejected",
            "anthropic-ratelimit-unified-5h-reset": str(resets_at),
            "anthropic-ratelimit-unified-5h-utilization": "1.0",
            "anthropic-ratelimit-unified-7d-status": "allowed",
            "anthropic-ratelimit-unified-7d-reset": str(resets_at + 5 * 86400),
            "anthropic-ratelimit-unified-7d-utilization": "0.4",
        })


def released(path):
    """The number `path` holds (`--release`); 0 when absent or unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def serve(port, on_request=None):
    """Serves in a daemon thread; `on_request(summary)` is called for each Messages request."""
    ON_REQUEST[0] = on_request
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    argv = sys.argv[2:]
    if "--release" in argv:
        RELEASE["path"] = argv[argv.index("--release") + 1]
    for flag in ("--script", "--log"):
        if flag in argv:
            SCRIPT[flag[2:].replace("script", "path")] = argv[argv.index(flag) + 1]
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
