#!/usr/bin/env bash
# Dragoman against llama.cpp on the same synthetic HY-MT1.5-1.8B (real shapes), the same bf16 weight bytes, the same
# cores, rounds interleaved (these VMs' memory bandwidth moves from minute to minute), one table of ratios:
#   - prompts of 40 and 500 tokens (tokens/s: prompt length / time to first token; llama-bench's pp),
#   - decoding (tokens/s over 32 new tokens; llama-bench's tg),
#   - bf16 vs llama.cpp BF16, our int8 vs its Q8_0, our FP8 (and its Q4_0 for reference),
#   - the memory bandwidth of each round (every core streaming a large buffer) and what it allows.
# llama.cpp is built from the source bundle that npm's node-llama-cpp ships (`npm pack`; nothing of it is
# committed here), CPU only, for this machine (GGML_NATIVE), in the work folder; `--llama-src DIR` uses a checkout
# you already have. The GGUF has the same bf16 bytes (tests/bench/peer_gguf.py, llama.cpp's gguf-py); llama-quantize
# makes Q8_0 and Q4_0 from it.
#   tests/bench/peer.sh [--rounds N] [--threads T] [--work DIR] [--llama-src DIR] [--node-llama-cpp VERSION]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
rounds=3 threads="$(nproc)" work="${TMPDIR:-/tmp}/dragoman-bench" llama_src="" npm_version="3.22.1"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --llama-src) llama_src="$2"; shift 2 ;;
        --node-llama-cpp) npm_version="$2"; shift 2 ;;
        *) echo "usage: $0 [--rounds N] [--threads T] [--work DIR] [--llama-src DIR] [--node-llama-cpp VERSION]" >&2; exit 2 ;;
    esac
done
mkdir -p "$work"
export DRAGOMAN_MODELS="$work/store" DRAGOMAN_LOG=warn DRAGOMAN_THREADS="$threads"

# llama.cpp: the bundle is a git bundle of one commit of llama.cpp's sources.
if [[ -z "$llama_src" ]]; then
    llama_src="$work/llama.cpp"
    if [[ ! -f "$llama_src/CMakeLists.txt" ]]; then
        (cd "$work" && npm pack --silent "node-llama-cpp@$npm_version" >/dev/null)
        tar -xzf "$work/node-llama-cpp-$npm_version.tgz" -C "$work" package/llama/gitRelease.bundle
        git clone --quiet "$work/package/llama/gitRelease.bundle" "$llama_src"
    fi
fi
# Without AMX: llama.cpp's AMX kernels (Q8_0, Q4_0) crash in ggml_backend_amx_mul_mat on the AMX VM of session 21
# (SIGSEGV at the first product; its BF16 path does not use them), so its quantized types run on AVX512-VNNI there.
llama_build="$llama_src/build-cpu-noamx"
if [[ ! -x "$llama_build/bin/llama-bench" || ! -x "$llama_build/bin/llama-quantize" ]]; then
    no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    cmake -S "$llama_src" -B "$llama_build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_OPENSSL=OFF \
        -DCMAKE_C_FLAGS="$no_amx" -DCMAKE_CXX_FLAGS="$no_amx" \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF >/dev/null
    cmake --build "$llama_build" --target llama-bench llama-quantize --parallel "$(nproc)" >/dev/null
fi
echo "llama.cpp $(git -C "$llama_src" rev-parse --short HEAD) (node-llama-cpp $npm_version's bundle), built for this CPU without AMX"

# The checkpoints: ours (bf16 and our own quantized copies) and the GGUFs with the same bf16 bytes.
source "$root/tests/bench/synthetic.sh"
synthetic_hy_mt_1_8b "$cli" "$work" int8 fp8
bf16="$work/hy-mt1.5-1.8b-bf16"
gguf="$work/hy-mt1.5-1.8b"
if [[ ! -f "$gguf-bf16.gguf" || "$gguf-bf16.gguf" -ot "$bf16/model.safetensors" ]]; then
    PYTHONPATH="$llama_src/gguf-py" /usr/bin/python3 "$root/tests/bench/peer_gguf.py" "$bf16" "$gguf-bf16.gguf"
    rm -f "$gguf-q8_0.gguf" "$gguf-q4_0.gguf"
fi
for q in q8_0 q4_0; do
    [[ -f "$gguf-$q.gguf" ]] || "$llama_build/bin/llama-quantize" "$gguf-bf16.gguf" "$gguf-$q.gguf" "${q^^}" "$threads" >"$work/llama-quantize.log" 2>&1 ||
        { echo "llama-quantize failed (its messages: $work/llama-quantize.log)" >&2; exit 1; }
