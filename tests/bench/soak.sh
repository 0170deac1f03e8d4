#!/usr/bin/env bash
# The server's soak (not in CI): `dragoman-cli serve` under concurrent clients that stream, cancel, disconnect
# and send malformed requests (soak.py), then SIGTERM. Fails on a crash, a non-zero exit, an answer that differs
# from the CLI's `translate` of the same sentence, any unexpected error, or resident heap memory (RssAnon)
# growing over 5 % after warm-up.
#   tests/bench/soak.sh [--minutes 10] [--clients 16] [--model M] [--sentences N] [--max-batch 8]
#   (default model: the bundled one; sentences from ../shared/corpora/en-de.dev.tsv, else built-in ones)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
minutes=10 clients=16 model="$root/resources/models/dragoman-en-de-zh" sentences=24 max_batch=8
while (($#)); do
    case "$1" in
        --minutes) minutes="$2"; shift 2 ;;
        --clients) clients="$2"; shift 2 ;;
        --model) model="$2"; shift 2 ;;
        --sentences) sentences="$2"; shift 2 ;;
        --max-batch) max_batch="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
work="$(mktemp -d)"
server=""
trap '[[ -n "$server" ]] && kill -TERM "$server" 2>/dev/null; rm -rf "$work"' EXIT

corpus="$root/../shared/corpora/en-de.dev.tsv"
if [[ -f "$corpus" ]]; then
    cut -f1 "$corpus" | awk 'length($0) > 10 && length($0) < 160' | head -n "$sentences" > "$work/sources.txt"
else
    printf '%s\n' "The weather is nice today." "Where is the train station?" "I would like a cup of coffee." \
        "The meeting starts at nine o'clock." "Please close the door behind you." "She reads a book every week." \
        > "$work/sources.txt"
fi
# The reference: the CLI's own translation of each sentence, one process.
"$cli" translate --model "$model" --from en --to de < "$work/sources.txt" > "$work/targets.txt"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
src = open(w + "/sources.txt", encoding="utf-8").read().splitlines()
tgt = open(w + "/targets.txt", encoding="utf-8").read().splitlines()
assert len(src) == len(tgt), (len(src), len(tgt))
json.dump(dict(zip(src, tgt)), open(w + "/reference.json", "w", encoding="utf-8"), ensure_ascii=False)
PY

"$cli" serve --model "$model" --port 0 --max-batch "$max_batch" > "$work/serve.out" 2> "$work/serve.err" &
server=$!
for _ in $(seq 300); do grep -q '^listening on ' "$work/serve.out" && break; sleep 0.1; done
port="$(sed -n 's|^listening on http://[^:]*:||p' "$work/serve.out" | head -1)"
[[ -n "$port" ]] || { echo "serve did not start" >&2; cat "$work/serve.err" >&2; exit 1; }
id="$(curl -s "localhost:$port/v1/models" | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["id"])')"

status=0
python3 "$root/tests/bench/soak.py" "$port" "$id" "$work/reference.json" "$((minutes * 60))" "$clients" "$server" || status=$?
if ! kill -0 "$server" 2>/dev/null; then
    echo "FAIL: the server died during the soak" >&2
    tail -20 "$work/serve.err" >&2
    exit 1
fi
kill -TERM "$server"
exit_code=0
wait "$server" || exit_code=$?
server=""
echo "serve exited with $exit_code after SIGTERM"
((exit_code == 0)) || { echo "FAIL: serve's exit status" >&2; exit 1; }
exit "$status"
