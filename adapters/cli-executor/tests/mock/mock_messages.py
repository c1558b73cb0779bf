#!/usr/bin/env python3
"""A loopback mock of the Anthropic Messages API, enough for `claude -p` turns offline.

Stdlib only. `python3 mock_messages.py PORT` serves 127.0.0.1:PORT; `record_claude.py`
imports it and runs it in a thread (`serve(port, on_request)`), so every request the CLI
made can be logged beside its stdio.

`POST /v1/messages` is answered by the last user message's text (a `tool_result` block
counts as text `TOOL_RESULT`), streamed as the real API streams (SSE events
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
COUNT = [0]
LOCK = threading.Lock()
ON_REQUEST = [None]


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
                return "TOOL_RESULT " + " ".join(texts)
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
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_mock_%d" % n)
        self.send_header("connection", "close")
        self.end_headers()
        try:
            self.stream(body, n, blocks, stop, slow="SLOW" in text)
        except (BrokenPipeError, ConnectionResetError):
            return
        self.close_connection = True

    def stream(self, body, n, blocks, stop, slow):
        self.event("message_start", {"type": "message_start", "message": {
            "id": "msg_mock_%d" % n, "type": "message", "role": "assistant", "model": body.get("model"),
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "output_tokens": 1}}})
        if slow:
            for _ in range(SLOW_S):
                time.sleep(1)
                self.event("ping", {"type": "ping"})
        for index, (kind, value) in enumerate(blocks):
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
                                                   "delta": {"type": "input_json_delta", "partial_json": "{}"}})
            self.event("content_block_stop", {"type": "content_block_stop", "index": index})
        self.event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 3}})
        self.event("message_stop", {"type": "message_stop"})

    def event(self, name, data):
        self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
        self.wfile.flush()

    def limit(self):
        self.plain(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                    "message": "This request would exceed your account's rate limit. Please try again later."},
                         "request_id": "req_mock_429"}, {
            "retry-after": "3600",
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(RESETS_AT),
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
            "anthropic-ratelimit-unified-5h-status": "rejected",
            "anthropic-ratelimit-unified-5h-reset": str(RESETS_AT),
            "anthropic-ratelimit-unified-5h-utilization": "1.0",
            "anthropic-ratelimit-unified-7d-status": "allowed",
            "anthropic-ratelimit-unified-7d-reset": str(RESETS_AT + 5 * 86400),
            "anthropic-ratelimit-unified-7d-utilization": "0.4",
        })


def serve(port, on_request=None):
    """Serves in a daemon thread; `on_request(summary)` is called for each Messages request."""
    ON_REQUEST[0] = on_request
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
