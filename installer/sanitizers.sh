#!/usr/bin/env bash
# The second half of the test command: the same sources built again under sanitizers, each build in its own
# folder, and tested there. Any report fails the run, from a test or from a process a test started.
#  - fuzz:  build-asan (clang, ASan + UBSan + libFuzzer): every fuzz target for DRAGOMAN_FUZZ_SECONDS each (45 by
#           default), starting from its committed corpus.
#  - asan:  build-asan-engine (g++, ASan + UBSan + LeakSanitizer): the engine and app tests.
#  - tsan:  build-tsan (g++, ThreadSanitizer): the threaded tests (batching, engine worker, latest-wins, server).
# g++ for the last two: clang 14 cannot compile libtorch's headers as C++20. They are unity builds at -O1 -g1
# (line numbers in every report), which keeps the three builds within the CI's time.
# DRAGOMAN_SANITIZERS=0 skips it all (a quick local run); DRAGOMAN_SANITIZERS="fuzz tsan" runs those only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wanted="${DRAGOMAN_SANITIZERS:-fuzz asan tsan}"
if [[ "$wanted" == 0 ]]; then
    echo "sanitizers: skipped (DRAGOMAN_SANITIZERS=0)"
    exit 0
fi
wants() { [[ " $wanted " == *" $1 "* ]]; }

configure() {
    local dir="$1" sanitizer="$2" tests="$3" compiler="$4"
    shift 4
    local launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DDRAGOMAN_SANITIZE="$sanitizer" -DDRAGOMAN_SANITIZED_TESTS="$tests" "${launcher[@]}" "$@" >/dev/null
}
gcc_build=(-DCMAKE_UNITY_BUILD=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")

# Runs the registered tests of build folder $1 with its sanitizer's reports written under $1/reports (so a
# report from a child process, which a test may not look at, still fails the run), then lists them.
run_tests() {
    local dir="$1" name="$2"
    shift 2
    rm -rf "$dir/reports" && mkdir -p "$dir/reports"
    local status=0
    (cd "$dir" && ctest --output-on-failure --parallel "$(nproc)" "$@") || status=$?
    if compgen -G "$dir/reports/*" >/dev/null; then
        echo "sanitizers: $name reported:" >&2
        cat "$dir"/reports/* >&2
        status=1
    fi
    return "$status"
}

status=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
asan_options=abort_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0:strict_string_checks=1:detect_stack_use_after_return=1

if wants fuzz; then
    if command -v clang++ >/dev/null; then
        fuzz="${DRAGOMAN_ASAN_BUILD_DIR:-$root/build-asan}"
        configure "$fuzz" address "" clang++ -DDRAGOMAN_FUZZ_SECONDS="${DRAGOMAN_FUZZ_SECONDS:-45}"
        cmake --build "$fuzz" --parallel "$(nproc)" --target fuzzers
        export ASAN_OPTIONS="$asan_options"
        (cd "$fuzz" && ctest --output-on-failure --parallel "$(nproc)") || status=$?
        # What each fuzz target did, from CTest's full log (libFuzzer's final stats).
        python3 - "$fuzz/Testing/Temporary/LastTest.log" <<'PY'
import re, sys
log = open(sys.argv[1], errors="replace").read()
for chunk in re.split(r"\n\d+/\d+ Testing: ", log)[1:]:
    name = chunk.split("\n", 1)[0].strip()
    runs = re.search(r"stat::number_of_executed_units: (\d+)", chunk)
    if name.startswith("fuzz_") and runs:
        added = re.search(r"stat::new_units_added: +(\d+)", chunk)
        print(f"fuzzed {name}: {int(runs.group(1)):,} executions, {added.group(1) if added else '?'} new inputs")
PY
    else
        echo "sanitizers: fuzzing skipped: clang++ is not installed (installer/packages.txt has it)" >&2
    fi
fi

if wants asan; then
    asan="${DRAGOMAN_ASAN_ENGINE_BUILD_DIR:-$root/build-asan-engine}"
    asan_tests="tst_safetensors;tst_model_store;tst_loader;tst_tensor_view;tst_kernels;tst_marian;tst_marian_tokenizer"
    asan_tests+=";tst_bpe_tokenizer;tst_hunyuan;tst_hymt;tst_hymt2;tst_lora;tst_quantization;tst_logits_processors;tst_languages"
    asan_tests+=";tst_transformers_parity;tst_translator;tst_documents;tst_xliff_documents;tst_engine_worker"
    asan_tests+=";tst_translation_controller;tst_serve;tst_default_model"
    configure "$asan" address "$asan_tests" g++ "${gcc_build[@]}"
    # fuzzers: here, each target's corpus replayed under ASan + UBSan (g++ has no libFuzzer).
    cmake --build "$asan" --parallel "$(nproc)" --target dragoman-cli fuzzers ${asan_tests//;/ }
    # Without the fuzzers' slow unwinding on every malloc and fake stacks for use-after-return: the model-running
    # tests allocate a lot and would run several times slower.
    export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:log_path=$asan/reports/asan"
    run_tests "$asan" "ASan/UBSan" || status=$?
fi

if wants tsan; then
    tsan="${DRAGOMAN_TSAN_BUILD_DIR:-$root/build-tsan}"
    tsan_tests="tst_marian;tst_hunyuan;tst_engine_worker;tst_translation_controller;tst_serve"
    configure "$tsan" thread "$tsan_tests" g++ "${gcc_build[@]}"
    cmake --build "$tsan" --parallel "$(nproc)" --target dragoman-cli ${tsan_tests//;/ }
    # Debian's Qt, GLib and libtorch are not instrumented: ignore_noninstrumented_modules keeps TSan from judging
    # memory their code touches (a last reference released inside Qt, GLib's wake-up descriptors). TSan sees the
    # pthread locks beneath GLib and libtorch, not Qt's QMutex (a futex inside libQt6Core): the one Qt hand-off our
    # code touches, a queued signal's copied arguments, is in tests/sanitizers/tsan.supp. Our own hand-offs go
    # through locks TSan sees (EngineWorker::post, StepBatcher), and tests read the worker's signals on their own
    # thread (tests/app/queued_signal_spy.h). die_after_fork=0: QProcess forks the server from a threaded test.
    export TSAN_OPTIONS="suppressions=$root/tests/sanitizers/tsan.supp:print_suppressions=0:ignore_noninstrumented_modules=1:second_deadlock_stack=1:die_after_fork=0:log_path=$tsan/reports/tsan"
    # The fuzz corpus replays are single-threaded: not built here.
    run_tests "$tsan" "TSan" -E '^fuzz_' || status=$?
fi
exit "$status"
