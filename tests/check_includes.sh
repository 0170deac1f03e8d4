#!/usr/bin/env bash
# app/ and ui/ reach the engine through its one public header, engine/dragoman.h: a quoted include in them
# that names any other header of engine/ fails the check. Prints each offending line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
status=0
while IFS= read -r line; do
    file="${line%%:*}"
    header="$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:*:}")"
    [[ "$header" == "dragoman.h" ]] && continue
    [[ -f "$root/app/$header" || -f "$root/ui/$header" || -f "$(dirname "$file")/$header" ]] && continue
    [[ -f "$root/engine/$header" || "$header" == */*_data.h ]] || continue
    echo "$line: an engine header other than dragoman.h" >&2
    status=1
done < <(cd "$root" && grep -rn --include='*.cpp' --include='*.h' -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' app ui | sed "s|^|$root/|")
if [[ $status -eq 0 ]]; then echo "app/ and ui/ include only dragoman.h from the engine"; fi
exit $status
