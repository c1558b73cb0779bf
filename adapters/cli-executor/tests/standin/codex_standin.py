#!/usr/bin/env python3
"""A stand-in for `codex app-server` that replays a real recording (stdlib only).

Usage: codex_standin.py --fixture FILE [--ignore-term] [--fork] [--long-line BYTES]
                        [--exit-after METHOD]

The recording (tests/fixtures/codex-0.169.0/*.jsonl) holds what a client sent and what
the real app-server 0.169.0 answered. For each request read on stdin, the stand-in takes
the next recorded exchange for the same method: the recorded response, renumbered to the
request's id, and the notifications the server sent with it, in their recorded order.
The nonces are carried over: the `clientUserMessageId` of the request replaces the
recorded one everywhere it appears (in `item/*` and in a later `thread/read`). Notifications
from the client (`initialized`) are read and ignored.

Test hooks:
- the request `standin/env` is answered with the process's environment, cwd, pid, process
  group, the text of $CODEX_HOME/config.toml and its mode, and the grandchild's pid;
- `--ignore-term`: SIGTERM is ignored (by the grandchild too), and so is the end of stdin
  (a stubborn child: only SIGKILL ends it);
- `--fork`: a grandchild is forked at start that sleeps until killed;
- `--long-line BYTES`: a line of BYTES bytes (and a newline) is written first;
- `--exit-after METHOD`: exit with status 3 after answering the first METHOD request.
"""

import argparse
import json
import os
import signal
import sys
import time


def exchanges(path):
    """Recorded requests, per method, each with the messages the server sent after it."""
    by_method = {}
    current = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            if "header" in entry:
                continue
            msg = entry["msg"]
            if entry["dir"] == "send":
                current = None
                if "id" in msg and "method" in msg:
                    current = {"request": msg, "replies": []}
                    by_method.setdefault(msg["method"], []).append(current)
            elif current is not None:
                current["replies"].append(msg)
    return by_method


def rewrite(value, nonces):
    """`value` with every string that is a recorded nonce replaced by the one sent."""
    if isinstance(value, str):
        return nonces.get(value, value)
    if isinstance(value, list):
        return [rewrite(v, nonces) for v in value]
    if isinstance(value, dict):
        return {k: rewrite(v, nonces) for k, v in value.items()}
    return value


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def env_dump(grandchild):
    home = os.environ.get("CODEX_HOME", "")
    config = os.path.join(home, "config.toml")
    text, mode = None, None
    if home and os.path.exists(config):
        with open(config, encoding="utf-8") as f:
            text = f.read()
        mode = os.stat(config).st_mode & 0o777
    return {"env": dict(os.environ), "cwd": os.getcwd(), "pid": os.getpid(),
            "pgid": os.getpgid(0), "config": text, "configMode": mode,
            "grandchild": grandchild}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--fork", action="store_true")
    parser.add_argument("--long-line", type=int, default=0)
    parser.add_argument("--exit-after", default=None)
    args = parser.parse_args()

    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    grandchild = None
    if args.fork:
        grandchild = os.fork()
        if grandchild == 0:
            # The grandchild: inherits the ignored SIGTERM, holds no pipe open, waits.
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            while True:
                time.sleep(3600)
    if args.long_line:
        sys.stdout.write("x" * args.long_line + "\n")
        sys.stdout.flush()

    by_method = exchanges(args.fixture)
    nonces = {}
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "standin/env":
            send({"id": msg["id"], "result": env_dump(grandchild)})
            continue
        queue = by_method.get(method) or []
        if not queue:
            send({"id": msg["id"], "error": {"code": -32601, "message": "not in the recording"}})
            continue
        exchange = queue.pop(0)
        recorded, params = exchange["request"], msg.get("params") or {}
        sent_nonce = params.get("clientUserMessageId")
        recorded_nonce = (recorded.get("params") or {}).get("clientUserMessageId")
        if sent_nonce and recorded_nonce:
            nonces[recorded_nonce] = sent_nonce
        for reply in exchange["replies"]:
            reply = rewrite(reply, nonces)
            if reply.get("id") == recorded["id"] and "method" not in reply:
                reply["id"] = msg["id"]
            send(reply)
        if method == args.exit_after:
            sys.stderr.write("standin: crashing after " + method + "\n")
            sys.exit(3)
    while args.ignore_term:
        time.sleep(3600)


if __name__ == "__main__":
    main()
