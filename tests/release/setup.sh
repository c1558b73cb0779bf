#!/usr/bin/env bash
# Creates the release tool for the install test, from PyPI only:
#   tests/release/.venv/bin/dist   cargo-dist 0.33.0 (pinned in requirements.txt), the
#                                  version dist-workspace.toml and the release workflow name
# Idempotent: does nothing that is already done.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if [ ! -x .venv/bin/dist ] || ! .venv/bin/dist --version 2>/dev/null | grep -q '^cargo-dist 0.33.0$'; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
fi
echo "tests/release: $(.venv/bin/dist --version) ready"
