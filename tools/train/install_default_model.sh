#!/usr/bin/env bash
# Copies a trained default model (the WORKDIR/layout folder train_default_model.sh fills) into
# resources/models/dragoman-en-de-zh, where the model store finds it as the bundled default.
# Usage: tools/train/install_default_model.sh [WORKDIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
layout="${1:-$root/build/default-model}/layout"
target="$root/resources/models/dragoman-en-de-zh"
for f in config.json generation_config.json model.safetensors source.spm target.spm vocab.json tokenizer_config.json special_tokens_map.json; do
    [[ -f "$layout/$f" ]] || { echo "missing $layout/$f: train first (tools/train/train_default_model.sh)" >&2; exit 1; }
done
mkdir -p "$target"
cp "$layout"/{config.json,generation_config.json,model.safetensors,source.spm,target.spm,vocab.json,tokenizer_config.json,special_tokens_map.json} "$target/"
cat > "$target/README.md" <<'MD'
# dragoman-en-de-zh

Dragoman's bundled default model: one Marian (MarianMTModel) transformer for en→de, de→en, en→zh and zh→en,
chosen by a target-language token (`>>deu<<`, `>>eng<<`, `>>zho<<`), trained by this project from Tatoeba
(CC-BY 2.0 FR, https://tatoeba.org) and TICO-19 (CC0) sentence pairs. The project README ("The default model")
gives the exact commands, how the shipped weights were trained, and their measured quality. See NOTICE.
MD
# Checksums the model store checks the bundled model against (at first sight, and after an update).
(cd "$target" && rm -f SHA256SUMS && sha256sum -- * > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
du -sh "$target"
