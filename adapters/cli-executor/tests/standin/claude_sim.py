#!/usr/bin/env python3
"""A scripted stand-in for `claude -p --input-format stream-json --output-format stream-json`
that keeps its sessions on disk (stdlib only).

Usage: claude_sim.py [claude's arguments] [-- sim flags]
(the executor passes claude's own arguments; the test puts the sim's flags first, before
them, in `--claude-arg`-free form: `claude_sim.py --turn-ms 30 ... -p --input-format ...`).

Like the real 2.1.332 it reads its state from $CLAUDE_CONFIG_DIR, so a new process for the
same session sees what the last one did: `--session-id X` for a session that exists is
refused ("Error: Session ID X is already in use.", exit 1, nothing read), `--resume X` of
one that does not is refused ("No conversation found with session ID: X", after a `result`
of no turn), a uuid the session holds is echoed without `timestamp` and not run. Its
stdout lines are the recorded ones (`../fixtures/claude-2.1.332/two-turns.jsonl`,
`usage-limit.jsonl`) with their ids, texts and session replaced; its transcript is
`$CLAUDE_CONFIG_DIR/projects/<cwd, non-alphanumerics as '-'>/<session>.jsonl` with the
entries `claude::transcript::find` reads (`queue-operation` enqueue/dequeue/remove, the
`user` entry with the nonce as `uuid`, a `queued_command` attachment for a merged line,
the `assistant` entry with its `stop_reason`).

- `$CLAUDE_CONFIG_DIR/standin-state.json`: sessions (their uuids), and the counts of lines
  taken and turns ended (across processes), rewritten atomically after every change.
- `$CLAUDE_CONFIG_DIR/standin-log.jsonl`: one line per prompt taken in (`uuid`, `text`,
  `pid`): the tests' proof that no nonce went in twice.
- `$CLAUDE_CONFIG_DIR/standin-args.json`: this process's arguments, environment names and
  TMPDIR (for the isolation test).
- `$CLAUDE_CONFIG_DIR/standin-approvals.jsonl`: one line per `control_response` read
  (`request_id`, `behavior`, `known`: it answered the waiting request, `ran`: the tool ran).

Under `--permission-prompt-tool stdio` (as 2.1.332 on 2026-12-02), a turn whose prompt
contains `ASK` writes a `control_request` `can_use_tool` for a `Bash` call outside the
sandbox (`touch outside.txt`) and does not end until a `control_response` answers it: an
`allow` "runs" the tool (`ran`), a `deny` does not; the turn then ends as any other.

Scripted behaviour, K counting from 1 across processes of this config home:
- `--turn-ms MS`: a turn ends MS after it starts (default 30);
- `--hold-file PATH`: while PATH exists, no turn ends;
- `--release-file PATH`: a turn ends only once PATH holds a number greater than the
  turns ended so far (absent or unreadable: 0), so a test releases turns one by one and
  the next is held without a race;
- `--merge-steer`: a line written during a turn is absorbed into it (as at a tool
  boundary); otherwise it runs as the next turn;
- `--limit-on K` / `--limit-text TEXT`: the K-th turn ends with the recorded 429 usage
  limit (its text after "API Error: Request rejected (429) · " is TEXT);
- `--stall-line K`: the K-th line is taken in and its turn started in the transcript (and
  the log), but nothing is written to stdout and the turn never ends (an executor that
  dies now has not read its acknowledgment);
- `--drop-line K`: the K-th line is read and ignored (never taken in);
- `--exit-on-line K`: exit 3 on the K-th line, after it was taken in and its turn started;
- `--exit-before-ack K`: exit 3 on the K-th line after it was taken in and its turn started
  in the transcript, before anything of it is written to stdout (no acknowledgment);
- `--exit-before-read K`: exit 3 on the K-th line before taking it in (no trace of it);
- `--foreign-after K`: after the K-th turn ends, a turn nobody sent runs (a wake-up);
- `--session-in-use`: the first `--session-id` start of a session is refused as in use;
- `--mcp-status S`: the status `system/init` gives each `--mcp-config` server (connected);
- `--ignore-term`: ignore SIGTERM, and fork a grandchild that ignores it too;
- `--version`, `--help`: what 2.1.332 prints (`help.txt`), `--help-without=FLAG` less a
  flag's name (a CLI update that dropped it).
"""

import argparse
import copy
import json
import os
import queue
import re
import signal
import sys
import threading
import time
import uuid as uuidlib

