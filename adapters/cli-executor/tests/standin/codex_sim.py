#!/usr/bin/env python3
"""A scripted stand-in for `codex app-server` that keeps its threads on disk (stdlib only).

Usage: codex_sim.py [--turn-ms MS] [--hold-file PATH] [--stall-turn-start K]
                    [--drop-turn-start K] [--exit-on-turn-start K] [--mcp-down]
       codex_sim.py [--sim-version V] --version
       codex_sim.py [--schema-lacks LINE]... app-server generate-json-schema --out DIR

Unlike codex_standin.py (which replays one recording), this one has state, so a new
process for the same session sees what the last one did, as the real app-server does
with the rollouts under $CODEX_HOME. Its messages have the shapes of the 0.169.0
recordings (tests/fixtures/codex-0.169.0): the `turn/start` answer first, then
`turn/started`, the user message with its `clientId`, the agent message, `turn/completed`.

- `$CODEX_HOME/standin-state.json`: threads, their turns and items, and how many
  `turn/start`s this session has seen (rewritten atomically after every change).
- `$CODEX_HOME/standin-log.jsonl`: one line per prompt taken in (`turn/start`, `turn/steer`)
  with its `clientUserMessageId` and the pid: the test's proof that no nonce went in twice.

Methods: initialize, thread/start, thread/resume (a turn left `inProgress` by an earlier
process is `interrupted`: that process is gone), turn/start, turn/steer (-32600 "no active
turn to steer" when no turn runs), thread/read, thread/unsubscribe, turn/interrupt,
thread/goal/get (no goal).

When `$CODEX_HOME/config.toml` configures the `orchestrator` MCP server, thread/start and
thread/resume send its `mcpServer/startupStatus/updated` `starting` then `ready` before their
answer (as `mcp-ready.jsonl`), or, with `--mcp-down`, are refused with the 0.169.0 message
(`mcp-down.jsonl`).

The surface check (`cli_executor::codex::surface`): `--version` prints `codex-cli 0.169.0` (or
`--sim-version`'s), `features list` lists `goals`, `hooks`, `plugins` and
`in_app_local_automation` (`removed` when
named by `--features-removed`), and `app-server generate-json-schema --out DIR` writes a schema that
meets every line of the crate's `src/codex/surface.txt` except those starting with a
`--schema-lacks` value.

Scripted faults, K counting this session's `turn/start`s from 1 (across processes):
- `--turn-ms MS`: a turn completes MS after it starts (default 30);
- `--hold-file PATH`: while PATH exists, no turn completes;
- `--stall-turn-start K`: the K-th is recorded (the prompt went in) but never answered and
  never completes;
- `--drop-turn-start K`: the K-th is neither recorded nor answered;
- `--exit-on-turn-start K`: exit with status 3 on the K-th, before recording it;
- `--limit-on K` / `--limit-reset-s S`: the K-th fails as the 0.169.0 usage limit does
  (`usage-limit.jsonl`): `account/rateLimits/updated` with the primary window exhausted and
  `resetsAt` S seconds from now (default 3), then `turn/completed` `failed` with
  `codexErrorInfo` `usageLimitExceeded` (kept in the thread for `thread/read`);
- `--foreign-after K`: when the K-th turn completes, a turn nobody started runs in its
  thread (`turn/started` with a user message that has no `clientId`, as a person typing
  into the session would);
- `--end-before-steer`: a `turn/steer` finds its turn just ended (it completes first, then
  the steer is refused -32600, the race the 0.169.0 recording shows).

Approvals: a thread started with an `approvalPolicy` other than `never` asks, in each turn,
an `item/commandExecution/requestApproval` (command `make deploy`) right after
`turn/started`, with `thread/status/changed` `waitingOnApproval`; the turn waits until the
answer comes, then sends `serverRequest/resolved` and completes. Each answer is logged to
`standin-log.jsonl` as `{"method": "approval", "decision": ...}`.
"""

import argparse
import json
import os
import queue
import sys
import threading
import time
import uuid

import durable

HOME = os.environ.get("CODEX_HOME", ".")
STATE = os.path.join(HOME, "standin-state.json")
LOG = os.path.join(HOME, "standin-log.jsonl")
# The 0.169.0 usage-limit text (usage-limit.jsonl), whose time has no date or zone.
LIMIT_MESSAGE = "You\u2019ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit " \
    "https://chatgpt.com/settings/usage to purchase more credits or try again at 12:00 PM."
SURFACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "codex", "surface.txt")
MCP_DOWN = ("Fatal error: Failed to initialize session: required MCP servers failed to initialize: "
            "orchestrator: handshaking with MCP server failed")


def mcp_configured():
    try:
        with open(os.path.join(HOME, "config.toml"), encoding="utf-8") as f:
            return "[mcp_servers.orchestrator]" in f.read()
    except FileNotFoundError:
        return False


def write_schema(out, lacks):
    """A schema meeting every line of surface.txt except the lacking ones."""
    files = {name: {"oneOf": [], "definitions": {}} for name in
             ["ClientRequest", "ClientNotification", "ServerRequest", "ServerNotification"]}
    types = {"definitions": {}}
    kinds = {"request": "ClientRequest", "notification": "ServerNotification",
             "server-request": "ServerRequest", "client-notification": "ClientNotification"}
    with open(SURFACE, encoding="utf-8") as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    for words in lines:
        if any(" ".join(words).startswith(lack) for lack in lacks):
            continue
        kind, name, rest = words[0], words[1], words[2:]
        if kind in kinds:
            file = files[kinds[kind]]
            params = "Params%d" % len(file["definitions"])
            file["definitions"][params] = {"properties": {p: {} for p in rest}}
            file["oneOf"].append({"properties": {"method": {"enum": [name]},
                                                 "params": {"$ref": "#/definitions/" + params}}})
        elif kind == "type":
            types["definitions"].setdefault(name, {"properties": {}})["properties"].update({p: {} for p in rest})
        elif kind == "variant":
            member = {"properties": {"type": {"enum": [rest[0]]}, **{p: {} for p in rest[1:]}}}
            types["definitions"].setdefault(name, {"oneOf": []})["oneOf"].append(member)
        elif kind == "enum":
            types["definitions"].setdefault(name, {"enum": []})["enum"].extend(rest)
    os.makedirs(out, exist_ok=True)
    for name, value in files.items():
        with open(os.path.join(out, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(value, f)
    with open(os.path.join(out, "codex_app_server_protocol.v2.schemas.json"), "w", encoding="utf-8") as f:
        json.dump(types, f)


def load():
    return durable.load(STATE, {"threads": {}, "turnStarts": 0})


def save(state):
    durable.save(STATE, state)


def log(method, nonce):
    durable.append(LOG, {"method": method, "clientUserMessageId": nonce, "pid": os.getpid()})


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def now_ms():
    return int(time.time() * 1000)


def turn_view(turn, items=True):
    return {"id": turn["id"], "rootTurnId": turn["id"], "items": turn["items"] if items else [],
            "itemsView": "full" if items else "notLoaded", "status": turn["status"], "error": turn.get("error"),
            "startedAt": None, "completedAt": None, "durationMs": None}


def thread_view(tid, thread, turns):
    view = {"id": tid, "sessionId": tid, "preview": "", "ephemeral": False, "cwd": thread["cwd"]}
    if turns:
        view["turns"] = [turn_view(t) for t in thread["turns"]]
    return view


def user_item(text, nonce):
    return {"type": "userMessage", "id": str(uuid.uuid4()), "clientId": nonce,
            "content": [{"type": "text", "text": text, "text_elements": []}]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--turn-ms", type=int, default=30)
    parser.add_argument("--hold-file", default=None)
    parser.add_argument("--stall-turn-start", type=int, default=0)
    parser.add_argument("--drop-turn-start", type=int, default=0)
    parser.add_argument("--exit-on-turn-start", type=int, default=0)
    parser.add_argument("--end-before-steer", action="store_true")
    parser.add_argument("--foreign-after", type=int, default=0)
    parser.add_argument("--limit-on", type=int, default=0)
    parser.add_argument("--limit-reset-s", type=int, default=3)
    parser.add_argument("--mcp-down", action="store_true")
    parser.add_argument("--version", action="store_true")
    parser.add_argument("--sim-version", default="0.169.0")
    parser.add_argument("--schema-lacks", action="append", default=[])
    parser.add_argument("--features-removed", action="append", default=[])
    parser.add_argument("--out")
    args, rest = parser.parse_known_args()
    if args.version:
        print("codex-cli %s" % args.sim_version)
        return
    if rest[:2] == ["app-server", "generate-json-schema"]:
        write_schema(args.out, args.schema_lacks)
        return
    if rest[:2] == ["features", "list"]:
        for name in ("goals", "hooks", "plugins", "in_app_local_automation"):
            print("%-40s %-18s %s" % (name, "removed" if name in args.features_removed else "stable", "true"))
        return
    mcp = mcp_configured()

    def mcp_ready(tid):
        for status in ("starting", "ready"):
            send({"method": "mcpServer/startupStatus/updated",
                  "params": {"threadId": tid, "name": "orchestrator", "status": status, "error": None}})

    state = load()
    lines = queue.Queue()

    def reader():
        for line in sys.stdin:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    running = {}  # thread id -> (turn, due ms, stalled): turns this process runs
    asking = {}  # our pending approval request id -> its thread
    replies = [0]

    def complete(tid, status):
        turn, _, _ = running.pop(tid)
        if status == "completed" and turn.get("limit"):
            resets_at = int(time.time()) + args.limit_reset_s
            send({"method": "account/rateLimits/updated", "params": {"rateLimits": {
                "limitId": "codex", "primary": {"usedPercent": 100, "windowDurationMins": 300, "resetsAt": resets_at},
                "secondary": {"usedPercent": 40, "windowDurationMins": 10080, "resetsAt": resets_at + 86400}}}})
            status = "failed"
            turn["error"] = {"message": LIMIT_MESSAGE, "codexErrorInfo": "usageLimitExceeded",
                             "additionalDetails": None}
        replies[0] += 1
        agent = {"type": "agentMessage", "id": "msg_sim_%d" % replies[0], "text": "sim reply %d" % replies[0]}
        if status == "completed":
            turn["items"].append(agent)
            send({"method": "item/completed", "params": {"item": agent, "threadId": tid, "turnId": turn["id"]}})
        turn["status"] = status
        save(state)
        send({"method": "thread/status/changed", "params": {"threadId": tid, "status": {"type": "idle"}}})
        send({"method": "turn/completed", "params": {"threadId": tid, "turn": turn_view(turn)}})
        if status == "completed" and args.foreign_after and state["turnStarts"] == args.foreign_after \
                and not state.get("foreignDone"):
            state["foreignDone"] = True
            theirs = {"id": str(uuid.uuid4()), "status": "inProgress", "items": [user_item("typed by a person", None)]}
            state["threads"][tid]["turns"].append(theirs)
            save(state)
            running[tid] = (theirs, now_ms() + args.turn_ms, False)
            send({"method": "thread/status/changed",
                  "params": {"threadId": tid, "status": {"type": "active", "activeFlags": []}}})
            send({"method": "turn/started", "params": {"threadId": tid, "turn": turn_view(theirs, False)}})

    while True:
        due = [d for (_, d, stalled) in running.values() if not stalled]
        timeout = max(0, min(due) - now_ms()) / 1000 if due else None
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            line = ""
        if line is None:
            return
        held = args.hold_file and os.path.exists(args.hold_file)
        for tid, (turn, d, stalled) in list(running.items()):
            if stalled or d > now_ms():
                continue
            if held:
                running[tid] = (turn, now_ms() + 20, False)
            else:
                complete(tid, "completed")
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if "method" not in msg:
            # The answer to our approval request: the waiting turn goes on.
            ask = asking.pop(msg["id"], None)
            if ask is None:
                continue
            decision = (msg.get("result") or {}).get("decision")
            durable.append(LOG, {"method": "approval", "decision": decision, "pid": os.getpid()})
            tid = ask
            send({"method": "serverRequest/resolved", "params": {"threadId": tid, "requestId": msg["id"]}})
            send({"method": "thread/status/changed",
                  "params": {"threadId": tid, "status": {"type": "active", "activeFlags": []}}})
            if tid in running:
                turn, _, _ = running[tid]
                running[tid] = (turn, now_ms() + args.turn_ms, False)
            continue
        rid, method, params = msg["id"], msg.get("method"), msg.get("params") or {}
        threads = state["threads"]
        tid = params.get("threadId")
        if method == "initialize":
            send({"id": rid, "result": {"userAgent": "codex-sim/0.169.0", "codexHome": HOME}})
        elif method in ("thread/start", "thread/resume") and mcp and args.mcp_down:
            verb = "creating" if method == "thread/start" else "resuming"
            send({"id": rid, "error": {"code": -32603, "message": "error %s thread: %s" % (verb, MCP_DOWN)}})
        elif method == "thread/start":
            tid = str(uuid.uuid4())
            if mcp:
                mcp_ready(tid)
            threads[tid] = {"cwd": params.get("cwd"), "turns": [], "asks": params.get("approvalPolicy") not in (None, "never")}
            save(state)
            send({"id": rid, "result": {"thread": thread_view(tid, threads[tid], False)}})
            send({"method": "thread/started", "params": {"thread": thread_view(tid, threads[tid], False)}})
        elif method == "thread/resume":
            if tid not in threads:
                send({"id": rid, "error": {"code": -32600, "message": "thread not found: %s" % tid}})
                continue
            for turn in threads[tid]["turns"]:
                if turn["status"] == "inProgress" and tid not in running:
                    turn["status"] = "interrupted"
            save(state)
            if mcp:
                mcp_ready(tid)
            send({"id": rid, "result": {"thread": thread_view(tid, threads[tid], False)}})
        elif method == "turn/start":
            if tid not in threads:
                send({"id": rid, "error": {"code": -32600, "message": "thread not found"}})
                continue
            state["turnStarts"] += 1
            k = state["turnStarts"]
            save(state)
            if k == args.exit_on_turn_start:
                sys.stderr.write("codex_sim: exiting on turn/start %d\n" % k)
                sys.exit(3)
            if k == args.drop_turn_start:
                continue
            nonce = params.get("clientUserMessageId")
            text = "".join(part.get("text", "") for part in params.get("input", []))
            turn = {"id": str(uuid.uuid4()), "status": "inProgress", "items": [user_item(text, nonce)]}
            if k == args.limit_on:
                turn["limit"] = True
            threads[tid]["turns"].append(turn)
            save(state)
            log(method, nonce)
            stalled = k == args.stall_turn_start
            running[tid] = (turn, now_ms() + args.turn_ms, stalled)
            if stalled:
                continue
            send({"id": rid, "result": {"turn": turn_view(turn, False)}})
            send({"method": "thread/status/changed",
                  "params": {"threadId": tid, "status": {"type": "active", "activeFlags": []}}})
            send({"method": "turn/started", "params": {"threadId": tid, "turn": turn_view(turn, False)}})
            item = turn["items"][0]
            send({"method": "item/started", "params": {"item": item, "threadId": tid, "turnId": turn["id"]}})
            send({"method": "item/completed", "params": {"item": item, "threadId": tid, "turnId": turn["id"]}})
            if threads[tid].get("asks"):
                request = "sim-approval-%d" % k
                asking[request] = tid
                running[tid] = (turn, now_ms(), True)
                send({"id": request, "method": "item/commandExecution/requestApproval",
                      "params": {"threadId": tid, "turnId": turn["id"], "itemId": "call_%d" % k,
                                 "startedAtMs": now_ms(), "command": "make deploy", "cwd": threads[tid]["cwd"]}})
                send({"method": "thread/status/changed",
                      "params": {"threadId": tid, "status": {"type": "active", "activeFlags": ["waitingOnApproval"]}}})
        elif method == "turn/steer":
            if args.end_before_steer and tid in running:
                complete(tid, "completed")
            current = running.get(tid)
            if current is None or current[0]["id"] != params.get("expectedTurnId"):
                send({"id": rid, "error": {"code": -32600, "message": "no active turn to steer"}})
                continue
            nonce = params.get("clientUserMessageId")
            text = "".join(part.get("text", "") for part in params.get("input", []))
            item = user_item(text, nonce)
            current[0]["items"].append(item)
            save(state)
            log(method, nonce)
            send({"id": rid, "result": {"turnId": current[0]["id"]}})
            send({"method": "item/started", "params": {"item": item, "threadId": tid, "turnId": current[0]["id"]}})
        elif method == "thread/read":
            if tid not in threads:
                send({"id": rid, "error": {"code": -32600, "message": "thread not found"}})
                continue
            send({"id": rid, "result": {"thread": thread_view(tid, threads[tid], True)}})
        elif method == "turn/interrupt":
            send({"id": rid, "result": {}})
            if tid in running:
                complete(tid, "interrupted")
        elif method == "thread/unsubscribe":
            send({"id": rid, "result": {}})
        elif method == "thread/goal/get":
            send({"id": rid, "result": {"goal": None}})
        else:
            send({"id": rid, "error": {"code": -32601, "message": "not simulated: %s" % method}})


if __name__ == "__main__":
    main()
