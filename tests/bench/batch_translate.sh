#!/usr/bin/env bash
# Batched translation in whole processes, side by side: the first 480 lines of a held-out set through
# `dragoman-cli translate` on the bundled model at --batch 1 and at --batch 16 (the issue's target: 3x), rounds
# alternating so both see the same machine, process start included. The outputs must be identical.
#   tests/bench/batch_translate.sh [--rounds N] [--lines FILE] [--batch B] [--model M]
# FILE defaults to the English side of ../shared/corpora/en-de.dev.tsv; each round prints both times and the
# batcher's own account (steps, rows per step, time in steps and prompts), then the medians and their ratio, and
# (for an int8 Marian model) each size's physical floor on this machine, measured in the same run (`bench limits`): the
# products' multiply-adds at the vpdpbusd peak, and one-at-a-time steps reading the decoder's weights at the read
# bandwidth over a buffer of their size (where it fits the last-level cache, that is what they read from). The
# floors leave out attention, hand-offs and the process's start: what each size could take at best, and what their
# ratio could be.
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

# The products' shapes and the decoder's bytes per step, from the model's config (Marian only; empty otherwise).
shape="$(python3 - "$model/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
# W8A8 Marian models only: their products run on vpdpbusd, whose peak `bench limits` measures.
if c.get("model_type") != "marian" or "quantization_config" not in c: sys.exit(0)
d, v = c["d_model"], c.get("decoder_vocab_size") or c["vocab_size"]
encoder = c["encoder_layers"] * (4 * d * d + 2 * d * c["encoder_ffn_dim"]) + c["decoder_layers"] * 2 * d * d  # + cross keys, values
decoder = c["decoder_layers"] * (6 * d * d + 2 * d * c["decoder_ffn_dim"]) + v * d  # self q k v o, cross q o, ffn, output
print(encoder, decoder)  # multiply-adds a row; a step reads the decoder's as bytes, one a weight
PY
)"
limits() {  # the machine's limits now: vpdpbusd GMAC/s and GB/s reading the decoder's bytes
    [[ -n "$shape" ]] || return 0
    "$cli" bench limits --read "$(cut -d' ' -f2 <<<"$shape")" --json 2>/dev/null | python3 -c \
        'import json, sys; o = json.load(sys.stdin); print(o["vnni_peak_gmacs"], o["read"][0]["gbs"])' >>"$work/limits" || true
}
limits

run() {  # batch size, output file -> seconds; the batcher's debug line to stderr (and kept for the floors)
    local start end
    start=$(date +%s.%N)
    DRAGOMAN_LOG=debug "$cli" translate --model "$model" --from en --to de --batch "$1" <"$lines" >"$2" 2>"$work/log"
    end=$(date +%s.%N)
    grep -o "batched steps: .*" "$work/log" | tee -a "$work/steps-$1" >&2 || true
    python3 -c "print(f'{$end - $start:.3f}')"
}

one=() many=()
for ((r = 1; r <= rounds; r++)); do
    one+=("$(run 1 "$work/one.txt")")
    many+=("$(run "$batch" "$work/many.txt")")
    cmp -s "$work/one.txt" "$work/many.txt" || { echo "round $r: --batch $batch changed the output" >&2; exit 1; }
    echo "round $r: --batch 1 ${one[-1]} s, --batch $batch ${many[-1]} s ($(python3 -c "print(f'{${one[-1]} / ${many[-1]}:.2f}')")x)"
done
limits
sources=""
if [[ -n "$shape" ]]; then
    # Rows through the encoder: each line's tokens, and the language token where the model's prompt starts with one.
    tokens=$("$cli" tokenize --model "$model" <"$lines" 2>/dev/null | awk -F, '{ n += NF } END { print n + 0 }')
    tagged=$("$cli" prompt --model "$model" --from en --to de --text x 2>/dev/null | grep -c '^>>' || true)
    sources=$((tokens + tagged * $(wc -l <"$lines")))
fi
python3 - "$batch" "${one[*]}" "${many[*]}" "$(wc -l <"$lines")" "$shape" "$sources" "$work" <<'PY'
import os, re, statistics, sys
batch, one, many, lines = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()], sys.argv[4]
a, b = statistics.median(one), statistics.median(many)
print(f"{lines} lines, identical output: --batch 1 median {a:.2f} s, --batch {batch} median {b:.2f} s: {a / b:.2f}x (target 3x at 16)")
shape, sources, work = sys.argv[5].split(), sys.argv[6], sys.argv[7]
limits = [l.split() for l in open(os.path.join(work, "limits"))] if os.path.exists(os.path.join(work, "limits")) else []
steps = open(os.path.join(work, "steps-1")).read() if os.path.exists(os.path.join(work, "steps-1")) else ""
found = re.search(r"batched steps: (\d+) \(1\.0 rows", steps)
if not shape or not sources or not limits or not found or float(limits[0][0]) <= 0:
    sys.exit(0)
encoder, decoder = (int(x) for x in shape)
step_bytes = decoder  # int8: one byte a weight
peak = max(float(l[0]) for l in limits) * 1e9
read = max(float(l[1]) for l in limits) * 1e9
targets = int(found.group(1))  # one at a time: one row a step
encode = int(sources) * encoder / peak
floor_many = encode + targets * decoder / peak
floor_one = encode + targets * step_bytes / read
print(f"floors on this machine (vpdpbusd {peak / 1e9:.0f} GMAC/s, {read / 1e9:.0f} GB/s reading the decoder's {step_bytes / 1e6:.1f} MB; "
      f"{sources} source and {targets} target rows): --batch 1 >= {floor_one:.2f} s, --batch {batch} >= {floor_many:.2f} s, "
      f"so at most {floor_one / floor_many:.2f}x; measured at {floor_one / a:.0%} and {floor_many / b:.0%} of them")
PY
