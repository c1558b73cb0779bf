#!/usr/bin/env bash
# The project's one test command, run locally and by CI (`.ci/run`):
# formatting, then lints, then every test (the house-rule `tidy` tests included).
# All three steps share cargo's default target dir (or $CARGO_TARGET_DIR if set),
# so nothing is compiled twice for the same profile.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# Each step prints its start time in seconds since the command began, so a slow CI run
# shows which step grew, and the free disk, so a full disk shows where it filled.
step() { echo "== [${SECONDS}s, $(df -h --output=avail . | tail -1 | tr -d " ") disk free] $*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

# The real Codex CLI and Claude Code, pinned from npm (idempotent), which the CLI
# executor's tests drive offline against loopback mock model APIs. With
# ORCH_REAL_CLIS=required a test that needs one fails when it is missing instead of
# running the stand-in only.
tests/cli-agents/setup.sh
export CODEX_BIN="$PWD/tests/cli-agents/node_modules/.bin/codex"
export CLAUDE_BIN="$PWD/tests/cli-agents/node_modules/.bin/claude"
export ORCH_REAL_CLIS=required

# The release tool cargo-dist, pinned from PyPI (idempotent), whose own installer the
# install test runs on the debug binary packed as a release; with ORCH_REAL_TOOLS=required
# a test that needs it (or Debian's systemd-analyze, for the service unit) fails when it is
# missing instead of printing a skip line.
tests/release/setup.sh
export DIST_BIN="$PWD/tests/release/.venv/bin/dist"
export ORCH_REAL_TOOLS=required

# --no-fail-fast: run every test binary even after one fails, so CI sees every
# summary line; the exit status is still non-zero on any failure.
step "cargo test"
cargo test --workspace --no-fail-fast

# The MCP server against real clients nobody here wrote (setup is idempotent).
tests/mcp/setup.sh
step "MCP client tests (Python mcp SDK and TypeScript SDK, streamable HTTP and stdio)"
tests/mcp/run.sh
step "MCP conformance scenarios"
tests/mcp/conformance.sh
step "MCP conformance: authorization server"
tests/mcp/conformance-auth.sh

# The browser extension: its pure core and views under node --test, then end to end in
# headless Chromium and Firefox ESR against the daemon `cargo test` just built (debug) and
# the fake ChatGPT page. Needs the Debian browsers (.ci/run installs them).
[ -d extension/node_modules ] || (cd extension && npm ci --no-audit --no-fund)
step "extension: unit tests"
(cd extension && node --test test/unit/*.test.mjs)
# Mozilla's linter over the Firefox package `npm run pack` writes (about 15 s): no errors and
# no warnings (extension/README.md, "Packing").
step "extension: web-ext lint"
(cd extension && npm run -s lint:firefox)
step "extension: the content adapter against the fake ChatGPT page (Chromium, Firefox ESR)"
(cd extension && node test/fake-chatgpt/selftest.mjs)
# The simulator in release mode: the scenarios, the full crash matrix (every named
# boundary x occurrence) and a bounded number of swarm seeds. Each prints its replay
# command on failure and exits non-zero. It runs beside the browsers' end-to-end tests,
# niced: those mostly wait on timers and pages, the simulator is pure CPU, and one after
# the other they took about 13 of CI's 28 minutes. Its output is kept in a log and shown
# once the end-to-end tests are done; either failing fails the command.
simulator() {
  step "simulator: scenarios"
  nice -n 10 cargo run --release -q -p sim -- scenario scenarios/*.scn
  step "simulator: crash matrix"
  nice -n 10 cargo run --release -q -p sim -- matrix
  step "simulator: swarm seeds"
  nice -n 10 cargo run --release -q -p sim -- run --seeds 300
  step "simulator: done"
}
sim_log="${CARGO_TARGET_DIR:-$PWD/target}/simulator-steps.log"
mkdir -p "$(dirname "$sim_log")"
step "simulator: started beside the end-to-end tests (its output follows them)"
(set -e; simulator) >"$sim_log" 2>&1 &
sim_pid=$!

e2e_status=0
step "extension: end to end (Chromium, Firefox ESR)"
(cd extension && ORCHESTRATOR_BIN="${CARGO_TARGET_DIR:-$PWD/../target}/debug/orchestrator" \
  node --test --test-concurrency=1 test/e2e/*.test.mjs) || e2e_status=$?
step "extension: end to end finished (status $e2e_status); waiting for the simulator"
sim_status=0
wait "$sim_pid" || sim_status=$?
cat "$sim_log"
if [ "$e2e_status" -ne 0 ] || [ "$sim_status" -ne 0 ]; then
  echo "FAILED: end to end status $e2e_status, simulator status $sim_status"
  exit 1
fi
step "done"
