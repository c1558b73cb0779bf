#!/usr/bin/env python3
"""A loopback mock of the OpenAI Responses API, enough for `codex app-server` turns offline.

Stdlib only. `python3 mock_responses.py PORT` serves 127.0.0.1:PORT. It answers every
`POST .../responses` with a streamed (SSE) assistant message, chosen by the last user text:
- contains `LIMIT`: HTTP 429 with a `usage_limit_reached` body and rate-limit headers
  (the shape the ChatGPT backend sends a subscription that hit its cap);
- contains `SLOW`: the reply is held for 20 s before it completes (so a turn can be
  interrupted or steered while it runs);
- anything else: `mock reply N` at once.
Anything else (`GET /models` and so on) is a 404, which codex tolerates. Each request's
path is logged to stderr.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNT = [0]
# A fixed reset time (2026-12-02T12:00:00Z, the day after the recording), so recordings do
# not depend on the clock.
RESETS_AT = 1796212800


def last_user_text(body):
    text = ""
    for item in body.get("input", []):
        if item.get("role") == "user":
            for part in item.get("content", []):
                if isinstance(part, dict) and "text" in part:
                    text = part["text"]
    return text


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
        if not self.path.endswith("/responses"):
            return self.do_GET()
        text = last_user_text(body)
        if "LIMIT" in text:
            return self.limit()
        COUNT[0] += 1
        n = COUNT[0]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        rid = "resp_mock_%d" % n
        self.event({"type": "response.created", "response": {"id": rid}})
        if "SLOW" in text:
            # Keep the stream open with a harmless event every second.
            for _ in range(20):
                time.sleep(1)
                try:
                    self.event({"type": "response.in_progress", "response": {"id": rid}})
                except (BrokenPipeError, ConnectionResetError):
                    return
        item = {
            "type": "message",
            "role": "assistant",
            "id": "msg_mock_%d" % n,
            "content": [{"type": "output_text", "text": "mock reply %d" % n}],
        }
        self.event({"type": "response.output_item.done", "item": item})
        usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 3,
                 "output_tokens_details": None, "total_tokens": 13}
        self.event({"type": "response.completed", "response": {"id": rid, "usage": usage}})

    def event(self, data):
        chunk = "event: %s\ndata: %s\n\n" % (data["type"], json.dumps(data))
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    def limit(self):
        payload = json.dumps({"error": {
            "type": "usage_limit_reached",
            "message": "The usage limit has been reached",
            "plan_type": "plus",
            "resets_at": RESETS_AT,
            "resets_in_seconds": 3600,
        }}).encode()
        self.send_response(429)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("x-codex-primary-used-percent", "100.0")
        self.send_header("x-codex-primary-window-minutes", "300")
        self.send_header("x-codex-primary-reset-at", str(RESETS_AT))
        self.send_header("x-codex-secondary-used-percent", "40.0")
        self.send_header("x-codex-secondary-window-minutes", "10080")
        self.send_header("x-codex-secondary-reset-at", str(RESETS_AT + 86400))
        self.end_headers()
        self.wfile.write(payload)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
