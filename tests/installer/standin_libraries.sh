#!/usr/bin/env bash
# The empty stand-ins for libtorch's unused libraries (cmake/StandInLibraries.cmake): each program given loads them
# instead of the real libraries and nothing it loads imports a symbol from those; a stand-in for a library that is
# in use (libzstd, which Qt decompresses with) is refused by name; and the programs still run.
#   standin_libraries.sh SOURCE_DIR STANDIN_DIR DRAGOMAN_CLI PROGRAM... (the first PROGRAM lives beside STANDIN_DIR)
set -uo pipefail
source_dir="$1" standins="$2" cli="$3"
shift 3
checker="$source_dir/tools/unused_libraries.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# A libtorch that names no unused library gets no stand-ins: nothing to check.
[[ -n "$(ls "$standins" 2>/dev/null)" ]] || { echo "skip: no stand-ins in this build"; exit 77; }

python3 "$checker" check "$standins" "$@" && pass "the programs load the stand-ins" || fail "the check refused the stand-ins"

# The first program, copied beside a copy of the stand-ins with one more (it finds them at $ORIGIN/standins).
cp -a "$standins" "$work/standins" && : >"$work/standins/libzstd.so.1" && cp "$1" "$work/program"
report="$(python3 "$checker" check "$work/standins" "$work/program" 2>&1)"
[[ $? -ne 0 && "$report" == *"libraries it uses: libzstd.so.1"* ]] && pass "a stand-in for libzstd is refused" ||
    fail "a stand-in for libzstd was not refused: $report"

"$cli" --version >/dev/null 2>&1 && pass "dragoman-cli runs" || fail "dragoman-cli --version failed"
exit $((failures > 0))
