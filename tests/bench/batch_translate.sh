#!/usr/bin/env bash
# Batched translation in whole processes, side by side: the first 480 lines of a held-out set through
# `dragoman-cli translate` on the bundled model at --batch 1 and at --batch 16 (the issue's target: 3x), rounds
# alternating so both see the same machine, process start included. The outputs must be identical.
#   tests/bench/batch_translate.sh [--rounds N] [--lines FILE] [--batch B] [--model M]
# FILE defaults to the English side of ../shared/corpora/en-de.dev.tsv; each round prints both times and the
# batcher's own account (steps, rows per step, time in steps and prompts), then the medians and their ratio.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
rounds=3 batch=16 lines="" model="$root/resources/models/dragoman-en-de-zh"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --lines) lines="$2"; shift 2 ;;
        --batch) batch="$2"; shift 2 ;;
        --model) model="$2"; shift 2 ;;
        *) echo "usage: $0 [--rounds N] [--lines FILE] [--batch B] [--model M]" >&2; exit 2 ;;
    esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -z "$lines" ]]; then
    corpus="$root/../shared/corpora/en-de.dev.tsv"
    [[ -f "$corpus" ]] || { echo "no $corpus: pass --lines FILE" >&2; exit 2; }
    head -n 480 "$corpus" | cut -f1 >"$work/source.txt"
    lines="$work/source.txt"
fi
export DRAGOMAN_MODELS="$work/store"
"$cli" translate --model "$model" --from en --to de <<<"warm-up" >/dev/null 2>&1  # first sight: hashed once, outside the timings

run() {  # batch size, output file -> seconds; the batcher's debug line to stderr
    local start end
    start=$(date +%s.%N)
    DRAGOMAN_LOG=debug "$cli" translate --model "$model" --from en --to de --batch "$1" <"$lines" >"$2" 2>"$work/log"
    end=$(date +%s.%N)
    grep -o "batched steps: .*" "$work/log" >&2 || true
    python3 -c "print(f'{$end - $start:.3f}')"
}

one=() many=()
for ((r = 1; r <= rounds; r++)); do
    one+=("$(run 1 "$work/one.txt")")
    many+=("$(run "$batch" "$work/many.txt")")
    cmp -s "$work/one.txt" "$work/many.txt" || { echo "round $r: --batch $batch changed the output" >&2; exit 1; }
    echo "round $r: --batch 1 ${one[-1]} s, --batch $batch ${many[-1]} s ($(python3 -c "print(f'{${one[-1]} / ${many[-1]}:.2f}')")x)"
done
python3 - "$batch" "${one[*]}" "${many[*]}" "$(wc -l <"$lines")" <<'PY'
import statistics, sys
batch, one, many, lines = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()], sys.argv[4]
a, b = statistics.median(one), statistics.median(many)
print(f"{lines} lines, identical output: --batch 1 median {a:.2f} s, --batch {batch} median {b:.2f} s: {a / b:.2f}x (target 3x at 16)")
PY
