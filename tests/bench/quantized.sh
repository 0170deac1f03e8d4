#!/usr/bin/env bash
# bf16, int8 and FP8 weights side by side on the synthetic HY-MT1.5-1.8B (real shapes), in one run (these VMs' memory
# bandwidth moves from minute to minute):
#   - decode tokens/s and its ratio to bf16 (target >= 1.7: bytes per token halve), from `bench weights`: the three
#     models in one process taking turns of 8 steps, so each ratio compares blocks that ran against the same memory
#     (separate runs 15 s apart gave per-round ratios from 1.23 to 3.02 for one build); against the physical limit,
#     every core streaming a large buffer (kernels/stream_read.h), probed after every turn, and each weight type's
#     own kernel rate;
#   - time to first token (40-token prompt) and a warm process's exec -> first token, with the eager baseline's;
#   - with --quality, a translation model in int8 and FP8 (our `quantize`): bytes and chrF2 on the dev sets against
#     its float weights. The model is --float DIR, by default the bundled one; that one ships in int8 (version 2),
#     so without --float only its own bytes and scores are printed (tools/train writes the float checkpoint).
#   tests/bench/quantized.sh [--rounds N] [--quality [--float DIR]] [--baseline] [--work DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
rounds=3 quality=0 baseline=0 work="${TMPDIR:-/tmp}/dragoman-bench" float="$root/resources/models/dragoman-en-de-zh"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --quality) quality=1; shift ;;
        --float) float="$2"; shift 2 ;;
        --baseline) baseline=1; shift ;;
        --work) work="$2"; shift 2 ;;
        *) echo "usage: $0 [--rounds N] [--quality [--float DIR]] [--baseline] [--work DIR]" >&2; exit 2 ;;
    esac
done
export DRAGOMAN_MODELS="$work/store" DRAGOMAN_LOG=warn
source "$root/tests/bench/synthetic.sh"
synthetic_hy_mt_1_8b "$cli" "$work" int8 fp8
bf16="$work/hy-mt1.5-1.8b-bf16"
prompt="$(python3 -c "import json; v=json.load(open('$bf16/config.json'))['vocab_size']; print(','.join(str(2+(j*131)%(v-3)) for j in range(40)))")"

results="$work/quantized-results.jsonl"
: >"$results"
for ((r = 1; r <= rounds; r++)); do
    for type in bf16 int8 fp8; do
        model="$work/hy-mt1.5-1.8b-$type"
        json="$("$cli" bench generate --model "$model" --prompt-tokens 40 --new-tokens 8 --json)"
        process="$(python3 "$root/tests/bench/first_token.py" "$cli" "$model" "$prompt")"
        python3 -c "import json,sys; o=json.loads(sys.argv[1]); o['round']=$r; o['type']='$type'; o['process_to_first_token_s']=float(sys.argv[2]); print(json.dumps(o))" \
            "$json" "$process" >>"$results"
    done
done
side="$work/quantized-side-by-side.json"
"$cli" bench weights --model "$bf16" --model "$work/hy-mt1.5-1.8b-int8" --model "$work/hy-mt1.5-1.8b-fp8" \
    --prompt-tokens 40 --block-tokens 8 --rounds $((4 * rounds)) --json >"$side"
base="{}"
if [[ "$baseline" == 1 ]]; then
    base="$(/usr/bin/python3 "$root/tools/baselines/hunyuan_eager.py" --model "$bf16" --prompt-tokens 40 --new-tokens 4 --threads 2 \
            --process-start "$(date +%s.%N)" --json)"
fi
python3 - "$results" "$side" "$base" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
side = json.load(open(sys.argv[2]))
base = json.loads(sys.argv[3])
types = ["bf16", "int8", "fp8"]
med = lambda t, k: statistics.median(r[k] for r in rows if r["type"] == t)
decode = {m["weight_type"]: m for m in side["models"]}
bandwidth = [b / 1e9 for b in side["memory_bandwidth_bytes_per_s"]]
print(f"CPU threads {side['threads']}; decoding: {side['rounds']} turns of {side['block_tokens']} steps per model in one process, "
      f"medians; first token: {len(rows) // 3} interleaved rounds of separate runs")
print(f"{'weights':8s} {'MB/token':>9s} {'decode tok/s':>13s} {'vs bf16':>8s} {'rounds':>11s} {'limit tok/s':>12s} {'of limit':>9s} "
      f"{'kernel GB/s':>12s} {'ttft s':>7s} {'process->1st s':>15s}")
for t in types:
    d = decode[t]
    limit = statistics.median(side["memory_bandwidth_bytes_per_s"]) / d["weight_bytes_per_token"]
    kernel = statistics.median(r["gemv_bytes_per_s"][t] for r in rows if r["type"] == t) / 1e9
    spread = f"{d['vs_first_min']:.2f}-{d['vs_first_max']:.2f}"
    print(f"{t:8s} {d['weight_bytes_per_token'] / 1e6:9.0f} {d['decode_tokens_per_s']:13.2f} {d['vs_first']:7.2f}x {spread:>11s} "
          f"{limit:12.2f} {d['efficiency']:9.2f} {kernel:12.1f} {med(t, 'ttft_s'):7.3f} {med(t, 'process_to_first_token_s'):15.3f}")
for t in ("int8", "fp8"):
    print(f"{t} / bf16 decode: {decode[t]['vs_first']:.2f}x (median of {side['rounds']} turns; target >= 1.7)")
print(f"streaming-read bandwidth over the turns {min(bandwidth):.1f}-{max(bandwidth):.1f} GB/s")
if base:
    for t in types:
        p = med(t, "process_to_first_token_s")
        print(f"{t} warm process -> first token {p:.2f} s vs the eager baseline's {base['process_to_first_token_s']:.2f} s: "
              f"{p / base['process_to_first_token_s']:.3f} (target <= 0.6 s and <= 0.1)")
PY

if [[ "$quality" == 1 ]]; then
    models=("$float")
    if python3 -c "import json, sys; sys.exit('quantization_config' not in json.load(open(sys.argv[1])))" "$float/config.json"; then
        echo "== $(basename "$float") is already quantized: its own bytes and scores only (--float DIR: a float checkpoint to compare)"
    else
        for type in int8 fp8; do
            rm -rf "$work/float-$type"
            "$cli" quantize --model "$float" --to "$type" --out "$work/float-$type" --id "bench-float-$type-$$" >/dev/null
            models+=("$work/float-$type")
        done
    fi
    for m in "${models[@]}"; do
        size="$(stat -c %s "$m/model.safetensors")"
        echo "== $(basename "$m"): $((size / 1000000)) MB of weights ($(python3 -c "print(round($size / $(stat -c %s "$float/model.safetensors"), 2))")x)"
        /usr/bin/python3 "$root/tools/train/evaluate.py" --model "$m" --cli "$cli" | sed -n '1,6p'
    done
fi