from durable import append
import durable

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "claude-2.1.332")
HOME = os.environ.get("CLAUDE_CONFIG_DIR", ".")
STATE = os.path.join(HOME, "standin-state.json")
LOG = os.path.join(HOME, "standin-log.jsonl")
LIMIT_PREFIX = "API Error: Request rejected (429) \u00b7 "
LIMIT_TEXT = "This request would exceed your account's rate limit. Please try again later."


def recorded(name, pick):
    """The first stdout message of process `a` in a recording that `pick` accepts."""
    with open(os.path.join(FIXTURES, name + ".jsonl"), encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            if entry.get("proc") == "a" and entry.get("dir") == "recv" and pick(entry["msg"]):
                return entry["msg"]
    raise SystemExit("claude_sim: no such line in " + name)


def kind(t, sub=None):
    return lambda m: m.get("type") == t and (sub is None or m.get("subtype") == sub or m.get("state") == sub)


T = {
    "lifecycle": recorded("two-turns", kind("command_lifecycle", "queued")),
    "init": recorded("two-turns", kind("system", "init")),
    "replay": recorded("two-turns", kind("user")),
    "assistant": recorded("two-turns", kind("assistant")),
    "result": recorded("two-turns", kind("result")),
    "limit_assistant": recorded("usage-limit", kind("assistant")),
    "limit_result": recorded("usage-limit", kind("result")),
}


def load():
    return durable.load(STATE, {"sessions": {}, "lines": 0, "turns": 0, "refused": []})


def save(state):
    durable.save(STATE, state)


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def stamp():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def released(path):
    """The number `path` holds (`--release-file`); 0 when absent or unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def parse():
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--turn-ms", type=int, default=30)
    p.add_argument("--hold-file")
    p.add_argument("--release-file")
    p.add_argument("--merge-steer", action="store_true")
    p.add_argument("--limit-on", type=int, default=0)
    p.add_argument("--limit-text", default=LIMIT_TEXT)
    p.add_argument("--stall-line", type=int, default=0)
    p.add_argument("--drop-line", type=int, default=0)
    p.add_argument("--exit-on-line", type=int, default=0)
    p.add_argument("--exit-before-ack", type=int, default=0)
    p.add_argument("--exit-before-read", type=int, default=0)
    p.add_argument("--foreign-after", type=int, default=0)
    p.add_argument("--session-in-use", action="store_true")
    p.add_argument("--mcp-status", default="connected")
    p.add_argument("--ignore-term", action="store_true")
    p.add_argument("--version", action="store_true")
    p.add_argument("--help", action="store_true")
    p.add_argument("--help-without")
    p.add_argument("--session-id")
    p.add_argument("--resume")
    p.add_argument("--mcp-config")
    p.add_argument("--disallowedTools")
    p.add_argument("--permission-prompt-tool")
    args, _ = p.parse_known_args()
    return args


class Sim:
    def __init__(self, args):
        self.args = args
        self.state = load()
        self.session = args.session_id or args.resume
        self.cwd = os.getcwd()
        enc = re.sub(r"[^A-Za-z0-9]", "-", self.cwd)
        self.transcript = os.path.join(HOME, "projects", enc, "%s.jsonl" % self.session)
        self.turn = None  # {"uuids": [...], "due": ms, "limit": bool, "foreign": bool}
        self.queued = []  # [(uuid, text)] waiting for the next turn
        self.last_failed = False

    def known(self):
        return self.state["sessions"].setdefault(self.session, {"uuids": []})

    def record(self, entry):
        entry.setdefault("sessionId", self.session)
        entry.setdefault("timestamp", stamp())
        append(self.transcript, entry)

    def lifecycle(self, uuid, state):
        msg = dict(T["lifecycle"], command_uuid=uuid, state=state, uuid=str(uuidlib.uuid4()), session_id=self.session)
        send(msg)

    def init(self, uuids):
        msg = copy.deepcopy(T["init"])
        denied = set((self.args.disallowedTools or "").split(","))
        servers = []
        if self.args.mcp_config:
            for name in json.loads(self.args.mcp_config).get("mcpServers", {}):
                servers.append({"name": name, "status": self.args.mcp_status, "source": "dynamic"})
        tmp = os.environ.get("TMPDIR", "/tmp")
        msg.update(session_id=self.session, cwd=self.cwd, original_cwd=self.cwd, uuid=str(uuidlib.uuid4()),
                   tools=[t for t in msg["tools"] if t not in denied], mcp_servers=servers,
                   messaging_socket_path=os.path.join(tmp, "cc-socks", "%d.sock" % os.getpid()),
                   user_message_uuids=uuids)
        send(msg)

    def take_in(self, uuid, text):
        """The line goes into the session: transcript and log, and the session holds it."""
        self.known()["uuids"].append(uuid)
        save(self.state)
        self.record({"type": "queue-operation", "operation": "enqueue", "content": text})
        append(LOG, {"uuid": uuid, "text": text, "pid": os.getpid()})

    def start_turn(self, uuid, text, now):
        self.record({"type": "queue-operation", "operation": "dequeue"})
        self.record({"type": "user", "uuid": uuid, "message": {"role": "user", "content": text},
                     "promptSource": "sdk"})
        self.lifecycle(uuid, "started")
        self.init([uuid])
        send(dict(T["replay"], message={"role": "user", "content": text}, session_id=self.session, uuid=uuid,
                  timestamp=stamp()))
        n = self.state["turns"] + 1
        self.turn = {"uuids": [uuid], "due": now + self.args.turn_ms, "limit": n == self.args.limit_on,
                     "foreign": False, "asking": None}
        if self.args.permission_prompt_tool == "stdio" and "ASK" in text:
            # The model calls Bash outside the sandbox: the CLI asks and the turn waits.
            self.turn["asking"] = str(uuidlib.uuid4())
            tool_input = {"command": "touch outside.txt", "description": "touch a file",
                          "dangerouslyDisableSandbox": True}
            send({"type": "control_request", "request_id": self.turn["asking"],
                  "request": {"subtype": "can_use_tool", "tool_name": "Bash", "display_name": "Bash",
                              "input": tool_input, "description": "touch a file",
                              "decision_reason_type": "sandboxOverride", "tool_use_id": "toolu_sim_%d" % n}})

    def control_response(self, msg, now):
        """An answer to a permission request: logged (`standin-approvals.jsonl`); an allow
        for the waiting request "runs" the tool; the turn then goes on to its end."""
        response = msg.get("response", {})
        rid = response.get("request_id")
        known = self.turn is not None and self.turn.get("asking") == rid
        behavior = response.get("response", {}).get("behavior")
        append(os.path.join(HOME, "standin-approvals.jsonl"),
               {"request_id": rid, "behavior": behavior, "known": known, "ran": known and behavior == "allow"})
        if known:
            self.turn["asking"] = None
            self.turn["due"] = now + self.args.turn_ms

    def end_turn(self):
        turn, self.turn = self.turn, None
        self.state["turns"] += 1
        save(self.state)
        n = self.state["turns"]
        if turn["limit"]:
            text = LIMIT_PREFIX + self.args.limit_text
            assistant = copy.deepcopy(T["limit_assistant"])
            assistant["message"]["content"] = [{"type": "text", "text": text}]
            result = dict(T["limit_result"], result=text)
        else:
            text = "sim reply %d" % n
            assistant = copy.deepcopy(T["assistant"])
            assistant["message"]["content"] = [{"type": "text", "text": text}]
            assistant["message"]["stop_reason"] = "end_turn"
            result = dict(T["result"], result=text, result_index=0, num_turns=1)
        assistant.update(session_id=self.session, uuid=str(uuidlib.uuid4()))
        send(assistant)
        self.record({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                                                      "stop_reason": "stop_sequence" if turn["limit"] else "end_turn"},
                     "uuid": str(uuidlib.uuid4())})
        send(dict(result, session_id=self.session, uuid=str(uuidlib.uuid4()), user_message_uuids=turn["uuids"]))
        self.last_failed = turn["limit"]
        for uuid in turn["uuids"]:
            self.lifecycle(uuid, "cancelled" if turn["limit"] else "completed")
        if n == self.args.foreign_after and not turn["foreign"]:
            # A turn nobody sent: init, an answer and a result naming no line.
            self.init([])
            self.turn = {"uuids": [], "due": now_ms() + self.args.turn_ms, "limit": False, "foreign": True}

    def line(self, raw, now):
        msg = json.loads(raw)
        if msg.get("type") == "control_response":
            self.control_response(msg, now)
            return
        if msg.get("type") != "user":
            return
        uuid, text = msg.get("uuid"), msg["message"]["content"]
        if uuid in self.known()["uuids"]:
            # Already in the session: echoed without a timestamp, not run again.
            echo = dict(T["replay"], message=msg["message"], session_id=self.session, uuid=uuid)
            echo.pop("timestamp", None)
            send(echo)
            return
        self.state["lines"] += 1
        k = self.state["lines"]
        save(self.state)
        if k == self.args.drop_line:
            return
        if k == self.args.exit_before_read:
            sys.stderr.write("claude_sim: exiting before reading line %d\n" % k)
            sys.stderr.flush()
            os._exit(3)
        self.take_in(uuid, text)
        if k == self.args.exit_before_ack:
            self.record({"type": "queue-operation", "operation": "dequeue"})
            self.record({"type": "user", "uuid": uuid, "message": {"role": "user", "content": text},
                         "promptSource": "sdk"})
            sys.stderr.write("claude_sim: exiting before acknowledging line %d\n" % k)
            sys.stderr.flush()
            os._exit(3)
        if k == self.args.stall_line:
            self.record({"type": "queue-operation", "operation": "dequeue"})
            self.record({"type": "user", "uuid": uuid, "message": {"role": "user", "content": text},
                         "promptSource": "sdk"})
            return
        self.lifecycle(uuid, "queued")
        if self.turn is not None and self.args.merge_steer and not self.turn["foreign"]:
            self.record({"type": "queue-operation", "operation": "remove", "content": text,
                         "reason": "absorbed_mid_turn", "commandUuid": uuid})
            self.record({"type": "attachment", "attachment": {"type": "queued_command", "prompt": text,
                                                              "source_uuid": uuid}, "uuid": str(uuidlib.uuid4())})
            self.lifecycle(uuid, "started")
            send(dict(T["replay"], message=msg["message"], session_id=self.session, uuid=uuid, timestamp=stamp()))
            self.turn["uuids"].append(uuid)
        elif self.turn is not None:
            self.queued.append((uuid, text))
        else:
            self.start_turn(uuid, text, now)
        if k == self.args.exit_on_line:
            sys.stderr.write("claude_sim: exiting mid-turn on line %d\n" % k)
            sys.stderr.flush()
            os._exit(3)


def now_ms():
    return int(time.time() * 1000)


def ignore_term():
    """Ignores SIGTERM, and forks a grandchild that ignores it too (its pid in
    `standin-grandchild.pid`)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pid = os.fork()
    if pid == 0:
        sys.stdin.close()
        while True:
            time.sleep(1)
    with open(os.path.join(HOME, "standin-grandchild.pid"), "w", encoding="utf-8") as f:
        f.write(str(pid))


def main():
    args = parse()
    if args.version:
        print("2.1.332 (Claude Code)")
        return
    if args.help:
        with open(os.path.join(FIXTURES, "help.txt"), encoding="utf-8") as f:
            text = f.read()
        if args.help_without:
            text = text.replace(args.help_without, "--gone")
        sys.stdout.write(text)
        return
    os.makedirs(HOME, exist_ok=True)
    with open(os.path.join(HOME, "standin-args.json"), "w", encoding="utf-8") as f:
        json.dump({"argv": sys.argv[1:], "env": sorted(os.environ), "tmpdir": os.environ.get("TMPDIR"),
                   "cwd": os.getcwd(), "pgid": os.getpgid(0), "pid": os.getpid()}, f)
    if args.ignore_term:
        ignore_term()
    sim = Sim(args)
    state = sim.state
    if args.session_id and (args.session_id in state["sessions"]
                            or (args.session_in_use and args.session_id not in state["refused"])):
        if args.session_id not in state["refused"]:
            # The id is taken (by an earlier holder, for --session-in-use): it exists.
            state["refused"].append(args.session_id)
            state["sessions"].setdefault(args.session_id, {"uuids": []})
            save(state)
        sys.stderr.write("Error: Session ID %s is already in use.\n" % args.session_id)
        sys.exit(1)
    if args.resume and args.resume not in state["sessions"]:
        sys.stdin.readline()
        missing = "No conversation found with session ID: %s" % args.resume
        send({"type": "result", "subtype": "error_during_execution", "is_error": True, "num_turns": 0,
              "result": None, "session_id": args.resume, "errors": [missing]})
        sys.stderr.write(missing + "\n")
        sys.exit(1)
    sim.known()
    save(state)

    lines = queue.Queue()

    def reader():
        for line in sys.stdin:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    closed = False
    while True:
        held = (args.hold_file and os.path.exists(args.hold_file)) or (
            args.release_file and released(args.release_file) <= sim.state["turns"])
        asking = sim.turn is not None and sim.turn.get("asking")
        if sim.turn is not None and now_ms() >= sim.turn["due"] and not held and not asking:
            sim.end_turn()
            if sim.turn is None and sim.queued:
                uuid, text = sim.queued.pop(0)
                sim.start_turn(uuid, text, now_ms())
        if closed and sim.turn is None and not sim.queued:
            sys.exit(1 if sim.last_failed else 0)
        timeout = 0.02 if sim.turn is not None else None
        try:
            line = lines.get(timeout=timeout) if not closed else (time.sleep(0.02) or "")
        except queue.Empty:
            continue
        if line is None:
            closed = True
            continue
        if line.strip():
            sim.line(line, now_ms())


if __name__ == "__main__":
    main()
