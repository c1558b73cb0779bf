#!/usr/bin/env python3
"""A stdio MCP server with one tool, `wait`, for the Claude recordings (stdlib only).

Started by `claude` through `--mcp-config` as the server `orch`, so the tool is
`mcp__orch__wait`. `wait` sleeps `WAIT_S` seconds and answers `waited`: long enough for
a user line to be written while a tool runs (does it join the turn at the tool boundary?).
Newline-delimited JSON-RPC 2.0 on stdin/stdout, as the MCP stdio transport says.
"""
import json
import sys
import time

WAIT_S = 3


def reply(rid, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        continue  # notifications (initialized, cancelled)
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
        reply(rid, {"protocolVersion": version, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "orch-mock", "version": "0.0.0"}})
    elif method == "tools/list":
        reply(rid, {"tools": [{"name": "wait", "description": "Waits a few seconds.",
                               "inputSchema": {"type": "object", "properties": {}}}]})
    elif method == "tools/call":
        time.sleep(WAIT_S)
        reply(rid, {"content": [{"type": "text", "text": "waited"}]})
    elif method == "ping":
        reply(rid, {})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid,
                                     "error": {"code": -32601, "message": "method not found"}}) + "\n")
        sys.stdout.flush()
