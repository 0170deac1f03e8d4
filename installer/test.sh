#!/usr/bin/env bash
# One command: install dependencies, build, and run the whole test suite under CTest; then the same sources
# again under ASan + UBSan with every fuzz target (installer/sanitizers.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/installer/install-deps.sh"
"$root/installer/install-node-client.sh"
"$root/installer/build.sh"
(cd "${DRAGOMAN_BUILD_DIR:-$root/build}" && ctest --output-on-failure --parallel "$(nproc)" "$@")
"$root/installer/sanitizers.sh"
