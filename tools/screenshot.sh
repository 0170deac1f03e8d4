#!/usr/bin/env bash
# Takes a screenshot of a real translation in the Dragoman window under a virtual X display (Xvfb).
# Usage: tools/screenshot.sh MODEL OUT.png [FROM] [TO] [TEXT] [--document FILE ...]
# (documents after the text are translated too and shown in the window's document list)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="${1:?model folder or id}"
out="${2:?output png}"
from="${3:-en}"
to="${4:-de}"
text="${5:-The weather is nice today.
Where is the station?

My father is a doctor. He works in a big hospital.}"
shift $(($# < 5 ? $# : 5))
exec xvfb-run -a -s "-screen 0 1280x800x24" "$root/build/tools/screenshot/dragoman-screenshot" \
    --model "$model" --from "$from" --to "$to" --text "$text" --out "$out" "$@"
