#!/usr/bin/env bash
# The engine's libtorch-free libraries (file formats, tokenizers, kernels, decoding, HY-MT on the CPU) call nothing of
# libtorch: a symbol they leave undefined in libtorch's namespaces (at::, c10::, torch::, caffe2::) fails the check.
# Usage: check_torch_free.sh ARCHIVE... Prints each offending symbol with its object file.
set -euo pipefail
status=0
for archive in "$@"; do
    found="$(nm -C --undefined-only "$archive" | awk -v a="$(basename "$archive")" '
        /:$/ { object = $0; next }
        $1 == "U" && $0 ~ /(^|[^[:alnum:]_])(at|c10|torch|caffe2)::/ { sub(/^ *U /, ""); print a ": " object " " $0 }')"
    if [[ -n "$found" ]]; then
        echo "$found" >&2
        status=1
    fi
done
if [[ $status -eq 0 ]]; then echo "no libtorch symbol in: $(for a in "$@"; do basename "$a"; done | tr '\n' ' ')"; fi
exit $status
