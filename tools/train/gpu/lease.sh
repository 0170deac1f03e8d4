#!/usr/bin/env bash
# Runs on a lent GPU machine, from the repository root. A lease is short and returns little (at most 8 files of
# 16 MiB, 64 MiB per call), so:
#   lease.sh train IDS SECONDS NAME=LAYOUT=LR [NAME=LAYOUT=LR ...]
#       trains one model per layout at the same time (models this small leave an H200 mostly idle, so they share
#       it well), each until SECONDS have passed, then cuts each exported model into 16 MiB pieces under $KEEP
#       (NAME.part00, NAME.part01, ...) and packs the logs into $KEEP/logs.tar.
# WARMUP sets the warm-up steps (800); TRAIN_ARGS adds options (continuing a run: "--init FILE"; a smoke test:
# "--device cpu --limit 500").
#   lease.sh fetch FILE...      copies those files from $KEEP into $OUT (a later call on the same warm machine
#                               fetches what did not fit into the first).
# Locally: cat NAME.part* > model.safetensors, next to a copy of LAYOUT.
set -euo pipefail
keep="${KEEP:-/tmp/lease}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "${1:-}" in
train)
    ids="$2" seconds="$3"
    shift 3
    mkdir -p "$keep"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
    pids=()
    for spec in "$@"; do
        IFS== read -r name layout lr <<< "$spec"
        mkdir -p "$keep/$name"
        # 24k-token batches keep an H200 busy with models this small; the cosine schedule is planned to end
        # with the time; hard-seconds leaves time to export even when an epoch runs long.
        PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 "$here/train_transformers.py" \
            --data "$ids" --layout "$layout" --out "$keep/$name" --seconds "$seconds" \
            --hard-seconds "$((seconds + 40))" --schedule cosine --lr "$lr" --warmup "${WARMUP:-800}" --batch-tokens 24000 \
            --max-tokens 200 --average 3 --export-dtype bfloat16 --progress-every 200 ${TRAIN_ARGS:-} \
            > "$keep/$name/train.log" 2>&1 &
        pids+=($!)
    done
    status=0
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    for spec in "$@"; do
        name="${spec%%=*}"
        tail -n 4 "$keep/$name/train.log"
        [[ -f "$keep/$name/model.safetensors" ]] && split -b 16M -d "$keep/$name/model.safetensors" "$keep/$name.part"
    done
    (cd "$keep" && tar cf logs.tar */log.json */train.log)
    ls -l "$keep"
    exit "$status"
    ;;
fetch)
    shift
    for f in "$@"; do cp "$keep/$f" "$OUT/" || echo "not there: $f" >&2; done
    ;;
*)
    echo "usage: $0 train IDS SECONDS NAME=LAYOUT=LR... | fetch FILE..." >&2
    exit 2
    ;;
esac
