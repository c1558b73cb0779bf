"""What the stateful stand-ins (`codex_sim.py`, `claude_sim.py`) keep on disk, as the real
CLIs keep their sessions under their config home: a JSON state rewritten atomically and
synced, and JSON Lines appended and synced (stdlib only)."""

import json
import os


def load(path, empty):
    """The state at `path`, or `empty` before the first save."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return empty


def save(path, state):
    """Replaces the state at `path` atomically (a synced temporary file, renamed)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def append(path, entry):
    """Appends `entry` to the JSON Lines file at `path` (its directory made), synced."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
        f.flush()
        os.fsync(f.fileno())
