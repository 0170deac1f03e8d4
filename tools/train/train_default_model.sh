#!/usr/bin/env bash
# Trains Dragoman's bundled default model (en<->de, en<->zh, one Marian model) from ../shared/corpora, end to end:
#   corpus preparation -> sentencepiece (spm_train) -> Hugging Face Marian layout -> dragoman-train -> evaluation.
# Usage: tools/train/train_default_model.sh [WORKDIR] [EPOCHS]     (PREPARE_ONLY=1: stop before training)
# DRAGOMAN_EXTRA_CORPORA=DIR[:DIR...] adds more training pairs (tools/train/prepare_debian_corpus.sh writes one);
# BASE_REPEAT=N lists ../shared/corpora's pairs N times, VOCAB_SIZE sets the sentencepiece vocabulary (8000),
# SHAPE the model's shape (see below).
# Resumable: rerunning with the same WORKDIR continues from the last checkpoint. When it finishes,
# WORKDIR/layout is a complete model folder; tools/train/install_default_model.sh copies it into resources/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-$root/build/default-model}"
epochs="${2:-30}"
corpora="${DRAGOMAN_CORPORA:-$root/../shared/corpora}"
python=/usr/bin/python3  # Debian's interpreter (python3-torch and friends live there)
trainer="$root/build/tools/train/dragoman-train"
[ -x "$trainer" ] || { echo "build first: installer/build.sh" >&2; exit 1; }
mkdir -p "$work"

if [ ! -f "$work/data/train.tsv" ]; then
    extra=()
    IFS=: read -ra extra_dirs <<< "${DRAGOMAN_EXTRA_CORPORA:-}"
    for d in "${extra_dirs[@]}"; do if [ -n "$d" ]; then extra+=(--extra "$d"); fi; done
    "$python" "$here/prepare_corpus.py" --corpora "$corpora" --out "$work/data" --base-repeat "${BASE_REPEAT:-1}" "${extra[@]}"
fi
if [ ! -f "$work/data/spm.model" ]; then
    # identity normalization keeps full-width Chinese punctuation; byte fallback means no <unk> for rare characters.
    spm_train --input="$work/data/spm_input.txt" --model_prefix="$work/data/spm" --vocab_size="${VOCAB_SIZE:-8000}" --model_type=unigram \
        --character_coverage=0.9995 --byte_fallback=true --normalization_rule_name=identity \
        --unk_id=1 --eos_id=0 --bos_id=-1 --pad_id=-1 --input_sentence_size=0 --shuffle_input_sentence=false \
        --num_threads=2 --minloglevel=2
fi
if [ ! -f "$work/layout/config.json" ]; then
    # SHAPE: make_layout.py's options; version 2 ships "--d-model 384 --heads 6 --ffn 1536 --encoder-layers 6
    # --decoder-layers 3" (chosen against 512/8/2048/6/2 by their dev-set scores, README "The default model").
    # shellcheck disable=SC2086
    "$python" "$here/make_layout.py" --spm-prefix "$work/data/spm" --out "$work/layout" ${SHAPE:-}
fi

[[ "${PREPARE_ONLY:-0}" == 1 ]] && { echo "prepared $work/data and $work/layout"; exit 0; }

# glibc returning freed blocks to the kernel after every step cost measurable time (see ../shared/notes).
export MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184
# One thread for ATen's elementwise work, both cores for OpenBLAS: 1,300 target tokens/s here, against
# 1,000 with both pools at 2 (they spin against each other).
export DRAGOMAN_ATEN_THREADS="${DRAGOMAN_ATEN_THREADS:-1}" DRAGOMAN_BLAS_THREADS="${DRAGOMAN_BLAS_THREADS:-2}"
"$trainer" --layout "$work/layout" --train "$work/data/train.tsv" --valid "$work/data/valid.tsv" --work "$work/checkpoints" \
    --epochs "$epochs" --batch-tokens 4000 --lr 0.0008 --warmup 600 --dropout 0.1 --label-smoothing 0.1 | tee -a "$work/train.log"
