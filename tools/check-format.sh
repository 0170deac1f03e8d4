#!/usr/bin/env bash
# Fails, naming the files, when a C++ source differs from what clang-format makes of it (.clang-format at the
# root). Fix with: git ls-files '*.cpp' '*.h' | xargs clang-format -i
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
format="${CLANG_FORMAT:-clang-format}"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.cpp' '*.h')
else  # a source tarball
    mapfile -t files < <(find app engine tests tools ui -name '*.cpp' -o -name '*.h' | sort)
fi
bad=()
for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    "$format" --style=file "$f" | cmp -s - "$f" || bad+=("$f")
done
if ((${#bad[@]})); then
    echo "check-format: ${#bad[@]} file(s) differ from clang-format's output:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted"
