#!/usr/bin/env bash
# HY-MT1.5-1.8B decoding benchmark on a synthetic checkpoint with the real shapes (bf16, 3.6 GB), side by side
# with the eager PyTorch baseline (tools/baselines/hunyuan_eager.py, transformers' math) in one run:
#   - time to first token for a 40-token prompt, decode tokens/s, weight bytes per token, and the efficiency
#     tokens/s x bytes/token / memory bandwidth (every core streaming a large buffer, measured in the same run);
#   - a warm whole process, from exec to the first generated token on stdout, ours vs the baseline's.
#   tests/bench/hunyuan.sh [NEW_TOKENS] [WORKDIR]     NEW_TOKENS defaults to 64 (the baseline decodes 4: it is slow)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
new_tokens="${1:-64}"
work="${2:-${TMPDIR:-/tmp}/dragoman-bench}"
model="$work/hy-mt1.5-1.8b-bf16"
export DRAGOMAN_MODELS="$work/store" DRAGOMAN_LOG=warn
source "$root/tests/bench/synthetic.sh"
synthetic_hy_mt_1_8b "$cli" "$work"
prompt="$(python3 -c "import json; v=json.load(open('$model/config.json'))['vocab_size']; print(','.join(str(2+(j*131)%(v-3)) for j in range(40)))")"

ours="$("$cli" bench generate --model "$model" --prompt-tokens 40 --new-tokens "$new_tokens" --json)"
# Where prompts run through oneDNN (AVX512-BF16/AMX), the same run with the engine's AVX2 kernel for the ratio.
if [[ "$ours" == *'"prompt_kernel":"onednn'* ]]; then
    avx2="$(DRAGOMAN_ONEDNN=0 "$cli" bench generate --model "$model" --prompt-tokens 40 --new-tokens 2 --json)"
    python3 - "$ours" "$avx2" <<'PY'
import json, sys
o, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"time to first token, 40-token prompt: {o['ttft_s']:.3f} s with {o['prompt_kernel']}, {a['ttft_s']:.3f} s with {a['prompt_kernel']} ({a['ttft_s'] / o['ttft_s']:.1f}x)")
PY
fi
# Whole process, warm page cache: exec -> the first generated token on stdout (the process's exit, ~0.2 s of
# library teardown later, is not part of it; the baseline also reports the moment it has the token).
ours_process="$(python3 "$root/tests/bench/first_token.py" "$cli" "$model" "$prompt")"
base="$(/usr/bin/python3 "$root/tools/baselines/hunyuan_eager.py" --model "$model" --prompt-tokens 40 --new-tokens 4 --threads 2 \
        --process-start "$(date +%s.%N)" --json)"
echo "ours: $ours"
echo "ours whole process to first token: $ours_process s"
echo "baseline: $base"
python3 - "$ours" "$base" "$ours_process" <<'PY'
import json, sys
o, b, p = json.loads(sys.argv[1]), json.loads(sys.argv[2]), float(sys.argv[3])
print(f"{'':36s} {'ours':>10s} {'baseline':>10s} {'ratio':>8s}")
print(f"{'decode tokens/s':36s} {o['decode_tokens_per_s']:10.2f} {b['decode_tokens_per_s']:10.3f} {o['decode_tokens_per_s']/b['decode_tokens_per_s']:8.1f}x  (target >= 3)")
print(f"{'time to first token, 40-token prompt':36s} {o['ttft_s']:10.2f} {b['ttft_s']:10.2f} {o['ttft_s']/b['ttft_s']:8.3f}")
print(f"{'warm process start -> first token (s)':36s} {p:10.2f} {b['process_to_first_token_s']:10.2f} {p/b['process_to_first_token_s']:8.3f}  (target <= 1.5 s and <= 0.1)")
print(f"decode efficiency {o['efficiency']:.2f} (target >= 0.7): {o['weight_bytes_per_token']/1e6:.0f} MB/token at "
      f"{o['decode_tokens_per_s']:.2f} tok/s vs {o['memory_bandwidth_bytes_per_s']/1e9:.1f} GB/s "
      f"(streaming read; the bf16 kernel alone reads {o['gemv_bytes_per_s']['bf16']/1e9:.1f}); "
      f"{100 * o['weights_in_2mib_pages']:.0f}% of the weights mapped in 2 MiB pages")
# Decoding streams every weight once per token, so the bandwidth caps anyone's tokens/s, the baseline's too: on
# CPUs where the baseline's bf16 products are fast (oneDNN with AMX), the 3x target can exceed what is possible.
limit = o['memory_bandwidth_bytes_per_s'] / o['weight_bytes_per_token']
print(f"physical limit {limit:.2f} tok/s: ours {o['decode_tokens_per_s'] / limit:.2f} of it, the baseline "
      f"{b['decode_tokens_per_s'] / limit:.2f}; no implementation can beat this baseline by more than "
      f"{limit / b['decode_tokens_per_s']:.1f}x here")
PY
