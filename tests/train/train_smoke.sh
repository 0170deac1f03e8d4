#!/usr/bin/env bash
# dragoman-train end to end on the bundled model's shapes (d 384, FFN 1536, float32, autograd through the engine's
# own Marian layers): a few steps on made-up pairs, a resumable checkpoint, an exported model.safetensors that
# dragoman-cli then loads and translates with. Batches big enough that the FFN activations take the path that
# splits them over the kernel threads in inference, which must leave autograd's own path alone.
#   train_smoke.sh DRAGOMAN_TRAIN DRAGOMAN_CLI BUNDLED_MODEL_DIR
set -euo pipefail
train="$1" cli="$2" bundled="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/layout"
for f in config.json source.spm target.spm vocab.json tokenizer_config.json special_tokens_map.json generation_config.json; do
    [[ -f "$bundled/$f" ]] && cp "$bundled/$f" "$work/layout/"
done
# Trained in float32: the bundled copy's int8 quantization does not apply to fresh weights.
python3 - "$work/layout/config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config.pop("quantization_config", None)
json.dump(config, open(sys.argv[1], "w"), indent=2)
PY
subjects=(Tom Mary "The cat" "My brother" "The teacher" "Our neighbour")
verbs=("likes apples." "reads a book." "is at home." "drinks coffee." "goes to school.")
german=("mag Äpfel." "liest ein Buch." "ist zu Hause." "trinkt Kaffee." "geht zur Schule.")
subjectsDe=(Tom Maria "Die Katze" "Mein Bruder" "Der Lehrer" "Unser Nachbar")
for i in "${!subjects[@]}"; do
    for j in "${!verbs[@]}"; do
        printf 'de\t%s %s\t%s %s\n' "${subjects[$i]}" "${verbs[$j]}" "${subjectsDe[$i]}" "${german[$j]}"
    done
done >"$work/train.tsv"
head -n 5 "$work/train.tsv" >"$work/valid.tsv"

"$train" --layout "$work/layout" --train "$work/train.tsv" --valid "$work/valid.tsv" --work "$work/state" --epochs 2 \
    --batch-tokens 400 --threads 2 --log-every 1 --save-every 1000 >"$work/log" 2>&1 || {
    cat "$work/log"
    echo "FAIL: dragoman-train exited with an error"
    exit 1
}
grep -Eq "validation loss [0-9]+\.[0-9]+" "$work/log" || { cat "$work/log"; echo "FAIL: no finite validation loss"; exit 1; }
[[ -s "$work/layout/model.safetensors" ]] || { echo "FAIL: no exported model.safetensors"; exit 1; }
echo "ok: trained 2 epochs: $(grep -Eo "validation loss [0-9.]+" "$work/log" | tr '\n' ' ')"

out="$(DRAGOMAN_MODELS="$work/store" "$cli" translate --model "$work/layout" --from en --to de --text "Tom likes apples." 2>"$work/err")" || {
    cat "$work/err"
    echo "FAIL: dragoman-cli could not translate with the exported model"
    exit 1
}
echo "ok: the exported model translates (\"$out\")"
