#!/usr/bin/env bash
# One base, many adapters, on the synthetic HY-MT1.5-1.8B (bf16, real shapes) with two adapters of the real
# shapes made by ../shared/fixtures/gen/make_lora.py from the base's header: r 16 on all seven projections (F32,
# like a published HY-MT1.5 adapter) and r 64 alpha 8 on q/k/v/o (BF16, the vendor script's default). One run,
# side by side:
#   - `bench adapters`: slowest adapter load, longest switch between requests, first token and decode with and
#     without an adapter (targets: load <= 0.25 s, switch <= 0.01 s, decode with >= 0.9x without);
#   - a warm whole process to its first token, with and without an adapter (target: <= 1.15x + 0.1 s).
#   tests/bench/adapters.sh [WORKDIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
gen="$root/../shared/fixtures/gen/make_lora.py"
work="${1:-${TMPDIR:-/tmp}/dragoman-bench}"
model="$work/hy-mt1.5-1.8b-bf16"
export DRAGOMAN_MODELS="$work/store" DRAGOMAN_LOG=warn
source "$root/tests/bench/synthetic.sh"
synthetic_hy_mt_1_8b "$cli" "$work"
[[ -f "$work/lora-r16-all7/adapter_config.json" ]] ||
    /usr/bin/python3 "$gen" "$model" "$work/lora-r16-all7" - --targets q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj \
        --r 16 --alpha 32 --dtype F32 >/dev/null
[[ -f "$work/lora-r64-qkvo/adapter_config.json" ]] ||
    /usr/bin/python3 "$gen" "$model" "$work/lora-r64-qkvo" - --targets q_proj,k_proj,v_proj,o_proj --r 64 --alpha 8 --dtype BF16 >/dev/null

"$cli" bench adapters --model "$model" --adapter "$work/lora-r16-all7" --adapter "$work/lora-r64-qkvo" --prompt-tokens 40 \
    --new-tokens 32

prompt="$(python3 -c "import json; v=json.load(open('$model/config.json'))['vocab_size']; print(','.join(str(2+(j*131)%(v-3)) for j in range(40)))")"
first_token() {  # seconds from exec to the first generated token on stdout, best of 3 (warm page cache)
    python3 - "$cli" "$model" "$prompt" "$@" <<'PY'
import subprocess, sys, time
best = 1e9
for _ in range(3):
    start = time.time()
    child = subprocess.Popen([sys.argv[1], "generate", "--model", sys.argv[2], "--ids", sys.argv[3], "--max-new-tokens", "1", "--raw"]
                             + sys.argv[4:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    child.stdout.read(1)
    best = min(best, time.time() - start)
    child.wait()
print(f"{best:.3f}")
PY
}
first_token >/dev/null  # warm the page cache
base="$(first_token)"
r16="$(first_token --adapter "$work/lora-r16-all7")"
r64="$(first_token --adapter "$work/lora-r64-qkvo")"
python3 - "$base" "$r16" "$r64" <<'PY'
import sys
base, r16, r64 = map(float, sys.argv[1:])
for name, t in (("r16 all seven F32", r16), ("r64 q/k/v/o BF16", r64)):
    print(f"warm process -> first token: {t:.3f} s with {name}, {base:.3f} s without ({t / base:.2f}x; target <= 1.15x + 0.1 s = {1.15 * base + 0.1:.3f} s)")
PY
