#!/usr/bin/env bash
# The project's one test command, run locally and by CI (`.ci/run`):
# formatting, then lints, then every test (the house-rule `tidy` tests included).
# All three steps share cargo's default target dir (or $CARGO_TARGET_DIR if set),
# so nothing is compiled twice for the same profile.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# Each step prints its start time in seconds since the command began, so a slow CI run
# shows which step grew.
step() { echo "== [${SECONDS}s] $*"; }

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
step "extension: the content adapter against the fake ChatGPT page (Chromium, Firefox ESR)"
(cd extension && node test/fake-chatgpt/selftest.mjs)
step "extension: end to end (Chromium, Firefox ESR)"
(cd extension && ORCHESTRATOR_BIN="${CARGO_TARGET_DIR:-$PWD/../target}/debug/orchestrator" \
  node --test --test-concurrency=1 test/e2e/*.test.mjs)

# The simulator in release mode: the full crash matrix (every named boundary x
# occurrence) and a bounded number of swarm seeds. Each prints its replay command on
# failure and exits non-zero.
step "simulator: scenarios"
cargo run --release -q -p sim -- scenario scenarios/*.scn
step "simulator: crash matrix"
cargo run --release -q -p sim -- matrix
step "simulator: swarm seeds"
cargo run --release -q -p sim -- run --seeds 300
step "done"
