#!/usr/bin/env bash
# The real window on a virtual X display, driven as a person drives it (xdotool) and checked as a person sees it
# (screen dumps compared region by region), on a fresh home folder:
# - first run: keys typed as soon as the window has focus land in the source pane
#   (the left pane changes, no click needed); the translation streams into the right pane (as you type, or on
#   Ctrl+Enter);
# - settings survive a crash: the window resized by hand, the process killed with SIGKILL, started again: the
#   size is back (the first-run languages and every other setting saved on change: tst_main_window).
# Usage: real_window.sh APP MODEL   Exit 77 (skipped) without xvfb-run, xdotool, xwd or python3-numpy.
set -euo pipefail
app="$1"
model="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python=/usr/bin/python3  # Debian's, with python3-numpy (installer/packages.txt)
for tool in xvfb-run xdotool xwd "$python"; do
    command -v "$tool" >/dev/null || { echo "real_window: $tool is not installed; skipped"; exit 77; }
done
"$python" -c 'import numpy' 2>/dev/null || { echo "real_window: python3-numpy is not installed; skipped"; exit 77; }
if [[ -z "${REAL_WINDOW_DISPLAY:-}" ]]; then
    exec env REAL_WINDOW_DISPLAY=1 xvfb-run -a -s "-screen 0 1280x800x24" "$0" "$@"
fi

home="$(mktemp -d)"
pid=""
cleanup() {
    [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true
    [[ -n "${KEEP:-}" ]] && cp -r "$home" "$KEEP"; rm -rf "$home"
}
trap cleanup EXIT
export HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" DRAGOMAN_MODELS="$home/models"
export HF_HUB_CACHE="$home/hf-hub" LANG=C.UTF-8
export QT_QPA_PLATFORM=xcb  # the X display, even from a Wayland desktop
unset WAYLAND_DISPLAY
config="$XDG_CONFIG_HOME/dragoman/dragoman.conf"

fail() {
    echo "real_window: $*" >&2
    exit 1
}

# Starts the window and waits until it shows and its model is loaded (the model is saved once it is).
start() {
    "$app" "$model" >"$home/app.log" 2>&1 &
    pid=$!
    disown "$pid"  # a kill -9 below is expected: no job notice
    window=""
    for _ in $(seq 100); do
        window="$(xdotool search --onlyvisible --pid "$pid" --name '^Dragoman$' 2>/dev/null | head -1 || true)"
        [[ -n "$window" ]] && grep -q '^id=' "$config" 2>/dev/null && break
        sleep 0.2
    done
    [[ -n "$window" ]] || fail "no window appeared: $(cat "$home/app.log")"
    grep -q '^id=' "$config" || fail "the model did not load"
    sleep 0.5
    # What a window manager does for a new window: give it the keyboard. The id is looked up again if the
    # window was re-created meanwhile (Qt may replace a native window while it settles).
    for _ in $(seq 20); do
        window="$(xdotool search --onlyvisible --pid "$pid" --name '^Dragoman$' 2>/dev/null | tail -1 || true)"
        [[ -n "$window" ]] && xdotool windowfocus --sync "$window" 2>/dev/null && return 0
        sleep 0.2
    done
    fail "could not give the window the keyboard"
}

geometry() {
    local shape
    shape="$(xdotool getwindowgeometry --shell "$window" | grep -E '^(X|Y|WIDTH|HEIGHT)=' | tr '\n' ' ')" || true
    [[ "$shape" == *WIDTH=* ]] || fail "cannot read the window's geometry"
    echo "$shape"
}

dump() { xwd -root -silent >"$home/$1.xwd"; }

changed() {  # changed NAME1 NAME2 X Y W H -> pixels that differ
    "$python" "$here/xwd_region.py" "$home/$1.xwd" "$home/$2.xwd" "$3" "$4" "$5" "$6"
}

start
eval "$(geometry)"
dump before
xdotool type --delay 30 "The man sees a small house today."
sleep 0.5
dump typed
# The panes fill the window's middle: the source on the left half, the output on the right.
top=$((Y + HEIGHT / 8))
rows=$((HEIGHT * 3 / 4))
left=$((X + 20))
right=$((X + WIDTH / 2 + 20))
half=$((WIDTH / 2 - 40))
typedLeft="$(changed before typed "$left" "$top" "$half" "$rows")"
((typedLeft > 100)) || fail "typing right after the window opened did not reach the source pane ($typedLeft pixels changed)"
xdotool key ctrl+Return
sleep 3
dump translated
translatedRight="$(changed before translated "$right" "$top" "$half" "$rows")"
((translatedRight > 100)) || fail "no translation appeared in the output pane ($translatedRight pixels changed)"

# A size chosen by hand survives SIGKILL.
xdotool windowsize --sync "$window" 1100 720
sleep 1.5
kill -9 "$pid" 2>/dev/null || fail "the window was gone before it was killed: $(cat "$home/app.log")"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
pid=""
start
eval "$(geometry)"
[[ "$WIDTH" == 1100 && "$HEIGHT" == 720 ]] || fail "the size did not survive a kill: ${WIDTH}x${HEIGHT}"
echo "real_window: typed text reached the source pane ($typedLeft pixels changed), the translation the output pane ($translatedRight); the size 1100x720 survived SIGKILL"
