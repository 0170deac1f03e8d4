# Sourced by the benchmarks: the synthetic HY-MT1.5-1.8B (real shapes, bf16, 3.6 GB) in WORK/hy-mt1.5-1.8b-bf16,
# and for each further argument (int8, fp8) its copy made by `dragoman-cli quantize` in WORK/hy-mt1.5-1.8b-TYPE.
# Each is made once and reused while its weights file exists.
#   source tests/bench/synthetic.sh; synthetic_hy_mt_1_8b CLI WORK [int8] [fp8]
synthetic_hy_mt_1_8b() {
    local cli="$1" work="$2" type
    shift 2
    local bf16="$work/hy-mt1.5-1.8b-bf16"
    if [[ ! -f "$bf16/model.safetensors" ]]; then
        "$cli" make-synthetic --arch hunyuan --preset hy-mt1.5-1.8b --dtype bf16 --out "$bf16" >/dev/null
        # A checkpoint re-made at the same path has new file times: re-hash it once, outside the timings.
        "$cli" models verify "$bf16" --full >/dev/null
    fi
    for type in "$@"; do
        if [[ ! -f "$work/hy-mt1.5-1.8b-$type/model.safetensors" ]]; then
            rm -rf "$work/hy-mt1.5-1.8b-$type"
            "$cli" quantize --model "$bf16" --to "$type" --out "$work/hy-mt1.5-1.8b-$type" --id "bench-1.8b-$type-$$" >/dev/null
        fi
    done
}
