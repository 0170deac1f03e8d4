#!/usr/bin/env bash
# CTest: starts dragoman-cli serve on a free port with MODEL and runs the official openai client against it.
# Skips (77) where Node or the client (installer/install-node-client.sh) is missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
model="${1:?model folder}"
command -v node >/dev/null || { echo "node is not installed: skipped"; exit 77; }
[[ -d "$here/node_modules/openai" ]] || { echo "the openai package is not installed (installer/install-node-client.sh): skipped"; exit 77; }
out="$(mktemp)"
"${DRAGOMAN_CLI:?}" serve --model "$model" --port 0 >"$out" 2>/dev/null &
server=$!
trap 'kill -TERM $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 300); do
    grep -q '^listening on ' "$out" && break
    kill -0 $server 2>/dev/null || { echo "serve exited"; exit 1; }
    sleep 0.1
done
url="$(sed -n 's/^listening on //p' "$out" | head -1)"
[[ -n "$url" ]] || { echo "serve did not start"; exit 1; }
node "$here/openai_client.mjs" "$url"
