#!/usr/bin/env bash
# Installs the real command-line agents the CLI executor's tests drive (offline, against
# loopback mock model APIs), pinned in package-lock.json: @openai/codex and
# @anthropic-ai/claude-code, their linux-x64 binaries as npm's optional dependencies (about
# 790 MB on disk; npm's cache keeps the tarballs for the next run). Nothing runs at install
# (the Claude package's postinstall only links a binary the package already ships).
#   tests/cli-agents/node_modules/.bin/codex, tests/cli-agents/node_modules/.bin/claude
# Idempotent: does nothing when both are installed at the pinned versions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

want_codex="codex-cli $(node -p 'require("./package.json").dependencies["@openai/codex"]')"
want_claude="$(node -p 'require("./package.json").dependencies["@anthropic-ai/claude-code"]') (Claude Code)"
have_codex="$(node_modules/.bin/codex --version 2>/dev/null || true)"
have_claude="$(node_modules/.bin/claude --version 2>/dev/null || true)"
if [ "$have_codex" != "$want_codex" ] || [ "$have_claude" != "$want_claude" ]; then
    npm ci --no-audit --no-fund --loglevel=error
fi
echo "tests/cli-agents: $(node_modules/.bin/codex --version), $(node_modules/.bin/claude --version)"
