#!/usr/bin/env bash
# Two builds side by side, alternating, on the same files at the same moment (the VM's bandwidth and clock move
# from minute to minute, so only alternating runs compare): HY-MT1.5-1.8B synthetic (bf16) time to first token and
# decode, and the bundled model's ready time and short-sentence translation.
#   tests/bench/ab.sh OLD_CLI NEW_CLI [ROUNDS] [WORKDIR]
# e.g. git worktree add /work/base <commit> && cmake -S /work/base -B /work/base/build -G Ninja \
#      -DDRAGOMAN_BUILD_TESTS=OFF && cmake --build /work/base/build --target dragoman-cli, then
#      tests/bench/ab.sh /work/base/build/app/dragoman-cli build/app/dragoman-cli
set -euo pipefail
old="$1" new="$2" rounds="${3:-3}" work="${4:-${TMPDIR:-/tmp}/dragoman-bench}"
model="$work/hy-mt1.5-1.8b-bf16"
export DRAGOMAN_MODELS="$work/store" DRAGOMAN_LOG=warn
source "$(dirname "${BASH_SOURCE[0]}")/synthetic.sh"
synthetic_hy_mt_1_8b "$new" "$work"
for ((round = 1; round <= rounds; ++round)); do
    for which in old new; do
        cli="${!which}"
        "$cli" bench generate --model "$model" --prompt-tokens 40 --new-tokens 32 --json | python3 -c "import json, sys
o = json.load(sys.stdin)
print('$which HY-MT ttft %.3f s, decode %.2f tokens/s, efficiency %.2f at %.1f GB/s' % (o['ttft_s'], o['decode_tokens_per_s'], o['efficiency'], o['memory_bandwidth_bytes_per_s'] / 1e9))"
        "$cli" bench translate --json | python3 -c "import json, sys
o = json.load(sys.stdin)
print('$which bundled: ready %.1f ms, translation median %.2f ms' % (o['ready_s'] * 1e3, o['median_s'] * 1e3))"
    done
done
