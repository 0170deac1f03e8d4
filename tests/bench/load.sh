#!/usr/bin/env bash
# Load benchmark: a synthetic checkpoint with real shapes, loaded warm and cold, side by side with a raw
# sequential read of the same file and an eager copying load (as safetensors.load_file does), in one run.
#   tests/bench/load.sh [PRESET] [WORKDIR]     PRESET: hy-mt1.5-1.8b (default) | tiny
# Prints the JSON of each run, then the ratios the load targets are stated in.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
preset="${1:-hy-mt1.5-1.8b}"
work="${2:-${TMPDIR:-/tmp}/dragoman-bench}"
model="$work/hunyuan-$preset-bf16"
export DRAGOMAN_MODELS="$work/store"

if [[ ! -f "$model/model.safetensors" ]]; then
    echo "making $model ..." >&2
    "$cli" make-synthetic --arch hunyuan --preset "$preset" --dtype bf16 --out "$model" >/dev/null
    "$cli" models verify "$model" --full >/dev/null  # a re-made checkpoint at the same path: re-record it
fi
"$cli" bench load --model "$model" --json >/dev/null   # first sight: hash once, outside the timings
warm="$("$cli" bench load --model "$model" --json --baselines)"
cold="$("$cli" bench load --model "$model" --json --baselines --cold)"
echo "warm: $warm"
echo "cold: $cold"
python3 - "$warm" "$cold" <<'PY'
import json, sys
warm, cold = json.loads(sys.argv[1]), json.loads(sys.argv[2])
gb = 1e9
size = warm["bytes"]
rows = [
    ("warm open->ready, without page-in (s)", warm["open_s"] + warm["build_s"], "<= 0.050"),
    ("warm open->ready, with page-in (s)", warm["ready_s"], ""),
    ("warm page-in (GB/s)", warm["page_in_bytes_per_s"] / gb, ">= 5"),
    ("cold page-in (GB/s)", cold["page_in_bytes_per_s"] / gb, ""),
    ("cold raw read, cat-like (GB/s)", cold["raw_read_bytes_per_s"] / gb, ""),
    ("cold page-in / raw read", cold["page_in_vs_raw_read"], ">= 0.85"),
    ("cold eager copy load (s)", cold["eager_copy_s"], ""),
    ("cold eager copy / ours ready", cold["eager_copy_vs_ready"], ""),
    ("copies", warm["copies"], "== 0"),
    ("peak RSS - file size (MB)", (warm["peak_rss_bytes"] - size) / 1e6, "<= 200"),
]
for name, value, target in rows:
    print(f"{name:40s} {value:10.3f}  {target}")
PY
