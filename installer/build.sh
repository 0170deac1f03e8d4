#!/usr/bin/env bash
# Configures (once) and builds Dragoman in build/ with all cores. A second run only rebuilds what changed.
# A unity build: the sources of a target are compiled a few at a time as one unit, so libtorch's headers are
# parsed and instantiated once per unit instead of once per file (about a third of the time on two cores).
# DRAGOMAN_UNITY_BUILD=OFF when configuring gives one unit per file (faster rebuilds while editing one file).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DRAGOMAN_BUILD_DIR:-$root/build}"
if [[ ! -f "$build/build.ninja" ]]; then
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${DRAGOMAN_BUILD_TYPE:-RelWithDebInfo}" \
        -DCMAKE_UNITY_BUILD="${DRAGOMAN_UNITY_BUILD:-ON}" "${launcher[@]}"
fi
cmake --build "$build" --parallel "$(nproc)"
