#!/usr/bin/env bash
# The second half of the test command: the same sources built again under sanitizers, in their own build
# folders, and tested there. Zero reports, or this fails.
#  - build-asan (clang, ASan + UBSan): every fuzz target on libFuzzer for DRAGOMAN_FUZZ_SECONDS each (45 by
#    default), starting from its committed corpus, and the torch-free unit tests.
#  - build-tsan (g++, TSan), with DRAGOMAN_TSAN=1 only: the threaded tests (engine batching, worker,
#    latest-wins, server); see the note at the end.
# DRAGOMAN_SANITIZERS=0 skips it all (a quick local run); without clang it says so and skips.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "${DRAGOMAN_SANITIZERS:-1}" == 0 ]]; then
    echo "sanitizers: skipped (DRAGOMAN_SANITIZERS=0)"
    exit 0
fi
if ! command -v clang++ >/dev/null; then
    echo "sanitizers: skipped: clang++ is not installed (installer/packages.txt has it)" >&2
    exit 0
fi

configure() {
    local dir="$1" sanitizer="$2" tests="$3" compiler="$4"
    if [[ ! -f "$dir/build.ninja" ]]; then
        local launcher=()
        command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
        cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DDRAGOMAN_SANITIZE="$sanitizer" -DDRAGOMAN_SANITIZED_TESTS="$tests" "${launcher[@]}" >/dev/null
    fi
}

asan="${DRAGOMAN_ASAN_BUILD_DIR:-$root/build-asan}"
asan_tests="tst_safetensors;tst_model_store"
configure "$asan" address "$asan_tests" clang++
cmake -S "$root" -B "$asan" -DDRAGOMAN_FUZZ_SECONDS="${DRAGOMAN_FUZZ_SECONDS:-45}" >/dev/null
cmake --build "$asan" --parallel "$(nproc)" --target fuzzers ${asan_tests//;/ }
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
status=0
(cd "$asan" && ctest --output-on-failure --parallel "$(nproc)") || status=$?
# What each fuzz target did, from CTest's full log (libFuzzer's final stats).
python3 - "$asan/Testing/Temporary/LastTest.log" <<'PY'
import re, sys
log = open(sys.argv[1], errors="replace").read()
for chunk in re.split(r"\n\d+/\d+ Testing: ", log)[1:]:
    name = chunk.split("\n", 1)[0].strip()
    runs = re.search(r"stat::number_of_executed_units: (\d+)", chunk)
    if name.startswith("fuzz_") and runs:
        added = re.search(r"stat::new_units_added: +(\d+)", chunk)
        print(f"fuzzed {name}: {int(runs.group(1)):,} executions, {added.group(1) if added else '?'} new inputs")
PY
((status == 0)) || exit "$status"

# ThreadSanitizer, on request only (DRAGOMAN_TSAN=1): build-tsan (g++; clang 14 cannot compile libtorch's
# headers as C++20) runs the threaded tests. Debian's libtorch, Qt and GLib are not built with TSan, and their
# hand-offs (tensor reference counts released inside libtorch, queued calls through Qt's futex-based mutex) are
# reported as races; until those are annotated or the libraries instrumented, a TSan run is read by a person.
[[ "${DRAGOMAN_TSAN:-0}" == 1 ]] || exit 0
tsan="${DRAGOMAN_TSAN_BUILD_DIR:-$root/build-tsan}"
tsan_tests="tst_marian;tst_hunyuan;tst_engine_worker;tst_translation_controller;tst_serve"
configure "$tsan" thread "$tsan_tests" g++
cmake --build "$tsan" --parallel "$(nproc)" --target dragoman-cli ${tsan_tests//;/ }
# die_after_fork=0: QProcess forks the TSan-built dragoman-cli from a threaded test.
export TSAN_OPTIONS="second_deadlock_stack=1:die_after_fork=0:suppressions=$root/tests/sanitizers/tsan.supp"
(cd "$tsan" && ctest --output-on-failure --parallel "$(nproc)" -R '^tst_')
