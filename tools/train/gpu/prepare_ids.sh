#!/usr/bin/env bash
# Writes what tools/train/gpu/train_transformers.py reads: the default model's training and validation pairs as
# token ids, made by the engine's own tokenizer (dragoman-cli tokenize: sentencepiece pieces through vocab.json,
# </s> appended, the target-language token on the source), exactly as the C++ trainer and the app tokenize.
# Usage: tools/train/gpu/prepare_ids.sh WORKDIR OUT
#   WORKDIR: a tools/train/train_default_model.sh work folder (its data/ and layout/; no training needed:
#            `PREPARE_ONLY=1 tools/train/train_default_model.sh WORKDIR` makes them). OUT gets {train,valid}.{src,tgt}.ids
#            (the training ones xz-compressed) and layout/ (config, tokenizer files) to carry to the GPU machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cli="${DRAGOMAN_CLI:-$root/build/app/dragoman-cli}"
work="$1" out="$2"
mkdir -p "$out/layout"
cp "$work"/layout/{config.json,generation_config.json,source.spm,target.spm,vocab.json,special_tokens_map.json,tokenizer_config.json} "$out/layout/"
# The target-language token goes in by id, as the engine's translations put it: spelled in front of the text,
# a source holding ">>" and "<<" would be read as one long language code (transformers' rule for tokenize).
declare -A tag
for lang in de:deu en:eng zh:zho; do
    tag[${lang%%:*}]=$(echo ">>${lang##*:}<<" | "$cli" tokenize --model "$out/layout" 2>/dev/null | cut -d, -f1)
done
for split in train valid; do
    tsv="$work/data/$split.tsv"
    cut -f2 "$tsv" | "$cli" tokenize --model "$out/layout" 2>/dev/null |
        paste -d, <(cut -f1 "$tsv" | awk -v de="${tag[de]}" -v en="${tag[en]}" -v zh="${tag[zh]}" \
            '{ print ($1 == "de" ? de : $1 == "en" ? en : zh) }') - > "$out/$split.src.ids"
    cut -f3 "$tsv" | "$cli" tokenize --model "$out/layout" 2>/dev/null > "$out/$split.tgt.ids"
    [[ $(wc -l < "$out/$split.src.ids") == $(wc -l < "$tsv") ]] || { echo "tokenizing $tsv lost lines" >&2; exit 1; }
done
wc -l "$out"/*.ids
# Compressed, the training ids fit a lease's 64 MiB working tree (train_transformers.py reads .ids.xz).
xz -f -T0 "$out"/train.src.ids "$out"/train.tgt.ids
