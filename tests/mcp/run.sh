#!/usr/bin/env bash
# The MCP client tests: the Python `mcp` SDK against real daemon processes (streamable
# HTTP and stdio). Prints one line per test and a final `N passed, N failed` line.
# Needs ./setup.sh first (the venv).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root="$(cd ../.. && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"

(cd "$root" && cargo build --quiet -p orchestrator --bin orchestrator --example fake_executor)
export ORCHESTRATOR_BIN="$target/debug/orchestrator"
export FAKE_EXECUTOR_BIN="$target/debug/examples/fake_executor"
exec .venv/bin/python test_mcp.py