done

results="$work/peer-results.jsonl"
: >"$results"
for ((r = 1; r <= rounds; r++)); do
    # Each round starts from another weight type: what runs just after a long bf16 prompt starts on a colder cache.
    types=(bf16 int8 fp8)
    types=("${types[@]:$(((r - 1) % 3))}" "${types[@]:0:$(((r - 1) % 3))}")
    for type in "${types[@]}"; do
        short="$("$cli" bench generate --model "$work/hy-mt1.5-1.8b-$type" --prompt-tokens 40 --new-tokens 32 --json)"
        long="$("$cli" bench generate --model "$work/hy-mt1.5-1.8b-$type" --prompt-tokens 500 --new-tokens 2 --json)"
        python3 -c "import json,sys; s,l=json.loads(sys.argv[1]),json.loads(sys.argv[2]); print(json.dumps({'round':$r,'engine':'dragoman','type':'$type','pp40':40/s['ttft_s'],'pp500':500/l['ttft_s'],'tg':s['decode_tokens_per_s'],'bandwidth':s['memory_bandwidth_bytes_per_s'],'bytes_per_token':s['weight_bytes_per_token'],'prompt_kernel':s['prompt_kernel']}))" \
            "$short" "$long" >>"$results"
    done
    for q in bf16 q8_0 q4_0; do
        json="$("$llama_build/bin/llama-bench" -m "$gguf-$q.gguf" -p 40,500 -n 32 -t "$threads" -r 1 -o json 2>"$work/llama-bench.log")" ||
            { echo "llama-bench failed on $gguf-$q.gguf (its messages: $work/llama-bench.log)" >&2; exit 1; }
        python3 -c "
import json, sys
rows = json.loads(sys.argv[1])
rate = lambda p, n: next(x['avg_ts'] for x in rows if x['n_prompt'] == p and x['n_gen'] == n)
print(json.dumps({'round': $r, 'engine': 'llama.cpp', 'type': '$q', 'pp40': rate(40, 0), 'pp500': rate(500, 0), 'tg': rate(0, 32),
                  'cpu': rows[0].get('cpu_info', '')}))" "$json" >>"$results"
    done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda engine, t, k: statistics.median(r[k] for r in rows if r["engine"] == engine and r["type"] == t)
ours = [r for r in rows if r["engine"] == "dragoman"]
cpu = next((r["cpu"] for r in rows if r.get("cpu")), "?")
print(f"CPU: {cpu}; {len(ours) // 3} interleaved rounds, medians, tokens/s; our prompt kernel: {ours[0]['prompt_kernel']}")
print("streaming-read bandwidth per run: " + ", ".join(f"{r['bandwidth'] / 1e9:.1f}" for r in ours) + " GB/s")
print(f"{'workload':10s} {'ours bf16':>10s} {'llama BF16':>11s} {'ratio':>6s} {'ours int8':>10s} {'llama Q8_0':>11s} {'ratio':>6s} "
      f"{'ours FP8':>9s} {'llama Q4_0':>11s}")
for k, name in (("pp40", "prompt 40"), ("pp500", "prompt 500"), ("tg", "decode")):
    b, lb = med("dragoman", "bf16", k), med("llama.cpp", "bf16", k)
    i, lq = med("dragoman", "int8", k), med("llama.cpp", "q8_0", k)
    print(f"{name:10s} {b:10.2f} {lb:11.2f} {b / lb:5.2f}x {i:10.2f} {lq:11.2f} {i / lq:5.2f}x {med('dragoman', 'fp8', k):9.2f} "
          f"{med('llama.cpp', 'q4_0', k):11.2f}")
for t in ("bf16", "int8"):
    peer = "bf16" if t == "bf16" else "q8_0"
    ratios = [a["tg"] / b["tg"] for a in rows if a["engine"] == "dragoman" and a["type"] == t
              for b in rows if b["engine"] == "llama.cpp" and b["type"] == peer and b["round"] == a["round"]]
    print(f"decode {t} / llama.cpp {peer.upper()}, per round: " + ", ".join(f"{x:.2f}" for x in ratios))
limit = statistics.median(r["bandwidth"] / r["bytes_per_token"] for r in ours if r["type"] == "bf16")
print(f"bandwidth limit for bf16 decoding: {limit:.2f} tokens/s (int8/FP8: {2 * limit:.2f})")
PY
