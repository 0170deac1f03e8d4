#!/usr/bin/env bash
# Renders resources/icons/dragoman.svg into the hicolor PNG sizes desktops look up (resources/icons/hicolor/),
# committed so that a build needs no SVG renderer. Run again after changing the SVG (needs librsvg2-bin).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for size in 16 22 24 32 48 64 128 256 512; do
    dir="$root/resources/icons/hicolor/${size}x${size}/apps"
    mkdir -p "$dir"
    rsvg-convert --width "$size" --height "$size" --keep-aspect-ratio "$root/resources/icons/dragoman.svg" --output "$dir/dragoman.png"
done
