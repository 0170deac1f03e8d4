#!/usr/bin/env bash
# Writes dragoman-cli's man page from its own --help texts (help2man): the overview, then every user command's
# options in a COMMANDS section, so the page cannot drift from the program.   man_page.sh DRAGOMAN_CLI OUT.1
set -euo pipefail
cli="$1" out="$2"
include="$(mktemp)"
trap 'rm -f "$include"' EXIT
{
    echo "[COMMANDS]"
    for command in translate translate-file prompt models quantize serve inspect tokenize detokenize logits generate bench make-synthetic; do
        echo ".SS $command"
        echo ".nf"
        # Roff needs leading dots and backslashes escaped; the help text is printed as it is.
        "$cli" "$command" --help 2>/dev/null | sed -e 's/\\/\\e/g' -e "s/^\./\\\\\&./"
        echo ".fi"
    done
    echo "[FILES]"
    echo "Models Dragoman imports or quantizes are recorded under \$DRAGOMAN_MODELS, else"
    echo "\${XDG_DATA_HOME:-~/.local/share}/dragoman/models; a Hugging Face cache (\$HF_HUB_CACHE, \$HF_HOME/hub or"
    echo "~/.cache/huggingface/hub) is read, never written."
    echo "[SEE ALSO]"
    echo "The README in /usr/share/doc/dragoman, and dragoman(1) for the window."
} >"$include"
help2man --no-info --no-discard-stderr --section 1 --name "translate text and documents offline" --include "$include" \
    --output "$out" "$cli"
