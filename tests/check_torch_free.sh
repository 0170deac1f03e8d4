#!/usr/bin/env bash
# The engine's libtorch-free libraries (file formats, tokenizers, kernels, decoding, HY-MT on the CPU, dragoman.h's
# API) and the programs built on them call nothing of libtorch and load none of it: a symbol left undefined in
# libtorch's namespaces (at::, c10::, torch::, caffe2::), or libtorch among the libraries a file needs, fails the
# check. With --translate CLI MODEL, dragoman-cli also translates with MODEL (a HY-MT folder, which runs on the CPU
# kernels) and must not load libtorch on the way; nor with a Marian folder given as --marian MODEL (Marian runs on the
# CPU kernels too), greedy or with beam search; DRAGOMAN_DEVICE=libtorch (the libtorch models) must load it.
# Usage: check_torch_free.sh FILE... [--translate CLI MODEL --marian MODEL]
set -euo pipefail
status=0
files=()
cli="" model="" marian=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --translate) cli="$2" model="$3"; shift 3 ;;
        --marian) marian="$2"; shift 2 ;;
        *) files+=("$1"); shift ;;
    esac
done
for file in "${files[@]}"; do
    name="$(basename "$file")"
    symbols="$(nm -D -C --undefined-only "$file" | grep -E '(^|[^[:alnum:]_])(at|c10|torch|caffe2)::' || true)"
    if [[ -n "$symbols" ]]; then
        echo "$name calls libtorch:" >&2
        echo "$symbols" >&2
        status=1
    fi
    needed="$(ldd "$file" | grep -E 'lib(torch|c10)[_.]' || true)"
    if [[ -n "$needed" ]]; then
        echo "$name needs libtorch:" >&2
        echo "$needed" >&2
        status=1
    fi
done
loaded() {  # the libtorch objects a command maps, as the dynamic loader reports them
    LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -oE 'file=[^ ]*lib(torch_cpu|c10)\.so[^ ]*' | sort -u || true
}
if [[ -n "$cli" ]]; then
    home="$(mktemp -d)"
    trap 'rm -rf "$home"' EXIT
    export XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" DRAGOMAN_MODELS="$home/models" HF_HUB_CACHE="$home/hub"
    out="$(echo "Good morning." | "$cli" translate --model "$model" --from en --to de)"
    [[ -n "$out" ]] || { echo "dragoman-cli translated nothing with $model" >&2; status=1; }
    hy="$(echo "Good morning." | loaded "$cli" translate --model "$model" --from en --to de)"
    if [[ -n "$hy" ]]; then
        echo "dragoman-cli loaded libtorch to translate with $model:" >&2
        echo "$hy" >&2
        status=1
    fi
    if [[ -n "$marian" ]]; then
        ma="$(echo "Good morning." | loaded "$cli" translate --model "$marian" --from en --to de)"
        if [[ -n "$ma" ]]; then
            echo "dragoman-cli loaded libtorch to translate with $marian:" >&2
            echo "$ma" >&2
            status=1
        fi
        beams="$(echo "Good morning." | loaded "$cli" translate --model "$marian" --from en --to de --beams 2)"
        if [[ -n "$beams" ]]; then
            echo "dragoman-cli loaded libtorch for beam search with $marian:" >&2
            echo "$beams" >&2
            status=1
        fi
        reference="$(echo "Good morning." | DRAGOMAN_DEVICE=libtorch loaded "$cli" translate --model "$marian" --from en --to de)"
        if [[ -z "$reference" ]]; then
            echo "dragoman-cli ran $marian's libtorch model without loading libtorch: is LD_DEBUG honoured?" >&2
            status=1
        fi
    fi
    # The program and the libtorch-free libraries alone, without libdragoman_torch.so: HY-MT and Marian still
    # translate (Marian with beams too), and the libtorch models are refused with a message naming the missing library.
    program="$(dirname "$(realpath "$cli")")/../lib/dragoman/dragoman-cli"
    alone="$home/alone"
    mkdir -p "$alone"
    cp "$program" "$(dirname "$program")"/libdragoman_{core,text,kernels,runtime}.so "$alone/"
    out="$(echo "Good morning." | "$alone/dragoman-cli" translate --model "$model" --from en --to de 2>&1)" ||
        { echo "without libdragoman_torch.so, dragoman-cli failed to translate with $model: $out" >&2; status=1; }
    if [[ -n "$marian" ]]; then
        out="$(echo "Good morning." | "$alone/dragoman-cli" translate --model "$marian" --from en --to de 2>&1)" ||
            { echo "without libdragoman_torch.so, dragoman-cli failed to translate with $marian: $out" >&2; status=1; }
        out="$(echo "Good morning." | "$alone/dragoman-cli" translate --model "$marian" --from en --to de --beams 2 2>&1)" ||
            { echo "without libdragoman_torch.so, dragoman-cli failed beam search with $marian: $out" >&2; status=1; }
        code=0
        out="$(echo "Good morning." | DRAGOMAN_DEVICE=libtorch "$alone/dragoman-cli" translate --model "$marian" --from en --to de 2>&1)" || code=$?
        if [[ $code -eq 0 || "$out" != *"cannot load"*"libdragoman_torch.so"* ]]; then
            echo "without libdragoman_torch.so, the libtorch model was not refused by name (exit $code): $out" >&2
            status=1
        fi
    fi
fi
if [[ $status -eq 0 ]]; then
    echo "no libtorch in: $(for f in "${files[@]}"; do basename "$f"; done | tr '\n' ' ')${cli:+; dragoman-cli translates with $(basename "$model")${marian:+ and $(basename "$marian")} without loading it}"
fi
exit $status
