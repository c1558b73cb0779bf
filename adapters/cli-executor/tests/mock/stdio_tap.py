#!/usr/bin/env python3
"""A stdio relay that timestamps the turn boundaries crossing it (stdlib only), for the
turn-gap benchmark (`examples/cli_bench.rs`).

Usage: `stdio_tap.py LOG PROGRAM ARGS...`. Runs PROGRAM with ARGS (its stdin, stdout and
stderr relayed line by line, its exit status returned) and appends to LOG one line per
`turn/completed` the program writes and per `turn/start` it is sent:
`{"t_ns": <time.time_ns()>, "dir": "out"|"in", "method": ...}`. The stamp is taken when
the tap reads the line, before it forwards it: a gap measured from a `turn/completed` to
the next `turn/start` includes the tap's own hop, never less than the executor's time.
"""
import json
import subprocess
import sys
import threading
import time

LOG, PROGRAM, ARGS = sys.argv[1], sys.argv[2], sys.argv[3:]
LOCK = threading.Lock()
MARKS = {"out": b'"method":"turn/completed"', "in": b'"method":"turn/start"'}


def stamp(direction, line):
    if MARKS[direction] in line.replace(b" ", b""):
        entry = {"t_ns": time.time_ns(), "dir": direction,
                 "method": "turn/completed" if direction == "out" else "turn/start"}
        with LOCK, open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def pump(source, sink, direction):
    for line in iter(source.readline, b""):
        stamp(direction, line)
        sink.write(line)
        sink.flush()
    sink.close()


child = subprocess.Popen([PROGRAM] + ARGS, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
threading.Thread(target=pump, args=(sys.stdin.buffer, child.stdin, "in"), daemon=True).start()
pump(child.stdout, sys.stdout.buffer, "out")
sys.exit(child.wait())
