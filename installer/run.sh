#!/usr/bin/env bash
# One command: install dependencies, build, and launch the Dragoman window on the default model.
# Without a display (a headless server), the window opens on a virtual X display (Xvfb).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/installer/install-deps.sh"
"$root/installer/build.sh"
app="${DRAGOMAN_BUILD_DIR:-$root/build}/ui/dragoman"
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
    echo "run: no display found; opening the window on a virtual display (xvfb-run)"
    exec xvfb-run -a -s "-screen 0 1280x800x24" "$app" "$@"
fi
exec "$app" "$@"
