#!/usr/bin/env bash
# The empty stand-ins for libtorch's unused libraries (cmake/StandInLibraries.cmake): each program given loads them
# instead of the real libraries and nothing it loads imports a symbol from those; a stand-in for a library that is
# in use (libzstd, which Qt decompresses with) is refused by name; and the programs still run. The programs load
# libtorch with libdragoman_torch.so (TORCH_LIBRARY) when a model needs it: dragoman-cli translating with MARIAN loads
# the stand-ins then, as the dynamic loader reports.
#   standin_libraries.sh SOURCE_DIR STANDIN_DIR DRAGOMAN_CLI TORCH_LIBRARY MARIAN PROGRAM... (the first PROGRAM lives
#   beside STANDIN_DIR and TORCH_LIBRARY)
set -uo pipefail
source_dir="$1" standins="$2" cli="$3" torch_library="$4" marian="$5"
shift 5
checker="$source_dir/tools/unused_libraries.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# A libtorch that names no unused library gets no stand-ins: nothing to check.
[[ -n "$(ls "$standins" 2>/dev/null)" ]] || { echo "skip: no stand-ins in this build"; exit 77; }

python3 "$checker" check "$standins" --opens "$torch_library" "$@" && pass "the programs load the stand-ins" ||
    fail "the check refused the stand-ins"

# The first program, copied beside a copy of the stand-ins with one more (it finds them at $ORIGIN/standins) and
# beside the engine's libraries.
cp -a "$standins" "$work/standins" && : >"$work/standins/libzstd.so.1" && cp "$1" "$work/program" &&
    cp "$(dirname "$torch_library")"/libdragoman_*.so "$work/"
report="$(python3 "$checker" check "$work/standins" --opens "$work/$(basename "$torch_library")" "$work/program" 2>&1)"
[[ $? -ne 0 && "$report" == *"libraries it uses: libzstd.so.1"* ]] && pass "a stand-in for libzstd is refused" ||
    fail "a stand-in for libzstd was not refused: $report"

"$cli" --version >/dev/null 2>&1 && pass "dragoman-cli runs" || fail "dragoman-cli --version failed"

# What the loader maps when dragoman-cli opens libtorch (the libtorch Marian model, DRAGOMAN_DEVICE=libtorch): every
# stand-in, from STANDIN_DIR.
maps="$(echo "Good morning." | DRAGOMAN_DEVICE=libtorch LD_DEBUG=files "$cli" translate --model "$marian" --from en --to de 2>&1 >/dev/null | grep "calling init:")"
real=""
for name in $(ls "$standins"); do
    grep -q "calling init: $(realpath "$standins")/$name\$" <<<"$maps" || real+=" $name"
done
[[ -z "$real" ]] && pass "the libtorch Marian model loads libtorch with the stand-ins" ||
    fail "the libtorch Marian model did not load the stand-ins:$real"
exit $((failures > 0))
