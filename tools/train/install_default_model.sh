#!/usr/bin/env bash
# Copies a trained default model (the WORKDIR/layout folder train_default_model.sh fills) into
# resources/models/dragoman-en-de-zh, where the model store finds it as the bundled default, and writes its
# README: the training data (with DEBIAN_CORPUS=WORKDIR/corpus of prepare_debian_corpus.sh, every Debian package
# with its version and license) and, with QUALITY=FILE, the measured quality (evaluate.py --markdown).
# Usage: [DEBIAN_CORPUS=DIR] [QUALITY=FILE] tools/train/install_default_model.sh [WORKDIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
layout="${1:-$root/build/default-model}/layout"
target="$root/resources/models/dragoman-en-de-zh"
files=(config.json generation_config.json model.safetensors source.spm target.spm vocab.json tokenizer_config.json
       special_tokens_map.json)
for f in "${files[@]}"; do
    [[ -f "$layout/$f" ]] || { echo "missing $layout/$f: train first (tools/train/train_default_model.sh)" >&2; exit 1; }
done
mkdir -p "$target"
for f in "${files[@]}"; do cp "$layout/$f" "$target/"; done
{
    cat <<'MD'
# dragoman-en-de-zh

Dragoman's bundled default model: one Marian (MarianMTModel) transformer for en→de, de→en, en→zh and zh→en,
chosen by a target-language token (`>>deu<<`, `>>eng<<`, `>>zho<<`), trained by this project. The project
README ("The default model") gives the exact commands that rebuild it, how the shipped weights were trained, and
their measured quality. See NOTICE.

MD
    printf 'Training data: Tatoeba (CC-BY 2.0 FR, https://tatoeba.org) and TICO-19 (CC0) sentence pairs'
    if [[ -n "${DEBIAN_CORPUS:-}" ]]; then
        echo ", and the translations that these Debian 12 packages ship, under their own licenses:"
        echo
        grep '^- ' "$DEBIAN_CORPUS/SOURCES.md"
    else
        echo "."
    fi
    if [[ -n "${QUALITY:-}" ]]; then
        printf '\nQuality (greedy, as shipped; tools/train/evaluate.py, held-out sets):\n\n'
        cat "$QUALITY"
    fi
} > "$target/README.md"
# Checksums the model store checks the bundled model against (at first sight, and after an update).
(cd "$target" && rm -f SHA256SUMS && sha256sum -- * > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
du -sh "$target"
