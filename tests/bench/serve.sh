#!/usr/bin/env bash
# The server under concurrent streaming clients, side by side in one run: 1 client, then 8, twice, on one
# `dragoman-cli serve --max-batch 8` (aggregate tokens/s and each client's time to first token).
#   tests/bench/serve.sh [MODEL] [CORPUS.tsv]     (default: the bundled model, ../shared/corpora/en-de.dev.tsv)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
model="${1:-$root/resources/models/dragoman-en-de-zh}"
corpus="${2:-$root/../shared/corpora/en-de.dev.tsv}"
out="$(mktemp)"
"$cli" serve --model "$model" --port 0 --max-batch 8 >"$out" 2>/dev/null &
server=$!
trap 'kill -TERM $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 300); do grep -q '^listening on ' "$out" && break; sleep 0.1; done
port="$(sed -n 's|^listening on http://[^:]*:||p' "$out" | head -1)"
[[ -n "$port" ]] || { echo "serve did not start" >&2; exit 1; }
id="$(curl -s "localhost:$port/v1/models" | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["id"])')"
for clients in 1 8 1 8; do
    python3 "$root/tests/bench/serve_load.py" "$port" "$clients" "$id" "$corpus"
done
