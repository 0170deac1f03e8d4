#!/usr/bin/env bash
# The dragoman-cli command is a launcher (app/launcher/launcher_main.cpp). Checks: the program it becomes keeps the
# process id, the arguments and stdin, runs from lib/dragoman with glibc.malloc.hugetlb=1 added to the caller's
# GLIBC_TUNABLES (glibc.malloc.check=0 here), a value the caller chose for that tunable is kept, OpenBLAS starts with
# one thread unless the caller chose a count, and a launcher without its program says so and exits 127.
#   launcher.sh DRAGOMAN_CLI MARIAN_FIXTURE_DIR
set -uo pipefail
cli="$1" fixture="$2"
work="$(mktemp -d)"
trap 'exec 3>&-; kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# Starts a translation that waits on a pipe, so the running program can be looked at; prints its environment.
environment_of_running_program() {
    rm -f "$work/in" && mkfifo "$work/in"
    "$cli" translate --model "$fixture" --to de <"$work/in" >"$work/out" 2>"$work/err" &
    pid=$!
    exec 3>"$work/in"
    for _ in $(seq 100); do
        [[ "$(readlink "/proc/$pid/exe")" == */lib/dragoman/dragoman-cli ]] && break
        sleep 0.1
    done
    exe="$(readlink "/proc/$pid/exe")"
    tr '\0' '\n' <"/proc/$pid/environ" | grep -E '^(GLIBC_TUNABLES|OPENBLAS_NUM_THREADS)=' || true
    echo "Hello." >&3
    exec 3>&-
    wait "$pid"
    status=$?
}

environment="$(env -u GLIBC_TUNABLES -u OPENBLAS_NUM_THREADS bash -c "$(declare -f environment_of_running_program); \
    work='$work' cli='$cli' fixture='$fixture'; environment_of_running_program; \
    echo \"exe=\$exe status=\$status\"")"
[[ "$environment" == *"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"* ]] &&
    pass "the program runs with glibc.malloc.hugetlb=1" || fail "program environment: $environment"
[[ "$environment" == *"OPENBLAS_NUM_THREADS=1"* ]] &&
    pass "OpenBLAS starts with one thread" || fail "program environment: $environment"
[[ "$environment" == *"exe=$(cd "$(dirname "$cli")/.." && pwd)/lib/dragoman/dragoman-cli status=0"* ]] &&
    pass "the same process became lib/dragoman/dragoman-cli and exited 0" || fail "$environment"
[[ -s "$work/out" ]] && pass "stdin reached the program and a translation came out" ||
    fail "no translation: $(cat "$work/err")"

GLIBC_TUNABLES=glibc.malloc.check=0 environment_of_running_program >"$work/env" 2>&1
# glibc shows only the first tunable of the list in /proc/PID/environ (it applies them all): ours comes first.
grep -qx "GLIBC_TUNABLES=glibc.malloc.hugetlb=1" "$work/env" &&
    pass "added beside the caller's own tunables" || fail "with the caller's tunables: $(cat "$work/env")"
GLIBC_TUNABLES=glibc.malloc.hugetlb=0 environment_of_running_program >"$work/env" 2>&1
grep -qx "GLIBC_TUNABLES=glibc.malloc.hugetlb=0" "$work/env" &&
    pass "the caller's own hugetlb value wins" || fail "with hugetlb=0: $(cat "$work/env")"

OPENBLAS_NUM_THREADS=3 environment_of_running_program >"$work/env" 2>&1
grep -qx "OPENBLAS_NUM_THREADS=3" "$work/env" &&
    pass "the caller's own OpenBLAS thread count wins" || fail "with OPENBLAS_NUM_THREADS=3: $(cat "$work/env")"

mkdir -p "$work/bin" && cp "$cli" "$work/bin/dragoman-cli"
message="$("$work/bin/dragoman-cli" --version 2>&1)"
status=$?
[[ $status == 127 && "$message" == *"cannot start the program"*"lib/dragoman/dragoman-cli"* ]] &&
    pass "a launcher without its program: exit 127 and a message" || fail "missing program: $status $message"

((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "all launcher checks passed"
