#!/usr/bin/env bash
# OPUS-MT decoding benchmark: a synthetic checkpoint with opus-mt-en-de shapes (d_model 512, 6+6 layers,
# vocab 58101, f32), the same fixed source-id workload translated greedy and with 4 beams by Dragoman and by
# the eager PyTorch baseline (tools/baselines/marian_eager.py, transformers' math), in one run.
#   tests/bench/marian.sh [SEQUENCES] [WORKDIR]      SEQUENCES defaults to 100
# The baseline is run with 1 and 2 torch threads and its faster result is used, so the ratio is not flattered
# by a bad thread setting on the baseline's side (BASELINE_THREADS="1 2" by default). Every run's JSON is printed
# as soon as it ends, so a stopped benchmark keeps what it measured.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
sequences="${1:-100}"
work="${2:-${TMPDIR:-/tmp}/dragoman-bench}"
model="$work/marian-opus-mt-base-f32"
export DRAGOMAN_MODELS="$work/store" DRAGOMAN_LOG=warn
if [[ ! -f "$model/model.safetensors" ]]; then
    "$cli" make-synthetic --arch marian --preset opus-mt-base --dtype f32 --out "$model" >/dev/null
    # A checkpoint re-made at the same path has new file times: re-hash it once, outside the timings.
    "$cli" models verify "$model" --full >/dev/null
fi

declare -A ours base
for beams in 1 4; do
    ours[$beams]="$("$cli" bench generate --model "$model" --sequences "$sequences" --beams "$beams" --json)"
    echo "beams=$beams ours: ${ours[$beams]}"
    best=""
    for threads in ${BASELINE_THREADS:-1 2}; do
        run="$(/usr/bin/python3 "$root/tools/baselines/marian_eager.py" --model "$model" --sequences "$sequences" \
               --beams "$beams" --threads "$threads" --json)"
        echo "beams=$beams baseline, $threads thread(s): $run"
        best="$(python3 -c 'import json,sys; a,b=sys.argv[1],sys.argv[2]; print(b if not a or json.loads(b)["target_tokens_per_s"]>json.loads(a)["target_tokens_per_s"] else a)' "$best" "$run")"
    done
    base[$beams]="$best"
done
python3 - "${ours[1]}" "${base[1]}" "${ours[4]}" "${base[4]}" <<'PY'
import json, sys
o1, b1, o4, b4 = (json.loads(a) for a in sys.argv[1:])
print(f"{'':28s} {'ours tok/s':>11s} {'baseline':>10s} {'ratio':>7s}")
for name, o, b in (("greedy", o1, b1), ("beam 4", o4, b4)):
    print(f"{name:28s} {o['target_tokens_per_s']:11.1f} {b['target_tokens_per_s']:10.1f} {o['target_tokens_per_s']/b['target_tokens_per_s']:7.2f}  (target >= 3)")
print(f"greedy decode efficiency: {o1['efficiency']:.2f} of the measured memory bandwidth "
      f"({o1['memory_bandwidth_bytes_per_s']/1e9:.1f} GB/s, {o1['weight_bytes_per_token']/1e6:.0f} MB of weights per token); "
      f"{100 * o1['weights_in_2mib_pages']:.0f}% of the weights mapped in 2 MiB pages")
PY
